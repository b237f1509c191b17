// .Call entry points for persistence barcodes, pointwise operations
// (reductions, linear combinations, evaluation), the read-out of
// breakpoints and PCF files. The collections they make are float64 handles
// behind the same tagged external pointers as glue.cpp's (the tag symbol
// "mpcf_pcfs" and the finalizer are those of handles.h), so either file's
// functions take the other's objects. Errors too go through handles.h.
#include <Rcpp.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "handles.h"
#include "mpcf/mpcf.h"
#include "tda.h"

namespace {

using rmpcf::check;
using rmpcf::fail;
using rmpcf::function_count;
using rmpcf::Owned;
using rmpcf::pcfs_of;

// The R side only ever sees float64 collections (its vectors are double):
// a float32 collection (a loaded file) is converted, exactly.
mpcf_pcfs* as_float64(Owned& in) {
  mpcf_dtype dtype;
  check(mpcf_pcfs_dtype(in.p, &dtype));
  if (dtype == MPCF_FLOAT64) return in.release();
  std::uint64_t n = 0, total = 0;
  check(mpcf_pcfs_count(in.p, &n));
  check(mpcf_pcfs_total_breakpoints(in.p, &total));
  std::vector<std::uint64_t> offsets(n + 1);
  std::vector<float> t32(total), v32(total);
  check(mpcf_pcfs_offsets(in.p, offsets.data(), n + 1));
  check(mpcf_pcfs_breakpoints(in.p, t32.data(), v32.data(), total));
  std::vector<double> t(t32.begin(), t32.end()), v(v32.begin(), v32.end());
  mpcf_function_type type = MPCF_PIECEWISE_CONSTANT;
  check(mpcf_pcfs_function_type(in.p, &type));
  Owned out;
  check((type == MPCF_PIECEWISE_LINEAR ? mpcf_plfs_create : mpcf_pcfs_create)(
      MPCF_FLOAT64, n, offsets.data(), t.data(), v.data(), &out.p));
  return out.release();
}

// rmpcf::new_pcfs of a collection made by `make(&out)`, as float64.
template <typename Make>
SEXP new_pcfs(Make make) {
  return rmpcf::new_pcfs([&](mpcf_pcfs** out) {
    Owned made;
    const mpcf_status s = make(&made.p);
    if (s == MPCF_OK) *out = as_float64(made);
    return s;
  });
}

std::uint64_t count_of(const mpcf_pcfs* p) { return function_count(p); }


// offsets: doubles holding whole numbers (n + 1); bars: birth, death
// interleaved, 2 * offsets[n] of them.
std::vector<std::uint64_t> barcode_offsets(SEXP offsets, SEXP bars) {
  if (TYPEOF(offsets) != REALSXP || XLENGTH(offsets) < 1 || TYPEOF(bars) != REALSXP) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "internal: malformed barcode input");
  }
  const R_xlen_t n = XLENGTH(offsets) - 1;
  std::vector<std::uint64_t> offs(static_cast<std::size_t>(n) + 1);
  for (R_xlen_t i = 0; i <= n; ++i) offs[i] = static_cast<std::uint64_t>(REAL(offsets)[i]);
  if (2 * offs[n] != static_cast<std::uint64_t>(XLENGTH(bars))) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "internal: barcode offsets do not match the bars");
  }
  return offs;
}

}  // namespace

