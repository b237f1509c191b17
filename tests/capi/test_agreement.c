/* Agreement of every operation, dtype, layout and window with the
 * brute-force long-double reference of reference.h, on random inputs,
 * including non-vanishing (infinite) tails and n = 0, 1, 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"
#include "reference.h"

typedef struct {
  double a, b;
} window;

static const window k_windows[] = {
    {-INFINITY, INFINITY}, {-1.5, 2.25}, {0.5, INFINITY}, {-INFINITY, 1.0}, {3.0, 3.5}};
#define N_WINDOWS (sizeof(k_windows) / sizeof(k_windows[0]))

static mpcf_pcfs* make_handle(const pcf_set* s, mpcf_dtype dtype) {
  mpcf_pcfs* h = NULL;
  mpcf_status st = dtype == MPCF_FLOAT32
                       ? mpcf_pcfs_create(dtype, s->n, s->offsets, s->t32, s->v32, &h)
                       : mpcf_pcfs_create(dtype, s->n, s->offsets, s->t, s->v, &h);
  if (st != MPCF_OK) fail_msg("create: %s", mpcf_last_error_message());
  return h;
}

static mpcf_options* make_options(window w) {
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CPU), MPCF_OK);
  if (!(isinf(w.a) && isinf(w.b))) assert_int_equal(mpcf_options_set_window(o, w.a, w.b), MPCF_OK);
  return o;
}

static double read_out(const void* buf, mpcf_dtype dtype, uint64_t k) {
  return dtype == MPCF_FLOAT32 ? (double)((const float*)buf)[k] : ((const double*)buf)[k];
}

static double tolerance(mpcf_dtype dtype) { return dtype == MPCF_FLOAT32 ? 1e-5 : 1e-12; }

static void expect_close(double got, long double want, long double scale, mpcf_dtype dtype,
                         const char* what, size_t i, size_t j) {
  if (!ref_close(got, want, scale, tolerance(dtype))) {
    fail_msg("%s (%zu, %zu): got %.17g, reference %.17Lg (scale %.3Lg, dtype %d)", what, i, j,
             got, want, scale, (int)dtype);
  }
}

static uint64_t symmetric_index(mpcf_layout layout, int kernel, size_t n, size_t i, size_t j) {
  /* i > j (or i >= j for kernels). */
  switch (layout) {
    case MPCF_LAYOUT_DENSE: return (uint64_t)i * n + j;
    case MPCF_LAYOUT_CONDENSED: return (uint64_t)n * j - (uint64_t)j * (j + 1) / 2 + (i - j - 1);
    default: return kernel ? (uint64_t)i * (i + 1) / 2 + j : (uint64_t)i * (i - 1) / 2 + j;
  }
}

/* pdist (or l2_kernel when op == REF_KERNEL) of s in every layout. */
static void check_pairwise(const pcf_set* s, mpcf_dtype dtype, enum ref_op op, double p, window w) {
  const int kernel = op == REF_KERNEL;
  mpcf_pcfs* X = make_handle(s, dtype);
  mpcf_options* o = make_options(w);
  const mpcf_layout layouts[] = {MPCF_LAYOUT_DENSE, MPCF_LAYOUT_CONDENSED, MPCF_LAYOUT_PACKED_LOWER};
  for (size_t li = 0; li < 3; ++li) {
    const mpcf_layout layout = layouts[li];
    if (kernel && layout == MPCF_LAYOUT_CONDENSED) continue;
    uint64_t size = 0;
    assert_int_equal(kernel ? mpcf_l2_kernel_size(X, layout, &size) : mpcf_pdist_size(X, layout, &size),
                     MPCF_OK);
    const size_t n = s->n;
    const uint64_t expected_size = layout == MPCF_LAYOUT_DENSE ? (uint64_t)n * n
                                   : kernel                    ? (uint64_t)n * (n + 1) / 2
                                                               : (n ? (uint64_t)n * (n - 1) / 2 : 0);
    assert_int_equal(size, expected_size);
    const size_t esz = dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
    unsigned char* buf = (unsigned char*)malloc((size_t)size * esz + 1);
    memset(buf, 0xAB, (size_t)size * esz + 1);
    mpcf_status st = kernel ? mpcf_l2_kernel(X, layout, buf, size, o)
                            : mpcf_pdist(X, p, layout, buf, size, o);
    if (st != MPCF_OK) fail_msg("pairwise: %s", mpcf_last_error_message());
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j <= i; ++j) {
        if (j == i && !kernel) {
          if (layout == MPCF_LAYOUT_DENSE) assert_true(read_out(buf, dtype, (uint64_t)i * n + i) == 0.0);
          continue;
        }
        long double scale;
        const long double want = ref_value(op, p, s, i, s, j, w.a, w.b, &scale);
        const uint64_t k = symmetric_index(layout, kernel, n, i, j);
        expect_close(read_out(buf, dtype, k), want, scale, dtype, "pairwise", i, j);
        if (layout == MPCF_LAYOUT_DENSE) {
          /* Exactly symmetric. */
          assert_memory_equal(buf + ((uint64_t)j * n + i) * esz, buf + k * esz, esz);
        }
      }
    }
    assert_int_equal(buf[(size_t)size * esz], 0xAB); /* nothing written past the end */
    free(buf);
  }
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

