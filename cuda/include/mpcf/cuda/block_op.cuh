// The BlockOp contract: what the generic GPU engine (plan_blocks,
// CudaBlockPipeline, CudaBlockTask) needs from a function type's policy.
// PcfBlockOp (pcf_block_op.cuh) is the PCF one; a new function type (e.g.
// piecewise linear) brings its own point struct, kernels and BlockOp and
// leaves the scheduler, pipeline, stages and consumers as they are. What a
// BlockOp needs that is not specific to its function type it composes: the
// host layout plan (block_layout_plan.hpp), its inputs on the GPUs
// (PlaneCollections, plane_collections.cuh) and pinned staging
// (PinnedStagingRing, pinned_staging.cuh).
//
//   value_type                 the scalar of the block values
//   GpuStorage                 one GPU's device data, movable
//   skip_mode()                which pairs of the plane are computed
//   row_count(), col_count()   the plane's size
//   set_output_order(order)    row- or column-major blocks (before storage)
//   set_resident(bool)         whole inputs on every GPU, or per block
//   set_slots(n)               storage slots (2: consecutive blocks overlap)
//   resident_possible()        whether the inputs fit resident indices
//   indices_fit(rows, cols)    whether a block of that size fits 32-bit indices
//   gpu_storage_bytes(rows, cols, resident, slots)
//                              device bytes per GPU for such blocks
//   upload_resident(devices)   sends resident inputs to those GPUs at once
//   init_gpu_storage(ctx, scheduler)
//                              allocates (and, resident, fills) one GPU's data
//   exec_block(storage, block, out, ctx, slot)
//                              enqueues the block's kernels on compute stream
//                              `slot`, writing block values into `out`
//                              (zeroed; skipped pairs stay 0); no waiting
//   exec_block(..., slot, bounds)
//                              optional: the same, told which values the
//                              stage does not need exactly (PairBounds,
//                              pair_bounds.hpp); the pipeline passes them
//                              where this form exists (PcfBlockOp)
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/cuda/cuda_context.cuh"

namespace mpcf::cuda {

// What CudaBlockPipeline uses: computing blocks.
template <typename Op>
concept PipelineBlockOp = requires(const Op& cop, typename Op::GpuStorage& storage,
                                   GpuContext& ctx, const BlockScheduler& scheduler,
                                   const BlockInfo& block, typename Op::value_type* out) {
  typename Op::value_type;
  typename Op::GpuStorage;
  requires std::movable<typename Op::GpuStorage>;
  { cop.skip_mode() } -> std::same_as<TriangleSkipMode>;
  { cop.init_gpu_storage(ctx, scheduler) } -> std::same_as<typename Op::GpuStorage>;
  cop.exec_block(storage, block, out, ctx, 0);
};

// The whole contract: what plan_blocks and CudaBlockTask use as well.
template <typename Op>
concept BlockOpFor = PipelineBlockOp<Op> && requires(Op& op, const Op& cop,
                                                     const std::vector<int>& devices) {
  { cop.row_count() } -> std::convertible_to<std::size_t>;
  { cop.col_count() } -> std::convertible_to<std::size_t>;
  op.set_output_order(BlockOrder::RowMajor);
  op.set_resident(true);
  op.set_slots(2);
  { cop.resident_possible() } -> std::convertible_to<bool>;
  { cop.indices_fit(std::size_t{}, std::size_t{}) } -> std::convertible_to<bool>;
  { cop.gpu_storage_bytes(std::size_t{}, std::size_t{}, true, 2) } -> std::convertible_to<std::uint64_t>;
  op.upload_resident(devices);
};

}  // namespace mpcf::cuda
