/* Every documented error of the C API: the status, a message naming the
 * problem, and outputs left untouched. */
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

#define SENTINEL ((mpcf_pcfs*)(uintptr_t)0x1234)

/* Two valid functions [(0,1),(1,0)] and [(0,2),(2,0)]. */
static const uint64_t OFF[3] = {0, 2, 4};
static const double T[4] = {0, 1, 0, 2}, V[4] = {1, 0, 2, 0};

static mpcf_pcfs* valid(mpcf_dtype dtype) {
  static const float T32[4] = {0, 1, 0, 2}, V32[4] = {1, 0, 2, 0};
  mpcf_pcfs* h = NULL;
  assert_int_equal(dtype == MPCF_FLOAT32 ? mpcf_pcfs_create(dtype, 2, OFF, T32, V32, &h)
                                         : mpcf_pcfs_create(dtype, 2, OFF, T, V, &h),
                   MPCF_OK);
  return h;
}

static void create_fails(const uint64_t* off, uint64_t n, const double* t, const double* v,
                         mpcf_status want, const char* n1, const char* n2) {
  mpcf_pcfs* h = SENTINEL;
  expect_error(mpcf_pcfs_create(MPCF_FLOAT64, n, off, t, v, &h), want, n1);
  if (n2) expect_error(want, want, n2);
  assert_ptr_equal(h, SENTINEL);
}

