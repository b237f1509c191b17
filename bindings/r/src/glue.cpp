// The .Call entry points of the R package: conversion of R input into
// libmpcf collections, options, and the task wait loop that keeps R
// responsive (progress callback, user interrupts).
//
// Rules this file keeps:
// * Every R allocation that can fail happens before a libmpcf resource is
//   owned by a C++ frame, or the resource is owned by RAII so that the
//   exceptions Rcpp turns R errors into (and BEGIN_RCPP/END_RCPP) release it.
// * R is only ever touched from the calling (main) thread; libmpcf computes
//   on its own threads while this thread polls the task.
// * Handles and errors go through handles.h (shared with tda.cpp): a
//   failure is an R error "[STATUS_NAME] <message>" that the R wrappers
//   turn into a classed condition ("mpcf_error").
#include <Rcpp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "handles.h"
#include "mpcf/mpcf.h"
#include "tda.h"

namespace {

using rmpcf::check;
using rmpcf::fail;
using rmpcf::new_pcfs;
using rmpcf::object_count;
using rmpcf::pcfs_of;

// Status of the most recent task this package waited on (a test hook: it
// shows whether an interrupted computation really ended cancelled).
mpcf_status g_last_task_status = MPCF_OK;

struct OptionsDeleter {
  void operator()(mpcf_options* o) const { mpcf_options_destroy(o); }
};
using OptionsPtr = std::unique_ptr<mpcf_options, OptionsDeleter>;

struct TaskDeleter {
  void operator()(mpcf_task* t) const { mpcf_task_destroy(t); }
};
using TaskPtr = std::unique_ptr<mpcf_task, TaskDeleter>;

/* ---- collections ---- */

// Creates a float64 collection of PCFs (or PLFs when `linear`) from CSR
// arrays and hands it to a new external pointer.
SEXP make_pcfs(bool linear, std::uint64_t n, const std::uint64_t* offsets, const double* times,
               const double* values) {
  return new_pcfs([&](mpcf_pcfs** out) {
    return (linear ? mpcf_plfs_create : mpcf_pcfs_create)(MPCF_FLOAT64, n, offsets, times, values,
                                                           out);
  });
}

// The number of objects the computations see: functions, or objects of K
// functions when the collection has a component axis (.objects() in R).
std::uint64_t count_of(const mpcf_pcfs* p) { return object_count(p); }

/* ---- options ---- */

// window: NULL or c(a, b); backend: 0 auto, 1 cpu, 2 cuda; threads: 0 = all.
OptionsPtr make_options(SEXP window, int backend, int threads) {
  mpcf_options* raw = nullptr;
  check(mpcf_options_create(&raw));
  OptionsPtr options(raw);
  if (!Rf_isNull(window)) {
    if (TYPEOF(window) != REALSXP || XLENGTH(window) != 2) {
      fail(MPCF_ERROR_INVALID_ARGUMENT, "window must be NULL or a numeric vector c(a, b)");
    }
    check(mpcf_options_set_window(options.get(), REAL(window)[0], REAL(window)[1]));
  }
  check(mpcf_options_set_backend(options.get(), static_cast<mpcf_backend>(backend)));
  check(mpcf_options_set_threads(options.get(), threads));
  return options;
}

/* ---- waiting on a task ---- */

// Waits for `task` while keeping R responsive: every 0.1 s it reports
// progress to `callback` (an R function(done, total), or NULL) and checks for
// a user interrupt. If anything throws (an interrupt, an error raised by the
// callback), the task is cancelled and waited for before the exception
// leaves, so the output vector it writes into is still alive until it stops.
void wait_for(mpcf_task* task, SEXP callback) {
  struct CancelOnUnwind {
    mpcf_task* task;
    bool armed = true;
    ~CancelOnUnwind() {
      if (!armed) return;
      mpcf_task_cancel(task);
      g_last_task_status = mpcf_task_wait(task, -1.0);
    }
  } guard{task};

  const bool report = !Rf_isNull(callback);
  std::uint64_t last_done = std::numeric_limits<std::uint64_t>::max();
  mpcf_status status = MPCF_RUNNING;
  while ((status = mpcf_task_wait(task, 0.1)) == MPCF_RUNNING) {
    if (report) {
      std::uint64_t done = 0, total = 0;
      check(mpcf_task_progress(task, &done, &total));
      if (done != last_done) {
        last_done = done;
        Rcpp::Function notify(callback);
        notify(static_cast<double>(done), static_cast<double>(total));
      }
    }
    Rcpp::checkUserInterrupt();
  }
  guard.armed = false;
  g_last_task_status = status;
  if (status != MPCF_OK) fail(status, mpcf_last_error_message());
  if (report) {
    // The callback sees the finished state once, also when the task ended
    // before the first poll (the bar of progress = TRUE then stays hidden).
    std::uint64_t total = 0;
    check(mpcf_task_progress(task, nullptr, &total));
    Rcpp::Function notify(callback);
    notify(static_cast<double>(total), static_cast<double>(total));
  }
}

// Starts a task with start(&task) (an mpcf_*_start call) and waits for it
// as wait_for does.
template <typename Start>
void run_task(SEXP callback, Start start) {
  mpcf_task* raw = nullptr;
  check(start(&raw));
  TaskPtr task(raw);
  wait_for(task.get(), callback);
  rmpcf::remember_task(task.get());
}

}  // namespace

