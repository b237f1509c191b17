/* The reductions over the pair plane through the C API, against plain
 * references written here: k nearest neighbours against a sort of the full
 * distance matrix (computed by pdist/cdist, whose values test_agreement
 * checks against the brute-force reference), kernel mat-vec against a long
 * double sum over the kernel matrix, the block streams against the dense
 * matrix; the same bits for any thread count and block hints; every bad
 * argument; cancellation. */
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
#include "reference.h"

/* ---- data ---- */

static mpcf_pcfs* make(const pcf_set* s, mpcf_dtype dtype) {
  mpcf_pcfs* h = NULL;
  const void* t = dtype == MPCF_FLOAT32 ? (const void*)s->t32 : (const void*)s->t;
  const void* v = dtype == MPCF_FLOAT32 ? (const void*)s->v32 : (const void*)s->v;
  assert_int_equal(mpcf_pcfs_create(dtype, s->n, s->offsets, t, v, &h), MPCF_OK);
  return h;
}

/* n functions on an integer grid: times 0, 1, 2, ... (1..4 breakpoints),
 * values in {0, 1, 2}, last value 0: distances are small integers, so many
 * pairs tie. */
static pcf_set grid_set(size_t n) {
  pcf_set s;
  s.n = n;
  s.offsets = (uint64_t*)malloc((n + 1) * sizeof(uint64_t));
  s.offsets[0] = 0;
  for (size_t i = 0; i < n; ++i) s.offsets[i + 1] = s.offsets[i] + 1 + ref_next() % 4;
  const size_t total = (size_t)s.offsets[n];
  s.t = (double*)malloc(total * sizeof(double));
  s.v = (double*)malloc(total * sizeof(double));
  s.t32 = (float*)malloc(total * sizeof(float));
  s.v32 = (float*)malloc(total * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    for (uint64_t k = s.offsets[i]; k < s.offsets[i + 1]; ++k) {
      const double t = (double)(k - s.offsets[i]);
      const double v = k + 1 == s.offsets[i + 1] ? 0.0 : (double)(ref_next() % 3);
      s.t[k] = t;
      s.v[k] = v;
      s.t32[k] = (float)t;
      s.v32[k] = (float)v;
    }
  }
  return s;
}

static mpcf_options* options(int threads, uint64_t split, uint64_t maxElements, double a, double b) {
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CPU), MPCF_OK);
  assert_int_equal(mpcf_options_set_threads(o, threads), MPCF_OK);
  assert_int_equal(mpcf_options_set_block_hints(o, split, 0, maxElements), MPCF_OK);
  if (!(isinf(a) && isinf(b))) assert_int_equal(mpcf_options_set_window(o, a, b), MPCF_OK);
  return o;
}

/* The full distance matrix as doubles: d[i * ny + j] (Y NULL: X against X). */
static double* distance_matrix(mpcf_pcfs* X, mpcf_pcfs* Y, mpcf_dtype dtype, double p,
                               const mpcf_options* o, size_t nx, size_t ny) {
  double* d = (double*)malloc(nx * ny * sizeof(double) + 1);
  if (dtype == MPCF_FLOAT32) {
    float* f = (float*)malloc(nx * ny * sizeof(float) + 1);
    if (Y) {
      assert_int_equal(mpcf_cdist(X, Y, MPCF_METRIC_LP_DISTANCE, p, f, nx * ny, o), MPCF_OK);
    } else {
      assert_int_equal(mpcf_pdist(X, p, MPCF_LAYOUT_DENSE, f, nx * ny, o), MPCF_OK);
    }
    for (size_t e = 0; e < nx * ny; ++e) d[e] = f[e];
    free(f);
  } else if (Y) {
    assert_int_equal(mpcf_cdist(X, Y, MPCF_METRIC_LP_DISTANCE, p, d, nx * ny, o), MPCF_OK);
  } else {
    assert_int_equal(mpcf_pdist(X, p, MPCF_LAYOUT_DENSE, d, nx * ny, o), MPCF_OK);
  }
  return d;
}

/* ---- k nearest neighbours ---- */

typedef struct {
  double d;
  int64_t j;
} cand;

static int cand_cmp(const void* a, const void* b) {
  const cand* x = (const cand*)a;
  const cand* y = (const cand*)b;
  if (x->d < y->d) return -1;
  if (x->d > y->d) return 1;
  return x->j < y->j ? -1 : (x->j > y->j ? 1 : 0);
}

/* Each owner's k entries (of dtype) against the k smallest of its n
 * candidates (distance, index) sorted by (distance, index): row i of D
 * (owners x n), or column i of D (n x other) when transposed; the owner
 * itself is no candidate when exclude_self. */
static void check_lists(const char* what, const void* dist, const int64_t* idx, mpcf_dtype dtype,
                        size_t owners, size_t k, const double* D, size_t n, int transposed,
                        size_t other, int exclude_self) {
  cand* row = (cand*)malloc(n * sizeof(cand) + 1);
  for (size_t i = 0; i < owners; ++i) {
    size_t m = 0;
    for (size_t j = 0; j < n; ++j) {
      if (exclude_self && j == i) continue;
      row[m].d = transposed ? D[j * other + i] : D[i * n + j];
      row[m].j = (int64_t)j;
      ++m;
    }
    qsort(row, m, sizeof(cand), cand_cmp);
    for (size_t q = 0; q < k; ++q) {
      const double got = dtype == MPCF_FLOAT32 ? (double)((const float*)dist)[i * k + q]
                                               : ((const double*)dist)[i * k + q];
      if (idx[i * k + q] != row[q].j || !(got == row[q].d)) {
        fail_msg("%s: list %zu, neighbour %zu is (%lld, %g), expected (%lld, %g)", what, i, q,
                 (long long)idx[i * k + q], got, (long long)row[q].j, row[q].d);
      }
    }
  }
  free(row);
}

