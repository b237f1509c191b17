/* Piecewise linear functions and objects of several functions through the C
 * API, against values worked out by hand (written next to each case):
 * distances, kernels, knn and the matrices of PLFs; landscapes and
 * silhouettes of small barcodes; evaluation, sums and files of PLFs (the
 * function type survives save/load, PCF files are still version 1); the
 * component axis of PCFs and PLFs; every bad combination. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"

static void expect(mpcf_status got, mpcf_status want, const char* part) {
  if (got != want) {
    fail_msg("status %s, expected %s (%s)", mpcf_status_name(got), mpcf_status_name(want),
             mpcf_last_error_message());
  }
  if (part && !strstr(mpcf_last_error_message(), part)) {
    fail_msg("message '%s' does not name '%s'", mpcf_last_error_message(), part);
  }
}

static void near(double got, double want, double rel, const char* what) {
  const double err = fabs(got - want);
  if (!(err <= rel * fabs(want) || (want == 0 && got == 0)) && !(isinf(want) && got == want)) {
    fail_msg("%s: %.17g, expected %.17g", what, got, want);
  }
}

/* Functions given as (t, v) pairs, CSR. */
static mpcf_pcfs* make(int linear, mpcf_dtype dtype, uint64_t n, const uint64_t* offsets,
                       const double* pts) {
  const uint64_t total = offsets[n];
  void* buf = malloc((size_t)(2 * total + 1) * 8);
  for (uint64_t k = 0; k < 2 * total; ++k) {
    if (dtype == MPCF_FLOAT32) {
      ((float*)buf)[k] = (float)pts[k];
    } else {
      ((double*)buf)[k] = pts[k];
    }
  }
  mpcf_pcfs* h = NULL;
  expect((linear ? mpcf_plfs_create_interleaved : mpcf_pcfs_create_interleaved)(dtype, n, offsets,
                                                                               total ? buf : NULL, &h),
         MPCF_OK, NULL);
  free(buf);
  return h;
}

static mpcf_options* cpu_options(int threads) {
  mpcf_options* o = NULL;
  expect(mpcf_options_create(&o), MPCF_OK, NULL);
  expect(mpcf_options_set_backend(o, MPCF_BACKEND_CPU), MPCF_OK, NULL);
  expect(mpcf_options_set_threads(o, threads), MPCF_OK, NULL);
  return o;
}

/* f0 = the tent (0,0),(1,1),(2,0); f1 = zero (0,0); f2 = the ramp (0,0),(2,2)
 * then 2 for ever; f3 = (0,1),(1,-1),(2,0): a jump to 1 at 0, crossing 0 at
 * t = 0.5, back to 0 at 2. */
static const uint64_t k4_offsets[5] = {0, 3, 4, 6, 9};
static const double k4_points[18] = {0, 0, 1, 1, 2, 0, /* f0 */
                                     0, 0,             /* f1 */
                                     0, 0, 2, 2,       /* f2 */
                                     0, 1, 1, -1, 2, 0 /* f3 */};

