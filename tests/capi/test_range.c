/* The range promises of mpcf.h, each with values worked out by hand:
 * Lp distances neither overflow nor underflow where the true value is
 * representable (any finite p, float32 and float64), float32 inner products
 * of finite data are never NaN, block hints at the limits of uint64 do not
 * hang, a window empty in float32 is refused, and the task hold of
 * MPCF_DEBUG_HOLD_TASKS keeps a task running until it is cancelled. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"

/* Two functions f, g given as {t0, v0, t1, v1, ...}, in one collection of
 * the dtype (converted from double). */
static mpcf_pcfs* pair_of(mpcf_dtype dtype, size_t mf, const double* f, size_t mg,
                          const double* g) {
  const uint64_t offsets[3] = {0, mf, mf + mg};
  double t[32], v[32];
  float tf[32], vf[32];
  for (size_t k = 0; k < mf + mg; ++k) {
    const double* p = k < mf ? f + 2 * k : g + 2 * (k - mf);
    t[k] = p[0];
    v[k] = p[1];
    tf[k] = (float)p[0];
    vf[k] = (float)p[1];
  }
  mpcf_pcfs* h = NULL;
  if (dtype == MPCF_FLOAT32) {
    assert_int_equal(mpcf_pcfs_create(dtype, 2, offsets, tf, vf, &h), MPCF_OK);
  } else {
    assert_int_equal(mpcf_pcfs_create(dtype, 2, offsets, t, v, &h), MPCF_OK);
  }
  return h;
}

/* d(f, g) by lp_distance; pdist and cdist (CPU) must give the same bits, and
 * d(f, f) and d(g, g) must be exactly 0. */
static double lp(mpcf_pcfs* X, double p, const mpcf_options* o) {
  double d = -1.0;
  assert_int_equal(mpcf_lp_distance(X, 0, X, 1, p, o, &d), MPCF_OK);
  double self = -1.0;
  assert_int_equal(mpcf_lp_distance(X, 0, X, 0, p, o, &self), MPCF_OK);
  assert_true(self == 0.0);
  assert_int_equal(mpcf_lp_distance(X, 1, X, 1, p, o, &self), MPCF_OK);
  assert_true(self == 0.0);
  mpcf_dtype dtype;
  assert_int_equal(mpcf_pcfs_dtype(X, &dtype), MPCF_OK);
  if (dtype == MPCF_FLOAT32) {
    float packed[1] = {-1.0f}, cross[4];
    assert_int_equal(mpcf_pdist(X, p, MPCF_LAYOUT_PACKED_LOWER, packed, 1, o), MPCF_OK);
    assert_true((double)packed[0] == d);
    assert_int_equal(mpcf_cdist(X, X, MPCF_METRIC_LP_DISTANCE, p, cross, 4, o), MPCF_OK);
    assert_true((double)cross[1] == d && cross[0] == 0.0f && cross[3] == 0.0f);
  } else {
    double packed[1] = {-1.0}, cross[4];
    assert_int_equal(mpcf_pdist(X, p, MPCF_LAYOUT_PACKED_LOWER, packed, 1, o), MPCF_OK);
    assert_true(packed[0] == d);
    assert_int_equal(mpcf_cdist(X, X, MPCF_METRIC_LP_DISTANCE, p, cross, 4, o), MPCF_OK);
    assert_true(cross[1] == d && cross[0] == 0.0 && cross[3] == 0.0);
  }
  return d;
}

static const double TEN[] = {0, 10, 1, 0};   /* 10 on [0, 1), 0 after */
static const double ZERO[] = {0, 0};         /* the zero function */
static const double HALF[] = {0, 0.5, 1, 0}; /* 0.5 on [0, 1) */
static const double ONE_FOREVER[] = {0, 1};  /* 1 on [0, inf) */

/* Defect A: float32, finite p beyond FLT_MAX. d = 10 for every p. */
static void test_float32_p_beyond_flt_max(void** s) {
  (void)s;
  mpcf_pcfs* X = pair_of(MPCF_FLOAT32, 2, TEN, 1, ZERO);
  assert_true(lp(X, 1e39, NULL) == 10.0);
  assert_true(lp(X, 1e300, NULL) == 10.0);
  assert_true(lp(X, DBL_MAX, NULL) == 10.0);
  mpcf_pcfs_destroy(X);
  /* Over an unbounded support every finite p gives +inf. */
  X = pair_of(MPCF_FLOAT32, 1, ONE_FOREVER, 1, ZERO);
  assert_true(isinf(lp(X, 1e39, NULL)));
  mpcf_pcfs_destroy(X);
}