/* Runs knn and checks every row against a sort of its row of the matrix. */
static void check_knn(const pcf_set* xs, const pcf_set* ys, mpcf_dtype dtype, double p, size_t k,
                      double a, double b) {
  mpcf_pcfs* X = make(xs, dtype);
  mpcf_pcfs* Y = ys ? make(ys, dtype) : NULL;
  const size_t nx = xs->n, ny = ys ? ys->n : xs->n;
  mpcf_options* o = options(2, 0, 0, a, b);
  double* D = distance_matrix(X, Y, dtype, p, o, nx, ny);
  const size_t esz = dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  void* dist = malloc(nx * k * esz + 1);
  int64_t* idx = (int64_t*)malloc(nx * k * sizeof(int64_t) + 1);
  uint64_t size = 0;
  assert_int_equal(mpcf_knn_size(X, k, &size), MPCF_OK);
  assert_int_equal(size, nx * k);
  assert_int_equal(mpcf_knn(X, Y, p, k, dist, idx, nx * k, o), MPCF_OK);
  char what[64];
  snprintf(what, sizeof what, "knn dtype %d p %g k %zu", (int)dtype, p, k);
  check_lists(what, dist, idx, dtype, nx, k, D, ny, 0, 0, !Y);
  /* The same bits with other thread counts and blocks. */
  const int threads[] = {1, 16, 3};
  const uint64_t maxElements[] = {0, 7 * 7, 1};
  for (int c = 0; c < 3; ++c) {
    mpcf_options* o2 = options(threads[c], c == 2 ? 5 : 0, maxElements[c], a, b);
    void* dist2 = malloc(nx * k * esz + 1);
    int64_t* idx2 = (int64_t*)malloc(nx * k * sizeof(int64_t) + 1);
    assert_int_equal(mpcf_knn(X, Y, p, k, dist2, idx2, nx * k, o2), MPCF_OK);
    assert_memory_equal(dist, dist2, nx * k * esz);
    assert_memory_equal(idx, idx2, nx * k * sizeof(int64_t));
    free(dist2);
    free(idx2);
    mpcf_options_destroy(o2);
  }
  free(dist);
  free(idx);
  free(D);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

static void test_knn_random(void** s) {
  (void)s;
  ref_seed(11);
  pcf_set xs = pcf_set_random(61, 12, 0, 0);
  pcf_set ys = pcf_set_random(37, 12, 0, 0);
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    check_knn(&xs, NULL, dtype, 1.0, 5, -INFINITY, INFINITY);
    check_knn(&xs, NULL, dtype, 2.0, 1, -INFINITY, INFINITY);
    check_knn(&xs, NULL, dtype, INFINITY, 60, -INFINITY, INFINITY); /* k = n - 1 */
    check_knn(&xs, &ys, dtype, 3.0, 37, -INFINITY, INFINITY);       /* k = |Y| */
    check_knn(&xs, &ys, dtype, 1.0, 4, -1.0, 2.5);                   /* a window */
  }
  pcf_set_free(&xs);
  pcf_set_free(&ys);
}

/* mpcf_knn_both: X's lists among Y and Y's among X from one pass, against
 * sorts of the rows and the columns of the cdist matrix, and bit for bit
 * mpcf_knn(X, Y, kx) and mpcf_knn(Y, X, ky), for thread counts and blocks. */
static void check_knn_both(const pcf_set* xs, const pcf_set* ys, mpcf_dtype dtype, double p,
                           size_t kx, size_t ky, double a, double b) {
  mpcf_pcfs* X = make(xs, dtype);
  mpcf_pcfs* Y = make(ys, dtype);
  const size_t nx = xs->n, ny = ys->n;
  const size_t esz = dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  mpcf_options* o = options(2, 0, 0, a, b);
  double* D = distance_matrix(X, Y, dtype, p, o, nx, ny);
  void* xd = malloc(nx * kx * esz + 1);
  int64_t* xi = (int64_t*)malloc(nx * kx * sizeof(int64_t) + 1);
  void* yd = malloc(ny * ky * esz + 1);
  int64_t* yi = (int64_t*)malloc(ny * ky * sizeof(int64_t) + 1);
  assert_int_equal(mpcf_knn_both(X, Y, p, kx, ky, xd, xi, nx * kx, yd, yi, ny * ky, o), MPCF_OK);
  check_lists("X among Y", xd, xi, dtype, nx, kx, D, ny, 0, 0, 0);
  check_lists("Y among X", yd, yi, dtype, ny, ky, D, nx, 1, ny, 0);
  void* d1 = malloc(nx * kx * esz + 1);
  int64_t* i1 = (int64_t*)malloc(nx * kx * sizeof(int64_t) + 1);
  void* d2 = malloc(ny * ky * esz + 1);
  int64_t* i2 = (int64_t*)malloc(ny * ky * sizeof(int64_t) + 1);
  assert_int_equal(mpcf_knn(X, Y, p, kx, d1, i1, nx * kx, o), MPCF_OK);
  assert_int_equal(mpcf_knn(Y, X, p, ky, d2, i2, ny * ky, o), MPCF_OK);
  assert_memory_equal(xd, d1, nx * kx * esz);
  assert_memory_equal(xi, i1, nx * kx * sizeof(int64_t));
  assert_memory_equal(yd, d2, ny * ky * esz);
  assert_memory_equal(yi, i2, ny * ky * sizeof(int64_t));
  const int threads[] = {1, 16, 3};
  const uint64_t maxElements[] = {0, 7 * 7, 1};
  for (int c = 0; c < 3; ++c) {
    mpcf_options* o2 = options(threads[c], c == 2 ? 5 : 0, maxElements[c], a, b);
    assert_int_equal(mpcf_knn_both(X, Y, p, kx, ky, d1, i1, nx * kx, d2, i2, ny * ky, o2), MPCF_OK);
    assert_memory_equal(xd, d1, nx * kx * esz);
    assert_memory_equal(xi, i1, nx * kx * sizeof(int64_t));
    assert_memory_equal(yd, d2, ny * ky * esz);
    assert_memory_equal(yi, i2, ny * ky * sizeof(int64_t));
    mpcf_options_destroy(o2);
  }
  free(d1);
  free(i1);
  free(d2);
  free(i2);
  free(xd);
  free(xi);
  free(yd);
  free(yi);
  free(D);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

static void test_knn_both_ways(void** s) {
  (void)s;
  ref_seed(21);
  pcf_set xs = pcf_set_random(61, 12, 0, 0);
  pcf_set ys = pcf_set_random(37, 12, 0, 0);
  pcf_set gx = grid_set(45); /* small integer distances: many ties */
  pcf_set gy = grid_set(29);
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    check_knn_both(&xs, &ys, dtype, 1.0, 5, 7, -INFINITY, INFINITY);
    check_knn_both(&xs, &ys, dtype, 2.0, 37, 61, -INFINITY, INFINITY); /* every candidate */
    check_knn_both(&xs, &ys, dtype, INFINITY, 1, 40, -1.0, 2.5);        /* a window */
    check_knn_both(&gx, &gy, dtype, 1.0, 6, 3, -INFINITY, INFINITY);
  }
  pcf_set_free(&xs);
  pcf_set_free(&ys);
  pcf_set_free(&gx);
  pcf_set_free(&gy);
}

