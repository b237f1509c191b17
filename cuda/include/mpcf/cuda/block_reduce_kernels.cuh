// Kernels that turn a computed block (row-major values in device memory,
// zero where pair_kept rejects a pair) into what the host needs, so only
// O(rows * k) or O(rows * r) numbers travel (DESIGN §8):
//
//  * mirror_diagonal_kernel: completes a square block on the diagonal of the
//    symmetric plane (the block stream hands out true rectangles);
//  * knn_rows_kernel / knn_cols_kernel + knn_cols_merge_kernel: the K
//    smallest (distance, index) of every block row and (symmetric plane)
//    every block column, ascending, in the total order of KnnConsumer;
//  * matvec_rows_kernel / matvec_cols_kernel + matvec_cols_merge_kernel:
//    the exact-sum partials (exact_sum.hpp) of y_i = sum_j K_ij V_j over the
//    block's columns for every block row and (symmetric plane) of
//    y_j = sum_i K_ij V_i for every block column.
//
// Every pair test is core's pair_kept on the global i - j, i.e.
// r - c + (rows.first - cols.first).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

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

// A value's bits in an unsigned order that matches the numeric order (and
// puts positive NaN after +inf).
__device__ __forceinline__ std::uint64_t ordered_key(float v) {
  std::uint32_t u = __float_as_uint(v);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return u;
}
__device__ __forceinline__ std::uint64_t ordered_key(double v) {
  std::uint64_t u = static_cast<std::uint64_t>(__double_as_longlong(v));
  return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
template <typename T>
__device__ __forceinline__ T value_of_key(std::uint64_t key) {
  if constexpr (sizeof(T) == 4) {
    std::uint32_t u = static_cast<std::uint32_t>(key);
    u = (u & 0x80000000u) ? (u & 0x7fffffffu) : ~u;
    return __uint_as_float(u);
  } else {
    const std::uint64_t u = (key & 0x8000000000000000ull) ? (key & 0x7fffffffffffffffull) : ~key;
    return __longlong_as_double(static_cast<long long>(u));
  }
}

constexpr std::uint64_t kEmptyKey = ~std::uint64_t(0);

__device__ __forceinline__ bool key_less(std::uint64_t ka, std::uint32_t ia, std::uint64_t kb,
                                         std::uint32_t ib) {
  return ka < kb || (ka == kb && ia < ib);
}

// A sorted list of the K smallest (key, index) seen, in registers.
template <int K>
struct TopK {
  std::uint64_t key[K];
  std::uint32_t idx[K];
  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int m = 0; m < K; ++m) {
      key[m] = kEmptyKey;
      idx[m] = kEmptyIndex;
    }
  }
  __device__ __forceinline__ void insert(std::uint64_t k, std::uint32_t i) {
    if (!key_less(k, i, key[K - 1], idx[K - 1])) return;
#pragma unroll
    for (int m = K - 1; m > 0; --m) {
      if (key_less(k, i, key[m - 1], idx[m - 1])) {
        key[m] = key[m - 1];
        idx[m] = idx[m - 1];
      } else if (key_less(k, i, key[m], idx[m])) {
        key[m] = k;
        idx[m] = i;
      }
    }
    if (key_less(k, i, key[0], idx[0])) {
      key[0] = k;
      idx[0] = i;
    }
  }
  __device__ __forceinline__ void pop_front() {
#pragma unroll
    for (int m = 0; m + 1 < K; ++m) {
      key[m] = key[m + 1];
      idx[m] = idx[m + 1];
    }
    key[K - 1] = kEmptyKey;
    idx[K - 1] = kEmptyIndex;
  }
};

__device__ __forceinline__ bool kept_in_block(std::uint32_t r, std::uint32_t c,
                                              std::int64_t diagonalShift, TriangleSkipMode skip) {
  return pair_kept(static_cast<std::int64_t>(r) - static_cast<std::int64_t>(c) + diagonalShift, skip);
}

}  // namespace detail

