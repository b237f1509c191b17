// Exception types of the core. The C API maps each kind to an mpcf_status; the
// core itself knows nothing of the C API.
#pragma once

#include <cstdint>
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

// Where in the caller's input an error is, as the message names it: a
// function (and its breakpoint) of the data being validated, or a barcode
// (and its bar). -1: not applicable. The C API hands it out as
// mpcf_error_detail, so that bindings need not read indices from messages.
struct ErrorLocation {
  std::int64_t function = -1;
  std::int64_t breakpoint = -1;
  std::int64_t barcode = -1;
  std::int64_t bar = -1;

  // Function `function`, breakpoint `breakpoint` (-1: the function as a whole).
  static ErrorLocation at_function(std::uint64_t function, std::int64_t breakpoint = -1) {
    ErrorLocation w;
    w.function = static_cast<std::int64_t>(function);
    w.breakpoint = breakpoint;
    return w;
  }
  // Barcode `barcode`, bar `bar` (-1: the barcode as a whole).
  static ErrorLocation at_barcode(std::uint64_t barcode, std::int64_t bar = -1) {
    ErrorLocation w;
    w.barcode = static_cast<std::int64_t>(barcode);
    w.bar = bar;
    return w;
  }
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, ErrorLocation where = {})
      : std::runtime_error(message), kind_(kind), where_(where) {}
  ErrorKind kind() const noexcept { return kind_; }
  const ErrorLocation& location() const noexcept { return where_; }

 private:
  ErrorKind kind_;
  ErrorLocation where_;
};

struct InvalidArgument : Error {
  explicit InvalidArgument(const std::string& m, ErrorLocation where = {})
      : Error(ErrorKind::InvalidArgument, m, where) {}
};
struct InvalidPcf : Error {
  explicit InvalidPcf(const std::string& m, ErrorLocation where = {})
      : Error(ErrorKind::InvalidPcf, m, where) {}
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
