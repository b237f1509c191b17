/* mpcf_pcfs_slice: views of a range of a collection. Hand-worked distances
 * of four small functions; the view keeps the breakpoints alive after its
 * parent (and a view of a view after both) is destroyed; read-out and files
 * of a view hold only its functions; tiles of pdist, cdist, l2_kernel and
 * knn computed over views have exactly the bits of the single call over the
 * whole collection, for several tilings; every bad argument. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"
#include "reference.h"

/* f0 = 3 on [0, 1); f1 = 1 on [0, 2); f2 = 10 on [0, 2), 5 on [2, 3);
 * f3 = 4 on [1, 2). L1 distances, worked by hand:
 *   d01 = 2 + 1 = 3,  d02 = 7 + 10 + 5 = 22,  d12 = 18 + 5 = 23,
 *   d03 = 3 + 4 = 7,  d13 = 1 + 3 = 4,        d23 = 10 + 6 + 5 = 21. */
static const uint64_t kOffsets[5] = {0, 2, 4, 7, 9};
static const double kTimes[9] = {0, 1, 0, 2, 0, 2, 3, 1, 2};
static const double kValues[9] = {3, 0, 1, 0, 10, 5, 0, 4, 0};

static mpcf_pcfs* four(mpcf_dtype dtype) {
  mpcf_pcfs* X = NULL;
  if (dtype == MPCF_FLOAT32) {
    float t[9], v[9];
    for (int k = 0; k < 9; ++k) {
      t[k] = (float)kTimes[k];
      v[k] = (float)kValues[k];
    }
    assert_int_equal(mpcf_pcfs_create(dtype, 4, kOffsets, t, v, &X), MPCF_OK);
  } else {
    assert_int_equal(mpcf_pcfs_create(dtype, 4, kOffsets, kTimes, kValues, &X), MPCF_OK);
  }
  return X;
}

static mpcf_pcfs* slice(const mpcf_pcfs* X, uint64_t begin, uint64_t end) {
  mpcf_pcfs* view = NULL;
  assert_int_equal(mpcf_pcfs_slice(X, begin, end, &view), MPCF_OK);
  assert_non_null(view);
  return view;
}

static uint64_t count_of(const mpcf_pcfs* X) {
  uint64_t n = 0;
  assert_int_equal(mpcf_pcfs_count(X, &n), MPCF_OK);
  return n;
}

static mpcf_options* cpu_options(int threads, uint64_t maxBlockElements) {
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CPU), MPCF_OK);
  assert_int_equal(mpcf_options_set_threads(o, threads), MPCF_OK);
  assert_int_equal(mpcf_options_set_block_hints(o, 0, 0, maxBlockElements), MPCF_OK);
  return o;
}

/* ---- the view's contents ---- */

static void test_view_holds_its_range(void** state) {
  (void)state;
  mpcf_pcfs* X = four(MPCF_FLOAT64);
  mpcf_pcfs* V = slice(X, 1, 3); /* f1, f2 */
  assert_int_equal(count_of(V), 2);
  uint64_t total = 0;
  assert_int_equal(mpcf_pcfs_total_breakpoints(V, &total), MPCF_OK);
  assert_int_equal(total, 5);
  mpcf_dtype dtype = MPCF_FLOAT32;
  assert_int_equal(mpcf_pcfs_dtype(V, &dtype), MPCF_OK);
  assert_int_equal(dtype, MPCF_FLOAT64);
  size_t ndim = 0;
  uint64_t shape[1] = {0};
  assert_int_equal(mpcf_pcfs_ndim(V, &ndim), MPCF_OK);
  assert_int_equal(ndim, 1);
  assert_int_equal(mpcf_pcfs_shape(V, shape, 1), MPCF_OK);
  assert_int_equal(shape[0], 2);

  /* Offsets count from the view's first breakpoint. */
  uint64_t offsets[3] = {99, 99, 99};
  assert_int_equal(mpcf_pcfs_offsets(V, offsets, 3), MPCF_OK);
  assert_int_equal(offsets[0], 0);
  assert_int_equal(offsets[1], 2);
  assert_int_equal(offsets[2], 5);
  double t[5], v[5];
  const double want_t[5] = {0, 2, 0, 2, 3}, want_v[5] = {1, 0, 10, 5, 0};
  assert_int_equal(mpcf_pcfs_breakpoints(V, t, v, 5), MPCF_OK);
  assert_memory_equal(t, want_t, sizeof t);
  assert_memory_equal(v, want_v, sizeof v);

  double d[1] = {0};
  assert_int_equal(mpcf_pdist(V, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL), MPCF_OK);
  assert_true(d[0] == 23.0);
  mpcf_pcfs_destroy(V);
  mpcf_pcfs_destroy(X);
}