static void test_create_errors(void** s) {
  (void)s;
  mpcf_pcfs* h = SENTINEL;
  expect_error(mpcf_pcfs_create(MPCF_FLOAT64, 2, OFF, T, V, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_pcfs_create(MPCF_FLOAT64, 2, NULL, T, V, &h), MPCF_ERROR_INVALID_ARGUMENT, "'offsets'");
  expect_error(mpcf_pcfs_create(MPCF_FLOAT64, 2, OFF, NULL, V, &h), MPCF_ERROR_INVALID_ARGUMENT, "'times'");
  expect_error(mpcf_pcfs_create(MPCF_FLOAT64, 2, OFF, T, NULL, &h), MPCF_ERROR_INVALID_ARGUMENT, "'values'");
  expect_error(mpcf_pcfs_create((mpcf_dtype)7, 2, OFF, T, V, &h), MPCF_ERROR_INVALID_ARGUMENT, "dtype 7");
  expect_error(mpcf_pcfs_create_interleaved(MPCF_FLOAT64, 2, OFF, NULL, &h), MPCF_ERROR_INVALID_ARGUMENT, "'points'");
  assert_ptr_equal(h, SENTINEL);

  const uint64_t bad0[3] = {1, 2, 4};
  create_fails(bad0, 2, T, V, MPCF_ERROR_INVALID_ARGUMENT, "offsets[0]", NULL);
  const uint64_t decreasing[4] = {0, 3, 2, 4};
  create_fails(decreasing, 3, T, V, MPCF_ERROR_INVALID_ARGUMENT, "offsets[2]", NULL);
  const uint64_t empty_fn[3] = {0, 0, 4}; /* m = 0 */
  create_fails(empty_fn, 2, T, V, MPCF_ERROR_INVALID_PCF, "PCF 0", "m = 0");

  const uint64_t off3[2] = {0, 3};
  const double unsorted_t[3] = {0, 2, 1}, dup_t[3] = {0, 1, 1}, vals[3] = {1, 2, 3};
  create_fails(off3, 1, unsorted_t, vals, MPCF_ERROR_INVALID_PCF, "breakpoint 2", "strictly increasing");
  create_fails(off3, 1, dup_t, vals, MPCF_ERROR_INVALID_PCF, "breakpoint 2", "repeats");
  const uint64_t off22[3] = {0, 1, 4};
  const double nan_t[4] = {0, 0, NAN, 2};
  create_fails(off22, 2, nan_t, (const double[4]){1, 1, 1, 1}, MPCF_ERROR_INVALID_PCF, "PCF 1, breakpoint 1", "finite");
  const double inf_t[4] = {0, 0, 1, INFINITY};
  create_fails(off22, 2, inf_t, (const double[4]){1, 1, 1, 1}, MPCF_ERROR_INVALID_PCF, "PCF 1, breakpoint 2", "finite");
  create_fails(off22, 2, (const double[4]){0, 0, 1, 2}, (const double[4]){1, NAN, 1, 1}, MPCF_ERROR_INVALID_PCF, "PCF 1, breakpoint 0", "value");
  create_fails(off22, 2, (const double[4]){0, 0, 1, 2}, (const double[4]){-INFINITY, 1, 1, 1}, MPCF_ERROR_INVALID_PCF, "PCF 0, breakpoint 0", "value");

  /* float32 validation too */
  const float tf[3] = {0, 1, 1}, vf[3] = {1, 1, 1};
  expect_error(mpcf_pcfs_create(MPCF_FLOAT32, 1, off3, tf, vf, &h), MPCF_ERROR_INVALID_PCF, "breakpoint 2");
  assert_ptr_equal(h, SENTINEL);
}

static void test_reshape_and_queries(void** s) {
  (void)s;
  mpcf_pcfs* X = valid(MPCF_FLOAT64);
  const uint64_t bad[2] = {3, 1}, good[2] = {2, 1};
  expect_error(mpcf_pcfs_reshape(X, 2, bad), MPCF_ERROR_INVALID_ARGUMENT, "shape (3, 1)");
  expect_error(mpcf_pcfs_reshape(X, 0, good), MPCF_ERROR_INVALID_ARGUMENT, "ndim");
  expect_error(mpcf_pcfs_reshape(X, 2, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'shape'");
  expect_error(mpcf_pcfs_reshape(NULL, 2, good), MPCF_ERROR_INVALID_ARGUMENT, "'pcfs'");
  size_t nd = 0;
  assert_int_equal(mpcf_pcfs_ndim(X, &nd), MPCF_OK);
  assert_int_equal(nd, 1); /* a failed reshape changed nothing */
  assert_int_equal(mpcf_pcfs_reshape(X, 2, good), MPCF_OK);
  uint64_t shape[2] = {0, 0}, one[1] = {77};
  expect_error(mpcf_pcfs_shape(X, one, 1), MPCF_ERROR_BUFFER_TOO_SMALL, "ndim = 2");
  assert_int_equal(one[0], 77);
  assert_int_equal(mpcf_pcfs_shape(X, shape, 2), MPCF_OK);
  assert_true(shape[0] == 2 && shape[1] == 1);
  uint64_t c = 5;
  expect_error(mpcf_pcfs_count(NULL, &c), MPCF_ERROR_INVALID_ARGUMENT, "'pcfs'");
  expect_error(mpcf_pcfs_count(X, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_pcfs_total_breakpoints(NULL, &c), MPCF_ERROR_INVALID_ARGUMENT, "'pcfs'");
  expect_error(mpcf_pcfs_dtype(NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'pcfs'");
  expect_error(mpcf_pcfs_ndim(X, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  assert_int_equal(c, 5);
  assert_int_equal(mpcf_pcfs_count(X, &c), MPCF_OK);
  assert_int_equal(c, 2);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(NULL);

  /* An empty collection takes any shape with a zero dimension, also when the
   * other dimensions' product overflows 64 bits (found by fuzzing); a shape
   * of non-zero dimensions whose product overflows is refused. */
  const uint64_t off0[1] = {0};
  mpcf_pcfs* E = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 0, off0, NULL, NULL, &E), MPCF_OK);
  const uint64_t zero_last[3] = {UINT64_MAX, UINT64_MAX, 0};
  assert_int_equal(mpcf_pcfs_reshape(E, 3, zero_last), MPCF_OK);
  uint64_t got[3] = {1, 1, 1};
  assert_int_equal(mpcf_pcfs_shape(E, got, 3), MPCF_OK);
  assert_true(got[0] == UINT64_MAX && got[1] == UINT64_MAX && got[2] == 0);
  const uint64_t zero_first[3] = {0, UINT64_MAX, 3};
  assert_int_equal(mpcf_pcfs_reshape(E, 3, zero_first), MPCF_OK);
  const uint64_t huge[2] = {UINT64_MAX, 2};
  expect_error(mpcf_pcfs_reshape(E, 2, huge), MPCF_ERROR_INVALID_ARGUMENT, "too many");
  mpcf_pcfs_destroy(E);
}

static void test_option_errors(void** s) {
  (void)s;
  mpcf_options* o = NULL;
  expect_error(mpcf_options_create(NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  expect_error(mpcf_options_set_window(o, 2.0, 1.0), MPCF_ERROR_INVALID_ARGUMENT, "window [2, 1)");
  expect_error(mpcf_options_set_window(o, 1.0, 1.0), MPCF_ERROR_INVALID_ARGUMENT, "window");
  expect_error(mpcf_options_set_window(o, NAN, 1.0), MPCF_ERROR_INVALID_ARGUMENT, "NaN");
  expect_error(mpcf_options_set_window(o, INFINITY, INFINITY), MPCF_ERROR_INVALID_ARGUMENT, "window");
  expect_error(mpcf_options_set_threads(o, -1), MPCF_ERROR_INVALID_ARGUMENT, "threads = -1");
  expect_error(mpcf_options_set_backend(o, (mpcf_backend)9), MPCF_ERROR_INVALID_ARGUMENT, "backend 9");
  expect_error(mpcf_options_set_memory_fraction(o, 0.0), MPCF_ERROR_INVALID_ARGUMENT, "memory fraction");
  expect_error(mpcf_options_set_memory_fraction(o, 1.5), MPCF_ERROR_INVALID_ARGUMENT, "memory fraction");
  expect_error(mpcf_options_set_memory_fraction(o, NAN), MPCF_ERROR_INVALID_ARGUMENT, "memory fraction");
  expect_error(mpcf_options_set_cuda_threshold(o, -1.0), MPCF_ERROR_INVALID_ARGUMENT, "threshold");
  const int dup[2] = {0, 0}, neg[1] = {-3};
  expect_error(mpcf_options_set_devices(o, 2, dup), MPCF_ERROR_INVALID_ARGUMENT, "listed twice");
  expect_error(mpcf_options_set_devices(o, 1, neg), MPCF_ERROR_INVALID_ARGUMENT, "device_ids[0] = -3");
  expect_error(mpcf_options_set_devices(o, 1, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'device_ids'");
  expect_error(mpcf_options_set_block_hints(NULL, 1, 1, 1), MPCF_ERROR_INVALID_ARGUMENT, "'options'");
  expect_error(mpcf_options_set_threads(NULL, 1), MPCF_ERROR_INVALID_ARGUMENT, "'options'");
  assert_int_equal(mpcf_options_set_devices(o, 0, NULL), MPCF_OK);
  assert_int_equal(mpcf_options_set_window(o, -INFINITY, 0.0), MPCF_OK);
  assert_int_equal(mpcf_options_set_threads(o, 0), MPCF_OK);
  mpcf_options_destroy(o);
  mpcf_options_destroy(NULL);
}

static void test_operation_errors(void** s) {
  (void)s;
  mpcf_pcfs* X = valid(MPCF_FLOAT64);
  mpcf_pcfs* X32 = valid(MPCF_FLOAT32);
  double out[4] = {-7, -7, -7, -7};
  mpcf_task* task = (mpcf_task*)(uintptr_t)0x99;

  expect_error(mpcf_pdist(NULL, 1.0, MPCF_LAYOUT_CONDENSED, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'X'");
  expect_error(mpcf_pdist(X, 0.5, MPCF_LAYOUT_CONDENSED, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = 0.5");
  expect_error(mpcf_pdist(X, NAN, MPCF_LAYOUT_CONDENSED, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = nan");
  expect_error(mpcf_pdist(X, -INFINITY, MPCF_LAYOUT_CONDENSED, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = -inf");
  expect_error(mpcf_pdist(X, 1.0, (mpcf_layout)5, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "layout 5");
  expect_error(mpcf_pdist(X, 1.0, MPCF_LAYOUT_DENSE, out, 3, NULL), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 4");
  expect_error(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, NULL, 1, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  expect_error(mpcf_pdist_start(X, 0.0, MPCF_LAYOUT_CONDENSED, out, 1, NULL, &task), MPCF_ERROR_INVALID_ARGUMENT, "p = 0");
  expect_error(mpcf_l2_kernel(X, MPCF_LAYOUT_CONDENSED, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "CONDENSED");
  expect_error(mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, out, 2, NULL), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 3");
  expect_error(mpcf_l2_kernel_start(X, MPCF_LAYOUT_DENSE, out, 4, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  expect_error(mpcf_cdist(X, X32, MPCF_METRIC_LP_DISTANCE, 1.0, out, 4, NULL), MPCF_ERROR_DTYPE_MISMATCH, "float32");
  expect_error(mpcf_cdist(X, NULL, MPCF_METRIC_LP_DISTANCE, 1.0, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'Y'");
  expect_error(mpcf_cdist(X, X, (mpcf_metric)3, 1.0, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "metric 3");
  expect_error(mpcf_cdist(X, X, MPCF_METRIC_LP_DISTANCE, 0.9, out, 4, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = 0.9");
  expect_error(mpcf_cdist(X, X, MPCF_METRIC_L2_KERNEL, 1.0, out, 3, NULL), MPCF_ERROR_BUFFER_TOO_SMALL, "holds 3");
  expect_error(mpcf_cdist_start(X, X, MPCF_METRIC_L2_KERNEL, 1.0, out, 4, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  for (int k = 0; k < 4; ++k) assert_true(out[k] == -7.0);
  assert_ptr_equal(task, (mpcf_task*)(uintptr_t)0x99);

  double d = -7;
  expect_error(mpcf_lp_distance(X, 2, X, 0, 1.0, NULL, &d), MPCF_ERROR_INVALID_ARGUMENT, "index i = 2");
  expect_error(mpcf_lp_distance(X, 0, X, 5, 1.0, NULL, &d), MPCF_ERROR_INVALID_ARGUMENT, "index j = 5");
  expect_error(mpcf_lp_distance(X, 0, X32, 0, 1.0, NULL, &d), MPCF_ERROR_DTYPE_MISMATCH, "dtype");
  expect_error(mpcf_lp_distance(X, 0, X, 1, 0.0, NULL, &d), MPCF_ERROR_INVALID_ARGUMENT, "p = 0");
  expect_error(mpcf_lp_distance(X, 0, X, 1, 1.0, NULL, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_l2_inner_product(X, 0, X, 9, NULL, &d), MPCF_ERROR_INVALID_ARGUMENT, "index j = 9");
  expect_error(mpcf_l2_inner_product(NULL, 0, X, 0, NULL, &d), MPCF_ERROR_INVALID_ARGUMENT, "'X'");
  expect_error(mpcf_lp_norm(X, 1.0, out, 1, NULL), MPCF_ERROR_BUFFER_TOO_SMALL, "needs 2");
  expect_error(mpcf_lp_norm(X, 0.2, out, 2, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = 0.2");
  assert_true(d == -7.0 && out[0] == -7.0 && out[1] == -7.0);

  uint64_t size = 5;
  expect_error(mpcf_pdist_size(NULL, MPCF_LAYOUT_DENSE, &size), MPCF_ERROR_INVALID_ARGUMENT, "'X'");
  expect_error(mpcf_pdist_size(X, (mpcf_layout)4, &size), MPCF_ERROR_INVALID_ARGUMENT, "layout 4");
  expect_error(mpcf_l2_kernel_size(X, MPCF_LAYOUT_CONDENSED, &size), MPCF_ERROR_INVALID_ARGUMENT, "CONDENSED");
  expect_error(mpcf_cdist_size(X, NULL, &size), MPCF_ERROR_INVALID_ARGUMENT, "'Y'");
  expect_error(mpcf_cdist_size(X, X, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  assert_int_equal(size, 5);

  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(X32);
}

static void test_cuda_unavailable(void** s) {
  (void)s;
  if (mpcf_cuda_device_count() > 0) skip();
  mpcf_pcfs* X = valid(MPCF_FLOAT64);
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CUDA), MPCF_OK);
  double out[1] = {-7};
  expect_error(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, o), MPCF_ERROR_CUDA_UNAVAILABLE, "CUDA not available");
  expect_error(mpcf_cdist(X, X, MPCF_METRIC_L2_KERNEL, 1.0, out, 4, o), MPCF_ERROR_CUDA_UNAVAILABLE, "CUDA not available");
  assert_true(out[0] == -7.0);
  /* AUTO falls back to the CPU. */
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_AUTO), MPCF_OK);
  assert_int_equal(mpcf_options_set_cuda_threshold(o, 0.0), MPCF_OK);
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, o), MPCF_OK);
  /* [0,1): |1-2| ; [1,2): |0-2| -> 3 */
  assert_true(out[0] == 3.0);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

static void test_task_errors(void** s) {
  (void)s;
  uint64_t done = 3;
  expect_error(mpcf_task_wait(NULL, 0.0), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  expect_error(mpcf_task_status(NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  expect_error(mpcf_task_cancel(NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  expect_error(mpcf_task_progress(NULL, &done, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  assert_int_equal(done, 3);
  mpcf_task_destroy(NULL);
}

static void test_version_and_names(void** s) {
  (void)s;
  assert_int_equal(mpcf_version(), MPCF_VERSION);
  char expect[32];
  snprintf(expect, sizeof expect, "%d.%d.%d", MPCF_VERSION_MAJOR, MPCF_VERSION_MINOR, MPCF_VERSION_PATCH);
  assert_string_equal(mpcf_version_string(), expect);
  assert_non_null(strstr(mpcf_build_info(), "libmpcf"));
  assert_non_null(strstr(mpcf_build_info(), mpcf_has_cuda() ? "cuda=on" : "cuda=off"));
  assert_non_null(strstr(mpcf_build_info(), "; cpu_simd="));
  assert_true(mpcf_cuda_device_count() >= 0);
  assert_string_equal(mpcf_status_name(MPCF_ERROR_INVALID_PCF), "MPCF_ERROR_INVALID_PCF");
  assert_string_equal(mpcf_status_name(MPCF_RUNNING), "MPCF_RUNNING");
  assert_string_equal(mpcf_status_name((mpcf_status)1234), "MPCF_UNKNOWN_STATUS");
  assert_non_null(mpcf_last_error_message());
}

/* MPCF_CPU_SIMD naming an instruction set of another architecture than the
 * library's (neon on x86-64, avx2 on aarch64): the computation is refused,
 * and the message names the variable and the sets the library has. */
static void test_cpu_simd_of_another_architecture(void** s) {
  (void)s;
#if defined(__x86_64__) || defined(__aarch64__)
#if defined(__x86_64__)
  const char* other = "neon";
#else
  const char* other = "avx2";
#endif
  mpcf_pcfs* X = valid(MPCF_FLOAT64);
  double out[1] = {-1.0};
  assert_int_equal(setenv("MPCF_CPU_SIMD", other, 1), 0);
  const mpcf_status st = mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, NULL);
  assert_int_equal(unsetenv("MPCF_CPU_SIMD"), 0);
  char needle[64];
  snprintf(needle, sizeof needle, "MPCF_CPU_SIMD=%s", other);
  expect_error(st, MPCF_ERROR_INVALID_ARGUMENT, needle);
  expect_error(st, MPCF_ERROR_INVALID_ARGUMENT, "its sets are scalar");
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, NULL), MPCF_OK);
  assert_true(out[0] == 3.0); /* |1 - 2| on [0, 1), then |0 - 2| on [1, 2) */
  mpcf_pcfs_destroy(X);
#else
  skip();
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_errors),    cmocka_unit_test(test_reshape_and_queries),
      cmocka_unit_test(test_option_errors),    cmocka_unit_test(test_operation_errors),
      cmocka_unit_test(test_cuda_unavailable), cmocka_unit_test(test_task_errors),
      cmocka_unit_test(test_version_and_names),
      cmocka_unit_test(test_cpu_simd_of_another_architecture),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
