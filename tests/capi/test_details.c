/* What the library says about a computation (mpcf_task_info_get,
 * mpcf_last_task_info) and about a failure (mpcf_last_error_detail), and
 * the checks callers may run before they have collections
 * (mpcf_exponent_check, mpcf_knn_check). The expected figures are worked
 * out by hand in the comments. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"

static void expect_status(mpcf_status got, mpcf_status want, const char* needle) {
  if (got != want) {
    fail_msg("status %s, expected %s (message: %s)", mpcf_status_name(got), mpcf_status_name(want),
             mpcf_last_error_message());
  }
  if (needle && !strstr(mpcf_last_error_message(), needle)) {
    fail_msg("message '%s' lacks '%s'", mpcf_last_error_message(), needle);
  }
}

/* X: three PCFs of m = 1, 2 and 4 breakpoints (B_X = 7). */
static const uint64_t XOFF[4] = {0, 1, 3, 7};
static const double XT[7] = {0, 0, 1, 0, 1, 2, 3};
static const double XV[7] = {0, 1, 0, 1, 2, 3, 0};
/* Y: two PCFs of m = 3 and 1 (B_Y = 4). */
static const uint64_t YOFF[3] = {0, 3, 4};
static const double YT[4] = {0, 1, 2, 0};
static const double YV[4] = {1, 2, 0, 0};

static mpcf_pcfs* make_x(void) {
  mpcf_pcfs* h = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 3, XOFF, XT, XV, &h), MPCF_OK);
  return h;
}

static mpcf_pcfs* make_y(void) {
  mpcf_pcfs* h = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 2, YOFF, YT, YV, &h), MPCF_OK);
  return h;
}

static mpcf_options* cpu_threads(int threads) {
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CPU), MPCF_OK);
  assert_int_equal(mpcf_options_set_threads(o, threads), MPCF_OK);
  return o;
}

static mpcf_task_info fresh_info(void) {
  mpcf_task_info info;
  memset(&info, 0xAB, sizeof info);
  info.struct_size = sizeof info;
  return info;
}

/* Runs a task to its end and returns its info. */
static mpcf_task_info finished_info(mpcf_task* task) {
  assert_int_equal(mpcf_task_wait(task, -1.0), MPCF_OK);
  mpcf_task_info info = fresh_info();
  assert_int_equal(mpcf_task_info_get(task, &info), MPCF_OK);
  assert_int_equal(info.struct_size, sizeof info);
  return info;
}

static void expect_cpu(const mpcf_task_info* info, int threads, double merge_steps) {
  assert_int_equal(info->backend, MPCF_BACKEND_CPU);
  assert_int_equal(info->threads, threads);
  assert_int_equal(info->device_count, 0);
  for (int k = 0; k < MPCF_TASK_INFO_MAX_DEVICES; ++k) assert_int_equal(info->devices[k], -1);
  if (info->merge_steps != merge_steps) {
    fail_msg("merge_steps = %.17g, expected %.17g", info->merge_steps, merge_steps);
  }
  assert_true(isfinite(info->seconds) && info->seconds >= 0.0);
}

/* Merge steps are sum over the computed pairs of m_i + m_j, with
 * m(X) = (1, 2, 4) and m(Y) = (3, 1):
 *   pdist, pairs i > j: (2+1) + (4+1) + (4+2)             = 14 = (3 - 1) * 7
 *   l2_kernel adds the diagonal (1+1) + (2+2) + (4+4)     = 28 = (3 + 1) * 7
 *   cdist, all 6 pairs: (1+3)+(1+1)+(2+3)+(2+1)+(4+3)+(4+1) = 26 = 2*7 + 3*4 */
