// CUDA error handling: one macro, MPCF_CUDA_TRY, that turns a failed CUDA
// runtime call into a typed exception carrying file:line, the call and the
// CUDA error name; out-of-memory has its own type. Destructors use
// MPCF_CUDA_CHECK_NOTHROW, which never throws and accepts a runtime that is
// already shutting down (finalizers of Python, R or Julia run late).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "mpcf/core/errors.hpp"

namespace mpcf::cuda {

// A CUDA call failed with `code`. Maps to MPCF_ERROR_CUDA.
class CudaError : public CudaFailure {
 public:
  CudaError(cudaError_t code, const std::string& message) : CudaFailure(message), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

// Device (or pinned host) memory could not be allocated. Maps to
// MPCF_ERROR_OUT_OF_MEMORY.
class CudaOutOfMemory : public OutOfMemory {
 public:
  CudaOutOfMemory(cudaError_t code, const std::string& message)
      : OutOfMemory(message), code_(code) {}
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

namespace detail {

// "<what> failed at <file>:<line>: cudaErrorX (description)". The error is
// cleared from the thread's last-error slot unless it is sticky.
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* what, const char* file, int line);

// For destructors: true when `code` is success or means the runtime is
// unloading (nothing left to release).
inline bool acceptable_in_destructor(cudaError_t code) noexcept {
  return code == cudaSuccess || code == cudaErrorCudartUnloading ||
         code == cudaErrorContextIsDestroyed;
}

}  // namespace detail
}  // namespace mpcf::cuda

#define MPCF_CUDA_TRY(call)                                                          \
  do {                                                                               \
    const cudaError_t mpcf_cuda_status_ = (call);                                    \
    if (mpcf_cuda_status_ != cudaSuccess) {                                          \
      ::mpcf::cuda::detail::throw_cuda_error(mpcf_cuda_status_, #call, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)

// Checks the launch of the kernel just enqueued (configuration errors).
#define MPCF_CUDA_CHECK_LAUNCH() MPCF_CUDA_TRY(cudaGetLastError())

// Never throws; the result is deliberately ignored once it is known to be
// either success or a runtime that is going away. Any other failure in a
// destructor cannot be reported and is dropped as well (after clearing the
// non-sticky last error so it does not leak into the next call).
#define MPCF_CUDA_CHECK_NOTHROW(call)                                                \
  do {                                                                               \
    const cudaError_t mpcf_cuda_status_ = (call);                                    \
    if (!::mpcf::cuda::detail::acceptable_in_destructor(mpcf_cuda_status_)) {        \
      (void)cudaGetLastError();                                                      \
    }                                                                                \
  } while (0)
