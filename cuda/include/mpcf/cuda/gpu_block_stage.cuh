// GpuBlockStage: what happens to a computed block on its GPU before its
// result reaches the host consumer (block_consumer.hpp), as the
// CudaBlockPipeline drives it:
//
//   order()          the layout the block kernels write the block in
//   init_device()    per GPU: buffers (two slots: consecutive blocks
//                    alternate) and uploads (V of a mat-vec)
//   enqueue()        on the block's compute stream, after its kernels: the
//                    device reduction of the block (or nothing); returns
//                    what to download, `lines` lines of `lineBytes` each
//   consume()        lines [first, first + count) of that download, in host
//                    memory, handed to the consumer; called concurrently
//                    for disjoint line ranges
//   finish_device()  per GPU, after its last block: what the stage keeps on
//                    the device, handed to the consumer
//
// The stages:
//  * IdentityStage (matrix writer, block stream; kNN with k beyond the
//    device lists): downloads the block itself, lines = rows (or columns
//    of a column-major block); for the stream, diagonal blocks of the
//    symmetric plane are completed on the device first;
//  * KnnStage: lists of the k smallest per row of the plane, kept and
//    merged on the device, handed over by finish_device();
//  * MatvecStage: the exact level sums of every output, kept and added on
//    the device, handed over by finish_device().
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/core/knn.hpp"
#include "mpcf/cuda/block_reduce_kernels.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_resources.cuh"

namespace mpcf::cuda {

template <typename T>
class GpuBlockStage {
 public:
  struct Download {
    const unsigned char* data = nullptr;  // device memory
    std::size_t lines = 0;
    std::size_t lineBytes = 0;
  };
  class DeviceState {
   public:
    virtual ~DeviceState() = default;
  };

  virtual ~GpuBlockStage() = default;
  virtual BlockOrder order() const = 0;
  // Whether the block must be zeroed before its kernels: the pairs the
  // kernels skip are read as zeros (the writer checks them, the stream
  // hands them out); the reductions test pair_kept themselves.
  virtual bool needs_zeroed_block() const { return true; }
  // The longest line any block's download has.
  virtual std::size_t max_line_bytes(const BlockScheduler& scheduler) const = 0;
  virtual std::unique_ptr<DeviceState> init_device(GpuContext& ctx,
                                                   const BlockScheduler& scheduler) = 0;
  // slot: 0 or 1, alternating between consecutive blocks of one GPU; its
  // buffers are not reused before the pipeline has consumed the download.
  virtual Download enqueue(DeviceState& state, const BlockInfo& block, T* deviceBlock,
                           cudaStream_t stream, int slot) = 0;
  virtual void consume(const BlockInfo& block, std::size_t first, std::size_t count,
                       const unsigned char* host) = 0;
  // After the GPU's last block (its streams idle, the run not cancelled):
  // hands what the stage keeps on the device to the consumer.
  virtual void finish_device(DeviceState&, GpuContext&) {}
};

namespace detail {
// The column kernels give one thread a segment of a block column (a
// dependent chain of work): segments are short enough that a block has
// about kColumnThreads threads, and at least kMinSegmentRows long.
constexpr std::size_t kColumnThreads = 131072;
constexpr std::size_t kMinSegmentRows = 64;
inline std::size_t segment_rows(std::size_t nRows, std::size_t nCols) {
  const std::size_t wanted = std::max<std::size_t>(1, (kColumnThreads + nCols - 1) / std::max<std::size_t>(nCols, 1));
  return std::max(kMinSegmentRows, (nRows + wanted - 1) / wanted);
}
inline std::size_t segments(std::size_t nRows, std::size_t nCols) {
  const std::size_t rows = segment_rows(nRows, nCols);
  return (nRows + rows - 1) / rows;
}
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

inline unsigned grid_for(std::uint64_t threads, unsigned perBlock) {
  const std::uint64_t g = (threads + perBlock - 1) / perBlock;
  if (g > 0x7fffffffull) throw InvalidArgument("a block is too large for one kernel launch");
  return static_cast<unsigned>(std::max<std::uint64_t>(g, 1));
}
}  // namespace detail

// Downloads the block as computed and hands it to the consumer in pieces
// of whole lines.
template <typename T>
class IdentityStage final : public GpuBlockStage<T> {
 public:
  using typename GpuBlockStage<T>::Download;
  using typename GpuBlockStage<T>::DeviceState;