static void test_task_info_of_each_operation(void** s) {
  (void)s;
  mpcf_pcfs* X = make_x();
  mpcf_pcfs* Y = make_y();
  mpcf_options* o = cpu_threads(3);
  double out[9];
  int64_t idx[6];
  mpcf_task* t = NULL;

  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 3, o, &t), MPCF_OK);
  mpcf_task_info info = finished_info(t);
  expect_cpu(&info, 3, 14.0);
  assert_int_equal(info.reason, MPCF_REASON_REQUESTED);
  mpcf_task_destroy(t);

  assert_int_equal(mpcf_l2_kernel_start(X, MPCF_LAYOUT_DENSE, out, 9, o, &t), MPCF_OK);
  info = finished_info(t);
  expect_cpu(&info, 3, 28.0);
  mpcf_task_destroy(t);

  assert_int_equal(mpcf_cdist_start(X, Y, MPCF_METRIC_LP_DISTANCE, 2.0, out, 6, o, &t), MPCF_OK);
  info = finished_info(t);
  expect_cpu(&info, 3, 26.0);
  mpcf_task_destroy(t);

  /* knn computes the pairs pdist and cdist compute. */
  assert_int_equal(mpcf_knn_start(X, NULL, 1.0, 1, out, idx, 3, o, &t), MPCF_OK);
  info = finished_info(t);
  expect_cpu(&info, 3, 14.0);
  mpcf_task_destroy(t);
  assert_int_equal(mpcf_knn_start(X, Y, 1.0, 2, out, idx, 6, o, &t), MPCF_OK);
  info = finished_info(t);
  expect_cpu(&info, 3, 26.0);
  mpcf_task_destroy(t);

  /* The L2 mat-vec without Y is l2_kernel's plane. */
  const double V[3] = {1, 1, 1};
  assert_int_equal(
      mpcf_kernel_matvec_start(X, NULL, MPCF_KERNEL_L2, 2.0, 1.0, V, 3, 1, out, 3, o, &t), MPCF_OK);
  info = finished_info(t);
  expect_cpu(&info, 3, 28.0);
  mpcf_task_destroy(t);

  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

static void test_threads_as_asked(void** s) {
  (void)s;
  mpcf_pcfs* X = make_x();
  double out[3];
  for (int threads = 1; threads <= 5; threads += 2) {
    mpcf_options* o = cpu_threads(threads);
    mpcf_task* t = NULL;
    assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 3, o, &t), MPCF_OK);
    const mpcf_task_info info = finished_info(t);
    expect_cpu(&info, threads, 14.0);
    mpcf_task_destroy(t);
    mpcf_options_destroy(o);
  }
  /* threads = 0: every hardware thread, the figure mpcf_build_info gives. */
  mpcf_options* o = cpu_threads(0);
  mpcf_task* t = NULL;
  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 3, o, &t), MPCF_OK);
  const mpcf_task_info info = finished_info(t);
  const char* at = strstr(mpcf_build_info(), "threads=");
  assert_non_null(at);
  assert_int_equal(info.threads, atoi(at + strlen("threads=")));
  assert_true(info.threads >= 1);
  mpcf_task_destroy(t);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

/* Backend AUTO: the reason says why the CPU (this machine has no usable
 * CUDA device unless the build and a device say otherwise). */
static void test_auto_reason(void** s) {
  (void)s;
  mpcf_pcfs* X = make_x();
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_threads(o, 2), MPCF_OK);
  /* 14 merge steps stay below a threshold of 15. */
  assert_int_equal(mpcf_options_set_cuda_threshold(o, 15.0), MPCF_OK);
  double out[3];
  mpcf_task* t = NULL;
  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 3, o, &t), MPCF_OK);
  const mpcf_task_info info = finished_info(t);
  expect_cpu(&info, 2, 14.0);
  if (!mpcf_has_cuda()) {
    assert_int_equal(info.reason, MPCF_REASON_AUTO_NO_CUDA_BUILD);
  } else if (mpcf_cuda_device_count() == 0) {
    assert_int_equal(info.reason, MPCF_REASON_AUTO_NO_DEVICE);
  } else {
    assert_int_equal(info.reason, MPCF_REASON_AUTO_BELOW_THRESHOLD);
  }
  mpcf_task_destroy(t);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

/* PLFs and objects of several components run on the CPU only; objects
 * count the breakpoints of all their components. */
/* PLFs and objects of several functions (both backends compute them; the
 * CPU is asked for here, so the figures do not depend on the machine). */
