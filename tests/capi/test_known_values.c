/* Values worked out by hand (each comment shows the pieces). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"

/* Builds a float64 collection from a list of functions given as
 * {t0, v0, t1, v1, ...} with their breakpoint counts. */
static mpcf_pcfs* collection(size_t n, const size_t* m, const double* const* points) {
  uint64_t offsets[16];
  double t[64], v[64];
  offsets[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < m[i]; ++k) {
      t[offsets[i] + k] = points[i][2 * k];
      v[offsets[i] + k] = points[i][2 * k + 1];
    }
    offsets[i + 1] = offsets[i] + m[i];
  }
  mpcf_pcfs* h = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, n, offsets, t, v, &h), MPCF_OK);
  return h;
}

static mpcf_pcfs* pair(size_t mf, const double* f, size_t mg, const double* g) {
  const size_t m[2] = {mf, mg};
  const double* pts[2] = {f, g};
  return collection(2, m, pts);
}

static double distance(mpcf_pcfs* X, double p, const mpcf_options* o) {
  double d = -1.0;
  assert_int_equal(mpcf_lp_distance(X, 0, X, 1, p, o, &d), MPCF_OK);
  /* pdist must give the same number. */
  double packed[1] = {-1.0};
  assert_int_equal(mpcf_pdist(X, p, MPCF_LAYOUT_PACKED_LOWER, packed, 1, o), MPCF_OK);
  if (isnan(d)) fail_msg("%s", "NaN distance");
  assert_true(packed[0] == d || (isinf(d) && packed[0] == d));
  return d;
}

static double inner(mpcf_pcfs* X, const mpcf_options* o) {
  double k = 0.0;
  assert_int_equal(mpcf_l2_inner_product(X, 0, X, 1, o, &k), MPCF_OK);
  return k;
}

static mpcf_options* window(double a, double b) {
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_window(o, a, b), MPCF_OK);
  return o;
}

static const double F1[] = {0, 3, 1, 0}, G1[] = {0, 1, 2, 0};
static const double F2[] = {0, 10, 2, 5, 3, 0}, G2[] = {0, 5, 6, 0};

static void test_l1_known(void** s) {
  (void)s;
  /* [0,1): |3-1| = 2; [1,2): |0-1| = 1 -> 3 */
  mpcf_pcfs* X = pair(2, F1, 2, G1);
  assert_true(distance(X, 1.0, NULL) == 3.0);
  /* L2: sqrt(2^2 * 1 + 1^2 * 1) = sqrt(5) */
  assert_true(fabs(distance(X, 2.0, NULL) - sqrt(5.0)) < 1e-15);
  /* Linf: 2 */
  assert_true(distance(X, INFINITY, NULL) == 2.0);
  mpcf_pcfs_destroy(X);

  /* [0,2): 5 * 2 = 10; [2,3): 0; [3,6): 5 * 3 = 15 -> 25 */
  X = pair(3, F2, 2, G2);
  assert_true(distance(X, 1.0, NULL) == 25.0);
  assert_true(distance(X, INFINITY, NULL) == 5.0);
  mpcf_pcfs_destroy(X);
}

static void test_kernel_known(void** s) {
  (void)s;
  static const double a[] = {0, 4, 3, 0}, b[] = {0, 2, 3, 0};
  mpcf_pcfs* X = pair(2, a, 2, b);
  /* 4*4*3 = 48, 4*2*3 = 24, 2*2*3 = 12 */
  double dense[4] = {0};
  assert_int_equal(mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, dense, 4, NULL), MPCF_OK);
  assert_true(dense[0] == 48.0 && dense[1] == 24.0 && dense[2] == 24.0 && dense[3] == 12.0);
  double packed[3] = {0};
  assert_int_equal(mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, packed, 3, NULL), MPCF_OK);
  assert_true(packed[0] == 48.0 && packed[1] == 24.0 && packed[2] == 12.0);
  mpcf_pcfs_destroy(X);
}

