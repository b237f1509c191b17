// CudaBlockPipeline<BlockOp>: runs a BlockScheduler's blocks on one or more
// GPUs, generic over the function type (the BlockOp policy, see
// pcf_block_op.cuh).
//
// One worker thread per GPU takes the next block from a shared queue (the
// scheduler's list, largest first). Each worker owns its GpuContext (two
// compute streams and a download stream), two device output buffers, a
// small ring of pinned host chunks, a pool of host threads, its BlockOp
// storage and its GpuBlockStage state; workers share only the queue counter
// and the consumer, which takes disjoint pieces concurrently. Per block:
//
//   1. zero output buffer s and enqueue upload + kernel (exec_block with
//      slot s) on compute stream s, then the stage's device work (a
//      reduction of the block, or nothing): consecutive blocks alternate
//      streams, so a block's kernels fill the GPU while the previous block's
//      last thread blocks finish;
//   2. while that runs, consume the previous block (slot 1-s): what its
//      stage asked to download (the block itself, or its reduction: lines of
//      equal length) goes through the pinned ring chunk by chunk (whole
//      lines); each chunk is handed to the stage by the pool as soon as it
//      has arrived, and the chunk that reuses its slot is enqueued right
//      after; then report the block's pairs as done;
//   3. enqueue the first chunks of slot s on the download stream, after the
//      stage's work (an event orders the two streams); swap s.
//
// The pinned memory is a few chunks (PinnedChunk, 8 MiB each, cached across
// computations), whatever the block size: page-locking host memory costs
// milliseconds, so it is kept small and reused. The pipeline records where
// its time went (PipelineStats), so the overlap of transfers and compute can
// be checked with timings per stage.
//
// Cancellation is checked before every block and before every chunk. The
// first failure of any worker (CUDA error, out of memory, a non-zero skipped
// entry found by the writer, a cancelling callback) stops all workers at
// their next block; run() then rethrows it, and the task poisons the output.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/cuda/block_op.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_resources.cuh"
#include "mpcf/cuda/gpu_block_stage.cuh"
#include "mpcf/cuda/slice_pool.hpp"

namespace mpcf::cuda {

namespace detail {

// Hands lines [first, first + count) of a downloaded block result, at
// `host`, to the stage in slices run by the pool's threads (disjoint line
// ranges).
template <typename Stage>
void consume_in_slices(Stage& stage, const BlockInfo& block, std::size_t first,
                       std::size_t count, const unsigned char* host, std::size_t lineBytes,
                       SlicePool& pool) {
  constexpr std::uint64_t kMinBytesPerSlice = std::uint64_t(1) << 18;
  const std::uint64_t bySize =
      std::max<std::uint64_t>(1, std::uint64_t(count) * lineBytes / kMinBytesPerSlice);
  const std::size_t slices = static_cast<std::size_t>(std::min<std::uint64_t>(
      {static_cast<std::uint64_t>(pool.threads()), bySize, static_cast<std::uint64_t>(count)}));
  if (slices <= 1) {
    stage.consume(block, first, count, host);
    return;
  }
  pool.run(slices, [&](std::size_t s) {
    const std::size_t begin = count * s / slices;
    const std::size_t end = count * (s + 1) / slices;  // exclusive
    stage.consume(block, first + begin, end - begin, host + begin * lineBytes);
  });
}

// Seconds since `start` (steady clock).
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace detail

// Where a run's time went, in seconds. Per device (stats_per_device) or, in
// stats(), host stages summed over the workers (one per GPU); gpu_compute is
// the time between the start and the end of each block's GPU work (uploads,
// layout and kernels), summed over blocks (and GPUs).
struct PipelineStats {
  double total = 0;        // wall time of run() (tasks: with `upload`)
  double upload = 0;       // tasks: the resident input sent to every GPU before run()
  double plan = 0;         // tasks: the block plan, the consumer's and stage's preparation
  double teardown = 0;     // tasks: from the end of run() to the consumer's finish
  double setup = 0;        // contexts, device storage, buffers, scatter threads
  double context = 0;      // of which the GPU context (device, streams)
  double storage = 0;      // of which the BlockOp's storage (resident uploads included)
  double buffers = 0;      // of which the device output buffers
  double chunks = 0;       // of which the pinned download chunks
  double first_block = 0;  // from the start of run() to this worker's first block
  double finish = 0;       // from the start of run() to this worker's end (stats(): the last)
  double enqueue = 0;      // host time preparing and enqueuing blocks
  double wait = 0;         // waiting for a block's download
  double scatter = 0;      // handing downloaded blocks to the stage (and its consumer)
  double gpu_compute = 0;  // GPU time per block, summed (consecutive blocks overlap)
  std::uint64_t blocks = 0;
};

template <typename BlockOp>
class CudaBlockPipeline {
  static_assert(PipelineBlockOp<BlockOp>, "CudaBlockPipeline needs a BlockOp (block_op.cuh)");

