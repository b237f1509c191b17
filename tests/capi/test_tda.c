/* Persistence barcodes, pointwise operations, read-out and PCF files through
 * the C API: hand-worked values, the file format byte by byte, and every
 * documented error (status, message, outputs untouched). The random-input
 * comparisons against an independent reference live in the Python tests
 * (bindings/python/tests/test_tda.py). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"
#include "expect_error.h"

#define SENTINEL ((mpcf_pcfs*)(uintptr_t)0x1234)

static void ok(mpcf_status s) {
  if (s != MPCF_OK) fail_msg("%s: %s", mpcf_status_name(s), mpcf_last_error_message());
}

/* Function i of X has exactly the breakpoints (t[k], v[k]), k < m. */
static void expect_pcf(const mpcf_pcfs* X, uint64_t i, size_t m, const double* t, const double* v) {
  uint64_t n = 0, total = 0;
  mpcf_dtype dtype;
  ok(mpcf_pcfs_count(X, &n));
  ok(mpcf_pcfs_total_breakpoints(X, &total));
  ok(mpcf_pcfs_dtype(X, &dtype));
  assert_true(i < n);
  uint64_t* off = malloc((n + 1) * sizeof *off);
  double* tt = malloc((total + 1) * sizeof *tt);
  double* vv = malloc((total + 1) * sizeof *vv);
  ok(mpcf_pcfs_offsets(X, off, n + 1));
  if (dtype == MPCF_FLOAT32) {
    float* t32 = malloc((total + 1) * sizeof *t32);
    float* v32 = malloc((total + 1) * sizeof *v32);
    ok(mpcf_pcfs_breakpoints(X, t32, v32, total));
    for (uint64_t k = 0; k < total; ++k) {
      tt[k] = t32[k];
      vv[k] = v32[k];
    }
    free(t32);
    free(v32);
  } else {
    ok(mpcf_pcfs_breakpoints(X, tt, vv, total));
  }
  const uint64_t got_m = off[i + 1] - off[i];
  if (got_m != m) fail_msg("function %d has %d breakpoints, expected %d", (int)i, (int)got_m, (int)m);
  for (size_t k = 0; k < m; ++k) {
    const double gt = tt[off[i] + k], gv = vv[off[i] + k];
    /* float32 results: the expected numbers rounded to float32 */
    const double wt = dtype == MPCF_FLOAT32 ? (double)(float)t[k] : t[k];
    const double wv = dtype == MPCF_FLOAT32 ? (double)(float)v[k] : v[k];
    if (gt != wt || gv != wv || signbit(gv)) {
      fail_msg("function %d breakpoint %d is (%g, %g), expected (%g, %g)", (int)i, (int)k, gt, gv,
               t[k], v[k]);
    }
  }
  free(off);
  free(tt);
  free(vv);
}

static mpcf_pcfs* barcodes(mpcf_barcode_summary kind, mpcf_dtype dtype, uint64_t n,
                           const uint64_t* off, const double* bars) {
  mpcf_pcfs* X = NULL;
  ok(mpcf_pcfs_from_barcodes(kind, dtype, n, off, bars, &X));
  return X;
}

/* ---- barcodes ---- */

/* The bars (0,2), (1,3), (1,inf) of the issue, worked by hand. */
static void test_barcode_hand_worked(void** s) {
  (void)s;
  const uint64_t off[2] = {0, 3};
  const double bars[6] = {0, 2, 1, 3, 1, INFINITY};
  for (int d = 0; d < 2; ++d) {
    const mpcf_dtype dtype = d ? MPCF_FLOAT32 : MPCF_FLOAT64;
    mpcf_pcfs* X = barcodes(MPCF_BETTI_CURVE, dtype, 1, off, bars);
    /* 1 on [0,1), 3 on [1,2), 2 on [2,3), 1 after */
    expect_pcf(X, 0, 4, (const double[]){0, 1, 2, 3}, (const double[]){1, 3, 2, 1});
    mpcf_pcfs_destroy(X);

    X = barcodes(MPCF_STABLE_RANK, dtype, 1, off, bars);
    /* lengths 2, 2, inf: 3 on [0,2), 1 after */
    expect_pcf(X, 0, 2, (const double[]){0, 2}, (const double[]){3, 1});
    mpcf_pcfs_destroy(X);

    X = barcodes(MPCF_ACCUMULATED_PERSISTENCE, dtype, 1, off, bars);
    /* meanages 1 (length 2) and 2 (length 2); the infinite bar never counts */
    expect_pcf(X, 0, 2, (const double[]){1, 2}, (const double[]){2, 4});
    mpcf_pcfs_destroy(X);
  }
}