static void test_negative_times_and_values(void** s) {
  (void)s;
  static const double f[] = {-1, -2, 1, 0}, g[] = {0, 3, 2, 0};
  mpcf_pcfs* X = pair(2, f, 2, g);
  /* [-1,0): |-2-0| = 2; [0,1): |-2-3| = 5; [1,2): |0-3| = 3 -> 10 */
  assert_true(distance(X, 1.0, NULL) == 10.0);
  /* f*g: [-1,0): 0; [0,1): -6; [1,2): 0 -> -6 */
  assert_true(inner(X, NULL) == -6.0);
  mpcf_pcfs_destroy(X);
}

static void test_infinite_tails(void** s) {
  (void)s;
  static const double one[] = {0, 1}, two[] = {0, 2}, minus2[] = {0, -2}, one_b[] = {5, 1};
  mpcf_pcfs* X = pair(1, one, 1, two);
  assert_true(distance(X, 1.0, NULL) == INFINITY);
  assert_true(distance(X, 3.0, NULL) == INFINITY);
  assert_true(distance(X, INFINITY, NULL) == 1.0);
  assert_true(inner(X, NULL) == INFINITY);
  double dense[4];
  assert_int_equal(mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, dense, 4, NULL), MPCF_OK);
  assert_true(dense[0] == INFINITY && dense[1] == INFINITY && dense[3] == INFINITY);
  /* Finite window: [0, 2) -> |1-2| * 2 = 2, 1*2*2 = 4 */
  mpcf_options* o = window(0.0, 2.0);
  assert_true(distance(X, 1.0, o) == 2.0);
  assert_true(inner(X, o) == 4.0);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);

  X = pair(1, one, 1, minus2);
  assert_true(inner(X, NULL) == -INFINITY);
  mpcf_pcfs_destroy(X);

  /* Equal tails: the unbounded piece has integrand exactly 0 -> finite.
   * [0,5): |1-0| = 1 * 5 = 5; [5,inf): 0 */
  X = pair(1, one, 1, one_b);
  assert_true(distance(X, 1.0, NULL) == 5.0);
  mpcf_pcfs_destroy(X);

  /* A function with itself: exactly 0 despite the non-zero tail. */
  X = pair(1, one, 1, one);
  assert_true(distance(X, 1.0, NULL) == 0.0);
  mpcf_pcfs_destroy(X);
}

static void test_windows(void** s) {
  (void)s;
  mpcf_pcfs* X = pair(2, F1, 2, G1);
  mpcf_options* o = window(0.5, 1.5);
  /* [0.5,1): 2 * 0.5 = 1; [1,1.5): 1 * 0.5 = 0.5 -> 1.5 */
  assert_true(distance(X, 1.0, o) == 1.5);
  mpcf_options_destroy(o);
  o = window(-INFINITY, 0.5); /* [0, 0.5): 2 * 0.5 */
  assert_true(distance(X, 1.0, o) == 1.0);
  mpcf_options_destroy(o);
  o = window(-5.0, -1.0); /* before every breakpoint */
  assert_true(distance(X, 1.0, o) == 0.0);
  assert_true(distance(X, INFINITY, o) == 0.0);
  mpcf_options_destroy(o);
  o = window(1.5, INFINITY); /* [1.5, 2): 1 * 0.5 */
  assert_true(distance(X, 1.0, o) == 0.5);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);

  X = pair(3, F2, 2, G2);
  o = window(2.0, 3.0); /* |5 - 5| = 0 on the whole window */
  assert_true(distance(X, INFINITY, o) == 0.0);
  assert_true(distance(X, 1.0, o) == 0.0);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

