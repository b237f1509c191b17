// Kernels that fold a computed block (row-major values in device memory)
// into device-resident results, so only O(n k) or O(n r) numbers travel,
// once, at the end:
//
//  * mirror_diagonal_kernel: completes a square block on the diagonal of the
//    symmetric plane (the block stream hands out true rectangles);
//  * knn_rows_kernel / knn_cols_kernel + knn_cols_merge_kernel: every
//    block row's and (symmetric plane) every block column's kept values
//    merged into device-resident lists of the K smallest (distance, index),
//    ascending, in the total order of KnnConsumer;
//  * matvec_rows_kernel / matvec_cols_kernel: the exact-sum partials
//    (exact_sum.hpp) of y_i = sum_j K_ij V_j over the block's columns for
//    every block row and (symmetric plane) of y_j = sum_i K_ij V_i for every
//    block column, added into device-resident sums.
//
// Every pair test is core's pair_kept on the global i - j, i.e.
// r - c + (rows.first - cols.first).
#pragma once

#include <cuda_runtime.h>

#include <cub/warp/warp_merge_sort.cuh>
#include <cub/warp/warp_reduce.cuh>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/exact_sum.hpp"
#include "mpcf/core/kernel_matvec.hpp"

namespace mpcf::cuda {

// ---- the block stream ----

// block: n x n row-major, the diagonal block of the symmetric plane; writes
// (r, c) = (c, r) for c > r (the diagonal keeps its value).
template <typename T>
__global__ void mirror_diagonal_kernel(T* __restrict__ block, std::uint32_t n) {
  const std::uint64_t total = std::uint64_t(n) * n;
  for (std::uint64_t e = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint32_t r = static_cast<std::uint32_t>(e / n), c = static_cast<std::uint32_t>(e % n);
    if (c > r) block[e] = block[std::uint64_t(c) * n + r];
  }
}

// ---- k nearest neighbours ----

// One entry of a downloaded list: a value and the block-local index of the
// other function (kEmptyIndex: no entry).
template <typename T>
struct KnnEntry {
  T value;
  std::uint32_t index;
};
constexpr std::uint32_t kEmptyIndex = 0xffffffffu;

namespace detail {

// The key of a value: its bits in an unsigned order that matches the
// numeric order, every NaN equal and after +inf (KnnConsumer's order), and
// all-ones left for "no entry". -0 comes before +0 (KnnConsumer has them
// equal): the lists hold distances, which are never -0.
template <typename T>
using KnnKey = std::conditional_t<sizeof(T) == 4, std::uint32_t, unsigned long long>;

__device__ __forceinline__ std::uint32_t ordered_key(float v) {
  if (v != v) return 0xfffffffeu;
  std::uint32_t u = __float_as_uint(v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ unsigned long long ordered_key(double v) {
  if (v != v) return 0xfffffffffffffffeull;
  const auto u = static_cast<unsigned long long>(__double_as_longlong(v));
  return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
template <typename T>
__device__ __forceinline__ T value_of_key(KnnKey<T> key) {
  if constexpr (sizeof(T) == 4) {
    const std::uint32_t u = (key & 0x80000000u) ? (key & 0x7fffffffu) : ~key;
    return __uint_as_float(u);
  } else {
    const unsigned long long u =
        (key & 0x8000000000000000ull) ? (key & 0x7fffffffffffffffull) : ~key;
    return __longlong_as_double(static_cast<long long>(u));
  }
}
template <typename T>
constexpr KnnKey<T> kEmptyKey = ~KnnKey<T>(0);

template <typename Key>
__device__ __forceinline__ bool key_less(Key ka, std::uint32_t ia, Key kb, std::uint32_t ib) {
  return ka < kb || (ka == kb && ia < ib);
}

// The K (<= 32) smallest (key, index) pairs offered so far, spread over a
// warp: lane l < K holds the l-th smallest (ascending; empty entries, index
// kEmptyIndex, last). Every lane of the warp calls every member.
//
// offer() takes one candidate per lane (or none): a ballot keeps those
// below the current K-th entry, and each of those is inserted in turn at the
// position a second ballot counts, the entries after it moving up one lane.
// After the first few rounds almost no candidate passes the K-th entry, so
// a round costs a load, a compare and a ballot per lane.
//
// The kernels take the list type as a parameter (List): WarpTopK, which
// the library runs, or WarpTopKMergeSort below (CUB's WarpMergeSort for the
// rounds in which many candidates pass), which gives the same lists and is
// slower: one H200, a 4096 x 16384 block, k = 10, rows into empty lists
// 0.258 ms against 0.308 (sorting past 8 passing candidates) and 0.458
// (sorting every round with one), the column kernels 0.598 against 0.666
// and 1.72 ms (float64: 0.673, 1.52, 5.00; all with one tile per barrier
// pair, before knn_cols_kernel took kKnnColumnTiles: 0.41 ms and float64
// 0.57 ms with WarpTopK since, 2x H200). A sort of 64 entries costs more
// than inserting the few candidates that pass after the first rounds (bench_gpu
// ^cub, tests/benchmarks/RESULTS.md "CUB against the hand-written
// reductions"). A list type names the shared memory a warp's list needs
// (Storage) and takes it in init().
template <typename T>
struct WarpTopK {
  using Key = KnnKey<T>;
  struct Storage {};  // none
  Key key;
  std::uint32_t idx;
  std::uint32_t lane;
  int K;

  __device__ __forceinline__ void init(Storage*) {}
  __device__ __forceinline__ void clear(int k) {
    K = k;
    lane = threadIdx.x % 32;
    key = kEmptyKey<T>;
    idx = kEmptyIndex;
  }
  // The lanes whose candidate is below the current K-th entry.
  __device__ __forceinline__ unsigned passing(Key k, std::uint32_t i, bool valid) const {
    const Key lastK = __shfl_sync(0xffffffffu, key, K - 1);
    const std::uint32_t lastI = __shfl_sync(0xffffffffu, idx, K - 1);
    return __ballot_sync(0xffffffffu, valid && key_less(k, i, lastK, lastI));
  }
  __device__ __forceinline__ void offer(Key k, std::uint32_t i, bool valid) {
    insert(passing(k, i, valid), k, i);
  }
  // Inserts the candidates of the lanes in `want`, one after the other.
  __device__ __forceinline__ void insert(unsigned want, Key k, std::uint32_t i) {
    while (want) {
      const int src = __ffs(want) - 1;
      want &= want - 1;
      const Key ck = __shfl_sync(0xffffffffu, k, src);
      const std::uint32_t ci = __shfl_sync(0xffffffffu, i, src);
      const unsigned below =
          __ballot_sync(0xffffffffu, static_cast<int>(lane) < K && key_less(key, idx, ck, ci));
      const int pos = __popc(below);  // the entries below the candidate: lanes [0, pos)
      const Key upK = __shfl_up_sync(0xffffffffu, key, 1);
      const std::uint32_t upI = __shfl_up_sync(0xffffffffu, idx, 1);
      if (pos >= K) continue;  // (uniform) no longer among the K smallest
      if (static_cast<int>(lane) > pos) {
        key = upK;
        idx = upI;
      } else if (static_cast<int>(lane) == pos) {
        key = ck;
        idx = ci;
      }
    }
  }
  // Starts from the list at src (K entries, as write() leaves them).
  __device__ __forceinline__ void load(int k, const KnnEntry<T>* src) {
    clear(k);
    if (static_cast<int>(lane) < K) {
      const KnnEntry<T> e = src[lane];
      idx = e.index;
      key = e.index == kEmptyIndex ? kEmptyKey<T> : ordered_key(e.value);
    }
  }
  // Lanes l < K write entry l to dst[l]. An empty entry's value is NaN (as
  // the lists start, all bits set): the block kernels read entry K - 1's
  // value as a bound, NaN meaning none (KnnStage::pair_bounds).
  __device__ __forceinline__ void write(KnnEntry<T>* dst) const {
    if (static_cast<int>(lane) < K) {
      KnnEntry<T> e;
      e.value = idx == kEmptyIndex ? std::numeric_limits<T>::quiet_NaN() : value_of_key<T>(key);
      e.index = idx;
      dst[lane] = e;
    }
  }
};

// WarpTopK with CUB: when more than kSortFrom candidates of a round pass
// the K-th entry, the list (K entries) and those candidates are sorted
// together by cub::WarpMergeSort (two entries per lane, the others empty)
// and the first K kept; fewer are inserted one by one as in WarpTopK
// (kSortFrom = 0: every round with a passing candidate is sorted). Same
// order, so the same lists.
template <typename T, int kSortFrom>
struct WarpTopKMergeSort : WarpTopK<T> {
  using Key = KnnKey<T>;
  struct Entry {
    Key key;
    std::uint32_t idx;
  };
  struct Less {
    __device__ __forceinline__ bool operator()(const Entry& a, const Entry& b) const {
      return key_less(a.key, a.idx, b.key, b.idx);
    }
  };
  using Sort = cub::WarpMergeSort<Entry, 2, 32>;
  using Storage = typename Sort::TempStorage;
  Storage* storage = nullptr;

  __device__ __forceinline__ void init(Storage* s) { storage = s; }
  __device__ __forceinline__ void offer(Key k, std::uint32_t i, bool valid) {
    const unsigned want = this->passing(k, i, valid);
    if (want == 0) return;
    if (__popc(want) <= kSortFrom) {
      this->insert(want, k, i);
      return;
    }
    const int lane = static_cast<int>(this->lane);
    Entry e[2];
    e[0] = lane < this->K ? Entry{this->key, this->idx} : Entry{kEmptyKey<T>, kEmptyIndex};
    e[1] = ((want >> lane) & 1u) ? Entry{k, i} : Entry{kEmptyKey<T>, kEmptyIndex};
    Sort(*storage).Sort(e, Less{});
    __syncwarp();  // the storage is reused by the next round
    // Blocked order: lane l holds ranks 2l and 2l + 1; rank r goes to lane r.
    const int src = lane / 2;
    const Key k0 = __shfl_sync(0xffffffffu, e[0].key, src);
    const Key k1 = __shfl_sync(0xffffffffu, e[1].key, src);
    const std::uint32_t i0 = __shfl_sync(0xffffffffu, e[0].idx, src);
    const std::uint32_t i1 = __shfl_sync(0xffffffffu, e[1].idx, src);
    if (lane < this->K) {
      this->key = (lane & 1) ? k1 : k0;
      this->idx = (lane & 1) ? i1 : i0;
    }
  }
};

__device__ __forceinline__ bool kept_in_block(std::uint32_t r, std::uint32_t c,
                                              std::int64_t diagonalShift, TriangleSkipMode skip) {
  return pair_kept(static_cast<std::int64_t>(r) - static_cast<std::int64_t>(c) + diagonalShift, skip);
}

}  // namespace detail

// The kNN lists live on the device, one per owner (a row of the plane, and
// on the symmetric plane every function), K entries each with the owner's
// neighbours as global indices: every block merges into them, and they are
// downloaded once at the end. Blocks of two compute streams merge in turn
// (KnnStage orders them with an event), so a list has one writer at a time.

// One warp per block row: the row's kept values merged into the list of
// owner rowBase + row (columns as colBase + c).
template <typename T, typename List = detail::WarpTopK<T>>
__global__ void __launch_bounds__(256)
    knn_rows_kernel(const T* __restrict__ block, std::uint32_t nRows, std::uint32_t nCols,
                    std::int64_t diagonalShift, TriangleSkipMode skip, int K,
                    std::uint32_t rowBase, std::uint32_t colBase, KnnEntry<T>* __restrict__ lists) {
  __shared__ typename List::Storage storage[256 / 32];
  const std::uint32_t row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (row >= nRows) return;  // whole warps
  KnnEntry<T>* mine = lists + std::uint64_t(rowBase + row) * K;
  List list;
  list.init(&storage[threadIdx.x / 32]);
  list.load(K, mine);
  const T* values = block + std::uint64_t(row) * nCols;
  for (std::uint32_t c0 = 0; c0 < nCols; c0 += 32) {
    const std::uint32_t c = c0 + list.lane;
    const bool valid = c < nCols && detail::kept_in_block(row, c, diagonalShift, skip);
    list.offer(valid ? detail::ordered_key(values[c]) : detail::KnnKey<T>(0), colBase + c, valid);
  }
  list.write(mine);
}

// The column kernels' shape: a thread block of 32 warps takes a strip of 32
// block columns and a segment of segRows rows (a multiple of 32); warp w
// keeps the list of column w of the strip. Rows arrive through shared
// tiles of 32 x 32, read row-wise (coalesced) and handed out column-wise,
// kKnnColumnTiles tiles (128 rows) between two barriers of the thread block
// (one tile per barrier pair took the kernel twice the time of the row
// kernel: ncu, 1,024-thread blocks waiting at two barriers per 32 rows); one
// tile for list types with shared storage of their own (CUB's sort: static
// shared memory).
constexpr int kKnnStripThreads = 1024;
constexpr int kKnnColumnTiles = 4;

// The K smallest kept values of every (column, segment) with their row
// (rowBase + r), to scratch[(segment * nCols + column) * K ...].
template <typename T, typename List = detail::WarpTopK<T>>
__global__ void __launch_bounds__(kKnnStripThreads)
    knn_cols_kernel(const T* __restrict__ block, std::uint32_t nRows, std::uint32_t nCols,
                    std::int64_t diagonalShift, TriangleSkipMode skip, int K,
                    std::uint32_t segRows, std::uint32_t rowBase,
                    KnnEntry<T>* __restrict__ scratch) {
  constexpr int S = std::is_empty_v<typename List::Storage> ? kKnnColumnTiles : 1;
  __shared__ T tile[S][32][33];
  __shared__ typename List::Storage storage[kKnnStripThreads / 32];
  const std::uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const std::uint32_t c0 = blockIdx.x * 32;
  const std::uint32_t seg = blockIdx.y;
  const std::uint32_t r0 = seg * segRows;
  const std::uint32_t r1 = min(nRows, r0 + segRows);
  const std::uint32_t col = c0 + warp;  // this warp's column
  List list;
  list.init(&storage[warp]);
  list.clear(K);
  for (std::uint32_t rt = r0; rt < r1; rt += 32 * S) {
#pragma unroll
    for (int q = 0; q < S; ++q) {
      const std::uint32_t r = rt + 32 * q + warp, c = c0 + lane;
      if (r < r1 && c < nCols) tile[q][warp][lane] = block[std::uint64_t(r) * nCols + c];
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < S; ++q) {
      const std::uint32_t r = rt + 32 * q + lane;
      const bool valid =
          col < nCols && r < r1 && detail::kept_in_block(r, col, diagonalShift, skip);
      list.offer(valid ? detail::ordered_key(tile[q][lane][warp]) : detail::KnnKey<T>(0),
                 rowBase + r, valid);
    }
    __syncthreads();
  }
  if (col < nCols) list.write(scratch + (std::uint64_t(seg) * nCols + col) * K);
}

// One warp per block column: its segments' lists merged into the list of
// owner colBase + column.
template <typename T, typename List = detail::WarpTopK<T>>
__global__ void __launch_bounds__(256)
    knn_cols_merge_kernel(const KnnEntry<T>* __restrict__ scratch, std::uint32_t nCols,
                          std::uint32_t segments, int K, std::uint32_t colBase,
                          KnnEntry<T>* __restrict__ lists) {
  __shared__ typename List::Storage storage[256 / 32];
  const std::uint32_t col = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (col >= nCols) return;  // whole warps
  KnnEntry<T>* mine = lists + std::uint64_t(colBase + col) * K;
  List list;
  list.init(&storage[threadIdx.x / 32]);
  list.load(K, mine);
  const std::uint32_t total = segments * static_cast<std::uint32_t>(K);
  for (std::uint32_t e0 = 0; e0 < total; e0 += 32) {
    const std::uint32_t e = e0 + list.lane;
    KnnEntry<T> entry{T(0), kEmptyIndex};
    if (e < total) {
      const std::uint32_t seg = e / K, m = e % K;
      entry = scratch[(std::uint64_t(seg) * nCols + col) * K + m];
    }
    const bool valid = entry.index != kEmptyIndex;
    list.offer(valid ? detail::ordered_key(entry.value) : detail::KnnKey<T>(0), entry.index, valid);
  }
  list.write(mine);
}

// ---- kernel mat-vec ----

// The mat-vec sums live on the device: for every output i and column c of
// V, the kLevels exact-sum level sums at sums[(i * r + c) * kLevels ...] and
// the flags at flags[i * r + c]. Blocks add their terms with atomics: the
// level sums are exact (exact_sum.hpp), so the order does not matter.

// What the mat-vec kernels read besides the block.
template <typename T>
struct MatvecArgs {
  KernelKind kind;
  double scale;
  const T* V;              // the whole V, |Y| x r (row-major)
  std::uint32_t r;
  const double* grids;     // M1 per output: [i * r + c] (perRow) or [c]
  bool gridsPerRow;
  double ratio;
  std::uint64_t rowBase;   // rows.first
  std::uint64_t colBase;   // cols.first
  std::int64_t diagonalShift;
  TriangleSkipMode skip;
  double* sums;            // the device sums (above)
  std::uint32_t* flags;
};

// Outputs (columns of V) per pass over the block: kMatvecChunk, or 1 where
// r = 1 (the kernels' registers, and so their occupancy, grow with it:
// 86-94 registers per thread, 25% occupancy, with 4 at r = 1).
constexpr int kMatvecChunk = 4;
// Terms whose values a thread loads before it adds the first of them (the
// kernels wait on these loads: without it, at r = 1, 54% of a warp's cycles
// stalled on them at 25% occupancy).
template <int Chunk>
constexpr int matvec_loads_ahead() { return Chunk == 1 ? 4 : 2; }

namespace detail {
// Adds the partial (sums, flags) of the calling lane across the warp (exact:
// any order) and returns it in lane 0.
__device__ __forceinline__ void warp_exact_sum(double* acc, std::uint32_t& flags) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) {
#pragma unroll
    for (int l = 0; l < ExactSum::kLevels; ++l) acc[l] += __shfl_down_sync(0xffffffffu, acc[l], off);
    flags |= __shfl_down_sync(0xffffffffu, flags, off);
  }
}
// The same sum through cub::WarpReduce (a partial as one value, added by
// AddPartials; matvec_rows_kernel's kCubReduce): the same sums, and no
// faster than warp_exact_sum's shuffles (one H200, a 4096 x 16384 block,
// r = 1: 0.179 against 0.177 ms; a struct is shuffled word by word either
// way), so the kernels keep the shuffles.
struct ExactPartial {
  double acc[ExactSum::kLevels];
  std::uint32_t flags;
};
struct AddPartials {
  __device__ __forceinline__ ExactPartial operator()(const ExactPartial& a,
                                                     const ExactPartial& b) const {
    ExactPartial r;
#pragma unroll
    for (int l = 0; l < ExactSum::kLevels; ++l) r.acc[l] = a.acc[l] + b.acc[l];
    r.flags = a.flags | b.flags;
    return r;
  }
};
__device__ __forceinline__ double grid_of(const double* grids, bool perRow, std::uint64_t i,
                                          std::uint32_t r, std::uint32_t c) {
  return perRow ? grids[i * r + c] : grids[c];
}
// The terms of U loaded entries of a block line (kept[u]: value[u] and its
// row of V, v[u]), K(value) V[c0 + q], added into the level sums of
// columns c0 .. c0 + Chunk - 1 of V (those below r).
template <typename T, int U, int Chunk>
__device__ __forceinline__ void add_terms(const MatvecArgs<T>& a, std::uint32_t c0,
                                          const bool (&kept)[U], const T (&value)[U],
                                          const T (&v)[U][Chunk], const ExactSumLevels (&g)[Chunk],
                                          double (&acc)[Chunk][ExactSum::kLevels],
                                          std::uint32_t (&fl)[Chunk]) {
#pragma unroll
  for (int u = 0; u < U; ++u) {
    if (!kept[u]) continue;
    const double K = kernel_value(a.kind, static_cast<double>(value[u]), a.scale);
#pragma unroll
    for (int q = 0; q < Chunk; ++q) {
      if (c0 + q < a.r) {
        exact_sum_add(exact_sum_mul(K, static_cast<double>(v[u][q])), g[q], acc[q], fl[q]);
      }
    }
  }
}
// Adds one partial into output (i, c) of the device sums.
template <typename T>
__device__ __forceinline__ void add_partial(const MatvecArgs<T>& a, std::uint64_t i,
                                            std::uint32_t c, const double* acc,
                                            std::uint32_t flags) {
  double* dst = a.sums + (i * a.r + c) * ExactSum::kLevels;
#pragma unroll
  for (int l = 0; l < ExactSum::kLevels; ++l) {
    if (acc[l] != 0.0) atomicAdd(dst + l, acc[l]);
  }
  if (flags) atomicOr(a.flags + i * a.r + c, flags);
}
}  // namespace detail

// One warp per block row i: for every column c of V, the exact-sum partial
// of sum over the block's kept columns j of K(block(i, j)) V[j][c], added
// into output i. Chunk columns of V per pass; each lane loads the block
// values and V entries of U of its columns before adding their terms.
template <typename T, int Chunk, bool kCubReduce = false>
__global__ void __launch_bounds__(256)
    matvec_rows_kernel(const T* __restrict__ block, std::uint32_t nRows, std::uint32_t nCols,
                       MatvecArgs<T> a) {
  constexpr int L = ExactSum::kLevels;
  constexpr int U = matvec_loads_ahead<Chunk>();
  using WarpSum = cub::WarpReduce<detail::ExactPartial>;
  __shared__ std::conditional_t<kCubReduce, typename WarpSum::TempStorage, char> sumStorage[256 / 32];
  (void)sumStorage;
  const std::uint32_t row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  if (row >= nRows) return;
  const T* values = block + std::uint64_t(row) * nCols;
  const std::uint64_t i = a.rowBase + row;
  for (std::uint32_t c0 = 0; c0 < a.r; c0 += Chunk) {
    double acc[Chunk][L] = {};
    std::uint32_t fl[Chunk] = {};
    ExactSumLevels g[Chunk];
#pragma unroll
    for (int q = 0; q < Chunk; ++q) {
      g[q] = ExactSumLevels::of(
          c0 + q < a.r ? detail::grid_of(a.grids, a.gridsPerRow, i, a.r, c0 + q) : 1.5, a.ratio);
    }
    for (std::uint32_t base = lane; base < nCols; base += 32 * U) {
      T value[U];
      T v[U][Chunk];
      bool kept[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::uint32_t c = base + 32 * u;
        kept[u] = c < nCols && detail::kept_in_block(row, c, a.diagonalShift, a.skip);
        value[u] = kept[u] ? values[c] : T(0);
        const T* vr = a.V + (a.colBase + c) * a.r + c0;
#pragma unroll
        for (int q = 0; q < Chunk; ++q) v[u][q] = kept[u] && c0 + q < a.r ? vr[q] : T(0);
      }
      detail::add_terms<T, U, Chunk>(a, c0, kept, value, v, g, acc, fl);
    }
#pragma unroll
    for (int q = 0; q < Chunk; ++q) {
      if constexpr (kCubReduce) {
        detail::ExactPartial p;
#pragma unroll
        for (int l = 0; l < L; ++l) p.acc[l] = acc[q][l];
        p.flags = fl[q];
        p = WarpSum(sumStorage[threadIdx.x / 32]).Reduce(p, detail::AddPartials{});
        if (lane == 0 && c0 + q < a.r) detail::add_partial(a, i, c0 + q, p.acc, p.flags);
      } else {
        detail::warp_exact_sum(acc[q], fl[q]);
        if (lane == 0 && c0 + q < a.r) detail::add_partial(a, i, c0 + q, acc[q], fl[q]);
      }
    }
  }
}

// Symmetric plane: one thread per (block column j, segment of segRows rows):
// the exact-sum partial of sum over the segment's kept rows i != j of
// K(block(i, j)) V[i][c], added into output j. Chunk columns of V per pass;
// each thread loads U rows' values and V entries before adding their terms.
template <typename T, int Chunk>
__global__ void __launch_bounds__(256)
    matvec_cols_kernel(const T* __restrict__ block, std::uint32_t nRows, std::uint32_t nCols,
                       MatvecArgs<T> a, std::uint32_t segRows) {
  constexpr int L = ExactSum::kLevels;
  constexpr int U = matvec_loads_ahead<Chunk>();
  const std::uint32_t col = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t seg = blockIdx.y;
  if (col >= nCols) return;
  const std::uint64_t j = a.colBase + col;
  const std::uint32_t r0 = seg * segRows;
  const std::uint32_t r1 = min(nRows, r0 + segRows);
  for (std::uint32_t c0 = 0; c0 < a.r; c0 += Chunk) {
    double acc[Chunk][L] = {};
    std::uint32_t fl[Chunk] = {};
    ExactSumLevels g[Chunk];
#pragma unroll
    for (int q = 0; q < Chunk; ++q) {
      g[q] = ExactSumLevels::of(
          c0 + q < a.r ? detail::grid_of(a.grids, a.gridsPerRow, j, a.r, c0 + q) : 1.5, a.ratio);
    }
    for (std::uint32_t base = r0; base < r1; base += U) {
      T value[U];
      T v[U][Chunk];
      bool kept[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::uint32_t rr = base + u;
        const std::uint64_t i = a.rowBase + rr;
        kept[u] = rr < r1 && i != j && detail::kept_in_block(rr, col, a.diagonalShift, a.skip);
        value[u] = kept[u] ? block[std::uint64_t(rr) * nCols + col] : T(0);
        const T* vr = a.V + i * a.r + c0;
#pragma unroll
        for (int q = 0; q < Chunk; ++q) v[u][q] = kept[u] && c0 + q < a.r ? vr[q] : T(0);
      }
      detail::add_terms<T, U, Chunk>(a, c0, kept, value, v, g, acc, fl);
    }
#pragma unroll
    for (int q = 0; q < Chunk; ++q) {
      if (c0 + q < a.r) detail::add_partial(a, j, c0 + q, acc[q], fl[q]);
    }
  }
}

}  // namespace mpcf::cuda