static void test_barcode_edge_cases(void** s) {
  (void)s;
  /* barcode 0: empty; 1: only bars of length 0; 2: negative births, a
   * length-0 bar at a breakpoint and two bars ending together; 3: one
   * infinite bar. */
  const uint64_t off[5] = {0, 0, 2, 6, 7};
  const double bars[14] = {5, 5, -1, -1,                       /* barcode 1 */
                           -2, 1, -1, 1, 1, 1, 0.5, 4,         /* barcode 2 */
                           -3, INFINITY};                      /* barcode 3 */
  mpcf_pcfs* X = barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT64, 4, off, bars);
  uint64_t n = 0;
  ok(mpcf_pcfs_count(X, &n));
  assert_int_equal(n, 4);
  const double zero[1] = {0};
  expect_pcf(X, 0, 1, zero, zero);
  expect_pcf(X, 1, 1, zero, zero);
  expect_pcf(X, 2, 5, (const double[]){-2, -1, 0.5, 1, 4}, (const double[]){1, 2, 3, 1, 0});
  expect_pcf(X, 3, 1, (const double[]){-3}, (const double[]){1});
  mpcf_pcfs_destroy(X);

  X = barcodes(MPCF_STABLE_RANK, MPCF_FLOAT64, 4, off, bars);
  expect_pcf(X, 0, 1, zero, zero);
  expect_pcf(X, 1, 1, zero, zero);
  /* lengths 3, 2, 0, 3.5 */
  expect_pcf(X, 2, 4, (const double[]){0, 2, 3, 3.5}, (const double[]){3, 2, 1, 0});
  expect_pcf(X, 3, 1, (const double[]){0}, (const double[]){1});
  mpcf_pcfs_destroy(X);

  X = barcodes(MPCF_ACCUMULATED_PERSISTENCE, MPCF_FLOAT64, 4, off, bars);
  expect_pcf(X, 0, 1, zero, zero);
  expect_pcf(X, 1, 1, zero, zero);
  /* meanages -0.5 (length 3), 0 (length 2), 2.25 (length 3.5) */
  expect_pcf(X, 2, 3, (const double[]){-0.5, 0, 2.25}, (const double[]){3, 5, 8.5});
  expect_pcf(X, 3, 1, zero, zero);
  mpcf_pcfs_destroy(X);

  /* n = 0: an empty collection; bars may be NULL without bars. */
  const uint64_t off0[1] = {0};
  X = barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT64, 0, off0, NULL);
  ok(mpcf_pcfs_count(X, &n));
  assert_int_equal(n, 0);
  mpcf_pcfs_destroy(X);
}

/* float32: breakpoints that meet after rounding collapse into the later
 * value, i.e. the Betti curve of the rounded barcode. */
static void test_barcode_float32_rounding(void** s) {
  (void)s;
  const uint64_t off[2] = {0, 2};
  const double bars[4] = {1.0, 1.0 + 1e-12, 0.0, 2.0};
  mpcf_pcfs* X = barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT32, 1, off, bars);
  expect_pcf(X, 0, 2, (const double[]){0, 2}, (const double[]){1, 0});
  mpcf_pcfs_destroy(X);
  X = barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT64, 1, off, bars);
  expect_pcf(X, 0, 4, (const double[]){0, 1, 1.0 + 1e-12, 2}, (const double[]){1, 2, 1, 0});
  mpcf_pcfs_destroy(X);
}

static void barcode_fails(mpcf_dtype dtype, mpcf_barcode_summary kind, uint64_t n,
                          const uint64_t* off, const double* bars, const char* n1, const char* n2) {
  mpcf_pcfs* X = SENTINEL;
  expect_error(mpcf_pcfs_from_barcodes(kind, dtype, n, off, bars, &X),
               MPCF_ERROR_INVALID_ARGUMENT, n1);
  if (n2) expect_error(MPCF_ERROR_INVALID_ARGUMENT, MPCF_ERROR_INVALID_ARGUMENT, n2);
  assert_ptr_equal(X, SENTINEL);
}

static void test_barcode_errors(void** s) {
  (void)s;
  const uint64_t off[3] = {0, 1, 3};
  const mpcf_barcode_summary kinds[3] = {MPCF_BETTI_CURVE, MPCF_STABLE_RANK,
                                         MPCF_ACCUMULATED_PERSISTENCE};
  for (int k = 0; k < 3; ++k) {
    const mpcf_barcode_summary kind = kinds[k];
    barcode_fails(MPCF_FLOAT64, kind, 2, off, (const double[]){0, 1, 0, 1, NAN, 2},
                  "barcode 1, bar 1", "birth is NaN");
    barcode_fails(MPCF_FLOAT64, kind, 2, off, (const double[]){0, NAN, 0, 1, 0, 2},
                  "barcode 0, bar 0", "death is NaN");
    barcode_fails(MPCF_FLOAT64, kind, 2, off, (const double[]){0, 1, INFINITY, INFINITY, 0, 2},
                  "barcode 1, bar 0", "birth is infinite");
    barcode_fails(MPCF_FLOAT64, kind, 2, off, (const double[]){0, 1, 0, 1, -INFINITY, 2},
                  "barcode 1, bar 1", "birth is infinite");
    barcode_fails(MPCF_FLOAT64, kind, 2, off, (const double[]){0, 1, 3, 2, 0, 2},
                  "barcode 1, bar 0 (birth 3, death 2)", "death is smaller than the birth");
    barcode_fails(MPCF_FLOAT64, kind, 2, off, (const double[]){0, -INFINITY, 0, 1, 0, 2},
                  "barcode 0, bar 0", "death is smaller than the birth");
    if (kind != MPCF_BETTI_CURVE) {
      barcode_fails(MPCF_FLOAT64, kind, 2, off, (const double[]){0, 1, -1e308, 1e308, 0, 2},
                    "barcode 1, bar 0", "overflows double");
    }
    barcode_fails(MPCF_FLOAT32, kind, 2, off, (const double[]){0, 1, 0, 1e300, 0, 2},
                  "barcode 1, bar 0", "overflows float32");
  }
  /* A Betti curve needs the ends alone: a length beyond double is no reason
     to refuse (found by fuzzing: it was refused as for the other kinds). */
  mpcf_pcfs* B = barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT64, 2, off, (const double[]){0, 1, -1e308, 1e308, 0, 2});
  expect_pcf(B, 1, 4, (const double[]){-1e308, 0, 2, 1e308}, (const double[]){1, 2, 1, 0});
  mpcf_pcfs_destroy(B);
  barcode_fails(MPCF_FLOAT32, MPCF_BETTI_CURVE, 2, off, (const double[]){0, 1, -1e300, INFINITY, 0, 2},
                "barcode 1, bar 0", "birth overflows float32");

  mpcf_pcfs* X = SENTINEL;
  const double bars[6] = {0, 1, 0, 1, 0, 2};
  expect_error(mpcf_pcfs_from_barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT64, 2, off, bars, NULL),
               MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_pcfs_from_barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT64, 2, NULL, bars, &X),
               MPCF_ERROR_INVALID_ARGUMENT, "'offsets'");
  expect_error(mpcf_pcfs_from_barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT64, 2, off, NULL, &X),
               MPCF_ERROR_INVALID_ARGUMENT, "'bars'");
  expect_error(mpcf_pcfs_from_barcodes((mpcf_barcode_summary)9, MPCF_FLOAT64, 2, off, bars, &X),
               MPCF_ERROR_INVALID_ARGUMENT, "kind 9");
  expect_error(mpcf_pcfs_from_barcodes(MPCF_STABLE_RANK, (mpcf_dtype)0, 2, off, bars, &X),
               MPCF_ERROR_INVALID_ARGUMENT, "dtype 0");
  barcode_fails(MPCF_FLOAT64, MPCF_BETTI_CURVE, 2, (const uint64_t[]){1, 1, 3}, bars, "offsets[0]",
                NULL);
  barcode_fails(MPCF_FLOAT64, MPCF_BETTI_CURVE, 2, (const uint64_t[]){0, 2, 1}, bars, "offsets[2]",
                "non-decreasing");
  assert_ptr_equal(X, SENTINEL);
}