extern "C" {

SEXP rmpcf_version_info() {
  BEGIN_RCPP
  return Rcpp::List::create(Rcpp::Named("library") = mpcf_version(),
                            Rcpp::Named("library_string") = std::string(mpcf_version_string()),
                            Rcpp::Named("header") = MPCF_VERSION);
  END_RCPP
}

SEXP rmpcf_build_info() {
  BEGIN_RCPP
  return Rcpp::wrap(std::string(mpcf_build_info()));
  END_RCPP
}

// x: a list whose elements the R side has checked to be two-column double or
// integer matrices (checked again here; nothing is trusted blindly).
SEXP rmpcf_pcfs_from_list(SEXP x, SEXP linear) {
  BEGIN_RCPP
  if (TYPEOF(x) != VECSXP) fail(MPCF_ERROR_INVALID_ARGUMENT, "x must be a list");
  const R_xlen_t n = XLENGTH(x);
  std::vector<std::uint64_t> offsets(static_cast<std::size_t>(n) + 1, 0);
  for (R_xlen_t i = 0; i < n; ++i) {
    SEXP m = VECTOR_ELT(x, i);
    if ((TYPEOF(m) != REALSXP && TYPEOF(m) != INTSXP) || !Rf_isMatrix(m) || Rf_ncols(m) != 2) {
      fail(MPCF_ERROR_INVALID_ARGUMENT,
           "element " + std::to_string(i + 1) + " of the list is not a two-column numeric matrix");
    }
    offsets[i + 1] = offsets[i] + static_cast<std::uint64_t>(Rf_nrows(m));
  }
  std::vector<double> times(offsets[n]), values(offsets[n]);
  for (R_xlen_t i = 0; i < n; ++i) {
    SEXP m = VECTOR_ELT(x, i);
    const std::size_t rows = static_cast<std::size_t>(Rf_nrows(m));
    double* t = times.data() + offsets[i];
    double* v = values.data() + offsets[i];
    if (TYPEOF(m) == REALSXP) {
      const double* src = REAL(m);
      std::copy(src, src + rows, t);
      std::copy(src + rows, src + 2 * rows, v);
    } else {
      // Integer input: NA_integer_ becomes NA_real_ (a NaN libmpcf rejects).
      const int* src = INTEGER(m);
      for (std::size_t k = 0; k < rows; ++k) {
        t[k] = src[k] == NA_INTEGER ? NA_REAL : static_cast<double>(src[k]);
        v[k] = src[rows + k] == NA_INTEGER ? NA_REAL : static_cast<double>(src[rows + k]);
      }
    }
  }
  return make_pcfs(Rcpp::as<bool>(linear), static_cast<std::uint64_t>(n), offsets.data(),
                   times.data(), values.data());
  END_RCPP
}

// offsets: doubles holding whole numbers (n + 1 of them); times, values:
// doubles, offsets[n] of each.
SEXP rmpcf_pcfs_from_csr(SEXP offsets, SEXP times, SEXP values, SEXP linear) {
  BEGIN_RCPP
  if (TYPEOF(offsets) != REALSXP || XLENGTH(offsets) < 1 || TYPEOF(times) != REALSXP ||
      TYPEOF(values) != REALSXP || XLENGTH(times) != XLENGTH(values)) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "internal: malformed CSR input");
  }
  const R_xlen_t n = XLENGTH(offsets) - 1;
  std::vector<std::uint64_t> offs(static_cast<std::size_t>(n) + 1);
  for (R_xlen_t i = 0; i <= n; ++i) offs[i] = static_cast<std::uint64_t>(REAL(offsets)[i]);
  if (offs[n] != static_cast<std::uint64_t>(XLENGTH(times))) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "internal: CSR offsets do not match the data length");
  }
  return make_pcfs(Rcpp::as<bool>(linear), static_cast<std::uint64_t>(n), offs.data(),
                   REAL(times), REAL(values));
  END_RCPP
}

