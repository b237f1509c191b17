// PCF collections: validated, flattened breakpoints of one dtype with a
// tensor shape. Validation follows DESIGN §1 and names the function and
// breakpoint index of the first violation.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mpcf/core/errors.hpp"
#include "mpcf/core/offset_data_manager.hpp"
#include "mpcf/core/point.hpp"

namespace mpcf {

template <typename T>
using PcfPoint = SimplePoint<T, T>;

template <typename T>
using PcfDataManager = OffsetDataManager<PcfPoint<T>>;

// Checks the CSR offsets (n + 1 entries). Throws InvalidArgument / InvalidPcf.
void validate_offsets(const std::uint64_t* offsets, std::uint64_t n);

// Checks the m breakpoints of function `index`; an InvalidPcf names (and
// locates) the function and the breakpoint.
template <typename T>
void validate_pcf(std::uint64_t index, const T* times, const T* values,
                  std::uint64_t m, std::ptrdiff_t stride) {
  if (m == 0) {
    std::ostringstream os;
    os << "PCF " << index << " has no breakpoints (m = 0); every PCF needs at least one";
    throw InvalidPcf(os.str(), ErrorLocation::at_function(index));
  }
  for (std::uint64_t k = 0; k < m; ++k) {
    const T t = times[static_cast<std::ptrdiff_t>(k) * stride];
    const T v = values[static_cast<std::ptrdiff_t>(k) * stride];
    if (!std::isfinite(t)) {
      std::ostringstream os;
      os << "PCF " << index << ", breakpoint " << k << ": time is " << t
         << "; breakpoint times must be finite";
      throw InvalidPcf(os.str(), ErrorLocation::at_function(index, static_cast<std::int64_t>(k)));
    }
    if (!std::isfinite(v)) {
      std::ostringstream os;
      os << "PCF " << index << ", breakpoint " << k << ": value is " << v
         << "; values must be finite";
      throw InvalidPcf(os.str(), ErrorLocation::at_function(index, static_cast<std::int64_t>(k)));
    }
    if (k > 0) {
      const T prev = times[static_cast<std::ptrdiff_t>(k - 1) * stride];
      if (!(prev < t)) {
        std::ostringstream os;
        os.precision(std::numeric_limits<T>::max_digits10);
        os << "PCF " << index << ", breakpoint " << k << ": time " << t
           << (prev == t ? " repeats" : " is smaller than")
           << " the previous time " << prev << "; times must be strictly increasing";
        throw InvalidPcf(os.str(), ErrorLocation::at_function(index, static_cast<std::int64_t>(k)));
      }
    }
  }
}

namespace detail {
// One counter for collections of every dtype (a float32 and a float64
// collection never share an id).
inline std::uint64_t next_collection_id() noexcept {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}
}  // namespace detail

// A validated, immutable collection of PCFs of dtype T.
template <typename T>
class PcfCollection {
 public:
  // Copies and validates CSR data. `stride` is 1 for separate times/values
  // arrays and 2 for interleaved (t, v) points.
  PcfCollection(std::uint64_t n, const std::uint64_t* offsets, const T* times,
                const T* values, std::ptrdiff_t stride) {
    validate_offsets(offsets, n);
    const std::uint64_t total = offsets[n];
    for (std::uint64_t i = 0; i < n; ++i) {
      validate_pcf<T>(i, times + offsets[i] * stride, values + offsets[i] * stride,
                      offsets[i + 1] - offsets[i], stride);
    }
    std::vector<std::uint64_t> offs(offsets, offsets + n + 1);
    std::vector<PcfPoint<T>> points(total);
    for (std::uint64_t k = 0; k < total; ++k) {
      points[k] = PcfPoint<T>{times[k * stride], values[k * stride]};
    }
    data_.assign(std::move(offs), std::move(points));
  }

  std::uint64_t count() const { return data_.count(); }
  const PcfDataManager<T>& data() const { return data_; }
  // A number no other collection of this process has (from 1): with the
  // data immutable, it names the contents, e.g. of a copy kept on a GPU.
  std::uint64_t id() const noexcept { return id_; }

  // Functions [first, first + n) as a collection of their own that shares
  // this one's breakpoints (nothing is copied or validated again) and keeps
  // them alive after this collection is gone. Throws std::out_of_range when
  // the range is not inside the collection (callers check it first).
  std::shared_ptr<const PcfCollection> slice(std::uint64_t first, std::uint64_t n) const {
    return std::shared_ptr<const PcfCollection>(new PcfCollection(
        data_.slice(static_cast<std::size_t>(first), static_cast<std::size_t>(n))));
  }

 private:
  explicit PcfCollection(PcfDataManager<T> data) : data_(std::move(data)) {}

  PcfDataManager<T> data_;
  std::uint64_t id_ = detail::next_collection_id();
};

}  // namespace mpcf