/* ---- reductions and combinations ---- */

/* f = [(0,1),(2,0)], g = [(1,2),(3,0)], h = [(0,3)] (a constant tail). */
static mpcf_pcfs* fgh(mpcf_dtype dtype) {
  const uint64_t off[4] = {0, 2, 4, 5};
  const double t[5] = {0, 2, 1, 3, 0}, v[5] = {1, 0, 2, 0, 3};
  const float t32[5] = {0, 2, 1, 3, 0}, v32[5] = {1, 0, 2, 0, 3};
  mpcf_pcfs* X = NULL;
  ok(dtype == MPCF_FLOAT32 ? mpcf_pcfs_create(dtype, 3, off, t32, v32, &X)
                           : mpcf_pcfs_create(dtype, 3, off, t, v, &X));
  return X;
}

static void test_reduce_all(void** s) {
  (void)s;
  for (int d = 0; d < 2; ++d) {
    const mpcf_dtype dtype = d ? MPCF_FLOAT32 : MPCF_FLOAT64;
    mpcf_pcfs* X = fgh(dtype);
    mpcf_pcfs* S = NULL;
    ok(mpcf_pcfs_reduce(X, MPCF_REDUCE_SUM, MPCF_ALL_AXES, &S));
    /* f+g+h: 4 on [0,1), 6 on [1,2), 5 on [2,3), 3 after */
    expect_pcf(S, 0, 4, (const double[]){0, 1, 2, 3}, (const double[]){4, 6, 5, 3});
    size_t ndim = 0;
    uint64_t shape[2] = {0, 0};
    ok(mpcf_pcfs_ndim(S, &ndim));
    ok(mpcf_pcfs_shape(S, shape, 2));
    assert_int_equal(ndim, 1);
    assert_int_equal(shape[0], 1);
    mpcf_pcfs_destroy(S);
    ok(mpcf_pcfs_reduce(X, MPCF_REDUCE_MEAN, MPCF_ALL_AXES, &S));
    expect_pcf(S, 0, 4, (const double[]){0, 1, 2, 3}, (const double[]){4.0 / 3, 2, 5.0 / 3, 1});
    mpcf_pcfs_destroy(S);
    mpcf_pcfs_destroy(X);
  }
  /* Values that cancel leave no breakpoint: f + (-f) is the zero function. */
  const uint64_t off[3] = {0, 2, 4};
  const double t[4] = {1, 2, 1, 2}, v[4] = {0.1, 0.7, -0.1, -0.7};
  mpcf_pcfs* X = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT64, 2, off, t, v, &X));
  mpcf_pcfs* S = NULL;
  ok(mpcf_pcfs_reduce(X, MPCF_REDUCE_SUM, MPCF_ALL_AXES, &S));
  expect_pcf(S, 0, 1, (const double[]){0}, (const double[]){0});
  mpcf_pcfs_destroy(S);
  mpcf_pcfs_destroy(X);
}

