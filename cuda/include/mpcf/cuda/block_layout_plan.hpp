// Host planning of a block's sorted layout, the arithmetic the GPU block
// kernels' layout rests on: which pairs a block computes (select_pairs), the
// block's rows and columns sorted by length, longest first, ties by index
// (sort_by_length), the offsets of the sorted rows and of the column tiles
// (plan_block_layout: BlockLayoutPlan), the split of the tiles into kernel
// launches of similar tile sizes (plan_launches), the points such a layout
// needs at most (layout_row_points, layout_tile_points) and the packing of
// the plan's index arrays into one buffer for one upload per block
// (layout_meta_count, layout_meta_view, pack_layout_meta).
//
// The layout: each row function is its points plus a sentinel, one after
// the other; columns go in tiles of `tileCols` functions (the kernel's tile
// width, a parameter here: PcfTileGeometry::kTileCols for the PCF kernels),
// each tile padded to its longest column plus a sentinel. The managers are
// anything with count(), size_of(i) and max_subset_elements(n) (core's
// OffsetDataManager, CudaOffsetDataManager).
//
// Plain C++ with no CUDA dependency, so the CPU tests check it on every
// machine (tests/gpu/test_gpu_host_parts.cpp). It lives beside the CUDA
// backend because it is the GPU layout's (core knows nothing of tiles).
// PcfBlockOp uses it; a second BlockOp (piecewise linear functions, DESIGN
// §10) shares it rather than copying it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "mpcf/core/block_scheduler.hpp"

namespace mpcf::cuda {

// Which pairs of the block the kernel computes.
enum class PairSelection : int {
  All = 0,             // every (row, column)
  SortedTriangle = 1,  // rows and columns are the same functions in the same sorted order:
                       // the sorted lower triangle, written to (max(i, j), min(i, j))
  ByIndex = 2,         // pair_kept() on the block's own indices
};

// The host half of a block's sorted layout: all offsets are in points of
// the device arrays, 32-bit. Plain data, filled by plan_block_layout (and
// launchEnds by plan_launches).
struct BlockLayoutPlan {
  PairSelection selection = PairSelection::All;
  std::uint32_t tileCols = 0;  // columns per tile
  std::uint32_t nRows = 0;
  std::uint32_t nCols = 0;
  std::uint32_t nTiles = 0;
  std::vector<std::uint32_t> rowOrder;     // nRows
  std::vector<std::uint32_t> rowOffsets;   // nRows + 1
  std::vector<std::uint32_t> colOrder;     // nTiles * tileCols
  std::vector<std::uint32_t> colLength;    // nTiles * tileCols
  std::vector<std::uint32_t> tileOffsets;  // nTiles + 1
  std::vector<std::uint32_t> launchEnds;   // the kernel launches: tiles [previous end, end)
};

// Sorts `count` functions starting at `first` by length, longest first, ties
// by index (deterministic).
template <typename Manager>
void sort_by_length(const Manager& m, std::size_t first, std::size_t count,
                    std::vector<std::uint32_t>& order) {
  order.resize(count);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return m.size_of(first + x) > m.size_of(first + y);
  });
}

// Which pairs a block computes, given the skip mode: every pair when the
// block lies wholly in the kept triangle, the sorted triangle when rows and
// columns are the same functions, else a test per pair.
inline PairSelection select_pairs(const BlockInfo& block, TriangleSkipMode skip, bool sameData) {
  // Every pair is kept when the block's most restrictive one, its first row
  // against its last column, is.
  if (pair_kept(block.rows.first, block.cols.last, skip)) return PairSelection::All;
  if (sameData && block.rows == block.cols) return PairSelection::SortedTriangle;
  return PairSelection::ByIndex;
}

template <typename RowManager, typename ColManager>
void plan_block_layout(const RowManager& rows, const ColManager& cols, const BlockInfo& block,
                       PairSelection selection, std::uint32_t tileCols, BlockLayoutPlan& p) {
  const std::uint32_t C = tileCols;
  p.selection = selection;
  p.tileCols = C;
  p.nRows = static_cast<std::uint32_t>(block.n_rows());
  p.nCols = static_cast<std::uint32_t>(block.n_cols());
  p.nTiles = (p.nCols + C - 1) / C;
  sort_by_length(rows, block.rows.first, p.nRows, p.rowOrder);
  p.rowOffsets.resize(p.nRows + 1);
  std::uint64_t at = 0;
  for (std::uint32_t r = 0; r < p.nRows; ++r) {
    p.rowOffsets[r] = static_cast<std::uint32_t>(at);
    at += rows.size_of(block.rows.first + p.rowOrder[r]) + 1;
  }
  p.rowOffsets[p.nRows] = static_cast<std::uint32_t>(at);
  if (selection == PairSelection::SortedTriangle) {
    p.colOrder = p.rowOrder;
  } else {
    sort_by_length(cols, block.cols.first, p.nCols, p.colOrder);
  }
  p.colOrder.resize(std::size_t(p.nTiles) * C, 0u);
  p.colLength.assign(std::size_t(p.nTiles) * C, 0u);
  for (std::uint32_t c = 0; c < p.nCols; ++c) {
    p.colLength[c] = static_cast<std::uint32_t>(cols.size_of(block.cols.first + p.colOrder[c]));
  }
  p.tileOffsets.resize(p.nTiles + 1);
  at = 0;
  for (std::uint32_t q = 0; q < p.nTiles; ++q) {
    p.tileOffsets[q] = static_cast<std::uint32_t>(at);
    at += std::uint64_t(C) * (p.colLength[q * C] + 1);  // the first column is the longest
  }
  p.tileOffsets[p.nTiles] = static_cast<std::uint32_t>(at);
}