static void test_cdist_of_two_views(void** state) {
  (void)state;
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT32 : MPCF_FLOAT64;
    mpcf_pcfs* X = four(dtype);
    mpcf_pcfs* rows = slice(X, 0, 2); /* f0, f1 */
    mpcf_pcfs* cols = slice(X, 2, 4); /* f2, f3 */
    const double want[4] = {22, 7, 23, 4};
    if (dtype == MPCF_FLOAT32) {
      float c[4];
      assert_int_equal(mpcf_cdist(rows, cols, MPCF_METRIC_LP_DISTANCE, 1.0, c, 4, NULL), MPCF_OK);
      for (int e = 0; e < 4; ++e) assert_true(c[e] == (float)want[e]);
    } else {
      double c[4];
      assert_int_equal(mpcf_cdist(rows, cols, MPCF_METRIC_LP_DISTANCE, 1.0, c, 4, NULL), MPCF_OK);
      for (int e = 0; e < 4; ++e) assert_true(c[e] == want[e]);
    }
    mpcf_pcfs_destroy(cols);
    mpcf_pcfs_destroy(rows);
    mpcf_pcfs_destroy(X);
  }
}

/* A tensor-shaped parent: the range is over flat indices, the view a vector. */
static void test_view_of_a_tensor_is_a_vector(void** state) {
  (void)state;
  mpcf_pcfs* X = four(MPCF_FLOAT64);
  const uint64_t shape2[2] = {2, 2};
  assert_int_equal(mpcf_pcfs_reshape(X, 2, shape2), MPCF_OK);
  mpcf_pcfs* V = slice(X, 1, 4);
  size_t ndim = 0;
  uint64_t shape[2] = {0, 0};
  assert_int_equal(mpcf_pcfs_ndim(V, &ndim), MPCF_OK);
  assert_int_equal(ndim, 1);
  assert_int_equal(mpcf_pcfs_shape(V, shape, 2), MPCF_OK);
  assert_int_equal(shape[0], 3);
  double d[3];
  assert_int_equal(mpcf_pdist(V, 1.0, MPCF_LAYOUT_CONDENSED, d, 3, NULL), MPCF_OK);
  assert_true(d[0] == 23.0 && d[1] == 4.0 && d[2] == 21.0); /* (1,2), (1,3), (2,3) */
  mpcf_pcfs_destroy(V);
  mpcf_pcfs_destroy(X);
}

/* ---- lifetime ---- */

static void test_view_outlives_its_parent(void** state) {
  (void)state;
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT32 : MPCF_FLOAT64;
    mpcf_pcfs* X = four(dtype);
    mpcf_pcfs* V = slice(X, 2, 4); /* f2, f3 */
    mpcf_pcfs_destroy(X);          /* the view alone keeps the breakpoints */
    if (dtype == MPCF_FLOAT32) {
      float d[4];
      assert_int_equal(mpcf_pdist(V, 1.0, MPCF_LAYOUT_DENSE, d, 4, NULL), MPCF_OK);
      assert_true(d[0] == 0.0f && d[1] == 21.0f && d[2] == 21.0f && d[3] == 0.0f);
    } else {
      double d[4];
      assert_int_equal(mpcf_pdist(V, 1.0, MPCF_LAYOUT_DENSE, d, 4, NULL), MPCF_OK);
      assert_true(d[0] == 0.0 && d[1] == 21.0 && d[2] == 21.0 && d[3] == 0.0);
    }
    mpcf_pcfs_destroy(V);
  }
}