static void test_reduce_axis(void** s) {
  (void)s;
  /* Shape (2, 3): row r, column c holds the constant 10 r + c on [c, c+1). */
  uint64_t off[7];
  double t[12], v[12];
  for (int k = 0; k < 6; ++k) {
    const int r = k / 3, c = k % 3;
    off[k] = 2 * (uint64_t)k;
    t[2 * k] = c;
    t[2 * k + 1] = c + 1;
    v[2 * k] = 10 * r + c;
    v[2 * k + 1] = 0;
  }
  off[6] = 12;
  mpcf_pcfs* X = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT64, 6, off, t, v, &X));
  ok(mpcf_pcfs_reshape(X, 2, (const uint64_t[]){2, 3}));

  mpcf_pcfs* M = NULL;
  ok(mpcf_pcfs_reduce(X, MPCF_REDUCE_MEAN, 0, &M)); /* over rows: shape (3) */
  uint64_t shape[2], n;
  size_t ndim;
  ok(mpcf_pcfs_ndim(M, &ndim));
  ok(mpcf_pcfs_shape(M, shape, 2));
  assert_int_equal(ndim, 1);
  assert_int_equal(shape[0], 3);
  for (int c = 0; c < 3; ++c) {
    expect_pcf(M, (uint64_t)c, 2, (const double[]){c, c + 1}, (const double[]){5 + c, 0});
  }
  mpcf_pcfs_destroy(M);

  ok(mpcf_pcfs_reduce(X, MPCF_REDUCE_SUM, 1, &M)); /* over columns: shape (2) */
  ok(mpcf_pcfs_count(M, &n));
  assert_int_equal(n, 2);
  /* row 0: 0 on [0,1) (no breakpoint there: the value before is 0 too) */
  expect_pcf(M, 0, 3, (const double[]){1, 2, 3}, (const double[]){1, 2, 0});
  mpcf_pcfs_destroy(M);
  ok(mpcf_pcfs_reduce(X, MPCF_REDUCE_SUM, 1, &M));
  expect_pcf(M, 1, 4, (const double[]){0, 1, 2, 3}, (const double[]){10, 11, 12, 0});
  mpcf_pcfs_destroy(M);

  mpcf_pcfs* out = SENTINEL;
  expect_error(mpcf_pcfs_reduce(X, MPCF_REDUCE_SUM, 2, &out), MPCF_ERROR_INVALID_ARGUMENT, "axis 2");
  expect_error(mpcf_pcfs_reduce(X, (mpcf_reduction)5, 0, &out), MPCF_ERROR_INVALID_ARGUMENT, "op 5");
  expect_error(mpcf_pcfs_reduce(NULL, MPCF_REDUCE_SUM, 0, &out), MPCF_ERROR_INVALID_ARGUMENT, "'X'");
  expect_error(mpcf_pcfs_reduce(X, MPCF_REDUCE_SUM, 0, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  assert_ptr_equal(out, SENTINEL);
  mpcf_pcfs_destroy(X);
}

static void test_reduce_empty(void** s) {
  (void)s;
  const uint64_t off0[1] = {0};
  mpcf_pcfs* E = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT64, 0, off0, NULL, NULL, &E));
  mpcf_pcfs* S = NULL;
  ok(mpcf_pcfs_reduce(E, MPCF_REDUCE_SUM, MPCF_ALL_AXES, &S));
  expect_pcf(S, 0, 1, (const double[]){0}, (const double[]){0});
  mpcf_pcfs_destroy(S);
  S = SENTINEL;
  expect_error(mpcf_pcfs_reduce(E, MPCF_REDUCE_MEAN, MPCF_ALL_AXES, &S), MPCF_ERROR_INVALID_ARGUMENT,
               "mean of no functions");
  ok(mpcf_pcfs_reshape(E, 2, (const uint64_t[]){3, 0}));
  expect_error(mpcf_pcfs_reduce(E, MPCF_REDUCE_MEAN, 1, &S), MPCF_ERROR_INVALID_ARGUMENT,
               "mean of no functions");
  assert_ptr_equal(S, SENTINEL);
  ok(mpcf_pcfs_reduce(E, MPCF_REDUCE_SUM, 1, &S)); /* three zero functions */
  uint64_t n = 0;
  ok(mpcf_pcfs_count(S, &n));
  assert_int_equal(n, 3);
  expect_pcf(S, 2, 1, (const double[]){0}, (const double[]){0});
  mpcf_pcfs_destroy(S);
  ok(mpcf_pcfs_reduce(E, MPCF_REDUCE_MEAN, 0, &S)); /* shape (0): nothing to average */
  ok(mpcf_pcfs_count(S, &n));
  assert_int_equal(n, 0);
  mpcf_pcfs_destroy(S);

  /* Found by fuzzing: the other dimensions of an empty collection can be
   * huge. Along the 0: a result of 2^63 * 2 = 2^64 functions is refused by
   * name (was MPCF_ERROR_INTERNAL), 2^40 zero functions (24 TB) are more
   * than any machine's memory (was an attempt to allocate them); along a
   * huge axis the result is empty whatever the others, and a mean of none
   * stays the mean's error. */
  ok(mpcf_pcfs_reshape(E, 3, (const uint64_t[]){(uint64_t)1 << 63, 2, 0}));
  S = SENTINEL;
  expect_error(mpcf_pcfs_reduce(E, MPCF_REDUCE_SUM, 2, &S), MPCF_ERROR_INVALID_ARGUMENT, "more than 2^64");
  ok(mpcf_pcfs_reduce(E, MPCF_REDUCE_SUM, 0, &S)); /* shape (2, 0): empty */
  ok(mpcf_pcfs_count(S, &n));
  assert_int_equal(n, 0);
  mpcf_pcfs_destroy(S);
  ok(mpcf_pcfs_reshape(E, 3, (const uint64_t[]){(uint64_t)1 << 40, 1, 0}));
  S = SENTINEL;
  expect_error(mpcf_pcfs_reduce(E, MPCF_REDUCE_SUM, 2, &S), MPCF_ERROR_OUT_OF_MEMORY, "1099511627776 functions");
  expect_error(mpcf_pcfs_reduce(E, MPCF_REDUCE_MEAN, 2, &S), MPCF_ERROR_INVALID_ARGUMENT, "mean of no functions");
  assert_ptr_equal(S, SENTINEL);
  /* The rule of mpcf_plfs_landscapes' k: 2^60 zero functions fit 64 bits,
   * their 2^60 * 24 bytes do not (was OUT_OF_MEMORY, as if a larger machine
   * could hold them); 2^59 * 24 bytes do, and are more than the memory. */
  ok(mpcf_pcfs_reshape(E, 3, (const uint64_t[]){(uint64_t)1 << 60, 1, 0}));
  expect_error(mpcf_pcfs_reduce(E, MPCF_REDUCE_SUM, 2, &S), MPCF_ERROR_INVALID_ARGUMENT,
               "1152921504606846976 functions of at least 24 bytes each, more bytes than 64 bits can count");
  ok(mpcf_pcfs_reshape(E, 3, (const uint64_t[]){(uint64_t)1 << 59, 1, 0}));
  expect_error(mpcf_pcfs_reduce(E, MPCF_REDUCE_SUM, 2, &S), MPCF_ERROR_OUT_OF_MEMORY, "576460752303423488 functions");
  assert_ptr_equal(S, SENTINEL);
  ok(mpcf_pcfs_reduce(E, MPCF_REDUCE_MEAN, 0, &S)); /* shape (1, 0): empty */
  ok(mpcf_pcfs_count(S, &n));
  assert_int_equal(n, 0);
  mpcf_pcfs_destroy(S);
  mpcf_pcfs_destroy(E);

  /* A sum that overflows float32 is an error, not inf. */
  const uint64_t off[3] = {0, 1, 2};
  const float t[2] = {0, 0}, v[2] = {3e38f, 3e38f};
  mpcf_pcfs* X = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT32, 2, off, t, v, &X));
  S = SENTINEL;
  expect_error(mpcf_pcfs_reduce(X, MPCF_REDUCE_SUM, MPCF_ALL_AXES, &S), MPCF_ERROR_INVALID_ARGUMENT,
               "overflows float32");
  assert_ptr_equal(S, SENTINEL);
  ok(mpcf_pcfs_reduce(X, MPCF_REDUCE_MEAN, MPCF_ALL_AXES, &S)); /* the mean fits */
  expect_pcf(S, 0, 1, (const double[]){0}, (const double[]){(double)3e38f});
  mpcf_pcfs_destroy(S);
  mpcf_pcfs_destroy(X);
}

