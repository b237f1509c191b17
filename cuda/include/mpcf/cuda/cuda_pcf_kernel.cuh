// The PCF block kernel: computes op(row function r, column function c) for
// every pair of a block that the TriangleSkipMode keeps, with the core's
// rectangle walk (integrate_pair), so GPU and CPU run the same arithmetic
// and the same window / infinite-tail rules.
//
// Launch geometry (one place, PcfKernelGeometry): a thread block of 32 x 8
// threads covers a tile of 32 columns x 32 rows. threadIdx.x picks the
// column, so a warp computes one row function against 32 column functions:
// its reads of the row function hit nearby addresses, and the 32 column
// functions are staged once per tile in shared memory (when they fit the
// staging capacity; otherwise they are read from global memory, cached in
// L1). Each thread computes 4 rows of its column. Indices inside
// a block are 32-bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/point.hpp"
#include "mpcf/core/walk.hpp"

namespace mpcf::cuda {

struct PcfKernelGeometry {
  static constexpr unsigned kCols = 32;  // tile columns = threadIdx.x
  static constexpr unsigned kLanes = 8;  // threadIdx.y
  static constexpr unsigned kRowsPerThread = 4;
  static constexpr unsigned kRows = kLanes * kRowsPerThread;  // tile rows
  static constexpr unsigned kThreads = kCols * kLanes;
  // Shared memory a tile may use for staging its column functions. 32 KiB
  // leaves room for six resident thread blocks per SM.
  static constexpr unsigned kStagingBytes = 32 * 1024;

  static dim3 block() { return dim3(kCols, kLanes, 1); }
  static std::uint64_t tiles_per_row(std::uint64_t nCols) { return (nCols + kCols - 1) / kCols; }
  static std::uint64_t tiles(std::uint64_t nRows, std::uint64_t nCols) {
    return ((nRows + kRows - 1) / kRows) * tiles_per_row(nCols);
  }
};

namespace detail {

// Is (r, c) of the block computed? diagonalShift = rows.first - cols.first,
// so the global i - j is r - c + diagonalShift.
__device__ __forceinline__ bool pair_kept(std::uint32_t r, std::uint32_t c,
                                          std::int64_t diagonalShift, TriangleSkipMode skip) {
  const std::int64_t d = static_cast<std::int64_t>(r) - static_cast<std::int64_t>(c) + diagonalShift;
  switch (skip) {
    case TriangleSkipMode::LowerTriangle: return d >= 0;
    case TriangleSkipMode::LowerTriangleSkipDiag: return d > 0;
    case TriangleSkipMode::None:
    default: return true;
  }
}

}  // namespace detail

// out (nRows x nCols, row-major) must be zeroed beforehand: skipped pairs
// are not written. stagingCapacity: points of dynamic shared memory.
template <bool Windowed, typename T, typename Op>
__global__ void __launch_bounds__(PcfKernelGeometry::kThreads)
    pcf_block_integrate_kernel(const SimplePoint<T, T>* __restrict__ rowPoints,
                               const std::uint32_t* __restrict__ rowOffsets, std::uint32_t nRows,
                               const SimplePoint<T, T>* __restrict__ colPoints,
                               const std::uint32_t* __restrict__ colOffsets, std::uint32_t nCols,
                               std::int64_t diagonalShift, TriangleSkipMode skip,
                               std::uint32_t tilesPerRow, std::uint32_t stagingCapacity, T a, T b,
                               Op op, T* __restrict__ out) {
  using G = PcfKernelGeometry;
  using Point = SimplePoint<T, T>;
  extern __shared__ __align__(16) unsigned char stagingRaw[];
  Point* staging = reinterpret_cast<Point*>(stagingRaw);

  const std::uint32_t tile = blockIdx.x;
  const std::uint32_t r0 = (tile / tilesPerRow) * G::kRows;
  const std::uint32_t c0 = (tile % tilesPerRow) * G::kCols;
  const std::uint32_t rLast = min(r0 + G::kRows, nRows) - 1;

  // A tile wholly above the kept triangle does nothing (uniform for the
  // thread block, so returning before the barrier is safe).
  if (!detail::pair_kept(rLast, c0, diagonalShift, skip)) return;

  const std::uint32_t cEnd = min(c0 + G::kCols, nCols);
  const std::uint32_t pBegin = colOffsets[c0];
  const std::uint32_t nTilePoints = colOffsets[cEnd] - pBegin;
  const bool staged = nTilePoints <= stagingCapacity;
  if (staged) {
    const std::uint32_t tid = threadIdx.y * G::kCols + threadIdx.x;
    for (std::uint32_t k = tid; k < nTilePoints; k += G::kThreads) {
      staging[k] = colPoints[pBegin + k];
    }
    __syncthreads();
  }

  const std::uint32_t c = c0 + threadIdx.x;
  if (c >= nCols) return;  // after the only barrier
  const std::uint32_t gBegin = colOffsets[c];
  const std::uint32_t ng = colOffsets[c + 1] - gBegin;
  const Point* g = staged ? staging + (gBegin - pBegin) : colPoints + gBegin;

#pragma unroll 1
  for (std::uint32_t k = 0; k < G::kRowsPerThread; ++k) {
    const std::uint32_t r = r0 + threadIdx.y + k * G::kLanes;
    if (r >= nRows) break;
    if (!detail::pair_kept(r, c, diagonalShift, skip)) continue;
    const std::uint32_t fBegin = rowOffsets[r];
    const std::uint32_t nf = rowOffsets[r + 1] - fBegin;
    out[static_cast<std::uint64_t>(r) * nCols + c] =
        integrate_pair<Windowed>(rowPoints + fBegin, nf, g, ng, a, b, op);
  }
}

}  // namespace mpcf::cuda