static void test_view_of_a_view(void** state) {
  (void)state;
  mpcf_pcfs* X = four(MPCF_FLOAT64);
  mpcf_pcfs* V = slice(X, 1, 4); /* f1, f2, f3 */
  mpcf_pcfs* W = slice(V, 1, 3); /* f2, f3: indices count within V */
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(V);
  assert_int_equal(count_of(W), 2);
  uint64_t offsets[3];
  assert_int_equal(mpcf_pcfs_offsets(W, offsets, 3), MPCF_OK);
  assert_int_equal(offsets[0], 0);
  assert_int_equal(offsets[1], 3);
  assert_int_equal(offsets[2], 5);
  double d[1];
  assert_int_equal(mpcf_pdist(W, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL), MPCF_OK);
  assert_true(d[0] == 21.0);
  mpcf_pcfs* empty = slice(W, 2, 2);
  assert_int_equal(count_of(empty), 0);
  mpcf_pcfs_destroy(empty);
  mpcf_pcfs_destroy(W);
}

/* A running task keeps the view (and so the breakpoints) alive too. */
static void test_task_keeps_the_view_alive(void** state) {
  (void)state;
  mpcf_pcfs* X = four(MPCF_FLOAT64);
  mpcf_pcfs* V = slice(X, 0, 3);
  double d[3] = {0, 0, 0};
  mpcf_task* task = NULL;
  assert_int_equal(mpcf_pdist_start(V, 1.0, MPCF_LAYOUT_CONDENSED, d, 3, NULL, &task), MPCF_OK);
  mpcf_pcfs_destroy(V);
  mpcf_pcfs_destroy(X);
  assert_int_equal(mpcf_task_wait(task, -1), MPCF_OK);
  assert_true(d[0] == 3.0 && d[1] == 22.0 && d[2] == 23.0);
  mpcf_task_destroy(task);
}

static void test_empty_views(void** state) {
  (void)state;
  mpcf_pcfs* X = four(MPCF_FLOAT64);
  for (uint64_t b = 0; b <= 4; ++b) {
    mpcf_pcfs* E = slice(X, b, b);
    assert_int_equal(count_of(E), 0);
    uint64_t total = 99, offsets[1] = {99};
    assert_int_equal(mpcf_pcfs_total_breakpoints(E, &total), MPCF_OK);
    assert_int_equal(total, 0);
    assert_int_equal(mpcf_pcfs_offsets(E, offsets, 1), MPCF_OK);
    assert_int_equal(offsets[0], 0);
    mpcf_pcfs_destroy(E);
  }
  mpcf_pcfs* all = slice(X, 0, 4);
  assert_int_equal(count_of(all), 4);
  mpcf_pcfs_destroy(all);
  mpcf_pcfs_destroy(X);

  const uint64_t zero[1] = {0};
  mpcf_pcfs* N = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 0, zero, NULL, NULL, &N), MPCF_OK);
  mpcf_pcfs* E = slice(N, 0, 0);
  assert_int_equal(count_of(E), 0);
  mpcf_pcfs_destroy(E);
  mpcf_pcfs_destroy(N);
}

