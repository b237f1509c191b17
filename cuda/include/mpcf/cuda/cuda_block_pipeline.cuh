// CudaBlockPipeline<BlockOp>: runs a BlockScheduler's blocks on one or more
// GPUs, generic over the function type (the BlockOp policy, see
// pcf_block_op.cuh).
//
// One worker thread per GPU takes the next block from a shared queue (the
// scheduler's list, largest first). Each worker owns its GpuContext (a
// compute and a download stream), two device output buffers, two pinned host
// buffers and its BlockOp storage; workers share only the queue counter and
// the caller's output, where blocks never overlap. Per block:
//
//   1. zero output buffer s and enqueue upload + kernel (exec_block) on the
//      compute stream;
//   2. while that kernel runs, wait for the previous block's download
//      (buffer 1-s), scatter it through the result writer (several host
//      threads for large blocks) and report its pairs as done;
//   3. enqueue the download of buffer s on the download stream, after the
//      kernel (an event orders the two streams); swap s.
//
// Cancellation is checked before every block and before every scatter. The
// first failure of any worker (CUDA error, out of memory, a non-zero skipped
// entry found by the writer) stops all workers at their next block; run()
// then rethrows it, and the task poisons the output.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_resources.cuh"

namespace mpcf::cuda {

namespace detail {

// Calls scatter on row slices of a downloaded block from up to `threads`
// host threads (rows are disjoint, so are their output entries).
template <typename T, typename ScatterFn>
void scatter_in_slices(const BlockInfo& block, const T* buf, unsigned threads,
                       const ScatterFn& scatter) {
  constexpr std::uint64_t kMinElementsPerSlice = std::uint64_t(1) << 18;
  const std::uint64_t bySize = std::max<std::uint64_t>(1, block.elements() / kMinElementsPerSlice);
  const std::size_t slices = static_cast<std::size_t>(
      std::min<std::uint64_t>({static_cast<std::uint64_t>(std::max(threads, 1u)), bySize,
                               static_cast<std::uint64_t>(block.n_rows())}));
  if (slices <= 1) {
    scatter(block, buf);
    return;
  }
  auto slice = [&](std::size_t s) {
    BlockInfo part = block;
    const std::size_t rows = block.n_rows();
    const std::size_t begin = rows * s / slices;
    const std::size_t end = rows * (s + 1) / slices;  // exclusive
    part.rows = Band{block.rows.first + begin, block.rows.first + end - 1};
    scatter(part, buf + begin * block.n_cols());
  };
  std::vector<std::exception_ptr> errors(slices);
  std::vector<std::thread> helpers;
  helpers.reserve(slices - 1);
  auto guarded = [&](std::size_t s) {
    try {
      slice(s);
    } catch (...) {
      errors[s] = std::current_exception();
    }
  };
  try {
    for (std::size_t s = 1; s < slices; ++s) helpers.emplace_back(guarded, s);
  } catch (...) {
    // Could not start a helper: do its slice here instead.
    for (std::size_t s = helpers.size() + 1; s < slices; ++s) guarded(s);
  }
  guarded(0);
  for (auto& h : helpers) h.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace detail

template <typename BlockOp>
class CudaBlockPipeline {
 public:
  using value_type = typename BlockOp::value_type;
  // Stores a downloaded block (or a row slice of it) into the final output.
  // Called concurrently for disjoint blocks.
  using ScatterFn = std::function<void(const BlockInfo&, const value_type*)>;

  CudaBlockPipeline(const BlockOp& op, const BlockScheduler& scheduler, std::vector<int> devices,
                    unsigned scatterThreadsPerGpu)
      : op_(op),
        scheduler_(scheduler),
        devices_(std::move(devices)),
        scatterThreads_(std::max(scatterThreadsPerGpu, 1u)),
        blocksPerDevice_(devices_.size(), 0) {}

  // Computes every block. Throws the first failure; Cancelled when the task
  // was cancelled before every block was stored.
  void run(TaskControl& control, const ScatterFn& scatter) {
    next_.store(0);
    std::fill(blocksPerDevice_.begin(), blocksPerDevice_.end(), 0);
    if (!scheduler_.blocks().empty()) {
      const int workers = static_cast<int>(
          std::min<std::size_t>(devices_.size(), scheduler_.blocks().size()));
      run_on_threads(workers, control,
                     [&](int w) { worker(static_cast<std::size_t>(w), control, scatter); });
    }
    control.throw_if_cancelled();
  }

  // Blocks each device computed in the last run (index = position in the
  // device list).
  const std::vector<std::uint64_t>& blocks_per_device() const noexcept { return blocksPerDevice_; }

 private:
  using T = value_type;

  void worker(std::size_t w, TaskControl& control, const ScatterFn& scatter) {
    const auto& blocks = scheduler_.blocks();
    const TriangleSkipMode skip = op_.skip_mode();
    const std::size_t capacity = static_cast<std::size_t>(scheduler_.max_block_elements());

    GpuContext ctx(devices_[w]);
    auto storage = op_.init_gpu_storage(ctx, scheduler_);
    DeviceArray<T> deviceOut[2] = {ctx.allocate<T>(capacity), ctx.allocate<T>(capacity)};
    PinnedHostBuffer<T> hostOut[2] = {PinnedHostBuffer<T>(capacity), PinnedHostBuffer<T>(capacity)};
    CudaEvent computed[2];
    CudaEvent downloaded[2];
    // Destroyed first: no buffer is released while the GPU may still use it.
    struct Drain {
      GpuContext& ctx;
      ~Drain() { ctx.synchronize_noexcept(); }
    } drain{ctx};

    int pending = -1;  // buffer whose download is in flight
    const BlockInfo* pendingBlock = nullptr;
    auto store_pending = [&] {
      downloaded[pending].synchronize();
      control.throw_if_cancelled();
      detail::scatter_in_slices(*pendingBlock, hostOut[pending].data(), scatterThreads_, scatter);
      control.add_done(computed_pairs(*pendingBlock, skip));
      ++blocksPerDevice_[w];
      pending = -1;
    };

    int s = 0;
    for (;;) {
      control.throw_if_cancelled();
      const std::size_t k = next_.fetch_add(1, std::memory_order_relaxed);
      if (k >= blocks.size()) break;
      const BlockInfo& block = blocks[k];
      const std::size_t bytes = static_cast<std::size_t>(block.elements()) * sizeof(T);
      MPCF_CUDA_TRY(cudaMemsetAsync(deviceOut[s].data(), 0, bytes, ctx.compute_stream()));
      op_.exec_block(storage, block, deviceOut[s].data(), ctx);
      computed[s].record(ctx.compute_stream());

      if (pending >= 0) store_pending();

      computed[s].make_wait(ctx.download_stream());
      MPCF_CUDA_TRY(cudaMemcpyAsync(hostOut[s].data(), deviceOut[s].data(), bytes,
                                    cudaMemcpyDeviceToHost, ctx.download_stream()));
      downloaded[s].record(ctx.download_stream());
      pending = s;
      pendingBlock = &block;
      s ^= 1;
    }
    if (pending >= 0) store_pending();
    // Surface asynchronous kernel faults that no wait has reported yet.
    MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.compute_stream()));
  }

  const BlockOp& op_;
  const BlockScheduler& scheduler_;
  std::vector<int> devices_;
  unsigned scatterThreads_;
  std::atomic<std::size_t> next_{0};
  std::vector<std::uint64_t> blocksPerDevice_;  // element w written by worker w only
};

}  // namespace mpcf::cuda
