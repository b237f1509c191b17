/* Test of the libmpcf package: a C program built against the installed
 * header and library (through pkg-config and through the CMake package).
 * EXPECT_VERSION ("0.1.0") and EXPECT_CUDA (1 for a CUDA build, 0 for a CPU
 * build) come from the recipe. The expected distances are worked out by hand
 * in the comments. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mpcf/mpcf.h>

#ifndef EXPECT_VERSION
#error "compile with -DEXPECT_VERSION='\"x.y.z\"'"
#endif
#ifndef EXPECT_CUDA
#error "compile with -DEXPECT_CUDA=0 or 1"
#endif

static int failures = 0;

static void check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "libmpcf_smoke: FAILED: %s\n", what);
    ++failures;
  }
}

static int ok_status(mpcf_status s, const char* call) {
  if (s != MPCF_OK) {
    fprintf(stderr, "libmpcf_smoke: %s returned %s: %s\n", call, mpcf_status_name(s),
            mpcf_last_error_message());
    ++failures;
    return 0;
  }
  return 1;
}

int main(void) {
  printf("libmpcf %s (header %d): %s\n", mpcf_version_string(), MPCF_VERSION, mpcf_build_info());
  check(strcmp(mpcf_version_string(), EXPECT_VERSION) == 0, "library version string");
  check(mpcf_version() == MPCF_VERSION, "library version matches the installed header");
  check(mpcf_has_cuda() == EXPECT_CUDA, "CUDA backend present exactly in the CUDA variant");

  /* f = 3 on [0,1); g = 1 on [0,2); h = 10 on [0,2), 5 on [2,3); all 0 after.
   * L1: |f-g| = 2 on [0,1) + 1 on [1,2) = 3
   *     |f-h| = 7 + 10 + 5 = 22
   *     |g-h| = 9 * 2 + 5 = 23 */
  const uint64_t offsets[] = {0, 2, 4, 7};
  const double times[] = {0, 1, 0, 2, 0, 2, 3};
  const double values[] = {3, 0, 1, 0, 10, 5, 0};
  mpcf_pcfs* X = NULL;
  if (ok_status(mpcf_pcfs_create(MPCF_FLOAT64, 3, offsets, times, values, &X), "mpcf_pcfs_create")) {
    double d[3] = {-1, -1, -1};
    if (ok_status(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, d, 3, NULL), "mpcf_pdist")) {
      printf("pdist L1 = [%g, %g, %g]\n", d[0], d[1], d[2]);
      check(d[0] == 3.0 && d[1] == 22.0 && d[2] == 23.0, "pdist L1 == [3, 22, 23]");
    }
  }
  mpcf_pcfs_destroy(X);
  X = NULL;

  /* Kernel of a = 4 on [0,3) and b = 2 on [0,3): <a,a> = 48, <a,b> = 24,
   * <b,b> = 12. */
  const uint64_t koff[] = {0, 2, 4};
  const float kt[] = {0, 3, 0, 3};
  const float kv[] = {4, 0, 2, 0};
  mpcf_pcfs* K = NULL;
  if (ok_status(mpcf_pcfs_create(MPCF_FLOAT32, 2, koff, kt, kv, &K), "mpcf_pcfs_create (float32)")) {
    float k[4] = {-1, -1, -1, -1};
    if (ok_status(mpcf_l2_kernel(K, MPCF_LAYOUT_DENSE, k, 4, NULL), "mpcf_l2_kernel")) {
      check(k[0] == 48.0f && k[1] == 24.0f && k[2] == 24.0f && k[3] == 12.0f,
            "l2_kernel == [[48, 24], [24, 12]]");
    }
  }
  mpcf_pcfs_destroy(K);

  /* The CUDA backend: the same distances on a GPU when the build has CUDA
   * and a device is present; a clear refusal in a CPU build. */
  mpcf_options* opts = NULL;
  if (ok_status(mpcf_options_create(&opts), "mpcf_options_create") &&
      ok_status(mpcf_options_set_backend(opts, MPCF_BACKEND_CUDA), "mpcf_options_set_backend") &&
      ok_status(mpcf_pcfs_create(MPCF_FLOAT64, 3, offsets, times, values, &X), "mpcf_pcfs_create")) {
    double d[3] = {-1, -1, -1};
    mpcf_status cs = mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, d, 3, opts);
    if (!EXPECT_CUDA) {
      check(cs == MPCF_ERROR_CUDA_UNAVAILABLE, "a CPU build refuses the CUDA backend");
    } else if (mpcf_cuda_device_count() > 0) {
      if (ok_status(cs, "mpcf_pdist on CUDA")) {
        printf("pdist L1 on CUDA = [%g, %g, %g]\n", d[0], d[1], d[2]);
        check(d[0] == 3.0 && d[1] == 22.0 && d[2] == 23.0, "pdist L1 on CUDA == [3, 22, 23]");
      }
    } else {
      printf("no CUDA device here: the CUDA backend is not exercised\n");
      check(cs == MPCF_ERROR_CUDA_UNAVAILABLE, "without a device the CUDA backend is refused");
    }
  }
  mpcf_pcfs_destroy(X);
  X = NULL;
  mpcf_options_destroy(opts);

  /* A bad input is refused with a message, not a crash. */
  const double bad_t[] = {1, 0};
  const double bad_v[] = {1, 0};
  const uint64_t bad_off[] = {0, 2};
  mpcf_pcfs* B = NULL;
  mpcf_status s = mpcf_pcfs_create(MPCF_FLOAT64, 1, bad_off, bad_t, bad_v, &B);
  check(s == MPCF_ERROR_INVALID_PCF && B == NULL, "decreasing times rejected with MPCF_ERROR_INVALID_PCF");
  check(strlen(mpcf_last_error_message()) > 0, "an error message after a failure");

  if (failures) {
    fprintf(stderr, "libmpcf_smoke: %d check(s) failed\n", failures);
    return 1;
  }
  printf("libmpcf_smoke: all checks passed\n");
  return 0;
}