/* The file of a view holds its functions only, and reads back as them. */
static void test_serialized_view(void** state) {
  (void)state;
  mpcf_pcfs* X = four(MPCF_FLOAT64);
  mpcf_pcfs* V = slice(X, 1, 3);
  mpcf_pcfs* copy = NULL;
  {
    const uint64_t offs[3] = {0, 2, 5};
    const double t[5] = {0, 2, 0, 2, 3}, v[5] = {1, 0, 10, 5, 0};
    assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 2, offs, t, v, &copy), MPCF_OK);
  }
  uint64_t size_view = 0, size_copy = 0;
  assert_int_equal(mpcf_pcfs_serialized_size(V, &size_view), MPCF_OK);
  assert_int_equal(mpcf_pcfs_serialized_size(copy, &size_copy), MPCF_OK);
  assert_int_equal(size_view, size_copy);
  unsigned char* a = (unsigned char*)malloc((size_t)size_view);
  unsigned char* b = (unsigned char*)malloc((size_t)size_copy);
  assert_int_equal(mpcf_pcfs_serialize(V, a, size_view), MPCF_OK);
  assert_int_equal(mpcf_pcfs_serialize(copy, b, size_copy), MPCF_OK);
  assert_memory_equal(a, b, (size_t)size_view); /* byte for byte, hash included */
  mpcf_pcfs* back = NULL;
  assert_int_equal(mpcf_pcfs_deserialize(a, size_view, &back), MPCF_OK);
  double d[1];
  assert_int_equal(mpcf_pdist(back, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL), MPCF_OK);
  assert_true(d[0] == 23.0);
  free(a);
  free(b);
  mpcf_pcfs_destroy(back);
  mpcf_pcfs_destroy(copy);
  mpcf_pcfs_destroy(V);
  mpcf_pcfs_destroy(X);
}

/* ---- the same bits as the single call ---- */

/* The square pdist (or l2_kernel) of X assembled from tiles of `side` rows
 * and columns: the diagonal tiles from pdist (l2_kernel) of one view, the
 * others from cdist of two views. */
static void tiled_square(const mpcf_pcfs* X, size_t n, size_t side, int kernel, double p,
                         const mpcf_options* o, double* out) {
  for (size_t i0 = 0; i0 < n; i0 += side) {
    const size_t i1 = i0 + side < n ? i0 + side : n;
    mpcf_pcfs* R = slice(X, i0, i1);
    for (size_t j0 = 0; j0 < n; j0 += side) {
      const size_t j1 = j0 + side < n ? j0 + side : n;
      const size_t nr = i1 - i0, nc = j1 - j0;
      double* tile = (double*)malloc(nr * nc * sizeof(double));
      if (i0 == j0) {
        if (kernel) {
          assert_int_equal(mpcf_l2_kernel(R, MPCF_LAYOUT_DENSE, tile, nr * nc, o), MPCF_OK);
        } else {
          assert_int_equal(mpcf_pdist(R, p, MPCF_LAYOUT_DENSE, tile, nr * nc, o), MPCF_OK);
        }
      } else {
        mpcf_pcfs* C = slice(X, j0, j1);
        const mpcf_metric metric = kernel ? MPCF_METRIC_L2_KERNEL : MPCF_METRIC_LP_DISTANCE;
        assert_int_equal(mpcf_cdist(R, C, metric, p, tile, nr * nc, o), MPCF_OK);
        mpcf_pcfs_destroy(C);
      }
      for (size_t r = 0; r < nr; ++r) {
        memcpy(out + (i0 + r) * n + j0, tile + r * nc, nc * sizeof(double));
      }
      free(tile);
    }
    mpcf_pcfs_destroy(R);
  }
}