static void test_plf_pair_values(void** s) {
  (void)s;
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    const double rel = dt ? 1e-15 : 1e-6;
    mpcf_pcfs* X = make(1, dtype, 4, k4_offsets, k4_points);
    mpcf_function_type ft;
    expect(mpcf_pcfs_function_type(X, &ft), MPCF_OK, NULL);
    assert_int_equal(ft, MPCF_PIECEWISE_LINEAR);
    double d;
    /* tent vs 0: L1 = area 1; L2 = sqrt(2 * int_0^1 t^2) = sqrt(2/3); Linf 1;
       L3 = (2 * int_0^1 t^3)^(1/3) = (1/2)^(1/3). */
    expect(mpcf_lp_distance(X, 0, X, 1, 1, NULL, &d), MPCF_OK, NULL);
    near(d, 1.0, rel, "L1(tent, 0)");
    expect(mpcf_lp_distance(X, 0, X, 1, 2, NULL, &d), MPCF_OK, NULL);
    near(d, sqrt(2.0 / 3.0), rel, "L2(tent, 0)");
    expect(mpcf_lp_distance(X, 0, X, 1, INFINITY, NULL, &d), MPCF_OK, NULL);
    near(d, 1.0, rel, "Linf(tent, 0)");
    expect(mpcf_lp_distance(X, 0, X, 1, 3, NULL, &d), MPCF_OK, NULL);
    near(d, cbrt(0.5), rel, "L3(tent, 0)");
    /* <tent, tent> = 2/3. */
    expect(mpcf_l2_inner_product(X, 0, X, 0, NULL, &d), MPCF_OK, NULL);
    near(d, 2.0 / 3.0, rel, "<tent, tent>");
    /* f3 vs 0 crosses 0 at 1/2: L1 = 1/4 (on [0, 1/2]) + 1/4 ([1/2, 1]) + 1/2
       ([1, 2]: -1 back to 0) = 1. */
    expect(mpcf_lp_distance(X, 3, X, 1, 1, NULL, &d), MPCF_OK, NULL);
    near(d, 1.0, rel, "L1(f3, 0)");
    /* tent - f3: on [0,1] from -1 to 2 (root at 1/3: 1/6 + 2/3), on [1,2]
       from 2 to 0 (area 1): L1 = 1/6 + 2/3 + 1 = 11/6. */
    expect(mpcf_lp_distance(X, 0, X, 3, 1, NULL, &d), MPCF_OK, NULL);
    near(d, 11.0 / 6.0, rel, "L1(tent, f3)");
    /* <tent, f3> = int_0^1 t (1 - 2t) + int_1^2 (2 - t)(t - 2) = (1/2 - 2/3) - 1/3 = -1/2. */
    expect(mpcf_l2_inner_product(X, 0, X, 3, NULL, &d), MPCF_OK, NULL);
    near(d, -0.5, rel, "<tent, f3>");
    /* The ramp ends at 2 for ever: infinite distance to 0 and kernel with itself;
       on the window [0, 3): L1 = 2 + 2 = 4, <ramp, tent> = int_0^1 t^2 + int_1^2 t (2 - t) = 1/3 + 2/3 = 1. */
    expect(mpcf_lp_distance(X, 2, X, 1, 1, NULL, &d), MPCF_OK, NULL);
    assert_true(isinf(d) && d > 0);
    mpcf_options* w = cpu_options(1);
    expect(mpcf_options_set_window(w, 0, 3), MPCF_OK, NULL);
    expect(mpcf_lp_distance(X, 2, X, 1, 1, w, &d), MPCF_OK, NULL);
    near(d, 4.0, rel, "L1(ramp, 0) on [0, 3)");
    expect(mpcf_l2_inner_product(X, 2, X, 0, w, &d), MPCF_OK, NULL);
    near(d, 1.0, rel, "<ramp, tent>");
    /* A window cutting the tent at 0.5 and 1.5: L1 = 1 - 2 * 1/8 = 3/4. */
    expect(mpcf_options_set_window(w, 0.5, 1.5), MPCF_OK, NULL);
    expect(mpcf_lp_distance(X, 0, X, 1, 1, w, &d), MPCF_OK, NULL);
    near(d, 0.75, rel, "L1(tent, 0) on [0.5, 1.5)");
    mpcf_options_destroy(w);
    mpcf_pcfs_destroy(X);
  }
}

/* pdist, cdist, l2_kernel and knn of PLFs on any thread count equal the
 * single-pair values (which test_plf_pair_values checks by hand) bit for bit. */
