/* Results written straight from the GPUs into page-locked memory
 * (mpcf_cuda_register_host, mpcf_cuda_unregister_host): the errors of both
 * functions (everywhere: without CUDA or a device they name that), and with
 * a CUDA device, every matrix computation and layout written into a
 * registered buffer gives the bits it gives in ordinary memory, on every
 * device of the machine, with blocks small enough that the result takes
 * many of them, and leaves the buffer's other entries alone; every entry
 * matches the brute-force reference of reference.h (shares no code with
 * the library) at its position in the layout. */
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
#include "expect_error.h"
#include "reference.h"

static int have_device(void) { return mpcf_has_cuda() && mpcf_cuda_device_count() > 0; }

static void test_errors(void** s) {
  (void)s;
  char buf[4096];
  expect_error(mpcf_cuda_register_host(NULL, 8), MPCF_ERROR_INVALID_ARGUMENT, "is NULL");
  expect_error(mpcf_cuda_register_host(buf, 0), MPCF_ERROR_INVALID_ARGUMENT, "0 bytes");
  expect_error(mpcf_cuda_unregister_host(NULL), MPCF_ERROR_INVALID_ARGUMENT, "is NULL");
  if (!have_device()) {
    expect_error(mpcf_cuda_register_host(buf, sizeof buf), MPCF_ERROR_CUDA_UNAVAILABLE,
                 "CUDA not available");
    expect_error(mpcf_cuda_unregister_host(buf),
                 mpcf_has_cuda() ? MPCF_ERROR_INVALID_ARGUMENT : MPCF_ERROR_CUDA_UNAVAILABLE, NULL);
    return;
  }
  char* mem = malloc(1 << 20);
  assert_non_null(mem);
  memset(mem, 0, 1 << 20);
  assert_int_equal(mpcf_cuda_register_host(mem + 4096, 65536), MPCF_OK);
  expect_error(mpcf_cuda_register_host(mem + 8192, 100), MPCF_ERROR_INVALID_ARGUMENT, "overlaps");
  expect_error(mpcf_cuda_register_host(mem, 4097), MPCF_ERROR_INVALID_ARGUMENT, "overlaps");
  expect_error(mpcf_cuda_unregister_host(mem + 8192), MPCF_ERROR_INVALID_ARGUMENT,
               "is not the start of a range registered");
  assert_int_equal(mpcf_cuda_unregister_host(mem + 4096), MPCF_OK);
  expect_error(mpcf_cuda_unregister_host(mem + 4096), MPCF_ERROR_INVALID_ARGUMENT,
               "is not the start of a range registered");
  /* Memory not mapped in this process (the first page never is). */
  expect_error(mpcf_cuda_register_host((void*)(uintptr_t)4096, 4096), MPCF_ERROR_INVALID_ARGUMENT,
               "cannot be page-locked");
  free(mem);
}

/* The collections of the computations: X (n functions), Y (cdist's
 * columns), random lengths so that blocks have uneven work. */
typedef struct {
  pcf_set X, Y;
  /* Brute-force values (reference.h): pdist's L1 and l2_kernel's inner
   * products on i >= j (row-major n x n), cdist's L1 (n x ny), with the
   * scales for the tolerances. */
  long double *dist, *dist_scale, *kern, *kern_scale, *cross, *cross_scale;
} fixture;

static fixture make_fixture(void) {
  fixture f;
  ref_seed(20261126);
  f.X = pcf_set_random(301, 60, 0, 0);
  f.Y = pcf_set_random(170, 90, 0, 0);
  const size_t n = f.X.n, ny = f.Y.n;
  f.dist = calloc(n * n, sizeof *f.dist);
  f.dist_scale = calloc(n * n, sizeof *f.dist_scale);
  f.kern = calloc(n * n, sizeof *f.kern);
  f.kern_scale = calloc(n * n, sizeof *f.kern_scale);
  f.cross = calloc(n * ny, sizeof *f.cross);
  f.cross_scale = calloc(n * ny, sizeof *f.cross_scale);
  assert_true(f.dist && f.dist_scale && f.kern && f.kern_scale && f.cross && f.cross_scale);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j <= i; ++j) {
      f.dist[i * n + j] = ref_value(REF_L1, 1.0L, &f.X, i, &f.X, j, -INFINITY, INFINITY,
                                    &f.dist_scale[i * n + j]);
      f.kern[i * n + j] = ref_value(REF_KERNEL, 2.0L, &f.X, i, &f.X, j, -INFINITY, INFINITY,
                                    &f.kern_scale[i * n + j]);
    }
    for (size_t j = 0; j < ny; ++j) {
      f.cross[i * ny + j] = ref_value(REF_L1, 1.0L, &f.X, i, &f.Y, j, -INFINITY, INFINITY,
                                      &f.cross_scale[i * ny + j]);
    }
  }
  return f;
}

