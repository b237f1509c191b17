// IdentityStage: the GpuBlockStage (gpu_block_stage.cuh) that downloads
// each block as computed and hands it to the consumer in pieces of whole
// lines; the stage of the matrix writer (unless its result lies in
// registered host memory: direct_matrix_stage.cuh) and the block stream (and of kNN
// beyond the device lists, knn_stage.cuh). It sees block values only, so
// every function type's BlockOp (PCF, a PLF one) uses it unchanged.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/block_stream.hpp"
#include "mpcf/cuda/block_reduce_kernels.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/gpu_block_stage.cuh"

namespace mpcf::cuda {

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
  bool complete() const noexcept { return complete_; }
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

// The matrix writer's stage (IdentityStage or DirectMatrixStage) is chosen
// in direct_matrix_stage.cuh.

// The block stream: complete pieces (every value of the block).
template <>
struct GpuStageFor<ConsumerKind::Stream> {
  template <typename T>
  using Consumer = StreamConsumer<T>;
  template <typename T>
  static std::unique_ptr<GpuBlockStage<T>> make(Consumer<T>& consumer, const PairPlane& plane) {
    return std::make_unique<IdentityStage<T>>(consumer, plane, true);
  }
};

}  // namespace mpcf::cuda