/* Defect D: large p overflowed (10^p) or underflowed (0.5^p). */
static void test_large_p_is_exact(void** s) {
  (void)s;
  const double ps[] = {3, 40, 400, 2000, 1e6, 1e300};
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    mpcf_pcfs* X = pair_of(dtype, 2, TEN, 1, ZERO);
    mpcf_pcfs* H = pair_of(dtype, 2, HALF, 1, ZERO);
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; ++k) {
      /* One piece of width 1: (w * x^p)^(1/p) = x exactly. */
      if (lp(X, ps[k], NULL) != 10.0) fail_msg("dtype %d p = %g: not 10", dt, ps[k]);
      if (lp(H, ps[k], NULL) != 0.5) fail_msg("dtype %d p = %g: not 0.5", dt, ps[k]);
    }
    mpcf_pcfs_destroy(X);
    mpcf_pcfs_destroy(H);
  }
}

/* Several pieces: the rescaling when a larger difference arrives. */
static void test_scaled_power_sum_pieces(void** s) {
  (void)s;
  /* |f - g| = 3 on [0,1), 4 on [1,2): p = 2 gives sqrt(9 + 16) = 5
     (3, then 4 > 3: sum = 1 * (3/4)^2 + 1 = 1.5625, 4 * 1.25 = 5, exact). */
  const double F[] = {0, 3, 1, 4, 2, 0};
  mpcf_pcfs* X = pair_of(MPCF_FLOAT64, 3, F, 1, ZERO);
  assert_true(lp(X, 2.0, NULL) == 5.0);
  /* p = 3: (27 + 64)^(1/3) = 91^(1/3) = 4.497941445275415... */
  assert_true(fabs(lp(X, 3.0, NULL) - 4.497941445275415) < 1e-14);
  mpcf_pcfs_destroy(X);
  /* 2 on [0,1), 1 on [1,2), p = 1100: 2^1100 overflows double, but
     (2^1100 + 1)^(1/1100) = 2 (1 + 2^-1100)^(1/1100) rounds to 2. */
  const double G[] = {0, 2, 1, 1, 2, 0};
  X = pair_of(MPCF_FLOAT64, 3, G, 1, ZERO);
  assert_true(lp(X, 1100.0, NULL) == 2.0);
  mpcf_pcfs_destroy(X);
  /* Windows: 1 for ever on [0, 8): p = 3 gives 8^(1/3) = 2. */
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_window(o, 0.0, 8.0), MPCF_OK);
  X = pair_of(MPCF_FLOAT64, 1, ONE_FOREVER, 1, ZERO);
  assert_true(fabs(lp(X, 3.0, o) - 2.0) < 1e-15);
  assert_true(isinf(lp(X, 3.0, NULL)));
  mpcf_pcfs_destroy(X);
  mpcf_options_destroy(o);
  /* |f - g| overflows on two pieces (1e308 - (-1e308) and 1.5e308 -
     (-1.5e308) in float64; 3e38 - (-3e38) in float32): +inf for every p,
     never NaN (found by fuzzing: inf / inf in the scaled sum). */
  const double BIG[] = {0, 1e308, 1, 1.5e308, 2, 0};
  const double NEG[] = {0, -1e308, 1, -1.5e308, 2, 0};
  const double BIG32[] = {0, 3e38, 1, 3.2e38, 2, 0};
  const double NEG32[] = {0, -3e38, 1, -3.2e38, 2, 0};
  const double pv[] = {1.5, 2.0, 3.0, 400.0};
  for (int dt = 0; dt < 2; ++dt) {
    X = dt ? pair_of(MPCF_FLOAT64, 3, BIG, 3, NEG) : pair_of(MPCF_FLOAT32, 3, BIG32, 3, NEG32);
    for (size_t k = 0; k < sizeof pv / sizeof pv[0]; ++k) {
      const double d = lp(X, pv[k], NULL);
      if (!(isinf(d) && d > 0)) fail_msg("dtype %d p = %g: %g, expected +inf", dt, pv[k], d);
    }
    mpcf_pcfs_destroy(X);
  }
}

