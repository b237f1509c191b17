// KnnStage: the GpuBlockStage (gpu_block_stage.cuh) of the k nearest
// neighbours, reduced on the device, and GpuStageFor<ConsumerKind::Knn>.
// It sees block values only, so every function type's BlockOp (PCF, a PLF
// one) uses it unchanged.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/knn.hpp"
#include "mpcf/cuda/block_reduce_kernels.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_resources.cuh"
#include "mpcf/cuda/gpu_block_stage.cuh"
#include "mpcf/cuda/identity_stage.cuh"

namespace mpcf::cuda {

namespace detail {
// The kNN column kernel's segments: a multiple of 32 rows, about
// kKnnColumnStrips thread blocks (32-column strips x segments) per block.
constexpr std::size_t kKnnColumnStrips = 1024;
inline std::size_t knn_segment_rows(std::size_t nRows, std::size_t nCols) {
  const std::size_t strips = std::max<std::size_t>(1, (nCols + 31) / 32);
  const std::size_t segs = std::max<std::size_t>(1, (kKnnColumnStrips + strips - 1) / strips);
  const std::size_t rows = std::max<std::size_t>(1, (nRows + segs - 1) / segs);
  return (rows + 31) / 32 * 32;
}
inline std::size_t knn_segments(std::size_t nRows, std::size_t nCols) {
  const std::size_t rows = knn_segment_rows(nRows, nCols);
  return (nRows + rows - 1) / rows;
}
// segments x columns of any block up to maxRows x maxCols: segments <=
// min(ceil(rows / 32), ceil(kKnnColumnStrips / strips)), so segments x cols
// <= min(ceil(maxRows / 32) maxCols, 32 (kKnnColumnStrips + strips)).
inline std::size_t max_knn_segment_columns(std::size_t maxRows, std::size_t maxCols) {
  const std::size_t bySegments = ((maxRows + 31) / 32) * maxCols;
  return std::min(bySegments, 32 * kKnnColumnStrips + maxCols + 32);
}
}  // namespace detail

// k nearest neighbours reduced on the device (k <= kMaxDeviceK, plane
// sides below 2^32 - 1): every GPU keeps a list of the k smallest per owner
// (row of the plane; both ways, also per column, in lists of their own) and
// merges each block into them; the lists are merged into the consumer once,
// at the end. A block downloads nothing.
template <typename T>
class KnnStage final : public GpuBlockStage<T> {
 public:
  using typename GpuBlockStage<T>::Download;
  using typename GpuBlockStage<T>::DeviceState;
  static constexpr std::size_t kMaxDeviceK = 32;

  static bool fits(std::size_t k, const PairPlane& plane) {
    return k >= 1 && k <= kMaxDeviceK && plane.nRows < kEmptyIndex && plane.nCols < kEmptyIndex;
  }
  static bool fits(const KnnConsumer<T>& consumer, const PairPlane& plane) {
    return fits(consumer.k(), plane) && (!consumer.both_ways() || fits(consumer.k_cols(), plane));
  }

  KnnStage(KnnConsumer<T>& consumer, PairPlane plane) : consumer_(consumer), plane_(plane) {
    if (!fits(consumer, plane)) throw std::logic_error("KnnStage: k or the plane out of range");
    K_ = static_cast<int>(consumer.k());
    bothWays_ = consumer.both_ways();
    KC_ = bothWays_ ? static_cast<int>(consumer.k_cols()) : K_;
  }

  BlockOrder order() const override { return BlockOrder::RowMajor; }
  bool needs_zeroed_block() const override { return false; }
  bool gives_bounds() const override { return true; }
  std::size_t max_line_bytes(const BlockScheduler&) const override { return 1; }