 public:
  using value_type = typename BlockOp::value_type;
  using Stage = GpuBlockStage<value_type>;

  // hostThreadsPerGpu: threads handing downloaded chunks to the stage.
  // overlapBlocks: consecutive blocks alternate compute streams (else all
  // run on stream 0).
  CudaBlockPipeline(const BlockOp& op, const BlockScheduler& scheduler, std::vector<int> devices,
                    unsigned hostThreadsPerGpu, bool overlapBlocks = true)
      : op_(op),
        scheduler_(scheduler),
        devices_(std::move(devices)),
        hostThreads_(std::max(hostThreadsPerGpu, 1u)),
        overlapBlocks_(overlapBlocks),
        blocksPerDevice_(devices_.size(), 0),
        statsPerDevice_(devices_.size()) {}

  // Computes every block and hands each to `stage`. Throws the first
  // failure; Cancelled when the task was cancelled before every block was
  // consumed.
  void run(TaskControl& control, Stage& stage) {
    const auto start = std::chrono::steady_clock::now();
    next_.store(0);
    std::fill(blocksPerDevice_.begin(), blocksPerDevice_.end(), 0);
    std::fill(statsPerDevice_.begin(), statsPerDevice_.end(), PipelineStats{});
    if (!scheduler_.blocks().empty()) {
      const int workers = static_cast<int>(
          std::min<std::size_t>(devices_.size(), scheduler_.blocks().size()));
      run_on_threads(workers, control, [&](int w) {
        worker(static_cast<std::size_t>(w), control, stage, start);
      });
    }
    stats_ = PipelineStats{};
    for (const auto& st : statsPerDevice_) {
      stats_.setup += st.setup;
      stats_.context += st.context;
      stats_.storage += st.storage;
      stats_.buffers += st.buffers;
      stats_.chunks += st.chunks;
      stats_.first_block = std::max(stats_.first_block, st.first_block);
      stats_.finish = std::max(stats_.finish, st.finish);
      stats_.enqueue += st.enqueue;
      stats_.wait += st.wait;
      stats_.scatter += st.scatter;
      stats_.gpu_compute += st.gpu_compute;
      stats_.blocks += st.blocks;
    }
    stats_.total = detail::seconds_since(start);
    control.throw_if_cancelled();
  }

  // Timings of the last run(): summed over the devices, and per device (index
  // = position in the device list).
  const PipelineStats& stats() const noexcept { return stats_; }
  const std::vector<PipelineStats>& stats_per_device() const noexcept { return statsPerDevice_; }

  // Blocks each device computed in the last run (index = position in the
  // device list).
  const std::vector<std::uint64_t>& blocks_per_device() const noexcept { return blocksPerDevice_; }

 private:
  using T = value_type;

  // Pinned chunks of the download ring.
  static constexpr int kChunks = 3;