static void test_plf_matrices_match_pairs(void** s) {
  (void)s;
  mpcf_pcfs* X = make(1, MPCF_FLOAT64, 4, k4_offsets, k4_points);
  mpcf_options* w = cpu_options(1);
  expect(mpcf_options_set_window(w, -1, 5), MPCF_OK, NULL);
  for (int threads = 1; threads <= 3; threads += 2) {
    mpcf_options* o = cpu_options(threads);
    expect(mpcf_options_set_window(o, -1, 5), MPCF_OK, NULL);
    double D[16], K[16], C[16];
    expect(mpcf_pdist(X, 1.0, MPCF_LAYOUT_DENSE, D, 16, o), MPCF_OK, NULL);
    expect(mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, K, 16, o), MPCF_OK, NULL);
    expect(mpcf_cdist(X, X, MPCF_METRIC_LP_DISTANCE, 2.0, C, 16, o), MPCF_OK, NULL);
    for (uint64_t i = 0; i < 4; ++i) {
      for (uint64_t j = 0; j < 4; ++j) {
        double d1, d2, k;
        expect(mpcf_lp_distance(X, i, X, j, 1.0, w, &d1), MPCF_OK, NULL);
        expect(mpcf_lp_distance(X, i, X, j, 2.0, w, &d2), MPCF_OK, NULL);
        expect(mpcf_l2_inner_product(X, i, X, j, w, &k), MPCF_OK, NULL);
        if (i == j) d1 = 0;
        if (!(D[i * 4 + j] == d1)) fail_msg("pdist (%d, %d) = %g, pair %g", (int)i, (int)j, D[i * 4 + j], d1);
        if (!(K[i * 4 + j] == k)) fail_msg("kernel (%d, %d) = %g, pair %g", (int)i, (int)j, K[i * 4 + j], k);
        if (!(C[i * 4 + j] == d2)) fail_msg("cdist (%d, %d) = %g, pair %g", (int)i, (int)j, C[i * 4 + j], d2);
      }
    }
    /* knn, k = 1, L1 on [-1, 5): distances from the hand values of the window. */
    double nd[4];
    int64_t ni[4];
    expect(mpcf_knn(X, NULL, 1.0, 1, nd, ni, 4, o), MPCF_OK, NULL);
    for (int i = 0; i < 4; ++i) {
      double best = INFINITY;
      int64_t arg = -1;
      for (int j = 0; j < 4; ++j) {
        if (j != i && D[i * 4 + j] < best) {
          best = D[i * 4 + j];
          arg = j;
        }
      }
      assert_true(nd[i] == best);
      assert_int_equal(ni[i], arg);
    }
    mpcf_options_destroy(o);
  }
  mpcf_options_destroy(w);
  mpcf_pcfs_destroy(X);
}

