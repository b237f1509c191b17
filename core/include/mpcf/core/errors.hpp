// Exception types of the core. The C API maps each kind to an mpcf_status; the
// core itself knows nothing of the C API.
#pragma once

#include <stdexcept>
#include <string>

namespace mpcf {

enum class ErrorKind {
  InvalidArgument,
  InvalidPcf,
  BufferTooSmall,
  DtypeMismatch,
  OutOfMemory,
  CudaUnavailable,
  Cuda,
  Cancelled,
  Internal,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

struct InvalidArgument : Error {
  explicit InvalidArgument(const std::string& m) : Error(ErrorKind::InvalidArgument, m) {}
};
struct InvalidPcf : Error {
  explicit InvalidPcf(const std::string& m) : Error(ErrorKind::InvalidPcf, m) {}
};
struct BufferTooSmall : Error {
  explicit BufferTooSmall(const std::string& m) : Error(ErrorKind::BufferTooSmall, m) {}
};
struct DtypeMismatch : Error {
  explicit DtypeMismatch(const std::string& m) : Error(ErrorKind::DtypeMismatch, m) {}
};
struct OutOfMemory : Error {
  explicit OutOfMemory(const std::string& m) : Error(ErrorKind::OutOfMemory, m) {}
};
struct CudaUnavailable : Error {
  explicit CudaUnavailable(const std::string& m) : Error(ErrorKind::CudaUnavailable, m) {}
};
struct CudaFailure : Error {
  explicit CudaFailure(const std::string& m) : Error(ErrorKind::Cuda, m) {}
};
struct Cancelled : Error {
  Cancelled() : Error(ErrorKind::Cancelled, "the task was cancelled") {}
};

}  // namespace mpcf