static void test_tiles_have_the_bits_of_the_single_call(void** state) {
  (void)state;
  ref_seed(20261125);
  const size_t n = 37;
  pcf_set s = pcf_set_random(n, 9, 0, 0);
  mpcf_pcfs* X = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, n, s.offsets, s.t, s.v, &X), MPCF_OK);
  double* whole = (double*)malloc(n * n * sizeof(double));
  double* tiled = (double*)malloc(n * n * sizeof(double));
  const double ps[3] = {1.0, 2.5, INFINITY};
  const size_t sides[4] = {1, 5, 16, 37};
  mpcf_options* single = cpu_options(1, 0);
  mpcf_options* many = cpu_options(3, 7); /* other threads, tiny blocks */
  for (int kernel = 0; kernel < 2; ++kernel) {
    for (int pi = 0; pi < (kernel ? 1 : 3); ++pi) {
      if (kernel) {
        assert_int_equal(mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, whole, n * n, single), MPCF_OK);
      } else {
        assert_int_equal(mpcf_pdist(X, ps[pi], MPCF_LAYOUT_DENSE, whole, n * n, single), MPCF_OK);
      }
      /* The whole matrix agrees with the brute-force reference. */
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) {
          long double scale = 0;
          const enum ref_op op = kernel ? REF_KERNEL : (pi == 0 ? REF_L1 : (pi == 1 ? REF_LP : REF_LINF));
          const long double want = i == j && !kernel ? 0.0L
                                   : ref_value(op, ps[pi], &s, i, &s, j, -INFINITY, INFINITY, &scale);
          assert_true(ref_close(whole[i * n + j], want, scale, 1e-12));
        }
      }
      for (size_t k = 0; k < 4; ++k) {
        for (int oi = 0; oi < 2; ++oi) {
          memset(tiled, 0xff, n * n * sizeof(double));
          tiled_square(X, n, sides[k], kernel, ps[pi], oi ? many : single, tiled);
          assert_memory_equal(tiled, whole, n * n * sizeof(double));
        }
      }
    }
  }

  /* kNN of row views against the whole collection: the rows of the single
   * call, bit for bit. */
  const uint64_t k = 4;
  double* dist = (double*)malloc(n * k * sizeof(double));
  int64_t* idx = (int64_t*)malloc(n * k * sizeof(int64_t));
  double* dv = (double*)malloc(n * k * sizeof(double));
  int64_t* iv = (int64_t*)malloc(n * k * sizeof(int64_t));
  mpcf_pcfs* Y = slice(X, 5, 30);
  assert_int_equal(mpcf_knn(X, Y, 1.0, k, dist, idx, n * k, single), MPCF_OK);
  for (size_t i0 = 0; i0 < n; i0 += 8) {
    const size_t i1 = i0 + 8 < n ? i0 + 8 : n;
    mpcf_pcfs* R = slice(X, i0, i1);
    assert_int_equal(mpcf_knn(R, Y, 1.0, k, dv, iv, (i1 - i0) * k, many), MPCF_OK);
    assert_memory_equal(dv, dist + i0 * k, (i1 - i0) * k * sizeof(double));
    assert_memory_equal(iv, idx + i0 * k, (i1 - i0) * k * sizeof(int64_t));
    mpcf_pcfs_destroy(R);
  }
  mpcf_pcfs_destroy(Y);

  free(dist);
  free(idx);
  free(dv);
  free(iv);
  mpcf_options_destroy(single);
  mpcf_options_destroy(many);
  free(whole);
  free(tiled);
  mpcf_pcfs_destroy(X);
  pcf_set_free(&s);
}

/* float32 too: the tiles of the square pdist, bit for bit. */
static void test_float32_tiles(void** state) {
  (void)state;
  ref_seed(7);
  const size_t n = 23;
  pcf_set s = pcf_set_random(n, 6, 0, 1);
  mpcf_pcfs* X = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT32, n, s.offsets, s.t32, s.v32, &X), MPCF_OK);
  float* whole = (float*)malloc(n * n * sizeof(float));
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_DENSE, whole, n * n, NULL), MPCF_OK);
  for (size_t side = 2; side <= 12; side += 5) {
    for (size_t i0 = 0; i0 < n; i0 += side) {
      const size_t i1 = i0 + side < n ? i0 + side : n;
      mpcf_pcfs* R = slice(X, i0, i1);
      mpcf_pcfs* C = slice(X, 0, n);
      float* strip = (float*)malloc((i1 - i0) * n * sizeof(float));
      assert_int_equal(mpcf_cdist(R, C, MPCF_METRIC_LP_DISTANCE, 1.0, strip, (i1 - i0) * n, NULL),
                       MPCF_OK);
      for (size_t r = 0; r < i1 - i0; ++r) {
        for (size_t j = 0; j < n; ++j) {
          /* The diagonal of a cdist is d(f, f) = 0 exactly, as in pdist. */
          assert_true(strip[r * n + j] == whole[(i0 + r) * n + j]);
        }
      }
      free(strip);
      mpcf_pcfs_destroy(C);
      mpcf_pcfs_destroy(R);
    }
  }
  free(whole);
  mpcf_pcfs_destroy(X);
  pcf_set_free(&s);
}