// c(count (objects for a collection with a component axis), total
// breakpoints, function type (1 PCF, 2 PLF)).
SEXP rmpcf_pcfs_info(SEXP ptr) {
  BEGIN_RCPP
  const mpcf_pcfs* p = pcfs_of(ptr, "x");
  std::uint64_t total = 0;
  check(mpcf_pcfs_total_breakpoints(p, &total));
  mpcf_function_type type = MPCF_PIECEWISE_CONSTANT;
  check(mpcf_pcfs_function_type(p, &type));
  return Rcpp::NumericVector::create(static_cast<double>(count_of(p)), static_cast<double>(total),
                                     static_cast<double>(type));
  END_RCPP
}

// A view of all of x's functions shaped (count / K, K) with the component
// axis: objects of K functions. x itself is not changed (R objects sharing
// its pointer keep computing over single functions).
SEXP rmpcf_objects(SEXP ptr, SEXP components) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(ptr, "x");
  const auto k = static_cast<std::uint64_t>(Rcpp::as<double>(components));
  std::uint64_t n = 0;
  check(mpcf_pcfs_count(x, &n));
  if (k < 1 || n % k != 0) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "components = " + std::to_string(k) +
                                          " does not divide the " + std::to_string(n) +
                                          " functions into objects");
  }
  return new_pcfs([&](mpcf_pcfs** out) {
    rmpcf::Owned view;
    mpcf_status s = mpcf_pcfs_slice(x, 0, n, &view.p);
    const std::uint64_t shape[2] = {n / k, k};
    if (s == MPCF_OK) s = mpcf_pcfs_reshape(view.p, 2, shape);
    if (s == MPCF_OK) s = mpcf_pcfs_set_component_axis(view.p, 1);
    if (s == MPCF_OK) *out = view.release();
    return s;
  });
  END_RCPP
}

// Condensed distances (R's `dist` order), written straight into the vector
// that is returned.
SEXP rmpcf_pdist(SEXP ptr, SEXP p, SEXP window, SEXP backend, SEXP threads, SEXP callback) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(ptr, "x");
  std::uint64_t size = 0;
  check(mpcf_pdist_size(x, MPCF_LAYOUT_CONDENSED, &size));
  Rcpp::NumericVector out(static_cast<R_xlen_t>(size));
  OptionsPtr options = make_options(window, Rcpp::as<int>(backend), Rcpp::as<int>(threads));
  run_task(callback, [&](mpcf_task** task) {
    return mpcf_pdist_start(x, Rcpp::as<double>(p), MPCF_LAYOUT_CONDENSED, out.begin(), size,
                            options.get(), task);
  });
  return out;
  END_RCPP
}

