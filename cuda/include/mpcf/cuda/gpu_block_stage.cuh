// GpuBlockStage: what happens to a computed block on its GPU before its
// result reaches the host consumer (block_consumer.hpp), as the
// CudaBlockPipeline drives it:
//
//   order()          the layout the block kernels write the block in
//   init_device()    per GPU: buffers (two slots: consecutive blocks
//                    alternate) and uploads (V of a mat-vec)
//   pair_bounds()    before a block's kernels: the values of the block the
//                    stage does not need exactly (pair_bounds.hpp), for
//                    BlockOps whose kernels can stop such pairs early
//   enqueue()        on the block's compute stream, after its kernels: the
//                    device reduction of the block (or nothing); returns
//                    what to download, `lines` lines of `lineBytes` each
//   consume()        lines [first, first + count) of that download, in host
//                    memory, handed to the consumer; called concurrently
//                    for disjoint line ranges
//   finish_device()  per GPU, after its last block: what the stage keeps on
//                    the device, handed to the consumer
//
// A stage sees block values only (T), never the function type: a new
// function type (its BlockOp) uses every stage as it is.
//
// Which stage a consumer gets (make_stage): each consumer says its kind
// (ConsumerKind, core), and GpuStageFor<kind> makes its stage.
// GpuStageFor is specialised next to each stage, not here:
//  * identity_stage.cuh: IdentityStage (matrix writer, block stream; kNN
//    with k beyond the device lists): downloads the block itself, lines =
//    rows (or columns of a column-major block); for the stream, diagonal
//    blocks of the symmetric plane are completed on the device first;
//    GpuStageFor<Stream>;
//  * direct_matrix_stage.cuh: DirectMatrixStage (the matrix writer whose
//    result lies in registered host memory): a copy kernel writes the block
//    straight into the result, nothing is downloaded; GpuStageFor<Matrix>
//    (IdentityStage otherwise);
//  * knn_stage.cuh: KnnStage: lists of the k smallest per row of the plane,
//    kept and merged on the device, handed over by finish_device();
//    GpuStageFor<Knn> (IdentityStage when k or the plane is out of its
//    range);
//  * matvec_stage.cuh: MatvecStage: the exact level sums of every output,
//    kept and added on the device, handed over by finish_device();
//    GpuStageFor<Matvec>.
// gpu_block_stages.cuh includes them all. A new consumer brings its kind
// (core), a stage header with its GpuStageFor specialisation, and a line in
// gpu_block_stages.cuh; this file does not change.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/pair_bounds.hpp"

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
  // The device bytes init_device allocates on each GPU for a scheduler whose
  // largest block is maxRows x maxCols (the planner counts them in the GPU
  // memory budget).
  virtual std::uint64_t device_bytes(std::size_t /*maxRows*/, std::size_t /*maxCols*/) const {
    return 0;
  }
  // The bounds above which the block's values are not needed exactly, on
  // this GPU (device pointers valid until finish_device); none by default.
  virtual PairBounds<T> pair_bounds(const DeviceState&, const BlockInfo&) const { return {}; }
  // Whether pair_bounds gives bounds (the BlockOp then prepares for them
  // before the memory is planned).
  virtual bool gives_bounds() const { return false; }
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
inline unsigned grid_for(std::uint64_t threads, unsigned perBlock) {
  const std::uint64_t g = (threads + perBlock - 1) / perBlock;
  if (g > 0x7fffffffull) throw InvalidArgument("a block is too large for one kernel launch");
  return static_cast<unsigned>(std::max<std::uint64_t>(g, 1));
}
}  // namespace detail

// How the stage of the consumers of kind K is made. Each specialisation
// (next to its stage) has
//   template <typename T> using Consumer = ...;   the consumer class of kind K
//   template <typename T>
//   static std::unique_ptr<GpuBlockStage<T>> make(Consumer<T>&, const PairPlane&);
// The primary template is only declared: a kind whose specialisation is not
// visible where make_stage is instantiated does not compile.
template <ConsumerKind K>
struct GpuStageFor;

namespace detail {
template <ConsumerKind K, typename T>
std::unique_ptr<GpuBlockStage<T>> make_stage_for(BlockConsumer<T>& consumer,
                                                 const PairPlane& plane) {
  using Consumer = typename GpuStageFor<K>::template Consumer<T>;
  auto* typed = dynamic_cast<Consumer*>(&consumer);
  if (!typed) {
    throw std::logic_error("make_stage: the consumer of kind " +
                           std::to_string(static_cast<int>(K)) +
                           " is not of that kind's consumer class");
  }
  return GpuStageFor<K>::template make<T>(*typed, plane);
}

template <typename T, int... K>
std::unique_ptr<GpuBlockStage<T>> make_stage_of_kind(BlockConsumer<T>& consumer,
                                                     const PairPlane& plane,
                                                     std::integer_sequence<int, K...>) {
  const ConsumerKind kind = consumer.kind();
  std::unique_ptr<GpuBlockStage<T>> stage;
  ((kind == static_cast<ConsumerKind>(K)
        ? (stage = make_stage_for<static_cast<ConsumerKind>(K), T>(consumer, plane), true)
        : false) ||
   ...);
  if (!stage) {
    throw std::logic_error("make_stage: no GPU stage for consumer kind " +
                           std::to_string(static_cast<int>(kind)));
  }
  return stage;
}
}  // namespace detail

// The stage for a request's consumer: GpuStageFor<consumer.kind()>.
template <typename T>
std::unique_ptr<GpuBlockStage<T>> make_stage(BlockConsumer<T>& consumer, const PairPlane& plane) {
  return detail::make_stage_of_kind<T>(consumer, plane,
                                       std::make_integer_sequence<int, kConsumerKindCount>{});
}

}  // namespace mpcf::cuda