static void test_small_n(void** s) {
  (void)s;
  uint64_t off0[1] = {0};
  mpcf_pcfs* E = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 0, off0, NULL, NULL, &E), MPCF_OK);
  uint64_t size = 99;
  assert_int_equal(mpcf_pdist_size(E, MPCF_LAYOUT_DENSE, &size), MPCF_OK);
  assert_int_equal(size, 0);
  assert_int_equal(mpcf_pdist(E, 1.0, MPCF_LAYOUT_CONDENSED, NULL, 0, NULL), MPCF_OK);
  assert_int_equal(mpcf_l2_kernel(E, MPCF_LAYOUT_DENSE, NULL, 0, NULL), MPCF_OK);
  mpcf_pcfs_destroy(E);

  static const double a[] = {0, 4, 3, 0};
  const size_t m[1] = {2};
  const double* pts[1] = {a};
  mpcf_pcfs* X = collection(1, m, pts);
  assert_int_equal(mpcf_pdist_size(X, MPCF_LAYOUT_CONDENSED, &size), MPCF_OK);
  assert_int_equal(size, 0);
  double d[1] = {7.0};
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_DENSE, d, 1, NULL), MPCF_OK);
  assert_true(d[0] == 0.0);
  assert_int_equal(mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, d, 1, NULL), MPCF_OK);
  assert_true(d[0] == 48.0);
  double norm[1];
  assert_int_equal(mpcf_lp_norm(X, 2.0, norm, 1, NULL), MPCF_OK); /* sqrt(16 * 3) */
  assert_true(fabs(norm[0] - sqrt(48.0)) < 1e-14);
  assert_int_equal(mpcf_lp_norm(X, 1.0, norm, 1, NULL), MPCF_OK);
  assert_true(norm[0] == 12.0);
  mpcf_pcfs_destroy(X);
}

static void test_dense_and_condensed_three(void** s) {
  (void)s;
  static const double f[] = {0, 3, 1, 0}, g[] = {0, 1, 2, 0}, h[] = {0, 0, 1, 1, 2, 0};
  const size_t m[3] = {2, 2, 3};
  const double* pts[3] = {f, g, h};
  mpcf_pcfs* X = collection(3, m, pts);
  /* d(f,g) = 3; d(f,h) = [0,1): 3, [1,2): 1 -> 4; d(g,h) = [0,1): 1, [1,2): 0 -> 1 */
  double dense[9], cond[3], packed[3];
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_DENSE, dense, 9, NULL), MPCF_OK);
  const double want[9] = {0, 3, 4, 3, 0, 1, 4, 1, 0};
  assert_memory_equal(dense, want, sizeof want);
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, cond, 3, NULL), MPCF_OK);
  assert_true(cond[0] == 3 && cond[1] == 4 && cond[2] == 1); /* (0,1) (0,2) (1,2) */
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_PACKED_LOWER, packed, 3, NULL), MPCF_OK);
  assert_true(packed[0] == 3 && packed[1] == 4 && packed[2] == 1); /* (1,0) (2,0) (2,1) */
  mpcf_pcfs_destroy(X);
}

static void test_interleaved_and_float32(void** s) {
  (void)s;
  const uint64_t off[3] = {0, 3, 5};
  const float pts[10] = {0, 10, 2, 5, 3, 0, 0, 5, 6, 0};
  mpcf_pcfs* X = NULL;
  assert_int_equal(mpcf_pcfs_create_interleaved(MPCF_FLOAT32, 2, off, pts, &X), MPCF_OK);
  float out[1];
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, NULL), MPCF_OK);
  assert_true(out[0] == 25.0f);
  mpcf_dtype dt;
  assert_int_equal(mpcf_pcfs_dtype(X, &dt), MPCF_OK);
  assert_int_equal(dt, MPCF_FLOAT32);
  uint64_t total = 0;
  assert_int_equal(mpcf_pcfs_total_breakpoints(X, &total), MPCF_OK);
  assert_int_equal(total, 5);
  mpcf_pcfs_destroy(X);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_l1_known),        cmocka_unit_test(test_kernel_known),
      cmocka_unit_test(test_negative_times_and_values),
      cmocka_unit_test(test_infinite_tails),  cmocka_unit_test(test_windows),
      cmocka_unit_test(test_small_n),         cmocka_unit_test(test_dense_and_condensed_three),
      cmocka_unit_test(test_interleaved_and_float32),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