  // complete: the pieces must hold every value (the block stream): diagonal
  // blocks of the symmetric plane are mirrored on the device.
  IdentityStage(BlockConsumer<T>& consumer, PairPlane plane, bool complete)
      : consumer_(consumer), plane_(plane), complete_(complete), order_(consumer.preferred_order()) {
    if (complete_ && order_ != BlockOrder::RowMajor) {
      throw std::logic_error("IdentityStage: complete pieces are row-major");
    }
  }

  BlockOrder order() const override { return order_; }
  std::size_t max_line_bytes(const BlockScheduler& s) const override {
    return (order_ == BlockOrder::RowMajor ? s.max_block_cols() : s.max_block_rows()) * sizeof(T);
  }
  std::unique_ptr<DeviceState> init_device(GpuContext&, const BlockScheduler&) override {
    return std::make_unique<DeviceState>();
  }

  Download enqueue(DeviceState&, const BlockInfo& block, T* deviceBlock, cudaStream_t stream,
                   int) override {
    const bool mirror = complete_ && plane_.symmetric() && block.straddles_diagonal();
    if (mirror) {
      if (!(block.rows == block.cols)) {
        throw std::logic_error("IdentityStage: a block on the diagonal is not square");
      }
      const auto n = static_cast<std::uint32_t>(block.n_rows());
      mirror_diagonal_kernel<T><<<detail::grid_for(std::uint64_t(n) * n, 256), 256, 0, stream>>>(
          deviceBlock, n);
      MPCF_CUDA_CHECK_LAUNCH();
    }
    Download d;
    d.data = reinterpret_cast<const unsigned char*>(deviceBlock);
    const bool rows = order_ == BlockOrder::RowMajor;
    d.lines = rows ? block.n_rows() : block.n_cols();
    d.lineBytes = (rows ? block.n_cols() : block.n_rows()) * sizeof(T);
    return d;
  }

  void consume(const BlockInfo& block, std::size_t first, std::size_t count,
               const unsigned char* host) override {
    BlockInfo part = block;
    Band& band = order_ == BlockOrder::RowMajor ? part.rows : part.cols;
    const Band whole = band;
    band = Band{whole.first + first, whole.first + first + count - 1};
    BlockPiece<T> piece{part, reinterpret_cast<const T*>(host), order_};
    piece.complete = complete_;
    consumer_.consume(piece);
  }

 private:
  BlockConsumer<T>& consumer_;
  PairPlane plane_;
  bool complete_;
  BlockOrder order_;
};

// k nearest neighbours reduced on the device (k <= kMaxDeviceK, plane
// sides below 2^32 - 1): every GPU keeps a list of the k smallest per owner
// (row of the plane) and merges each block into them; the lists are merged
// into the consumer once, at the end. A block downloads nothing.
template <typename T>
class KnnStage final : public GpuBlockStage<T> {
 public:
  using typename GpuBlockStage<T>::Download;
  using typename GpuBlockStage<T>::DeviceState;
  static constexpr std::size_t kMaxDeviceK = 32;

  static bool fits(std::size_t k, const PairPlane& plane) {
    return k >= 1 && k <= kMaxDeviceK && plane.nRows < kEmptyIndex && plane.nCols < kEmptyIndex;
  }

  KnnStage(KnnConsumer<T>& consumer, PairPlane plane) : consumer_(consumer), plane_(plane) {
    if (!fits(consumer.k(), plane)) throw std::logic_error("KnnStage: k or the plane out of range");
    K_ = static_cast<int>(consumer.k());
  }

  BlockOrder order() const override { return BlockOrder::RowMajor; }
  bool needs_zeroed_block() const override { return false; }
  std::size_t max_line_bytes(const BlockScheduler&) const override { return 1; }