/* ---- bad arguments ---- */

static void test_bad_arguments(void** state) {
  (void)state;
  mpcf_pcfs* X = four(MPCF_FLOAT64);
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)&state;
  mpcf_pcfs* out = sentinel;

  assert_int_equal(mpcf_pcfs_slice(NULL, 0, 1, &out), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "mpcf_pcfs_slice"));
  assert_non_null(strstr(mpcf_last_error_message(), "'X' is NULL"));
  assert_ptr_equal(out, sentinel);

  assert_int_equal(mpcf_pcfs_slice(X, 0, 1, NULL), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "'out' is NULL"));

  assert_int_equal(mpcf_pcfs_slice(X, 3, 2, &out), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "begin = 3 is greater than end = 2"));
  assert_ptr_equal(out, sentinel);

  assert_int_equal(mpcf_pcfs_slice(X, 1, 5, &out), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "end = 5 is beyond the collection's 4 functions"));
  assert_ptr_equal(out, sentinel);

  assert_int_equal(mpcf_pcfs_slice(X, 5, 5, &out), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "end = 5"));
  assert_int_equal(mpcf_pcfs_slice(X, UINT64_MAX, UINT64_MAX, &out), MPCF_ERROR_INVALID_ARGUMENT);
  assert_ptr_equal(out, sentinel);

  /* Relative to a view: its own count is the bound. */
  mpcf_pcfs* V = slice(X, 1, 3);
  assert_int_equal(mpcf_pcfs_slice(V, 0, 3, &out), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "end = 3 is beyond the collection's 2 functions"));
  assert_ptr_equal(out, sentinel);
  mpcf_pcfs_destroy(V);
  mpcf_pcfs_destroy(X);
}

/* The parent is gone: a view still slices within itself (valid ranges give
 * the right functions, bad ones the same clear errors), since it holds the
 * breakpoints by itself. */
static void test_slice_of_a_view_whose_parent_is_gone(void** state) {
  mpcf_pcfs* X = four(MPCF_FLOAT64);
  mpcf_pcfs* V = slice(X, 1, 4); /* f1, f2, f3 */
  mpcf_pcfs_destroy(X);
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)&state;
  mpcf_pcfs* out = sentinel;
  assert_int_equal(mpcf_pcfs_slice(V, 2, 4, &out), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "end = 4 is beyond the collection's 3 functions"));
  assert_ptr_equal(out, sentinel);
  assert_int_equal(mpcf_pcfs_slice(V, 2, 1, &out), MPCF_ERROR_INVALID_ARGUMENT);
  assert_non_null(strstr(mpcf_last_error_message(), "begin = 2 is greater than end = 1"));
  assert_ptr_equal(out, sentinel);
  mpcf_pcfs* W = slice(V, 0, 2); /* f1, f2 */
  mpcf_pcfs_destroy(V);
  double d[1];
  assert_int_equal(mpcf_pdist(W, 1.0, MPCF_LAYOUT_CONDENSED, d, 1, NULL), MPCF_OK);
  assert_true(d[0] == 23.0);
  mpcf_pcfs_destroy(W);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_view_holds_its_range),
      cmocka_unit_test(test_cdist_of_two_views),
      cmocka_unit_test(test_view_of_a_tensor_is_a_vector),
      cmocka_unit_test(test_view_outlives_its_parent),
      cmocka_unit_test(test_view_of_a_view),
      cmocka_unit_test(test_task_keeps_the_view_alive),
      cmocka_unit_test(test_empty_views),
      cmocka_unit_test(test_serialized_view),
      cmocka_unit_test(test_tiles_have_the_bits_of_the_single_call),
      cmocka_unit_test(test_float32_tiles),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_slice_of_a_view_whose_parent_is_gone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
