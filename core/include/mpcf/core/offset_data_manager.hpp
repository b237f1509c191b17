// Host-side storage of many variable-length objects as one flat element array
// plus offsets (CSR). Generic over the element type; function-type-specific
// flattening is done by the caller: init() with its sizeFn / elementFn, or
// assign() of ready-made arrays (PcfCollection, pcf_data.hpp).
//
// The arrays live in a shared, immutable Storage. A manager is a window of
// consecutive objects [first, first + count) of it: the whole storage after
// init() / assign(), or a part of it after slice(), which copies nothing and
// keeps the storage alive for as long as the slice lives. Offsets seen
// through a manager always start at 0 (offset(0) == 0), whatever the window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace mpcf {

template <typename ElementT>
class OffsetDataManager {
 public:
  using element_type = ElementT;

  OffsetDataManager() : OffsetDataManager(std::make_shared<const Storage>(), 0, 0) {}

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
    assign(std::move(offsets), std::move(elements));
  }

  // Takes ready-made CSR data (offsets.size() == count + 1, offsets[0] == 0).
  void assign(std::vector<std::uint64_t> offsets, std::vector<ElementT> elements) {
    if (offsets.empty() || offsets.front() != 0 || offsets.back() != elements.size()) {
      throw std::logic_error("OffsetDataManager::assign: inconsistent offsets");
    }
    const std::size_t n = offsets.size() - 1;
    *this = OffsetDataManager(
        std::make_shared<const Storage>(Storage{std::move(offsets), std::move(elements)}), 0, n);
  }

  // Objects [first, first + n) as a manager of their own that shares this
  // one's storage (nothing is copied). Its object k is this one's first + k.
  OffsetDataManager slice(std::size_t first, std::size_t n) const {
    if (first > count() || n > count() - first) {
      throw std::out_of_range("OffsetDataManager::slice: range outside the objects");
    }
    return OffsetDataManager(storage_, first_ + first, n);
  }

  std::size_t count() const { return count_; }
  std::uint64_t total_elements() const { return offs_[count_] - offs_[0]; }
  // Offset of object i's first element, counted from this window's first
  // element (offset(0) == 0, offset(count()) == total_elements()).
  std::uint64_t offset(std::size_t i) const { return offs_[i] - offs_[0]; }
  std::uint64_t size_of(std::size_t i) const { return offs_[i + 1] - offs_[i]; }
  const ElementT* data_of(std::size_t i) const { return elems_ + offs_[i]; }
  // The elements of all objects of the window, contiguous, in order.
  std::span<const ElementT> elements() const {
    return std::span<const ElementT>(elems_ + offs_[0], static_cast<std::size_t>(total_elements()));
  }

  // Elements of objects [first, first + n) (one contiguous range).
  std::uint64_t subset_elements(std::size_t first, std::size_t n) const {
    return offs_[first + n] - offs_[first];
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
    const std::uint64_t base = offs_[first];
    for (std::size_t k = 0; k <= n; ++k) {
      outOffsets[k] = static_cast<OffsetT>(offs_[first + k] - base);
    }
    const ElementT* src = elems_ + base;
    const std::uint64_t m = offs_[first + n] - base;
    std::copy(src, src + m, outElements);
  }

 private:
  // The CSR arrays of all objects ever flattened into them; never changed
  // once built, so any number of managers may share them.
  struct Storage {
    std::vector<std::uint64_t> offsets{0};
    std::vector<ElementT> elements;
  };

  OffsetDataManager(std::shared_ptr<const Storage> storage, std::size_t first, std::size_t n)
      : storage_(std::move(storage)),
        first_(first),
        count_(n),
        offs_(storage_->offsets.data() + first),
        elems_(storage_->elements.data()) {}

  std::shared_ptr<const Storage> storage_;
  std::size_t first_ = 0;   // index of object 0 of this window in the storage
  std::size_t count_ = 0;
  const std::uint64_t* offs_ = nullptr;  // storage offsets from object first_ on (absolute)
  const ElementT* elems_ = nullptr;      // the storage's element 0
};

}  // namespace mpcf