static void test_knn_ties_and_infinite_distances(void** s) {
  (void)s;
  ref_seed(12);
  /* An integer grid: many equal distances, ties go to the smaller index. */
  pcf_set g = grid_set(70);
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    check_knn(&g, NULL, dtype, 1.0, 9, -INFINITY, INFINITY);
    check_knn(&g, &g, dtype, 1.0, 9, -INFINITY, INFINITY); /* self included: distance 0 first */
  }
  /* Non-vanishing tails: +inf distances, sorted last (ties by index). */
  pcf_set tails = pcf_set_random(40, 6, 1, 0);
  check_knn(&tails, NULL, MPCF_FLOAT64, 1.0, 39, -INFINITY, INFINITY);
  check_knn(&tails, NULL, MPCF_FLOAT64, 1.0, 7, 0.0, 3.0);
  pcf_set_free(&g);
  pcf_set_free(&tails);
}

/* Hand-worked: f0 = 1 on [0,1), f1 = 2 on [0,1), f2 = 4 on [0,1), f3 = 1 on
 * [0,1): L1 distances d01 = 1, d02 = 3, d03 = 0, d12 = 2, d13 = 1, d23 = 3. */
static void test_knn_known_values(void** s) {
  (void)s;
  const uint64_t offsets[5] = {0, 2, 4, 6, 8};
  const double t[8] = {0, 1, 0, 1, 0, 1, 0, 1}, v[8] = {1, 0, 2, 0, 4, 0, 1, 0};
  mpcf_pcfs* X = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 4, offsets, t, v, &X), MPCF_OK);
  double d[8];
  int64_t ix[8];
  assert_int_equal(mpcf_knn(X, NULL, 1.0, 2, d, ix, 8, NULL), MPCF_OK);
  const double wd[8] = {0, 1, 1, 1, 2, 3, 0, 1};
  const int64_t wi[8] = {3, 1, 0, 3, 1, 0, 0, 1};
  for (int e = 0; e < 8; ++e) {
    assert_true(d[e] == wd[e]);
    assert_int_equal(ix[e], wi[e]);
  }
  mpcf_pcfs_destroy(X);
}

/* ---- kernel mat-vec ---- */

static long double kernel_of(mpcf_kernel kind, long double v, double scale) {
  switch (kind) {
    case MPCF_KERNEL_GAUSSIAN: return expl(-0.5L * (v / scale) * (v / scale));
    case MPCF_KERNEL_LAPLACIAN: return expl(-v / scale);
    default: return v;
  }
}

static void check_matvec(const pcf_set* xs, const pcf_set* ys, mpcf_dtype dtype, mpcf_kernel kind,
                         double p, double scale, size_t r, double a, double b) {
  mpcf_pcfs* X = make(xs, dtype);
  mpcf_pcfs* Y = ys ? make(ys, dtype) : NULL;
  const size_t nx = xs->n, ny = ys ? ys->n : xs->n;
  const pcf_set* yset = ys ? ys : xs;
  mpcf_options* o = options(2, 0, 0, a, b);
  const size_t esz = dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  /* V: small random values, exactly representable in float. */
  double* V = (double*)malloc(ny * r * sizeof(double));
  float* V32 = (float*)malloc(ny * r * sizeof(float));
  for (size_t e = 0; e < ny * r; ++e) {
    V32[e] = (float)(ref_uniform() * 2.0 - 1.0);
    V[e] = V32[e];
  }
  const void* Vp = dtype == MPCF_FLOAT32 ? (const void*)V32 : (const void*)V;
  void* out = malloc(nx * r * esz);
  assert_int_equal(mpcf_kernel_matvec(X, Y, kind, p, scale, Vp, ny * r, r, out, nx * r, o), MPCF_OK);
  /* Reference: K from the brute-force reference walk, summed in long double. */
  const enum ref_op op = kind == MPCF_KERNEL_L2 ? REF_KERNEL
                         : p == 1.0            ? REF_L1
                         : isinf(p)            ? REF_LINF
                                               : REF_LP;
  for (size_t i = 0; i < nx; ++i) {
    for (size_t c = 0; c < r; ++c) {
      long double want = 0, mag = 0;
      for (size_t j = 0; j < ny; ++j) {
        long double sc = 0;
        const long double value = ref_value(op, p, xs, i, yset, j, a, b, &sc);
        const long double K = kernel_of(kind, value, scale);
        want += K * V[j * r + c];
        mag += fabsl(K * V[j * r + c]) + (kind == MPCF_KERNEL_L2 ? sc * fabsl(V[j * r + c]) : 0);
      }
      const double got = dtype == MPCF_FLOAT32 ? (double)((float*)out)[i * r + c]
                                               : ((double*)out)[i * r + c];
      const double rel = dtype == MPCF_FLOAT32 ? 1e-5 : 1e-12;
      if (!ref_close(got, want, mag + 1e-300L, rel)) {
        fail_msg("kernel %d dtype %d: out[%zu][%zu] = %.17g, expected %.17Lg (scale %Lg)",
                 (int)kind, (int)dtype, i, c, got, want, mag);
      }
    }
  }
  /* The same bits for other thread counts and blocks. */
  const int threads[] = {1, 16, 3};
  const uint64_t maxElements[] = {0, 6 * 6, 1};
  for (int q = 0; q < 3; ++q) {
    mpcf_options* o2 = options(threads[q], q == 2 ? 7 : 0, maxElements[q], a, b);
    void* out2 = malloc(nx * r * esz);
    assert_int_equal(mpcf_kernel_matvec(X, Y, kind, p, scale, Vp, ny * r, r, out2, nx * r, o2),
                     MPCF_OK);
    assert_memory_equal(out, out2, nx * r * esz);
    free(out2);
    mpcf_options_destroy(o2);
  }
  free(out);
  free(V);
  free(V32);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

static void test_matvec_against_reference(void** s) {
  (void)s;
  ref_seed(13);
  pcf_set xs = pcf_set_random(33, 10, 0, 0);
  pcf_set ys = pcf_set_random(21, 10, 0, 0);
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    check_matvec(&xs, NULL, dtype, MPCF_KERNEL_L2, 2, 1, 1, -INFINITY, INFINITY);
    check_matvec(&xs, NULL, dtype, MPCF_KERNEL_GAUSSIAN, 2, 1.5, 3, -INFINITY, INFINITY);
    check_matvec(&xs, NULL, dtype, MPCF_KERNEL_LAPLACIAN, 1, 4.0, 5, -INFINITY, INFINITY);
    check_matvec(&xs, &ys, dtype, MPCF_KERNEL_L2, 2, 1, 2, -INFINITY, INFINITY);
    check_matvec(&xs, &ys, dtype, MPCF_KERNEL_GAUSSIAN, 3, 2.0, 1, -INFINITY, INFINITY);
    check_matvec(&xs, &ys, dtype, MPCF_KERNEL_LAPLACIAN, INFINITY, 0.5, 4, -1.0, 1.5);
  }
  /* Non-vanishing tails: L2 kernel entries of +-inf give +-inf or NaN outputs
     by IEEE rules; on a window everything is finite. */
  pcf_set tails = pcf_set_random(12, 5, 1, 0);
  check_matvec(&tails, NULL, MPCF_FLOAT64, MPCF_KERNEL_L2, 2, 1, 2, -2.0, 4.0);
  check_matvec(&tails, NULL, MPCF_FLOAT64, MPCF_KERNEL_GAUSSIAN, 1, 1.0, 2, -INFINITY, INFINITY);
  pcf_set_free(&xs);
  pcf_set_free(&ys);
  pcf_set_free(&tails);
  /* Enough functions that the norms which set the L2 grids are computed on
     several threads (chunks of at least 2,048 objects): the bits of one
     thread, on a window and without. */
  pcf_set big = pcf_set_random(6500, 3, 0, 0);
  double* V = (double*)malloc(6500 * sizeof(double));
  for (int i = 0; i < 6500; ++i) V[i] = (double)(i % 7) - 3.0;
  double* one = (double*)malloc(6500 * sizeof(double));
  double* many = (double*)malloc(6500 * sizeof(double));
  for (int w = 0; w < 2; ++w) {
    /* A handle each: a handle keeps its norms for its next mat-vec. */
    mpcf_pcfs* B1 = make(&big, MPCF_FLOAT64);
    mpcf_pcfs* B4 = make(&big, MPCF_FLOAT64);
    mpcf_options* o1 = options(1, 0, 0, w ? -0.5 : -INFINITY, w ? 2.0 : INFINITY);
    mpcf_options* o4 = options(4, 0, 0, w ? -0.5 : -INFINITY, w ? 2.0 : INFINITY);
    assert_int_equal(mpcf_kernel_matvec(B1, NULL, MPCF_KERNEL_L2, 2, 1, V, 6500, 1, one, 6500, o1), MPCF_OK);
    assert_int_equal(mpcf_kernel_matvec(B4, NULL, MPCF_KERNEL_L2, 2, 1, V, 6500, 1, many, 6500, o4), MPCF_OK);
    assert_memory_equal(one, many, 6500 * sizeof(double));
    mpcf_options_destroy(o1);
    mpcf_options_destroy(o4);
    mpcf_pcfs_destroy(B1);
    mpcf_pcfs_destroy(B4);
  }
  free(V);
  free(one);
  free(many);
  pcf_set_free(&big);
}

