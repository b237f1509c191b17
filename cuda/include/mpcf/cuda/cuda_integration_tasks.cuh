// CudaBlockTask: the GPU counterpart of core's CpuBlockTask, generic over the
// BlockOp (block_op.cuh): it plans the blocks (plan_blocks), prepares the
// request's consumer, runs the CudaBlockPipeline with the consumer's
// GpuBlockStage (make_stage, gpu_block_stage.cuh; the stages:
// gpu_block_stages.cuh) and finishes (or, on failure, poisons) the consumer.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/cuda/block_matrix_support.cuh"
#include "mpcf/cuda/block_op.cuh"
#include "mpcf/cuda/cuda_block_pipeline.cuh"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"
#include "mpcf/cuda/gpu_block_stages.cuh"
#include "mpcf/cuda/object_block_op.cuh"
#include "mpcf/cuda/pcf_block_op.cuh"

namespace mpcf::cuda {

// The block decomposition of an nRows x nCols output on `devices`, and
// whether each GPU holds the whole input (resident) or receives each block's
// functions:
//  * largest block: cfg.maxBlockElements when given (taken as is: a budget
//    larger than the device fails with OutOfMemory when the buffers are
//    allocated), else the output half of the budgeted free memory shared by
//    the two output buffers, and never more than the whole output;
//  * split hint: cfg.splitHint, else 32 per GPU (1 with an explicit
//    maxBlockElements, which then is the size of the largest block);
//  * occupancy floor: cfg.minBlockSide, else the larger of
//    get_min_block_side(devices) and kDefaultMinBlockSide (a block is one
//    sequence of kernel launches on one GPU: smaller blocks leave the GPU
//    part-idle at the end of each launch).
// The GPU storage, with what the consumer's stage keeps on each GPU
// (stageBytes(largest block rows, cols): a reduction's lists or sums, which
// live for the whole run), must fit the data half of the budget and a
// block's breakpoints 32-bit indices: the input is resident when it fits
// with the largest block's layout, else streamed, and the block side is
// halved until the streamed data fits (OutOfMemory when not even one pair
// fits). The storage has two slots (blocks overlap on two streams) when they
// fit and cfg.overlapBlocks, else one.
struct BlockPlan {
  BlockScheduler scheduler;
  bool resident = false;
  int slots = 1;  // the op's storage slots: 2 let consecutive blocks overlap
};

constexpr std::uint64_t kDefaultMinBlockSide = 2048;

using StageBytes = std::function<std::uint64_t(std::size_t, std::size_t)>;

template <typename BlockOp>
BlockPlan plan_blocks(std::size_t nRows, std::size_t nCols, BlockMode mode, const BlockOp& op,
                      const std::vector<int>& devices, const CudaExecutionConfig& cfg,
                      const StageBytes& stageBytes = nullptr) {
  using T = typename BlockOp::value_type;
  BlockScheduler::Config c;
  c.nRows = nRows;
  c.nCols = nCols;
  c.mode = mode;
  if (nRows == 0 || nCols == 0) {
    c.maxOutputElements = 1;
    return BlockPlan{BlockScheduler(c), false, 1};
  }
  const std::uint64_t whole = static_cast<std::uint64_t>(nRows) * nCols;
  // One look at free memory for both halves of the budget (the output half
  // is get_max_output_elements' count).
  const std::uint64_t dataBudget = get_data_budget_bytes(devices, cfg.memoryFraction);
  if (cfg.maxBlockElements > 0) {
    c.maxOutputElements = cfg.maxBlockElements;
    c.nSplitsHint = cfg.splitHint ? cfg.splitHint : 1;
  } else {
    const std::uint64_t perBuffer = dataBudget / sizeof(T) / 2;
    c.maxOutputElements = std::max<std::uint64_t>(1, std::min(perBuffer, whole));
    c.nSplitsHint = cfg.splitHint ? cfg.splitHint : 32 * devices.size();
  }
  c.minBlockSide = cfg.minBlockSide
                       ? cfg.minBlockSide
                       : std::max<std::uint64_t>(get_min_block_side(devices), kDefaultMinBlockSide);

  for (;;) {
    BlockScheduler s(c);
    const std::size_t mr = s.max_block_rows();
    const std::size_t mc = s.max_block_cols();
    const bool indicesFit = op.indices_fit(mr, mc);
    const std::uint64_t stage = stageBytes ? stageBytes(mr, mc) : 0;
    // Resident before streamed, two slots before one.
    for (const bool resident : {true, false}) {
      if (!indicesFit || (resident && !op.resident_possible())) continue;
      for (const int slots : {2, 1}) {
        if (slots == 2 && !cfg.overlapBlocks) continue;
        if (stage <= dataBudget && op.gpu_storage_bytes(mr, mc, resident, slots) <= dataBudget - stage) {
          return BlockPlan{std::move(s), resident, slots};
        }
      }
    }
    if (stage > dataBudget) {
      throw OutOfMemory("the reduction keeps " + std::to_string(stage) +
                        " bytes on each GPU (its lists or sums of all " + std::to_string(nRows) +
                        " rows) but the budget leaves " + std::to_string(dataBudget) +
                        " bytes for data; use fewer rows per call (e.g. mpcf.dask) or the CPU");
    }
    const std::uint64_t dataBytes = op.gpu_storage_bytes(mr, mc, false, 1);
    // The side cannot shrink below 1, nor below n / BlockScheduler::kMaxBands.
    if (s.block_side() <= 1 || s.block_side() <= (std::max(nRows, nCols) + BlockScheduler::kMaxBands - 1) /
                                                     BlockScheduler::kMaxBands) {
      throw OutOfMemory("the function data of the smallest possible block (" +
                        std::to_string(mr) + " x " + std::to_string(mc) + " functions) needs " +
                        std::to_string(dataBytes) + " bytes of GPU memory but the budget leaves " +
                        std::to_string(dataBudget - stage) + " bytes for function data" +
                        (stage ? " (after the reduction's " + std::to_string(stage) + " bytes)"
                               : std::string()));
    }
    const std::uint64_t half = s.block_side() / 2;
    c.maxOutputElements = std::max<std::uint64_t>(1, half * half);
    c.nSplitsHint = 1;
    c.minBlockSide = 0;
  }
}

// Host threads per GPU for handing downloaded blocks to the consumer.
inline unsigned scatter_threads_per_gpu(std::size_t gpus) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<unsigned>(hw / static_cast<unsigned>(std::max<std::size_t>(gpus, 1)), 1u, 16u);
}

