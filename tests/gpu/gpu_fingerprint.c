/* Prints an FNV-1a 64 fingerprint of every GPU result kind on fixed
 * pseudo-random input: pdist (p = 1, 2, 3, inf), l2_kernel, cdist, knn and
 * the three mat-vec kernels, float32 and float64, with the automatic blocks
 * and with small ones. Built against the public header only, so the same
 * program runs against two builds of libmpcf (LD_LIBRARY_PATH) and a diff
 * of the two outputs shows whether a change kept the bits.
 *
 *   gpu_fingerprint [n] [devices] [kind]   (defaults 3000, all, pcf)
 *
 * kind: pcf (single PCFs), plf (single PLFs: the same breakpoints read as
 * piecewise linear), pcf2 (objects of 2 PCFs), plf3 (objects of 3 PLFs);
 * n counts objects. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpcf/mpcf.h"

static uint64_t rng = 88172645463325252ull;
static double next_unit(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

static uint64_t fnv(const void* p, size_t bytes) {
  const unsigned char* c = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t k = 0; k < bytes; ++k) {
    h ^= c[k];
    h *= 0x100000001b3ull;
  }
  return h;
}

static void check(mpcf_status s, const char* what) {
  if (s != MPCF_OK) {
    fprintf(stderr, "%s: %s: %s\n", what, mpcf_status_name(s), mpcf_last_error_message());
    exit(1);
  }
}

/* n functions, m uniform in [10, 200), t_0 = 0, gaps (0.05, 1), values (0, 10),
 * last value 0 (the benchmark's input). */
static mpcf_pcfs* make(mpcf_dtype dtype, uint64_t n, int linear) {
  uint64_t* off = malloc((n + 1) * sizeof *off);
  off[0] = 0;
  for (uint64_t i = 0; i < n; ++i) off[i + 1] = off[i] + 10 + (uint64_t)(next_unit() * 190);
  const uint64_t total = off[n];
  double* t = malloc(total * sizeof *t);
  double* v = malloc(total * sizeof *v);
  for (uint64_t i = 0; i < n; ++i) {
    double at = 0;
    for (uint64_t k = off[i]; k < off[i + 1]; ++k) {
      t[k] = at;
      v[k] = k + 1 == off[i + 1] ? 0 : next_unit() * 10;
      at += 0.05 + 0.95 * next_unit();
    }
  }
  mpcf_pcfs* h = NULL;
  if (dtype == MPCF_FLOAT32) {
    float* t32 = malloc(total * sizeof *t32);
    float* v32 = malloc(total * sizeof *v32);
    for (uint64_t k = 0; k < total; ++k) {
      t32[k] = (float)t[k];
      v32[k] = (float)v[k];
    }
    check((linear ? mpcf_plfs_create : mpcf_pcfs_create)(dtype, n, off, t32, v32, &h), "create");
    free(t32);
    free(v32);
  } else {
    check((linear ? mpcf_plfs_create : mpcf_pcfs_create)(dtype, n, off, t, v, &h), "create");
  }
  free(off);
  free(t);
  free(v);
  return h;
}

