// The kernels of the bin lower bounds (bin_bounds.hpp):
//
//  * pcf_bins_kernel: one warp per sorted function of a block (rows, then
//    column slots, as pcf_layout_kernel), its S bin integrals in double from
//    the uploaded points, stored as float, bin-major, and their norm
//    N = sum_s |F_s| rounded up (+inf when anything is not finite);
//  * pcf_bin_bound_kernel: per thread block 128 sorted rows x 128 column
//    slots (8 tiles), per thread 8 x 8 pairs (rows ty + 16 a, slots
//    tx + 16 b: thread tx is lane tx of each of the 8 tiles), the bins
//    staged kBinChunk at a time in shared memory; two float additions per
//    bin and pair (the difference, then its absolute value added). A
//    selected pair whose test passes gets +inf in the output (it enters no
//    list) and is not walked; the others set their bit of the (row, tile)
//    mask that the pruned walk kernel reads (pcf_tiled_kernel<..., Binned>).
//    The sums of the first bins are lower bounds too: after 1, 2, 4, ...
//    chunks a thread block whose pairs are all ruled out but those of a few
//    threads stops and leaves those to the walks (data with structure:
//    most thread blocks after the first chunk).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "mpcf/cuda/bin_bounds.hpp"
#include "mpcf/cuda/cuda_pcf_kernel.cuh"