// Symmetric n x n kernel matrix. The dense layout is row-major, which for a
// symmetric matrix is also R's column-major layout.
SEXP rmpcf_l2_kernel(SEXP ptr, SEXP window, SEXP backend, SEXP threads, SEXP callback) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(ptr, "x");
  const std::uint64_t n = count_of(x);
  if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "an R matrix holds at most 2^31 - 1 rows");
  }
  std::uint64_t size = 0;
  check(mpcf_l2_kernel_size(x, MPCF_LAYOUT_DENSE, &size));
  Rcpp::NumericMatrix out(static_cast<int>(n), static_cast<int>(n));
  OptionsPtr options = make_options(window, Rcpp::as<int>(backend), Rcpp::as<int>(threads));
  run_task(callback, [&](mpcf_task** task) {
    return mpcf_l2_kernel_start(x, MPCF_LAYOUT_DENSE, out.begin(), size, options.get(), task);
  });
  return out;
  END_RCPP
}

// metric(x_i, y_j) into an nx x ny R matrix. libmpcf writes cdist row-major;
// asking it for cdist(y, x) (ny x nx, row-major) lays the values out exactly
// as R's column-major nx x ny matrix, and both metrics are symmetric in
// their arguments, so the result goes straight into the returned matrix.
SEXP rmpcf_cdist(SEXP xptr, SEXP yptr, SEXP metric, SEXP p, SEXP window, SEXP backend,
                  SEXP threads, SEXP callback) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(xptr, "x");
  const mpcf_pcfs* y = pcfs_of(yptr, "y");
  const std::uint64_t nx = count_of(x), ny = count_of(y);
  const auto int_max = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  if (nx > int_max || ny > int_max) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "an R matrix holds at most 2^31 - 1 rows and columns");
  }
  std::uint64_t size = 0;
  check(mpcf_cdist_size(y, x, &size));
  Rcpp::NumericMatrix out(static_cast<int>(nx), static_cast<int>(ny));
  OptionsPtr options = make_options(window, Rcpp::as<int>(backend), Rcpp::as<int>(threads));
  run_task(callback, [&](mpcf_task** task) {
    return mpcf_cdist_start(y, x, static_cast<mpcf_metric>(Rcpp::as<int>(metric)),
                            Rcpp::as<double>(p), out.begin(), size, options.get(), task);
  });
  return out;
  END_RCPP
}

// Lp distance between the first functions of two collections. Backend AUTO,
// as in Python: libmpcf computes it (and lp_norm) on the calling thread, and
// its account (last_task_info()) says so.
SEXP rmpcf_lp_distance(SEXP fptr, SEXP gptr, SEXP p, SEXP window) {
  BEGIN_RCPP
  const mpcf_pcfs* f = pcfs_of(fptr, "f");
  const mpcf_pcfs* g = pcfs_of(gptr, "g");
  OptionsPtr options = make_options(window, MPCF_BACKEND_AUTO, 0);
  double result = 0.0;
  check(mpcf_lp_distance(f, 0, g, 0, Rcpp::as<double>(p), options.get(), &result));
  rmpcf::remember_last_call();
  return Rcpp::wrap(result);
  END_RCPP
}

SEXP rmpcf_lp_norm(SEXP ptr, SEXP p, SEXP window) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(ptr, "x");
  const std::uint64_t n = count_of(x);
  Rcpp::NumericVector out(static_cast<R_xlen_t>(n));
  OptionsPtr options = make_options(window, MPCF_BACKEND_AUTO, 0);
  check(mpcf_lp_norm(x, Rcpp::as<double>(p), out.begin(), n, options.get()));
  rmpcf::remember_last_call();
  return out;
  END_RCPP
}