static void test_combine(void** s) {
  (void)s;
  mpcf_pcfs* X = fgh(MPCF_FLOAT64);
  const uint64_t off1[2] = {0, 2};
  mpcf_pcfs* one = NULL; /* [(1, 1), (2, 0)] */
  ok(mpcf_pcfs_create(MPCF_FLOAT64, 1, off1, (const double[]){1, 2}, (const double[]){1, 0}, &one));

  mpcf_pcfs* C = NULL;
  ok(mpcf_pcfs_combine(2.0, X, -1.0, one, &C)); /* broadcast: 2 X[i] - one */
  uint64_t n = 0;
  ok(mpcf_pcfs_count(C, &n));
  assert_int_equal(n, 3);
  expect_pcf(C, 0, 3, (const double[]){0, 1, 2}, (const double[]){2, 1, 0});
  expect_pcf(C, 1, 3, (const double[]){1, 2, 3}, (const double[]){3, 4, 0});
  expect_pcf(C, 2, 3, (const double[]){0, 1, 2}, (const double[]){6, 5, 6});
  mpcf_pcfs_destroy(C);

  ok(mpcf_pcfs_combine(1.0, X, -1.0, X, &C)); /* X - X = 0 everywhere */
  for (uint64_t i = 0; i < 3; ++i) expect_pcf(C, i, 1, (const double[]){0}, (const double[]){0});
  mpcf_pcfs_destroy(C);

  ok(mpcf_pcfs_combine(0.5, one, 0.5, X, &C)); /* broadcast the other way */
  ok(mpcf_pcfs_count(C, &n));
  assert_int_equal(n, 3);
  expect_pcf(C, 1, 3, (const double[]){1, 2, 3}, (const double[]){1.5, 1, 0});
  mpcf_pcfs_destroy(C);

  mpcf_pcfs* two = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT64, 2, (const uint64_t[]){0, 1, 2}, (const double[]){0, 0},
                      (const double[]){1, 1}, &two));
  mpcf_pcfs* f32 = fgh(MPCF_FLOAT32);
  C = SENTINEL;
  expect_error(mpcf_pcfs_combine(1, X, 1, two, &C), MPCF_ERROR_INVALID_ARGUMENT, "3 functions");
  expect_error(mpcf_pcfs_combine(1, X, 1, f32, &C), MPCF_ERROR_DTYPE_MISMATCH, "float32");
  expect_error(mpcf_pcfs_combine(NAN, X, 1, X, &C), MPCF_ERROR_INVALID_ARGUMENT, "finite");
  expect_error(mpcf_pcfs_combine(1, X, INFINITY, X, &C), MPCF_ERROR_INVALID_ARGUMENT, "finite");
  expect_error(mpcf_pcfs_combine(1, NULL, 1, X, &C), MPCF_ERROR_INVALID_ARGUMENT, "'X'");
  expect_error(mpcf_pcfs_combine(1, X, 1, NULL, &C), MPCF_ERROR_INVALID_ARGUMENT, "'Y'");
  expect_error(mpcf_pcfs_combine(1, X, 1, X, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_pcfs_combine(1e308, X, 1e308, X, &C), MPCF_ERROR_INVALID_ARGUMENT, "overflows float64");
  assert_ptr_equal(C, SENTINEL);

  /* One function against an empty collection, either way round: combined
     with every function of the other, i.e. none; the result is empty
     (found by fuzzing: the empty side's function 0 was read, out of
     bounds; ASan in the sanitizer build). */
  const uint64_t off0[1] = {0};
  mpcf_pcfs* E = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT64, 0, off0, NULL, NULL, &E));
  ok(mpcf_pcfs_combine(1, E, 1, one, &C));
  ok(mpcf_pcfs_count(C, &n));
  assert_int_equal(n, 0);
  mpcf_pcfs_destroy(C);
  ok(mpcf_pcfs_combine(1, one, 1, E, &C));
  ok(mpcf_pcfs_count(C, &n));
  assert_int_equal(n, 0);
  mpcf_pcfs_destroy(C);
  ok(mpcf_pcfs_combine(1, E, 1, E, &C));
  ok(mpcf_pcfs_count(C, &n));
  assert_int_equal(n, 0);
  mpcf_pcfs_destroy(C);
  mpcf_pcfs_destroy(E);

  mpcf_pcfs_destroy(f32);
  mpcf_pcfs_destroy(two);
  mpcf_pcfs_destroy(one);
  mpcf_pcfs_destroy(X);
}

/* ---- evaluation and read-out ---- */