/* n objects of K functions (K > 1: a component axis). */
static mpcf_pcfs* make_objects(mpcf_dtype dtype, uint64_t n, int linear, uint64_t K) {
  mpcf_pcfs* h = make(dtype, n * K, linear);
  if (K > 1) {
    const uint64_t shape[2] = {n, K};
    check(mpcf_pcfs_reshape(h, 2, shape), "reshape");
    check(mpcf_pcfs_set_component_axis(h, 1), "component axis");
  }
  return h;
}

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 3000;
  const int ndev = argc > 2 ? atoi(argv[2]) : 0;
  const char* kind = argc > 3 ? argv[3] : "pcf";
  int linear = 0;
  uint64_t K = 1;
  if (strcmp(kind, "plf") == 0) {
    linear = 1;
  } else if (strcmp(kind, "pcf2") == 0) {
    K = 2;
  } else if (strcmp(kind, "plf3") == 0) {
    linear = 1;
    K = 3;
  } else if (strcmp(kind, "pcf") != 0) {
    fprintf(stderr, "kind: pcf, plf, pcf2 or plf3, not '%s'\n", kind);
    return 2;
  }
  if (mpcf_cuda_device_count() < 1) {
    printf("no CUDA device\n");
    return 77;
  }
  for (int dt = 0; dt < 2; ++dt) {
    const mpcf_dtype dtype = dt ? MPCF_FLOAT64 : MPCF_FLOAT32;
    const size_t esz = dt ? 8 : 4;
    char dn[32];
    snprintf(dn, sizeof dn, "%s%s%s", dt ? "f64" : "f32", K > 1 || linear ? " " : "",
             K > 1 || linear ? kind : "");
    mpcf_pcfs* X = make_objects(dtype, n, linear, K);
    mpcf_pcfs* Y = make_objects(dtype, n / 3, linear, K);
    for (int small = 0; small < 2; ++small) {
      mpcf_options* o = NULL;
      check(mpcf_options_create(&o), "options");
      check(mpcf_options_set_backend(o, MPCF_BACKEND_CUDA), "backend");
      if (ndev > 0) {
        int ids[8];
        for (int d = 0; d < ndev && d < 8; ++d) ids[d] = d;
        check(mpcf_options_set_devices(o, (size_t)ndev, ids), "devices");
      }
      if (small) check(mpcf_options_set_block_hints(o, 0, 0, 512 * 384), "hints");
      const char* bn = small ? "small" : "auto";
      uint64_t size = n * n;
      void* out = malloc(size * esz);
      const double ps[4] = {1, 2, 3, INFINITY};
      for (int q = 0; q < 4; ++q) {
        check(mpcf_pdist(X, ps[q], MPCF_LAYOUT_CONDENSED, out, size, o), "pdist");
        printf("%s %s pdist p=%g %016llx\n", dn, bn, ps[q], (unsigned long long)fnv(out, n * (n - 1) / 2 * esz));
      }
      check(mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, out, size, o), "l2_kernel");
      printf("%s %s l2_kernel %016llx\n", dn, bn, (unsigned long long)fnv(out, n * (n + 1) / 2 * esz));
      check(mpcf_cdist(X, Y, MPCF_METRIC_LP_DISTANCE, 1, out, size, o), "cdist");
      printf("%s %s cdist %016llx\n", dn, bn, (unsigned long long)fnv(out, n * (n / 3) * esz));
      const uint64_t k = 10;
      void* kd = malloc(n * k * esz);
      int64_t* ki = malloc(n * k * sizeof *ki);
      check(mpcf_knn(X, NULL, 1, k, kd, ki, n * k, o), "knn");
      printf("%s %s knn %016llx %016llx\n", dn, bn, (unsigned long long)fnv(kd, n * k * esz),
             (unsigned long long)fnv(ki, n * k * sizeof *ki));
      const uint64_t r = 3;
      void* V = malloc(n * r * esz);
      for (uint64_t e = 0; e < n * r; ++e) {
        const double x = next_unit() - 0.5;
        if (dt) {
          ((double*)V)[e] = x;
        } else {
          ((float*)V)[e] = (float)x;
        }
      }
      const mpcf_kernel kernels[3] = {MPCF_KERNEL_L2, MPCF_KERNEL_GAUSSIAN, MPCF_KERNEL_LAPLACIAN};
      for (int kk = 0; kk < 3; ++kk) {
        check(mpcf_kernel_matvec(X, NULL, kernels[kk], 1, 50, V, n * r, r, out, size, o), "matvec");
        printf("%s %s matvec kernel=%d %016llx\n", dn, bn, kk, (unsigned long long)fnv(out, n * r * esz));
      }
      free(V);
      free(kd);
      free(ki);
      free(out);
      mpcf_options_destroy(o);
    }
    mpcf_pcfs_destroy(X);
    mpcf_pcfs_destroy(Y);
  }
  return 0;
}
