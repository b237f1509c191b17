// The PCF block kernels.
//
// A block's functions are first rearranged on the GPU (pcf_layout_kernel)
// into the layout the walk wants, in an order sorted by length (longest
// first, so neighbours have nearly equal lengths and the threads of a warp
// walk pairs of nearly equal step counts):
//
//  * rows: each function's shifted points and sentinel (sentinel_walk.hpp),
//    one function after the other (rowOffsets);
//  * columns: tiles of kTileCols functions, interleaved point by point
//    (point k of the tile's column c at k * kTileCols + c), each column
//    padded with its sentinel to the tile's longest column plus one.
//
// pcf_tiled_kernel then runs one thread block per (column tile, chunk of
// rows). The tile is copied into shared memory (Staged) when it fits. A
// group of kTileCols consecutive threads walks one row function against the
// tile's columns, one column per thread: the group reads its row function at
// nearly equal positions (few cache lines per load), and the interleaved
// tile puts every thread's column in its own shared-memory banks, so the
// tile loads are free of bank conflicts whatever positions the threads have
// reached. Each thread walks its column against the rows of the chunk one
// after the other (integrate_pair_shifted: one load and no end test per
// step; for the whole line and sums, no fold tests either when both
// functions are within UncheckedSumFold's bounds, which the layout kernel
// records per function). Indices inside a block are 32-bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/point.hpp"
#include "mpcf/cuda/sentinel_walk.hpp"

