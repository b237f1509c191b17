// Host memory the caller page-locked for the library's GPUs
// (mpcf_cuda_register_host). A matrix result whose buffer lies inside such
// a range is written by each GPU straight into it (DirectMatrixStage,
// direct_matrix_stage.cuh): no pinned ring, no host threads copying the
// ring into the result, and each byte crosses host memory once.
// Plain C++: the C API and the CUDA stages both use it.
#pragma once

#include <cstdint>
#include <memory>

namespace mpcf::cuda {

// Page-locks [p, p + bytes) for every device of the process
// (cudaHostRegister, portable and mapped) and remembers the range. p not
// null, bytes > 0 and the range not wrapping around the address space (the
// C API checks them). InvalidArgument: a range that overlaps one registered
// before, or memory the driver cannot lock (not mapped in this process);
// CudaUnavailable without a CUDA device.
void register_host(void* p, std::uint64_t bytes);

// Unlocks the range that register_host(p, ...) locked (p: its start, not
// null). InvalidArgument: p not the start of a registered range, or a
// computation writing into the range now (its lease, below, is alive).
void unregister_host(void* p);

// A computation's hold on the registered range that contains its output:
// while a lease lives, unregister_host of that range fails.
class RegisteredHostLease {
 public:
  RegisteredHostLease(const void* base, std::uint64_t bytes) : base_(base), bytes_(bytes) {}
  RegisteredHostLease(const RegisteredHostLease&) = delete;
  RegisteredHostLease& operator=(const RegisteredHostLease&) = delete;
  ~RegisteredHostLease();
  const void* base() const noexcept { return base_; }
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  const void* base_;
  std::uint64_t bytes_;
};

// The lease of the registered range that holds all of [p, p + bytes), or
// null when no single registered range does (then the result takes the
// pinned ring). Never throws for a range that is not registered.
std::shared_ptr<RegisteredHostLease> lease_registered_host(const void* p, std::uint64_t bytes);

}  // namespace mpcf::cuda