static void test_plfs_and_objects(void** s) {
  (void)s;
  mpcf_pcfs* P = NULL;
  assert_int_equal(mpcf_plfs_create(MPCF_FLOAT64, 3, XOFF, XT, XV, &P), MPCF_OK);
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_threads(o, 2), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CPU), MPCF_OK);
  double out[3];
  mpcf_task* t = NULL;
  assert_int_equal(mpcf_pdist_start(P, 1.0, MPCF_LAYOUT_CONDENSED, out, 3, o, &t), MPCF_OK);
  mpcf_task_info info = finished_info(t);
  expect_cpu(&info, 2, 14.0);
  assert_int_equal(info.reason, MPCF_REASON_REQUESTED);
  mpcf_task_destroy(t);

  /* Four PCFs of m = 1, 2 | 4, 1 as two objects of two components: object
   * 0 has 1 + 2 = 3 breakpoints, object 1 has 4 + 1 = 5; pdist computes
   * the one pair (1, 0): 3 + 5 = 8 merge steps. */
  static const uint64_t off[5] = {0, 1, 3, 7, 8};
  static const double t4[8] = {0, 0, 1, 0, 1, 2, 3, 0};
  static const double v4[8] = {0, 1, 0, 1, 2, 3, 0, 5};
  mpcf_pcfs* O = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 4, off, t4, v4, &O), MPCF_OK);
  const uint64_t shape[2] = {2, 2};
  assert_int_equal(mpcf_pcfs_reshape(O, 2, shape), MPCF_OK);
  assert_int_equal(mpcf_pcfs_set_component_axis(O, 1), MPCF_OK);
  assert_int_equal(mpcf_pdist_start(O, 1.0, MPCF_LAYOUT_CONDENSED, out, 1, o, &t), MPCF_OK);
  info = finished_info(t);
  expect_cpu(&info, 2, 8.0);
  assert_int_equal(info.reason, MPCF_REASON_REQUESTED);
  mpcf_task_destroy(t);

  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(O);
  mpcf_pcfs_destroy(P);
}

/* The info is there while the task runs (held by the testing hook), and
 * after it was cancelled; once it ended its seconds no longer change. */
static void test_info_of_a_running_and_a_cancelled_task(void** s) {
  (void)s;
  mpcf_pcfs* X = make_x();
  mpcf_options* o = cpu_threads(2);
  double out[3];
  mpcf_task* t = NULL;
  assert_int_equal(setenv("MPCF_DEBUG_HOLD_TASKS", "1", 1), 0);
  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 3, o, &t), MPCF_OK);
  assert_int_equal(unsetenv("MPCF_DEBUG_HOLD_TASKS"), 0);
  mpcf_task_info info = fresh_info();
  assert_int_equal(mpcf_task_info_get(t, &info), MPCF_OK);
  assert_int_equal(mpcf_task_status(t), MPCF_RUNNING);
  expect_cpu(&info, 2, 14.0);
  assert_int_equal(mpcf_task_cancel(t), MPCF_OK);
  assert_int_equal(mpcf_task_wait(t, -1.0), MPCF_ERROR_CANCELLED);
  info = fresh_info();
  assert_int_equal(mpcf_task_info_get(t, &info), MPCF_OK);
  expect_cpu(&info, 2, 14.0);
  mpcf_task_info again = fresh_info();
  assert_int_equal(mpcf_task_info_get(t, &again), MPCF_OK);
  assert_true(again.seconds == info.seconds);
  mpcf_task_destroy(t);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

/* struct_size: an older, shorter struct gets the fields it has; a newer,
 * longer one learns how many bytes this library wrote; fewer than 8 bytes
 * (or 0, not set) is refused. */
