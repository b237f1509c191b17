// The handle and error glue every .Call file of the package shares (glue.cpp,
// tda.cpp): one tag and one finalizer for the mpcf_pcfs external pointers,
// one way a failure becomes an R error.
//
// A failure raises an Rcpp::exception whose message is
// "[STATUS_NAME] <message>"; the R wrappers (R/errors.R) turn it into a
// classed condition ("mpcf_error") raised from the user's call. A libmpcf
// failure also keeps libmpcf's error detail (mpcf_last_error_detail: the
// function and breakpoint, or barcode and bar, of invalid input), which
// R reads back with last_error_detail() right after the error. After a
// computation succeeds, libmpcf's account of it (mpcf_task_info: backend,
// threads, merge steps) is kept for last_task_info().
#ifndef RMPCF_HANDLES_H
#define RMPCF_HANDLES_H

#include <Rcpp.h>

#include <cstdint>
#include <string>

#include "mpcf/mpcf.h"

namespace rmpcf {

// Raises the R error "[STATUS_NAME] message" for a failure found by the glue
// itself (no libmpcf detail: last_error_detail() then gives none).
[[noreturn]] void fail(mpcf_status status, const std::string& message);

// Turns a failed libmpcf status into an R error carrying libmpcf's message
// and keeping its detail.
void check(mpcf_status status);

// Keep libmpcf's account of a computation that succeeded, for
// last_task_info(): of `task` (mpcf_task_info_get), or of the last
// synchronous call on this thread (mpcf_last_task_info).
void remember_task(const mpcf_task* task);
void remember_last_call();

// The tag of every mpcf_pcfs external pointer of the package.
SEXP pcfs_tag();

// The collection behind an external pointer made by wrap_pcfs; `what` names
// the argument in the error for anything else (or a pointer emptied by
// saveRDS()/load()).
const mpcf_pcfs* pcfs_of(SEXP ptr, const char* what);

// Hands the collection made by make(&out) (an mpcf_* call returning a
// status) to a new external pointer with the package's finalizer. The
// pointer is allocated first, so no R allocation can fail while the
// collection is owned only by this frame.
template <typename Make>
SEXP new_pcfs(Make make);

// The functions of a collection, and the objects computations see (the
// functions, or objects of K functions with a component axis).
std::uint64_t function_count(const mpcf_pcfs* p);
std::uint64_t object_count(const mpcf_pcfs* p);

// Owns a collection until it is handed to R.
struct Owned {
  mpcf_pcfs* p = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { mpcf_pcfs_destroy(p); }
  mpcf_pcfs* release() {
    mpcf_pcfs* r = p;
    p = nullptr;
    return r;
  }
};

// Sets the finalizer and address of an external pointer made with
// pcfs_tag(); takes ownership of p.
void adopt(SEXP ptr, mpcf_pcfs* p);

template <typename Make>
SEXP new_pcfs(Make make) {
  Rcpp::Shield<SEXP> ptr(R_MakeExternalPtr(nullptr, pcfs_tag(), R_NilValue));
  Owned made;
  check(make(&made.p));
  adopt(ptr, made.release());
  return ptr;
}

}  // namespace rmpcf

#endif  // RMPCF_HANDLES_H