// A plane computed on GPUs by a BlockOp and handed, block by block, to a
// consumer through the stage for it (make_stage).
template <BlockOpFor BlockOp>
class CudaBlockTask final : public Work {
 public:
  using T = typename BlockOp::value_type;

  CudaBlockTask(BlockOp op, std::shared_ptr<BlockConsumer<T>> consumer, PairPlane plane,
                BlockMode mode, std::vector<int> devices, CudaExecutionConfig cfg)
      : blockOp_(std::move(op)),
        consumer_(std::move(consumer)),
        plane_(plane),
        mode_(mode),
        devices_(std::move(devices)),
        cfg_(std::move(cfg)) {}

  void run(TaskControl& control) override {
    const auto planStart = std::chrono::steady_clock::now();
    consumer_->prepare(plane_);
    auto stage = make_stage<T>(*consumer_, plane_);
    // Bin lower bounds for the consumers that give bounds (PcfBlockOp).
    if constexpr (requires { blockOp_.enable_bin_bounds(); }) {
      if (cfg_.binBounds && stage->gives_bounds()) blockOp_.enable_bin_bounds();
    }
    BlockPlan plan = plan_blocks(
        blockOp_.row_count(), blockOp_.col_count(), mode_, blockOp_, devices_, cfg_,
        [&](std::size_t mr, std::size_t mc) { return stage->device_bytes(mr, mc); });
    const BlockScheduler& scheduler = plan.scheduler;
    blockOp_.set_resident(plan.resident);
    blockOp_.set_slots(plan.slots);
    blockOp_.set_output_order(stage->order());
    slots_ = plan.slots;
    resident_ = plan.resident;
    blockCount_ = scheduler.blocks().size();
    std::uint64_t total = 0;
    for (const auto& b : scheduler.blocks()) total += computed_pairs(b, blockOp_.skip_mode());
    control.set_total(total);
    // The resident input goes to the GPUs that will have blocks in one pass
    // over the host data.
    const double planTime =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - planStart).count();
    double upload = 0;
    const std::size_t workers = std::min(devices_.size(), scheduler.blocks().size());
    if (plan.resident && cfg_.sharedUpload && workers > 0) {
      control.throw_if_cancelled();
      const auto t = std::chrono::steady_clock::now();
      blockOp_.upload_resident(std::vector<int>(devices_.begin(), devices_.begin() + workers));
      upload = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    }
    CudaBlockPipeline<BlockOp> pipeline(blockOp_, scheduler, devices_,
                                        scatter_threads_per_gpu(devices_.size()), plan.slots > 1);
    try {
      pipeline.run(control, *stage);
    } catch (...) {
      blocksPerDevice_ = pipeline.blocks_per_device();
      throw;
    }
    const auto ranAt = std::chrono::steady_clock::now();
    blocksPerDevice_ = pipeline.blocks_per_device();
    stats_ = pipeline.stats();
    statsPerDevice_ = pipeline.stats_per_device();
    stats_.upload = upload;
    stats_.plan = planTime;
    stats_.total += upload;
    for (auto& st : statsPerDevice_) st.upload = upload;
    consumer_->finish();
    stats_.teardown = std::chrono::duration<double>(std::chrono::steady_clock::now() - ranAt).count();
  }

  void discard_output() noexcept override { consumer_->poison(); }

  // After run(): blocks of the decomposition, how many each device took,
  // whether the input was resident on the GPUs and where the time went.
  std::size_t block_count() const noexcept { return blockCount_; }
  const std::vector<std::uint64_t>& blocks_per_device() const noexcept { return blocksPerDevice_; }
  bool resident() const noexcept { return resident_; }
  int slots() const noexcept { return slots_; }
  const PipelineStats& stats() const noexcept { return stats_; }
  const std::vector<PipelineStats>& stats_per_device() const noexcept { return statsPerDevice_; }
  BlockOp& block_op() noexcept { return blockOp_; }

 private:
  BlockOp blockOp_;
  std::shared_ptr<BlockConsumer<T>> consumer_;
  PairPlane plane_;
  BlockMode mode_;
  std::vector<int> devices_;
  CudaExecutionConfig cfg_;
  std::size_t blockCount_ = 0;
  bool resident_ = false;
  int slots_ = 1;
  std::vector<std::uint64_t> blocksPerDevice_;
  PipelineStats stats_;
  std::vector<PipelineStats> statsPerDevice_;
};