static void test_landscapes_and_silhouettes(void** s) {
  (void)s;
  /* Barcode 0: (0, 2): lambda_1 = (0,0),(1,1),(2,0), lambda_2 = 0.
     Barcode 1: (0, 4), (1, 3): lambda_1 = (0,0),(2,2),(4,0); lambda_2 =
     (1,0),(2,1),(3,0). */
  const uint64_t offsets[3] = {0, 1, 3};
  const double bars[6] = {0, 2, 0, 4, 1, 3};
  mpcf_pcfs* L = NULL;
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 2, offsets, bars, 2, INFINITY, &L), MPCF_OK, NULL);
  size_t nd = 0;
  uint64_t shape[2];
  expect(mpcf_pcfs_ndim(L, &nd), MPCF_OK, NULL);
  expect(mpcf_pcfs_shape(L, shape, 2), MPCF_OK, NULL);
  assert_int_equal(nd, 2);
  assert_int_equal(shape[0], 2);
  assert_int_equal(shape[1], 2);
  mpcf_function_type ft;
  expect(mpcf_pcfs_function_type(L, &ft), MPCF_OK, NULL);
  assert_int_equal(ft, MPCF_PIECEWISE_LINEAR);
  uint64_t off[5];
  double t[16], v[16];
  expect(mpcf_pcfs_offsets(L, off, 5), MPCF_OK, NULL);
  expect(mpcf_pcfs_breakpoints(L, t, v, 16), MPCF_OK, NULL);
  const uint64_t want_off[5] = {0, 3, 4, 7, 10};
  const double want_t[10] = {0, 1, 2, 0, 0, 2, 4, 1, 2, 3};
  const double want_v[10] = {0, 1, 0, 0, 0, 2, 0, 0, 1, 0};
  for (int k = 0; k < 5; ++k) assert_int_equal(off[k], want_off[k]);
  for (int k = 0; k < 10; ++k) {
    if (t[k] != want_t[k] || v[k] != want_v[k]) fail_msg("breakpoint %d: (%g, %g), expected (%g, %g)", k, t[k], v[k], want_t[k], want_v[k]);
  }
  /* Evaluation interpolates: lambda_1 of barcode 1 at 0.5, 3 and 10. */
  const double ts[3] = {0.5, 3, 10};
  double ev[12];
  expect(mpcf_pcfs_evaluate(L, ts, 3, ev, 12), MPCF_OK, NULL);
  assert_true(ev[2 * 3 + 0] == 0.5 && ev[2 * 3 + 1] == 1.0 && ev[2 * 3 + 2] == 0.0);
  /* The landscape distance of the two barcodes (components: lambda_1, lambda_2):
     L1 = |L1(l1 of 0, l1 of 1)| + L1(0, l2 of 1) = (4 - 1) + 1 = 4. */
  expect(mpcf_pcfs_set_component_axis(L, 1), MPCF_OK, NULL);
  uint64_t K = 0;
  expect(mpcf_pcfs_components(L, &K), MPCF_OK, NULL);
  assert_int_equal(K, 2);
  double d[1];
  expect(mpcf_pdist(L, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL), MPCF_OK, NULL);
  near(d[0], 4.0, 1e-15, "landscape L1 distance");
  /* L2: the lambda_1 difference is 0 on [0, 1], 2t - 2 on [1, 2] and 4 - t on
     [2, 4]: its square integrates to 4/3 + 8/3 = 4; lambda_2 of barcode 1
     squared integrates to 2/3: d = sqrt(4 + 2/3). */
  expect(mpcf_pdist(L, 2.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL), MPCF_OK, NULL);
  near(d[0], sqrt(4.0 + 2.0 / 3.0), 1e-15, "landscape L2 distance");
  mpcf_pcfs_destroy(L);
  /* Infinite bars need clip. */
  const double inf_bars[2] = {1, INFINITY};
  const uint64_t one[2] = {0, 1};
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, inf_bars, 1, INFINITY, &L), MPCF_ERROR_INVALID_ARGUMENT,
         "barcode 0, bar 0");
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, inf_bars, 1, 3.0, &L), MPCF_OK, NULL);
  expect(mpcf_pcfs_evaluate(L, ts + 1, 1, ev, 1), MPCF_OK, NULL); /* tent (1, 3) at 3 */
  assert_true(ev[0] == 0.0);
  mpcf_pcfs_destroy(L);
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, bars, 0, INFINITY, &L), MPCF_ERROR_INVALID_ARGUMENT, "k = 0");
  /* Silhouette, q = 1, of (0, 2) and (0, 4): weights 2 and 4; at t = 1:
     (2 * 1 + 4 * 1) / 6 = 1; at 2: (0 + 4 * 2) / 6 = 4/3. */
  const double sb[4] = {0, 2, 0, 4};
  const uint64_t so[2] = {0, 2};
  mpcf_pcfs* S = NULL;
  expect(mpcf_plfs_silhouettes(MPCF_FLOAT64, 1, so, sb, 1.0, INFINITY, &S), MPCF_OK, NULL);
  const double st[2] = {1, 2};
  expect(mpcf_pcfs_evaluate(S, st, 2, ev, 2), MPCF_OK, NULL);
  near(ev[0], 1.0, 1e-15, "silhouette at 1");
  near(ev[1], 4.0 / 3.0, 1e-15, "silhouette at 2");
  mpcf_pcfs_destroy(S);
}

/* k is limited only by the size of the result, checked before anything is
 * allocated: levels beyond the bars are zero functions (the shape stays
 * {n, k}); n * k functions take at least one breakpoint and one 64-bit
 * offset each, 2 * 8 + 8 = 24 bytes in float64, 2 * 4 + 8 = 16 in float32. */
