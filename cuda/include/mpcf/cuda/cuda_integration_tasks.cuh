// CudaPairwiseIntegrationTask (pdist, l2_kernel) and CudaCrossIntegrationTask
// (cdist): the GPU counterparts of the CPU tasks of matrix_integrate.hpp.
// Each plans the blocks (plan_blocks), builds a PcfBlockOp over the row and
// column data and runs the CudaBlockPipeline, scattering through the core
// result writers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/cuda/block_matrix_support.cuh"
#include "mpcf/cuda/cuda_block_pipeline.cuh"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"
#include "mpcf/cuda/pcf_block_op.cuh"

namespace mpcf::cuda {

// The block decomposition of an nRows x nCols output on `devices`:
//  * largest block: cfg.maxBlockElements when given (taken as is: a budget
//    larger than the device fails with OutOfMemory when the buffers are
//    allocated), else the output half of the budgeted free memory shared by
//    the two output buffers, and never more than the whole output;
//  * split hint: cfg.splitHint, else 32 per GPU (1 with an explicit
//    maxBlockElements, which then is the size of the largest block);
//  * occupancy floor: cfg.minBlockSide, else get_min_block_side(devices).
// The blocks' function data must fit the data half of the budget and a
// block's breakpoints must fit 32-bit indices; the block side is halved
// until they do (OutOfMemory when not even one pair fits).
template <typename BlockOp>
BlockScheduler plan_blocks(std::size_t nRows, std::size_t nCols, BlockMode mode,
                           const BlockOp& op, const std::vector<int>& devices,
                           const CudaExecutionConfig& cfg) {
  using T = typename BlockOp::value_type;
  BlockScheduler::Config c;
  c.nRows = nRows;
  c.nCols = nCols;
  c.mode = mode;
  if (nRows == 0 || nCols == 0) {
    c.maxOutputElements = 1;
    return BlockScheduler(c);
  }
  const std::uint64_t whole = static_cast<std::uint64_t>(nRows) * nCols;
  if (cfg.maxBlockElements > 0) {
    c.maxOutputElements = cfg.maxBlockElements;
    c.nSplitsHint = cfg.splitHint ? cfg.splitHint : 1;
  } else {
    const std::uint64_t perBuffer =
        get_max_output_elements(devices, cfg.memoryFraction, sizeof(T)) / 2;
    c.maxOutputElements = std::max<std::uint64_t>(1, std::min(perBuffer, whole));
    c.nSplitsHint = cfg.splitHint ? cfg.splitHint : 32 * devices.size();
  }
  c.minBlockSide = cfg.minBlockSide ? cfg.minBlockSide : get_min_block_side(devices);

  const std::uint64_t dataBudget = get_data_budget_bytes(devices, cfg.memoryFraction);
  constexpr std::uint64_t kMaxIndex = std::numeric_limits<std::uint32_t>::max();
  for (;;) {
    BlockScheduler s(c);
    const std::size_t mr = s.max_block_rows();
    const std::size_t mc = s.max_block_cols();
    const bool indicesFit = op.rows().max_subset_elements(mr) <= kMaxIndex &&
                            op.cols().max_subset_elements(mc) <= kMaxIndex;
    const std::uint64_t dataBytes = op.gpu_storage_bytes(mr, mc);
    if (indicesFit && dataBytes <= dataBudget) return s;
    if (s.block_side() <= 1) {
      throw OutOfMemory("the function data of a single pair needs " + std::to_string(dataBytes) +
                        " bytes of GPU memory but the budget leaves " +
                        std::to_string(dataBudget) + " bytes for function data");
    }
    const std::uint64_t half = s.block_side() / 2;
    c.maxOutputElements = std::max<std::uint64_t>(1, half * half);
    c.nSplitsHint = 1;
    c.minBlockSide = 0;
  }
}

// Host threads per GPU for scattering downloaded blocks.
inline unsigned scatter_threads_per_gpu(std::size_t gpus) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<unsigned>(hw / static_cast<unsigned>(std::max<std::size_t>(gpus, 1)), 1u, 16u);
}

namespace detail {

// Shared body of the two tasks.
template <typename T, typename Op, typename Writer>
class CudaBlockIntegrationTask : public Work {
 public:
  using DataManager = CudaPcfDataManager<T>;