static void test_task_info_struct_size(void** s) {
  (void)s;
  mpcf_pcfs* X = make_x();
  mpcf_options* o = cpu_threads(2);
  double out[3];
  mpcf_task* t = NULL;
  assert_int_equal(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 3, o, &t), MPCF_OK);
  assert_int_equal(mpcf_task_wait(t, -1.0), MPCF_OK);

  /* A caller whose struct ends before `seconds`. */
  mpcf_task_info info;
  memset(&info, 0xAB, sizeof info);
  const uint32_t older = (uint32_t)offsetof(mpcf_task_info, seconds);
  info.struct_size = older;
  assert_int_equal(mpcf_task_info_get(t, &info), MPCF_OK);
  assert_int_equal(info.struct_size, older);
  assert_int_equal(info.backend, MPCF_BACKEND_CPU);
  assert_int_equal(info.threads, 2);
  assert_true(info.merge_steps == 14.0);
  const unsigned char* rest = (const unsigned char*)&info + older;
  for (size_t b = 0; b < sizeof info - older; ++b) assert_int_equal(rest[b], 0xAB);

  /* The smallest accepted: struct_size and backend. */
  memset(&info, 0xAB, sizeof info);
  info.struct_size = 8;
  assert_int_equal(mpcf_task_info_get(t, &info), MPCF_OK);
  assert_int_equal(info.struct_size, 8);
  assert_int_equal(info.backend, MPCF_BACKEND_CPU);
  assert_int_equal(((const unsigned char*)&info.reason)[0], 0xAB);

  /* A newer caller's longer struct: the library writes what it knows. */
  union {
    mpcf_task_info info;
    unsigned char bytes[sizeof(mpcf_task_info) + 64];
  } newer;
  memset(&newer, 0xCD, sizeof newer);
  newer.info.struct_size = sizeof newer;
  assert_int_equal(mpcf_task_info_get(t, &newer.info), MPCF_OK);
  assert_int_equal(newer.info.struct_size, sizeof(mpcf_task_info));
  assert_true(newer.info.merge_steps == 14.0);
  for (size_t b = sizeof(mpcf_task_info); b < sizeof newer; ++b) assert_int_equal(newer.bytes[b], 0xCD);

  /* Too small, or not set. */
  memset(&info, 0, sizeof info);
  info.struct_size = 4;
  expect_status(mpcf_task_info_get(t, &info), MPCF_ERROR_INVALID_ARGUMENT,
                "info->struct_size = 4 is smaller than 8");
  assert_non_null(strstr(mpcf_last_error_message(), "sizeof(mpcf_task_info)"));
  assert_int_equal(info.struct_size, 4);
  info.struct_size = 0;
  expect_status(mpcf_task_info_get(t, &info), MPCF_ERROR_INVALID_ARGUMENT, "struct_size = 0");
  expect_status(mpcf_task_info_get(t, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'info'");
  info = fresh_info();
  expect_status(mpcf_task_info_get(NULL, &info), MPCF_ERROR_INVALID_ARGUMENT, "'task'");
  mpcf_task_destroy(t);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

static void* no_record_yet(void* arg) {
  (void)arg;
  mpcf_task_info info = fresh_info();
  const mpcf_status s = mpcf_last_task_info(&info);
  return (void*)(intptr_t)(s == MPCF_ERROR_INVALID_ARGUMENT &&
                           strstr(mpcf_last_error_message(), "no synchronous computation") != NULL);
}

/* The synchronous calls: each records itself; one that fails its checks
 * leaves no record; a record is per thread. */
static void test_last_task_info(void** s) {
  (void)s;
  mpcf_pcfs* X = make_x();
  mpcf_pcfs* Y = make_y();
  mpcf_options* o = cpu_threads(2);
  double out[9];
  mpcf_task_info info = fresh_info();

  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, 3, o), MPCF_OK);
  assert_int_equal(mpcf_last_task_info(&info), MPCF_OK);
  expect_cpu(&info, 2, 14.0);
  assert_int_equal(info.reason, MPCF_REASON_REQUESTED);

  assert_int_equal(mpcf_cdist(X, Y, MPCF_METRIC_L2_KERNEL, 0.0, out, 6, o), MPCF_OK);
  info = fresh_info();
  assert_int_equal(mpcf_last_task_info(&info), MPCF_OK);
  expect_cpu(&info, 2, 26.0);

  /* A task does not touch the record of the synchronous calls. */
  mpcf_task* t = NULL;
  assert_int_equal(mpcf_l2_kernel_start(X, MPCF_LAYOUT_DENSE, out, 9, o, &t), MPCF_OK);
  assert_int_equal(mpcf_task_wait(t, -1.0), MPCF_OK);
  mpcf_task_destroy(t);
  info = fresh_info();
  assert_int_equal(mpcf_last_task_info(&info), MPCF_OK);
  assert_true(info.merge_steps == 26.0);

  /* The calls on the calling thread: one thread, CPU only (or requested).
   * Norms: each function against the zero function (one breakpoint):
   * (1+1) + (2+1) + (4+1) = 10. A pair: m_2 + m_0(Y) = 4 + 3 = 7. */
  assert_int_equal(mpcf_lp_norm(X, 1.0, out, 3, NULL), MPCF_OK);
  info = fresh_info();
  assert_int_equal(mpcf_last_task_info(&info), MPCF_OK);
  expect_cpu(&info, 1, 10.0);
  assert_int_equal(info.reason, MPCF_REASON_CPU_ONLY);
  double d = 0.0;
  assert_int_equal(mpcf_lp_distance(X, 2, Y, 0, 1.0, o, &d), MPCF_OK);
  info = fresh_info();
  assert_int_equal(mpcf_last_task_info(&info), MPCF_OK);
  expect_cpu(&info, 1, 7.0);
  assert_int_equal(info.reason, MPCF_REASON_REQUESTED);
  assert_int_equal(mpcf_l2_inner_product(X, 0, X, 1, NULL, &d), MPCF_OK);
  info = fresh_info();
  assert_int_equal(mpcf_last_task_info(&info), MPCF_OK);
  expect_cpu(&info, 1, 3.0);

  /* A call that fails its argument checks forgets the record. */
  expect_status(mpcf_pdist(X, 0.5, MPCF_LAYOUT_CONDENSED, out, 3, o), MPCF_ERROR_INVALID_ARGUMENT,
                "p = 0.5");
  expect_status(mpcf_last_task_info(&info), MPCF_ERROR_INVALID_ARGUMENT,
                "no synchronous computation has run on this thread");
  expect_status(mpcf_last_task_info(NULL), MPCF_ERROR_INVALID_ARGUMENT, "'info'");

  /* Another thread has a record of its own (none). */
  pthread_t th;
  void* ok = NULL;
  assert_int_equal(mpcf_lp_norm(X, 1.0, out, 3, NULL), MPCF_OK);
  assert_int_equal(pthread_create(&th, NULL, no_record_yet, NULL), 0);
  assert_int_equal(pthread_join(th, &ok), 0);
  assert_true(ok != NULL);
  info = fresh_info();
  assert_int_equal(mpcf_last_task_info(&info), MPCF_OK);
  assert_true(info.merge_steps == 10.0);

  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

/* ---- error details ---- */

static mpcf_error_detail detail_now(void) {
  mpcf_error_detail d;
  memset(&d, 0xAB, sizeof d);
  d.struct_size = sizeof d;
  assert_int_equal(mpcf_last_error_detail(&d), MPCF_OK);
  assert_int_equal(d.struct_size, sizeof d);
  return d;
}

static void expect_detail(mpcf_status status, int64_t function, int64_t breakpoint, int64_t barcode,
                          int64_t bar) {
  const mpcf_error_detail d = detail_now();
  if (d.status != status || d.function_index != function || d.breakpoint_index != breakpoint ||
      d.barcode_index != barcode || d.bar_index != bar) {
    fail_msg("detail (%s, function %lld, breakpoint %lld, barcode %lld, bar %lld), expected (%s, "
             "%lld, %lld, %lld, %lld); message: %s",
             mpcf_status_name(d.status), (long long)d.function_index, (long long)d.breakpoint_index,
             (long long)d.barcode_index, (long long)d.bar_index, mpcf_status_name(status),
             (long long)function, (long long)breakpoint, (long long)barcode, (long long)bar,
             mpcf_last_error_message());
  }
}

static void* fresh_thread_detail(void* arg) {
  mpcf_error_detail* out = arg;
  out->struct_size = sizeof *out;
  return (void*)(intptr_t)(mpcf_last_error_detail(out) == MPCF_OK);
}

static void test_error_detail_of_invalid_pcfs(void** s) {
  (void)s;
  mpcf_pcfs* h = NULL;
  /* A thread on which nothing failed: MPCF_OK, no location. */
  pthread_t th;
  mpcf_error_detail fresh;
  memset(&fresh, 0xAB, sizeof fresh);
  void* ok = NULL;
  assert_int_equal(pthread_create(&th, NULL, fresh_thread_detail, &fresh), 0);
  assert_int_equal(pthread_join(th, &ok), 0);
  assert_true(ok != NULL);
  assert_int_equal(fresh.status, MPCF_OK);
  assert_true(fresh.function_index == -1 && fresh.breakpoint_index == -1 &&
              fresh.barcode_index == -1 && fresh.bar_index == -1);

  /* Function 1 = (0, 1), (2, 1), (1, 1): its breakpoint 2 goes back in time. */
  const uint64_t off[3] = {0, 1, 4};
  expect_status(mpcf_pcfs_create(MPCF_FLOAT64, 2, off, (const double[4]){0, 0, 2, 1},
                                 (const double[4]){1, 1, 1, 1}, &h),
                MPCF_ERROR_INVALID_PCF, "PCF 1, breakpoint 2");
  expect_detail(MPCF_ERROR_INVALID_PCF, 1, 2, -1, -1);
  /* A repeated time: breakpoint 1 of function 0 (0, 5), (0, 6) ... */
  expect_status(mpcf_pcfs_create(MPCF_FLOAT32, 1, (const uint64_t[2]){0, 2}, (const float[2]){0, 0},
                                 (const float[2]){5, 6}, &h),
                MPCF_ERROR_INVALID_PCF, "repeats");
  expect_detail(MPCF_ERROR_INVALID_PCF, 0, 1, -1, -1);
  /* A NaN value at function 1, breakpoint 0, interleaved points
   * (t0, v0, t1, v1, ...), as PLFs. */
  const double points[8] = {0, 1, 1, NAN, 2, 0, 3, 0};
  expect_status(mpcf_plfs_create_interleaved(MPCF_FLOAT64, 2, (const uint64_t[3]){0, 1, 4}, points, &h),
                MPCF_ERROR_INVALID_PCF, "PCF 1, breakpoint 0: value is nan");
  expect_detail(MPCF_ERROR_INVALID_PCF, 1, 0, -1, -1);
  /* An infinite time: function 0, breakpoint 3. */
  expect_status(mpcf_pcfs_create(MPCF_FLOAT64, 1, (const uint64_t[2]){0, 4},
                                 (const double[4]){0, 1, 2, INFINITY}, (const double[4]){1, 1, 1, 1}, &h),
                MPCF_ERROR_INVALID_PCF, "breakpoint 3: time is inf");
  expect_detail(MPCF_ERROR_INVALID_PCF, 0, 3, -1, -1);
  /* No breakpoints at all (offsets[2] == offsets[3]): function 2 as a whole. */
  expect_status(mpcf_pcfs_create(MPCF_FLOAT64, 3, (const uint64_t[4]){0, 1, 2, 2},
                                 (const double[2]){0, 0}, (const double[2]){1, 1}, &h),
                MPCF_ERROR_INVALID_PCF, "PCF 2 has no breakpoints");
  expect_detail(MPCF_ERROR_INVALID_PCF, 2, -1, -1, -1);
  assert_null(h);

  /* A failure about no function: offsets that decrease. */
  expect_status(mpcf_pcfs_create(MPCF_FLOAT64, 2, (const uint64_t[3]){0, 2, 1}, (const double[2]){0, 1},
                                 (const double[2]){1, 1}, &h),
                MPCF_ERROR_INVALID_ARGUMENT, "offsets[2]");
  expect_detail(MPCF_ERROR_INVALID_ARGUMENT, -1, -1, -1, -1);

  /* A successful call leaves the last failure's detail; the next failure
   * replaces it. */
  expect_status(mpcf_pcfs_create(MPCF_FLOAT64, 1, (const uint64_t[2]){0, 2}, (const double[2]){1, 0},
                                 (const double[2]){1, 1}, &h),
                MPCF_ERROR_INVALID_PCF, "breakpoint 1");
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, 1, (const uint64_t[2]){0, 1}, (const double[1]){0},
                                    (const double[1]){0}, &h),
                   MPCF_OK);
  expect_detail(MPCF_ERROR_INVALID_PCF, 0, 1, -1, -1);
  double out[1];
  expect_status(mpcf_lp_norm(h, 0.5, out, 1, NULL), MPCF_ERROR_INVALID_ARGUMENT, "p = 0.5");
  expect_detail(MPCF_ERROR_INVALID_ARGUMENT, -1, -1, -1, -1);
  mpcf_pcfs_destroy(h);
}