static void test_landscapes_k_is_limited_by_the_result_size(void** s) {
  (void)s;
  const uint64_t one[2] = {0, 1};
  const double bar[2] = {0, 2};
  mpcf_pcfs* L = NULL;
  /* One bar, k = 4: lambda_1 is its tent, lambda_2 .. lambda_4 the zero
     function (0, 0). */
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, bar, 4, INFINITY, &L), MPCF_OK, NULL);
  uint64_t shape[2], off[5];
  double t[8], v[8];
  expect(mpcf_pcfs_shape(L, shape, 2), MPCF_OK, NULL);
  assert_int_equal(shape[0], 1);
  assert_int_equal(shape[1], 4);
  expect(mpcf_pcfs_offsets(L, off, 5), MPCF_OK, NULL);
  expect(mpcf_pcfs_breakpoints(L, t, v, 8), MPCF_OK, NULL);
  const uint64_t want_off[5] = {0, 3, 4, 5, 6};
  const double want_t[6] = {0, 1, 2, 0, 0, 0}, want_v[6] = {0, 1, 0, 0, 0, 0};
  for (int k = 0; k < 5; ++k) assert_int_equal(off[k], want_off[k]);
  for (int k = 0; k < 6; ++k) assert_true(t[k] == want_t[k] && v[k] == want_v[k]);
  mpcf_pcfs_destroy(L);

  /* k = 2^64 - 1 (was an attempt to build 2^64 - 1 zero functions, until
     memory ran out): more bytes than 64 bits count. The largest k named:
     floor((2^64 - 1) / 24) in float64; floor(floor((2^64 - 1) / 16) / 3) for
     3 barcodes in float32. *out is untouched. */
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x5e17;
  L = sentinel;
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, bar, UINT64_MAX, INFINITY, &L),
         MPCF_ERROR_INVALID_ARGUMENT, "k = 18446744073709551615 ");
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, bar, UINT64_MAX, INFINITY, &L),
         MPCF_ERROR_INVALID_ARGUMENT, "k can be at most 768614336404564650 ");
  assert_ptr_equal(L, sentinel);
  const uint64_t three[4] = {0, 1, 1, 1};
  expect(mpcf_plfs_landscapes(MPCF_FLOAT32, 3, three, bar, (uint64_t)1 << 62, INFINITY, &L),
         MPCF_ERROR_INVALID_ARGUMENT, "k can be at most 384307168202282325 ");
  /* One past the limit is refused, the limit itself only by the memory. */
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, bar, UINT64_C(768614336404564651), INFINITY, &L),
         MPCF_ERROR_INVALID_ARGUMENT, "k = 768614336404564651 ");
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, bar, UINT64_C(768614336404564650), INFINITY, &L),
         MPCF_ERROR_OUT_OF_MEMORY, "k = 768614336404564650 ");
  /* k = 2^40: 24 TiB, more than any machine's memory: refused by name,
     before anything is allocated. */
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, bar, (uint64_t)1 << 40, INFINITY, &L),
         MPCF_ERROR_OUT_OF_MEMORY, "k = 1099511627776 ");
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, one, bar, (uint64_t)1 << 40, INFINITY, &L),
         MPCF_ERROR_OUT_OF_MEMORY, "k can be at most ");
  assert_ptr_equal(L, sentinel);
  mpcf_error_detail detail = {sizeof(mpcf_error_detail), MPCF_OK, 0, 0, 0, 0};
  expect(mpcf_last_error_detail(&detail), MPCF_OK, NULL);
  assert_int_equal(detail.barcode_index, -1); /* about k, no barcode */
  /* No barcode: an empty result of shape (0, k), whatever k. */
  const uint64_t none[1] = {0};
  L = NULL;
  expect(mpcf_plfs_landscapes(MPCF_FLOAT64, 0, none, NULL, UINT64_MAX, INFINITY, &L), MPCF_OK, NULL);
  expect(mpcf_pcfs_shape(L, shape, 2), MPCF_OK, NULL);
  assert_int_equal(shape[0], 0);
  assert_true(shape[1] == UINT64_MAX);
  mpcf_pcfs_destroy(L);
}