/* Defect E: float32 inner products of finite data. */
static void test_float32_inner_product_never_nan(void** s) {
  (void)s;
  const double two70 = ldexp(1.0, 70);
  /* f = 2^70 on [0, 2), g = 2^70 on [0,1), -2^70 on [1,2):
     2^140 - 2^140 = 0 exactly (each piece alone exceeds FLT_MAX). */
  const double F[] = {0, two70, 2, 0};
  const double G[] = {0, two70, 1, -two70, 2, 0};
  mpcf_pcfs* X = pair_of(MPCF_FLOAT32, 2, F, 3, G);
  double k = -1.0;
  assert_int_equal(mpcf_l2_inner_product(X, 0, X, 1, NULL, &k), MPCF_OK);
  assert_true(k == 0.0);
  /* The kernel matrix: <f, f> = 2^141 is not representable in float32: +inf,
     <g, g> likewise; <f, g> = 0. */
  float K[4];
  assert_int_equal(mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, K, 4, NULL), MPCF_OK);
  assert_true(isinf(K[0]) && K[0] > 0 && isinf(K[3]) && K[3] > 0);
  assert_true(K[1] == 0.0f && K[2] == 0.0f);
  mpcf_pcfs_destroy(X);
  /* 1e30 pieces (the example): (1e30)(1e30) - (1e30)(1e30) = 0. */
  const double F2[] = {0, 1e30, 1, 1e30, 2, 0};
  const double G2[] = {0, 1e30, 1, -1e30, 2, 0};
  X = pair_of(MPCF_FLOAT32, 3, F2, 3, G2);
  assert_int_equal(mpcf_l2_inner_product(X, 0, X, 1, NULL, &k), MPCF_OK);
  assert_true(k == 0.0);
  mpcf_pcfs_destroy(X);
}

/* The documented range limits of mpcf.h (found by fuzzing, stated rather
 * than changed): a piece wider than the dtype's largest value counts as
 * unbounded, and a float64 product f g below the smallest subnormal rounds
 * to 0, on an unbounded piece too. Values by hand. */
static void test_documented_range_limits(void** s) {
  (void)s;
  /* float32 f = 1 on [-3e38, 3e38) (width 6e38 > FLT_MAX), g = 0: the exact
     L1 distance 6e38 is beyond FLT_MAX anyway; with f = 1e-30 it would be
     6e8, yet the piece counts as unbounded: +inf, for L1 and L2; Linf stays
     1e-30 (no width involved). g has no breakpoint inside the piece (one
     inside would split it into two pieces of width 3e38, each in range). */
  const double F[] = {-3e38, 1e-30, 3e38, 0};
  const double G0[] = {-3e38, 0};
  mpcf_pcfs* X = pair_of(MPCF_FLOAT32, 2, F, 1, G0);
  double d = -1.0;
  assert_int_equal(mpcf_lp_distance(X, 0, X, 1, 1.0, NULL, &d), MPCF_OK);
  assert_true(isinf(d) && d > 0);
  assert_int_equal(mpcf_lp_distance(X, 0, X, 1, 2.0, NULL, &d), MPCF_OK);
  assert_true(isinf(d) && d > 0);
  assert_int_equal(mpcf_lp_distance(X, 0, X, 1, INFINITY, NULL, &d), MPCF_OK);
  assert_true(d == (double)1e-30f);
  double k = -1.0;
  assert_int_equal(mpcf_l2_inner_product(X, 0, X, 0, NULL, &k), MPCF_OK);
  assert_true(isinf(k) && k > 0);
  mpcf_pcfs_destroy(X);
  /* float64 f = g = 1e-200 on [0, inf): f g = 1e-400 rounds to 0, so
     <f, g> is 0 (exactly: +inf); on [0, 1) the same. */
  const double TINY[] = {0, 1e-200};
  X = pair_of(MPCF_FLOAT64, 1, TINY, 1, TINY);
  assert_int_equal(mpcf_l2_inner_product(X, 0, X, 1, NULL, &k), MPCF_OK);
  assert_true(k == 0.0);
  mpcf_pcfs_destroy(X);
}

/* Defect B: block hints at the top of uint64 made the block side loop
   wrap around; any hint must give the right result. */