static void free_fixture(fixture* f) {
  pcf_set_free(&f->X);
  pcf_set_free(&f->Y);
  free(f->dist);
  free(f->dist_scale);
  free(f->kern);
  free(f->kern_scale);
  free(f->cross);
  free(f->cross_scale);
}

/* The collection as PCFs, or as PLFs (the same points, joined linearly). */
static mpcf_pcfs* handle(const pcf_set* s, mpcf_dtype dtype, int plf) {
  mpcf_pcfs* h = NULL;
  const int f32 = dtype == MPCF_FLOAT32;
  const void* t = f32 ? (const void*)s->t32 : (const void*)s->t;
  const void* v = f32 ? (const void*)s->v32 : (const void*)s->v;
  assert_int_equal(plf ? mpcf_plfs_create(dtype, s->n, s->offsets, t, v, &h)
                       : mpcf_pcfs_create(dtype, s->n, s->offsets, t, v, &h),
                   MPCF_OK);
  return h;
}

enum what { PDIST, L2_KERNEL, CDIST };

static mpcf_status compute(enum what w, const mpcf_pcfs* X, const mpcf_pcfs* Y, mpcf_layout layout,
                           void* out, uint64_t size, const mpcf_options* o) {
  switch (w) {
    case PDIST: return mpcf_pdist(X, 1.0, layout, out, size, o);
    case L2_KERNEL: return mpcf_l2_kernel(X, layout, out, size, o);
    default: return mpcf_cdist(X, Y, MPCF_METRIC_LP_DISTANCE, 1.0, out, size, o);
  }
}

static double value_at(const void* p, int f32, uint64_t k) {
  return f32 ? (double)((const float*)p)[k] : ((const double*)p)[k];
}

/* Every entry of a result against the reference: (i, j) of entry k by the
 * layout's definition (mpcf.h). */
static void check_against_reference(const fixture* f, enum what w, mpcf_layout layout, const void* out,
                                    int f32) {
  const size_t n = f->X.n, ny = f->Y.n;
  const double rel = f32 ? 1e-5 : 1e-12;
  uint64_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t cols = w == CDIST ? ny : n;
    for (size_t j = 0; j < cols; ++j) {
      long double want = 0.0L, scale = 0.0L;
      int stored = 1;
      if (w == CDIST) {
        want = f->cross[i * ny + j];
        scale = f->cross_scale[i * ny + j];
        k = (uint64_t)i * ny + j;
      } else {
        const size_t hi = i > j ? i : j, lo = i > j ? j : i;
        want = w == PDIST ? f->dist[hi * n + lo] : f->kern[hi * n + lo];
        scale = w == PDIST ? f->dist_scale[hi * n + lo] : f->kern_scale[hi * n + lo];
        if (layout == MPCF_LAYOUT_DENSE) {
          k = (uint64_t)i * n + j;
        } else if (layout == MPCF_LAYOUT_CONDENSED) {
          stored = i < j; /* SciPy order: row i of the upper triangle */
          k = (uint64_t)n * i - (uint64_t)i * (i + 1) / 2 + (j - i - 1);
        } else {
          stored = w == PDIST ? i > j : i >= j;
          k = w == PDIST ? (uint64_t)i * (i - 1) / 2 + j : (uint64_t)i * (i + 1) / 2 + j;
        }
        if (w == PDIST && i == j) want = 0.0L;
      }
      if (!stored) continue;
      const double got = value_at(out, f32, k);
      if (!ref_close(got, want, scale, rel)) {
        fail_msg("computation %d layout %d dtype f%d: (%zu, %zu) at %llu is %.17g, the reference "
                 "%.17Lg",
                 (int)w, (int)layout, f32 ? 32 : 64, i, j, (unsigned long long)k, got, want);
      }
    }
  }
}

