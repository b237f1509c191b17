/* Callbacks and what a task borrows, through the C API:
 * - a stream started inside a stream callback (same thread) leaves the outer
 *   block's values valid and unchanged (checked against the dense pdist);
 * - the mat-vec's V is taken at the start call: overwriting or freeing it
 *   afterwards changes nothing (the task is held until waited for by the
 *   MPCF_DEBUG_HOLD_TASKS=until_wait hook, so the overwrite comes before the
 *   work whatever the machine's speed);
 * - mpcf_task_wait and mpcf_task_destroy of a task from its own callback
 *   are refused with a message instead of deadlocking or aborting.
 * Run with no argument on the CPU backend; with the argument "cuda" on the
 * CUDA backend (exit code 77, a skip, when no device exists). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"
#include "reference.h"

static mpcf_backend g_backend = MPCF_BACKEND_CPU;

static mpcf_pcfs* make(const pcf_set* s) {
  mpcf_pcfs* h = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT64, s->n, s->offsets, s->t, s->v, &h), MPCF_OK);
  return h;
}

/* Small blocks (8 x 8 at most, also on a GPU: no occupancy floor), so that the plane has many blocks on the
 * diagonal, whose values the stream completes in a copy of its own. */
static mpcf_options* small_blocks(int threads) {
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, g_backend), MPCF_OK);
  assert_int_equal(mpcf_options_set_threads(o, threads), MPCF_OK);
  assert_int_equal(mpcf_options_set_block_hints(o, 0, 1, 8 * 8), MPCF_OK);
  return o;
}

/* ---- D1: a stream inside a stream callback ---- */

typedef struct nested_state {
  size_t n;
  const double* D;         /* the dense pdist of the outer collection */
  const mpcf_pcfs* inner;  /* the collection of the nested stream */
  const mpcf_options* o;
  int blocks;
  int bad_values;   /* entries that differ from D, before or after the nested call */
  int changed;      /* blocks whose values changed during the nested call */
  int nested_failed;
  double inner_sum;
} nested_state;

static int add_up(const mpcf_block* b, void* user) {
  double* sum = (double*)user;
  const double* v = (const double*)b->values;
  const size_t e = (size_t)((b->row_end - b->row_begin) * (b->col_end - b->col_begin));
  for (size_t k = 0; k < e; ++k) *sum += v[k];
  return 0;
}

static int outer_block(const mpcf_block* b, void* user) {
  nested_state* st = (nested_state*)user;
  const size_t rows = (size_t)(b->row_end - b->row_begin), cols = (size_t)(b->col_end - b->col_begin);
  const double* v = (const double*)b->values;
  double* before = (double*)malloc(rows * cols * sizeof(double));
  memcpy(before, v, rows * cols * sizeof(double));
  /* The nested stream, on the same thread, over other data of the same size
     (so its diagonal blocks have the sizes of these). */
  if (mpcf_pdist_stream(st->inner, 1.0, add_up, &st->inner_sum, st->o) != MPCF_OK) ++st->nested_failed;
  if (memcmp(before, v, rows * cols * sizeof(double)) != 0) ++st->changed;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const size_t i = (size_t)b->row_begin + r, j = (size_t)b->col_begin + c;
      if (!(v[r * cols + c] == st->D[i * st->n + j])) ++st->bad_values;
    }
  }
  free(before);
  ++st->blocks;
  return 0;
}

static void check_nested_stream(int threads) {
  ref_seed(31);
  pcf_set xs = pcf_set_random(40, 6, 0, 0);
  pcf_set zs = pcf_set_random(40, 6, 0, 0);
  for (size_t k = 0; k < (size_t)zs.offsets[zs.n]; ++k) zs.v[k] = 3.0 * zs.v[k] + 1.0;
  mpcf_pcfs* X = make(&xs);
  mpcf_pcfs* Z = make(&zs);
  mpcf_options* o = small_blocks(threads);
  const size_t n = xs.n;
  double* D = (double*)malloc(n * n * sizeof(double));
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_DENSE, D, n * n, o), MPCF_OK);
  nested_state st = {n, D, Z, o, 0, 0, 0, 0, 0.0};
  assert_int_equal(mpcf_pdist_stream(X, 1.0, outer_block, &st, o), MPCF_OK);
  assert_true(st.blocks > 10);
  assert_int_equal(st.nested_failed, 0);
  if (st.changed || st.bad_values) {
    fail_msg("%d of %d blocks changed during the nested stream, %d wrong values", st.changed,
             st.blocks, st.bad_values);
  }
  free(D);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Z);
  pcf_set_free(&xs);
  pcf_set_free(&zs);
}

static void test_nested_stream_keeps_outer_values(void** s) {
  (void)s;
  check_nested_stream(1);
  check_nested_stream(2);
}

/* ---- D3: the mat-vec's V is taken at the start ---- */

