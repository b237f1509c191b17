/* Test support: random PCFs in CSR form and an independent brute-force
 * reference. The reference evaluates both functions on every piece of the
 * union of their breakpoints (and the window ends) by searching for the value
 * at the piece's left end, and integrates in long double. It shares no code
 * with the library. */
#ifndef MPCF_TESTS_REFERENCE_H
#define MPCF_TESTS_REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum ref_op { REF_L1, REF_LP, REF_LINF, REF_KERNEL };

typedef struct {
  size_t n;
  uint64_t* offsets; /* n + 1 */
  double* t;         /* offsets[n], values exactly representable in float when f32 */
  double* v;
  float* t32;
  float* v32;
} pcf_set;

static uint64_t ref_rng_state = 88172645463325252ull;
static inline void ref_seed(uint64_t s) { ref_rng_state = s ? s : 1; }
static inline uint64_t ref_next(void) {
  ref_rng_state ^= ref_rng_state << 13;
  ref_rng_state ^= ref_rng_state >> 7;
  ref_rng_state ^= ref_rng_state << 17;
  return ref_rng_state;
}
/* Uniform in [0, 1). */
static inline double ref_uniform(void) { return (double)(ref_next() >> 11) / 9007199254740992.0; }

/* n random PCFs with 1..max_m breakpoints. Times start at t0 in [-2, 2) with
 * gaps in [0.05, 1); values in [-5, 5) (or [0, 10) when non_negative), the last
 * value 0 unless nonzero_tail. Every number is rounded to float so the same
 * data serves float32 and float64. */
static inline pcf_set pcf_set_random(size_t n, size_t max_m, int nonzero_tail, int non_negative) {
  pcf_set s;
  s.n = n;
  s.offsets = (uint64_t*)malloc((n + 1) * sizeof(uint64_t));
  s.offsets[0] = 0;
  for (size_t i = 0; i < n; ++i) s.offsets[i + 1] = s.offsets[i] + 1 + ref_next() % max_m;
  const size_t total = (size_t)s.offsets[n];
  s.t = (double*)malloc((total + 1) * sizeof(double));
  s.v = (double*)malloc((total + 1) * sizeof(double));
  s.t32 = (float*)malloc((total + 1) * sizeof(float));
  s.v32 = (float*)malloc((total + 1) * sizeof(float));
  for (size_t i = 0; i < n; ++i) {
    float t = (float)(ref_uniform() * 4.0 - 2.0);
    for (uint64_t k = s.offsets[i]; k < s.offsets[i + 1]; ++k) {
      float v = non_negative ? (float)(ref_uniform() * 10.0) : (float)(ref_uniform() * 10.0 - 5.0);
      if (k + 1 == s.offsets[i + 1] && !nonzero_tail) v = 0.0f;
      s.t32[k] = t;
      s.v32[k] = v;
      s.t[k] = t;
      s.v[k] = v;
      t = t + (float)(0.05 + ref_uniform() * 0.95);
    }
  }
  return s;
}

static inline void pcf_set_free(pcf_set* s) {
  free(s->offsets);
  free(s->t);
  free(s->v);
  free(s->t32);
  free(s->v32);
}

/* Value of function i of s at time x (0 before the first breakpoint). */
static inline long double ref_eval(const pcf_set* s, size_t i, long double x) {
  long double val = 0.0L;
  for (uint64_t k = s->offsets[i]; k < s->offsets[i + 1]; ++k) {
    if ((long double)s->t[k] <= x) val = (long double)s->v[k];
  }
  return val;
}

static int ref_cmp(const void* a, const void* b) {
  const long double x = *(const long double*)a, y = *(const long double*)b;
  return x < y ? -1 : (x > y ? 1 : 0);
}

/* op(f_i of X, g_j of Y) over [a, b). Also returns in *scale the sum of the
 * absolute contributions (for tolerances). */
static inline long double ref_value(enum ref_op op, long double p, const pcf_set* X, size_t i,
                                    const pcf_set* Y, size_t j, long double a, long double b,
                                    long double* scale) {
  const size_t mf = (size_t)(X->offsets[i + 1] - X->offsets[i]);
  const size_t mg = (size_t)(Y->offsets[j + 1] - Y->offsets[j]);
  long double* cuts = (long double*)malloc((mf + mg + 2) * sizeof(long double));
  size_t nc = 0;
  for (size_t k = 0; k < mf; ++k) cuts[nc++] = X->t[X->offsets[i] + k];
  for (size_t k = 0; k < mg; ++k) cuts[nc++] = Y->t[Y->offsets[j] + k];
  if (isfinite(a)) cuts[nc++] = a;
  if (isfinite(b)) cuts[nc++] = b;
  qsort(cuts, nc, sizeof(long double), ref_cmp);
  long double acc = 0.0L, sc = 0.0L;
  /* Pieces: (-inf, cuts[0]), [cuts[k], cuts[k+1]), [cuts[nc-1], +inf). */
  for (size_t k = 0; k <= nc; ++k) {
    long double l = k == 0 ? -INFINITY : cuts[k - 1];
    long double r = k == nc ? INFINITY : cuts[k];
    if (l < a) l = a;
    if (r > b) r = b;
    if (!(r > l)) continue;
    /* The value on the piece: at its left end, or anywhere inside for (-inf, .). */
    const long double probe = isinf(l) ? r - 1.0L : l;
    const long double fv = ref_eval(X, i, probe), gv = ref_eval(Y, j, probe);
    long double x;
    switch (op) {
      case REF_KERNEL: x = fv * gv; break;
      case REF_LP: x = powl(fabsl(fv - gv), p); break;
      default: x = fabsl(fv - gv); break;
    }
    if (x == 0.0L) continue;
    if (op == REF_LINF) {
      if (x > acc) acc = x;
      sc = acc;
      continue;
    }
    acc += (r - l) * x;
    sc += (r - l) * fabsl(x);
  }
  free(cuts);
  if (op == REF_LP) {
    acc = powl(acc, 1.0L / p);
    sc = acc;
  }
  if (scale) *scale = sc;
  return acc;
}

/* |got - want| within rel * scale (exact equality for infinities). */
static inline int ref_close(double got, long double want, long double scale, double rel) {
  if (isinf(want) || isinf(got)) return (long double)got == want;
  if (isnan(got)) return 0;
  long double tol = rel * (scale > 1e-30L ? scale : 1e-30L);
  return fabsl((long double)got - want) <= tol;
}

#endif
