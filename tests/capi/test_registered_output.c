/* Results written straight from the GPUs into page-locked memory
 * (mpcf_cuda_register_host, mpcf_cuda_unregister_host): the errors of both
 * functions (everywhere: without CUDA or a device they name that), and with
 * a CUDA device, every matrix computation and layout written into a
 * registered buffer gives the bits it gives in ordinary memory, on every
 * device of the machine, with blocks small enough that the result takes
 * many of them, and leaves the buffer's other entries alone; the CPU
 * backend's values (an independent implementation) agree to rounding. */
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

static void expect_error(mpcf_status got, mpcf_status want, const char* needle) {
  if (got != want) {
    fail_msg("status %s, expected %s (message: %s)", mpcf_status_name(got), mpcf_status_name(want),
             mpcf_last_error_message());
  }
  const char* msg = mpcf_last_error_message();
  if (needle && !strstr(msg, needle)) fail_msg("message '%s' lacks '%s'", msg, needle);
}

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

/* n functions of m breakpoints (a fixed generator), in dtype. */
static mpcf_pcfs* random_pcfs(mpcf_dtype dtype, uint64_t n, uint64_t m, uint32_t seed) {
  uint64_t* off = malloc((n + 1) * sizeof *off);
  double* t = malloc(n * m * sizeof *t);
  double* v = malloc(n * m * sizeof *v);
  float* tf = malloc(n * m * sizeof *tf);
  float* vf = malloc(n * m * sizeof *vf);
  assert_true(off && t && v && tf && vf);
  uint32_t x = seed;
  for (uint64_t i = 0; i <= n; ++i) off[i] = i * m;
  for (uint64_t i = 0; i < n; ++i) {
    double at = 0.0;
    for (uint64_t k = 0; k < m; ++k) {
      x = x * 1664525u + 1013904223u;
      t[i * m + k] = at;
      v[i * m + k] = k + 1 == m ? 0.0 : (double)(x >> 8) / (double)(1u << 24);
      at += 0.25 + (double)(x & 0xff) / 256.0;
      tf[i * m + k] = (float)t[i * m + k];
      vf[i * m + k] = (float)v[i * m + k];
    }
  }
  mpcf_pcfs* h = NULL;
  const int f32 = dtype == MPCF_FLOAT32;
  assert_int_equal(mpcf_pcfs_create(dtype, n, off, f32 ? (const void*)tf : (const void*)t,
                                    f32 ? (const void*)vf : (const void*)v, &h),
                   MPCF_OK);
  free(off);
  free(t);
  free(v);
  free(tf);
  free(vf);
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

/* One computation: into ordinary memory and into a registered buffer (the
 * result 3 values in, guards around it) on the CUDA backend, and on the
 * CPU. */
static void check_one(enum what w, mpcf_dtype dtype, mpcf_layout layout, const mpcf_options* gpu,
                      const mpcf_options* cpu) {
  const int f32 = dtype == MPCF_FLOAT32;
  const size_t es = f32 ? 4 : 8;
  mpcf_pcfs* X = random_pcfs(dtype, 301, 37, 11);
  mpcf_pcfs* Y = random_pcfs(dtype, 170, 53, 12);
  uint64_t size = 0;
  if (w == PDIST) assert_int_equal(mpcf_pdist_size(X, layout, &size), MPCF_OK);
  if (w == L2_KERNEL) assert_int_equal(mpcf_l2_kernel_size(X, layout, &size), MPCF_OK);
  if (w == CDIST) assert_int_equal(mpcf_cdist_size(X, Y, &size), MPCF_OK);
  const uint64_t guard = 3;
  unsigned char* plain = malloc(size * es);
  unsigned char* onCpu = malloc(size * es);
  unsigned char* reg = malloc((size + 2 * guard) * es);
  assert_true(plain && onCpu && reg);
  memset(reg, 0x5a, (size + 2 * guard) * es);
  assert_int_equal(mpcf_cuda_register_host(reg, (size + 2 * guard) * es), MPCF_OK);
  assert_int_equal(compute(w, X, Y, layout, plain, size, gpu), MPCF_OK);
  assert_int_equal(compute(w, X, Y, layout, reg + guard * es, size, gpu), MPCF_OK);
  assert_int_equal(compute(w, X, Y, layout, onCpu, size, cpu), MPCF_OK);
  assert_int_equal(mpcf_cuda_unregister_host(reg), MPCF_OK);
  if (memcmp(plain, reg + guard * es, size * es) != 0) {
    for (uint64_t k = 0; k < size; ++k) {
      const double a = value_at(plain, f32, k), b = value_at(reg + guard * es, f32, k);
      if (memcmp(plain + k * es, reg + (guard + k) * es, es) != 0) {
        fail_msg("computation %d dtype %d layout %d: entry %llu is %.17g in ordinary memory, %.17g "
                 "in registered memory",
                 (int)w, (int)dtype, (int)layout, (unsigned long long)k, a, b);
      }
    }
  }
  for (uint64_t k = 0; k < guard * es; ++k) {
    assert_int_equal(reg[k], 0x5a);
    assert_int_equal(reg[(guard + size) * es + k], 0x5a);
  }
  for (uint64_t k = 0; k < size; ++k) {
    const double a = value_at(plain, f32, k), c = value_at(onCpu, f32, k);
    if (!(fabs(a - c) <= 1e-5 * fmax(1.0, fabs(c)))) {
      fail_msg("computation %d dtype %d layout %d: entry %llu is %.17g on the GPU, %.17g on the CPU",
               (int)w, (int)dtype, (int)layout, (unsigned long long)k, a, c);
    }
  }
  free(plain);
  free(onCpu);
  free(reg);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

static void test_results_in_registered_memory(void** s) {
  (void)s;
  if (!have_device()) skip();
  mpcf_options* gpu = NULL;
  mpcf_options* cpu = NULL;
  assert_int_equal(mpcf_options_create(&gpu), MPCF_OK);
  assert_int_equal(mpcf_options_create(&cpu), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(gpu, MPCF_BACKEND_CUDA), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(cpu, MPCF_BACKEND_CPU), MPCF_OK);
  /* Blocks of at most 64 x 64 pairs: many blocks, shared by every device. */
  assert_int_equal(mpcf_options_set_block_hints(gpu, 1, 1, 64 * 64), MPCF_OK);
  printf("devices: %d\n", mpcf_cuda_device_count());
  const mpcf_dtype dtypes[] = {MPCF_FLOAT32, MPCF_FLOAT64};
  const mpcf_layout layouts[] = {MPCF_LAYOUT_CONDENSED, MPCF_LAYOUT_DENSE, MPCF_LAYOUT_PACKED_LOWER};
  for (int d = 0; d < 2; ++d) {
    for (int l = 0; l < 3; ++l) {
      check_one(PDIST, dtypes[d], layouts[l], gpu, cpu);
      if (layouts[l] != MPCF_LAYOUT_CONDENSED) check_one(L2_KERNEL, dtypes[d], layouts[l], gpu, cpu);
    }
    check_one(CDIST, dtypes[d], MPCF_LAYOUT_DENSE, gpu, cpu);
  }
  mpcf_options_destroy(gpu);
  mpcf_options_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_results_in_registered_memory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
