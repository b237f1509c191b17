// PcfBlockOp: the PCF policy of the generic CudaBlockPipeline (the BlockOp
// concept of the engine design):
//
//   typename BlockOp::value_type               output scalar type
//   typename BlockOp::GpuStorage               per-GPU device data, movable
//   GpuStorage init_gpu_storage(GpuContext&, const BlockScheduler&)
//       allocates one GPU's arrays, sized for the scheduler's largest block
//   void exec_block(GpuStorage&, const BlockInfo&, value_type* gpuOutput,
//                   GpuContext&)
//       enqueues on the context's compute stream the upload of the block's
//       row and column functions and the kernel writing the block
//       (row-major n_rows x n_cols) into gpuOutput, which the pipeline has
//       zeroed. It does not wait: the pipeline orders and waits with events.
//   std::uint64_t gpu_storage_bytes(maxRows, maxCols)   device bytes needed
//
// Rows and columns have separate data managers: the same one for pdist and
// l2_kernel, X and Y for cdist.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/walk.hpp"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_offset_data_manager.cuh"
#include "mpcf/cuda/cuda_pcf_kernel.cuh"

namespace mpcf::cuda {

template <typename T, typename Op>
class PcfBlockOp {
 public:
  using value_type = T;
  using DataManager = CudaPcfDataManager<T>;
  using Point = PcfPoint<T>;

  struct GpuStorage {
    typename DataManager::DeviceSubset rows;
    typename DataManager::DeviceSubset cols;
  };

  PcfBlockOp(std::shared_ptr<const DataManager> rows, std::shared_ptr<const DataManager> cols,
             Op op, Window<T> window, TriangleSkipMode skip)
      : rows_(std::move(rows)), cols_(std::move(cols)), op_(op), window_(window), skip_(skip) {}

  TriangleSkipMode skip_mode() const noexcept { return skip_; }
  const DataManager& rows() const noexcept { return *rows_; }
  const DataManager& cols() const noexcept { return *cols_; }

  std::uint64_t gpu_storage_bytes(std::size_t maxRows, std::size_t maxCols) const {
    return rows_->device_bytes(maxRows) + cols_->device_bytes(maxCols);
  }

  GpuStorage init_gpu_storage(GpuContext& ctx, const BlockScheduler& scheduler) const {
    GpuStorage s{rows_->allocate_subset(ctx, scheduler.max_block_rows()),
                 cols_->allocate_subset(ctx, scheduler.max_block_cols())};
    return s;
  }

  void exec_block(GpuStorage& s, const BlockInfo& block, T* gpuOutput, GpuContext& ctx) const {
    upload_block(s, block, ctx.compute_stream());
    launch_block(s, block, gpuOutput, ctx.compute_stream());
  }

  // The two halves of exec_block (the benchmark times the kernel alone).
  void upload_block(GpuStorage& s, const BlockInfo& block, cudaStream_t stream) const {
    rows_->upload_subset(s.rows, block.rows.first, block.n_rows(), stream);
    cols_->upload_subset(s.cols, block.cols.first, block.n_cols(), stream);
  }

  void launch_block(const GpuStorage& s, const BlockInfo& block, T* gpuOutput,
                    cudaStream_t stream) const {
    using G = PcfKernelGeometry;
    const std::uint64_t tilesPerRow = G::tiles_per_row(block.n_cols());
    const std::uint64_t tiles = G::tiles(block.n_rows(), block.n_cols());
    if (tiles == 0) return;
    if (tiles > static_cast<std::uint64_t>(std::numeric_limits<int>::max()) ||
        block.n_rows() > std::numeric_limits<std::uint32_t>::max() ||
        block.n_cols() > std::numeric_limits<std::uint32_t>::max()) {
      throw InvalidArgument("a block of " + std::to_string(block.n_rows()) + " x " +
                            std::to_string(block.n_cols()) +
                            " pairs is too large for one kernel launch; lower max_block_elements");
    }
    const std::uint32_t staging = staging_capacity(block);
    const std::int64_t shift =
        static_cast<std::int64_t>(block.rows.first) - static_cast<std::int64_t>(block.cols.first);
    const std::size_t smemBytes = static_cast<std::size_t>(staging) * sizeof(Point);
    const bool wholeLine = window_.a == -std::numeric_limits<T>::infinity() &&
                           window_.b == std::numeric_limits<T>::infinity();
    auto launch = [&](auto kernel) {
      kernel<<<static_cast<unsigned>(tiles), G::block(), smemBytes, stream>>>(
          s.rows.elements.data(), s.rows.offsets.data(), static_cast<std::uint32_t>(block.n_rows()),
          s.cols.elements.data(), s.cols.offsets.data(), static_cast<std::uint32_t>(block.n_cols()),
          shift, skip_, static_cast<std::uint32_t>(tilesPerRow), staging, window_.a, window_.b, op_,
          gpuOutput);
      MPCF_CUDA_CHECK_LAUNCH();
    };
    if (wholeLine) {
      launch(pcf_block_integrate_kernel<false, T, Op>);
    } else {
      launch(pcf_block_integrate_kernel<true, T, Op>);
    }
  }

 private:
  // Points of shared memory per tile: enough for the largest column tile of
  // this block when every tile fits the geometry's staging budget, else 0.
  // Staging only some tiles would still reserve the shared memory in every
  // thread block, shrinking the L1 cache that the global-memory path lives
  // on (measured: 2-4x slower for m = 512).
  std::uint32_t staging_capacity(const BlockInfo& block) const {
    using G = PcfKernelGeometry;
    const std::uint64_t cap = G::kStagingBytes / sizeof(Point);
    std::uint64_t largest = 0;
    const auto& host = cols_->host();
    for (std::size_t c = block.cols.first; c <= block.cols.last; c += G::kCols) {
      const std::size_t n = std::min<std::size_t>(G::kCols, block.cols.last - c + 1);
      largest = std::max<std::uint64_t>(largest, host.subset_elements(c, n));
      if (largest > cap) return 0;
    }
    return static_cast<std::uint32_t>(largest);
  }

  std::shared_ptr<const DataManager> rows_;
  std::shared_ptr<const DataManager> cols_;
  Op op_;
  Window<T> window_;
  TriangleSkipMode skip_;
};

}  // namespace mpcf::cuda