// Tiles of `tileCols` columns for up to `cols` columns.
inline std::size_t layout_tiles(std::size_t cols, std::uint32_t tileCols) {
  return (cols + tileCols - 1) / tileCols;
}

// The largest size_of over a manager's functions (0 when empty).
template <typename Manager>
std::uint64_t longest_function(const Manager& m) {
  std::uint64_t longest = 0;
  for (std::size_t k = 0; k < m.count(); ++k) longest = std::max<std::uint64_t>(longest, m.size_of(k));
  return longest;
}

// Points the sorted layout of any block of up to maxRows x maxCols needs:
// rows with a sentinel each; tiles padded to their longest column plus a
// sentinel. Tiles are sorted by length, so each tile's depth is at most the
// shortest column of the tile before it: the padding adds at most one tile
// of the longest function (`longest`: longest_function of the columns).
template <typename Manager>
std::uint64_t layout_row_points(const Manager& m, std::size_t maxRows) {
  return m.max_subset_elements(maxRows) + maxRows;
}
template <typename Manager>
std::uint64_t layout_tile_points(const Manager& m, std::size_t maxCols, std::uint64_t longest,
                                 std::uint32_t tileCols) {
  const std::uint64_t C = tileCols;
  const std::uint64_t tiles = (maxCols + C - 1) / C;
  return m.max_subset_elements(maxCols) + C * longest + C * tiles;
}

// Bytes of tile q of the plan, for points of `pointBytes`.
inline std::uint64_t tile_bytes(const BlockLayoutPlan& p, std::uint32_t q, std::size_t pointBytes) {
  return std::uint64_t(p.tileOffsets[q + 1] - p.tileOffsets[q]) * pointBytes;
}

// Tiles are sorted by size, largest first: they are split into launches of
// similar sizes (staged tiles within a factor of two of the launch's first,
// so shared memory is reserved for what a launch needs), or of all the
// tiles too large for shared memory (sharedPerBlock bytes).
inline void plan_launches(BlockLayoutPlan& p, std::size_t pointBytes, std::size_t sharedPerBlock) {
  p.launchEnds.clear();
  std::uint32_t q = 0;
  while (q < p.nTiles) {
    const std::uint64_t first = tile_bytes(p, q, pointBytes);
    const bool staged = first <= sharedPerBlock;
    std::uint32_t end = q + 1;
    while (end < p.nTiles && (staged ? 2 * tile_bytes(p, end, pointBytes) > first
                                     : tile_bytes(p, end, pointBytes) > sharedPerBlock)) {
      ++end;
    }
    p.launchEnds.push_back(end);
    q = end;
  }
}

// The plan's index arrays packed into one buffer, laid out for the largest
// block a storage takes (maxRows rows, maxTiles tiles), so a block's go to
// the GPU in one copy.
struct LayoutMeta {
  std::uint32_t* rowOrder;     // maxRows
  std::uint32_t* rowOffsets;   // maxRows + 1
  std::uint32_t* colOrder;     // maxTiles * tileCols
  std::uint32_t* colLength;    // maxTiles * tileCols
  std::uint32_t* tileOffsets;  // maxTiles + 1
};
inline std::size_t layout_meta_count(std::size_t maxRows, std::size_t maxTiles,
                                     std::uint32_t tileCols) {
  const std::size_t C = tileCols;
  return maxRows + (maxRows + 1) + 2 * maxTiles * C + (maxTiles + 1);
}
inline LayoutMeta layout_meta_view(std::uint32_t* base, std::size_t maxRows, std::size_t maxTiles,
                                   std::uint32_t tileCols) {
  const std::size_t C = tileCols;
  LayoutMeta v;
  v.rowOrder = base;
  v.rowOffsets = v.rowOrder + maxRows;
  v.colOrder = v.rowOffsets + maxRows + 1;
  v.colLength = v.colOrder + maxTiles * C;
  v.tileOffsets = v.colLength + maxTiles * C;
  return v;
}
// Copies the plan's arrays to their places (the rest is left as it is).
inline void pack_layout_meta(const BlockLayoutPlan& p, const LayoutMeta& dst) {
  std::copy(p.rowOrder.begin(), p.rowOrder.end(), dst.rowOrder);
  std::copy(p.rowOffsets.begin(), p.rowOffsets.end(), dst.rowOffsets);
  std::copy(p.colOrder.begin(), p.colOrder.end(), dst.colOrder);
  std::copy(p.colLength.begin(), p.colLength.end(), dst.colLength);
  std::copy(p.tileOffsets.begin(), p.tileOffsets.end(), dst.tileOffsets);
}

}  // namespace mpcf::cuda