/* A handle keeps the norms of its last L2 mat-vec (mpcf.h: the bounds B)
 * for the next one on the same window and components: whatever order of
 * windows and component axes a handle sees, each result is the one a fresh
 * handle gives. */
static void test_matvec_norms_kept_per_window_and_components(void** s) {
  (void)s;
  ref_seed(17);
  pcf_set xs = pcf_set_random(40, 9, 0, 0);
  double V[40];
  for (int i = 0; i < 40; ++i) V[i] = (double)((i * 5) % 9) - 4.0;
  /* The third window is past every function's support: its norms are 0,
     so taking them for another window leaves no room for that window's
     terms (a result that is not the fresh handle's, or an error). */
  const double windows[3][2] = {{-INFINITY, INFINITY}, {-0.25, 1.5}, {1e6, 2e6}};
  /* Objects of two components: 20 objects, V of 20 rows. */
  const uint64_t dims[2] = {20, 2};
  double got[40], want[40];
  mpcf_pcfs* X = make(&xs, MPCF_FLOAT64);
  const int order[8][2] = {{0, 0}, {1, 0}, {0, 0}, {0, 1}, {2, 1}, {0, 1}, {2, 0}, {0, 0}};
  for (int step = 0; step < 8; ++step) {
    const int w = order[step][0], objects = order[step][1];
    mpcf_options* o = options(2, 0, 0, windows[w][0], windows[w][1]);
    mpcf_pcfs* fresh = make(&xs, MPCF_FLOAT64);
    const uint64_t n = objects ? 20 : 40;
    if (objects) {
      assert_int_equal(mpcf_pcfs_set_component_axis(X, 0), MPCF_OK);
      assert_int_equal(mpcf_pcfs_reshape(X, 2, dims), MPCF_OK);
      assert_int_equal(mpcf_pcfs_set_component_axis(X, 1), MPCF_OK);
      assert_int_equal(mpcf_pcfs_reshape(fresh, 2, dims), MPCF_OK);
      assert_int_equal(mpcf_pcfs_set_component_axis(fresh, 1), MPCF_OK);
    } else {
      assert_int_equal(mpcf_pcfs_set_component_axis(X, 0), MPCF_OK);
    }
    assert_int_equal(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 2, 1, V, n, 1, got, n, o), MPCF_OK);
    assert_int_equal(mpcf_kernel_matvec(fresh, NULL, MPCF_KERNEL_L2, 2, 1, V, n, 1, want, n, o), MPCF_OK);
    assert_memory_equal(got, want, n * sizeof(double));
    mpcf_pcfs_destroy(fresh);
    mpcf_options_destroy(o);
  }
  mpcf_pcfs_destroy(X);
  pcf_set_free(&xs);
}

/* Hand-worked: f0 = 1 on [0,1), f1 = 3 on [0,1). L2 kernel: K = [[1, 3], [3, 9]];
 * V = [1, 2]: y = [1 + 6, 3 + 18] = [7, 21]. Laplacian with L1 (d = 2),
 * scale 2: K = [[1, e^-1], [e^-1, 1]]; V = [1, 1]: y = 1 + e^-1 each. */
