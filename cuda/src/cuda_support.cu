// Non-template parts of the CUDA backend: the error macro's thrower, the
// caching allocator, GPU contexts, device queries and build information.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "mpcf/cuda/block_matrix_support.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_integration_tasks.cuh"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"

#ifndef MPCF_CUDA_ARCHITECTURES
#define MPCF_CUDA_ARCHITECTURES "unknown"
#endif

namespace mpcf::cuda {

namespace detail {

void throw_cuda_error(cudaError_t code, const char* what, const char* file, int line) {
  // Clear a non-sticky error so it does not resurface in an unrelated call.
  (void)cudaGetLastError();
  std::ostringstream os;
  os << "CUDA call " << what << " failed at " << file << ':' << line << ": "
     << cudaGetErrorName(code) << " (" << cudaGetErrorString(code) << ")";
  if (code == cudaErrorMemoryAllocation) throw CudaOutOfMemory(code, "out of GPU memory: " + os.str());
  throw CudaError(code, os.str());
}

}  // namespace detail

// ---- caching allocator ----

CachingDeviceAllocator::~CachingDeviceAllocator() {
  release_cached();
  // Blocks still lent out belong to arrays that outlive the allocator (a
  // bug); free them so at least nothing leaks.
  for (auto& [p, size] : live_) MPCF_CUDA_CHECK_NOTHROW(cudaFree(p));
  live_.clear();
}

void* CachingDeviceAllocator::allocate(std::size_t bytes) {
  // Smallest cached block that is large enough and not wastefully large.
  auto it = cache_.lower_bound(bytes);
  if (it != cache_.end() && it->first <= 2 * bytes + 4096) {
    void* p = it->second;
    const std::size_t size = it->first;
    cache_.erase(it);
    cachedBytes_ -= size;
    live_.emplace(p, size);
    liveBytes_ += size;
    return p;
  }
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation && !cache_.empty()) {
    (void)cudaGetLastError();
    release_cached();
    e = cudaMalloc(&p, bytes);
  }
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    std::ostringstream os;
    os << "allocating " << bytes << " bytes on CUDA device " << device_;
    std::size_t freeB = 0, totalB = 0;
    if (cudaMemGetInfo(&freeB, &totalB) == cudaSuccess) {
      os << " (" << freeB << " of " << totalB << " bytes free)";
    } else {
      (void)cudaGetLastError();
    }
    detail::throw_cuda_error(e, os.str().c_str(), __FILE__, __LINE__);
  }
  ++mallocCalls_;
  live_.emplace(p, bytes);
  liveBytes_ += bytes;
  return p;
}

void CachingDeviceAllocator::deallocate(void* p, std::size_t) noexcept {
  auto it = live_.find(p);
  if (it == live_.end()) return;  // not ours: nothing sensible to do
  const std::size_t size = it->second;
  live_.erase(it);
  liveBytes_ -= size;
  try {
    cache_.emplace(size, p);
    cachedBytes_ += size;
  } catch (...) {
    MPCF_CUDA_CHECK_NOTHROW(cudaFree(p));
  }
}

void CachingDeviceAllocator::release_cached() noexcept {
  for (auto& [size, p] : cache_) MPCF_CUDA_CHECK_NOTHROW(cudaFree(p));
  cache_.clear();
  cachedBytes_ = 0;
}

// ---- contexts and devices ----

DeviceInfo query_device(int device) {
  // cudaGetDeviceProperties takes milliseconds; the answer never changes
  // within a process, so it is asked once per device.
  static std::mutex mutex;
  static std::map<int, DeviceInfo> known;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = known.find(device);
    if (it != known.end()) return it->second;
  }
  DeviceInfo info;
  info.id = device;
  cudaDeviceProp prop{};
  MPCF_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  info.smCount = prop.multiProcessorCount;
  info.sharedMemPerBlockOptin = prop.sharedMemPerBlockOptin;
  info.sharedMemPerSm = prop.sharedMemPerMultiprocessor;
  std::lock_guard<std::mutex> lock(mutex);
  known.emplace(device, info);
  return info;
}

// ---- pinned chunks kept between computations ----

namespace {
class PinnedChunkCache {
 public:
  ~PinnedChunkCache() {
    for (void* p : free_) MPCF_CUDA_CHECK_NOTHROW(cudaFreeHost(p));
  }
  void* take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        void* p = free_.back();
        free_.pop_back();
        return p;
      }
    }
    void* p = nullptr;
    MPCF_CUDA_TRY(cudaMallocHost(&p, kPinnedChunkBytes));
    return p;
  }
  void give(void* p) noexcept {
    try {
      std::lock_guard<std::mutex> lock(mutex_);
      if (free_.size() < kMaxCachedPinnedChunks) {
        free_.push_back(p);
        return;
      }
    } catch (...) {
    }
    MPCF_CUDA_CHECK_NOTHROW(cudaFreeHost(p));
  }

 private:
  std::mutex mutex_;
  std::vector<void*> free_;
};

