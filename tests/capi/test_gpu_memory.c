/* The GPU memory kept between computations (mpcf_cuda_cached_bytes,
 * mpcf_cuda_set_cache_limit, mpcf_cuda_cache_limit,
 * mpcf_cuda_release_memory): the limit a process starts with (from
 * MPCF_CUDA_CACHE_BYTES: run as `test_gpu_memory` with it set to 12345 by
 * main, and as `test_gpu_memory bad-env` with an unusable value), the
 * errors, and with a CUDA device: a computation leaves at most the limit
 * behind, a repeated one reuses it (and the collection's copy on the GPU)
 * and gives the same bits as one on fresh memory, another collection of the
 * same sizes gets its own data, lowering the limit or releasing frees it. */
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

static int bad_env = 0;

/* Runs first: nothing has read the environment variable before. */
static void test_initial_limit_from_environment(void** s) {
  (void)s;
  uint64_t limit = 0;
  assert_int_equal(mpcf_cuda_cache_limit(&limit), MPCF_OK);
  /* bad-env: "12x" is not a byte count, so the documented 1 GiB holds. */
  assert_true(limit == (bad_env ? (uint64_t)1 << 30 : 12345u));
}

static void test_limit_and_errors(void** s) {
  (void)s;
  uint64_t limit = 7;
  assert_int_equal(mpcf_cuda_set_cache_limit(0), MPCF_OK);
  assert_int_equal(mpcf_cuda_cache_limit(&limit), MPCF_OK);
  assert_true(limit == 0);
  assert_int_equal(mpcf_cuda_set_cache_limit((uint64_t)1 << 40), MPCF_OK);
  assert_int_equal(mpcf_cuda_cache_limit(&limit), MPCF_OK);
  assert_true(limit == (uint64_t)1 << 40);
  expect_error(mpcf_cuda_cache_limit(NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");

  uint64_t bytes = 99;
  expect_error(mpcf_cuda_cached_bytes(0, NULL), MPCF_ERROR_INVALID_ARGUMENT, "'out'");
  expect_error(mpcf_cuda_cached_bytes(-1, &bytes), MPCF_ERROR_INVALID_ARGUMENT,
               "device id -1 is negative");
  const int devices = mpcf_cuda_device_count();
  expect_error(mpcf_cuda_cached_bytes(devices, &bytes), MPCF_ERROR_CUDA_UNAVAILABLE,
               mpcf_has_cuda() && devices > 0 ? "does not exist" : "CUDA not available");
  assert_true(bytes == 99); /* untouched on failure */
  assert_int_equal(mpcf_cuda_release_memory(), MPCF_OK);
  if (devices > 0) {
    assert_int_equal(mpcf_cuda_cached_bytes(0, &bytes), MPCF_OK);
    assert_true(bytes == 0);
  }
}

/* n functions of m breakpoints, random steps and values (a fixed
 * generator, so runs compare). */
static mpcf_pcfs* random_pcfs(uint64_t n, uint64_t m, uint32_t seed) {
  uint64_t* off = malloc((n + 1) * sizeof *off);
  float* t = malloc(n * m * sizeof *t);
  float* v = malloc(n * m * sizeof *v);
  assert_non_null(off);
  assert_non_null(t);
  assert_non_null(v);
  uint32_t x = seed;
  for (uint64_t i = 0; i <= n; ++i) off[i] = i * m;
  for (uint64_t i = 0; i < n; ++i) {
    float at = 0.0f;
    for (uint64_t k = 0; k < m; ++k) {
      x = x * 1664525u + 1013904223u;
      t[i * m + k] = at;
      v[i * m + k] = k + 1 == m ? 0.0f : (float)(x >> 8) / (float)(1u << 24);
      at += 0.25f + (float)(x & 0xff) / 256.0f;
    }
  }
  mpcf_pcfs* h = NULL;
  assert_int_equal(mpcf_pcfs_create(MPCF_FLOAT32, n, off, t, v, &h), MPCF_OK);
  free(off);
  free(t);
  free(v);
  return h;
}

static void test_kept_between_computations(void** s) {
  (void)s;
  if (mpcf_cuda_device_count() < 1) skip();
  const uint64_t limit = (uint64_t)1 << 30;
  assert_int_equal(mpcf_cuda_set_cache_limit(limit), MPCF_OK);
  assert_int_equal(mpcf_cuda_release_memory(), MPCF_OK);
  mpcf_options* o = NULL;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, MPCF_BACKEND_CUDA), MPCF_OK);
  const int dev = 0;
  assert_int_equal(mpcf_options_set_devices(o, 1, &dev), MPCF_OK);

  const uint64_t n = 700, pairs = n * (n - 1) / 2;
  mpcf_pcfs* X = random_pcfs(n, 40, 1);
  mpcf_pcfs* Y = random_pcfs(n / 2, 90, 2);
  float* fresh = malloc(pairs * sizeof *fresh);
  float* reused = malloc(pairs * sizeof *reused);
  assert_non_null(fresh);
  assert_non_null(reused);
  /* On memory no computation of this process has used through the cache. */
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, fresh, pairs, o), MPCF_OK);
  uint64_t kept = 0;
  assert_int_equal(mpcf_cuda_cached_bytes(0, &kept), MPCF_OK);
  printf("kept after pdist: %llu bytes\n", (unsigned long long)kept);
  assert_true(kept > 0 && kept <= limit);

  /* Other computations leave their values in the blocks the next one
   * takes; the kept memory stays within the limit. */
  const uint64_t ny = n / 2, k = 5;
  float* V = malloc(ny * 3 * sizeof *V);
  float* mv = malloc(ny * 3 * sizeof *mv);
  float* dist = malloc(ny * k * sizeof *dist);
  int64_t* idx = malloc(ny * k * sizeof *idx);
  assert_non_null(V);
  assert_non_null(mv);
  assert_non_null(dist);
  assert_non_null(idx);
  for (uint64_t i = 0; i < ny * 3; ++i) V[i] = (float)((i * 7) % 11) - 5.0f;
  assert_int_equal(mpcf_kernel_matvec(Y, NULL, MPCF_KERNEL_GAUSSIAN, 1.0, 2.0, V, ny * 3, 3, mv,
                                      ny * 3, o),
                   MPCF_OK);
  assert_int_equal(mpcf_knn(Y, NULL, 1.0, k, dist, idx, ny * k, o), MPCF_OK);
  assert_int_equal(mpcf_cuda_cached_bytes(0, &kept), MPCF_OK);
  assert_true(kept > 0 && kept <= limit);

  /* The same pdist on reused memory: the same bits. */
  for (uint64_t i = 0; i < pairs; ++i) reused[i] = NAN;
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, reused, pairs, o), MPCF_OK);
  assert_memory_equal(fresh, reused, pairs * sizeof *fresh);
  uint64_t again = 0;
  assert_int_equal(mpcf_cuda_cached_bytes(0, &again), MPCF_OK);
  assert_true(again > 0 && again <= limit);

  /* A collection of the same sizes (other values) does not take X's kept
   * copy: its pdist on reused memory is its pdist on fresh memory. */
  mpcf_pcfs* X2 = random_pcfs(n, 40, 3);
  float* fresh2 = malloc(pairs * sizeof *fresh2);
  assert_non_null(fresh2);
  assert_int_equal(mpcf_cuda_release_memory(), MPCF_OK);
  assert_int_equal(mpcf_pdist(X2, 1.0, MPCF_LAYOUT_CONDENSED, fresh2, pairs, o), MPCF_OK);
  assert_int_equal(mpcf_cuda_release_memory(), MPCF_OK);
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, reused, pairs, o), MPCF_OK);
  assert_memory_equal(fresh, reused, pairs * sizeof *fresh);
  assert_int_equal(mpcf_pdist(X2, 1.0, MPCF_LAYOUT_CONDENSED, reused, pairs, o), MPCF_OK);
  assert_memory_equal(fresh2, reused, pairs * sizeof *fresh2);
  assert_true(memcmp(fresh, fresh2, pairs * sizeof *fresh) != 0);
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, reused, pairs, o), MPCF_OK);
  assert_memory_equal(fresh, reused, pairs * sizeof *fresh);
  free(fresh2);
  mpcf_pcfs_destroy(X2);

  /* A lower limit frees the excess now, and later computations keep no
   * more than it. */
  const uint64_t small = (uint64_t)1 << 16;
  assert_int_equal(mpcf_cuda_set_cache_limit(small), MPCF_OK);
  assert_int_equal(mpcf_cuda_cached_bytes(0, &kept), MPCF_OK);
  assert_true(kept <= small);
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, reused, pairs, o), MPCF_OK);
  assert_memory_equal(fresh, reused, pairs * sizeof *fresh);
  assert_int_equal(mpcf_cuda_cached_bytes(0, &kept), MPCF_OK);
  assert_true(kept <= small);
  assert_int_equal(mpcf_cuda_set_cache_limit(0), MPCF_OK);
  assert_int_equal(mpcf_cuda_cached_bytes(0, &kept), MPCF_OK);
  assert_true(kept == 0);

  /* Release frees everything. */
  assert_int_equal(mpcf_cuda_set_cache_limit(limit), MPCF_OK);
  assert_int_equal(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, reused, pairs, o), MPCF_OK);
  assert_int_equal(mpcf_cuda_cached_bytes(0, &kept), MPCF_OK);
  assert_true(kept > 0);
  assert_int_equal(mpcf_cuda_release_memory(), MPCF_OK);
  assert_int_equal(mpcf_cuda_cached_bytes(0, &kept), MPCF_OK);
  assert_true(kept == 0);

  free(V);
  free(mv);
  free(dist);
  free(idx);
  free(fresh);
  free(reused);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
  mpcf_options_destroy(o);
}

int main(int argc, char** argv) {
  bad_env = argc > 1 && strcmp(argv[1], "bad-env") == 0;
  /* Before the library's first look at it. */
  setenv("MPCF_CUDA_CACHE_BYTES", bad_env ? "12x" : "12345", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_initial_limit_from_environment),
      cmocka_unit_test(test_limit_and_errors),
      cmocka_unit_test(test_kept_between_computations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