static void test_matvec_known_values(void** s) {
  (void)s;
  const uint64_t offsets[3] = {0, 2, 4};
  const double t[4] = {0, 1, 0, 1}, v[4] = {1, 0, 3, 0};
  mpcf_pcfs* X = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 2, offsets, t, v, &X), MPCF_OK);
  const double V[2] = {1, 2};
  double y[2];
  assert_int_equal(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 0, 0, V, 2, 1, y, 2, NULL), MPCF_OK);
  assert_true(y[0] == 7.0 && y[1] == 21.0);
  const double ones[2] = {1, 1};
  assert_int_equal(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_LAPLACIAN, 1, 2.0, ones, 2, 1, y, 2, NULL),
                   MPCF_OK);
  assert_true(fabs(y[0] - (1 + exp(-1.0))) < 1e-15 && y[0] == y[1]);
  mpcf_pcfs_destroy(X);

  /* Tails that never end but whose products underflow to 0: f = 1e-200 on
     [0, inf), g = 2 on [0, 1) then 1e-200. <f, f> = 0 (the integrand is
     exactly 0), <f, g> = 2e-200 (from [0, 1)), <g, g> = 4. With V = (1, 1):
     y = (2e-200, 4 + 2e-200) = (2e-200, 4). (Found by fuzzing: the bound
     of the exact sums left such pairs out, an internal error.) */
  const uint64_t o2[3] = {0, 1, 3};
  const double t2[3] = {0, 0, 1}, v2[3] = {1e-200, 2, 1e-200};
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 2, o2, t2, v2, &X), MPCF_OK);
  assert_int_equal(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 0, 0, ones, 2, 1, y, 2, NULL), MPCF_OK);
  assert_true(y[0] == 2e-200 && y[1] == 4.0);
  mpcf_pcfs_destroy(X);

  /* A bounded piece wider than the double range: 1 on [-1.7e308, 1.7e308).
     Its bound is +inf: the documented range error, nothing written. */
  const uint64_t o3[2] = {0, 2};
  const double t3[2] = {-1.7e308, 1.7e308}, v3[2] = {1, 0};
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 1, o3, t3, v3, &X), MPCF_OK);
  y[0] = 42.0;
  assert_int_equal(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 0, 0, ones, 1, 1, y, 1, NULL),
                   MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "output (0, 0)"));
  assert_true(isnan(y[0])); /* mpcf.h: on any failure every value is NaN */
  mpcf_pcfs_destroy(X);

  /* No bounded piece at all, V = DBL_MAX: f = -15.75 on [14.5, inf),
     g = -16 on [-16, inf). mpcf.h's B is 0 (L1 over bounded pieces is 0);
     every K_ij is +inf (negative values multiply to positive), so
     y = (+inf, +inf). (Found by fuzzing: 0 * inf made the bound NaN and
     the call was refused, "may reach -nan".) */
  const uint64_t o4[3] = {0, 1, 2};
  const double t4[2] = {14.5, -16}, v4[2] = {-15.75, -16};
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 2, o4, t4, v4, &X), MPCF_OK);
  const double huge[2] = {DBL_MAX, DBL_MAX};
  y[0] = y[1] = 42.0;
  assert_int_equal(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 0, 0, huge, 2, 1, y, 2, NULL), MPCF_OK);
  assert_true(isinf(y[0]) && y[0] > 0 && isinf(y[1]) && y[1] > 0);
  mpcf_pcfs_destroy(X);

  /* A bound B in range whose factors overflow double: f = 1e-10 on [5, 6),
     g = 1e308 on [0, 1e-300), V = (2). B = ||f|| L1b(g) 2 + L1b(f) ||g|| 2
     = 2e-2 + 2e298, 4 n B = 8e298: no refusal. <f, g> = 0 (disjoint), so
     y = 0. (Found by fuzzing: ||g|| * 2 = 2e308 overflowed to inf in
     double and the call was refused.) */
  const uint64_t of[2] = {0, 2}, og[2] = {0, 2};
  mpcf_pcfs* F = NULL;
  mpcf_pcfs* G = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 1, of, (const double[]){5, 6}, (const double[]){1e-10, 0}, &F),
                   MPCF_OK);
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 1, og, (const double[]){0, 1e-300}, (const double[]){1e308, 0}, &G),
                   MPCF_OK);
  const double two[1] = {2};
  y[0] = 42.0;
  assert_int_equal(mpcf_kernel_matvec(F, G, MPCF_KERNEL_L2, 0, 0, two, 1, 1, y, 1, NULL), MPCF_OK);
  assert_true(y[0] == 0.0);
  /* Beyond the range it is still refused, and the message prints B short. */
  const double huge1[1] = {DBL_MAX};
  assert_int_equal(mpcf_kernel_matvec(G, G, MPCF_KERNEL_L2, 0, 0, huge1, 1, 1, y, 1, NULL),
                   MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "may reach "));
  assert_true(strlen(mpcf_last_error_message()) < 300);
  mpcf_pcfs_destroy(F);
  mpcf_pcfs_destroy(G);
}

/* ---- block streams ---- */

typedef struct {
  size_t nr, nc;
  int symmetric;
  mpcf_dtype dtype;
  double* matrix;  /* nr x nc, NaN until written */
  int* seen;       /* how often each entry came (symmetric: counting (i,j) and (j,i)) */
  size_t calls;
  size_t stop_after;  /* return non-zero on this call (0: never) */
} collect;

static int collect_block(const mpcf_block* b, void* user) {
  collect* c = (collect*)user;
  ++c->calls;
  if (b->dtype != c->dtype) return 1;
  if (c->symmetric && b->row_begin < b->col_begin) return 2; /* upper blocks never come */
  const size_t w = (size_t)(b->col_end - b->col_begin);
  for (uint64_t i = b->row_begin; i < b->row_end; ++i) {
    for (uint64_t j = b->col_begin; j < b->col_end; ++j) {
      const size_t e = (size_t)((i - b->row_begin) * w + (j - b->col_begin));
      const double v = c->dtype == MPCF_FLOAT32 ? (double)((const float*)b->values)[e]
                                                : ((const double*)b->values)[e];
      c->matrix[i * c->nc + j] = v;
      ++c->seen[i * c->nc + j];
      if (c->symmetric && i != j) {
        c->matrix[j * c->nc + i] = v;
        ++c->seen[j * c->nc + i];
      }
    }
  }
  return c->stop_after && c->calls == c->stop_after ? 3 : 0;
}