PinnedChunkCache& pinned_chunk_cache() {
  static PinnedChunkCache cache;
  return cache;
}
}  // namespace

PinnedChunk::PinnedChunk() : data_(pinned_chunk_cache().take()) {}

PinnedChunk::~PinnedChunk() {
  if (data_) pinned_chunk_cache().give(data_);
}

GpuContext::GpuContext(int device)
    : scope_(device), info_(query_device(device)), allocator_(device) {}

GpuContext::~GpuContext() { synchronize_noexcept(); }

void GpuContext::synchronize_noexcept() const noexcept {
  compute_.synchronize_noexcept();
  compute2_.synchronize_noexcept();
  download_.synchronize_noexcept();
}

int usable_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::vector<int> resolve_devices(const std::vector<int>& requested) {
  const int n = usable_device_count();
  if (n == 0) {
    throw CudaUnavailable("CUDA not available: no CUDA device (or driver) was found");
  }
  if (requested.empty()) {
    std::vector<int> all(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) all[static_cast<std::size_t>(d)] = d;
    return all;
  }
  for (std::size_t k = 0; k < requested.size(); ++k) {
    const int id = requested[k];
    if (id < 0) {
      throw InvalidArgument("device id " + std::to_string(id) + " (entry " + std::to_string(k) +
                            " of the device list) is negative");
    }
    if (std::find(requested.begin(), requested.begin() + static_cast<std::ptrdiff_t>(k), id) !=
        requested.begin() + static_cast<std::ptrdiff_t>(k)) {
      throw InvalidArgument("device id " + std::to_string(id) + " is listed twice");
    }
    if (id >= n) {
      throw CudaUnavailable("device id " + std::to_string(id) + " does not exist; this machine has " +
                            std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") + " (ids 0.." +
                            std::to_string(n - 1) + ")");
    }
  }
  return requested;
}

std::vector<std::size_t> free_device_memory(const std::vector<int>& devices) {
  std::vector<std::size_t> result;
  result.reserve(devices.size());
  for (int d : devices) {
    ScopedDevice scope(d);
    std::size_t freeB = 0, totalB = 0;
    MPCF_CUDA_TRY(cudaMemGetInfo(&freeB, &totalB));
    result.push_back(freeB);
  }
  return result;
}

std::uint64_t get_data_budget_bytes(const std::vector<int>& devices, double memoryFraction) {
  const auto frees = free_device_memory(devices);
  if (frees.empty()) return 0;
  const std::size_t smallest = *std::min_element(frees.begin(), frees.end());
  return static_cast<std::uint64_t>(static_cast<long double>(smallest) * memoryFraction / 2);
}

std::uint64_t get_max_output_elements(const std::vector<int>& devices, double memoryFraction,
                                      std::size_t elementSize) {
  return get_data_budget_bytes(devices, memoryFraction) / std::max<std::size_t>(elementSize, 1);
}

std::uint64_t get_min_block_side(const std::vector<int>& devices) {
  int smallest = 0;
  for (int d : devices) {
    int sms = 0;
    MPCF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    smallest = smallest == 0 ? sms : std::min(smallest, sms);
  }
  if (smallest <= 0) return 0;
  auto side = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(smallest) * 1024.0));
  while (side * side > static_cast<std::uint64_t>(smallest) * 1024) --side;
  while ((side + 1) * (side + 1) <= static_cast<std::uint64_t>(smallest) * 1024) ++side;
  return side;
}

std::vector<std::string> device_names() noexcept {
  std::vector<std::string> names;
  try {
    const int n = usable_device_count();
    for (int d = 0; d < n; ++d) {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) {
        names.emplace_back(prop.name);
      } else {
        (void)cudaGetLastError();
        names.emplace_back("unknown device");
      }
    }
  } catch (...) {
    names.clear();
  }
  return names;
}

std::vector<int> validated_devices(const CudaExecutionConfig& cfg) {
  if (!(cfg.memoryFraction > 0.0 && cfg.memoryFraction <= 1.0)) {
    throw InvalidArgument("memory fraction " + std::to_string(cfg.memoryFraction) +
                          " is outside (0, 1]");
  }
  return resolve_devices(cfg.devices);
}

// ---- the plain C++ interface ----

bool compiled_with_cuda() noexcept { return true; }

int device_count() noexcept { return usable_device_count(); }

std::string build_info() {
  std::ostringstream os;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) (void)cudaGetLastError();
  os << "cuda_runtime=" << runtime << "; cuda_architectures=" << MPCF_CUDA_ARCHITECTURES;
  const auto names = device_names();
  os << "; devices=" << names.size();
  if (!names.empty()) {
    os << " (";
    for (std::size_t k = 0; k < names.size(); ++k) os << (k ? ", " : "") << names[k];
    os << ")";
  }
  return os.str();
}

}  // namespace mpcf::cuda