static void test_plf_files_keep_the_type(void** s) {
  (void)s;
  mpcf_pcfs* X = make(1, MPCF_FLOAT32, 4, k4_offsets, k4_points);
  mpcf_pcfs* P = make(0, MPCF_FLOAT32, 4, k4_offsets, k4_points);
  uint64_t size = 0;
  expect(mpcf_pcfs_serialized_size(X, &size), MPCF_OK, NULL);
  unsigned char* bytes = malloc(size);
  expect(mpcf_pcfs_serialize(X, bytes, size), MPCF_OK, NULL);
  /* Version 2, ndim 1, function type 2. */
  assert_int_equal(bytes[8], 2);
  assert_int_equal(bytes[16], 1);
  assert_int_equal(bytes[20], 2);
  mpcf_pcfs* Y = NULL;
  expect(mpcf_pcfs_deserialize(bytes, size, &Y), MPCF_OK, NULL);
  mpcf_function_type ft;
  expect(mpcf_pcfs_function_type(Y, &ft), MPCF_OK, NULL);
  assert_int_equal(ft, MPCF_PIECEWISE_LINEAR);
  double d;
  expect(mpcf_lp_distance(X, 0, Y, 3, 1.0, NULL, &d), MPCF_OK, NULL); /* both PLFs */
  near(d, 11.0 / 6.0, 1e-6, "L1(tent, f3) after a round trip");
  free(bytes);
  /* A PCF collection is still written as version 1 (as every libmpcf reads it). */
  expect(mpcf_pcfs_serialized_size(P, &size), MPCF_OK, NULL);
  bytes = malloc(size);
  expect(mpcf_pcfs_serialize(P, bytes, size), MPCF_OK, NULL);
  assert_int_equal(bytes[8], 1);
  assert_int_equal(bytes[20], 0);
  mpcf_pcfs* Q = NULL;
  expect(mpcf_pcfs_deserialize(bytes, size, &Q), MPCF_OK, NULL);
  expect(mpcf_pcfs_function_type(Q, &ft), MPCF_OK, NULL);
  assert_int_equal(ft, MPCF_PIECEWISE_CONSTANT);
  free(bytes);
  /* A version-2 file with a function type 3 is corrupt, by name (the hash
     is not reached). */
  expect(mpcf_pcfs_serialized_size(X, &size), MPCF_OK, NULL);
  bytes = malloc(size);
  expect(mpcf_pcfs_serialize(X, bytes, size), MPCF_OK, NULL);
  bytes[20] = 3;
  mpcf_pcfs* Z = NULL;
  expect(mpcf_pcfs_deserialize(bytes, size, &Z), MPCF_ERROR_INVALID_ARGUMENT, "function type code is 3");
  assert_null(Z);
  free(bytes);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
  mpcf_pcfs_destroy(P);
  mpcf_pcfs_destroy(Q);
}

