// Non-template parts of the CUDA backend: the error macro's thrower, the
// caching allocator, GPU contexts, device queries and build information.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "mpcf/cuda/block_matrix_support.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_integration_tasks.cuh"
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"
#include "mpcf/cuda/registered_host.hpp"

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

// ---- caching allocators ----

CachingDeviceAllocator::~CachingDeviceAllocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  trim_locked(0);
  // Blocks still lent out belong to arrays that outlive the allocator (a
  // bug); free them so at least nothing leaks.
  QuietDeviceScope on(device_);
  for (auto& [p, size] : live_) MPCF_CUDA_CHECK_NOTHROW(cudaFree(p));
  live_.clear();
}

void* CachingDeviceAllocator::allocate(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Smallest cached block that is large enough and not wastefully large,
  // and untagged: a tagged block goes only to its tag's owner (take_tagged),
  // or is freed (the limit, release_cached, a cudaMalloc that fails).
  for (auto it = cache_.lower_bound(bytes); it != cache_.end() && it->first <= 2 * bytes + 4096;
       ++it) {
    void* p = it->second;
    if (tagOf_.count(p)) continue;
    const std::size_t size = it->first;
    uncache_locked(it);
    live_.emplace(p, size);
    liveBytes_ += size;
    return p;
  }
  ScopedDevice on(device_);
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation && !cache_.empty()) {
    (void)cudaGetLastError();
    trim_locked(0);
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
  try {
    live_.emplace(p, bytes);
  } catch (...) {
    MPCF_CUDA_CHECK_NOTHROW(cudaFree(p));
    throw;
  }
  liveBytes_ += bytes;
  return p;
}

void CachingDeviceAllocator::wait_for_device() const noexcept {
  QuietDeviceScope on(device_);
  MPCF_CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
}

void CachingDeviceAllocator::deallocate(void* p, std::size_t) noexcept { give_back(p, 0); }

void CachingDeviceAllocator::deallocate_tagged(void* p, std::size_t, std::uint64_t tag) noexcept {
  give_back(p, tag);
}

void CachingDeviceAllocator::give_back(void* p, std::uint64_t tag) noexcept {
  // A block given back may still be read or written by queued work, and
  // the cache may hand it out at once (to another computation on the
  // device): wait for the device first, as cudaFree would have.
  wait_for_device();
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(p);
  if (it == live_.end()) return;  // not ours: nothing sensible to do
  const std::size_t size = it->second;
  live_.erase(it);
  liveBytes_ -= size;
  std::multimap<std::size_t, void*>::iterator entry;
  try {
    entry = cache_.emplace(size, p);
    cachedBytes_ += size;
  } catch (...) {
    QuietDeviceScope on(device_);
    MPCF_CUDA_CHECK_NOTHROW(cudaFree(p));
    return;
  }
  if (tag != 0 && tagged_.find(tag) == tagged_.end()) {
    try {
      tagged_.emplace(tag, entry);
      try {
        tagOf_.emplace(p, tag);
      } catch (...) {
        tagged_.erase(tag);
      }
    } catch (...) {
      // Kept untagged.
    }
  }
  if (cachedBytes_ > limit_) trim_locked(limit_);
}

void* CachingDeviceAllocator::take_tagged(std::uint64_t tag, std::size_t bytes) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto t = tagged_.find(tag);
  if (t == tagged_.end()) return nullptr;
  const auto entry = t->second;
  if (entry->first < bytes) return nullptr;  // not what the tag's owner asks for
  void* p = entry->second;
  const std::size_t size = entry->first;
  try {
    live_.emplace(p, size);
  } catch (...) {
    return nullptr;
  }
  uncache_locked(entry);
  liveBytes_ += size;
  return p;
}

void CachingDeviceAllocator::uncache_locked(std::multimap<std::size_t, void*>::iterator it) noexcept {
  void* p = it->second;
  cachedBytes_ -= it->first;
  cache_.erase(it);
  auto t = tagOf_.find(p);
  if (t != tagOf_.end()) {
    tagged_.erase(t->second);
    tagOf_.erase(t);
  }
}

std::size_t CachingDeviceAllocator::tagged_blocks() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return tagged_.size();
}

void CachingDeviceAllocator::trim_locked(std::size_t keep) noexcept {
  if (cachedBytes_ <= keep) return;
  QuietDeviceScope on(device_);
  while (cachedBytes_ > keep && !cache_.empty()) {
    auto last = std::prev(cache_.end());
    void* p = last->second;
    uncache_locked(last);
    MPCF_CUDA_CHECK_NOTHROW(cudaFree(p));
  }
}

void CachingDeviceAllocator::release_cached() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  trim_locked(0);
}

void CachingDeviceAllocator::set_limit(std::size_t limit) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  limit_ = limit;
  trim_locked(limit_);
}

std::size_t CachingDeviceAllocator::limit() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return limit_;
}
std::size_t CachingDeviceAllocator::cached_bytes() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return cachedBytes_;
}
std::size_t CachingDeviceAllocator::live_bytes() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return liveBytes_;
}
std::size_t CachingDeviceAllocator::cuda_malloc_calls() const noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  return mallocCalls_;
}