static void test_matvec_takes_V_at_start(void** s) {
  (void)s;
  ref_seed(32);
  pcf_set xs = pcf_set_random(30, 5, 0, 0);
  mpcf_pcfs* X = make(&xs);
  mpcf_options* o = small_blocks(2);
  const size_t n = xs.n, r = 2;
  double* V = (double*)malloc(n * r * sizeof(double));
  for (size_t e = 0; e < n * r; ++e) V[e] = (double)(e % 7) - 3.0;
  double* want = (double*)malloc(n * r * sizeof(double));
  double* got = (double*)malloc(n * r * sizeof(double));
  assert_int_equal(mpcf_kernel_matvec(X, NULL, MPCF_KERNEL_LAPLACIAN, 1.0, 2.0, V, n * r, r, want,
                                      n * r, o),
                   MPCF_OK);
  for (int variant = 0; variant < 2; ++variant) {
    double* Vs = (double*)malloc(n * r * sizeof(double));
    memcpy(Vs, V, n * r * sizeof(double));
    assert_int_equal(setenv("MPCF_DEBUG_HOLD_TASKS", "until_wait", 1), 0);
    mpcf_task* task = NULL;
    const mpcf_status started = mpcf_kernel_matvec_start(X, NULL, MPCF_KERNEL_LAPLACIAN, 1.0, 2.0,
                                                         Vs, n * r, r, got, n * r, o, &task);
    assert_int_equal(unsetenv("MPCF_DEBUG_HOLD_TASKS"), 0);
    assert_int_equal(started, MPCF_OK);
    if (variant == 0) {
      /* Overwritten with values the start call would have refused. */
      for (size_t e = 0; e < n * r; ++e) Vs[e] = NAN;
    } else {
      free(Vs); /* freed: a task that still read it would read freed memory */
      Vs = NULL;
    }
    assert_int_equal(mpcf_task_wait(task, -1), MPCF_OK);
    mpcf_task_destroy(task);
    for (size_t e = 0; e < n * r; ++e) {
      if (!(got[e] == want[e])) fail_msg("variant %d: out[%zu] = %g, expected %g", variant, e, got[e], want[e]);
    }
    free(Vs);
  }
  free(V);
  free(want);
  free(got);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  pcf_set_free(&xs);
}

/* ---- D7: wait and destroy of a task from its own callback ---- */

typedef struct own_state {
  _Atomic(mpcf_task*) task; /* set by the test once the start call returned */
  int calls;
  mpcf_status poll, wait_forever, nested_wait;
  char wait_message[512];
  char destroy_message[512];
  const mpcf_pcfs* inner;
  const mpcf_options* o;
} own_state;

static int inner_waits_for_outer(const mpcf_block* b, void* user) {
  (void)b;
  own_state* st = (own_state*)user;
  st->nested_wait = mpcf_task_wait(atomic_load(&st->task), -1);
  return 1; /* one block is enough */
}

static int own_block(const mpcf_block* b, void* user) {
  (void)b;
  own_state* st = (own_state*)user;
  mpcf_task* task;
  /* The callback can run before the start call has returned the handle. */
  while ((task = atomic_load(&st->task)) == NULL) {
  }
  if (st->calls++ > 0) return 0;
  st->poll = mpcf_task_wait(task, 0.0);
  if (st->poll != MPCF_ERROR_INVALID_ARGUMENT) return 0; /* do not risk the deadlock below */
  st->wait_forever = mpcf_task_wait(task, -1);
  snprintf(st->wait_message, sizeof st->wait_message, "%s", mpcf_last_error_message());
  mpcf_task_destroy(task); /* refused: must neither abort nor deadlock */
  snprintf(st->destroy_message, sizeof st->destroy_message, "%s", mpcf_last_error_message());
  /* One level deeper: a synchronous stream's callback waits for the outer task. */
  (void)mpcf_pdist_stream(st->inner, 1.0, inner_waits_for_outer, st, st->o);
  return 0;
}

static void test_wait_and_destroy_in_own_callback(void** s) {
  (void)s;
  ref_seed(33);
  pcf_set xs = pcf_set_random(24, 4, 0, 0);
  mpcf_pcfs* X = make(&xs);
  mpcf_options* o = small_blocks(2);
  own_state st;
  memset(&st, 0, sizeof st);
  atomic_store(&st.task, NULL);
  st.poll = st.wait_forever = st.nested_wait = MPCF_OK;
  st.inner = X;
  st.o = o;
  mpcf_task* task = NULL;
  assert_int_equal(mpcf_pdist_stream_start(X, 1.0, own_block, &st, o, &task), MPCF_OK);
  atomic_store(&st.task, task);
  assert_int_equal(mpcf_task_wait(task, -1), MPCF_OK);
  mpcf_task_destroy(task);
  assert_true(st.calls > 1); /* the refused destroy left the task running */
  assert_int_equal(st.poll, MPCF_ERROR_INVALID_ARGUMENT);
  assert_int_equal(st.wait_forever, MPCF_ERROR_INVALID_ARGUMENT);
  assert_int_equal(st.nested_wait, MPCF_ERROR_INVALID_ARGUMENT);
  if (!strstr(st.wait_message, "mpcf_task_wait: called from the task's own callback")) {
    fail_msg("wait message: '%s'", st.wait_message);
  }
  if (!strstr(st.destroy_message, "mpcf_task_destroy: called from the task's own callback")) {
    fail_msg("destroy message: '%s'", st.destroy_message);
  }
  /* A cdist stream task likewise. */
  memset(&st, 0, sizeof st);
  atomic_store(&st.task, NULL);
  st.inner = X;
  st.o = o;
  task = NULL;
  assert_int_equal(mpcf_cdist_stream_start(X, X, MPCF_METRIC_LP_DISTANCE, 1.0, own_block, &st, o, &task),
                   MPCF_OK);
  atomic_store(&st.task, task);
  assert_int_equal(mpcf_task_wait(task, -1), MPCF_OK);
  mpcf_task_destroy(task);
  assert_int_equal(st.poll, MPCF_ERROR_INVALID_ARGUMENT);
  assert_int_equal(st.wait_forever, MPCF_ERROR_INVALID_ARGUMENT);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  pcf_set_free(&xs);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "cuda") == 0) {
    if (mpcf_cuda_device_count() < 1) {
      printf("no CUDA device: skipped\n");
      return 77;
    }
    g_backend = MPCF_BACKEND_CUDA;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_nested_stream_keeps_outer_values),
      cmocka_unit_test(test_matvec_takes_V_at_start),
      cmocka_unit_test(test_wait_and_destroy_in_own_callback),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
