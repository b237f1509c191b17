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
//
// The stages:
//  * IdentityStage (matrix writer, block stream; kNN with k beyond the
//    device lists): downloads the block itself, lines = rows (or columns
//    of a column-major block); for the stream, diagonal blocks of the
//    symmetric plane are completed on the device first;
//  * KnnStage: the k smallest of every block row (and column, symmetric
//    plane) on the device; lines = rows then columns, k entries each;
//  * MatvecStage: the exact-sum partials of every block row (and column) on
//    the device; lines = rows then columns, r outputs each.
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
// Segment-columns (segments x columns) of any block up to maxRows x maxCols:
// at most (wanted + 1) x cols <= kColumnThreads + 2 maxCols.
inline std::size_t max_segment_columns(std::size_t maxRows, std::size_t maxCols) {
  const std::size_t bySegments = ((maxRows + kMinSegmentRows - 1) / kMinSegmentRows) * maxCols;
  return std::min(bySegments, kColumnThreads + 2 * maxCols);
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

// k nearest neighbours reduced on the device (k <= kMaxDeviceK).
template <typename T>
class KnnStage final : public GpuBlockStage<T> {
 public:
  using typename GpuBlockStage<T>::Download;
  using typename GpuBlockStage<T>::DeviceState;
  static constexpr std::size_t kMaxDeviceK = 32;

  KnnStage(KnnConsumer<T>& consumer, PairPlane plane) : consumer_(consumer), plane_(plane) {
    const std::size_t k = consumer.k();
    if (k == 0 || k > kMaxDeviceK) throw std::logic_error("KnnStage: k out of range");
    listK_ = k <= 8 ? 8 : (k <= 16 ? 16 : 32);
  }

  BlockOrder order() const override { return BlockOrder::RowMajor; }
  bool needs_zeroed_block() const override { return false; }
  std::size_t max_line_bytes(const BlockScheduler&) const override {
    return listK_ * sizeof(KnnEntry<T>);
  }

  struct State final : DeviceState {
    DeviceArray<KnnEntry<T>> out[2];
    DeviceArray<KnnEntry<T>> scratch[2];
  };
  std::unique_ptr<DeviceState> init_device(GpuContext& ctx, const BlockScheduler& s) override {
    auto st = std::make_unique<State>();
    const std::size_t lines = s.max_block_rows() + (plane_.symmetric() ? s.max_block_cols() : 0);
    const std::size_t segCols = detail::max_segment_columns(s.max_block_rows(), s.max_block_cols());
    for (int k = 0; k < 2; ++k) {
      st->out[k] = ctx.allocate<KnnEntry<T>>(lines * listK_);
      if (plane_.symmetric()) st->scratch[k] = ctx.allocate<KnnEntry<T>>(segCols * listK_);
    }
    return st;
  }

  Download enqueue(DeviceState& base, const BlockInfo& block, T* deviceBlock, cudaStream_t stream,
                   int slot) override {
    State& st = static_cast<State&>(base);
    const auto nr = static_cast<std::uint32_t>(block.n_rows());
    const auto nc = static_cast<std::uint32_t>(block.n_cols());
    const std::int64_t shift =
        static_cast<std::int64_t>(block.rows.first) - static_cast<std::int64_t>(block.cols.first);
    switch (listK_) {
      case 8: launch<8>(st, deviceBlock, nr, nc, shift, stream, slot); break;
      case 16: launch<16>(st, deviceBlock, nr, nc, shift, stream, slot); break;
      default: launch<32>(st, deviceBlock, nr, nc, shift, stream, slot); break;
    }
    Download d;
    d.data = reinterpret_cast<const unsigned char*>(st.out[slot].data());
    d.lines = nr + (plane_.symmetric() ? nc : 0);
    d.lineBytes = listK_ * sizeof(KnnEntry<T>);
    return d;
  }

  void consume(const BlockInfo& block, std::size_t first, std::size_t count,
               const unsigned char* host) override {
    const auto* entries = reinterpret_cast<const KnnEntry<T>*>(host);
    const std::size_t k = consumer_.k();
    std::vector<Neighbour<T>> list;
    list.reserve(k);
    for (std::size_t l = 0; l < count; ++l) {
      const std::size_t line = first + l;
      const bool isRow = line < block.n_rows();
      const std::size_t owner = isRow ? block.rows.first + line : block.cols.first + (line - block.n_rows());
      const std::size_t base = isRow ? block.cols.first : block.rows.first;
      list.clear();
      for (std::size_t m = 0; m < k; ++m) {
        const KnnEntry<T>& e = entries[l * listK_ + m];
        if (e.index == kEmptyIndex) break;
        list.push_back({e.value, static_cast<std::int64_t>(base + e.index)});
      }
      if (!list.empty()) consumer_.merge_row(owner, list.data(), list.size());
    }
  }

 private:
  template <int K>
  void launch(State& st, const T* block, std::uint32_t nr, std::uint32_t nc, std::int64_t shift,
              cudaStream_t stream, int slot) {
    knn_rows_kernel<T, K><<<detail::grid_for(std::uint64_t(nr) * 32, 256), 256, 0, stream>>>(
        block, nr, nc, shift, plane_.skip, st.out[slot].data());
    MPCF_CUDA_CHECK_LAUNCH();
    if (!plane_.symmetric()) return;
    const auto segs = static_cast<std::uint32_t>(detail::segments(nr, nc));
    const dim3 grid(detail::grid_for(nc, 256), segs);
    knn_cols_kernel<T, K><<<grid, 256, 0, stream>>>(
        block, nr, nc, shift, plane_.skip, static_cast<std::uint32_t>(detail::segment_rows(nr, nc)),
        st.scratch[slot].data());
    MPCF_CUDA_CHECK_LAUNCH();
    knn_cols_merge_kernel<T, K><<<detail::grid_for(nc, 256), 256, 0, stream>>>(
        st.scratch[slot].data(), nc, segs, st.out[slot].data() + std::uint64_t(nr) * K);
    MPCF_CUDA_CHECK_LAUNCH();
  }

  KnnConsumer<T>& consumer_;
  PairPlane plane_;
  std::size_t listK_ = 8;
};

// Kernel mat-vec partials reduced on the device.
template <typename T>
class MatvecStage final : public GpuBlockStage<T> {
 public:
  using typename GpuBlockStage<T>::Download;
  using typename GpuBlockStage<T>::DeviceState;

  MatvecStage(MatvecConsumer<T>& consumer, PairPlane plane, std::size_t nVRows)
      : consumer_(consumer), plane_(plane), nVRows_(nVRows) {}

  BlockOrder order() const override { return BlockOrder::RowMajor; }
  bool needs_zeroed_block() const override { return false; }
  std::size_t max_line_bytes(const BlockScheduler&) const override { return line().bytes(); }

  struct State final : DeviceState {
    DeviceArray<T> V;
    DeviceArray<double> grids;
    DeviceArray<unsigned char> out[2];
    DeviceArray<unsigned char> scratch[2];
  };
  std::unique_ptr<DeviceState> init_device(GpuContext& ctx, const BlockScheduler& s) override {
    auto st = std::make_unique<State>();
    const std::size_t r = consumer_.r();
    st->V = ctx.allocate<T>(nVRows_ * r);
    MPCF_CUDA_TRY(cudaMemcpyAsync(st->V.data(), consumer_.V(), st->V.bytes(),
                                  cudaMemcpyHostToDevice, ctx.compute_stream()));
    const auto& grids = consumer_.grids();
    st->grids = ctx.allocate<double>(grids.size());
    MPCF_CUDA_TRY(cudaMemcpyAsync(st->grids.data(), grids.data(), st->grids.bytes(),
                                  cudaMemcpyHostToDevice, ctx.compute_stream()));
    MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.compute_stream()));
    const std::size_t lines = s.max_block_rows() + (plane_.symmetric() ? s.max_block_cols() : 0);
    for (int k = 0; k < 2; ++k) {
      st->out[k] = ctx.allocate<unsigned char>(lines * line().bytes());
      if (plane_.symmetric()) {
        st->scratch[k] = ctx.allocate<unsigned char>(
            detail::max_segment_columns(s.max_block_rows(), s.max_block_cols()) * line().bytes());
      }
    }
    return st;
  }

  Download enqueue(DeviceState& base, const BlockInfo& block, T* deviceBlock, cudaStream_t stream,
                   int slot) override {
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
    matvec_rows_kernel<T><<<detail::grid_for(std::uint64_t(nr) * 32, 256), 256, 0, stream>>>(
        deviceBlock, nr, nc, a, st.out[slot].data());
    MPCF_CUDA_CHECK_LAUNCH();
    if (plane_.symmetric()) {
      const auto segs = static_cast<std::uint32_t>(detail::segments(nr, nc));
      const dim3 grid(detail::grid_for(nc, 256), segs);
      matvec_cols_kernel<T><<<grid, 256, 0, stream>>>(
          deviceBlock, nr, nc, a, static_cast<std::uint32_t>(detail::segment_rows(nr, nc)),
          st.scratch[slot].data());
      MPCF_CUDA_CHECK_LAUNCH();
      matvec_cols_merge_kernel<T><<<detail::grid_for(std::uint64_t(nc) * a.r, 256), 256, 0, stream>>>(
          st.scratch[slot].data(), nc, segs, a.r, st.out[slot].data() + std::uint64_t(nr) * line().bytes());
      MPCF_CUDA_CHECK_LAUNCH();
    }
    Download d;
    d.data = st.out[slot].data();
    d.lines = nr + (plane_.symmetric() ? nc : 0);
    d.lineBytes = line().bytes();
    return d;
  }

  void consume(const BlockInfo& block, std::size_t first, std::size_t count,
               const unsigned char* host) override {
    const MatvecLine ln = line();
    for (std::size_t l = 0; l < count; ++l) {
      const std::size_t lineIndex = first + l;
      const bool isRow = lineIndex < block.n_rows();
      const std::size_t owner =
          isRow ? block.rows.first + lineIndex : block.cols.first + (lineIndex - block.n_rows());
      unsigned char* p = const_cast<unsigned char*>(host + l * ln.bytes());
      consumer_.merge_partials(owner, ln.sums(p), ln.flags(p));
    }
  }

 private:
  MatvecLine line() const { return MatvecLine{static_cast<std::uint32_t>(consumer_.r())}; }

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
      if (knn.k() <= KnnStage<T>::kMaxDeviceK) return std::make_unique<KnnStage<T>>(knn, plane);
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