namespace mpcf::cuda {

struct PcfTileGeometry {
  static constexpr std::uint32_t kTileCols = 16;    // columns per tile = threads per row group
  static constexpr std::uint32_t kMaxThreads = 1024;
  static constexpr std::uint32_t kRowPasses = 4;    // rows each thread walks per thread block
  static constexpr std::uint32_t kLayoutThreads = 256;
};

// Which pairs of the block the kernel computes.
enum class PairSelection : int {
  All = 0,             // every (row, column)
  SortedTriangle = 1,  // rows and columns are the same functions in the same sorted order:
                       // the sorted lower triangle, written to (max(i, j), min(i, j))
  ByIndex = 2,         // pair_kept() on the block's own indices
};

// The rearranged block (device pointers) and what to compute.
template <typename T>
struct TiledBlockArgs {
  const SimplePoint<T, T>* rowPoints;   // sorted rows with sentinels (also passed on its own,
                                        // __restrict__: read through the read-only cache)
  const std::uint32_t* rowOffsets;      // nRows + 1
  const std::uint32_t* rowOrder;        // sorted position -> row of the block
  const SimplePoint<T, T>* tiles;       // interleaved column tiles
  const std::uint32_t* tileOffsets;     // nTiles + 1, in points
  const std::uint32_t* colOrder;        // sorted position -> column of the block
  const std::uint32_t* colLength;       // nTiles * kTileCols (0: padding)
  const std::uint32_t* rowFast;         // nRows: 1 when within UncheckedSumFold's bounds
  const std::uint32_t* colFast;         // nTiles * kTileCols, likewise
  std::uint32_t nRows;
  std::uint32_t nCols;
  std::uint32_t tileBegin;              // the tiles [tileBegin, tileBegin + tileCount) of this launch
  std::uint32_t tileCount;
  std::uint32_t rowsPerBlock;
  PairSelection selection;
  TriangleSkipMode skip;
  std::int64_t diagonalShift;           // rows.first - cols.first (ByIndex)
  std::uint64_t outRowStride;           // out[i * outRowStride + j * outColStride]
  std::uint64_t outColStride;
  T a;
  T b;
  T* out;
};

// Where one sorted function of the block comes from and goes to (layout).
struct LayoutArgs {
  const std::uint32_t* srcOffsets;  // the uploaded CSR data
  std::uint32_t rowBase;            // source function of block row r: rowBase + r
  std::uint32_t colBase;
  const std::uint32_t* rowOrder;
  const std::uint32_t* rowOffsets;
  const std::uint32_t* colOrder;
  const std::uint32_t* colLength;
  const std::uint32_t* tileOffsets;
  std::uint32_t nRows;
  std::uint32_t nColSlots;          // nTiles * kTileCols
  std::uint32_t* rowFast;           // out: function within the bounds of the fast fold
  std::uint32_t* colFast;
  double valueBound;                // |v| limit of the fast fold (negative: none)
  double timeBound;                 // |t| limit
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

// One warp per sorted function: items [0, nRows) are rows, the rest column
// slots. Writes the shifted points (sentinel_walk.hpp) of each function from
// the uploaded CSR data; a tile's shorter columns repeat their sentinel down
// to the tile's depth, padding slots hold (+inf, 0).
template <typename T>
__global__ void __launch_bounds__(PcfTileGeometry::kLayoutThreads)
    pcf_layout_kernel(LayoutArgs args, const SimplePoint<T, T>* __restrict__ src,
                      SimplePoint<T, T>* __restrict__ rowPoints, SimplePoint<T, T>* __restrict__ tiles) {
  constexpr std::uint32_t C = PcfTileGeometry::kTileCols;
  const std::uint32_t warpsPerBlock = blockDim.x / 32;
  const std::uint32_t item = blockIdx.x * warpsPerBlock + threadIdx.x / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  // Whether every point of a function lies within the fast fold's bounds.
  auto within = [&](const SimplePoint<T, T>* p, std::uint32_t len) {
    bool ok = args.valueBound >= 0;
    for (std::uint32_t k = lane; k < len; k += 32) {
      ok = ok && fabs(static_cast<double>(p[k].t)) <= args.timeBound &&
           fabs(static_cast<double>(p[k].v)) <= args.valueBound;
    }
    return __all_sync(0xffffffffu, ok);
  };
  if (item < args.nRows) {
    const std::uint32_t fn = args.rowBase + args.rowOrder[item];
    const std::uint32_t from = args.srcOffsets[fn];
    const std::uint32_t len = args.srcOffsets[fn + 1] - from;
    SimplePoint<T, T>* dst = rowPoints + args.rowOffsets[item];
    for (std::uint32_t k = lane; k <= len; k += 32) dst[k] = shifted_point(src + from, len, k);
    const bool ok = within(src + from, len);
    if (lane == 0) args.rowFast[item] = ok ? 1u : 0u;
    return;
  }
  const std::uint32_t slot = item - args.nRows;
  if (slot >= args.nColSlots) return;
  const std::uint32_t q = slot / C;
  const std::uint32_t c = slot % C;
  const std::uint32_t depth = (args.tileOffsets[q + 1] - args.tileOffsets[q]) / C;  // longest + 1
  const std::uint32_t len = args.colLength[slot];
  std::uint32_t from = 0;
  if (len > 0) from = args.srcOffsets[args.colBase + args.colOrder[slot]];
  SimplePoint<T, T>* dst = tiles + args.tileOffsets[q] + c;
  for (std::uint32_t k = lane; k < depth; k += 32) {
    dst[k * C] = shifted_point(src + from, len, min(k, len));
  }
  const bool ok = within(src + from, len);
  if (lane == 0) args.colFast[slot] = ok ? 1u : 0u;
}

// See the file comment. Launch: blockDim.x a multiple of kTileCols (at most
// kMaxThreads), gridDim.x = tileCount * ceil(nRows / rowsPerBlock), dynamic
// shared memory = the largest tile of the launch when Staged. `out` must be
// zeroed beforehand: skipped pairs are not written.
template <bool Staged, bool Windowed, typename T, typename Op>
__global__ void __launch_bounds__(PcfTileGeometry::kMaxThreads)
    pcf_tiled_kernel(const TiledBlockArgs<T> args, const SimplePoint<T, T>* __restrict__ rowPoints,
                     const Op op) {
  constexpr std::uint32_t C = PcfTileGeometry::kTileCols;
  using Point = SimplePoint<T, T>;

  const std::uint32_t q = args.tileBegin + blockIdx.x % args.tileCount;
  const std::uint32_t rBegin = (blockIdx.x / args.tileCount) * args.rowsPerBlock;
  const std::uint32_t rEnd = min(rBegin + args.rowsPerBlock, args.nRows);
  const std::uint32_t cBegin = q * C;
  const bool skipDiag = args.skip == TriangleSkipMode::LowerTriangleSkipDiag;
  // A chunk wholly above the sorted triangle has nothing to do (uniform for
  // the thread block: returning before the barrier is safe).
  if (args.selection == PairSelection::SortedTriangle &&
      (skipDiag ? rEnd - 1 <= cBegin : rEnd - 1 < cBegin)) {
    return;
  }

  const std::uint32_t tileBase = args.tileOffsets[q];
  const Point* tile;
  if constexpr (Staged) {
    extern __shared__ __align__(16) unsigned char stagingRaw[];
    // Tiles are whole multiples of 16 bytes (kTileCols points per row).
    const std::uint32_t vectors = (args.tileOffsets[q + 1] - tileBase) * sizeof(Point) / 16;
    const uint4* from = reinterpret_cast<const uint4*>(args.tiles + tileBase);
    uint4* to = reinterpret_cast<uint4*>(stagingRaw);
    for (std::uint32_t k = threadIdx.x; k < vectors; k += blockDim.x) to[k] = from[k];
    __syncthreads();
    tile = reinterpret_cast<const Point*>(stagingRaw);
  } else {
    tile = args.tiles + tileBase;
  }

  const std::uint32_t lane = threadIdx.x % C;
  const std::uint32_t c = cBegin + lane;
  if (c >= args.nCols) return;  // padding slot; after the only barrier
  const std::uint32_t ng = args.colLength[c];
  const std::uint32_t j = args.colOrder[c];
  const bool colFast = args.colFast[c] != 0;
  const Point* g = tile + lane;
  const std::uint32_t groups = blockDim.x / C;
#pragma unroll 1
  for (std::uint32_t r = rBegin + threadIdx.x / C; r < rEnd; r += groups) {
    std::uint32_t i = args.rowOrder[r];
    bool kept = true;
    if (args.selection == PairSelection::SortedTriangle) {
      kept = skipDiag ? r > c : r >= c;
    } else if (args.selection == PairSelection::ByIndex) {
      kept = detail::pair_kept(i, j, args.diagonalShift, args.skip);
    }
    if (!kept) continue;
    const std::uint32_t fBegin = args.rowOffsets[r];
    const std::uint32_t nf = args.rowOffsets[r + 1] - fBegin - 1;
    T value;
    if constexpr (!Windowed && UncheckedSumFold<Op>::value) {
      if (colFast && args.rowFast[r] != 0) {
        value = integrate_pair_shifted<C, false, true>(rowPoints + fBegin, g, nf + ng, args.a,
                                                       args.b, op);
      } else {
        value = integrate_pair_shifted<C, false>(rowPoints + fBegin, g, nf + ng, args.a, args.b,
                                                 op);
      }
    } else {
      value = integrate_pair_shifted<C, Windowed>(rowPoints + fBegin, g, nf + ng, args.a, args.b,
                                                  op);
    }
    std::uint32_t oj = j;
    if (args.selection == PairSelection::SortedTriangle && i < j) {
      oj = i;
      i = j;
    }
    args.out[static_cast<std::uint64_t>(i) * args.outRowStride +
             static_cast<std::uint64_t>(oj) * args.outColStride] = value;
  }
}

}  // namespace mpcf::cuda