namespace {
// The process-wide caches, one per device, created on first use. The
// registry is a function-local static created after the CUDA runtime's
// first use, so it is destroyed (and the cached blocks freed) before the
// runtime shuts down at exit.
class DeviceCaches {
 public:
  CachingDeviceAllocator& of(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = caches_[device];
    if (!slot) slot = std::make_unique<CachingDeviceAllocator>(device, limit_);
    return *slot;
  }
  std::size_t limit() const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    return limit_;
  }
  void set_limit(std::size_t bytes) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = bytes;
    for (auto& [d, c] : caches_) c->set_limit(bytes);
  }
  std::size_t cached(int device) const noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = caches_.find(device);
    return it == caches_.end() ? 0 : it->second->cached_bytes();
  }
  void release() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [d, c] : caches_) c->release_cached();
  }

 private:
  mutable std::mutex mutex_;
  std::size_t limit_ = static_cast<std::size_t>(initial_cache_limit_bytes());
  std::map<int, std::unique_ptr<CachingDeviceAllocator>> caches_;
};

DeviceCaches& device_caches() {
  static DeviceCaches caches;
  return caches;
}
}  // namespace

CachingDeviceAllocator& device_memory_cache(int device) { return device_caches().of(device); }
std::size_t device_cache_limit() noexcept { return device_caches().limit(); }
void set_device_cache_limit(std::size_t bytes) noexcept { device_caches().set_limit(bytes); }
std::size_t device_cached_bytes(int device) noexcept { return device_caches().cached(device); }
void release_device_caches() noexcept { device_caches().release(); }

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
    : scope_(device), info_(query_device(device)), allocator_(device_memory_cache(device)) {}

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
    // The cache's unused blocks are the planner's to use: an allocation
    // takes a cached block or, short of memory, frees the cache first.
    result.push_back(freeB + device_cached_bytes(d));
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

std::uint64_t cached_device_bytes(int device) {
  resolve_devices({device});
  return device_cached_bytes(device);
}
std::uint64_t cache_limit_bytes() noexcept { return device_cache_limit(); }
void set_cache_limit_bytes(std::uint64_t bytes) noexcept {
  set_device_cache_limit(static_cast<std::size_t>(bytes));
}
void release_cached_memory() noexcept { release_device_caches(); }

// ---- host memory registered by the caller (registered_host.hpp) ----

namespace {
struct Registration {
  std::uint64_t bytes = 0;
  std::uint64_t leases = 0;  // computations writing into the range now
};
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
// Start address -> range; ranges never overlap.
std::map<std::uintptr_t, Registration>& registry() {
  static std::map<std::uintptr_t, Registration> r;
  return r;
}
std::string hex_address(const void* p) {
  std::ostringstream os;
  os << p;
  return os.str();
}
}  // namespace

void register_host(void* p, std::uint64_t bytes) {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  if (usable_device_count() == 0) {
    throw CudaUnavailable("CUDA not available: no usable CUDA device to register host memory for");
  }
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& reg = registry();
  // The first range starting at or after p, and the one before it.
  auto after = reg.lower_bound(begin);
  const auto overlaps = [&](std::map<std::uintptr_t, Registration>::const_iterator it) {
    return it->first < begin + bytes && begin < it->first + it->second.bytes;
  };
  for (auto it : {after, after == reg.begin() ? reg.end() : std::prev(after)}) {
    if (it != reg.end() && overlaps(it)) {
      throw InvalidArgument("the host range " + hex_address(p) + " + " + std::to_string(bytes) +
                            " bytes overlaps the range registered at " +
                            hex_address(reinterpret_cast<const void*>(it->first)) + " (" +
                            std::to_string(it->second.bytes) + " bytes)");
    }
  }
  const cudaError_t e =
      cudaHostRegister(p, static_cast<std::size_t>(bytes), cudaHostRegisterPortable | cudaHostRegisterMapped);
  if (e == cudaErrorInvalidValue || e == cudaErrorHostMemoryAlreadyRegistered) {
    (void)cudaGetLastError();
    throw InvalidArgument("the host range " + hex_address(p) + " + " + std::to_string(bytes) +
                          " bytes cannot be page-locked (" + cudaGetErrorName(e) +
                          ": not memory of this process, or already page-locked by other code)");
  }
  MPCF_CUDA_TRY(e);
  reg[begin] = Registration{bytes, 0};
}

void unregister_host(void* p) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& reg = registry();
  const auto it = reg.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == reg.end()) {
    throw InvalidArgument("the host memory at " + hex_address(p) +
                          " is not the start of a range registered with mpcf_cuda_register_host");
  }
  if (it->second.leases > 0) {
    throw InvalidArgument("the host memory at " + hex_address(p) + " is in use by " +
                          std::to_string(it->second.leases) +
                          " running computation(s) writing their result there; wait for them");
  }
  MPCF_CUDA_TRY(cudaHostUnregister(p));
  reg.erase(it);
}

RegisteredHostLease::~RegisteredHostLease() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  const auto it = registry().find(reinterpret_cast<std::uintptr_t>(base_));
  if (it != registry().end() && it->second.leases > 0) --it->second.leases;
}

std::shared_ptr<RegisteredHostLease> lease_registered_host(const void* p, std::uint64_t bytes) {
  if (p == nullptr || bytes == 0) return nullptr;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& reg = registry();
  auto it = reg.upper_bound(begin);  // the first range starting after p
  if (it == reg.begin()) return nullptr;
  --it;
  if (bytes > it->second.bytes || begin - it->first > it->second.bytes - bytes) return nullptr;
  ++it->second.leases;
  return std::make_shared<RegisteredHostLease>(reinterpret_cast<const void*>(it->first),
                                               it->second.bytes);
}

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
