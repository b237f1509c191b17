// The shared handle and error glue (handles.h) and the .Call entry point
// that hands R the detail of the last failure.
#include "handles.h"

namespace rmpcf {

namespace {
// The detail of the last error raised (libmpcf's, or none for the glue's
// own): R reads it in the error handler, on this (R's) thread.
mpcf_error_detail g_detail = {sizeof(mpcf_error_detail), MPCF_OK, -1, -1, -1, -1};

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
