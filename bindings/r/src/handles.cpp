// The shared handle and error glue (handles.h) and the .Call entry points
// that hand R the detail of the last failure and libmpcf's account of the
// last computation.
#include "handles.h"

#include <algorithm>
#include <string>

namespace rmpcf {

namespace {
// The detail of the last error raised (libmpcf's, or none for the glue's
// own): R reads it in the error handler, on this (R's) thread.
mpcf_error_detail g_detail = {sizeof(mpcf_error_detail), MPCF_OK, -1, -1, -1, -1};

// libmpcf's account of the last computation that succeeded (struct_size 0:
// none yet), read by last_task_info() on this (R's) thread.
mpcf_task_info g_task_info = {};

mpcf_task_info empty_task_info() {
  mpcf_task_info info{};
  info.struct_size = sizeof info;
  return info;
}

[[noreturn]] void raise(mpcf_status status, const std::string& message) {
  throw Rcpp::exception(("[" + std::string(mpcf_status_name(status)) + "] " + message).c_str(),
                        false);
}

void finalize_pcfs(SEXP ptr) {
  mpcf_pcfs_destroy(static_cast<mpcf_pcfs*>(R_ExternalPtrAddr(ptr)));
  R_ClearExternalPtr(ptr);
}
}  // namespace

void fail(mpcf_status status, const std::string& message) {
  g_detail = mpcf_error_detail{sizeof(mpcf_error_detail), status, -1, -1, -1, -1};
  raise(status, message);
}

void check(mpcf_status status) {
  if (status == MPCF_OK) return;
  const std::string message = mpcf_last_error_message();
  mpcf_error_detail d{};
  d.struct_size = sizeof d;
  if (mpcf_last_error_detail(&d) != MPCF_OK) d = mpcf_error_detail{sizeof d, status, -1, -1, -1, -1};
  g_detail = d;
  raise(status, message);
}

void remember_task(const mpcf_task* task) {
  mpcf_task_info info = empty_task_info();
  check(mpcf_task_info_get(task, &info));
  g_task_info = info;
}

void remember_last_call() {
  mpcf_task_info info = empty_task_info();
  check(mpcf_last_task_info(&info));
  g_task_info = info;
}

SEXP pcfs_tag() {
  static SEXP tag = Rf_install("mpcf_pcfs");
  return tag;
}

void adopt(SEXP ptr, mpcf_pcfs* p) {
  R_SetExternalPtrAddr(ptr, p);
  R_RegisterCFinalizerEx(ptr, finalize_pcfs, TRUE);
}

const mpcf_pcfs* pcfs_of(SEXP ptr, const char* what) {
  if (TYPEOF(ptr) != EXTPTRSXP || R_ExternalPtrTag(ptr) != pcfs_tag()) {
    fail(MPCF_ERROR_INVALID_ARGUMENT,
         std::string(what) + " is not an mpcf_pcfs handle (make one with as_pcfs())");
  }
  const auto* p = static_cast<const mpcf_pcfs*>(R_ExternalPtrAddr(ptr));
  if (p == nullptr) {
    fail(MPCF_ERROR_INVALID_ARGUMENT,
         std::string(what) +
             " no longer holds data: an mpcf_pcfs handle does not survive saveRDS()/load() or "
             "another session; rebuild it with as_pcfs() (or save it with pcf_save())");
  }
  return p;
}

std::uint64_t function_count(const mpcf_pcfs* p) {
  std::uint64_t n = 0;
  check(mpcf_pcfs_count(p, &n));
  return n;
}

std::uint64_t object_count(const mpcf_pcfs* p) {
  std::uint64_t k = 1;
  check(mpcf_pcfs_components(p, &k));
  return function_count(p) / k;
}

}  // namespace rmpcf

extern "C" SEXP rmpcf_last_error_detail() {
  BEGIN_RCPP
  // NA where libmpcf says -1 (not about one), 0-based otherwise.
  auto index = [](std::int64_t i) { return i < 0 ? NA_REAL : static_cast<double>(i); };
  const mpcf_error_detail& d = rmpcf::g_detail;
  return Rcpp::NumericVector::create(
      Rcpp::Named("function") = index(d.function_index),
      Rcpp::Named("breakpoint") = index(d.breakpoint_index),
      Rcpp::Named("barcode") = index(d.barcode_index), Rcpp::Named("bar") = index(d.bar_index));
  END_RCPP
}

// list(backend, reason, threads, devices, merge_steps, seconds) of the last
// computation that succeeded, as Python's mpcf.last_task_info() gives it;
// NULL before the first.
extern "C" SEXP rmpcf_last_task_info() {
  BEGIN_RCPP
  const mpcf_task_info& t = rmpcf::g_task_info;
  if (t.struct_size == 0) return R_NilValue;
  const char* backend = t.backend == MPCF_BACKEND_CUDA ? "cuda" : "cpu";
  // A reason newer than this package: its number, as Python shows it.
  std::string reason = std::to_string(static_cast<int>(t.reason));
  switch (t.reason) {
    case MPCF_REASON_REQUESTED: reason = "requested"; break;
    case MPCF_REASON_AUTO_THRESHOLD_MET:
      reason = "auto: at least the CUDA threshold of merge steps";
      break;
    case MPCF_REASON_AUTO_BELOW_THRESHOLD: reason = "auto: below the CUDA threshold"; break;
    case MPCF_REASON_AUTO_NO_CUDA_BUILD: reason = "auto: libmpcf was built without CUDA"; break;
    case MPCF_REASON_AUTO_NO_DEVICE: reason = "auto: no CUDA device"; break;
    case MPCF_REASON_CPU_ONLY: reason = "computed on the CPU only"; break;
  }
  const int count = std::max(0, std::min<int>(t.device_count, MPCF_TASK_INFO_MAX_DEVICES));
  Rcpp::IntegerVector devices(t.devices, t.devices + count);
  return Rcpp::List::create(Rcpp::Named("backend") = backend, Rcpp::Named("reason") = reason,
                            Rcpp::Named("threads") = static_cast<int>(t.threads),
                            Rcpp::Named("devices") = devices,
                            Rcpp::Named("merge_steps") = t.merge_steps,
                            Rcpp::Named("seconds") = t.seconds);
  END_RCPP
}
