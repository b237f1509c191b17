// Host-side storage of many variable-length objects as one flat element array
// plus offsets (CSR). Generic over the element type; function-type-specific
// flattening is done by the caller's sizeFn / elementFn (see pcf_data.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <vector>

namespace mpcf {

template <typename ElementT>
class OffsetDataManager {
 public:
  using element_type = ElementT;

  OffsetDataManager() : offsets_{0} {}

  // Flattens [begin, end): object k contributes sizeFn(obj) elements,
  // elementFn(obj, i) for i in [0, sizeFn(obj)).
  template <typename It, typename SizeFn, typename ElementFn>
  void init(It begin, It end, SizeFn sizeFn, ElementFn elementFn) {
    std::vector<std::uint64_t> offsets{0};
    std::vector<ElementT> elements;
    std::uint64_t total = 0;
    for (It it = begin; it != end; ++it) {
      total += static_cast<std::uint64_t>(sizeFn(*it));
      offsets.push_back(total);
    }
    elements.reserve(total);
    for (It it = begin; it != end; ++it) {
      const std::size_t m = sizeFn(*it);
      for (std::size_t i = 0; i < m; ++i) elements.push_back(elementFn(*it, i));
    }
    offsets_ = std::move(offsets);
    elements_ = std::move(elements);
  }

  // Takes ready-made CSR data (offsets.size() == count + 1, offsets[0] == 0).
  void assign(std::vector<std::uint64_t> offsets, std::vector<ElementT> elements) {
    if (offsets.empty() || offsets.front() != 0 || offsets.back() != elements.size()) {
      throw std::logic_error("OffsetDataManager::assign: inconsistent offsets");
    }
    offsets_ = std::move(offsets);
    elements_ = std::move(elements);
  }

  std::size_t count() const { return offsets_.size() - 1; }
  std::uint64_t total_elements() const { return offsets_.back(); }
  std::uint64_t offset(std::size_t i) const { return offsets_[i]; }
  std::uint64_t size_of(std::size_t i) const { return offsets_[i + 1] - offsets_[i]; }
  const ElementT* data_of(std::size_t i) const { return elements_.data() + offsets_[i]; }
  const std::vector<std::uint64_t>& offsets() const { return offsets_; }
  const std::vector<ElementT>& elements() const { return elements_; }

  // Elements of objects [first, first + n) (one contiguous range).
  std::uint64_t subset_elements(std::size_t first, std::size_t n) const {
    return offsets_[first + n] - offsets_[first];
  }

  // Largest subset_elements over windows of n consecutive objects: what a
  // device array must hold to take any block of n objects.
  std::uint64_t max_subset_elements(std::size_t n) const {
    std::uint64_t best = 0;
    const std::size_t c = count();
    if (n >= c) return total_elements();
    for (std::size_t first = 0; first + n <= c; ++first) {
      const std::uint64_t s = subset_elements(first, n);
      if (s > best) best = s;
    }
    return best;
  }

  // Copies objects [first, first + n) into outOffsets (n + 1 entries,
  // re-indexed to start at 0) and outElements (subset_elements entries).
  template <typename OffsetT>
  void extract_subset(std::size_t first, std::size_t n, OffsetT* outOffsets,
                      ElementT* outElements) const {
    const std::uint64_t base = offsets_[first];
    for (std::size_t k = 0; k <= n; ++k) {
      outOffsets[k] = static_cast<OffsetT>(offsets_[first + k] - base);
    }
    const ElementT* src = elements_.data() + base;
    const std::uint64_t m = offsets_[first + n] - base;
    std::copy(src, src + m, outElements);
  }

 private:
  std::vector<std::uint64_t> offsets_;
  std::vector<ElementT> elements_;
};

}  // namespace mpcf