// The k nearest neighbours of x's functions among y's (y NULL: among x's
// others): list(index = nx x k integer matrix, 1-based, distance = nx x k
// matrix). libmpcf writes (nx, k) row-major; R matrices are column-major,
// so the result is transposed here (O(nx k)).
SEXP rmpcf_knn(SEXP xptr, SEXP yptr, SEXP p, SEXP k, SEXP window, SEXP backend, SEXP threads,
               SEXP callback) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(xptr, "x");
  const mpcf_pcfs* y = Rf_isNull(yptr) ? nullptr : pcfs_of(yptr, "y");
  const std::uint64_t nx = count_of(x);
  const double kd = Rcpp::as<double>(k);
  const auto kk = static_cast<std::uint64_t>(kd);
  const auto int_max = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  if (nx > int_max || kk > int_max || (y && count_of(y) > int_max)) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "an R matrix holds at most 2^31 - 1 rows and columns");
  }
  std::uint64_t size = 0;
  check(mpcf_knn_size(x, kk, &size));
  std::vector<double> dist(static_cast<std::size_t>(size));
  std::vector<std::int64_t> index(static_cast<std::size_t>(size));
  OptionsPtr options = make_options(window, Rcpp::as<int>(backend), Rcpp::as<int>(threads));
  run_task(callback, [&](mpcf_task** task) {
    return mpcf_knn_start(x, y, Rcpp::as<double>(p), kk, dist.data(), index.data(), size,
                          options.get(), task);
  });
  Rcpp::IntegerMatrix idx(static_cast<int>(nx), static_cast<int>(kk));
  Rcpp::NumericMatrix d(static_cast<int>(nx), static_cast<int>(kk));
  for (std::uint64_t i = 0; i < nx; ++i) {
    for (std::uint64_t q = 0; q < kk; ++q) {
      idx(static_cast<int>(i), static_cast<int>(q)) = static_cast<int>(index[i * kk + q] + 1);
      d(static_cast<int>(i), static_cast<int>(q)) = dist[i * kk + q];
    }
  }
  return Rcpp::List::create(Rcpp::Named("index") = idx, Rcpp::Named("distance") = d);
  END_RCPP
}

// out = K V for V an ny x r R matrix (column-major: transposed to the
// row-major layout libmpcf takes, and back).
SEXP rmpcf_kernel_matvec(SEXP xptr, SEXP yptr, SEXP kernel, SEXP p, SEXP scale, SEXP V,
                         SEXP window, SEXP backend, SEXP threads, SEXP callback) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(xptr, "x");
  const mpcf_pcfs* y = Rf_isNull(yptr) ? nullptr : pcfs_of(yptr, "y");
  if (TYPEOF(V) != REALSXP || !Rf_isMatrix(V)) fail(MPCF_ERROR_INVALID_ARGUMENT, "internal: V is not a double matrix");
  const std::uint64_t nx = count_of(x);
  const auto rows = static_cast<std::uint64_t>(Rf_nrows(V));
  const auto r = static_cast<std::uint64_t>(Rf_ncols(V));
  if (nx > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "an R matrix holds at most 2^31 - 1 rows");
  }
  std::vector<double> v(static_cast<std::size_t>(rows * r));
  const double* src = REAL(V);
  for (std::uint64_t j = 0; j < rows; ++j) {
    for (std::uint64_t c = 0; c < r; ++c) v[j * r + c] = src[c * rows + j];
  }
  std::vector<double> out(static_cast<std::size_t>(nx * r));
  OptionsPtr options = make_options(window, Rcpp::as<int>(backend), Rcpp::as<int>(threads));
  run_task(callback, [&](mpcf_task** task) {
    return mpcf_kernel_matvec_start(x, y, static_cast<mpcf_kernel>(Rcpp::as<int>(kernel)),
                                    Rcpp::as<double>(p), Rcpp::as<double>(scale), v.data(),
                                    v.size(), r, out.data(), out.size(), options.get(), task);
  });
  Rcpp::NumericMatrix result(static_cast<int>(nx), static_cast<int>(r));
  for (std::uint64_t i = 0; i < nx; ++i) {
    for (std::uint64_t c = 0; c < r; ++c) result(static_cast<int>(i), static_cast<int>(c)) = out[i * r + c];
  }
  return result;
  END_RCPP
}