static void check_stream(const pcf_set* xs, const pcf_set* ys, mpcf_dtype dtype, double p,
                         const mpcf_options* o) {
  mpcf_pcfs* X = make(xs, dtype);
  mpcf_pcfs* Y = ys ? make(ys, dtype) : NULL;
  const size_t nx = xs->n, ny = ys ? ys->n : xs->n;
  double* D = distance_matrix(X, Y, dtype, p, o, nx, ny);
  collect c = {nx, ny, Y == NULL, dtype, NULL, NULL, 0, 0};
  c.matrix = (double*)malloc(nx * ny * sizeof(double));
  c.seen = (int*)calloc(nx * ny, sizeof(int));
  for (size_t e = 0; e < nx * ny; ++e) c.matrix[e] = NAN;
  if (Y) {
    assert_int_equal(mpcf_cdist_stream(X, Y, MPCF_METRIC_LP_DISTANCE, p, collect_block, &c, o), MPCF_OK);
  } else {
    assert_int_equal(mpcf_pdist_stream(X, p, collect_block, &c, o), MPCF_OK);
  }
  for (size_t e = 0; e < nx * ny; ++e) {
    /* Every entry exactly once (a diagonal block holds (i, j) and (j, i):
       counted twice there, so mirrored pairs of such blocks come as 2). */
    if (!(c.matrix[e] == D[e])) fail_msg("entry %zu is %g, expected %g", e, c.matrix[e], D[e]);
    if (c.seen[e] < 1 || c.seen[e] > 2) fail_msg("entry %zu came %d times", e, c.seen[e]);
    if (Y && c.seen[e] != 1) fail_msg("cdist entry %zu came %d times", e, c.seen[e]);
  }
  free(c.matrix);
  free(c.seen);
  free(D);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

static void test_streams(void** s) {
  (void)s;
  ref_seed(14);
  pcf_set xs = pcf_set_random(45, 8, 0, 0);
  pcf_set ys = pcf_set_random(19, 8, 0, 0);
  mpcf_options* small = options(2, 0, 8 * 8, -INFINITY, INFINITY);
  mpcf_options* one = options(1, 0, 0, -INFINITY, INFINITY);
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    check_stream(&xs, NULL, dtype, 1.0, small);
    check_stream(&xs, NULL, dtype, 2.0, one);
    check_stream(&xs, &ys, dtype, 1.0, small);
    check_stream(&xs, &ys, dtype, INFINITY, one);
  }
  /* A non-zero return cancels. */
  mpcf_pcfs* X = make(&xs, MPCF_FLOAT64);
  collect c = {xs.n, xs.n, 1, MPCF_FLOAT64, NULL, NULL, 0, 2};
  c.matrix = (double*)malloc(xs.n * xs.n * sizeof(double));
  c.seen = (int*)calloc(xs.n * xs.n, sizeof(int));
  mpcf_options* ones = options(1, 0, 8 * 8, -INFINITY, INFINITY);
  assert_int_equal(mpcf_pdist_stream(X, 1.0, collect_block, &c, ones), MPCF_ERROR_CANCELLED);
  assert_int_equal(c.calls, 2);
  free(c.matrix);
  free(c.seen);
  mpcf_pcfs_destroy(X);
  mpcf_options_destroy(small);
  mpcf_options_destroy(one);
  mpcf_options_destroy(ones);
  pcf_set_free(&xs);
  pcf_set_free(&ys);
}

/* ---- bad input and cancellation ---- */

static void expect(mpcf_status got, mpcf_status want, const char* part) {
  if (got != want) fail_msg("status %s, expected %s (%s)", mpcf_status_name(got), mpcf_status_name(want), mpcf_last_error_message());
  if (part && !strstr(mpcf_last_error_message(), part)) {
    fail_msg("message '%s' does not name '%s'", mpcf_last_error_message(), part);
  }
}

static int never(const mpcf_block* b, void* u) {
  (void)b;
  (void)u;
  return 0;
}