  CudaBlockIntegrationTask(std::shared_ptr<const DataManager> rows,
                           std::shared_ptr<const DataManager> cols, Op op, Window<T> window,
                           Writer writer, BlockMode mode, TriangleSkipMode skip,
                           std::vector<int> devices, CudaExecutionConfig cfg)
      : blockOp_(std::move(rows), std::move(cols), op, window, skip),
        writer_(writer),
        mode_(mode),
        devices_(std::move(devices)),
        cfg_(std::move(cfg)) {}

  void run(TaskControl& control) override {
    const BlockScheduler scheduler =
        plan_blocks(blockOp_.rows().count(), blockOp_.cols().count(), mode_, blockOp_, devices_, cfg_);
    blockCount_ = scheduler.blocks().size();
    writer_.prepare();
    std::uint64_t total = 0;
    for (const auto& b : scheduler.blocks()) total += computed_pairs(b, blockOp_.skip_mode());
    control.set_total(total);
    CudaBlockPipeline<PcfBlockOp<T, Op>> pipeline(blockOp_, scheduler, devices_,
                                                 scatter_threads_per_gpu(devices_.size()));
    try {
      pipeline.run(control, [this](const BlockInfo& b, const T* buf) {
        Writer w = writer_;
        w.scatter_block(b, buf);
      });
    } catch (...) {
      blocksPerDevice_ = pipeline.blocks_per_device();
      throw;
    }
    blocksPerDevice_ = pipeline.blocks_per_device();
  }

  void discard_output() noexcept override { writer_.poison(); }

  // After run(): blocks of the decomposition and how many each device took.
  std::size_t block_count() const noexcept { return blockCount_; }
  const std::vector<std::uint64_t>& blocks_per_device() const noexcept { return blocksPerDevice_; }

 private:
  PcfBlockOp<T, Op> blockOp_;
  Writer writer_;
  BlockMode mode_;
  std::vector<int> devices_;
  CudaExecutionConfig cfg_;
  std::size_t blockCount_ = 0;
  std::vector<std::uint64_t> blocksPerDevice_;
};

}  // namespace detail

// pdist (Writer = DistanceMatrixResultWriter, LowerTriangleSkipDiag) or
// l2_kernel (SymmetricMatrixResultWriter, LowerTriangle) of one collection:
// one data manager serves rows and columns.
template <typename T, typename Op, typename Writer>
class CudaPairwiseIntegrationTask final : public detail::CudaBlockIntegrationTask<T, Op, Writer> {
 public:
  CudaPairwiseIntegrationTask(std::shared_ptr<const CudaPcfDataManager<T>> data, Op op,
                              Window<T> window, Writer writer, TriangleSkipMode skip,
                              std::vector<int> devices, CudaExecutionConfig cfg)
      : detail::CudaBlockIntegrationTask<T, Op, Writer>(data, data, op, window, writer,
                                                        BlockMode::LowerTriangle, skip,
                                                        std::move(devices), std::move(cfg)) {}
};

// cdist: rows from X, columns from Y, every pair, dense row-major output.
template <typename T, typename Op>
class CudaCrossIntegrationTask final
    : public detail::CudaBlockIntegrationTask<T, Op, DenseResultWriter<T>> {
 public:
  CudaCrossIntegrationTask(std::shared_ptr<const CudaPcfDataManager<T>> x,
                           std::shared_ptr<const CudaPcfDataManager<T>> y, Op op, Window<T> window,
                           DenseResultWriter<T> writer, std::vector<int> devices,
                           CudaExecutionConfig cfg)
      : detail::CudaBlockIntegrationTask<T, Op, DenseResultWriter<T>>(
            std::move(x), std::move(y), op, window, writer, BlockMode::Full,
            TriangleSkipMode::None, std::move(devices), std::move(cfg)) {}
};

// The host data of a collection as a CUDA data manager (shared, no copy;
// keeps the collection alive).
template <typename T>
std::shared_ptr<const CudaPcfDataManager<T>> cuda_data_of(
    std::shared_ptr<const PcfCollection<T>> pcfs) {
  std::shared_ptr<const PcfDataManager<T>> host(pcfs, &pcfs->data());
  return std::make_shared<CudaPcfDataManager<T>>(std::move(host));
}

// Checks a configuration before a task is made (device ids, fraction).
std::vector<int> validated_devices(const CudaExecutionConfig& cfg);

}  // namespace mpcf::cuda