static void check_cross(const pcf_set* x, const pcf_set* y, mpcf_dtype dtype, enum ref_op op,
                        double p, window w, size_t ndx, const uint64_t* shx, size_t ndy,
                        const uint64_t* shy) {
  mpcf_pcfs* X = make_handle(x, dtype);
  mpcf_pcfs* Y = make_handle(y, dtype);
  if (ndx) assert_int_equal(mpcf_pcfs_reshape(X, ndx, shx), MPCF_OK);
  if (ndy) assert_int_equal(mpcf_pcfs_reshape(Y, ndy, shy), MPCF_OK);
  mpcf_options* o = make_options(w);
  uint64_t size = 0;
  assert_int_equal(mpcf_cdist_size(X, Y, &size), MPCF_OK);
  assert_int_equal(size, (uint64_t)x->n * y->n);
  const size_t esz = dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  void* buf = malloc((size_t)size * esz + 1);
  const mpcf_metric metric = op == REF_KERNEL ? MPCF_METRIC_L2_KERNEL : MPCF_METRIC_LP_DISTANCE;
  mpcf_status st = mpcf_cdist(X, Y, metric, p, buf, size, o);
  if (st != MPCF_OK) fail_msg("cdist: %s", mpcf_last_error_message());
  for (size_t i = 0; i < x->n; ++i) {
    for (size_t j = 0; j < y->n; ++j) {
      long double scale;
      const long double want = ref_value(op, p, x, i, y, j, w.a, w.b, &scale);
      expect_close(read_out(buf, dtype, (uint64_t)i * y->n + j), want, scale, dtype, "cdist", i, j);
    }
  }
  free(buf);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

typedef struct {
  enum ref_op op;
  double p;
} op_case;

static const op_case k_ops[] = {{REF_L1, 1.0}, {REF_LP, 2.0}, {REF_LP, 3.5},
                                {REF_LINF, INFINITY}, {REF_KERNEL, 2.0}};
#define N_OPS (sizeof(k_ops) / sizeof(k_ops[0]))

static void test_pairwise_random(void** state) {
  (void)state;
  ref_seed(12345);
  const size_t sizes[] = {0, 1, 2, 9, 23};
  for (size_t si = 0; si < 5; ++si) {
    for (int tail = 0; tail < 2; ++tail) {
      pcf_set s = pcf_set_random(sizes[si], 12, tail, 0);
      for (int d = 0; d < 2; ++d) {
        const mpcf_dtype dtype = d ? MPCF_FLOAT64 : MPCF_FLOAT32;
        for (size_t oi = 0; oi < N_OPS; ++oi) {
          for (size_t wi = 0; wi < N_WINDOWS; ++wi) {
            check_pairwise(&s, dtype, k_ops[oi].op, k_ops[oi].p, k_windows[wi]);
          }
        }
      }
      pcf_set_free(&s);
    }
  }
}

static void test_cross_random_shapes(void** state) {
  (void)state;
  ref_seed(777);
  const uint64_t shx2[] = {3, 4};
  const uint64_t shy3[] = {2, 1, 3};
  for (int tail = 0; tail < 2; ++tail) {
    pcf_set x = pcf_set_random(12, 10, tail, 0);
    pcf_set y = pcf_set_random(6, 10, tail, 0);
    for (int d = 0; d < 2; ++d) {
      const mpcf_dtype dtype = d ? MPCF_FLOAT64 : MPCF_FLOAT32;
      for (size_t oi = 0; oi < N_OPS; ++oi) {
        for (size_t wi = 0; wi < N_WINDOWS; ++wi) {
          /* rank 1 x rank 1, rank 2 x rank 3 */
          check_cross(&x, &y, dtype, k_ops[oi].op, k_ops[oi].p, k_windows[wi], 0, NULL, 0, NULL);
          check_cross(&x, &y, dtype, k_ops[oi].op, k_ops[oi].p, k_windows[wi], 2, shx2, 3, shy3);
        }
      }
    }
    pcf_set_free(&x);
    pcf_set_free(&y);
  }
  /* Empty operands. */
  pcf_set e = pcf_set_random(0, 3, 0, 0);
  pcf_set y = pcf_set_random(4, 3, 0, 0);
  check_cross(&e, &y, MPCF_FLOAT64, REF_L1, 1.0, k_windows[0], 0, NULL, 0, NULL);
  check_cross(&y, &e, MPCF_FLOAT32, REF_KERNEL, 2.0, k_windows[0], 0, NULL, 0, NULL);
  pcf_set_free(&e);
  pcf_set_free(&y);
}

/* Single pairs and norms against the reference. */
static void test_pairs_and_norms_random(void** state) {
  (void)state;
  ref_seed(4242);
  pcf_set s = pcf_set_random(8, 9, 1, 0);
  pcf_set zero; /* the zero function, for norms */
  uint64_t zoff[2] = {0, 1};
  double zt[1] = {0.0}, zv[1] = {0.0};
  zero.n = 1;
  zero.offsets = zoff;
  zero.t = zt;
  zero.v = zv;
  for (int d = 0; d < 2; ++d) {
    const mpcf_dtype dtype = d ? MPCF_FLOAT64 : MPCF_FLOAT32;
    mpcf_pcfs* X = make_handle(&s, dtype);
    for (size_t wi = 0; wi < N_WINDOWS; ++wi) {
      mpcf_options* o = make_options(k_windows[wi]);
      for (size_t oi = 0; oi < N_OPS; ++oi) {
        const op_case c = k_ops[oi];
        double norms[8];
        for (size_t i = 0; i < s.n; ++i) {
          for (size_t j = 0; j < s.n; ++j) {
            double got;
            long double scale;
            const long double want =
                ref_value(c.op, c.p, &s, i, &s, j, k_windows[wi].a, k_windows[wi].b, &scale);
            if (c.op == REF_KERNEL) {
              assert_int_equal(mpcf_l2_inner_product(X, i, X, j, o, &got), MPCF_OK);
            } else {
              assert_int_equal(mpcf_lp_distance(X, i, X, j, c.p, o, &got), MPCF_OK);
            }
            expect_close(got, want, scale, dtype, "pair", i, j);
          }
          if (c.op != REF_KERNEL) {
            float nf[8];
            double got;
            if (dtype == MPCF_FLOAT32) {
              assert_int_equal(mpcf_lp_norm(X, c.p, nf, 8, o), MPCF_OK);
              got = nf[i];
            } else {
              assert_int_equal(mpcf_lp_norm(X, c.p, norms, 8, o), MPCF_OK);
              got = norms[i];
            }
            long double scale;
            const long double want =
                ref_value(c.op, c.p, &s, i, &zero, 0, k_windows[wi].a, k_windows[wi].b, &scale);
            expect_close(got, want, scale, dtype, "norm", i, 0);
          }
        }
      }
      mpcf_options_destroy(o);
    }
    mpcf_pcfs_destroy(X);
  }
  pcf_set_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pairwise_random),
      cmocka_unit_test(test_cross_random_shapes),
      cmocka_unit_test(test_pairs_and_norms_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