  void worker(std::size_t w, TaskControl& control, Stage& stage,
              std::chrono::steady_clock::time_point runStart) {
    using Clock = std::chrono::steady_clock;
    const auto& blocks = scheduler_.blocks();
    const TriangleSkipMode skip = op_.skip_mode();
    const std::size_t capacity = static_cast<std::size_t>(scheduler_.max_block_elements());
    PipelineStats& stats = statsPerDevice_[w];
    auto t0 = Clock::now();

    GpuContext ctx(devices_[w]);
    stats.context += detail::seconds_since(t0);
    auto ts = Clock::now();
    auto storage = op_.init_gpu_storage(ctx, scheduler_);
    auto stageState = stage.init_device(ctx, scheduler_);
    stats.storage += detail::seconds_since(ts);
    ts = Clock::now();
    DeviceArray<T> deviceOut[2] = {ctx.allocate<T>(capacity), ctx.allocate<T>(capacity)};
    stats.buffers += detail::seconds_since(ts);
    ts = Clock::now();
    // A chunk holds at least one whole line of any block's download: cached
    // pinned chunks, or buffers of their own for longer lines.
    const std::size_t chunkBytes = std::max(PinnedChunk::bytes(), stage.max_line_bytes(scheduler_));
    std::vector<PinnedChunk> cachedChunks;
    std::vector<PinnedHostBuffer<unsigned char>> ownChunks;
    unsigned char* chunks[kChunks];
    for (int c = 0; c < kChunks; ++c) {
      if (chunkBytes <= PinnedChunk::bytes()) {
        cachedChunks.emplace_back();
        chunks[c] = cachedChunks.back().template as<unsigned char>();
      } else {
        ownChunks.emplace_back(chunkBytes);
        chunks[c] = ownChunks.back().data();
      }
    }
    stats.chunks += detail::seconds_since(ts);
    CudaEvent chunkReady[kChunks];
    CudaEvent started[2] = {CudaEvent(true), CudaEvent(true)};
    CudaEvent computed[2] = {CudaEvent(true), CudaEvent(true)};
    detail::SlicePool pool(hostThreads_ - 1);
    // Destroyed first: no buffer is released while the GPU may still use it.
    struct Drain {
      GpuContext& ctx;
      ~Drain() { ctx.synchronize_noexcept(); }
    } drain{ctx};

    // The download of the block in slot `buf` as chunks of whole lines.
    struct Chunked {
      const BlockInfo* block = nullptr;
      int buf = -1;
      typename Stage::Download download;
      std::size_t linesPerChunk = 0;
      std::size_t count = 0;
    } pending;
    auto chunk_lines = [&](const Chunked& p, std::size_t c, std::size_t& first) {
      first = c * p.linesPerChunk;
      return std::min(p.download.lines, first + p.linesPerChunk) - first;
    };
    auto enqueue_chunk = [&](const Chunked& p, std::size_t c) {
      std::size_t first = 0;
      const std::size_t lines = chunk_lines(p, c, first);
      const int slot = static_cast<int>(c % kChunks);
      MPCF_CUDA_TRY(cudaMemcpyAsync(chunks[slot], p.download.data + first * p.download.lineBytes,
                                    lines * p.download.lineBytes, cudaMemcpyDeviceToHost,
                                    ctx.download_stream()));
      chunkReady[slot].record(ctx.download_stream());
    };
    auto consume_pending = [&] {
      float ms = 0;
      bool timed = false;
      if (pending.count == 0) {
        // Nothing to download (the stage keeps its result on the device):
        // the block is done when its stream passes `computed`.
        auto t = Clock::now();
        computed[pending.buf].synchronize();
        stats.wait += detail::seconds_since(t);
        MPCF_CUDA_TRY(cudaEventElapsedTime(&ms, started[pending.buf].get(),
                                           computed[pending.buf].get()));
        stats.gpu_compute += ms / 1000.0;
        control.throw_if_cancelled();
      }
      for (std::size_t c = 0; c < pending.count; ++c) {
        const int slot = static_cast<int>(c % kChunks);
        auto t = Clock::now();
        chunkReady[slot].synchronize();
        stats.wait += detail::seconds_since(t);
        if (!timed) {
          MPCF_CUDA_TRY(cudaEventElapsedTime(&ms, started[pending.buf].get(),
                                             computed[pending.buf].get()));
          stats.gpu_compute += ms / 1000.0;
          timed = true;
        }
        control.throw_if_cancelled();
        t = Clock::now();
        std::size_t first = 0;
        const std::size_t lines = chunk_lines(pending, c, first);
        detail::consume_in_slices(stage, *pending.block, first, lines, chunks[slot],
                                  pending.download.lineBytes, pool);
        stats.scatter += detail::seconds_since(t);
        if (c + kChunks < pending.count) enqueue_chunk(pending, c + kChunks);
      }
      control.add_done(computed_pairs(*pending.block, skip));
      ++blocksPerDevice_[w];
      ++stats.blocks;
      pending = Chunked{};
    };
    stats.setup += detail::seconds_since(t0);
    stats.first_block = detail::seconds_since(runStart);

    int s = 0;
    for (;;) {
      control.throw_if_cancelled();
      const std::size_t k = next_.fetch_add(1, std::memory_order_relaxed);
      if (k >= blocks.size()) break;
      const BlockInfo& block = blocks[k];
      const std::size_t bytes = static_cast<std::size_t>(block.elements()) * sizeof(T);
      t0 = Clock::now();
      // Buffer s goes with compute stream s and the op's slot s: the
      // block's kernels start while the previous block's, on the other
      // stream, finish.
      const int slot = overlapBlocks_ ? s : 0;
      const cudaStream_t compute = ctx.compute_stream(slot);
      started[s].record(compute);
      if (stage.needs_zeroed_block()) {
        MPCF_CUDA_TRY(cudaMemsetAsync(deviceOut[s].data(), 0, bytes, compute));
      }
      // A BlockOp that can use the stage's bounds (PcfBlockOp) gets them.
      if constexpr (requires { op_.exec_block(storage, block, deviceOut[s].data(), ctx, slot,
                                              stage.pair_bounds(*stageState, block)); }) {
        op_.exec_block(storage, block, deviceOut[s].data(), ctx, slot,
                       stage.pair_bounds(*stageState, block));
      } else {
        op_.exec_block(storage, block, deviceOut[s].data(), ctx, slot);
      }
      Chunked next;
      next.block = &block;
      next.buf = s;
      next.download = stage.enqueue(*stageState, block, deviceOut[s].data(), compute, s);
      computed[s].record(compute);
      stats.enqueue += detail::seconds_since(t0);

      if (pending.block) consume_pending();

      next.linesPerChunk =
          std::max<std::size_t>(1, chunkBytes / std::max<std::size_t>(1, next.download.lineBytes));
      next.count = (next.download.lines + next.linesPerChunk - 1) / next.linesPerChunk;
      computed[s].make_wait(ctx.download_stream());
      for (std::size_t c = 0; c < std::min<std::size_t>(kChunks, next.count); ++c) {
        enqueue_chunk(next, c);
      }
      pending = next;
      s ^= 1;
    }
    if (pending.block) consume_pending();
    // Surface asynchronous kernel faults that no wait has reported yet.
    for (int k = 0; k < GpuContext::kComputeStreams; ++k) {
      MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.compute_stream(k)));
    }
    control.throw_if_cancelled();
    {
      const auto t = Clock::now();
      stage.finish_device(*stageState, ctx);
      stats.scatter += detail::seconds_since(t);
    }
    stats.finish = detail::seconds_since(runStart);
  }

  const BlockOp& op_;
  const BlockScheduler& scheduler_;
  std::vector<int> devices_;
  unsigned hostThreads_;
  bool overlapBlocks_;
  std::atomic<std::size_t> next_{0};
  std::vector<std::uint64_t> blocksPerDevice_;  // element w written by worker w only
  std::vector<PipelineStats> statsPerDevice_;   // likewise
  PipelineStats stats_;
};

}  // namespace mpcf::cuda
