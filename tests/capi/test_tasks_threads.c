/* Reproducibility across thread counts and block shapes, tasks (progress,
 * wait, cancel from another thread) and concurrent callers. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"
#include "reference.h"

static mpcf_pcfs* make(const pcf_set* s, mpcf_dtype dtype) {
  mpcf_pcfs* h = NULL;
  assert_int_equal(dtype == MPCF_FLOAT32 ? mpcf_pcfs_create(dtype, s->n, s->offsets, s->t32, s->v32, &h)
                                         : mpcf_pcfs_create(dtype, s->n, s->offsets, s->t, s->v, &h),
                   MPCF_OK);
  return h;
}

static mpcf_options* cpu_options(int threads, uint64_t split, uint64_t min_side, uint64_t max_elems) {
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CPU), MPCF_OK);
  assert_int_equal(mpcf_options_set_threads(o, threads), MPCF_OK);
  assert_int_equal(mpcf_options_set_block_hints(o, split, min_side, max_elems), MPCF_OK);
  return o;
}

static void test_bitwise_reproducible(void** state) {
  (void)state;
  ref_seed(99);
  pcf_set s = pcf_set_random(150, 40, 0, 1);
  pcf_set y = pcf_set_random(37, 40, 0, 1);
  for (int d = 0; d < 2; ++d) {
    const mpcf_dtype dtype = d ? MPCF_FLOAT64 : MPCF_FLOAT32;
    const size_t esz = d ? 8 : 4;
    mpcf_pcfs* X = make(&s, dtype);
    mpcf_pcfs* Y = make(&y, dtype);
    const uint64_t npd = 150 * 149 / 2, nk = 150 * 151 / 2, nc = 150 * 37;
    void* base_pd = malloc(npd * esz);
    void* base_k = malloc(nk * esz);
    void* base_c = malloc(nc * esz);
    void* out = malloc(nk * esz);
    mpcf_options* o = cpu_options(1, 0, 0, 0);
    assert_int_equal(mpcf_pdist(X, 2.0, MPCF_LAYOUT_PACKED_LOWER, base_pd, npd, o), MPCF_OK);
    assert_int_equal(mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, base_k, nk, o), MPCF_OK);
    assert_int_equal(mpcf_cdist(X, Y, MPCF_METRIC_LP_DISTANCE, 1.0, base_c, nc, o), MPCF_OK);
    mpcf_options_destroy(o);
    const int threads[] = {2, 7, 2, 7, 3};
    const uint64_t hints[][3] = {{0, 0, 0}, {0, 0, 0}, {16, 0, 1000}, {1, 0, 1}, {3, 50, 0}};
    for (int k = 0; k < 5; ++k) {
      o = cpu_options(threads[k], hints[k][0], hints[k][1], hints[k][2]);
      assert_int_equal(mpcf_pdist(X, 2.0, MPCF_LAYOUT_PACKED_LOWER, out, npd, o), MPCF_OK);
      assert_memory_equal(out, base_pd, npd * esz);
      assert_int_equal(mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, out, nk, o), MPCF_OK);
      assert_memory_equal(out, base_k, nk * esz);
      assert_int_equal(mpcf_cdist(X, Y, MPCF_METRIC_LP_DISTANCE, 1.0, out, nc, o), MPCF_OK);
      assert_memory_equal(out, base_c, nc * esz);
      mpcf_options_destroy(o);
    }
    free(base_pd);
    free(base_k);
    free(base_c);
    free(out);
    mpcf_pcfs_destroy(X);
    mpcf_pcfs_destroy(Y);
  }
  pcf_set_free(&s);
  pcf_set_free(&y);
}

static void test_task_progress_and_wait(void** state) {
  (void)state;
  ref_seed(5);
  pcf_set s = pcf_set_random(60, 10, 0, 0);
  mpcf_pcfs* X = make(&s, MPCF_FLOAT64);
  const uint64_t n = 60 * 59 / 2;
  double* out = malloc(n * sizeof(double));
  double* sync = malloc(n * sizeof(double));
  mpcf_options* o = cpu_options(2, 0, 0, 0);
  mpcf_task* task = NULL;
  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, n, o, &task), MPCF_OK);
  mpcf_pcfs_destroy(X); /* the task keeps its input alive */
  assert_int_equal(mpcf_task_wait(task, -1.0), MPCF_OK);
  assert_int_equal(mpcf_task_status(task), MPCF_OK);
  uint64_t done = 0, total = 0;
  assert_int_equal(mpcf_task_progress(task, &done, &total), MPCF_OK);
  assert_int_equal(total, n);
  assert_int_equal(done, n);
  assert_int_equal(mpcf_task_cancel(task), MPCF_OK); /* after the end: no effect */
  assert_int_equal(mpcf_task_status(task), MPCF_OK);
  mpcf_task_destroy(task);
  X = make(&s, MPCF_FLOAT64);
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, sync, n, o), MPCF_OK);
  assert_memory_equal(out, sync, n * sizeof(double));
  mpcf_pcfs_destroy(X);
  mpcf_options_destroy(o);
  free(out);
  free(sync);
  pcf_set_free(&s);
}

typedef struct {
  mpcf_task* task;
} cancel_arg;

