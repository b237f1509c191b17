// Per-GPU context (after moderngpu's CudaContext): the device, two compute
// streams (consecutive blocks alternate between them, so one block's kernels
// start while the previous block's last thread blocks finish), a download
// stream and the device's caching allocator (device_memory_cache, shared by
// every context of the device and kept between computations). One context
// belongs to one worker thread; nothing else in it is shared between
// workers.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpcf/cuda/cuda_resources.cuh"

namespace mpcf::cuda {

// Keeps freed device blocks and hands them out again for requests of a
// similar size (at least the requested size, at most twice it), so the
// buffers of one computation need not come from cudaMalloc again in the
// next. At most limit() bytes stay cached: a block given back beyond it
// frees cached blocks, the largest first. When cudaMalloc runs out of
// memory, the cache is released and the allocation retried once.
// Everything still cached is freed by the destructor. Thread-safe.
//
// device_memory_cache(d) is the process-wide one of device d, which every
// GpuContext on d allocates from: device memory outlives a computation, up
// to device_cache_limit() bytes per device, and is counted as free by the
// planner (free_device_memory).
class CachingDeviceAllocator final : public DeviceAllocator {
 public:
  static constexpr std::size_t kNoLimit = ~std::size_t(0);
  explicit CachingDeviceAllocator(int device, std::size_t limit = kNoLimit)
      : device_(device), limit_(limit) {}
  ~CachingDeviceAllocator() override;
  CachingDeviceAllocator(const CachingDeviceAllocator&) = delete;
  CachingDeviceAllocator& operator=(const CachingDeviceAllocator&) = delete;

  void* allocate(std::size_t bytes) override;
  void deallocate(void* p, std::size_t bytes) noexcept override;
  // A tagged block is kept like any other (counted in cached_bytes, freed
  // by the limit, release_cached or a cudaMalloc that fails) but handed out
  // only by take_tagged, with its contents; one block per tag (a second one
  // given back under a tag already kept is kept untagged).
  void deallocate_tagged(void* p, std::size_t bytes, std::uint64_t tag) noexcept override;
  void* take_tagged(std::uint64_t tag, std::size_t bytes) noexcept override;
  std::size_t tagged_blocks() const noexcept;

  // Frees every cached (unused) block.
  void release_cached() noexcept;
  // Keeps at most `limit` cached bytes from now on (frees the excess now).
  void set_limit(std::size_t limit) noexcept;
  std::size_t limit() const noexcept;

  std::size_t cached_bytes() const noexcept;
  std::size_t live_bytes() const noexcept;
  std::size_t cuda_malloc_calls() const noexcept;
  int device() const noexcept { return device_; }

 private:
  // With mutex_ held: frees cached blocks, the largest first, until at most
  // `keep` bytes are cached; cudaFree on device_.
  void trim_locked(std::size_t keep) noexcept;
  // With mutex_ held: p leaves the cache (its tag with it).
  void uncache_locked(std::multimap<std::size_t, void*>::iterator it) noexcept;
  // Waits for the device (a block given back may still be in use by queued
  // work, and the cache may hand it out at once).
  void wait_for_device() const noexcept;
  void give_back(void* p, std::uint64_t tag) noexcept;

  const int device_;
  mutable std::mutex mutex_;
  std::size_t limit_;
  std::multimap<std::size_t, void*> cache_;        // block size -> block
  std::unordered_map<void*, std::size_t> live_;    // block -> its real size
  // tag -> the cached block's entry in cache_ (iterators of a multimap stay
  // valid until their entry is erased, which uncache_locked does with the tag)
  std::unordered_map<std::uint64_t, std::multimap<std::size_t, void*>::iterator> tagged_;
  std::unordered_map<void*, std::uint64_t> tagOf_;   // cached block -> tag
  std::size_t cachedBytes_ = 0;
  std::size_t liveBytes_ = 0;
  std::size_t mallocCalls_ = 0;
};

// The process-wide cache of `device` (created on first use, freed at exit).
CachingDeviceAllocator& device_memory_cache(int device);
// Bytes each device's cache keeps between computations (at first
// initial_cache_limit_bytes(): MPCF_CUDA_CACHE_BYTES, else 1 GiB).
std::size_t device_cache_limit() noexcept;
// Sets it for every device (frees cached blocks beyond it now).
void set_device_cache_limit(std::size_t bytes) noexcept;
// Cached (unused) bytes of device's cache; 0 before its first use.
std::size_t device_cached_bytes(int device) noexcept;
// Frees every device's cached blocks (blocks in use are not touched).
void release_device_caches() noexcept;

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
  CachingDeviceAllocator& allocator_;  // device_memory_cache(device)
  CudaStream compute_;
  CudaStream compute2_;
  CudaStream download_;
};

}  // namespace mpcf::cuda