static void test_block_hints_at_uint64_max(void** s) {
  (void)s;
  const double F[] = {0, 3, 1, 0}, G[] = {0, 1, 2, 0}; /* d = 2 + 1 = 3 */
  mpcf_pcfs* X = pair_of(MPCF_FLOAT64, 2, F, 2, G);
  const uint64_t big[] = {UINT64_MAX, UINT64_MAX - 1, (uint64_t)1 << 63, 0};
  for (size_t a = 0; a < 4; ++a) {
    for (size_t b = 0; b < 4; ++b) {
      mpcf_options* o = NULL;
      assert_int_equal(mpcf_options_create(&o), MPCF_OK);
      assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CPU), MPCF_OK);
      assert_int_equal(mpcf_options_set_block_hints(o, big[a], big[b], big[(a + b) % 4]), MPCF_OK);
      double d[1] = {-1};
      assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, o), MPCF_OK);
      assert_true(d[0] == 3.0);
      mpcf_options_destroy(o);
    }
  }
  mpcf_pcfs_destroy(X);
}

/* Defect F: a window that rounds to empty in float32 is refused when the
   computation starts; in float64 it is a valid (tiny) window. */
static void test_window_empty_in_float32(void** s) {
  (void)s;
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_window(o, 1.0, 1.0 + 1e-12), MPCF_OK);
  mpcf_pcfs* X = pair_of(MPCF_FLOAT32, 2, TEN, 1, ZERO);
  float d[1] = {-7.0f};
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, o), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "empty in float32"));
  assert_true(d[0] == -7.0f); /* untouched */
  double dd = -7.0;
  assert_int_equal(mpcf_lp_distance(X, 0, X, 1, 1.0, o, &dd), MPCF_ERROR_INVALID_ARGUMENT);
  assert_true(dd == -7.0);
  mpcf_pcfs_destroy(X);
  /* float64: 10 on [0,1) vs 0, window [0.5, 0.5 + 2^-30): 10 * 2^-30. */
  mpcf_options_destroy(o);
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_window(o, 0.5, 0.5 + ldexp(1.0, -30)), MPCF_OK);
  X = pair_of(MPCF_FLOAT64, 2, TEN, 1, ZERO);
  assert_true(lp(X, 1.0, o) == 10.0 * ldexp(1.0, -30));
  mpcf_pcfs_destroy(X);
  mpcf_options_destroy(o);
}

/* Defect G's remedy: a held task is still running whenever it is looked at,
   however fast the machine, until it is cancelled. */
static void test_debug_hold_keeps_a_task_running(void** s) {
  (void)s;
  mpcf_pcfs* X = pair_of(MPCF_FLOAT64, 2, TEN, 1, ZERO);
  double d[1] = {-1.0};
  assert_int_equal(setenv("MPCF_DEBUG_HOLD_TASKS", "1", 1), 0);
  mpcf_task* task = NULL;
  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL, &task), MPCF_OK);
  assert_int_equal(unsetenv("MPCF_DEBUG_HOLD_TASKS"), 0);
  assert_int_equal(mpcf_task_wait(task, 0.05), MPCF_RUNNING);
  assert_int_equal(mpcf_task_status(task), MPCF_RUNNING);
  assert_int_equal(mpcf_task_cancel(task), MPCF_OK);
  assert_int_equal(mpcf_task_wait(task, -1.0), MPCF_ERROR_CANCELLED);
  assert_true(isnan(d[0]));
  mpcf_task_destroy(task);
  /* Synchronous calls ignore the hold; "0" switches it off. */
  assert_int_equal(setenv("MPCF_DEBUG_HOLD_TASKS", "1", 1), 0);
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL), MPCF_OK);
  assert_true(d[0] == 10.0);
  assert_int_equal(setenv("MPCF_DEBUG_HOLD_TASKS", "0", 1), 0);
  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL, &task), MPCF_OK);
  assert_int_equal(mpcf_task_wait(task, -1.0), MPCF_OK);
  assert_true(d[0] == 10.0);
  mpcf_task_destroy(task);
  assert_int_equal(unsetenv("MPCF_DEBUG_HOLD_TASKS"), 0);
  mpcf_pcfs_destroy(X);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_float32_p_beyond_flt_max),
      cmocka_unit_test(test_large_p_is_exact),
      cmocka_unit_test(test_scaled_power_sum_pieces),
      cmocka_unit_test(test_float32_inner_product_never_nan),
      cmocka_unit_test(test_documented_range_limits),
      cmocka_unit_test(test_block_hints_at_uint64_max),
      cmocka_unit_test(test_window_empty_in_float32),
      cmocka_unit_test(test_debug_hold_keeps_a_task_running),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