extern "C" {

// Landscapes lambda_1 .. lambda_k of each barcode (shape n x k); clip: a
// number (Inf for none).
SEXP rmpcf_landscapes(SEXP offsets, SEXP bars, SEXP k, SEXP clip) {
  BEGIN_RCPP
  const std::vector<std::uint64_t> offs = barcode_offsets(offsets, bars);
  const std::uint64_t n = offs.size() - 1;
  const auto kk = static_cast<std::uint64_t>(Rcpp::as<double>(k));
  const double c = Rcpp::as<double>(clip);
  return new_pcfs([&](mpcf_pcfs** out) {
    return mpcf_plfs_landscapes(MPCF_FLOAT64, n, offs.data(), REAL(bars), kk, c, out);
  });
  END_RCPP
}

SEXP rmpcf_silhouettes(SEXP offsets, SEXP bars, SEXP q, SEXP clip) {
  BEGIN_RCPP
  const std::vector<std::uint64_t> offs = barcode_offsets(offsets, bars);
  const std::uint64_t n = offs.size() - 1;
  const double qq = Rcpp::as<double>(q), c = Rcpp::as<double>(clip);
  return new_pcfs([&](mpcf_pcfs** out) {
    return mpcf_plfs_silhouettes(MPCF_FLOAT64, n, offs.data(), REAL(bars), qq, c, out);
  });
  END_RCPP
}

// kind: 0 Betti curve, 1 stable rank, 2 accumulated persistence; offsets and
// bars as for barcode_offsets.
SEXP rmpcf_from_barcodes(SEXP kind, SEXP offsets, SEXP bars) {
  BEGIN_RCPP
  const std::vector<std::uint64_t> offs = barcode_offsets(offsets, bars);
  const auto n = static_cast<R_xlen_t>(offs.size() - 1);
  const int k = Rcpp::as<int>(kind);
  return new_pcfs([&](mpcf_pcfs** out) {
    return mpcf_pcfs_from_barcodes(static_cast<mpcf_barcode_summary>(k), MPCF_FLOAT64,
                                   static_cast<std::uint64_t>(n), offs.data(), REAL(bars), out);
  });
  END_RCPP
}

// op: 0 sum, 1 mean; over the whole collection.
SEXP rmpcf_reduce(SEXP ptr, SEXP op) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(ptr, "x");
  const int o = Rcpp::as<int>(op);
  return new_pcfs([&](mpcf_pcfs** out) {
    return mpcf_pcfs_reduce(x, static_cast<mpcf_reduction>(o), MPCF_ALL_AXES, out);
  });
  END_RCPP
}

SEXP rmpcf_combine(SEXP xptr, SEXP yptr, SEXP a, SEXP b) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(xptr, "x");
  const mpcf_pcfs* y = pcfs_of(yptr, "y");
  const double ca = Rcpp::as<double>(a), cb = Rcpp::as<double>(b);
  return new_pcfs([&](mpcf_pcfs** out) { return mpcf_pcfs_combine(ca, x, cb, y, out); });
  END_RCPP
}

// An n x length(t) matrix: entry (i, j) = x_i(t_j). libmpcf writes row-major,
// R matrices are column-major: the values go through a buffer.
SEXP rmpcf_evaluate(SEXP ptr, SEXP t) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(ptr, "x");
  if (TYPEOF(t) != REALSXP) fail(MPCF_ERROR_INVALID_ARGUMENT, "internal: t must be double");
  const std::uint64_t n = count_of(x);
  const std::uint64_t nt = static_cast<std::uint64_t>(XLENGTH(t));
  if (n > static_cast<std::uint64_t>(INT_MAX) || nt > static_cast<std::uint64_t>(INT_MAX)) {
    fail(MPCF_ERROR_INVALID_ARGUMENT, "an R matrix holds at most 2^31 - 1 rows and columns");
  }
  Rcpp::NumericMatrix out(static_cast<int>(n), static_cast<int>(nt));
  std::vector<double> buffer(n * nt);
  check(mpcf_pcfs_evaluate(x, REAL(t), nt, buffer.data(), buffer.size()));
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::uint64_t j = 0; j < nt; ++j) out[j * n + i] = buffer[i * nt + j];
  }
  return out;
  END_RCPP
}

// list(offsets (double), times, values).
SEXP rmpcf_breakpoints(SEXP ptr) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(ptr, "x");
  const std::uint64_t n = count_of(x);
  std::uint64_t total = 0;
  check(mpcf_pcfs_total_breakpoints(x, &total));
  std::vector<std::uint64_t> offsets(n + 1);
  check(mpcf_pcfs_offsets(x, offsets.data(), n + 1));
  Rcpp::NumericVector times(static_cast<R_xlen_t>(total)), values(static_cast<R_xlen_t>(total));
  check(mpcf_pcfs_breakpoints(x, times.begin(), values.begin(), total));
  Rcpp::NumericVector offs(offsets.begin(), offsets.end());
  return Rcpp::List::create(Rcpp::Named("offsets") = offs, Rcpp::Named("times") = times,
                            Rcpp::Named("values") = values);
  END_RCPP
}

SEXP rmpcf_save(SEXP ptr, SEXP path) {
  BEGIN_RCPP
  const mpcf_pcfs* x = pcfs_of(ptr, "x");
  const std::string p = Rcpp::as<std::string>(path);
  check(mpcf_pcfs_save(x, p.c_str()));
  return R_NilValue;
  END_RCPP
}

SEXP rmpcf_load(SEXP path) {
  BEGIN_RCPP
  const std::string p = Rcpp::as<std::string>(path);
  return new_pcfs([&](mpcf_pcfs** out) { return mpcf_pcfs_load(p.c_str(), out); });
  END_RCPP
}

}  // extern "C"
