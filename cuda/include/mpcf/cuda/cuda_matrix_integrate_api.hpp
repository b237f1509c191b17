// The CUDA backend as the rest of libmpcf sees it: plain C++, no CUDA types.
// Implemented by cuda/src/*.cu when the library is built with CUDA, and by
// cuda/src/cuda_unavailable.cpp (every factory throws CudaUnavailable) when
// it is not.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "mpcf/core/matrix_integrate.hpp"
#include "mpcf/core/task.hpp"

namespace mpcf::cuda {

// True when this build contains the CUDA backend.
bool compiled_with_cuda() noexcept;

// Usable devices (0 without driver or device; never throws).
int device_count() noexcept;

// "cuda_runtime=...; cuda_architectures=...; devices=N (names)" or
// "cuda=off".
std::string build_info();

// Device memory kept between computations (device_memory_cache,
// cuda_context.cuh): the cached bytes of `device` (throws CudaUnavailable
// for one the machine does not have or without CUDA; the C API rejects a
// negative id before), the per-device limit (without CUDA: stored, unused), and
// freeing every device's cache now (without CUDA: nothing to do).
std::uint64_t cached_device_bytes(int device);
// The limit a process starts with: MPCF_CUDA_CACHE_BYTES when it is a
// decimal byte count, else 1 GiB (a bad value has no caller to report to:
// the documented default holds).
inline std::uint64_t initial_cache_limit_bytes() noexcept {
  constexpr std::uint64_t kDefault = std::uint64_t(1) << 30;
  const char* env = std::getenv("MPCF_CUDA_CACHE_BYTES");
  if (env == nullptr || *env < '0' || *env > '9') return kDefault;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (errno != 0 || *end != '\0') return kDefault;
  return static_cast<std::uint64_t>(v);
}
std::uint64_t cache_limit_bytes() noexcept;
void set_cache_limit_bytes(std::uint64_t bytes) noexcept;
void release_cached_memory() noexcept;

struct CudaExecutionConfig {
  std::vector<int> devices;            // empty: all devices
  std::uint64_t splitHint = 0;         // 0: nGpus * 32
  std::uint64_t minBlockSide = 0;      // 0: from the SM count (get_min_block_side)
  std::uint64_t maxBlockElements = 0;  // 0: from free memory (get_max_output_elements)
  double memoryFraction = 0.8;
  // Resident input on several GPUs: sent to all of them in one pass over the
  // host data (each pinned chunk filled once, copied to every GPU). false:
  // every GPU uploads it on its own (kept to measure the difference).
  bool sharedUpload = true;
  // Consecutive blocks on a GPU alternate between two compute streams (one
  // starts while the other's last thread blocks finish). false: one stream
  // (kept to measure the difference).
  bool overlapBlocks = true;
  // A kNN of L1 distances between PCFs rules out pairs by their bin lower
  // bounds before walking them (bin_bounds.hpp; same results). false: only
  // the walks stop early (kept to measure the difference).
  bool binBounds = true;
};

// The GPU work of a request: its plane computed block by block on the
// configured devices, each block reduced on the device when the consumer
// allows it (k nearest neighbours, kernel mat-vec) and handed to the
// request's consumer.
template <typename T>
std::unique_ptr<Work> make_work(PairRequest<T> request, const CudaExecutionConfig& cfg);

}  // namespace mpcf::cuda