  struct State final : DeviceState {
    DeviceArray<KnnEntry<T>> lists;
    DeviceArray<KnnEntry<T>> scratch[2];
    CudaEvent merged;  // after the last enqueued block's merges
  };
  std::unique_ptr<DeviceState> init_device(GpuContext& ctx, const BlockScheduler& s) override {
    auto st = std::make_unique<State>();
    st->lists = ctx.allocate<KnnEntry<T>>(plane_.nRows * std::size_t(K_));
    // All bits set: index kEmptyIndex, every entry empty.
    MPCF_CUDA_TRY(cudaMemsetAsync(st->lists.data(), 0xff, st->lists.bytes(), ctx.compute_stream()));
    MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.compute_stream()));
    if (plane_.symmetric()) {
      const std::size_t segCols =
          detail::max_knn_segment_columns(s.max_block_rows(), s.max_block_cols());
      for (int k = 0; k < 2; ++k) st->scratch[k] = ctx.allocate<KnnEntry<T>>(segCols * K_);
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
    if (plane_.symmetric()) {
      // The segment lists need no list: they run beside the other stream.
      segs = static_cast<std::uint32_t>(detail::knn_segments(nr, nc));
      const dim3 grid((nc + 31) / 32, segs);
      knn_cols_kernel<T><<<grid, kKnnStripThreads, 0, stream>>>(
          deviceBlock, nr, nc, shift, plane_.skip, K_,
          static_cast<std::uint32_t>(detail::knn_segment_rows(nr, nc)), rowBase,
          st.scratch[slot].data());
      MPCF_CUDA_CHECK_LAUNCH();
    }
    // The merges into the lists wait for the previous block's.
    st.merged.make_wait(stream);
    knn_rows_kernel<T><<<detail::grid_for(std::uint64_t(nr) * 32, 256), 256, 0, stream>>>(
        deviceBlock, nr, nc, shift, plane_.skip, K_, rowBase, colBase, st.lists.data());
    MPCF_CUDA_CHECK_LAUNCH();
    if (plane_.symmetric()) {
      knn_cols_merge_kernel<T><<<detail::grid_for(std::uint64_t(nc) * 32, 256), 256, 0, stream>>>(
          st.scratch[slot].data(), nc, segs, K_, colBase, st.lists.data());
      MPCF_CUDA_CHECK_LAUNCH();
    }
    st.merged.record(stream);
    return Download{};
  }

  void consume(const BlockInfo&, std::size_t, std::size_t, const unsigned char*) override {
    throw std::logic_error("KnnStage: blocks download nothing");
  }

  void finish_device(DeviceState& base, GpuContext& ctx) override {
    State& st = static_cast<State&>(base);
    std::vector<KnnEntry<T>> host(st.lists.size());
    MPCF_CUDA_TRY(cudaMemcpyAsync(host.data(), st.lists.data(), st.lists.bytes(),
                                  cudaMemcpyDeviceToHost, ctx.download_stream()));
    MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.download_stream()));
    std::vector<Neighbour<T>> list;
    list.reserve(K_);
    for (std::size_t i = 0; i < plane_.nRows; ++i) {
      list.clear();
      for (int m = 0; m < K_; ++m) {
        const KnnEntry<T>& e = host[i * K_ + m];
        if (e.index == kEmptyIndex) break;
        list.push_back({e.value, static_cast<std::int64_t>(e.index)});
      }
      if (!list.empty()) consumer_.merge_row(i, list.data(), list.size());
    }
  }

 private:
  KnnConsumer<T>& consumer_;
  PairPlane plane_;
  int K_ = 1;
};

// Kernel mat-vec reduced on the device: every GPU keeps the exact level
// sums of every output and adds each block into them (atomics: exact sums
// do not depend on the order); they are merged into the consumer once, at
// the end. A block downloads nothing.
template <typename T>
class MatvecStage final : public GpuBlockStage<T> {
 public:
  using typename GpuBlockStage<T>::Download;
  using typename GpuBlockStage<T>::DeviceState;

  MatvecStage(MatvecConsumer<T>& consumer, PairPlane plane, std::size_t nVRows)
      : consumer_(consumer), plane_(plane), nVRows_(nVRows) {}

  BlockOrder order() const override { return BlockOrder::RowMajor; }
  bool needs_zeroed_block() const override { return false; }
  std::size_t max_line_bytes(const BlockScheduler&) const override { return 1; }

  struct State final : DeviceState {
    DeviceArray<T> V;
    DeviceArray<double> grids;
    DeviceArray<double> sums;
    DeviceArray<std::uint32_t> flags;
  };
  std::unique_ptr<DeviceState> init_device(GpuContext& ctx, const BlockScheduler&) override {
    auto st = std::make_unique<State>();
    const std::size_t r = consumer_.r();
    const cudaStream_t s = ctx.compute_stream();
    st->V = ctx.allocate<T>(nVRows_ * r);
    MPCF_CUDA_TRY(cudaMemcpyAsync(st->V.data(), consumer_.V(), st->V.bytes(),
                                  cudaMemcpyHostToDevice, s));
    const auto& grids = consumer_.grids();
    st->grids = ctx.allocate<double>(grids.size());
    MPCF_CUDA_TRY(cudaMemcpyAsync(st->grids.data(), grids.data(), st->grids.bytes(),
                                  cudaMemcpyHostToDevice, s));
    st->sums = ctx.allocate<double>(plane_.nRows * r * ExactSum::kLevels);
    st->flags = ctx.allocate<std::uint32_t>(plane_.nRows * r);
    MPCF_CUDA_TRY(cudaMemsetAsync(st->sums.data(), 0, st->sums.bytes(), s));
    MPCF_CUDA_TRY(cudaMemsetAsync(st->flags.data(), 0, st->flags.bytes(), s));
    MPCF_CUDA_TRY(cudaStreamSynchronize(s));
    return st;
  }