static void test_error_detail_of_bad_bars(void** s) {
  (void)s;
  mpcf_pcfs* h = NULL;
  /* Barcode 1 (offsets 1 .. 3) has bar 1 = (3, 1): death < birth. */
  const uint64_t off[3] = {0, 1, 3};
  const double bars[6] = {0, 1, 0, 2, 3, 1};
  expect_status(mpcf_pcfs_from_barcodes(MPCF_BETTI_CURVE, MPCF_FLOAT64, 2, off, bars, &h),
                MPCF_ERROR_INVALID_ARGUMENT, "barcode 1, bar 1 (birth 3, death 1)");
  expect_detail(MPCF_ERROR_INVALID_ARGUMENT, -1, -1, 1, 1);
  /* A landscape of an infinite bar without clip: barcode 0, bar 0. */
  const double inf_bar[2] = {0, INFINITY};
  expect_status(mpcf_plfs_landscapes(MPCF_FLOAT64, 1, (const uint64_t[2]){0, 1}, inf_bar, 1, INFINITY, &h),
                MPCF_ERROR_INVALID_ARGUMENT, "barcode 0, bar 0");
  expect_detail(MPCF_ERROR_INVALID_ARGUMENT, -1, -1, 0, 0);
  /* Barcode 2 as a whole: its accumulated persistence function reaches
   * 3e38 + 3e38 = 6e38, beyond float32 (each bar alone fits). */
  const double big[4] = {0, 3e38, 0, 3e38};
  expect_status(mpcf_pcfs_from_barcodes(MPCF_ACCUMULATED_PERSISTENCE, MPCF_FLOAT32, 3,
                                        (const uint64_t[4]){0, 0, 0, 2}, big, &h),
                MPCF_ERROR_INVALID_ARGUMENT, "barcode 2: the");
  expect_detail(MPCF_ERROR_INVALID_ARGUMENT, -1, -1, 2, -1);
  assert_null(h);
}