static void test_bad_arguments_write_nothing(void** s) {
  (void)s;
  ref_seed(15);
  pcf_set xs = pcf_set_random(6, 4, 0, 0);
  mpcf_pcfs* X = make(&xs, MPCF_FLOAT64);
  mpcf_pcfs* X32 = make(&xs, MPCF_FLOAT32);
  double d[64];
  int64_t ix[64];
  for (int e = 0; e < 64; ++e) {
    d[e] = -7;
    ix[e] = -7;
  }
  expect(mpcf_knn(X, NULL, 1, 0, d, ix, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "k = 0");
  expect(mpcf_knn(X, NULL, 1, 6, d, ix, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "k = 6 is more than the 5 other");
  expect(mpcf_knn(X, X, 1, 7, d, ix, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "functions of Y");
  expect(mpcf_knn(X, NULL, 0.5, 2, d, ix, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = 0.5");
  expect(mpcf_knn(X, NULL, 1, 2, d, ix, 11, NULL), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 12");
  expect(mpcf_knn(X, NULL, 1, 2, NULL, ix, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'distances'");
  expect(mpcf_knn(X, NULL, 1, 2, d, NULL, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'indices'");
  expect(mpcf_knn(NULL, NULL, 1, 2, d, ix, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'X'");
  expect(mpcf_knn(X, X32, 1, 2, d, ix, 64, NULL), MPCF_ERROR_DTYPE_MISMATCH, NULL);
  const double V[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  double Vbad[12];
  memcpy(Vbad, V, sizeof V);
  Vbad[7] = NAN;
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 2, 1, V, 12, 0, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "r = 0");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 2, 1, V, 11, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "V has 11 elements");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 2, 1, Vbad, 12, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "V[3][1]");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 2, 1, NULL, 12, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'V'");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_GAUSSIAN, 2, 0, V, 12, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "scale = 0");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_GAUSSIAN, 2, -1, V, 12, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "scale = -1");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_LAPLACIAN, 2, INFINITY, V, 12, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "scale = inf");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_LAPLACIAN, 2, NAN, V, 12, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "scale = nan");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_LAPLACIAN, 0.9, 1, V, 12, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = 0.9");
  expect(mpcf_kernel_matvec(X, NULL, (mpcf_kernel)7, 2, 1, V, 12, 2, d, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "kernel 7");
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 2, 1, V, 12, 2, d, 11, NULL), MPCF_ERROR_BUFFER_TOO_SMALL, NULL);
  expect(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_L2, 2, 1, V, 12, 2, NULL, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect(mpcf_pdist_stream(X, 1, NULL, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'callback'");
  expect(mpcf_cdist_stream(X, NULL, MPCF_METRIC_LP_DISTANCE, 1, never, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'Y'");
  expect(mpcf_cdist_stream(X, X32, MPCF_METRIC_LP_DISTANCE, 1, never, NULL, NULL), MPCF_ERROR_DTYPE_MISMATCH, NULL);
  /* knn both ways: X holds 6 functions, Y 4. */
  pcf_set ys = pcf_set_random(4, 4, 0, 0);
  mpcf_pcfs* Y = make(&ys, MPCF_FLOAT64);
  double d2[64];
  int64_t ix2[64];
  for (int e = 0; e < 64; ++e) {
    d2[e] = -7;
    ix2[e] = -7;
  }
  expect(mpcf_knn_both(X, NULL, 1, 2, 2, d, ix, 64, d2, ix2, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'Y'");
  expect(mpcf_knn_both(X, Y, 1, 0, 2, d, ix, 64, d2, ix2, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "k_x: k = 0");
  expect(mpcf_knn_both(X, Y, 1, 5, 2, d, ix, 64, d2, ix2, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "k_x: k = 5 is more than the 4 functions of Y");
  expect(mpcf_knn_both(X, Y, 1, 2, 7, d, ix, 64, d2, ix2, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "k_y: k = 7 is more than the 6 functions of X");
  expect(mpcf_knn_both(X, Y, 0.5, 2, 2, d, ix, 64, d2, ix2, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = 0.5");
  expect(mpcf_knn_both(X, Y, 1, 2, 3, d, ix, 11, d2, ix2, 64, NULL), MPCF_ERROR_BUFFER_TOO_SMALL, "'x_distances'");
  expect(mpcf_knn_both(X, Y, 1, 2, 3, d, ix, 64, d2, ix2, 11, NULL), MPCF_ERROR_BUFFER_TOO_SMALL, "'y_distances' holds 11 elements but the result needs 12");
  expect(mpcf_knn_both(X, Y, 1, 2, 3, d, NULL, 64, d2, ix2, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'x_indices'");
  expect(mpcf_knn_both(X, Y, 1, 2, 3, d, ix, 64, NULL, ix2, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'y_distances'");
  expect(mpcf_knn_both(X, Y, 1, 2, 3, d, ix, 64, d2, NULL, 64, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'y_indices'");
  expect(mpcf_knn_both(X, X32, 1, 2, 2, d, ix, 64, d2, ix2, 64, NULL), MPCF_ERROR_DTYPE_MISMATCH, NULL);
  expect(mpcf_knn_both_start(X, Y, 1, 2, 2, d, ix, 64, d2, ix2, 64, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  for (int e = 0; e < 64; ++e) {
    assert_true(d2[e] == -7);
    assert_true(ix2[e] == -7);
  }
  mpcf_pcfs_destroy(Y);
  pcf_set_free(&ys);
  mpcf_task* task = NULL;
  expect(mpcf_knn_start(X, NULL, 1, 2, d, ix, 64, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  expect(mpcf_kernel_matvec_start(X, NULL, MPCF_KERNEL_L2, 2, 1, V, 12, 2, d, 64, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  assert_null(task);
  for (int e = 0; e < 64; ++e) {
    assert_true(d[e] == -7);
    assert_true(ix[e] == -7);
  }
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(X32);
  pcf_set_free(&xs);
}

/* A cancelled reduction leaves NaN distances and values and -1 indices
 * (the task is held until cancelled: MPCF_DEBUG_HOLD_TASKS). */
/* mpcf_knn_merge, worked out by hand: ties by index across the lists,
 * +inf after finite distances, NaN after +inf. */
static void test_knn_merge_known_values(void** s) {
  (void)s;
  const double ad[4] = {1, 2, 0, INFINITY};
  const int64_t ai[4] = {3, 0, 5, 2};
  const double bd[6] = {1, 1, 5, INFINITY, NAN, NAN};
  const int64_t bi[6] = {1, 4, 2, 1, 0, 7};
  const double wantD[8] = {1, 1, 1, 2, 0, INFINITY, INFINITY, NAN};
  const int64_t wantI[8] = {1, 3, 4, 0, 5, 1, 2, 0};
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    float ad32[4], bd32[6], od32[8];
    double od[8];
    int64_t oi[8];
    for (int e = 0; e < 4; ++e) ad32[e] = (float)ad[e];
    for (int e = 0; e < 6; ++e) bd32[e] = (float)bd[e];
    const void* a = dt ? (const void*)ad : (const void*)ad32;
    const void* b = dt ? (const void*)bd : (const void*)bd32;
    void* out = dt ? (void*)od : (void*)od32;
    /* Either order of the lists: the same result. */
    for (int swap = 0; swap < 2; ++swap) {
      memset(oi, 0, sizeof oi);
      const mpcf_status st =
          swap ? mpcf_knn_merge(dtype, 2, 4, b, bi, 3, a, ai, 2, out, oi, 8)
               : mpcf_knn_merge(dtype, 2, 4, a, ai, 2, b, bi, 3, out, oi, 8);
      assert_int_equal(st, MPCF_OK);
      for (int e = 0; e < 8; ++e) {
        const double got = dt ? od[e] : (double)od32[e];
        if (isnan(wantD[e])) {
          assert_true(isnan(got));
        } else {
          assert_true(got == wantD[e]);
        }
        assert_int_equal(oi[e], wantI[e]);
      }
    }
    /* One list empty (its buffers NULL): the other cut to k. */
    assert_int_equal(mpcf_knn_merge(dtype, 2, 2, NULL, NULL, 0, b, bi, 3, out, oi, 4), MPCF_OK);
    assert_int_equal(oi[0], 1);
    assert_int_equal(oi[1], 4);
    assert_int_equal(oi[2], 1);
    assert_int_equal(oi[3], 0);
  }
}

/* A knn among Y split in two (Y[0:12) and Y[12:25), indices shifted), the
 * parts merged: the bits of the whole knn, for many ties (an integer grid)
 * and random functions. */
static void test_knn_merge_of_split_knn(void** s) {
  (void)s;
  ref_seed(33);
  pcf_set sets[2] = {grid_set(25), pcf_set_random(25, 8, 0, 0)};
  pcf_set xs = grid_set(30);
  for (int w = 0; w < 2; ++w) {
    for (int dt = 0; dt < 2; ++dt) {
      const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
      const size_t esz = dt ? sizeof(double) : sizeof(float);
      mpcf_pcfs* X = make(&xs, dtype);
      mpcf_pcfs* Y = make(&sets[w], dtype);
      mpcf_pcfs *Y0 = NULL, *Y1 = NULL;
      assert_int_equal(mpcf_pcfs_slice(Y, 0, 12, &Y0), MPCF_OK);
      assert_int_equal(mpcf_pcfs_slice(Y, 12, 25, &Y1), MPCF_OK);
      const size_t k = 7;
      double wd[30 * 7], d0[30 * 7], d1[30 * 7], md[30 * 7];
      int64_t wi[30 * 7], i0[30 * 7], i1[30 * 7], mi[30 * 7];
      assert_int_equal(mpcf_knn(X, Y, 1.0, k, wd, wi, 30 * k, NULL), MPCF_OK);
      assert_int_equal(mpcf_knn(X, Y0, 1.0, k, d0, i0, 30 * k, NULL), MPCF_OK);
      assert_int_equal(mpcf_knn(X, Y1, 1.0, k, d1, i1, 30 * k, NULL), MPCF_OK);
      for (size_t e = 0; e < 30 * k; ++e) i1[e] += 12;
      assert_int_equal(mpcf_knn_merge(dtype, 30, k, d1, i1, k, d0, i0, k, md, mi, 30 * k), MPCF_OK);
      assert_memory_equal(md, wd, 30 * k * esz);
      assert_memory_equal(mi, wi, 30 * k * sizeof(int64_t));
      mpcf_pcfs_destroy(Y0);
      mpcf_pcfs_destroy(Y1);
      mpcf_pcfs_destroy(X);
      mpcf_pcfs_destroy(Y);
    }
  }
  pcf_set_free(&xs);
  pcf_set_free(&sets[0]);
  pcf_set_free(&sets[1]);
}

/* Every bad argument of mpcf_knn_merge: named, and nothing written. */
static void test_knn_merge_bad_arguments(void** s) {
  (void)s;
  const double ad[4] = {1, 2, 0, 3};
  const int64_t ai[4] = {3, 0, 5, 2};
  const double bd[4] = {1, 5, 2, 2};
  const int64_t bi[4] = {1, 2, 4, 1}; /* row 1: (2, 4) then (2, 1): out of order */
  const int64_t neg[4] = {1, 2, -1, 6};
  double od[8];
  int64_t oi[8];
  for (int e = 0; e < 8; ++e) {
    od[e] = -7;
    oi[e] = -7;
  }
  expect(mpcf_knn_merge((mpcf_dtype)9, 2, 2, ad, ai, 2, ad, ai, 2, od, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "dtype");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 0, ad, ai, 2, ad, ai, 2, od, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "k = 0");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 5, ad, ai, 2, ad, ai, 2, od, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "k = 5 is more than a_k + b_k = 2 + 2");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 3, ad, ai, UINT64_MAX, ad, ai, 2, od, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "list a has 2 x 18446744073709551615");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 2, NULL, ai, 2, ad, ai, 2, od, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "'a_distances'");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 2, ad, ai, 2, ad, NULL, 2, od, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "'b_indices'");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 2, ad, ai, 2, ad, ai, 2, od, oi, 3), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 4");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 2, ad, ai, 2, ad, ai, 2, NULL, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "'distances'");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 2, ad, ai, 2, ad, ai, 2, (void*)(ad + 1), oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "overlap an input");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 2, ad, ai, 2, ad, ai, 2, od, (int64_t*)od, 8), MPCF_ERROR_INVALID_ARGUMENT, "distances and indices overlap");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 2, ad, ai, 2, bd, bi, 2, od, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "b's row 1 is not ascending by (distance, index) at entry 1");
  expect(mpcf_knn_merge(MPCF_FLOAT64, 2, 2, ad, neg, 2, ad, ai, 2, od, oi, 8), MPCF_ERROR_INVALID_ARGUMENT, "a_indices[1][0] = -1");
  for (int e = 0; e < 8; ++e) {
    assert_true(od[e] == -7);
    assert_int_equal(oi[e], -7);
  }
}

static void test_cancelled_reductions_leave_nan(void** s) {
  (void)s;
  ref_seed(16);
  pcf_set xs = pcf_set_random(20, 4, 0, 0);
  mpcf_pcfs* X = make(&xs, MPCF_FLOAT64);
  double d[40], y[20];
  int64_t ix[40];
  double V[20];
  for (int e = 0; e < 20; ++e) V[e] = 1.0;
  assert_int_equal(setenv("MPCF_DEBUG_HOLD_TASKS", "1", 1), 0);
  mpcf_task* t1 = NULL;
  mpcf_task* t2 = NULL;
  assert_int_equal(mpcf_knn_start(X, NULL, 1, 2, d, ix, 40, NULL, &t1), MPCF_OK);
  assert_int_equal(mpcf_kernel_matvec_start(X, NULL, MPCF_KERNEL_GAUSSIAN, 1, 1, V, 20, 1, y, 20, NULL, &t2), MPCF_OK);
  assert_int_equal(unsetenv("MPCF_DEBUG_HOLD_TASKS"), 0);
  assert_int_equal(mpcf_task_cancel(t1), MPCF_OK);
  assert_int_equal(mpcf_task_cancel(t2), MPCF_OK);
  assert_int_equal(mpcf_task_wait(t1, -1), MPCF_ERROR_CANCELLED);
  assert_int_equal(mpcf_task_wait(t2, -1), MPCF_ERROR_CANCELLED);
  for (int e = 0; e < 40; ++e) {
    assert_true(isnan(d[e]));
    assert_int_equal(ix[e], -1);
  }
  for (int e = 0; e < 20; ++e) assert_true(isnan(y[e]));
  mpcf_task_destroy(t1);
  mpcf_task_destroy(t2);
  mpcf_pcfs_destroy(X);
  pcf_set_free(&xs);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_knn_known_values),
      cmocka_unit_test(test_knn_random),
      cmocka_unit_test(test_knn_both_ways),
      cmocka_unit_test(test_knn_ties_and_infinite_distances),
      cmocka_unit_test(test_matvec_known_values),
      cmocka_unit_test(test_matvec_against_reference),
      cmocka_unit_test(test_matvec_norms_kept_per_window_and_components),
      cmocka_unit_test(test_streams),
      cmocka_unit_test(test_bad_arguments_write_nothing),
      cmocka_unit_test(test_cancelled_reductions_leave_nan),
      cmocka_unit_test(test_knn_merge_known_values),
      cmocka_unit_test(test_knn_merge_of_split_knn),
      cmocka_unit_test(test_knn_merge_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