static void test_evaluate(void** s) {
  (void)s;
  const double t[7] = {2.5, -INFINITY, 0, -0.5, 1, INFINITY, 1.999};
  const double want[3][7] = {{0, 0, 1, 0, 1, 0, 1}, {2, 0, 0, 0, 2, 0, 2}, {3, 0, 3, 0, 3, 3, 3}};
  mpcf_pcfs* X = fgh(MPCF_FLOAT64);
  double out[21];
  ok(mpcf_pcfs_evaluate(X, t, 7, out, 21));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 7; ++j) assert_true(out[7 * i + j] == want[i][j]);
  }
  mpcf_pcfs* X32 = fgh(MPCF_FLOAT32);
  float out32[21];
  ok(mpcf_pcfs_evaluate(X32, t, 7, out32, 21));
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 7; ++j) assert_true(out32[7 * i + j] == (float)want[i][j]);
  }
  /* nt = 0: nothing to write, out may be NULL */
  ok(mpcf_pcfs_evaluate(X, NULL, 0, NULL, 0));

  for (int k = 0; k < 21; ++k) out[k] = -7;
  expect_error(mpcf_pcfs_evaluate(X, t, 7, out, 20), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 21");
  expect_error(mpcf_pcfs_evaluate(X, (const double[]){0, NAN}, 2, out, 21),
               MPCF_ERROR_INVALID_ARGUMENT, "t[1] is NaN");
  expect_error(mpcf_pcfs_evaluate(X, NULL, 7, out, 21), MPCF_ERROR_INVALID_ARGUMENT, "'t'");
  expect_error(mpcf_pcfs_evaluate(X, t, 7, NULL, 21), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_pcfs_evaluate(NULL, t, 7, out, 21), MPCF_ERROR_INVALID_ARGUMENT, "'X'");
  for (int k = 0; k < 21; ++k) assert_true(out[k] == -7);
  mpcf_pcfs_destroy(X32);
  mpcf_pcfs_destroy(X);
}

static void test_read_out(void** s) {
  (void)s;
  mpcf_pcfs* X = fgh(MPCF_FLOAT64);
  uint64_t off[4] = {9, 9, 9, 9};
  double t[5], v[5];
  expect_error(mpcf_pcfs_offsets(X, off, 3), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 4");
  expect_error(mpcf_pcfs_offsets(X, NULL, 4), MPCF_ERROR_INVALID_ARGUMENT, "'offsets'");
  expect_error(mpcf_pcfs_offsets(NULL, off, 4), MPCF_ERROR_INVALID_ARGUMENT, "'pcfs'");
  assert_int_equal(off[0], 9);
  ok(mpcf_pcfs_offsets(X, off, 4));
  assert_int_equal(off[0], 0);
  assert_int_equal(off[1], 2);
  assert_int_equal(off[2], 4);
  assert_int_equal(off[3], 5);
  expect_error(mpcf_pcfs_breakpoints(X, t, v, 4), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 5");
  expect_error(mpcf_pcfs_breakpoints(X, NULL, v, 5), MPCF_ERROR_INVALID_ARGUMENT, "'times'");
  expect_error(mpcf_pcfs_breakpoints(X, t, NULL, 5), MPCF_ERROR_INVALID_ARGUMENT, "'values'");
  ok(mpcf_pcfs_breakpoints(X, t, v, 5));
  const double wt[5] = {0, 2, 1, 3, 0}, wv[5] = {1, 0, 2, 0, 3};
  for (int k = 0; k < 5; ++k) {
    assert_true(t[k] == wt[k]);
    assert_true(v[k] == wv[k]);
  }
  mpcf_pcfs_destroy(X);
}

/* ---- files ---- */

static char g_dir[64];

static int make_dir(void** s) {
  (void)s;
  strcpy(g_dir, "/tmp/mpcf-tda-test-XXXXXX");
  return mkdtemp(g_dir) == NULL ? -1 : 0;
}

static int remove_dir(void** s) {
  (void)s;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static const char* file_in_dir(const char* name) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  return path;
}

static void write_bytes(const char* path, const unsigned char* b, size_t n) {
  FILE* f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(b, 1, n, f), n);
  fclose(f);
}

static uint64_t fnv1a(const unsigned char* b, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t k = 0; k < n; ++k) {
    h ^= b[k];
    h *= 0x100000001b3ull;
  }
  return h;
}

static void put_u64(unsigned char* p, uint64_t x) {
  for (int k = 0; k < 8; ++k) p[k] = (unsigned char)(x >> (8 * k));
}
static void put_f64(unsigned char* p, double x) {
  uint64_t u;
  memcpy(&u, &x, 8);
  put_u64(p, u);
}

/* The file of the float64 collection [(0, 1), (1, 0)] of shape (1),
 * written out by hand from the format's definition. */
static size_t reference_file(unsigned char b[104], double t1) {
  static const unsigned char head[16] = {0x89, 'M', 'P', 'C', 'F', '\r', '\n', 0x1a,
                                         1, 0, 0, 0, 2, 0, 0, 0};
  memcpy(b, head, 16);
  put_u64(b + 16, 1);  /* ndim */
  put_u64(b + 24, 1);  /* n */
  put_u64(b + 32, 2);  /* total */
  put_u64(b + 40, 1);  /* shape */
  put_u64(b + 48, 0);  /* offsets */
  put_u64(b + 56, 2);
  put_f64(b + 64, 0);  /* times */
  put_f64(b + 72, t1);
  put_f64(b + 80, 1);  /* values */
  put_f64(b + 88, 0);
  put_u64(b + 96, fnv1a(b, 96));
  return 104;
}

