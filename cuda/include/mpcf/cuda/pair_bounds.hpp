// PairBounds: what a block's consumer tells the block kernels it does not
// need exactly. A k-nearest-neighbour reduction (KnnStage) keeps, per row
// and per column of the plane, the k smallest values so far; a pair whose
// value exceeds the k-th of its row's list and of its column's list can
// enter neither, so its exact value is of no use. Kernels of operations
// whose accumulated value only grows along the walk (MonotoneFold,
// core/operations.hpp: L1, L-infinity) stop such a pair's walk as soon as the
// partial value exceeds both bounds and write that partial value: it is
// above both bounds and at most the pair's value, so the reduction rejects
// it as it would the exact one, and every result keeps its bits.
//
// Bounds are read while the reduction of earlier blocks lowers them (other
// streams): a bound read too early is larger, so a kernel stops fewer walks,
// never a wrong one. A NaN bound (an empty list entry) is no bound.
//
// The CPU executor has the same through BlockConsumer::pair_bounds (core).
// Plain C++ (no CUDA headers), so host code and tests can use it.
#pragma once

#include <cstdint>

namespace mpcf::cuda {

template <typename T>
struct PairBounds {
  // Block row i's bound at rows[i * rowStride], block column j's at
  // cols[j * colStride]; rows == nullptr: no bounds (every value exact);
  // cols == nullptr: the rows' bounds alone decide.
  const T* rows = nullptr;
  std::uint64_t rowStride = 0;
  const T* cols = nullptr;
  std::uint64_t colStride = 0;

  bool any() const noexcept { return rows != nullptr; }
};

}  // namespace mpcf::cuda