namespace mpcf::cuda {

struct BinArgs {
  BinSpec spec;
  float* rowBins;         // bin s of sorted row r at rowBins[s * rowStride + r]
  float* colBins;         // bin s of column slot c at colBins[s * colStride + c]
  float* rowNorm;         // N per sorted row
  float* colNorm;         // N per column slot
  std::uint32_t rowStride;  // multiples of kBinTile
  std::uint32_t colStride;
  std::uint16_t* mask;    // (sorted row r, tile q) at mask[r * maskStride + q]: bit c % 16
                          // set when the pair must be walked
  std::uint32_t maskStride;
};

struct BinGeometry {
  static constexpr std::uint32_t kTile = 128;     // rows and column slots per bound block
  static constexpr std::uint32_t kThreads = 256;  // 16 x 16, 8 x 8 pairs each
  // A thread block stops adding bins once at most this many of its threads
  // have pairs that are not ruled out.
  static constexpr std::uint32_t kFewOpen = 64;
};

namespace detail {

// The integral of f (m points, unshifted) over [x, y), in double: f is 0
// before its first breakpoint and keeps its last value after the last.
template <typename T>
__device__ double bin_integral(const SimplePoint<T, T>* p, std::uint32_t m, double x, double y) {
  // k: the last breakpoint at or before x (-1: none).
  std::uint32_t lo = 0, hi = m;  // first point with t > x in [lo, hi]
  while (lo < hi) {
    const std::uint32_t mid = (lo + hi) / 2;
    if (static_cast<double>(p[mid].t) <= x) lo = mid + 1;
    else hi = mid;
  }
  std::int64_t k = static_cast<std::int64_t>(lo) - 1;
  double sum = 0;
  double at = x;
  for (;;) {
    const double next = k + 1 < static_cast<std::int64_t>(m)
                            ? static_cast<double>(p[k + 1].t)
                            : std::numeric_limits<double>::infinity();
    const double end = next < y ? next : y;
    const double v = k >= 0 ? static_cast<double>(p[k].v) : 0.0;
    if (end > at) sum += (end - at) * v;
    if (!(next < y)) break;
    at = next;
    ++k;
  }
  return sum;
}

// One warp: the bins and norm of the function p (m points) into
// bins[s * stride] and *norm.
template <typename T>
__device__ void function_bins(const BinSpec& spec, const SimplePoint<T, T>* p, std::uint32_t m,
                              float* bins, std::uint32_t stride, float* norm) {
  const std::uint32_t lane = threadIdx.x % 32;
  double abs = 0;
  bool finite = true;
  for (std::uint32_t s = lane; s < spec.bins; s += 32) {
    const double x = spec.lo + s * spec.width;
    const double y = spec.lo + (s + 1) * spec.width;
    const double F = m > 0 ? bin_integral(p, m, x, y) : 0.0;
    const float f = static_cast<float>(F);
    finite = finite && isfinite(f);
    abs += fmax(fabs(static_cast<double>(f)), fabs(F));  // >= sum |F_s|, and of the floats
    bins[std::uint64_t(s) * stride] = f;
  }
  for (int o = 16; o > 0; o /= 2) abs += __shfl_xor_sync(0xffffffffu, abs, o);
  finite = __all_sync(0xffffffffu, finite);
  if (lane == 0) {
    const float n = __double2float_ru(abs);
    *norm = finite && isfinite(n) ? n : std::numeric_limits<float>::infinity();
  }
}

}  // namespace detail

// One warp per sorted function of the block (the items of
// pcf_layout_kernel: rows, then column slots; a padding slot is the zero
// function).
template <typename T>
__global__ void __launch_bounds__(PcfTileGeometry::kLayoutThreads)
    pcf_bins_kernel(LayoutArgs la, const SimplePoint<T, T>* __restrict__ src, BinArgs b) {
  const std::uint32_t warpsPerBlock = blockDim.x / 32;
  const std::uint32_t item = blockIdx.x * warpsPerBlock + threadIdx.x / 32;
  std::uint32_t from, len;
  if (item < la.nRows) {
    detail::row_source(la, item, from, len);
    detail::function_bins(b.spec, src + from, len, b.rowBins + item, b.rowStride,
                          b.rowNorm + item);
    return;
  }
  const std::uint32_t slot = item - la.nRows;
  if (slot >= la.nColSlots) return;
  detail::slot_source(la, slot, from, len);
  detail::function_bins(b.spec, src + from, len, b.colBins + slot, b.colStride,
                        b.colNorm + slot);
}

// Grid: (ceil(column slots / kTile), ceil(nRows / kTile)), kThreads
// threads. Reads args' orders, selection, bounds and output; writes +inf
// for the selected pairs it rules out and the mask of every sorted row and
// tile it covers.
template <typename T>
__global__ void __launch_bounds__(BinGeometry::kThreads)
    pcf_bin_bound_kernel(const TiledBlockArgs<T> args, const BinArgs b, std::uint32_t colSlots) {
  constexpr std::uint32_t K = BinGeometry::kTile;
  constexpr std::uint32_t P = K / 16;  // pairs per thread and side
  __shared__ __align__(16) float rowS[kBinChunk][K];
  __shared__ __align__(16) float colS[kBinChunk][K];
  const std::uint32_t r0 = blockIdx.y * K;
  const std::uint32_t c0 = blockIdx.x * K;
  const bool skipDiag = args.skip == TriangleSkipMode::LowerTriangleSkipDiag;
  const std::uint32_t rLast = min(r0 + K, args.nRows) - 1;
  // Wholly above the sorted triangle (uniform for the thread block).
  if (args.selection == PairSelection::SortedTriangle &&
      (skipDiag ? rLast <= c0 : rLast < c0)) {
    // Its masks say so (no pair to walk).
    for (std::uint32_t e = threadIdx.x; e < K * (K / 16); e += blockDim.x) {
      const std::uint32_t r = r0 + e / (K / 16);
      const std::uint32_t slot = c0 + (e % (K / 16)) * 16;
      if (r < args.nRows && slot < colSlots) b.mask[std::uint64_t(r) * b.maskStride + slot / 16] = 0;
    }
    return;
  }
  // The rows' and slots' indices, norms and bounds (pair_bound's reads:
  // `own` for a pair as it is, `other` for a swapped one of the sorted
  // triangle), once for the thread block.
  __shared__ std::uint32_t rowIdx[K], colIdx[K];
  __shared__ float rowNormS[K], colNormS[K];
  __shared__ T rowOwn[K], rowOther[K], colOwn[K], colOther[K];
  const bool sorted = args.selection == PairSelection::SortedTriangle;
  const PairBounds<T>& pb = args.bounds;
  const T none = -std::numeric_limits<T>::infinity();
  if (threadIdx.x < K) {
    const std::uint32_t t = threadIdx.x, r = r0 + t;
    if (r < args.nRows) {
      const std::uint32_t i = args.rowOrder[r];
      rowIdx[t] = i;
      rowNormS[t] = b.rowNorm[r];
      rowOwn[t] = detail::relaxed_load(pb.rows + std::uint64_t(i) * pb.rowStride);
      rowOther[t] = sorted && pb.cols ? detail::relaxed_load(pb.cols + std::uint64_t(i) * pb.colStride)
                                      : none;
    }
  } else if (threadIdx.x < 2 * K) {
    const std::uint32_t t = threadIdx.x - K, slot = c0 + t;
    if (slot < args.nCols) {
      const std::uint32_t j = args.colOrder[slot];
      colIdx[t] = j;
      colNormS[t] = b.colNorm[slot];
      colOwn[t] = pb.cols ? detail::relaxed_load(pb.cols + std::uint64_t(j) * pb.colStride) : none;
      colOther[t] = sorted ? detail::relaxed_load(pb.rows + std::uint64_t(j) * pb.rowStride) : none;
    }
  }
  const std::uint32_t tx = threadIdx.x % 16;
  const std::uint32_t ty = threadIdx.x / 16;
  // Pair (ty + 16 a, tx + 16 c) of the thread block with bin sum `sum` (of
  // all bins, or of the first ones: a lower bound too): 0 not computed, 1
  // ruled out, 2 to walk. pair_bound's bound (the staged reads).
  auto verdict = [&](std::uint32_t a, std::uint32_t c, float sum) -> int {
    const std::uint32_t rr = ty + 16 * a, cc = tx + 16 * c;
    const std::uint32_t r = r0 + rr, slot = c0 + cc;
    if (r >= args.nRows || slot >= args.nCols) return 0;
    const std::uint32_t i = rowIdx[rr], j = colIdx[cc];
    if (!detail::pair_selected(args, skipDiag, r, slot, i, j)) return 0;
    const bool swap = sorted && i < j;
    const T bound = swap ? mpcf::pair_bound_of(colOther[cc], rowOther[rr])
                         : mpcf::pair_bound_of(rowOwn[rr], colOwn[cc]);
    const double low =
        static_cast<double>(sum) * b.spec.c1 -
        b.spec.c2 * (static_cast<double>(rowNormS[rr]) + static_cast<double>(colNormS[cc])) -
        b.spec.c3;
    return low > static_cast<double>(bound) ? 1 : 2;
  };
  float acc[P][P];
#pragma unroll
  for (std::uint32_t a = 0; a < P; ++a) {
#pragma unroll
    for (std::uint32_t c = 0; c < P; ++c) acc[a][c] = 0.0f;
  }
  for (std::uint32_t s0 = 0; s0 < b.spec.bins; s0 += kBinChunk) {
    // kBinChunk x K floats per side, as float4: 4 per thread and side.
#pragma unroll
    for (std::uint32_t k = 0; k < kBinChunk * K / 4 / BinGeometry::kThreads; ++k) {
      const std::uint32_t e = threadIdx.x + k * BinGeometry::kThreads;
      const std::uint32_t s = e / (K / 4);
      const std::uint32_t x = (e % (K / 4)) * 4;
      reinterpret_cast<float4*>(&rowS[s][x])[0] = reinterpret_cast<const float4*>(
          b.rowBins + std::uint64_t(s0 + s) * b.rowStride + r0 + x)[0];
      reinterpret_cast<float4*>(&colS[s][x])[0] = reinterpret_cast<const float4*>(
          b.colBins + std::uint64_t(s0 + s) * b.colStride + c0 + x)[0];
    }
    __syncthreads();
#pragma unroll 4
    for (std::uint32_t s = 0; s < kBinChunk; ++s) {
      float rv[P], cv[P];
#pragma unroll
      for (std::uint32_t a = 0; a < P; ++a) rv[a] = rowS[s][ty + 16 * a];
#pragma unroll
      for (std::uint32_t c = 0; c < P; ++c) cv[c] = colS[s][tx + 16 * c];
#pragma unroll
      for (std::uint32_t a = 0; a < P; ++a) {
#pragma unroll
        for (std::uint32_t c = 0; c < P; ++c) acc[a][c] += fabsf(rv[a] - cv[c]);
      }
    }
    // After 1, 2, 4, ... chunks: when the sums so far already rule out the
    // pairs of all but a few threads (BinGeometry::kFewOpen), the thread
    // block stops; the pairs still open are walked (a pair may always be
    // walked: the bins only spare walks). Data with structure: most thread
    // blocks stop after the first chunk, with the pairs of their clusters
    // open.
    const std::uint32_t chunk = s0 / kBinChunk;
    if (s0 + kBinChunk < b.spec.bins && ((chunk + 1) & chunk) == 0) {
      bool open = false;
#pragma unroll
      for (std::uint32_t a = 0; a < P; ++a) {
#pragma unroll
        for (std::uint32_t c = 0; c < P; ++c) open = open || verdict(a, c, acc[a][c]) == 2;
      }
      if (__syncthreads_count(open) <= BinGeometry::kFewOpen) break;
    }
    __syncthreads();
  }
  // The test of each pair; the mask of (row, tile) from the 16 threads of a
  // half-warp (one tile, one row).
  const std::uint32_t lane = threadIdx.x % 32;
#pragma unroll
  for (std::uint32_t a = 0; a < P; ++a) {
    const std::uint32_t r = r0 + ty + 16 * a;
#pragma unroll
    for (std::uint32_t c = 0; c < P; ++c) {
      const std::uint32_t slot = c0 + tx + 16 * c;
      const int v = verdict(a, c, acc[a][c]);
      if (v == 1) {
        detail::store_pair(args, rowIdx[ty + 16 * a], colIdx[tx + 16 * c],
                           std::numeric_limits<T>::infinity());
      }
      const std::uint32_t bits = __ballot_sync(0xffffffffu, v == 2);
      if (r < args.nRows && tx == 0 && slot < colSlots) {
        b.mask[std::uint64_t(r) * b.maskStride + slot / 16] =
            static_cast<std::uint16_t>(bits >> (lane & 16u));
      }
    }
  }
}

}  // namespace mpcf::cuda