// The host data of a collection as a CUDA data manager (shared, no copy;
// keeps the collection alive), named by the collection's id so that its
// device copy is kept between computations.
template <typename T>
std::shared_ptr<const CudaPcfDataManager<T>> cuda_data_of(
    std::shared_ptr<const PcfCollection<T>> pcfs) {
  const std::uint64_t id = pcfs->id();
  std::shared_ptr<const PcfDataManager<T>> host(pcfs, &pcfs->data());
  return std::make_shared<CudaPcfDataManager<T>>(std::move(host), id);
}

// Checks a configuration before a task is made (device ids, fraction).
std::vector<int> validated_devices(const CudaExecutionConfig& cfg);

// The PCF task of a request with operation functor Op (the factory's work
// after dispatch_operation).
template <typename T, typename Op>
std::unique_ptr<CudaBlockTask<PcfBlockOp<T, Op>>> make_pcf_task(const PairRequest<T>& request,
                                                                Op op, std::vector<int> devices,
                                                                const CudaExecutionConfig& cfg) {
  auto rows = cuda_data_of<T>(request.x);
  auto cols = request.symmetric ? rows : cuda_data_of<T>(request.y);
  const PairPlane plane = request.plane();
  return std::make_unique<CudaBlockTask<PcfBlockOp<T, Op>>>(
      PcfBlockOp<T, Op>(std::move(rows), std::move(cols), op, request.window, plane.skip),
      request.consumer, plane, request.block_mode(), std::move(devices), cfg);
}

// The task of a request that PcfBlockOp does not take (piecewise linear
// functions, objects of several components), walked by Walk (PairWalk or
// PlfPairWalk) with operation functor Op.
template <typename T, typename Op, template <bool, typename, typename> class Walk>
std::unique_ptr<CudaBlockTask<ObjectBlockOp<T, Op, Walk>>> make_object_task(
    const PairRequest<T>& request, Op op, std::vector<int> devices,
    const CudaExecutionConfig& cfg) {
  auto rows = cuda_data_of<T>(request.x);
  auto cols = request.symmetric ? rows : cuda_data_of<T>(request.y);
  const PairPlane plane = request.plane();
  return std::make_unique<CudaBlockTask<ObjectBlockOp<T, Op, Walk>>>(
      ObjectBlockOp<T, Op, Walk>(std::move(rows), std::move(cols), op, request.window, plane.skip,
                                 request.components),
      request.consumer, plane, request.block_mode(), std::move(devices), cfg);
}

}  // namespace mpcf::cuda