  Download enqueue(DeviceState& base, const BlockInfo& block, T* deviceBlock, cudaStream_t stream,
                   int) override {
    State& st = static_cast<State&>(base);
    const auto nr = static_cast<std::uint32_t>(block.n_rows());
    const auto nc = static_cast<std::uint32_t>(block.n_cols());
    MatvecArgs<T> a{};
    a.kind = consumer_.spec().kind;
    a.scale = consumer_.spec().scale;
    a.V = st.V.data();
    a.r = static_cast<std::uint32_t>(consumer_.r());
    a.grids = st.grids.data();
    a.gridsPerRow = consumer_.grids_per_row();
    a.ratio = consumer_.ratio();
    a.rowBase = block.rows.first;
    a.colBase = block.cols.first;
    a.diagonalShift =
        static_cast<std::int64_t>(block.rows.first) - static_cast<std::int64_t>(block.cols.first);
    a.skip = plane_.skip;
    a.sums = st.sums.data();
    a.flags = st.flags.data();
    matvec_rows_kernel<T><<<detail::grid_for(std::uint64_t(nr) * 32, 256), 256, 0, stream>>>(
        deviceBlock, nr, nc, a);
    MPCF_CUDA_CHECK_LAUNCH();
    if (plane_.symmetric()) {
      const auto segs = static_cast<std::uint32_t>(detail::segments(nr, nc));
      const dim3 grid(detail::grid_for(nc, 256), segs);
      matvec_cols_kernel<T><<<grid, 256, 0, stream>>>(
          deviceBlock, nr, nc, a, static_cast<std::uint32_t>(detail::segment_rows(nr, nc)));
      MPCF_CUDA_CHECK_LAUNCH();
    }
    return Download{};
  }

  void consume(const BlockInfo&, std::size_t, std::size_t, const unsigned char*) override {
    throw std::logic_error("MatvecStage: blocks download nothing");
  }

  void finish_device(DeviceState& base, GpuContext& ctx) override {
    State& st = static_cast<State&>(base);
    const std::size_t r = consumer_.r();
    std::vector<double> sums(st.sums.size());
    std::vector<std::uint32_t> flags(st.flags.size());
    MPCF_CUDA_TRY(cudaMemcpyAsync(sums.data(), st.sums.data(), st.sums.bytes(),
                                  cudaMemcpyDeviceToHost, ctx.download_stream()));
    MPCF_CUDA_TRY(cudaMemcpyAsync(flags.data(), st.flags.data(), st.flags.bytes(),
                                  cudaMemcpyDeviceToHost, ctx.download_stream()));
    MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.download_stream()));
    for (std::size_t i = 0; i < plane_.nRows; ++i) {
      consumer_.merge_partials(i, sums.data() + i * r * ExactSum::kLevels, flags.data() + i * r);
    }
  }

 private:
  MatvecConsumer<T>& consumer_;
  PairPlane plane_;
  std::size_t nVRows_;
};

// The stage for a request's consumer.
template <typename T>
std::unique_ptr<GpuBlockStage<T>> make_stage(BlockConsumer<T>& consumer, const PairPlane& plane) {
  switch (consumer.kind()) {
    case ConsumerKind::Knn: {
      auto& knn = static_cast<KnnConsumer<T>&>(consumer);
      if (KnnStage<T>::fits(knn.k(), plane)) return std::make_unique<KnnStage<T>>(knn, plane);
      return std::make_unique<IdentityStage<T>>(consumer, plane, false);
    }
    case ConsumerKind::Matvec:
      return std::make_unique<MatvecStage<T>>(static_cast<MatvecConsumer<T>&>(consumer), plane,
                                              plane.nCols);
    case ConsumerKind::Stream:
      return std::make_unique<IdentityStage<T>>(consumer, plane, true);
    case ConsumerKind::Matrix:
    default:
      return std::make_unique<IdentityStage<T>>(consumer, plane, false);
  }
}

}  // namespace mpcf::cuda
