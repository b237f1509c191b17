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
// pcf_tiled_kernel then runs one thread block per (column tiles, chunk of
// rows): two consecutive tiles (TiledBlockArgs::warpTiles = 2) or one. The
// tiles are copied into shared memory (Staged) when they fit. A row group
// of warpTiles * kTileCols consecutive threads walks one row function
// against the tiles' columns, one column per thread: the group reads its
// row function at nearly equal positions (few cache lines per load); with
// two tiles a warp is one group and reads one row, with one tile its two
// groups read two rows (the same L1 wavefronts either way: see below).
// The interleaved tile
// puts every column of a half-warp in its own shared-memory banks (each
// half-warp reads one tile), so the tile loads are free of bank conflicts
// whatever positions the threads have reached. Each thread walks its
// column against the rows of the chunk one after the other
// (walk_pair_tiled, integrate_pair_shifted's steps with predicated loads
// into the points' own registers: one load and no end test per step; for
// the whole line and sums, no fold tests either when both functions are
// within UncheckedSumFold's bounds, which the layout kernel records per
// function). Indices inside a block are 32-bit.
//
// With SharedRows (two tiles per warp), each warp also copies its row into
// a buffer of its own in shared memory and walks it with walk_pair_shared:
// one shared load per step, from the row or the tile, chosen per lane. On
// one H200 (pdist L1, n = 20,000, m = 128, kernels alone) float64 took
// 48.2 ms against 52.0 ms with rings and 55.6 ms with tiles and rows from
// global memory; float32 27.0 ms against 26.3 ms, because lanes that read
// the row hit the banks of lanes that read the tile in the same
// half-warp (ncu: 46% of the shared wavefronts are bank conflicts), which
// leaves about as many wavefronts per step as the two loads of the tiled
// walk, with two more instructions. PcfBlockOp takes it for float64.
// With SplitRows as well, the warp walks its staged row with
// walk_pair_tiled's two predicated loads, both from shared memory
// (SplitLoads): the row's lanes and the tile's lanes no longer share a
// load, so no bank conflicts between them, and a float32 step is 9.75
// instructions (the f address moves in 32 bits). On the same H200 float32
// took 24.9 ms against 26.5 ms (half-warps, rows from global memory) at
// m = 128 and 113 against 112 ms at m = 512 (16 warps per multiprocessor),
// float64 51.7 ms against 48.1 ms (two 128-bit loads cost 8.2 wavefronts
// per step): PcfBlockOp takes it for float32 walks without bounds where the
// buffers leave room for 32 warps.
// Two tiles per warp without shared rows made no difference in float32
// (26.3 ms against 26.4 at m = 128, 113 against 112 at m = 512): a 64-bit
// load costs the L1 pipe two wavefronts however few cache lines it
// touches; float32 keeps one tile per half-warp where it does not stage
// its rows.
//
// pcf_ring_kernel (below) computes the same bits with the row functions
// streamed through small rings in shared memory as well: one load per step
// instead of two. PcfBlockOp chooses between the two (PcfKernel).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/point.hpp"
#include "mpcf/cuda/block_layout_plan.hpp"
#include "mpcf/cuda/pair_bounds.hpp"
#include "mpcf/cuda/sentinel_walk.hpp"