static void test_mixing_kinds_is_refused(void** s) {
  (void)s;
  mpcf_pcfs* X = make(1, MPCF_FLOAT64, 4, k4_offsets, k4_points);
  mpcf_pcfs* P = make(0, MPCF_FLOAT64, 4, k4_offsets, k4_points);
  double out[16], d;
  int64_t ix[4];
  const char* both = "X holds piecewise linear functions (PLFs) but Y holds piecewise constant functions (PCFs)";
  expect(mpcf_cdist(X, P, MPCF_METRIC_LP_DISTANCE, 1, out, 16, NULL), MPCF_ERROR_INVALID_ARGUMENT, both);
  expect(mpcf_knn(X, P, 1, 1, out, ix, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, both);
  expect(mpcf_lp_distance(X, 0, P, 0, 1, NULL, &d), MPCF_ERROR_INVALID_ARGUMENT, both);
  mpcf_pcfs* C = NULL;
  expect(mpcf_pcfs_combine(1, X, 1, P, &C), MPCF_ERROR_INVALID_ARGUMENT, both);
  assert_null(C);
  /* A sum of PLFs that would jump after it starts is refused by name. */
  const uint64_t o2[3] = {0, 2, 4};
  const double p2[8] = {0, 0, 2, 2, 1, 5, 3, 0}; /* the second starts at t = 1 with 5 */
  mpcf_pcfs* J = make(1, MPCF_FLOAT64, 2, o2, p2);
  mpcf_pcfs* R = NULL;
  expect(mpcf_pcfs_reduce(J, MPCF_REDUCE_SUM, MPCF_ALL_AXES, &R), MPCF_ERROR_INVALID_ARGUMENT, "starts at t = 1");
  assert_null(R);
  mpcf_pcfs_destroy(J);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(P);
}

/* Objects of two PCF components: A = (1 on [0, 1), 2 on [0, 1)), B = (0, 0),
 * C = (0 , 3 on [0, 2)). */
static void test_component_axis(void** s) {
  (void)s;
  const uint64_t offsets[7] = {0, 2, 4, 5, 6, 7, 9};
  const double pts[18] = {0, 1, 1, 0, 0, 2, 1, 0, /* A */
                          0, 0, 0, 0,             /* B */
                          0, 0, 0, 3, 2, 0 /* C */};
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    const double rel = dt ? 1e-15 : 1e-6;
    mpcf_pcfs* X = make(0, dtype, 6, offsets, pts);
    expect(mpcf_pcfs_set_component_axis(X, 1), MPCF_ERROR_INVALID_ARGUMENT, "at least 2 dimensions");
    const uint64_t shape[2] = {3, 2};
    expect(mpcf_pcfs_reshape(X, 2, shape), MPCF_OK, NULL);
    expect(mpcf_pcfs_set_component_axis(X, 1), MPCF_OK, NULL);
    uint64_t n = 0;
    expect(mpcf_pdist_size(X, MPCF_LAYOUT_CONDENSED, &n), MPCF_OK, NULL);
    assert_int_equal(n, 3);
    mpcf_options* o = cpu_options(2);
    double D[9], K[9];
    float D32[9], K32[9];
    void* dp = dt ? (void*)D : (void*)D32;
    void* kp = dt ? (void*)K : (void*)K32;
    /* d(A, B): L1 1 + 2 = 3; L2 sqrt(1 + 4); L3 (1 + 8)^(1/3); Linf 2.
       d(A, C): L1 1 + |2 - 3| + 3 = 5; d(B, C): L1 6; L2 (A, C): sqrt(1 + 1 + 9).
       Kernels: <A, A> = 1 + 4 = 5, <A, C> = 2 * 3 = 6, <C, C> = 18. */
    const double ps[4] = {1, 2, 3, INFINITY};
    const double want_ab[4] = {3, sqrt(5.0), cbrt(9.0), 2};
    for (int q = 0; q < 4; ++q) {
      expect(mpcf_pdist(X, ps[q], MPCF_LAYOUT_DENSE, dp, 9, o), MPCF_OK, NULL);
      const double got = dt ? D[1] : D32[1];
      near(got, want_ab[q], rel, "d(A, B)");
    }
    expect(mpcf_pdist(X, 1, MPCF_LAYOUT_DENSE, dp, 9, o), MPCF_OK, NULL);
    near(dt ? D[2] : D32[2], 5, rel, "L1(A, C)");
    near(dt ? D[5] : D32[5], 6, rel, "L1(B, C)");
    expect(mpcf_pdist(X, 2, MPCF_LAYOUT_DENSE, dp, 9, o), MPCF_OK, NULL);
    near(dt ? D[2] : D32[2], sqrt(11.0), rel, "L2(A, C)");
    expect(mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, kp, 9, o), MPCF_OK, NULL);
    near(dt ? K[0] : K32[0], 5, rel, "<A, A>");
    near(dt ? K[2] : K32[2], 6, rel, "<A, C>");
    near(dt ? K[8] : K32[8], 18, rel, "<C, C>");
    /* knn over objects: A's nearest (L1) is B (3 < 5). */
    double nd[3];
    float nd32[3];
    int64_t ni[3];
    expect(mpcf_knn(X, NULL, 1, 1, dt ? (void*)nd : (void*)nd32, ni, 3, o), MPCF_OK, NULL);
    assert_int_equal(ni[0], 1);
    /* lp_norm of objects: |A|_1 = 3, |C|_1 = 6. */
    expect(mpcf_lp_norm(X, 1, dt ? (void*)nd : (void*)nd32, 3, o), MPCF_OK, NULL);
    near(dt ? nd[0] : nd32[0], 3, rel, "|A|_1");
    near(dt ? nd[2] : nd32[2], 6, rel, "|C|_1");
    /* A collection without the axis cannot be compared with one that has it. */
    mpcf_pcfs* Y = make(0, dtype, 6, offsets, pts);
    expect(mpcf_cdist(X, Y, MPCF_METRIC_LP_DISTANCE, 1, dp, 9, o), MPCF_ERROR_INVALID_ARGUMENT, "same component axis");
    /* Backend CUDA computes objects too: the hand-worked L1 values where a
       GPU is present, else the plain "CUDA not available" of any call. */
    mpcf_options* cu = cpu_options(1);
    expect(mpcf_options_set_backend(cu, MPCF_BACKEND_CUDA), MPCF_OK, NULL);
    if (mpcf_cuda_device_count() > 0) {
      expect(mpcf_pdist(X, 1, MPCF_LAYOUT_DENSE, dp, 9, cu), MPCF_OK, NULL);
      near(dt ? D[1] : D32[1], 3, rel, "CUDA L1(A, B)");
      near(dt ? D[2] : D32[2], 5, rel, "CUDA L1(A, C)");
      near(dt ? D[5] : D32[5], 6, rel, "CUDA L1(B, C)");
    } else {
      expect(mpcf_pdist(X, 1, MPCF_LAYOUT_DENSE, dp, 9, cu), MPCF_ERROR_CUDA_UNAVAILABLE, "CUDA not available");
    }
    /* reshape drops the axis. */
    expect(mpcf_pcfs_reshape(X, 2, shape), MPCF_OK, NULL);
    expect(mpcf_pcfs_components(X, &n), MPCF_OK, NULL);
    assert_int_equal(n, 1);
    mpcf_options_destroy(cu);
    mpcf_options_destroy(o);
    mpcf_pcfs_destroy(X);
    mpcf_pcfs_destroy(Y);
  }
}