static void test_file_format(void** s) {
  (void)s;
  const uint64_t off[2] = {0, 2};
  mpcf_pcfs* X = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT64, 1, off, (const double[]){0, 1}, (const double[]){1, 0}, &X));
  uint64_t size = 0;
  ok(mpcf_pcfs_serialized_size(X, &size));
  assert_int_equal(size, 104);
  unsigned char want[104], got[104];
  reference_file(want, 1.0);
  expect_error(mpcf_pcfs_serialize(X, got, 103), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 104");
  ok(mpcf_pcfs_serialize(X, got, 104));
  assert_memory_equal(got, want, 104);

  /* The file mpcf_pcfs_save writes holds the same bytes. */
  const char* path = file_in_dir("one.mpcf");
  ok(mpcf_pcfs_save(X, path));
  FILE* f = fopen(path, "rb");
  assert_non_null(f);
  unsigned char file[200];
  assert_int_equal(fread(file, 1, sizeof file, f), 104);
  fclose(f);
  assert_memory_equal(file, want, 104);
  mpcf_pcfs_destroy(X);

  /* A hand-written file loads. */
  write_bytes(path, want, 104);
  ok(mpcf_pcfs_load(path, &X));
  expect_pcf(X, 0, 2, (const double[]){0, 1}, (const double[]){1, 0});
  mpcf_pcfs_destroy(X);
}

static void test_save_load_round_trip(void** s) {
  (void)s;
  for (int d = 0; d < 2; ++d) {
    mpcf_pcfs* X = fgh(d ? MPCF_FLOAT32 : MPCF_FLOAT64);
    ok(mpcf_pcfs_reshape(X, 2, (const uint64_t[]){3, 1}));
    const char* path = file_in_dir("fgh.mpcf");
    ok(mpcf_pcfs_save(X, path));
    ok(mpcf_pcfs_save(X, path)); /* replaces the file */
    mpcf_pcfs* Y = NULL;
    ok(mpcf_pcfs_load(path, &Y));
    mpcf_dtype dtype;
    size_t ndim;
    uint64_t shape[2];
    ok(mpcf_pcfs_dtype(Y, &dtype));
    ok(mpcf_pcfs_ndim(Y, &ndim));
    ok(mpcf_pcfs_shape(Y, shape, 2));
    assert_int_equal(dtype, d ? MPCF_FLOAT32 : MPCF_FLOAT64);
    assert_int_equal(ndim, 2);
    assert_int_equal(shape[0], 3);
    assert_int_equal(shape[1], 1);
    expect_pcf(Y, 0, 2, (const double[]){0, 2}, (const double[]){1, 0});
    expect_pcf(Y, 1, 2, (const double[]){1, 3}, (const double[]){2, 0});
    expect_pcf(Y, 2, 1, (const double[]){0}, (const double[]){3});
    mpcf_pcfs_destroy(Y);

    /* and through memory */
    uint64_t size = 0;
    ok(mpcf_pcfs_serialized_size(X, &size));
    unsigned char* buf = malloc(size);
    ok(mpcf_pcfs_serialize(X, buf, size));
    ok(mpcf_pcfs_deserialize(buf, size, &Y));
    expect_pcf(Y, 1, 2, (const double[]){1, 3}, (const double[]){2, 0});
    mpcf_pcfs_destroy(Y);
    free(buf);
    mpcf_pcfs_destroy(X);
  }
  /* An empty collection round-trips too. */
  mpcf_pcfs* E = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT32, 0, (const uint64_t[]){0}, NULL, NULL, &E));
  ok(mpcf_pcfs_save(E, file_in_dir("empty.mpcf")));
  mpcf_pcfs* F = NULL;
  ok(mpcf_pcfs_load(file_in_dir("empty.mpcf"), &F));
  uint64_t n = 7;
  ok(mpcf_pcfs_count(F, &n));
  assert_int_equal(n, 0);
  mpcf_pcfs_destroy(F);
  /* Also with a shape whose other dimensions overflow 64 bits beside a 0
     (reshape accepts it; found by fuzzing: the reader refused it). */
  ok(mpcf_pcfs_reshape(E, 3, (const uint64_t[]){(uint64_t)1 << 63, 2, 0}));
  uint64_t size = 0;
  ok(mpcf_pcfs_serialized_size(E, &size));
  unsigned char* buf = malloc(size);
  ok(mpcf_pcfs_serialize(E, buf, size));
  F = NULL;
  ok(mpcf_pcfs_deserialize(buf, size, &F));
  uint64_t shape[3] = {0, 0, 7};
  ok(mpcf_pcfs_shape(F, shape, 3));
  assert_true(shape[0] == (uint64_t)1 << 63 && shape[1] == 2 && shape[2] == 0);
  mpcf_pcfs_destroy(F);
  free(buf);
  mpcf_pcfs_destroy(E);
}

static void load_fails(const unsigned char* b, size_t n, mpcf_status want, const char* n1,
                       const char* n2) {
  const char* path = file_in_dir("bad.mpcf");
  write_bytes(path, b, n);
  mpcf_pcfs* X = SENTINEL;
  expect_error(mpcf_pcfs_load(path, &X), want, n1);
  if (n2) expect_error(want, want, n2);
  expect_error(mpcf_pcfs_deserialize(b, n, &X), want, n1);
  if (n2) expect_error(want, want, n2);
  assert_ptr_equal(X, SENTINEL);
}