static void test_error_detail_struct_size(void** s) {
  (void)s;
  mpcf_pcfs* h = NULL;
  expect_status(mpcf_pcfs_create(MPCF_FLOAT64, 1, (const uint64_t[2]){0, 3}, (const double[3]){0, 2, 1},
                                 (const double[3]){1, 1, 1}, &h),
                MPCF_ERROR_INVALID_PCF, "breakpoint 2");
  /* An older caller's struct that ends before the barcode fields. */
  mpcf_error_detail d;
  memset(&d, 0xAB, sizeof d);
  const uint32_t older = (uint32_t)offsetof(mpcf_error_detail, barcode_index);
  d.struct_size = older;
  assert_int_equal(mpcf_last_error_detail(&d), MPCF_OK);
  assert_int_equal(d.struct_size, older);
  assert_int_equal(d.status, MPCF_ERROR_INVALID_PCF);
  assert_true(d.function_index == 0 && d.breakpoint_index == 2);
  const unsigned char* rest = (const unsigned char*)&d + older;
  for (size_t b = 0; b < sizeof d - older; ++b) assert_int_equal(rest[b], 0xAB);
  /* A newer caller's longer struct. */
  union {
    mpcf_error_detail d;
    unsigned char bytes[sizeof(mpcf_error_detail) + 32];
  } newer;
  memset(&newer, 0xCD, sizeof newer);
  newer.d.struct_size = sizeof newer;
  assert_int_equal(mpcf_last_error_detail(&newer.d), MPCF_OK);
  assert_int_equal(newer.d.struct_size, sizeof(mpcf_error_detail));
  assert_true(newer.d.breakpoint_index == 2);
  for (size_t b = sizeof(mpcf_error_detail); b < sizeof newer; ++b) assert_int_equal(newer.bytes[b], 0xCD);
  /* Too small: refused, and that refusal is now the last error. */
  memset(&d, 0, sizeof d);
  d.struct_size = 7;
  expect_status(mpcf_last_error_detail(&d), MPCF_ERROR_INVALID_ARGUMENT,
                "detail->struct_size = 7 is smaller than 8");
  assert_non_null(strstr(mpcf_last_error_message(), "sizeof(mpcf_error_detail)"));
  expect_detail(MPCF_ERROR_INVALID_ARGUMENT, -1, -1, -1, -1);
  expect_status(mpcf_last_error_detail(NULL), MPCF_ERROR_INVALID_ARGUMENT, "'detail'");
}

