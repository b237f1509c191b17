// Builds a collection of PCFs in canonical form from breakpoints computed in
// double precision: the conversions from barcodes and the pointwise
// operations (sums, means, linear combinations) all end here, so their
// results follow one rule.
//
// Canonical form: no breakpoint repeats the value before it (the value before
// the first breakpoint being 0), values are never -0, and the zero function
// is the single breakpoint (0, 0).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "mpcf/core/pcf_data.hpp"

namespace mpcf {

template <typename T>
class PcfBuilder {
 public:
  PcfBuilder() : offsets_{0} {}

  void reserve(std::uint64_t functions, std::uint64_t breakpoints) {
    offsets_.reserve(functions + 1);
    times_.reserve(breakpoints);
    values_.reserve(breakpoints);
  }

  // Appends the breakpoint (t, v) to the function being built. Times must not
  // decrease between calls; breakpoints whose times are equal once rounded
  // to T collapse into the last of them (the function takes the later value
  // from that time on). Returns false, and appends nothing, when t or v is not
  // finite in T (overflow, or a non-finite input).
  bool add(double t, double v) {
    const T tt = static_cast<T>(t);
    const T vv = static_cast<T>(v) + T(0);  // + 0 turns -0 into +0
    if (!std::isfinite(tt) || !std::isfinite(vv)) return false;
    if (pending_.size() > 0 && pending_.back().t == tt) {
      pending_.back().v = vv;
    } else {
      pending_.push_back(PcfPoint<T>{tt, vv});
    }
    return true;
  }

  // Closes the function being built, writing it in canonical form.
  void end_function() {
    T previous = T(0);
    const std::size_t start = times_.size();
    for (const PcfPoint<T>& p : pending_) {
      if (p.v == previous) continue;
      times_.push_back(p.t);
      values_.push_back(p.v);
      previous = p.v;
    }
    if (times_.size() == start) {
      times_.push_back(T(0));
      values_.push_back(T(0));
    }
    offsets_.push_back(times_.size());
    pending_.clear();
  }

  // The collection of every function closed so far (validated once more by
  // PcfCollection's constructor, which catches any bug here).
  std::shared_ptr<const PcfCollection<T>> build() const {
    const std::uint64_t n = offsets_.size() - 1;
    return std::make_shared<const PcfCollection<T>>(n, offsets_.data(), times_.data(),
                                                    values_.data(), 1);
  }

 private:
  std::vector<std::uint64_t> offsets_;
  std::vector<T> times_;
  std::vector<T> values_;
  std::vector<PcfPoint<T>> pending_;
};

}  // namespace mpcf
