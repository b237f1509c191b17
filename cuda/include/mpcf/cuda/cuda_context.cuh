// Per-GPU context (after moderngpu's CudaContext): the device, two compute
// streams (consecutive blocks alternate between them, so one block's kernels
// start while the previous block's last thread blocks finish), a download
// stream and a caching allocator for block buffers. One
// context belongs to one worker thread; nothing in it is shared between
// workers.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpcf/cuda/cuda_resources.cuh"

namespace mpcf::cuda {

// Keeps freed device blocks and hands them out again for requests of a
// similar size (at least the requested size, at most twice it), so repeated
// buffers of one computation do not go back to cudaMalloc. When cudaMalloc
// runs out of memory, the cache is released and the allocation retried once.
// Everything still cached is freed by the destructor. Not thread-safe: one
// allocator per context, one context per worker thread.
class CachingDeviceAllocator final : public DeviceAllocator {
 public:
  explicit CachingDeviceAllocator(int device) : device_(device) {}
  ~CachingDeviceAllocator() override;
  CachingDeviceAllocator(const CachingDeviceAllocator&) = delete;
  CachingDeviceAllocator& operator=(const CachingDeviceAllocator&) = delete;

  void* allocate(std::size_t bytes) override;
  void deallocate(void* p, std::size_t bytes) noexcept override;

  // Frees every cached (unused) block.
  void release_cached() noexcept;

  std::size_t cached_bytes() const noexcept { return cachedBytes_; }
  std::size_t live_bytes() const noexcept { return liveBytes_; }
  std::size_t cuda_malloc_calls() const noexcept { return mallocCalls_; }
  int device() const noexcept { return device_; }

 private:
  int device_;
  std::multimap<std::size_t, void*> cache_;        // block size -> block
  std::unordered_map<void*, std::size_t> live_;    // block -> its real size
  std::size_t cachedBytes_ = 0;
  std::size_t liveBytes_ = 0;
  std::size_t mallocCalls_ = 0;
};

// What the engine needs to know about a device.
struct DeviceInfo {
  int id = 0;
  std::string name;
  int smCount = 0;
  std::size_t sharedMemPerBlockOptin = 0;
  std::size_t sharedMemPerSm = 0;
};

DeviceInfo query_device(int device);

class GpuContext {
 public:
  // Makes `device` current on the calling thread for the context's life.
  explicit GpuContext(int device);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  int device() const noexcept { return info_.id; }
  const DeviceInfo& info() const noexcept { return info_; }
  static constexpr int kComputeStreams = 2;
  // Compute stream k (0 or 1).
  cudaStream_t compute_stream(int k = 0) const noexcept {
    return (k == 0 ? compute_ : compute2_).get();
  }
  cudaStream_t download_stream() const noexcept { return download_.get(); }
  CachingDeviceAllocator& allocator() noexcept { return allocator_; }

  template <typename T>
  DeviceArray<T> allocate(std::size_t count) {
    return DeviceArray<T>(count, &allocator_);
  }

  // Waits for every stream; for cleanup paths (never throws).
  void synchronize_noexcept() const noexcept;

 private:
  ScopedDevice scope_;
  DeviceInfo info_;
  // Declared before the streams: destroyed after them.
  CachingDeviceAllocator allocator_;
  CudaStream compute_;
  CudaStream compute2_;
  CudaStream download_;
};

}  // namespace mpcf::cuda