namespace mpcf::cuda {

struct PcfTileGeometry {
  static constexpr std::uint32_t kTileCols = 16;    // columns per tile = threads per row group
  static constexpr std::uint32_t kMaxThreads = 1024;
  static constexpr std::uint32_t kRowPasses = 4;    // rows each thread walks per thread block
  // Binned launches: up to kBinnedRowPasses rows per thread (most rows are
  // skipped); their row list (a count, then 16-bit offsets) after the
  // shared memory of the launch.
  static constexpr std::uint32_t kBinnedRowPasses = 16;
  static constexpr std::uint32_t kBinnedListBytes = 16 + 2 * (kMaxThreads / kTileCols) * kBinnedRowPasses;
  static constexpr std::uint32_t kLayoutThreads = 256;
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
  std::uint32_t warpTiles;              // pcf_tiled_kernel: tiles per thread block and row group
                                        // (1 or 2, see the file comment); pcf_ring_kernel: 1
  std::uint32_t rowBufferOffset;        // SharedRows: where the warps' row buffers start in the
                                        // dynamic shared memory (bytes, after the tiles)
  std::uint32_t rowBufferPoints;        // SharedRows: points per warp's buffer (the longest row)
  std::uint32_t rowsPerBlock;
  PairSelection selection;
  TriangleSkipMode skip;
  std::int64_t diagonalShift;           // rows.first - cols.first (ByIndex)
  std::uint64_t outRowStride;           // out[i * outRowStride + j * outColStride]
  std::uint64_t outColStride;
  T a;
  T b;
  T* out;
  // FloatAttempt operations: set to 1 by a pair whose value is not finite;
  // the redo launch (pcf_tiled_kernel<..., Redo = true>) then computes
  // those pairs again. Unused otherwise.
  std::uint32_t* redo;
  // pcf_tiled_kernel<..., Prune = true>: the bounds above which a pair's
  // value is not needed (pair_bounds.hpp). Unused otherwise.
  PairBounds<T> bounds;
  // pcf_tiled_kernel<..., Binned = true>: the (sorted row, tile) masks of
  // pcf_bin_bound_kernel (bin_bounds.cuh), mask[r * binMaskStride + q], bit
  // c % kTileCols set when the pair must be walked; the thread block's list
  // of rows to walk at rowListOffset bytes in its dynamic shared memory.
  const std::uint16_t* binMask;
  std::uint32_t binMaskStride;
  std::uint32_t rowListOffset;
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
// so the global i - j is r - c + diagonalShift (core's pair_kept).
__device__ __forceinline__ bool pair_kept_in_block(std::uint32_t r, std::uint32_t c,
                                                   std::int64_t diagonalShift, TriangleSkipMode skip) {
  return mpcf::pair_kept(static_cast<std::int64_t>(r) - static_cast<std::int64_t>(c) + diagonalShift,
                         skip);
}

// What a thread block of the block kernels computes: column tiles
// [q, qEnd) (sorted columns from cBegin on) against the sorted rows
// [rBegin, rEnd).
struct BlockChunk {
  std::uint32_t q;
  std::uint32_t qEnd;
  std::uint32_t rBegin;
  std::uint32_t rEnd;
  std::uint32_t cBegin;
  bool skipDiag;  // args.skip is LowerTriangleSkipDiag
  // Wholly above the sorted triangle: nothing to compute.
  __device__ bool above_triangle(PairSelection selection) const {
    return selection == PairSelection::SortedTriangle &&
           (skipDiag ? rEnd - 1 <= cBegin : rEnd - 1 < cBegin);
  }
};
template <typename T>
__device__ __forceinline__ BlockChunk chunk_of_block(const TiledBlockArgs<T>& args) {
  const std::uint32_t units = (args.tileCount + args.warpTiles - 1) / args.warpTiles;
  BlockChunk ch;
  ch.q = args.tileBegin + (blockIdx.x % units) * args.warpTiles;
  ch.qEnd = min(ch.q + args.warpTiles, args.tileBegin + args.tileCount);
  ch.rBegin = (blockIdx.x / units) * args.rowsPerBlock;
  ch.rEnd = min(ch.rBegin + args.rowsPerBlock, args.nRows);
  ch.cBegin = ch.q * PcfTileGeometry::kTileCols;
  ch.skipDiag = args.skip == TriangleSkipMode::LowerTriangleSkipDiag;
  return ch;
}

// Is the pair of sorted row r (block row i) and sorted column c (block
// column j) computed? skipDiag as above (the caller tests it once, outside
// its loop: nvcc then specialises the loop of pcf_tiled_kernel, 4-6% faster
// in float32 than with the test inside).
template <typename T>
__device__ __forceinline__ bool pair_selected(const TiledBlockArgs<T>& args, bool skipDiag,
                                              std::uint32_t r, std::uint32_t c, std::uint32_t i,
                                              std::uint32_t j) {
  bool kept = true;
  if (args.selection == PairSelection::SortedTriangle) {
    // The rule on sorted positions (rows and columns in the same order).
    kept = mpcf::pair_kept(static_cast<std::int64_t>(r) - static_cast<std::int64_t>(c),
                           skipDiag ? TriangleSkipMode::LowerTriangleSkipDiag
                                    : TriangleSkipMode::LowerTriangle);
  } else if (args.selection == PairSelection::ByIndex) {
    kept = pair_kept_in_block(i, j, args.diagonalShift, args.skip);
  }
  return kept;
}

// Where the value of block row i and block column j goes (the sorted
// triangle to (max(i, j), min(i, j))).
template <typename T>
__device__ __forceinline__ T* pair_output(const TiledBlockArgs<T>& args, std::uint32_t i,
                                          std::uint32_t j) {
  if (args.selection == PairSelection::SortedTriangle && i < j) {
    const std::uint32_t k = i;
    i = j;
    j = k;
  }
  return args.out + (static_cast<std::uint64_t>(i) * args.outRowStride +
                     static_cast<std::uint64_t>(j) * args.outColStride);
}
template <typename T>
__device__ __forceinline__ void store_pair(const TiledBlockArgs<T>& args, std::uint32_t i,
                                           std::uint32_t j, T value) {
  *pair_output(args, i, j) = value;
}

// The bound of the pair (block row i, block column j) from args.bounds
// (core's pair_bound_of: the larger of its row's and its column's, +inf
// when either is NaN). Read with relaxed loads: the kNN merges of earlier
// blocks lower them concurrently (any value read is a valid bound, see
// pair_bounds.hpp).
__device__ __forceinline__ float relaxed_load(const float* p) {
  float v;
  asm volatile("ld.relaxed.gpu.global.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ double relaxed_load(const double* p) {
  double v;
  asm volatile("ld.relaxed.gpu.global.f64 %0, [%1];" : "=d"(v) : "l"(p) : "memory");
  return v;
}
template <typename T>
__device__ __forceinline__ T pair_bound(const PairBounds<T>& bounds, std::uint32_t i,
                                        std::uint32_t j) {
  const T r = relaxed_load(bounds.rows + std::uint64_t(i) * bounds.rowStride);
  const T c = bounds.cols ? relaxed_load(bounds.cols + std::uint64_t(j) * bounds.colStride)
                          : -std::numeric_limits<T>::infinity();
  return mpcf::pair_bound_of(r, c);
}

// A FloatAttempt operation's value that is not finite: reported for the redo
// launch (every such thread writes the same 1).
template <typename Op, typename T>
__device__ __forceinline__ void report_redo(const TiledBlockArgs<T>& args, bool needed) {
  if constexpr (FloatAttempt<Op>::value) {
    if (needed) *args.redo = 1u;
  }
}

// Copies the tiles [q, qEnd) (consecutive in global memory) into shared
// memory at `to` (all threads of the block, then a barrier) and returns
// them there.
template <typename T>
__device__ __forceinline__ const SimplePoint<T, T>* stage_tile(const TiledBlockArgs<T>& args,
                                                               std::uint32_t q, std::uint32_t qEnd,
                                                               unsigned char* to) {
  const std::uint32_t tileBase = args.tileOffsets[q];
  // Tiles are whole multiples of 16 bytes (kTileCols points per row).
  const std::uint32_t vectors =
      (args.tileOffsets[qEnd] - tileBase) * sizeof(SimplePoint<T, T>) / 16;
  const uint4* from = reinterpret_cast<const uint4*>(args.tiles + tileBase);
  uint4* dst = reinterpret_cast<uint4*>(to);
  for (std::uint32_t k = threadIdx.x; k < vectors; k += blockDim.x) dst[k] = from[k];
  __syncthreads();
  return reinterpret_cast<const SimplePoint<T, T>*>(to);
}

// One step's loads of the tiled walk: when takeF, f moves to its next point
// and fn is loaded from there, else g moves GStep bytes and gn is loaded;
// each load lands in the point's own registers (predicated), and the
// pointer moves only on its side. Written in PTX because for the C++ form
// (if (takeF) fn = *++f; else gn = *(g += GStride);) nvcc 13 loads into
// fresh registers and copies them back and moves both pointers then one
// back: 15 instructions per step of the float32 walk instead of 10-11.
// G: a 32-bit shared-memory address (GShared) or a global pointer.
// The PTX of one step for the point type VT ("f32", "f64") held in
// registers of constraint C, FB bytes a point; g moved by GADD and loaded by
// GLD, in registers of constraint GC.
#define MPCF_TILED_STEP_ASM(VT, C, FB, GADD, GLD, GC)                                         \
  asm("{\n\t.reg .pred p;\n\t.reg .b64 a;\n\tsetp.ne.b32 p, %6, 0;\n\t"                       \
      "@p add.u32 %4, %4, 1;\n\tmul.wide.u32 a, %4, " FB ";\n\tadd.s64 a, %8, a;\n\t"           \
      "@p ld.global.nc.v2." VT " {%0, %1}, [a];\n\t"                                          \
      "@!p " GADD " %5, %5, %7;\n\t@!p " GLD ".v2." VT " {%2, %3}, [%5];\n\t}"                   \
      : "+" C(fn.t), "+" C(fn.v), "+" C(gn.t), "+" C(gn.v), "+r"(i), "+" GC(g)                \
      : "r"(static_cast<std::uint32_t>(takeF)), "n"(GStep), "l"(f))
template <std::uint32_t GStep, bool GShared>
struct TiledLoads {
  using G = std::conditional_t<GShared, std::uint32_t, std::uint64_t>;
  static __device__ __forceinline__ void step(bool takeF, const SimplePoint<float, float>* f,
                                              std::uint32_t& i, G& g, AlignedPoint<float>& fn,
                                              AlignedPoint<float>& gn) {
    if constexpr (GShared) {
      MPCF_TILED_STEP_ASM("f32", "f", "8", "add.u32", "ld.shared", "r");
    } else {
      MPCF_TILED_STEP_ASM("f32", "f", "8", "add.s64", "ld.global.nc", "l");
    }
  }
  static __device__ __forceinline__ void step(bool takeF, const SimplePoint<double, double>* f,
                                              std::uint32_t& i, G& g, AlignedPoint<double>& fn,
                                              AlignedPoint<double>& gn) {
    if constexpr (GShared) {
      MPCF_TILED_STEP_ASM("f64", "d", "16", "add.u32", "ld.shared", "r");
    } else {
      MPCF_TILED_STEP_ASM("f64", "d", "16", "add.s64", "ld.global.nc", "l");
    }
  }
};
#undef MPCF_TILED_STEP_ASM
// TiledLoads with f in shared memory as well (SharedRows with split loads):
// `i` is then f's 32-bit shared address, moved FStep bytes on f's side.
// Two predicated shared loads per step, each with only the lanes of its
// side active: the row's lanes read nearly equal positions.
#define MPCF_SPLIT_STEP_ASM(VT, C, FB)                                                          \
  asm("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %6, 0;\n\t"                                        \
      "@p add.u32 %4, %4, " FB ";\n\t@p ld.shared.v2." VT " {%0, %1}, [%4];\n\t"                \
      "@!p add.u32 %5, %5, %7;\n\t@!p ld.shared.v2." VT " {%2, %3}, [%5];\n\t}"                 \
      : "+" C(fn.t), "+" C(fn.v), "+" C(gn.t), "+" C(gn.v), "+r"(i), "+r"(g)                  \
      : "r"(static_cast<std::uint32_t>(takeF)), "n"(GStep))
template <std::uint32_t GStep>
struct SplitLoads {
  using G = std::uint32_t;
  static __device__ __forceinline__ void step(bool takeF, const SimplePoint<float, float>*,
                                              std::uint32_t& i, G& g, AlignedPoint<float>& fn,
                                              AlignedPoint<float>& gn) {
    MPCF_SPLIT_STEP_ASM("f32", "f", "8");
  }
  static __device__ __forceinline__ void step(bool takeF, const SimplePoint<double, double>*,
                                              std::uint32_t& i, G& g, AlignedPoint<double>& fn,
                                              AlignedPoint<double>& gn) {
    MPCF_SPLIT_STEP_ASM("f64", "d", "16");
  }
};
#undef MPCF_SPLIT_STEP_ASM

// integrate_pair_shifted (sentinel_walk.hpp: the same steps, rectangles and
// folds, so the same bits) with f in global memory and g, GStride points
// apart, in shared memory (GShared) or global memory. nvcc 13 for sm_90
// makes the float32 L1 loop of the staged kernel (unchecked fold) 10
// instructions per step plus the loop's 3 per 4 steps: FSETP, FSEL, two
// FADD, FFMA, and on the consumed side an index or address add and the
// load (with the address of f's point, IMAD.WIDE); 15 with the C++ loads.
// The loop then waits on its loads more (one step's compare needs the
// point the last step loaded): on one H200 issue slots busy fell from 80%
// to 68%, and the kernel took 11% less time (ncu, pdist L1 m = 128).
//
// Prune (MonotoneFold operations): every kPruneSteps steps the walk compares
// its partial value with `bound` and, once above it, stops and returns that
// partial value (see pair_bounds.hpp).
constexpr std::uint32_t kPruneSteps = 4;
// Runs step() `total` times, comparing acc (which step() updates) with
// bound after every kPruneSteps; true when it stopped there, above it.
template <typename Step, typename Acc, typename T>
__device__ __forceinline__ bool run_pruned(Step& step, std::uint32_t total, const Acc& acc,
                                           T bound) {
  std::uint32_t s = 0;
  for (; s + kPruneSteps <= total; s += kPruneSteps) {
#pragma unroll
    for (std::uint32_t u = 0; u < kPruneSteps; ++u) step();
    if (acc > bound) return true;
  }
  for (; s < total; ++s) step();
  return false;
}
template <std::uint32_t GStride, bool Windowed, bool Unchecked, bool GShared, bool Prune = false,
          bool FShared = false, typename T, typename Op>
__device__ __forceinline__ T walk_pair_tiled(const SimplePoint<T, T>* __restrict__ f,
                                             const SimplePoint<T, T>* g, std::uint32_t total,
                                             T a, T b, const Op& op, T bound = T(0)) {
  static_assert(!Prune || MonotoneFold<Op>::value);
  AlignedPoint<T> fn = load_point(f);
  AlignedPoint<T> gn = load_point(g);
  T t = mpcf::detail::min_value(fn.t, gn.t);
  auto acc = op.init();
  static_assert(!FShared || GShared);
  using Loads = std::conditional_t<FShared, SplitLoads<GStride * sizeof(SimplePoint<T, T>)>,
                                   TiledLoads<GStride * sizeof(SimplePoint<T, T>), GShared>>;
  std::uint32_t i = 0;  // f's point in fn (FShared: its shared address)
  if constexpr (FShared) i = static_cast<std::uint32_t>(__cvta_generic_to_shared(f));
  typename Loads::G gAt;
  if constexpr (GShared) {
    gAt = static_cast<std::uint32_t>(__cvta_generic_to_shared(g));
  } else {
    gAt = reinterpret_cast<std::uint64_t>(g);
  }
  if constexpr (Prune) {
    auto step = [&] {
      const bool takeF = fn.t <= gn.t;
      const T tn = takeF ? fn.t : gn.t;
      acc = fold_rectangle<Windowed, Unchecked>(acc, t, tn, fn.v, gn.v, a, b, op);
      t = tn;
      Loads::step(takeF, f, i, gAt, fn, gn);
    };
    if (run_pruned(step, total, acc, bound)) return op.finalize(acc);
  } else {
    // The step written out, not the lambda above: calling a lambda here
    // changed nvcc 13's code for some kernels (cuobjdump; the same holds in
    // walk_pair_shared), and these loops are the hot ones without bounds.
#pragma unroll(walk_unroll<T>())
    for (std::uint32_t s = 0; s < total; ++s) {
      const bool takeF = fn.t <= gn.t;
      const T tn = takeF ? fn.t : gn.t;
      acc = fold_rectangle<Windowed, Unchecked>(acc, t, tn, fn.v, gn.v, a, b, op);
      t = tn;
      Loads::step(takeF, f, i, gAt, fn, gn);
    }
  }
  return finish_walk(acc, t, fn.v, gn.v, a, b, op);
}

// The walk of one pair with both functions in shared memory: f, the row,
// staged by the warp, and g, the lane's tile column (GStride points apart).
// A step is one load: it holds the point it kept at the last step and the
// one it just loaded (as ring_walk does, so ties may be consumed in
// another order, which only reorders rectangles of width 0: the same bits;
// the integrand must be symmetric), and loads the next point of the side
// consumed from that side's address, chosen per lane.
// One step's bookkeeping of walk_pair_shared after its fold: where
// takeNext is 0 the kept point is consumed and next becomes the kept one;
// the side consumed (f where takeNext == nextIsF) has its next point
// loaded into next and its address moved. In PTX for the same reason as
// TiledLoads: nvcc 13 keeps the side as an integer (three instructions to
// get a predicate back) and moves each address with an add and a
// predicated copy.
#define MPCF_SHARED_STEP_ASM(VT, C, FB, GB)                                                     \
  asm("{\n\t.reg .pred tk, nf, fr;\n\t.reg .b32 a;\n\tsetp.ne.b32 tk, %7, 0;\n\t"               \
      "setp.ne.b32 nf, %6, 0;\n\txor.pred fr, tk, nf;\n\t"                                    \
      "@!tk mov." VT " %0, %2;\n\t@!tk mov." VT " %1, %3;\n\t"                                \
      "selp.b32 a, %5, %4, fr;\n\tld.shared.v2." VT " {%2, %3}, [a];\n\t"                      \
      "@!fr add.u32 %4, %4, " FB ";\n\t@fr add.u32 %5, %5, " GB ";\n\t"                        \
      "selp.u32 %6, 0, 1, fr;\n\t}"                                                           \
      : "+" C(kept.t), "+" C(kept.v), "+" C(next.t), "+" C(next.v), "+r"(fAt), "+r"(gAt),     \
        "+r"(nextIsF)                                                                         \
      : "r"(static_cast<std::uint32_t>(takeNext)))
template <std::uint32_t GStride, bool Windowed, bool Unchecked, bool Prune = false, typename T,
          typename Op>
__device__ __forceinline__ T walk_pair_shared(const AlignedPoint<T>* f, const AlignedPoint<T>* g,
                                              std::uint32_t total, T a, T b, const Op& op,
                                              T bound = T(0)) {
  static_assert(SymmetricIntegrand<Op>::value);
  static_assert(!Prune || MonotoneFold<Op>::value);
  static_assert(GStride == 16, "the tile strides in bytes of MPCF_SHARED_STEP_ASM");
  AlignedPoint<T> kept = f[0];
  AlignedPoint<T> next = g[0];
  std::uint32_t fAt = static_cast<std::uint32_t>(__cvta_generic_to_shared(f + 1));
  std::uint32_t gAt = static_cast<std::uint32_t>(__cvta_generic_to_shared(g + GStride));
  T t = mpcf::detail::min_value(kept.t, next.t);
  auto acc = op.init();
  std::uint32_t nextIsF = 0;
  if constexpr (Prune) {  // as in walk_pair_tiled
    auto step = [&] {
      const bool takeNext = next.t <= kept.t;
      const T tn = takeNext ? next.t : kept.t;
      acc = fold_rectangle<Windowed, Unchecked>(acc, t, tn, kept.v, next.v, a, b, op);
      t = tn;
      if constexpr (sizeof(T) == 4) {
        MPCF_SHARED_STEP_ASM("f32", "f", "8", "128");
      } else {
        MPCF_SHARED_STEP_ASM("f64", "d", "16", "256");
      }
    };
    if (run_pruned(step, total, acc, bound)) return op.finalize(acc);
  } else {
#pragma unroll(walk_unroll<T>())
    for (std::uint32_t s = 0; s < total; ++s) {
      const bool takeNext = next.t <= kept.t;
      const T tn = takeNext ? next.t : kept.t;
      acc = fold_rectangle<Windowed, Unchecked>(acc, t, tn, kept.v, next.v, a, b, op);
      t = tn;
      if constexpr (sizeof(T) == 4) {
        MPCF_SHARED_STEP_ASM("f32", "f", "8", "128");
      } else {
        MPCF_SHARED_STEP_ASM("f64", "d", "16", "256");
      }
    }
  }
  return finish_walk(acc, t, kept.v, next.v, a, b, op);
}
#undef MPCF_SHARED_STEP_ASM

// Where the points of a layout launch's items lie in the uploaded CSR data
// (pcf_layout_kernel, pcf_bins_kernel: one warp per item; items [0, nRows)
// are the sorted rows, the next nColSlots the column slots): those of
// sorted row `r`, and of column slot `slot` (none for a padding slot).
__device__ __forceinline__ void row_source(const LayoutArgs& args, std::uint32_t r,
                                           std::uint32_t& from, std::uint32_t& len) {
  const std::uint32_t fn = args.rowBase + args.rowOrder[r];
  from = args.srcOffsets[fn];
  len = args.srcOffsets[fn + 1] - from;
}
__device__ __forceinline__ void slot_source(const LayoutArgs& args, std::uint32_t slot,
                                            std::uint32_t& from, std::uint32_t& len) {
  len = args.colLength[slot];
  from = 0;
  if (len > 0) from = args.srcOffsets[args.colBase + args.colOrder[slot]];
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
  std::uint32_t from, len;
  if (item < args.nRows) {
    detail::row_source(args, item, from, len);
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
  detail::slot_source(args, slot, from, len);
  SimplePoint<T, T>* dst = tiles + args.tileOffsets[q] + c;
  for (std::uint32_t k = lane; k < depth; k += 32) {
    dst[k * C] = shifted_point(src + from, len, min(k, len));
  }
  const bool ok = within(src + from, len);
  if (lane == 0) args.colFast[slot] = ok ? 1u : 0u;
}

namespace detail {
// The rows of [rBegin, rEnd) whose mask in a tile of [q, qEnd) is not zero,
// as offsets from rBegin, into the list at `at` + 16 (their count at `at`);
// all threads of the block, with barriers. Returns the count.
template <typename T>
__device__ std::uint32_t binned_rows(const TiledBlockArgs<T>& args, std::uint32_t q,
                                     std::uint32_t qEnd, std::uint32_t rBegin, std::uint32_t rEnd,
                                     unsigned char* at) {
  auto* count = reinterpret_cast<std::uint32_t*>(at);
  auto* list = reinterpret_cast<std::uint16_t*>(at + 16);
  if (threadIdx.x == 0) *count = 0;
  __syncthreads();
  const std::uint32_t n = rEnd - rBegin;
  const std::uint32_t lane = threadIdx.x % 32;
  for (std::uint32_t t0 = 0; t0 < n; t0 += blockDim.x) {
    const std::uint32_t t = t0 + threadIdx.x;
    bool alive = false;
    if (t < n) {
      for (std::uint32_t u = q; u < qEnd; ++u) {
        alive = alive || args.binMask[std::uint64_t(rBegin + t) * args.binMaskStride + u] != 0;
      }
    }
    const std::uint32_t bits = __ballot_sync(0xffffffffu, alive);
    std::uint32_t base = 0;
    if (lane == 0 && bits != 0) base = atomicAdd(count, static_cast<std::uint32_t>(__popc(bits)));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (alive) list[base + __popc(bits & ((1u << lane) - 1u))] = static_cast<std::uint16_t>(t);
  }
  __syncthreads();
  return *count;
}
}  // namespace detail

// See the file comment. Launch: blockDim.x a multiple of 32 (at most
// kMaxThreads), gridDim.x = ceil(tileCount / warpTiles) * ceil(nRows /
// rowsPerBlock), dynamic shared memory = the launch's largest warpTiles
// consecutive tiles when Staged. `out` must be
// zeroed beforehand: skipped pairs are not written.
//
// Redo: the second launch for a FloatAttempt operation (the same args and
// grid, not staged, the same threads, Op the exact
// operation): nothing when the first launch reported no pair (*args.redo
// == 0), else the pairs whose value in `out` is not finite, with op.
//
// Prune (MonotoneFold operations, args.bounds set): a pair's walk stops
// once its partial value exceeds the pair's bound, and that partial value
// is written (pair_bounds.hpp).
//
// Binned (with Prune; args.binMask from pcf_bin_bound_kernel, launched
// before on the same stream): the thread block first lists the rows of its
// chunk with a pair left in its tiles (dynamic shared memory at
// args.rowListOffset: kBinnedListBytes) and its row groups walk those rows
// only, each thread only its pairs left; the others already hold +inf.
//
// SplitRows (with SharedRows): the staged row is walked with two predicated
// shared loads per step (walk_pair_tiled with SplitLoads) instead of one
// load from an address chosen per lane (see the file comment).
template <bool Staged, bool Windowed, typename T, typename Op, bool Redo = false,
          bool SharedRows = false, bool Prune = false, bool Binned = false, bool SplitRows = false>
__global__ void __launch_bounds__(PcfTileGeometry::kMaxThreads)
    pcf_tiled_kernel(const TiledBlockArgs<T> args, const SimplePoint<T, T>* __restrict__ rowPoints,
                     const Op op) {
  constexpr std::uint32_t C = PcfTileGeometry::kTileCols;
  using Point = SimplePoint<T, T>;
  using AP = detail::AlignedPoint<T>;
  static_assert(!(Redo && Staged), "the redo launch reads its tiles from global memory");
  static_assert(!SharedRows || (Staged && SymmetricIntegrand<Op>::value),
                "shared rows: staged tiles and a symmetric integrand (walk_pair_shared)");
  static_assert(!Prune || (MonotoneFold<Op>::value && !Redo), "pruned walks: MonotoneFold");
  static_assert(!Binned || Prune, "bin bounds come with pruned walks");

  if constexpr (Redo) {
    if (*args.redo == 0) return;
  }
  const detail::BlockChunk chunk = detail::chunk_of_block(args);
  // A chunk wholly above the sorted triangle has nothing to do (uniform for
  // the thread block: returning before the barrier is safe).
  if (chunk.above_triangle(args.selection)) return;
  const auto [q, qEnd, rBegin, rEnd, cBegin, skipDiag] = chunk;

  const Point* tiles;
  extern __shared__ __align__(16) unsigned char stagingRaw[];
  // Binned: the rows of the chunk with a pair left to walk in the tiles
  // (none: the thread block has nothing to do, uniformly).
  std::uint32_t rowCount = 0;
  if constexpr (Binned) {
    rowCount = detail::binned_rows(args, q, qEnd, rBegin, rEnd, stagingRaw + args.rowListOffset);
    if (rowCount == 0) return;
  }
  const std::uint16_t* rowList =
      reinterpret_cast<const std::uint16_t*>(stagingRaw + args.rowListOffset + 16);
  if constexpr (Staged) {
    tiles = detail::stage_tile(args, q, qEnd, stagingRaw);
  } else {
    tiles = args.tiles + args.tileOffsets[q];
  }

  // A row group: warpTiles * C threads, one per column of the chunk's
  // tiles, walking the same rows.
  const std::uint32_t groupSize = args.warpTiles * C;
  const std::uint32_t lane = threadIdx.x % groupSize;
  const std::uint32_t sub = lane / C;  // the lane's tile: q + sub
  const std::uint32_t c = cBegin + lane;
  const bool padding = q + sub >= qEnd || c >= args.nCols;
  // A padding slot has nothing to compute (after the only barrier); with
  // shared rows it still helps its warp stage them.
  if (!SharedRows && padding) return;
  const std::uint32_t ng = padding ? 0u : args.colLength[c];
  const std::uint32_t j = padding ? 0u : args.colOrder[c];
  const bool colFast = !padding && args.colFast[c] != 0;
  const Point* g = tiles + (args.tileOffsets[q + sub] - args.tileOffsets[q]) + lane % C;
  const std::uint32_t groups = blockDim.x / groupSize;
  // SharedRows (warpTiles = 2: a warp is a row group): the warp's buffer.
  AP* rowBuffer = reinterpret_cast<AP*>(stagingRaw + args.rowBufferOffset) +
                  (threadIdx.x / 32) * args.rowBufferPoints;
  // Binned: the k-th row of the list, else the chunk's rows in order.
#pragma unroll 1
  for (std::uint32_t k = (Binned ? 0u : rBegin) + threadIdx.x / groupSize;
       k < (Binned ? rowCount : rEnd); k += groups) {
    const std::uint32_t r = Binned ? rBegin + rowList[k] : k;
    const std::uint32_t i = args.rowOrder[r];
    const std::uint32_t fBegin = args.rowOffsets[r];
    const std::uint32_t nf = args.rowOffsets[r + 1] - fBegin - 1;
    if constexpr (SharedRows) {
      // The warp copies its row (nf + 1 points with the sentinel) into its
      // buffer, once the last row's walks have finished reading it.
      __syncwarp();
      for (std::uint32_t k = threadIdx.x % 32; k <= nf; k += 32) {
        rowBuffer[k] = detail::load_point(rowPoints + fBegin + k);
      }
      __syncwarp();
      if (padding) continue;
    }
    if (!detail::pair_selected(args, skipDiag, r, c, i, j)) continue;
    if constexpr (Binned) {
      // Ruled out by its bin bound (pcf_bin_bound_kernel wrote +inf).
      const std::uint16_t bits = args.binMask[std::uint64_t(r) * args.binMaskStride + q + sub];
      if (((bits >> (lane % C)) & 1u) == 0) continue;
    }
    if constexpr (Redo) {
      if (isfinite(*detail::pair_output(args, i, j))) continue;
    }
    const bool fast = colFast && args.rowFast[r] != 0;
    T bound = T(0);
    if constexpr (Prune) {
      // The bounds of the pair's place in the block (pair_output's).
      const bool swap = args.selection == PairSelection::SortedTriangle && i < j;
      bound = detail::pair_bound(args.bounds, swap ? j : i, swap ? i : j);
    }
    auto walk = [&](const auto& o) -> T {
      using O = std::decay_t<decltype(o)>;
      if constexpr (SharedRows && !SplitRows) {
        const AP* gs = reinterpret_cast<const AP*>(g);
        if constexpr (!Windowed && UncheckedSumFold<O>::value) {
          if (fast) {
            return detail::walk_pair_shared<C, false, true, Prune>(rowBuffer, gs, nf + ng, args.a,
                                                                   args.b, o, bound);
          }
        }
        return detail::walk_pair_shared<C, Windowed, false, Prune>(rowBuffer, gs, nf + ng,
                                                                    args.a, args.b, o, bound);
      } else {
        // The row from global memory, or (SplitRows) from the warp's buffer
        // with split loads.
        const Point* f =
            SplitRows ? reinterpret_cast<const Point*>(rowBuffer) : rowPoints + fBegin;
        if constexpr (!Windowed && UncheckedSumFold<O>::value) {
          if (fast) {
            return detail::walk_pair_tiled<C, false, true, Staged, Prune, SplitRows>(
                f, g, nf + ng, args.a, args.b, o, bound);
          }
        }
        return detail::walk_pair_tiled<C, Windowed, false, Staged, Prune, SplitRows>(
            f, g, nf + ng, args.a, args.b, o, bound);
      }
    };
    const T value = walk(op);
    detail::report_redo<Op>(args, !isfinite(value));
    detail::store_pair(args, i, j, value);
  }
}

// ---- pcf_ring_kernel: the row functions in shared memory as well ----
//
// In pcf_tiled_kernel every step is two predicated loads: the row point
// from global memory (through L1) and the column point from the staged
// tile. For float64 points (16 bytes) the L1/shared-memory pipeline is the
// limit, and the row loads take more than half of it. Here each group of
// kTileCols threads streams its row function through a ring of
// kRingPoints points in shared memory, so a step is one load, from the ring
// or from the tile, whichever side the walk consumes, with one address
// chosen per lane.
//
// The ring holds each point once (ring[p % kRingPoints]). Lanes of a
// shared-memory phase that read row points in the banks of another lane's
// tile column conflict: ncu counts half of the shared wavefronts as such
// (pdist L1 f64, n = 20000, m = 512, one H200; the kernel is then bound by
// the L1/shared pipeline). Holding each point once per bank group avoids
// the conflicts but leaves room for far fewer warps next to large tiles,
// and measured slower in that case (kernel: 8 copies 0.42 s, 4 copies
// 0.25 s, 2 copies 0.23 s, 1 copy 0.22 s; pcf_tiled_kernel 0.26 s).
//
// The two groups of a warp walk their rows together, kRefillSteps steps at
// a time. Before each run of steps a group writes into its ring the points
// up to kRingPoints beyond the smallest index any of its lanes may still
// load (points below it are no longer needed), at most kTileCols new ones:
// each lane has loaded one of them into registers during the previous run,
// so the ring is refilled without waiting for global memory. A run in
// which every lane of the warp has steps left and its next kRefillSteps
// row points in the ring needs no test per step; otherwise each step
// checks, and a lane that has run ahead of its ring reads the row point
// from global memory (rare: the lanes of a group walk one row against
// columns of nearly equal length).
//
// The walk holds the point it kept at the last step and the one it just
// loaded, rather than f's and g's: a step then moves one point instead of
// two. Tied times may so be consumed in another order than in the other
// walks, which only reorders rectangles of width 0, which every fold
// ignores; the integrand must be symmetric (SymmetricIntegrand). The
// arithmetic is fold_rectangle's: the results are bitwise those of
// pcf_tiled_kernel and of the CPU walk.
struct PcfRingGeometry {
  static constexpr std::uint32_t kRingPoints = 64;   // a power of two
  static constexpr std::uint32_t kRefillSteps = 16;
  static constexpr std::uint32_t kMinGroups = 8;     // fewer fit: pcf_tiled_kernel
  static constexpr std::uint32_t kMaxGroups = 48;     // 768 threads: up to 80 registers
  static constexpr std::uint32_t kMaxThreads = kMaxGroups * PcfTileGeometry::kTileCols;
  template <typename T>
  static constexpr std::uint32_t ring_bytes() {
    return kRingPoints * sizeof(SimplePoint<T, T>);
  }

  // Groups per thread block next to a staged tile of tileBytes (an even
  // number: whole warps), 0 when fewer than kMinGroups fit.
  static std::uint32_t groups_for(std::uint64_t tileBytes, std::uint64_t sharedPerBlock,
                                  std::uint64_t ringBytes) {
    if (tileBytes >= sharedPerBlock) return 0;
    const std::uint64_t fit = (sharedPerBlock - tileBytes) / ringBytes;
    const std::uint32_t g = static_cast<std::uint32_t>(std::min<std::uint64_t>(fit, kMaxGroups)) & ~1u;
    return g >= kMinGroups ? g : 0;
  }
};

namespace detail {

// Minimum (Max = false) or maximum of x over aligned sets of Lanes lanes:
// 16, a group (the half of the warp), or 32, the warp. The whole warp calls
// it.
template <bool Max, std::uint32_t Lanes>
__device__ __forceinline__ std::uint32_t lanes_reduce(std::uint32_t x) {
  static_assert(Lanes == 16 || Lanes == 32);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  auto reduce = [](std::uint32_t v) {
    if constexpr (Max) return __reduce_max_sync(0xffffffffu, v);
    else return __reduce_min_sync(0xffffffffu, v);
  };
  if constexpr (Lanes == 32) {
    return reduce(x);
  } else {
    const std::uint32_t neutral = Max ? 0u : ~0u;
    const bool upper = (threadIdx.x & 16u) != 0;
    const std::uint32_t lower = reduce(upper ? neutral : x);
    const std::uint32_t higher = reduce(upper ? x : neutral);
    return upper ? higher : lower;
  }
#else
#pragma unroll
  for (std::uint32_t off = Lanes / 2; off > 0; off /= 2) {
    const std::uint32_t y = __shfl_xor_sync(0xffffffffu, x, off);
    x = Max ? max(x, y) : min(x, y);
  }
  return x;
#endif
}

// The walk of one pair with the row function f (nf + 1 shifted points in
// global memory) streamed through the group's ring; g: the lane's column in
// the staged tile. The whole warp calls it together. total: this lane's
// steps (0: no pair; the lane only helps with its group's ring); steps: the
// largest total of the warp; plain: the smallest (runs of steps that end
// before it have every lane of the warp busy throughout).
template <bool Windowed, bool Unchecked, typename T, typename Op>
__device__ __forceinline__ T ring_walk(const SimplePoint<T, T>* __restrict__ f, std::uint32_t nf,
                                       const AlignedPoint<T>* g, AlignedPoint<T>* ring,
                                       std::uint32_t lane, std::uint32_t total,
                                       std::uint32_t steps, std::uint32_t plain, T a, T b,
                                       const Op& op) {
  static_assert(SymmetricIntegrand<Op>::value);
  constexpr std::uint32_t C = PcfTileGeometry::kTileCols;
  constexpr std::uint32_t R = PcfRingGeometry::kRingPoints;
  constexpr std::uint32_t K = PcfRingGeometry::kRefillSteps;
  static_assert(R % C == 0 && K <= C, "refills write at most one point per lane");
  using AP = AlignedPoint<T>;
  // f as an opaque 64-bit pointer: the rare read beyond the ring then costs
  // one multiply-add for its address, not a 64-bit index computation per
  // step (the compiler would otherwise fold f's offset in).
  asm("mov.b64 %0, %0;" : "+l"(f));
  // The ring holds the points [top - R, top); `staged` point top + lane,
  // loaded during the last run of steps.
  std::uint32_t top = 0;
  AP staged{};
  auto stage = [&] {
    if (top + lane <= nf) staged = load_point(f + top + lane);
  };
  if (lanes_reduce<false, C>(total > 0 ? 0u : 1u) == 0) {  // the group has a pair: its first R points
    top = min(R, nf + 1);
    AP first[R / C];
#pragma unroll
    for (std::uint32_t k = 0; k < R / C; ++k) {
      if (lane + k * C < top) first[k] = load_point(f + lane + k * C);
    }
    stage();
#pragma unroll
    for (std::uint32_t k = 0; k < R / C; ++k) {
      if (lane + k * C < top) ring[lane + k * C] = first[k];
    }
  }
  __syncwarp();

  // kept: the point not consumed by the last step; next: the point it
  // loaded, from f when nextIsF.
  AP kept = ring[0];
  AP next = g[0];
  bool nextIsF = false;
  g += C;
  T t = mpcf::detail::min_value(kept.t, next.t);
  auto acc = op.init();
  std::uint32_t i = 1;  // f's next point
  // One step. Checked: f's next point may lie beyond the ring.
  auto walk_step = [&](auto checked) {
    const bool takeNext = next.t <= kept.t;
    const T tn = takeNext ? next.t : kept.t;
    acc = fold_rectangle<Windowed, Unchecked>(acc, t, tn, kept.v, next.v, a, b, op);
    t = tn;
    const bool fromF = takeNext == nextIsF;  // the side consumed
    if (!takeNext) kept = next;
    if (decltype(checked)::value && fromF && i >= top) {
      next = load_point(f + i);  // beyond the ring
    } else {
      next = *(fromF ? ring + i % R : g);
    }
    if (fromF) {
      ++i;
    } else {
      g += C;
    }
    nextIsF = fromF;
  };
  for (std::uint32_t s0 = 0; s0 < steps; s0 += K) {
    if (s0 > 0) {
      // Refill: at most C new points (the staged ones), none beyond need + R.
      const std::uint32_t need = lanes_reduce<false, C>(s0 < total ? i : ~0u);
      const std::uint32_t newTop = need == ~0u ? top : min(min(need + R, nf + 1), top + C);
      __syncwarp();  // the slots rewritten hold points below `need`: read by no lane any more
      if (top + lane < newTop) ring[(top + lane) % R] = staged;
      if (newTop > top) {
        top = newTop;
        stage();
      }
      __syncwarp();
    }
    // The short path when every lane of the warp has K steps left and its
    // next K points of f in the ring.
    const std::uint32_t far = lanes_reduce<true, C>(s0 < total ? i : 0u);
    if (s0 + K <= plain && __all_sync(0xffffffffu, top == nf + 1 || far + K <= top)) {
#pragma unroll
      for (std::uint32_t k = 0; k < K; ++k) walk_step(std::false_type{});
    } else {
#pragma unroll
      for (std::uint32_t k = 0; k < K; ++k) {
        if (s0 + k < total) walk_step(std::true_type{});
      }
    }
  }
  return finish_walk(acc, t, kept.v, next.v, a, b, op);
}

}  // namespace detail

// See the comment of PcfRingGeometry. Launch as pcf_tiled_kernel<true, ...>,
// with blockDim.x = kTileCols * groups (groups even, from
// PcfRingGeometry::groups_for) and dynamic shared memory = the rings
// (groups * ring_bytes<T>()) followed by the launch's largest tile.
template <bool Windowed, typename T, typename Op>
__global__ void __launch_bounds__(PcfRingGeometry::kMaxThreads, 1)
    pcf_ring_kernel(const TiledBlockArgs<T> args, const SimplePoint<T, T>* __restrict__ rowPoints,
                    const Op op) {
  constexpr std::uint32_t C = PcfTileGeometry::kTileCols;
  constexpr std::uint32_t R = PcfRingGeometry::kRingPoints;
  using AP = detail::AlignedPoint<T>;

  const detail::BlockChunk chunk = detail::chunk_of_block(args);
  if (chunk.above_triangle(args.selection)) return;
  const auto [q, qEnd, rBegin, rEnd, cBegin, skipDiag] = chunk;  // qEnd = q + 1 (warpTiles 1)

  extern __shared__ __align__(16) unsigned char ringShared[];
  const std::uint32_t groups = blockDim.x / C;
  const AP* tile = reinterpret_cast<const AP*>(
      detail::stage_tile(args, q, qEnd, ringShared + groups * PcfRingGeometry::ring_bytes<T>()));

  const std::uint32_t group = threadIdx.x / C;
  const std::uint32_t lane = threadIdx.x % C;
  AP* ring = reinterpret_cast<AP*>(ringShared) + group * R;
  // Padding lanes (past the last column) compute nothing but take part in
  // their group's refills.
  const std::uint32_t c = cBegin + lane;
  const bool padding = c >= args.nCols;
  const std::uint32_t ng = padding ? 0u : args.colLength[c];
  const std::uint32_t j = padding ? 0u : args.colOrder[c];
  const bool colFast = !padding && args.colFast[c] != 0;
  // The two groups of a warp take rows r0 and r0 + 1 together.
#pragma unroll 1
  for (std::uint32_t r0 = rBegin + (group & ~1u); r0 < rEnd; r0 += groups) {
    const std::uint32_t r = r0 + (group & 1u);
    const bool rowValid = r < rEnd;
    const std::uint32_t i = rowValid ? args.rowOrder[r] : 0u;
    const bool kept = rowValid && !padding && detail::pair_selected(args, skipDiag, r, c, i, j);
    const std::uint32_t fBegin = rowValid ? args.rowOffsets[r] : 0u;
    const std::uint32_t nf = rowValid ? args.rowOffsets[r + 1] - fBegin - 1 : 0u;
    const std::uint32_t total = kept ? nf + ng : 0u;
    const std::uint32_t steps = detail::lanes_reduce<true, 32>(total);
    if (steps == 0) continue;  // the same for the whole warp
    const std::uint32_t plain = detail::lanes_reduce<false, 32>(total);
    const SimplePoint<T, T>* f = rowPoints + fBegin;
    // The plain fold when every pair of the warp is within its bounds
    // (pairs within them get the same bits either way).
    const bool fast =
        __all_sync(0xffffffffu, !kept || (colFast && args.rowFast[rowValid ? r : 0] != 0));
    auto walk = [&](const auto& o) -> T {
      using O = std::decay_t<decltype(o)>;
      if constexpr (!Windowed && UncheckedSumFold<O>::value) {
        if (fast) {
          return detail::ring_walk<false, true>(f, nf, tile + lane, ring, lane, total, steps,
                                                plain, args.a, args.b, o);
        }
        return detail::ring_walk<false, false>(f, nf, tile + lane, ring, lane, total, steps, plain,
                                               args.a, args.b, o);
      } else {
        return detail::ring_walk<Windowed, false>(f, nf, tile + lane, ring, lane, total, steps,
                                                  plain, args.a, args.b, o);
      }
    };
    const T value = walk(op);
    detail::report_redo<Op>(args, kept && !isfinite(value));
    if (kept) detail::store_pair(args, i, j, value);
  }
}

}  // namespace mpcf::cuda