  struct State final : DeviceState {
    DeviceArray<KnnEntry<T>> lists;
    DeviceArray<KnnEntry<T>> colLists;  // both ways
    DeviceArray<KnnEntry<T>> scratch[2];
    CudaEvent merged;  // after the last enqueued block's merges
  };
  // Whether every block's columns are merged too: into the row lists (the
  // symmetric plane) or the column lists (both ways).
  bool with_columns() const { return plane_.symmetric() || bothWays_; }
  std::uint64_t device_bytes(std::size_t maxRows, std::size_t maxCols) const override {
    const std::uint64_t entry = sizeof(KnnEntry<T>) * static_cast<std::uint64_t>(K_);
    const std::uint64_t colEntry = sizeof(KnnEntry<T>) * static_cast<std::uint64_t>(KC_);
    std::uint64_t bytes = plane_.nRows * entry;  // lists
    if (bothWays_) bytes += plane_.nCols * colEntry;
    if (with_columns()) bytes += 2 * detail::max_knn_segment_columns(maxRows, maxCols) * colEntry;
    return bytes;
  }
  std::unique_ptr<DeviceState> init_device(GpuContext& ctx, const BlockScheduler& s) override {
    auto st = std::make_unique<State>();
    st->lists = ctx.allocate<KnnEntry<T>>(plane_.nRows * std::size_t(K_));
    // All bits set: index kEmptyIndex, every entry empty.
    MPCF_CUDA_TRY(cudaMemsetAsync(st->lists.data(), 0xff, st->lists.bytes(), ctx.compute_stream()));
    if (bothWays_) {
      st->colLists = ctx.allocate<KnnEntry<T>>(plane_.nCols * std::size_t(KC_));
      MPCF_CUDA_TRY(
          cudaMemsetAsync(st->colLists.data(), 0xff, st->colLists.bytes(), ctx.compute_stream()));
    }
    MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.compute_stream()));
    if (with_columns()) {
      const std::size_t segCols =
          detail::max_knn_segment_columns(s.max_block_rows(), s.max_block_cols());
      for (int k = 0; k < 2; ++k) st->scratch[k] = ctx.allocate<KnnEntry<T>>(segCols * KC_);
    }
    return st;
  }

  Download enqueue(DeviceState& base, const BlockInfo& block, T* deviceBlock, cudaStream_t stream,
                   int slot) override {
    State& st = static_cast<State&>(base);
    const auto nr = static_cast<std::uint32_t>(block.n_rows());
    const auto nc = static_cast<std::uint32_t>(block.n_cols());
    const auto rowBase = static_cast<std::uint32_t>(block.rows.first);
    const auto colBase = static_cast<std::uint32_t>(block.cols.first);
    const std::int64_t shift =
        static_cast<std::int64_t>(block.rows.first) - static_cast<std::int64_t>(block.cols.first);
    std::uint32_t segs = 0;
    if (with_columns()) {
      // The segment lists need no list: they run beside the other stream.
      segs = static_cast<std::uint32_t>(detail::knn_segments(nr, nc));
      const dim3 grid((nc + 31) / 32, segs);
      knn_cols_kernel<T><<<grid, kKnnStripThreads, 0, stream>>>(
          deviceBlock, nr, nc, shift, plane_.skip, KC_,
          static_cast<std::uint32_t>(detail::knn_segment_rows(nr, nc)), rowBase,
          st.scratch[slot].data());
      MPCF_CUDA_CHECK_LAUNCH();
    }
    // The merges into the lists wait for the previous block's.
    st.merged.make_wait(stream);
    knn_rows_kernel<T><<<detail::grid_for(std::uint64_t(nr) * 32, 256), 256, 0, stream>>>(
        deviceBlock, nr, nc, shift, plane_.skip, K_, rowBase, colBase, st.lists.data());
    MPCF_CUDA_CHECK_LAUNCH();
    if (with_columns()) {
      knn_cols_merge_kernel<T><<<detail::grid_for(std::uint64_t(nc) * 32, 256), 256, 0, stream>>>(
          st.scratch[slot].data(), nc, segs, KC_, colBase,
          bothWays_ ? st.colLists.data() : st.lists.data());
      MPCF_CUDA_CHECK_LAUNCH();
    }
    st.merged.record(stream);
    return Download{};
  }

  // The K-th value of each block row's list and, where blocks are merged
  // into column lists too (the symmetric plane, both ways), of each block
  // column's: a pair above both enters neither list (pair_bounds.hpp). An
  // entry's value comes first and an entry is two values wide.
  PairBounds<T> pair_bounds(const DeviceState& base, const BlockInfo& block) const override {
    static_assert(sizeof(KnnEntry<T>) == 2 * sizeof(T) && offsetof(KnnEntry<T>, value) == 0);
    const State& st = static_cast<const State&>(base);
    auto kth = [](const DeviceArray<KnnEntry<T>>& lists, std::size_t owner, int K) {
      return reinterpret_cast<const T*>(lists.data() + owner * std::size_t(K) + (K - 1));
    };
    PairBounds<T> b;
    b.rows = kth(st.lists, block.rows.first, K_);
    b.rowStride = 2 * std::uint64_t(K_);
    if (bothWays_) {
      b.cols = kth(st.colLists, block.cols.first, KC_);
      b.colStride = 2 * std::uint64_t(KC_);
    } else if (plane_.symmetric()) {
      b.cols = kth(st.lists, block.cols.first, K_);
      b.colStride = 2 * std::uint64_t(K_);
    }
    return b;
  }

  void consume(const BlockInfo&, std::size_t, std::size_t, const unsigned char*) override {
    throw std::logic_error("KnnStage: blocks download nothing");
  }

  void finish_device(DeviceState& base, GpuContext& ctx) override {
    State& st = static_cast<State&>(base);
    merge_lists(st.lists, plane_.nRows, K_, ctx, false);
    if (bothWays_) merge_lists(st.colLists, plane_.nCols, KC_, ctx, true);
  }

 private:
  // Downloads `owners` lists of K and merges them into the consumer's rows
  // (or columns).
  void merge_lists(const DeviceArray<KnnEntry<T>>& lists, std::size_t owners, int K,
                   GpuContext& ctx, bool columns) {
    std::vector<KnnEntry<T>> host(lists.size());
    MPCF_CUDA_TRY(cudaMemcpyAsync(host.data(), lists.data(), lists.bytes(), cudaMemcpyDeviceToHost,
                                  ctx.download_stream()));
    MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.download_stream()));
    std::vector<Neighbour<T>> list;
    list.reserve(K);
    for (std::size_t i = 0; i < owners; ++i) {
      list.clear();
      for (int m = 0; m < K; ++m) {
        const KnnEntry<T>& e = host[i * K + m];
        if (e.index == kEmptyIndex) break;
        list.push_back({e.value, static_cast<std::int64_t>(e.index)});
      }
      if (list.empty()) continue;
      if (columns) {
        consumer_.merge_col(i, list.data(), list.size());
      } else {
        consumer_.merge_row(i, list.data(), list.size());
      }
    }
  }

  KnnConsumer<T>& consumer_;
  PairPlane plane_;
  int K_ = 1;
  int KC_ = 1;  // the column side's k (both ways; else K_)
  bool bothWays_ = false;
};

// kNN: on the device when k and the plane fit KnnStage, else the blocks go
// to the consumer as computed.
template <>
struct GpuStageFor<ConsumerKind::Knn> {
  template <typename T>
  using Consumer = KnnConsumer<T>;
  template <typename T>
  static std::unique_ptr<GpuBlockStage<T>> make(Consumer<T>& knn, const PairPlane& plane) {
    if (KnnStage<T>::fits(knn, plane)) return std::make_unique<KnnStage<T>>(knn, plane);
    return std::make_unique<IdentityStage<T>>(knn, plane, false);
  }
};

}  // namespace mpcf::cuda