/* One computation: into ordinary memory and into a registered buffer (the
 * result 3 values in, guards around it) on the CUDA backend. PLFs (another
 * BlockOp, the same stage) are compared bitwise only: reference.h knows
 * PCFs. */
static void check_one(const fixture* f, enum what w, mpcf_dtype dtype, mpcf_layout layout,
                      const mpcf_options* gpu, int plf) {
  const int f32 = dtype == MPCF_FLOAT32;
  const size_t es = f32 ? 4 : 8;
  mpcf_pcfs* X = handle(&f->X, dtype, plf);
  mpcf_pcfs* Y = handle(&f->Y, dtype, plf);
  uint64_t size = 0;
  if (w == PDIST) assert_int_equal(mpcf_pdist_size(X, layout, &size), MPCF_OK);
  if (w == L2_KERNEL) assert_int_equal(mpcf_l2_kernel_size(X, layout, &size), MPCF_OK);
  if (w == CDIST) assert_int_equal(mpcf_cdist_size(X, Y, &size), MPCF_OK);
  const uint64_t guard = 3;
  unsigned char* plain = malloc(size * es);
  unsigned char* reg = malloc((size + 2 * guard) * es);
  assert_true(plain && reg);
  memset(reg, 0x5a, (size + 2 * guard) * es);
  assert_int_equal(mpcf_cuda_register_host(reg, (size + 2 * guard) * es), MPCF_OK);
  assert_int_equal(compute(w, X, Y, layout, plain, size, gpu), MPCF_OK);
  assert_int_equal(compute(w, X, Y, layout, reg + guard * es, size, gpu), MPCF_OK);
  assert_int_equal(mpcf_cuda_unregister_host(reg), MPCF_OK);
  for (uint64_t k = 0; k < size; ++k) {
    if (memcmp(plain + k * es, reg + (guard + k) * es, es) != 0) {
      fail_msg("computation %d dtype %d layout %d: entry %llu is %.17g in ordinary memory, %.17g "
               "in registered memory",
               (int)w, (int)dtype, (int)layout, (unsigned long long)k, value_at(plain, f32, k),
               value_at(reg + guard * es, f32, k));
    }
  }
  for (uint64_t k = 0; k < guard * es; ++k) {
    assert_int_equal(reg[k], 0x5a);
    assert_int_equal(reg[(guard + size) * es + k], 0x5a);
  }
  if (!plf) check_against_reference(f, w, layout, reg + guard * es, f32);
  free(plain);
  free(reg);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

static void test_results_in_registered_memory(void** s) {
  (void)s;
  if (!have_device()) skip();
  mpcf_options* gpu = NULL;
  assert_int_equal(mpcf_options_create(&gpu), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(gpu, MPCF_BACKEND_CUDA), MPCF_OK);
  /* Blocks of at most 64 x 64 pairs: many blocks, shared by every device. */
  assert_int_equal(mpcf_options_set_block_hints(gpu, 1, 1, 64 * 64), MPCF_OK);
  printf("devices: %d\n", mpcf_cuda_device_count());
  fixture f = make_fixture();
  const mpcf_dtype dtypes[] = {MPCF_FLOAT32, MPCF_FLOAT64};
  const mpcf_layout layouts[] = {MPCF_LAYOUT_CONDENSED, MPCF_LAYOUT_DENSE, MPCF_LAYOUT_PACKED_LOWER};
  for (int d = 0; d < 2; ++d) {
    for (int l = 0; l < 3; ++l) {
      check_one(&f, PDIST, dtypes[d], layouts[l], gpu, 0);
      if (layouts[l] != MPCF_LAYOUT_CONDENSED) check_one(&f, L2_KERNEL, dtypes[d], layouts[l], gpu, 0);
    }
    check_one(&f, CDIST, dtypes[d], MPCF_LAYOUT_DENSE, gpu, 0);
    check_one(&f, PDIST, dtypes[d], MPCF_LAYOUT_CONDENSED, gpu, 1);
    check_one(&f, CDIST, dtypes[d], MPCF_LAYOUT_DENSE, gpu, 1);
  }
  free_fixture(&f);
  mpcf_options_destroy(gpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_results_in_registered_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