// One warp per block row: the K smallest kept values of the row with their
// column, ascending, to out[row * K ...] (empty entries at the end).
template <typename T, int K>
__global__ void __launch_bounds__(256)
    knn_rows_kernel(const T* __restrict__ block, std::uint32_t nRows, std::uint32_t nCols,
                    std::int64_t diagonalShift, TriangleSkipMode skip,
                    KnnEntry<T>* __restrict__ out) {
  const std::uint32_t row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  if (row >= nRows) return;  // whole warps
  detail::TopK<K> list;
  list.clear();
  const T* values = block + std::uint64_t(row) * nCols;
  for (std::uint32_t c = lane; c < nCols; c += 32) {
    if (!detail::kept_in_block(row, c, diagonalShift, skip)) continue;
    list.insert(detail::ordered_key(values[c]), c);
  }
  // The warp's K smallest: K rounds of a warp minimum over the lanes' heads.
  for (int m = 0; m < K; ++m) {
    std::uint64_t bk = list.key[0];
    std::uint32_t bi = list.idx[0];
    std::uint32_t bl = lane;
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
      const std::uint64_t ok = __shfl_xor_sync(0xffffffffu, bk, off);
      const std::uint32_t oi = __shfl_xor_sync(0xffffffffu, bi, off);
      const std::uint32_t ol = __shfl_xor_sync(0xffffffffu, bl, off);
      if (detail::key_less(ok, oi, bk, bi) || (ok == bk && oi == bi && ol < bl)) {
        bk = ok;
        bi = oi;
        bl = ol;
      }
    }
    if (lane == 0) {
      KnnEntry<T> e;
      e.value = bi == kEmptyIndex ? T(0) : detail::value_of_key<T>(bk);
      e.index = bi;
      out[std::uint64_t(row) * K + m] = e;
    }
    if (lane == bl) list.pop_front();
  }
}

// One thread per (block column, segment of segRows rows): the K smallest
// kept values of the column within the segment, with their row, to
// scratch[(segment * nCols + column) * K ...].
template <typename T, int K>
__global__ void __launch_bounds__(256)
    knn_cols_kernel(const T* __restrict__ block, std::uint32_t nRows, std::uint32_t nCols,
                    std::int64_t diagonalShift, TriangleSkipMode skip, std::uint32_t segRows,
                    KnnEntry<T>* __restrict__ scratch) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t seg = blockIdx.y;
  if (c >= nCols) return;
  detail::TopK<K> list;
  list.clear();
  const std::uint32_t r0 = seg * segRows;
  const std::uint32_t r1 = min(nRows, r0 + segRows);
  for (std::uint32_t r = r0; r < r1; ++r) {
    if (!detail::kept_in_block(r, c, diagonalShift, skip)) continue;
    list.insert(detail::ordered_key(block[std::uint64_t(r) * nCols + c]), r);
  }
  KnnEntry<T>* dst = scratch + (std::uint64_t(seg) * nCols + c) * K;
#pragma unroll
  for (int m = 0; m < K; ++m) {
    KnnEntry<T> e;
    e.value = list.idx[m] == kEmptyIndex ? T(0) : detail::value_of_key<T>(list.key[m]);
    e.index = list.idx[m];
    dst[m] = e;
  }
}

// One thread per block column: the K smallest of its segments' lists, to
// out[column * K ...].
template <typename T, int K>
__global__ void __launch_bounds__(256)
    knn_cols_merge_kernel(const KnnEntry<T>* __restrict__ scratch, std::uint32_t nCols,
                          std::uint32_t segments, KnnEntry<T>* __restrict__ out) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= nCols) return;
  detail::TopK<K> list;
  list.clear();
  for (std::uint32_t seg = 0; seg < segments; ++seg) {
    const KnnEntry<T>* src = scratch + (std::uint64_t(seg) * nCols + c) * K;
    for (int m = 0; m < K; ++m) {
      const KnnEntry<T> e = src[m];
      if (e.index == kEmptyIndex) break;  // sorted: empties last
      list.insert(detail::ordered_key(e.value), e.index);
    }
  }
  KnnEntry<T>* dst = out + std::uint64_t(c) * K;
