// Element counts of tensor shapes, one rule for every place that checks a
// shape against a collection (reshape, the file reader, reduce).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

namespace mpcf {

struct ShapeCount {
  std::uint64_t count = 0;  // meaningful only when !overflow
  bool overflow = false;    // the product passes 64 bits
};

// The number of elements of shape[0 .. ndim-1]: 0 when any dimension is 0,
// whatever the others (an empty collection may have the shape
// (2^64-1, 2^64-1, 0)); else the product, with overflow set when it passes
// 64 bits. No dimensions: 1.
inline ShapeCount shape_count(const std::uint64_t* shape, std::size_t ndim) {
  ShapeCount r;
  for (std::size_t k = 0; k < ndim; ++k) {
    if (shape[k] == 0) return r;  // {0, false}
  }
  r.count = 1;
  for (std::size_t k = 0; k < ndim; ++k) {
    if (r.count > std::numeric_limits<std::uint64_t>::max() / shape[k]) {
      r.overflow = true;
      return r;
    }
    r.count *= shape[k];
  }
  return r;
}

// "(d0, d1, ...)" for messages.
inline std::string shape_text(const std::uint64_t* shape, std::size_t ndim) {
  std::string s = "(";
  for (std::size_t k = 0; k < ndim; ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + ")";
}

}  // namespace mpcf
