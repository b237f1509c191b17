// Host-to-device copies through page-locked staging memory, for any BlockOp:
//  * upload_bytes: pageable host bytes to one or several GPUs through a
//    ring of cached pinned chunks (PinnedChunk), each chunk filled once and
//    copied to every target (the multi-GPU broadcast of a resident upload);
//  * PinnedStagingRing: per-slot pinned buffers for what a block in flight
//    sends up (the layout's index arrays), reused once the slot's previous
//    copy has left them.
// PcfBlockOp uses both (through device_collection.cuh for the first); a
// second BlockOp (piecewise linear functions, DESIGN §10) shares them.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_resources.cuh"
#include "mpcf/cuda/slice_pool.hpp"

namespace mpcf::cuda {

// Where upload_bytes copies to: a device array and the stream (of that
// device) that copies.
struct UploadTarget {
  int device = 0;
  unsigned char* data = nullptr;
  cudaStream_t stream = nullptr;
};

// Copies `bytes` from pageable host memory to every target, through a ring
// of cached pinned chunks filled by a few host threads (a plain copy from
// pageable memory runs at a third of the speed): each chunk is filled once
// and copied to every target. Returns when all copies are complete.
inline void upload_bytes(const std::vector<UploadTarget>& targets, const unsigned char* host,
                         std::size_t bytes) {
  constexpr int kRing = 3;
  constexpr std::size_t kChunk = PinnedChunk::bytes();
  if (bytes == 0 || targets.empty()) return;
  const std::size_t k = targets.size();
  std::vector<PinnedChunk> ring;
  ring.reserve(kRing);
  // copied[slot * k + d]: target d's copy out of the slot (an event of
  // target d's device).
  std::vector<CudaEvent> copied;
  copied.reserve(kRing * k);
  for (int slot = 0; slot < kRing; ++slot) {
    for (const UploadTarget& t : targets) {
      ScopedDevice on(t.device);
      copied.emplace_back();
    }
  }
  // Destroyed first, also on failure: no chunk goes back to the cache while
  // a copy may still read it.
  struct Wait {
    const std::vector<UploadTarget>& targets;
    ~Wait() {
      for (const UploadTarget& t : targets) {
        MPCF_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(t.stream));
      }
    }
  } wait{targets};
  // The host copy of a chunk is split between a few threads (memcpy is
  // bound by one core's bandwidth).
  const unsigned threads = std::clamp(std::thread::hardware_concurrency() / 2, 1u, 8u);
  std::optional<detail::SlicePool> pool;
  if (bytes > (std::size_t(1) << 20)) pool.emplace(threads - 1);
  for (std::size_t at = 0, c = 0; at < bytes; at += kChunk, ++c) {
    const int slot = static_cast<int>(c % kRing);
    if (ring.size() < kRing) {
      ring.emplace_back();
    } else {
      for (std::size_t d = 0; d < k; ++d) copied[slot * k + d].synchronize();
    }
    const std::size_t len = std::min(kChunk, bytes - at);
    unsigned char* staging = ring[slot].as<unsigned char>();
    const std::size_t parts =
        pool ? std::min<std::size_t>(pool->threads(), (len + (1u << 20) - 1) >> 20) : 1;
    auto part = [&](std::size_t p) {
      const std::size_t from = len * p / parts, to = len * (p + 1) / parts;
      std::memcpy(staging + from, host + at + from, to - from);
    };
    if (parts > 1) {
      pool->run(parts, part);
    } else {
      part(0);
    }
    for (std::size_t d = 0; d < k; ++d) {
      const UploadTarget& t = targets[d];
      ScopedDevice on(t.device);
      MPCF_CUDA_TRY(cudaMemcpyAsync(t.data + at, staging, len, cudaMemcpyHostToDevice, t.stream));
      copied[slot * k + d].record(t.stream);
    }
  }
  // The staging chunks go back to the cache when this returns.
  for (const UploadTarget& t : targets) MPCF_CUDA_TRY(cudaStreamSynchronize(t.stream));
}

// `count` elements of U per slot (up to kMaxSlots slots, one per compute
// stream of a context) in page-locked host memory: one cached pinned chunk
// for all slots (page-locking memory takes milliseconds and serialises GPUs
// setting up together; a chunk per slot would overflow the cache with four
// GPUs), or a buffer of its own when larger. A slot's part is handed out
// (acquire) once the previous copy out of it has left it; upload() enqueues
// that copy. The destructor waits for the copies still reading it.
template <typename U, int kMaxSlots = GpuContext::kComputeStreams>
class PinnedStagingRing {
 public:
  PinnedStagingRing() = default;
  PinnedStagingRing(std::size_t countPerSlot, int slots) : count_(countPerSlot) {
    const std::size_t total = countPerSlot * static_cast<std::size_t>(slots);
    if (total * sizeof(U) <= PinnedChunk::bytes()) {
      chunk_.emplace_back();
      data_ = chunk_.back().template as<U>();
    } else {
      own_ = PinnedHostBuffer<U>(total);
      data_ = own_.data();
    }
  }
  PinnedStagingRing(PinnedStagingRing&&) = default;
  PinnedStagingRing& operator=(PinnedStagingRing&&) = default;
  ~PinnedStagingRing() {
    for (int k = 0; k < kMaxSlots; ++k) {
      if (pending_[k] && uploaded_[k].get()) {
        MPCF_CUDA_CHECK_NOTHROW(cudaEventSynchronize(uploaded_[k].get()));
      }
    }
  }

  std::size_t count() const noexcept { return count_; }

  // Slot k's part, to fill; waits (host side) until the previous copy out
  // of it has left it.
  U* acquire(int k) {
    if (pending_[k]) uploaded_[k].synchronize();
    pending_[k] = false;
    return slot(k);
  }
  // Enqueues on `stream` the copy of slot k's part (count() elements) to
  // `device`; kernels enqueued later on `stream` see the data.
  void upload(int k, U* device, cudaStream_t stream) {
    MPCF_CUDA_TRY(
        cudaMemcpyAsync(device, slot(k), count_ * sizeof(U), cudaMemcpyHostToDevice, stream));
    uploaded_[k].record(stream);
    pending_[k] = true;
  }

 private:
  U* slot(int k) const { return data_ + static_cast<std::size_t>(k) * count_; }

  std::vector<PinnedChunk> chunk_;
  PinnedHostBuffer<U> own_;
  U* data_ = nullptr;
  std::size_t count_ = 0;
  CudaEvent uploaded_[kMaxSlots];
  bool pending_[kMaxSlots] = {};
};

}  // namespace mpcf::cuda