// The GPU memory kept between computations (mpcf_cuda_*): op 0 the device
// count, 1 the bytes kept on device `arg`, 2 the limit, 3 set the limit to
// `arg` bytes (a whole number checked by the R side), 4 release. Byte
// counts travel as doubles (R has no 64-bit integer; exact below 2^53).
SEXP rmpcf_gpu_memory(SEXP op, SEXP arg) {
  BEGIN_RCPP
  switch (Rcpp::as<int>(op)) {
    case 0:
      return Rcpp::wrap(mpcf_cuda_device_count());
    case 1: {
      std::uint64_t bytes = 0;
      check(mpcf_cuda_cached_bytes(Rcpp::as<int>(arg), &bytes));
      return Rcpp::wrap(static_cast<double>(bytes));
    }
    case 2: {
      std::uint64_t bytes = 0;
      check(mpcf_cuda_cache_limit(&bytes));
      return Rcpp::wrap(static_cast<double>(bytes));
    }
    case 3:
      check(mpcf_cuda_set_cache_limit(static_cast<std::uint64_t>(Rcpp::as<double>(arg))));
      return R_NilValue;
    case 4:
      check(mpcf_cuda_release_memory());
      return R_NilValue;
    default:
      fail(MPCF_ERROR_INVALID_ARGUMENT, "internal: unknown GPU memory operation");
  }
  END_RCPP
}

SEXP rmpcf_last_task_status() {
  BEGIN_RCPP
  return Rcpp::wrap(std::string(mpcf_status_name(g_last_task_status)));
  END_RCPP
}

static const R_CallMethodDef call_methods[] = {
    {"version_info", reinterpret_cast<DL_FUNC>(&rmpcf_version_info), 0},
    {"build_info", reinterpret_cast<DL_FUNC>(&rmpcf_build_info), 0},
    {"pcfs_from_list", reinterpret_cast<DL_FUNC>(&rmpcf_pcfs_from_list), 2},
    {"pcfs_from_csr", reinterpret_cast<DL_FUNC>(&rmpcf_pcfs_from_csr), 4},
    {"pcfs_info", reinterpret_cast<DL_FUNC>(&rmpcf_pcfs_info), 1},
    {"objects", reinterpret_cast<DL_FUNC>(&rmpcf_objects), 2},
    {"pdist", reinterpret_cast<DL_FUNC>(&rmpcf_pdist), 6},
    {"l2_kernel", reinterpret_cast<DL_FUNC>(&rmpcf_l2_kernel), 5},
    {"cdist", reinterpret_cast<DL_FUNC>(&rmpcf_cdist), 8},
    {"lp_distance", reinterpret_cast<DL_FUNC>(&rmpcf_lp_distance), 4},
    {"lp_norm", reinterpret_cast<DL_FUNC>(&rmpcf_lp_norm), 3},
    {"knn", reinterpret_cast<DL_FUNC>(&rmpcf_knn), 8},
    {"kernel_matvec", reinterpret_cast<DL_FUNC>(&rmpcf_kernel_matvec), 10},
    {"last_task_status", reinterpret_cast<DL_FUNC>(&rmpcf_last_task_status), 0},
    {"gpu_memory", reinterpret_cast<DL_FUNC>(&rmpcf_gpu_memory), 2},
    {"last_error_detail", reinterpret_cast<DL_FUNC>(&rmpcf_last_error_detail), 0},
    {"last_task_info", reinterpret_cast<DL_FUNC>(&rmpcf_last_task_info), 0},
    // [tda] tda.cpp
    {"from_barcodes", reinterpret_cast<DL_FUNC>(&rmpcf_from_barcodes), 3},
    {"landscapes", reinterpret_cast<DL_FUNC>(&rmpcf_landscapes), 4},
    {"silhouettes", reinterpret_cast<DL_FUNC>(&rmpcf_silhouettes), 4},
    {"reduce", reinterpret_cast<DL_FUNC>(&rmpcf_reduce), 2},
    {"combine", reinterpret_cast<DL_FUNC>(&rmpcf_combine), 4},
    {"evaluate", reinterpret_cast<DL_FUNC>(&rmpcf_evaluate), 2},
    {"breakpoints", reinterpret_cast<DL_FUNC>(&rmpcf_breakpoints), 1},
    {"save", reinterpret_cast<DL_FUNC>(&rmpcf_save), 2},
    {"load", reinterpret_cast<DL_FUNC>(&rmpcf_load), 1},
    {nullptr, nullptr, 0}};

void R_init_mpcf(DllInfo* dll) {
  R_registerRoutines(dll, nullptr, call_methods, nullptr, nullptr);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}

}  // extern "C"