static void test_load_errors(void** s) {
  (void)s;
  unsigned char good[104], b[120];
  reference_file(good, 1.0);

  load_fails(good, 0, MPCF_ERROR_INVALID_ARGUMENT, "not an mpcf PCF file", "only 0 bytes");
  memcpy(b, good, 104);
  b[1] = 'X';
  load_fails(b, 104, MPCF_ERROR_INVALID_ARGUMENT, "not an mpcf PCF file", "magic");
  load_fails((const unsigned char*)"id,t,v\na,0,1\n", 13, MPCF_ERROR_INVALID_ARGUMENT,
             "not an mpcf PCF file", NULL);
  load_fails(good, 20, MPCF_ERROR_INVALID_ARGUMENT, "truncated", "40-byte header");
  load_fails(good, 103, MPCF_ERROR_INVALID_ARGUMENT, "truncated", "104 bytes) but it has 103");
  memcpy(b, good, 104);
  b[104] = 0;
  load_fails(b, 105, MPCF_ERROR_INVALID_ARGUMENT, "corrupt", "it has 105 bytes");
  memcpy(b, good, 104);
  b[8] = 3; /* versions 1 (PCFs) and 2 (the function type recorded) are read */
  load_fails(b, 104, MPCF_ERROR_INVALID_ARGUMENT, "format version 3", "newer libmpcf");
  memcpy(b, good, 104);
  b[12] = 3;
  load_fails(b, 104, MPCF_ERROR_INVALID_ARGUMENT, "dtype code is 3", NULL);
  memcpy(b, good, 104);
  b[16] = 0;
  load_fails(b, 104, MPCF_ERROR_INVALID_ARGUMENT, "ndim is 0", NULL);
  memcpy(b, good, 104);
  b[40] = 2; /* shape (2) for 1 function */
  load_fails(b, 104, MPCF_ERROR_INVALID_ARGUMENT, "corrupt", "shape");
  memcpy(b, good, 104);
  b[24] = 0xff; /* n far too large for the file */
  b[31] = 0x7f;
  load_fails(b, 104, MPCF_ERROR_INVALID_ARGUMENT, "too large", NULL);
  { /* named, like every other problem of a file */
    mpcf_pcfs* T = SENTINEL;
    expect_error(mpcf_pcfs_load(file_in_dir("bad.mpcf"), &T), MPCF_ERROR_INVALID_ARGUMENT,
                 "bad.mpcf' is corrupt: the header describes a collection too large to exist");
    assert_ptr_equal(T, SENTINEL);
  }
  memcpy(b, good, 104);
  b[80] ^= 1; /* one bit of a value */
  load_fails(b, 104, MPCF_ERROR_INVALID_ARGUMENT, "corrupt", "checksum");

  /* Well-formed (correct checksum) but invalid PCF data: validated like
   * mpcf_pcfs_create, and named. */
  reference_file(b, -1.0); /* times 0, -1: decreasing */
  load_fails(b, 104, MPCF_ERROR_INVALID_PCF, "PCF 0, breakpoint 1", "strictly increasing");
  reference_file(b, NAN);
  load_fails(b, 104, MPCF_ERROR_INVALID_PCF, "PCF 0, breakpoint 1", "finite");
  reference_file(b, 1.0);
  put_u64(b + 56, 1); /* last offset 1 but total 2 */
  put_u64(b + 96, fnv1a(b, 96));
  load_fails(b, 104, MPCF_ERROR_INVALID_ARGUMENT, "last offset is 1", NULL);

  mpcf_pcfs* X = SENTINEL;
  expect_error(mpcf_pcfs_load(file_in_dir("does-not-exist.mpcf"), &X), MPCF_ERROR_INVALID_ARGUMENT,
               "No such file");
  expect_error(mpcf_pcfs_load(g_dir, &X), MPCF_ERROR_INVALID_ARGUMENT, "directory");
  expect_error(mpcf_pcfs_load("", &X), MPCF_ERROR_INVALID_ARGUMENT, "empty");
  expect_error(mpcf_pcfs_load(NULL, &X), MPCF_ERROR_INVALID_ARGUMENT, "'path'");
  expect_error(mpcf_pcfs_load(file_in_dir("bad.mpcf"), NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_pcfs_deserialize(NULL, 8, &X), MPCF_ERROR_INVALID_ARGUMENT, "'data'");
  assert_ptr_equal(X, SENTINEL);
}

static void test_save_errors(void** s) {
  (void)s;
  mpcf_pcfs* X = fgh(MPCF_FLOAT64);
  expect_error(mpcf_pcfs_save(X, g_dir), MPCF_ERROR_INVALID_ARGUMENT, "directory");
  expect_error(mpcf_pcfs_save(X, file_in_dir("no/such/dir.mpcf")), MPCF_ERROR_INVALID_ARGUMENT,
               "No such file");
  expect_error(mpcf_pcfs_save(X, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'path'");
  expect_error(mpcf_pcfs_save(NULL, file_in_dir("x.mpcf")), MPCF_ERROR_INVALID_ARGUMENT, "'pcfs'");
  uint64_t size = 0;
  expect_error(mpcf_pcfs_serialized_size(X, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  ok(mpcf_pcfs_serialized_size(X, &size));
  expect_error(mpcf_pcfs_serialize(X, NULL, size), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  /* A failed save leaves no file behind, temporary or final. */
  struct stat st;
  assert_int_not_equal(stat(file_in_dir("x.mpcf"), &st), 0);
#if defined(__linux__)
  if (geteuid() != 0) { /* root writes anywhere */
    const char* ro = file_in_dir("ro");
    assert_int_equal(mkdir(ro, 0555), 0);
    char path[160];
    snprintf(path, sizeof path, "%s/x.mpcf", ro);
    expect_error(mpcf_pcfs_save(X, path), MPCF_ERROR_INVALID_ARGUMENT, "Permission denied");
  }
#endif
  mpcf_pcfs_destroy(X);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_barcode_hand_worked),
      cmocka_unit_test(test_barcode_edge_cases),
      cmocka_unit_test(test_barcode_float32_rounding),
      cmocka_unit_test(test_barcode_errors),
      cmocka_unit_test(test_reduce_all),
      cmocka_unit_test(test_reduce_axis),
      cmocka_unit_test(test_reduce_empty),
      cmocka_unit_test(test_combine),
      cmocka_unit_test(test_evaluate),
      cmocka_unit_test(test_read_out),
      cmocka_unit_test(test_file_format),
      cmocka_unit_test(test_save_load_round_trip),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_save_errors),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