/* ---- checks without collections ---- */

/* The message after the entry point's name ("mpcf_x: "). */
static const char* text_of(const char* message) {
  const char* colon = strstr(message, ": ");
  return colon ? colon + 2 : message;
}

static void test_exponent_and_knn_checks(void** s) {
  (void)s;
  assert_int_equal(mpcf_exponent_check(1.0), MPCF_OK);
  assert_int_equal(mpcf_exponent_check(2.5), MPCF_OK);
  assert_int_equal(mpcf_exponent_check(INFINITY), MPCF_OK);
  expect_status(mpcf_exponent_check(0.5), MPCF_ERROR_INVALID_ARGUMENT,
                "mpcf_exponent_check: p = 0.5 is not a valid exponent; p must be >= 1");
  expect_status(mpcf_exponent_check(NAN), MPCF_ERROR_INVALID_ARGUMENT, "p = nan");
  expect_status(mpcf_exponent_check(-INFINITY), MPCF_ERROR_INVALID_ARGUMENT, "p = -inf");

  /* 1 <= k <= count(X) - 1 without Y, count(Y) with it. */
  assert_int_equal(mpcf_knn_check(4, -1, 0, 1.0, 1), MPCF_OK);
  assert_int_equal(mpcf_knn_check(4, -1, 0, 1.0, 3), MPCF_OK);
  expect_status(mpcf_knn_check(4, -1, 0, 1.0, 4), MPCF_ERROR_INVALID_ARGUMENT,
                "k = 4 is more than the 3 other functions of X (count(X) - 1)");
  assert_int_equal(mpcf_knn_check(4, 2, 0, 1.0, 2), MPCF_OK);
  expect_status(mpcf_knn_check(4, 2, 0, 1.0, 3), MPCF_ERROR_INVALID_ARGUMENT,
                "k = 3 is more than the 2 functions of Y");
  expect_status(mpcf_knn_check(4, 2, 1, 1.0, 3), MPCF_ERROR_INVALID_ARGUMENT,
                "k = 3 is more than the 2 objects of Y");
  expect_status(mpcf_knn_check(4, 2, 0, 1.0, 0), MPCF_ERROR_INVALID_ARGUMENT,
                "k = 0; k must be at least 1");
  expect_status(mpcf_knn_check(0, -1, 0, 1.0, 1), MPCF_ERROR_INVALID_ARGUMENT,
                "k = 1 is more than the 0 other functions");
  /* p first, as mpcf_knn_start. */
  expect_status(mpcf_knn_check(4, -1, 0, 0.5, 9), MPCF_ERROR_INVALID_ARGUMENT, "p = 0.5");

  /* The same sentence as the start call's, for the same counts. */
  mpcf_pcfs* X = make_x();
  double dist[12];
  int64_t idx[12];
  mpcf_task* t = NULL;
  expect_status(mpcf_knn_start(X, NULL, 1.0, 3, dist, idx, 12, NULL, &t), MPCF_ERROR_INVALID_ARGUMENT,
                "mpcf_knn_start: k = 3");
  char start_message[512];
  snprintf(start_message, sizeof start_message, "%s", text_of(mpcf_last_error_message()));
  expect_status(mpcf_knn_check(3, -1, 0, 1.0, 3), MPCF_ERROR_INVALID_ARGUMENT, "mpcf_knn_check: k = 3");
  assert_string_equal(text_of(mpcf_last_error_message()), start_message);
  assert_null(t);
  mpcf_pcfs_destroy(X);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_task_info_of_each_operation),
      cmocka_unit_test(test_threads_as_asked),
      cmocka_unit_test(test_auto_reason),
      cmocka_unit_test(test_plfs_and_objects),
      cmocka_unit_test(test_info_of_a_running_and_a_cancelled_task),
      cmocka_unit_test(test_task_info_struct_size),
      cmocka_unit_test(test_last_task_info),
      cmocka_unit_test(test_error_detail_of_invalid_pcfs),
      cmocka_unit_test(test_error_detail_of_bad_bars),
      cmocka_unit_test(test_error_detail_struct_size),
      cmocka_unit_test(test_exponent_and_knn_checks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