static void* cancel_later(void* p) {
  cancel_arg* a = (cancel_arg*)p;
  /* Wait until the task has made some progress, then cancel it. */
  for (;;) {
    uint64_t done = 0, total = 0;
    mpcf_task_progress(a->task, &done, &total);
    if (done > 0) break;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  mpcf_task_cancel(a->task);
  return NULL;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_cancel_from_other_thread(void** state) {
  (void)state;
  ref_seed(6);
  /* Big enough to run for seconds if not cancelled. */
  pcf_set s = pcf_set_random(3000, 400, 0, 1);
  mpcf_pcfs* X = make(&s, MPCF_FLOAT64);
  const uint64_t n = 3000ull * 2999 / 2;
  double* out = malloc(n * sizeof(double));
  mpcf_options* o = cpu_options(2, 0, 0, 0);
  mpcf_task* task = NULL;
  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, n, o, &task), MPCF_OK);
  cancel_arg a = {task};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, cancel_later, &a), 0);
  const double t0 = now_seconds();
  const mpcf_status st = mpcf_task_wait(task, 60.0);
  const double waited = now_seconds() - t0;
  pthread_join(th, NULL);
  assert_int_equal(st, MPCF_ERROR_CANCELLED);
  assert_non_null(strstr(mpcf_last_error_message(), "cancelled"));
  assert_int_equal(mpcf_task_status(task), MPCF_ERROR_CANCELLED);
  uint64_t done = 0, total = 0;
  assert_int_equal(mpcf_task_progress(task, &done, &total), MPCF_OK);
  assert_true(done < total);
  /* Not a timing assertion on speed: only that cancellation did not run the
   * whole (multi-second) job to completion. */
  (void)waited;
  /* No partial result: every element is NaN. */
  for (uint64_t k = 0; k < n; k += 997) assert_true(isnan(out[k]));
  assert_true(isnan(out[n - 1]) && isnan(out[0]));
  mpcf_task_destroy(task);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  free(out);
  pcf_set_free(&s);
}

static void test_destroy_running_task(void** state) {
  (void)state;
  ref_seed(8);
  pcf_set s = pcf_set_random(2000, 300, 0, 1);
  mpcf_pcfs* X = make(&s, MPCF_FLOAT32);
  const uint64_t n = 2000ull * 2001 / 2;
  float* out = malloc(n * sizeof(float));
  mpcf_task* task = NULL;
  assert_int_equal(mpcf_l2_kernel_start(X, MPCF_LAYOUT_PACKED_LOWER, out, n, NULL, &task), MPCF_OK);
  assert_int_equal(mpcf_task_wait(task, 0.0), MPCF_RUNNING);
  mpcf_task_destroy(task); /* cancels and joins; nothing leaks */
  mpcf_pcfs_destroy(X);
  free(out);
  pcf_set_free(&s);
}

typedef struct {
  const pcf_set* s;
  int id;
  int ok;
} worker_arg;

static void* concurrent_worker(void* p) {
  worker_arg* a = (worker_arg*)p;
  const pcf_set* s = a->s;
  mpcf_pcfs* X = NULL;
  a->ok = 0;
  if (mpcf_pcfs_create(MPCF_FLOAT64, s->n, s->offsets, s->t, s->v, &X) != MPCF_OK) return NULL;
  const double p_exp = 1.0 + (a->id % 3);
  const uint64_t n = s->n * (s->n - 1) / 2;
  double* out = malloc(n * sizeof(double));
  mpcf_options* o = NULL;
  mpcf_options_create(&o);
  mpcf_options_set_threads(o, 1 + a->id % 2);
  int good = mpcf_pdist(X, p_exp, MPCF_LAYOUT_CONDENSED, out, n, o) == MPCF_OK;
  /* Every entry against the reference. */
  const enum ref_op op = p_exp == 1.0 ? REF_L1 : REF_LP;
  uint64_t k = 0;
  for (size_t i = 0; good && i < s->n; ++i) {
    for (size_t j = i + 1; j < s->n; ++j, ++k) {
      long double scale;
      const long double want = ref_value(op, p_exp, s, i, s, j, -INFINITY, INFINITY, &scale);
      if (!ref_close(out[k], want, scale, 1e-12)) good = 0;
    }
  }
  /* A deliberate error on this thread leaves other threads' messages alone. */
  if (mpcf_pdist(X, 0.0, MPCF_LAYOUT_CONDENSED, out, n, o) != MPCF_ERROR_INVALID_ARGUMENT) good = 0;
  if (!strstr(mpcf_last_error_message(), "p = 0")) good = 0;
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  free(out);
  a->ok = good;
  return NULL;
}

static void test_eight_concurrent_callers(void** state) {
  (void)state;
  ref_seed(31);
  pcf_set s = pcf_set_random(40, 15, 0, 0);
  pthread_t th[8];
  worker_arg args[8];
  for (int k = 0; k < 8; ++k) {
    args[k].s = &s;
    args[k].id = k;
    args[k].ok = 0;
    assert_int_equal(pthread_create(&th[k], NULL, concurrent_worker, &args[k]), 0);
  }
  for (int k = 0; k < 8; ++k) pthread_join(th[k], NULL);
  for (int k = 0; k < 8; ++k) assert_true(args[k].ok);
  pcf_set_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bitwise_reproducible),
      cmocka_unit_test(test_task_progress_and_wait),
      cmocka_unit_test(test_cancel_from_other_thread),
      cmocka_unit_test(test_destroy_running_task),
      cmocka_unit_test(test_eight_concurrent_callers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