/* Found by fuzzing: the mat-vec's bound B took a PLF's norms as if it were
 * piecewise constant (the ramp (0,0),(2,10) counted as 0 on [0, 2)), so an
 * L2 mat-vec on [0, 1) failed with "a term exceeds its bound"
 * (MPCF_ERROR_INTERNAL). On [0, 1) the ramp is 5t: <f, f> = 25/3; with the
 * tent (0,0),(1,1),(2,0): <ramp, tent> = int 5t^2 = 5/3. */
static void test_plf_matvec_bound(void** s) {
  (void)s;
  const uint64_t offsets[3] = {0, 2, 5};
  const double pts[10] = {0, 0, 2, 10, 0, 0, 1, 1, 2, 0};
  mpcf_pcfs* X = make(1, MPCF_FLOAT64, 2, offsets, pts);
  mpcf_options* o = cpu_options(1);
  expect(mpcf_options_set_window(o, 0, 1), MPCF_OK, NULL);
  const double V[2] = {1, 0};
  double out[2];
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 2, 1, V, 2, 1, out, 2, o), MPCF_OK, NULL);
  near(out[0], 25.0 / 3.0, 1e-14, "<ramp, ramp> on [0, 1)");
  near(out[1], 5.0 / 3.0, 1e-14, "<tent, ramp> on [0, 1)");
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

/* Found by fuzzing: the silhouette of a barcode whose longest bar is
 * subnormal failed with a false overflow (its scale 2^1062 was inf). The
 * silhouette of one bar is its tent: at the midpoint, min(t - b, d - t). */
static void test_silhouette_of_a_subnormal_bar(void** s) {
  (void)s;
  const double d = 1e-320;
  const double bars[2] = {0, d};
  const uint64_t offsets[2] = {0, 1};
  mpcf_pcfs* S = NULL;
  expect(mpcf_plfs_silhouettes(MPCF_FLOAT64, 1, offsets, bars, 1.0, INFINITY, &S), MPCF_OK, NULL);
  const double t = 0.5 * d;
  double v = -1;
  expect(mpcf_pcfs_evaluate(S, &t, 1, &v, 1), MPCF_OK, NULL);
  assert_true(v == fmin(t, d - t));
  mpcf_pcfs_destroy(S);
  /* And a longest bar of 2^1023 or more (its scale 2^1024 was inf, found by
     fuzzing): the tent of (39019.5, 1.7e308) peaks at half its length. */
  const double huge[2] = {39019.5, 1.7e308};
  expect(mpcf_plfs_silhouettes(MPCF_FLOAT64, 1, offsets, huge, 1.0, INFINITY, &S), MPCF_OK, NULL);
  const double mid = 0.5 * huge[0] + 0.5 * huge[1];
  expect(mpcf_pcfs_evaluate(S, &mid, 1, &v, 1), MPCF_OK, NULL);
  near(v, fmin(mid - huge[0], huge[1] - mid), 1e-15, "silhouette of a huge bar at its peak");
  mpcf_pcfs_destroy(S);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plf_pair_values),
      cmocka_unit_test(test_plf_matrices_match_pairs),
      cmocka_unit_test(test_landscapes_and_silhouettes),
      cmocka_unit_test(test_landscapes_k_is_limited_by_the_result_size),
      cmocka_unit_test(test_plf_files_keep_the_type),
      cmocka_unit_test(test_mixing_kinds_is_refused),
      cmocka_unit_test(test_component_axis),
      cmocka_unit_test(test_plf_matvec_bound),
      cmocka_unit_test(test_silhouette_of_a_subnormal_bar),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