#pragma unroll
  for (int m = 0; m < K; ++m) {
    KnnEntry<T> e;
    e.value = list.idx[m] == kEmptyIndex ? T(0) : detail::value_of_key<T>(list.key[m]);
    e.index = list.idx[m];
    dst[m] = e;
  }
}

// ---- kernel mat-vec ----

// Where one output line of the mat-vec partials lies: r * kLevels doubles,
// then r uint32 flags, padded to 8 bytes.
struct MatvecLine {
  std::uint32_t r = 0;
  __host__ __device__ std::size_t bytes() const {
    return std::size_t(r) * ExactSum::kLevels * sizeof(double) + ((std::size_t(r) * 4 + 7) / 8) * 8;
  }
  __host__ __device__ double* sums(unsigned char* line) const { return reinterpret_cast<double*>(line); }
  __host__ __device__ std::uint32_t* flags(unsigned char* line) const {
    return reinterpret_cast<std::uint32_t*>(line + std::size_t(r) * ExactSum::kLevels * sizeof(double));
  }
};

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
};

constexpr int kMatvecChunk = 4;  // outputs (columns of V) per pass over the block

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
__device__ __forceinline__ double grid_of(const double* grids, bool perRow, std::uint64_t i,
                                          std::uint32_t r, std::uint32_t c) {
  return perRow ? grids[i * r + c] : grids[c];
}
}  // namespace detail

// One warp per block row i: for every column c of V, the exact-sum partial
// of sum over the block's kept columns j of K(block(i, j)) V[j][c], into
// output line `row` of `out` (MatvecLine layout).
template <typename T>
__global__ void __launch_bounds__(256)
    matvec_rows_kernel(const T* __restrict__ block, std::uint32_t nRows, std::uint32_t nCols,
                       MatvecArgs<T> a, unsigned char* __restrict__ out) {
  constexpr int L = ExactSum::kLevels;
  const std::uint32_t row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const std::uint32_t lane = threadIdx.x % 32;
  if (row >= nRows) return;
  const MatvecLine line{a.r};
  unsigned char* dst = out + std::uint64_t(row) * line.bytes();
  const T* values = block + std::uint64_t(row) * nCols;
  const std::uint64_t i = a.rowBase + row;
  for (std::uint32_t c0 = 0; c0 < a.r; c0 += kMatvecChunk) {
    double acc[kMatvecChunk][L] = {};
    std::uint32_t fl[kMatvecChunk] = {};
    double m1[kMatvecChunk];
#pragma unroll
    for (int q = 0; q < kMatvecChunk; ++q) {
      m1[q] = c0 + q < a.r ? detail::grid_of(a.grids, a.gridsPerRow, i, a.r, c0 + q) : 1.5;
    }
    for (std::uint32_t c = lane; c < nCols; c += 32) {
      if (!detail::kept_in_block(row, c, a.diagonalShift, a.skip)) continue;
      const double K = kernel_value(a.kind, static_cast<double>(values[c]), a.scale);
      const T* v = a.V + (a.colBase + c) * a.r + c0;
#pragma unroll
      for (int q = 0; q < kMatvecChunk; ++q) {
        if (c0 + q < a.r) {
          exact_sum_add(exact_sum_mul(K, static_cast<double>(v[q])), m1[q], a.ratio, acc[q], fl[q]);
        }
      }
    }
#pragma unroll
    for (int q = 0; q < kMatvecChunk; ++q) {
      detail::warp_exact_sum(acc[q], fl[q]);
      if (lane == 0 && c0 + q < a.r) {
#pragma unroll
        for (int l = 0; l < L; ++l) line.sums(dst)[(c0 + q) * L + l] = acc[q][l];
        line.flags(dst)[c0 + q] = fl[q];
      }
    }
  }
}

