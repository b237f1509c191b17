// The CUDA backend of a build without CUDA: it reports itself absent and
// every factory fails with CudaUnavailable, so the C API answers
// MPCF_ERROR_CUDA_UNAVAILABLE cleanly.
#include "mpcf/cuda/cuda_matrix_integrate_api.hpp"
#include "mpcf/cuda/registered_host.hpp"

#include <atomic>
#include <string>

#include "mpcf/core/errors.hpp"

namespace mpcf::cuda {

namespace {
[[noreturn]] void unavailable() {
  throw CudaUnavailable("CUDA not available: this libmpcf was built without CUDA support");
}
}  // namespace

bool compiled_with_cuda() noexcept { return false; }
int device_count() noexcept { return 0; }
std::string build_info() { return "cuda=off"; }

namespace {
std::atomic<std::uint64_t>& cache_limit() {
  static std::atomic<std::uint64_t> limit{initial_cache_limit_bytes()};
  return limit;
}
}  // namespace
std::uint64_t cached_device_bytes(int) { unavailable(); }
std::uint64_t cache_limit_bytes() noexcept { return cache_limit().load(); }
void set_cache_limit_bytes(std::uint64_t bytes) noexcept { cache_limit().store(bytes); }
void release_cached_memory() noexcept {}

// Without CUDA there is nothing to register for (the C API checks the
// arguments first, in either build).
void register_host(void*, std::uint64_t) { unavailable(); }
void unregister_host(void*) { unavailable(); }
RegisteredHostLease::~RegisteredHostLease() = default;
std::shared_ptr<RegisteredHostLease> lease_registered_host(const void*, std::uint64_t) {
  return nullptr;
}

template <typename T>
std::unique_ptr<Work> make_work(PairRequest<T>, const CudaExecutionConfig&) {
  unavailable();
}

template std::unique_ptr<Work> make_work<float>(PairRequest<float>, const CudaExecutionConfig&);
template std::unique_ptr<Work> make_work<double>(PairRequest<double>, const CudaExecutionConfig&);

}  // namespace mpcf::cuda