// Symmetric plane: one thread per (block column j, segment of segRows rows):
// the exact-sum partial of sum over the segment's kept rows i != j of
// K(block(i, j)) V[i][c], into scratch line (segment * nCols + column).
template <typename T>
__global__ void __launch_bounds__(256)
    matvec_cols_kernel(const T* __restrict__ block, std::uint32_t nRows, std::uint32_t nCols,
                       MatvecArgs<T> a, std::uint32_t segRows, unsigned char* __restrict__ scratch) {
  constexpr int L = ExactSum::kLevels;
  const std::uint32_t col = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t seg = blockIdx.y;
  if (col >= nCols) return;
  const MatvecLine line{a.r};
  unsigned char* dst = scratch + (std::uint64_t(seg) * nCols + col) * line.bytes();
  const std::uint64_t j = a.colBase + col;
  const std::uint32_t r0 = seg * segRows;
  const std::uint32_t r1 = min(nRows, r0 + segRows);
  for (std::uint32_t c0 = 0; c0 < a.r; c0 += kMatvecChunk) {
    double acc[kMatvecChunk][L] = {};
    std::uint32_t fl[kMatvecChunk] = {};
    double m1[kMatvecChunk];
#pragma unroll
    for (int q = 0; q < kMatvecChunk; ++q) {
      m1[q] = c0 + q < a.r ? detail::grid_of(a.grids, a.gridsPerRow, j, a.r, c0 + q) : 1.5;
    }
    for (std::uint32_t rr = r0; rr < r1; ++rr) {
      const std::uint64_t i = a.rowBase + rr;
      if (i == j || !detail::kept_in_block(rr, col, a.diagonalShift, a.skip)) continue;
      const double K =
          kernel_value(a.kind, static_cast<double>(block[std::uint64_t(rr) * nCols + col]), a.scale);
      const T* v = a.V + i * a.r + c0;
#pragma unroll
      for (int q = 0; q < kMatvecChunk; ++q) {
        if (c0 + q < a.r) {
          exact_sum_add(exact_sum_mul(K, static_cast<double>(v[q])), m1[q], a.ratio, acc[q], fl[q]);
        }
      }
    }
#pragma unroll
    for (int q = 0; q < kMatvecChunk; ++q) {
      if (c0 + q < a.r) {
#pragma unroll
        for (int l = 0; l < L; ++l) line.sums(dst)[(c0 + q) * L + l] = acc[q][l];
        line.flags(dst)[c0 + q] = fl[q];
      }
    }
  }
}

// One thread per (block column, output c): the segments' partials added
// (exactly) into output line `column` of `out`. (A template, as every kernel
// of this header: defined in several translation units.)
template <typename T>
__global__ void __launch_bounds__(256)
    matvec_cols_merge_kernel(const unsigned char* __restrict__ scratch, std::uint32_t nCols,
                             std::uint32_t segments, std::uint32_t r, unsigned char* __restrict__ out) {
  constexpr int L = ExactSum::kLevels;
  const std::uint64_t e = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  if (e >= std::uint64_t(nCols) * r) return;
  const std::uint32_t col = static_cast<std::uint32_t>(e / r), c = static_cast<std::uint32_t>(e % r);
  const MatvecLine line{r};
  double acc[L] = {};
  std::uint32_t fl = 0;
  for (std::uint32_t seg = 0; seg < segments; ++seg) {
    unsigned char* src =
        const_cast<unsigned char*>(scratch) + (std::uint64_t(seg) * nCols + col) * line.bytes();
#pragma unroll
    for (int l = 0; l < L; ++l) acc[l] += line.sums(src)[c * L + l];
    fl |= line.flags(src)[c];
  }
  unsigned char* dst = out + std::uint64_t(col) * line.bytes();
#pragma unroll
  for (int l = 0; l < L; ++l) line.sums(dst)[c * L + l] = acc[l];
  line.flags(dst)[c] = fl;
}

}  // namespace mpcf::cuda
