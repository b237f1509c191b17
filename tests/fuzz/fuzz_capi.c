/* fuzz_capi: the C API of libmpcf, driven by fuzz input, checked against the
 * promises of mpcf.h.
 *
 * An input is a little program: a sequence of operations, each an opcode
 * byte followed by its arguments (the format is in tests/fuzz/README.md, and
 * tests/fuzz/make_corpus.py writes it). The program works on four collection
 * slots and one options handle, and every call it makes is checked:
 *
 *  - the status is the one the header documents for the arguments given (a
 *    model of the header's rules decides which statuses are allowed);
 *  - a failing call returns a status and a non-empty error message and leaves
 *    every output untouched (buffers are filled with a canary first);
 *  - a successful call writes every element it should and nothing beyond;
 *    every value equals the single-pair value of the same pair bit for bit
 *    (whatever the layout, thread count or block hints), and that value
 *    agrees with a long double reference of the integral (d(f, f) = 0 and,
 *    more generally, a zero integrand giving exactly 0); a distance is never
 *    NaN or negative; a finite window with moderate data gives a finite value;
 *  - a task that ends in any status but MPCF_OK leaves NaN in every element
 *    it was to write; progress never exceeds its total.
 *
 * Adding an operation (the reductions: mpcf_knn*, mpcf_kernel_matvec*, the
 * block stream) is one more opcode in `enum opcode` and one more case in
 * run_op(). Opcodes and the value tables are part of the corpus format: add
 * new codes, never renumber old ones. */
#define _POSIX_C_SOURCE 200809L

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_support.h"
#include "mpcf/mpcf.h"

enum {
  MAX_N = 8,               /* functions per collection */
  MAX_M = 16,              /* breakpoints per function */
  MAX_PTS = MAX_N * MAX_M, /* breakpoints per collection */
  N_SLOTS = 4,             /* collections an input works on */
  MAX_OPS = 24,            /* operations per input */
  MAX_NDIM = 34            /* reshape tries ndim up to 34 (valid: 1..32) */
};

/* ------------------------------------------------------------------ */
/* Known defects                                                        */
/* ------------------------------------------------------------------ */

/* Defects the library has today. An input that hits one skips the check the
 * defect breaks, so that fuzzing goes on finding new ones. Strict mode (the
 * regressions replay) ignores this table. When a fix lands, delete its entry
 * and move its reproducers from corpus/capi/regressions/ to corpus/capi/.
 * (Every defect found so far is fixed on main or is now a range rule that
 * mpcf.h states and the checks below follow: issue 15 A-E; R, the reshape
 * of an empty collection to a shape with a 0; N, NaN from two overflowing
 * |f - g|; I, the mat-vec's internal bound error; M and G, the mat-vec's
 * range and error, which mpcf.h now states in terms of its bound B; W,
 * widths computed in the dtype; E, float64 partial sums past DBL_MAX; U,
 * float64 products f g that round to 0. Their reproducers are the fixed-*
 * and limit-* inputs of the corpus; so are those of S, T, V and X, found by
 * fuzzing the TDA entry points and the mat-vec, and of P (a PLF's mat-vec
 * bound from piecewise constant norms), L (a Betti-curve bar whose length
 * overflows double refused) and Q (silhouettes of a subnormal longest bar
 * refused), found by fuzzing the PLF entry points, fixed since.) */
typedef enum known_defect {
  KNOWN_NONE,
  KNOWN_COUNT
} known_defect;

/* An input that hits known defect k is tested with fz_known(k, cond)
 * (fuzz_support.h). */

/* ------------------------------------------------------------------ */
/* State                                                                */
/* ------------------------------------------------------------------ */

typedef struct slot {
  mpcf_pcfs* h; /* NULL: empty slot (operations then pass a NULL handle) */
  mpcf_dtype dtype;
  uint64_t n;
  uint64_t off[MAX_N + 1];
  double t[MAX_PTS], v[MAX_PTS]; /* the stored values, exact in the dtype */
  int moderate;                  /* every |t|, |v| <= 1e6 */
  size_t ndim;
  uint64_t shape[32];
  int plf;    /* piecewise linear functions (mpcf_plfs_create*, landscapes, silhouettes) */
  uint64_t K; /* functions per object: the last dimension with a component axis, else 1 */
  int caxis;  /* mpcf_pcfs_set_component_axis is on (K may be 1) */
} slot;

/* Objects every computation runs over (mpcf_pcfs_set_component_axis). */
static uint64_t objs(const slot* s) { return s->n / s->K; }

typedef struct opts_model {
  mpcf_options* h;
  int backend;
  double a, b; /* window */
  uint64_t split, min_side, max_elements;
} opts_model;

typedef struct state {
  slot s[N_SLOTS];
  opts_model o;
  int has_devices; /* a CUDA device is present: backend AUTO/CUDA become CPU */
} state;

#define ST(s) (1u << (unsigned)(s))
#define ALL_STATUSES 0x7ffu

/* ------------------------------------------------------------------ */
/* Decoding values                                                      */
/* ------------------------------------------------------------------ */

/* 128 special values; the table is part of the corpus format. */
static double special_value(fz_reader* r, unsigned k) {
  switch (k) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return 1.0;
    case 3: return -1.0;
    case 4: return 1e6;
    case 5: return -1e6;
    case 6: return 1e-6;
    case 7: return 0.1;
    case 8: return 1e30;
    case 9: return -1e30;
    case 10: return 1e38;
    case 11: return -1e38;
    case 12: return FLT_MAX;
    case 13: return -FLT_MAX;
    case 14: return 1e39;
    case 15: return -1e39;
    case 16: return 1e300;
    case 17: return -1e300;
    case 18: return DBL_MAX;
    case 19: return -DBL_MAX;
    case 20: return 4.9406564584124654e-324; /* smallest subnormal double */
    case 21: return 1.40129846432481707e-45;  /* smallest subnormal float */
    case 22: return FLT_MIN;
    case 23: return DBL_MIN;
    case 24: return 1e-40;
    case 25: return 1e-300;
    case 26: return NAN;
    case 27: return INFINITY;
    case 28: return -INFINITY;
    case 29: return fz_raw_f64(r);
    case 30: return (double)fz_raw_f32(r);
    case 31: return 1e154;
    case 32: return 1e19;
    case 33: return 0.5;
    case 34: return 2.0;
    case 35: return 10.0;
    case 36: return 1e-20;
    case 37: return 1e20;
    case 38: return 3e38;
    case 39: return 1.0 + DBL_EPSILON;
    case 40: return 1e-10;
    case 41: return 1e10;
    case 42: return 65504.0;
    case 43: return 1e-45;
    case 44: return 1e15;
    case 45: return -1e15;
    case 46: return 1e-3;
    case 47: return 123456.789;
    default: return ((double)k - 88.0) * 1000.5; /* 48..127: moderate */
  }
}

/* A value: codes 0..127 are the quarters -16 .. 15.75, 128..255 specials. */
static double value_code(fz_reader* r) {
  const unsigned c = fz_u8(r);
  if (c < 128) return ((double)c - 64.0) / 4.0;
  return special_value(r, c - 128);
}

/* An exponent p (32 specials, then 1 .. 28.875 in eighths). */
static double p_code(fz_reader* r) {
  const unsigned c = fz_u8(r);
  switch (c) {
    case 0: return 1.0;
    case 1: return 2.0;
    case 2: return INFINITY;
    case 3: return 1.5;
    case 4: return 3.0;
    case 5: return 0.5;
    case 6: return 0.999999;
    case 7: return NAN;
    case 8: return -INFINITY;
    case 9: return 0.0;
    case 10: return -1.0;
    case 11: return 1e39;
    case 12: return 1e300;
    case 13: return 40.0;
    case 14: return 400.0;
    case 15: return 2000.0;
    case 16: return 1.0 + DBL_EPSILON;
    case 17: return 1.0000001;
    case 18: return DBL_MAX;
    case 19: return 1e10;
    case 20: return fz_raw_f64(r);
    case 21: return 4.0;
    case 22: return 7.5;
    case 23: return 100.0;
    case 24: return 1e38;
    case 25: return FLT_MAX;
    case 26: return 1.0000000001;
    case 27: return -0.0;
    case 28: return 1e-300;
    case 29: return 64.0;
    case 30: return 10.0;
    case 31: return 2.5;
    default: return 1.0 + ((double)c - 32.0) / 8.0;
  }
}

/* A window end (16 codes). */
static double window_code(fz_reader* r) {
  switch (fz_u8(r) % 16) {
    case 0: return -INFINITY;
    case 1: return INFINITY;
    case 2: return 0.0;
    case 3: return 1.0;
    case 4: return -1.0;
    case 5: return 10.0;
    case 6: return 1e6;
    case 7: return -1e6;
    case 8: return NAN;
    case 9: return 1.0 + 1e-12;
    case 10: return 1e39;
    case 11: return -1e39;
    case 12: return 0.5;
    case 13: return 2.0;
    case 14: return value_code(r);
    default: return fz_raw_f64(r);
  }
}

/* A 64-bit size hint (16 codes). */
static uint64_t hint_code(fz_reader* r) {
  switch (fz_u8(r) % 16) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 2;
    case 3: return 3;
    case 4: return 4;
    case 5: return 7;
    case 6: return 16;
    case 7: return 64;
    case 8: return UINT64_C(1) << 20;
    case 9: return UINT64_C(1) << 32;
    case 10: return UINT64_C(1) << 62;
    case 11: return UINT64_MAX;
    case 12: return UINT64_MAX - 1;
    case 13: return UINT64_C(0xFFFFFFFE00000001); /* (2^32 - 1)^2 */
    case 14: return fz_uint(r, 8);
    default: return 5;
  }
}

/* An index into a collection: 0..8 mostly, sometimes far out of range. */
static uint64_t index_code(fz_reader* r) {
  const unsigned c = fz_u8(r);
  if (c < 240) return c % 9;
  switch (c) {
    case 240: return UINT64_MAX;
    case 241: return UINT64_C(1) << 32;
    case 242: return UINT64_C(1) << 63;
    default: return fz_uint(r, 8);
  }
}

/* The dtype's rounding of a double (overflow to +-inf is IEEE behaviour). */
static double in_dtype(mpcf_dtype dt, double x) { return dt == MPCF_FLOAT32 ? (double)(float)x : x; }

static double dtype_max(mpcf_dtype dt) { return dt == MPCF_FLOAT32 ? FLT_MAX : DBL_MAX; }
static double dtype_denorm_min(mpcf_dtype dt) {
  return dt == MPCF_FLOAT32 ? 1.40129846432481707e-45 : 4.9406564584124654e-324;
}

/* ------------------------------------------------------------------ */
/* Checks shared by every call                                          */
/* ------------------------------------------------------------------ */

static const char* status_list(unsigned mask, char* buf, size_t size) {
  buf[0] = '\0';
  for (int s = 0; s <= MPCF_RUNNING; ++s) {
    if (mask & ST(s)) {
      strncat(buf, mpcf_status_name((mpcf_status)s), size - strlen(buf) - 1);
      strncat(buf, " ", size - strlen(buf) - 1);
    }
  }
  return buf;
}

/* The detail of the last failure (mpcf_last_error_detail): reading it
 * succeeds and changes neither the message nor itself; its indices are
 * -1 or whole, a breakpoint only with a function (INVALID_PCF, and only
 * then), a bar only with a barcode (INVALID_ARGUMENT). */
static mpcf_error_detail last_detail(const char* call) {
  const char* before = mpcf_last_error_message();
  mpcf_error_detail d, again;
  memset(&d, 0xA5, sizeof d);
  d.struct_size = sizeof d;
  FZ_CHECK(mpcf_last_error_detail(&d) == MPCF_OK && d.struct_size == sizeof d,
           "after %s, mpcf_last_error_detail failed: %s", call, mpcf_last_error_message());
  FZ_CHECK(mpcf_last_error_message() == before, "after %s, mpcf_last_error_detail changed the message", call);
  again.struct_size = sizeof again;
  FZ_CHECK(mpcf_last_error_detail(&again) == MPCF_OK && memcmp(&d, &again, sizeof d) == 0,
           "after %s, a second mpcf_last_error_detail read another detail", call);
  FZ_CHECK(d.function_index >= -1 && d.breakpoint_index >= -1 && d.barcode_index >= -1 && d.bar_index >= -1,
           "after %s, an index of mpcf_last_error_detail is below -1", call);
  FZ_CHECK(d.breakpoint_index < 0 || d.function_index >= 0, "after %s, a breakpoint without a function", call);
  FZ_CHECK(d.bar_index < 0 || d.barcode_index >= 0, "after %s, a bar without a barcode", call);
  FZ_CHECK((d.function_index >= 0) == (d.status == MPCF_ERROR_INVALID_PCF),
           "after %s, detail status %s with function index %lld", call, mpcf_status_name(d.status),
           (long long)d.function_index);
  FZ_CHECK(d.barcode_index < 0 || d.status == MPCF_ERROR_INVALID_ARGUMENT,
           "after %s, detail status %s with barcode index %lld", call, mpcf_status_name(d.status),
           (long long)d.barcode_index);
  return d;
}

/* The status is one of `allowed`; a failure has a message (and a
 * consistent detail). */
static void check_status(const char* call, mpcf_status s, unsigned allowed) {
  char want[512];
  FZ_CHECK((int)s >= 0 && (int)s <= MPCF_RUNNING && (allowed & ST(s)), "%s returned %s; allowed: %s(message: %s)",
           call, mpcf_status_name(s), status_list(allowed, want, sizeof want), mpcf_last_error_message());
  if (s != MPCF_OK && s != MPCF_RUNNING) {
    const char* msg = mpcf_last_error_message();
    FZ_CHECK(msg != NULL, "%s failed with %s and mpcf_last_error_message() is NULL", call, mpcf_status_name(s));
    FZ_CHECK(msg[0] != '\0', "%s failed with %s and an empty error message", call, mpcf_status_name(s));
    last_detail(call);
  }
}

/* What the header's rules say a call may return: at least one of `errors`
 * must be reported (MPCF_OK is allowed only when there are none), and the
 * statuses in `also` are acceptable on top (cases the header leaves open). */
typedef struct expect {
  unsigned errors;
  unsigned also;
} expect;

static unsigned allowed_of(expect e) { return (e.errors ? e.errors : ST(MPCF_OK)) | e.also; }

#define CANARY 0xA5

static void* canary_buffer(size_t bytes) {
  unsigned char* b = malloc(bytes ? bytes : 1);
  if (b == NULL) abort();
  memset(b, CANARY, bytes ? bytes : 1);
  return b;
}

static int is_canary(const void* p, size_t bytes) {
  const unsigned char* b = p;
  for (size_t k = 0; k < bytes; ++k) {
    if (b[k] != CANARY) return 0;
  }
  return 1;
}

static double element_of(const void* buf, mpcf_dtype dt, uint64_t k) {
  if (dt == MPCF_FLOAT32) {
    float f;
    memcpy(&f, (const unsigned char*)buf + k * sizeof f, sizeof f);
    return (double)f;
  }
  double d;
  memcpy(&d, (const unsigned char*)buf + k * sizeof d, sizeof d);
  return d;
}

static int same_bits(double a, double b, mpcf_dtype dt) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (dt == MPCF_FLOAT32) {
    const float fa = (float)a, fb = (float)b;
    return memcmp(&fa, &fb, sizeof fa) == 0;
  }
  return memcmp(&a, &b, sizeof a) == 0;
}

/* MPCF_FUZZ_TRACE=1: print what the input does (to read a crash). */
static int tracing(void) {
  static int t = -1;
  if (t < 0) {
    const char* e = getenv("MPCF_FUZZ_TRACE");
    t = e != NULL && strcmp(e, "1") == 0;
  }
  return t;
}

/* ------------------------------------------------------------------ */
/* The reference: the integral in long double, from the stored values    */
/* ------------------------------------------------------------------ */

typedef enum op_kind { OPK_L1, OPK_LP, OPK_LINF, OPK_KERNEL } op_kind;

static op_kind distance_kind(double p) {
  if (p == 1.0) return OPK_L1;
  if (p == INFINITY) return OPK_LINF;
  return OPK_LP;
}

typedef struct ref_result {
  long double value;
  long double abs_sum; /* kernel: sum of |w f g| over the finite pieces */
  long double abs_tol; /* rounding of products into the subnormal range */
  int diff_overflow;   /* distances: pieces whose |f - g| overflows in the dtype (documented: +inf) */
  int piece_overflow;  /* kernel, float64: a piece's |w f g| passes DBL_MAX (documented: +-inf or NaN) */
  int kernel_range;    /* kernel, float64: a product f g or a partial sum passes DBL_MAX (documented) */
  int width_sum_overflow; /* Lp: the widths where f != g add up beyond the dtype's range (documented: +inf) */
  int approx_zero;     /* PLFs that differ as data: interpolation rounding may leave a tiny value where the
                          exact integrand is 0 (within abs_tol) */
} ref_result;

/* Pieces one reference accumulates: K <= MAX_N pairs of at most 2 MAX_M + 2
 * pieces each. */
enum { MAX_PIECES = MAX_N * (2 * MAX_M + 4) };

typedef struct ref_acc {
  mpcf_dtype dt;
  op_kind op;
  long double p;
  ref_result r;
  long double sum, max, unbounded; /* unbounded: integrand of an unbounded piece (0: none) */
  /* Lp: per piece its width and the signed h = f - g at its two ends (equal
   * for a PCF piece) */
  long double lp_w[MAX_PIECES], lp_l[MAX_PIECES], lp_r[MAX_PIECES];
  int lp_count;
  /* PLFs: the library interpolates f and g at the other's breakpoints and at
   * window ends, each value within a few eps of its segment's larger end
   * value: per bounded piece that magnitude M (8 eps (|f| + |g|) of the
   * segments), its integral, its largest value and the pieces for Lp. */
  long double e_l1, e_max, e_w[MAX_PIECES], e_m[MAX_PIECES];
  int e_count;
} ref_acc;

static void ref_piece(ref_acc* a, double l, double r, double f, double g, double wa, double wb) {
  const double lo = l > wa ? l : wa;
  const double hi = r < wb ? r : wb;
  if (!(hi > lo)) return;
  /* mpcf.h: widths are computed in the dtype, so a piece wider than the
   * dtype's largest value counts as unbounded (hi and lo are values of the
   * dtype). */
  const double w_dtype = a->dt == MPCF_FLOAT32 ? (double)((float)hi - (float)lo) : hi - lo;
  const long double w = isinf(w_dtype) ? (long double)INFINITY : (long double)hi - (long double)lo;
  if (a->op == OPK_KERNEL) {
    /* Products and sums are formed in double for both dtypes. */
    const long double prod = (long double)f * (long double)g;
    if (prod == 0) return;
    if (fabsl(prod) > (long double)DBL_MAX / 4) a->r.kernel_range = 1;
    if (isinf(w)) {
      /* mpcf.h: a float64 product below the smallest subnormal rounds to 0
       * and contributes 0, on an unbounded piece too. */
      if ((double)f * (double)g != 0) {
        /* Two pieces counted as unbounded (one wider than the dtype's
         * range, W) whose integrands have opposite signs: +inf + -inf.
         * mpcf.h does not say what that gives (NaN, like the float64 terms
         * of opposite signs that overflow); treated as that range rule, in
         * both dtypes. */
        if (a->unbounded != 0 && (a->unbounded > 0) != (prod > 0)) a->r.piece_overflow = 1;
        a->unbounded = prod;
      }
      return;
    }
    if (a->dt == MPCF_FLOAT64 && fabsl(w * prod) > (long double)DBL_MAX / 4) a->r.piece_overflow = 1;
    a->sum += w * prod;
    a->r.abs_sum += fabsl(w * prod);
    a->r.abs_tol += 2 * w * (long double)dtype_denorm_min(a->dt) + (long double)dtype_denorm_min(a->dt);
    return;
  }
  const long double d = fabsl((long double)f - (long double)g);
  if (d == 0) return;
  if (d > (long double)dtype_max(a->dt) * (1 - 1e-7L)) ++a->r.diff_overflow;
  if (a->op == OPK_LINF) {
    if (d > a->max) a->max = d;
    return;
  }
  if (isinf(w)) {
    a->unbounded = d;
  }
  if (a->op == OPK_L1) {
    if (!isinf(w)) {
      a->sum += w * d;
      a->r.abs_tol += (long double)dtype_denorm_min(a->dt);
    }
    return;
  }
  /* Lp */
  if (d > a->max) a->max = d;
  a->lp_w[a->lp_count] = w;
  a->lp_l[a->lp_count] = d;
  a->lp_r[a->lp_count] = d;
  ++a->lp_count;
}

/* ---- piecewise linear functions (mpcf.h, MPCF_PIECEWISE_LINEAR) ---- */

/* f(x) of a PLF exactly (long double): 0 before t_0, a jump to v_0 at t_0
 * (right: the value from the right; else the left limit), the linear
 * interpolation of its two neighbours between breakpoints, v_{m-1} after. */
static long double plf_at(const double* t, const double* v, uint64_t m, double x, int right) {
  if (x < t[0]) return 0;
  uint64_t k = 0;
  while (k + 1 < m && t[k + 1] <= x) ++k;
  if (x == t[k]) return (k == 0 && !right) ? 0.0L : (long double)v[k];
  if (k == m - 1) return v[k];
  const long double s = ((long double)x - t[k]) / ((long double)t[k + 1] - t[k]);
  return (long double)v[k] + ((long double)v[k + 1] - (long double)v[k]) * s;
}

/* The larger |end value| of the segment of f that starts at or before x
 * (0 before t_0): what the interpolation's rounding is relative to. */
static long double plf_seg_mag(const double* t, const double* v, uint64_t m, double x) {
  if (x < t[0]) return 0;
  uint64_t k = 0;
  while (k + 1 < m && t[k + 1] <= x) ++k;
  long double a = fabsl((long double)v[k]);
  if (k + 1 < m && fabsl((long double)v[k + 1]) > a) a = fabsl((long double)v[k + 1]);
  return a;
}

/* Gauss-Legendre nodes and weights on [0, 1] (12 points, long double),
 * from Newton's iteration on P_12. */
enum { GL_N = 12 };
static long double gl_x[GL_N], gl_w[GL_N];
static void gl_init(void) {
  static int done = 0;
  if (done) return;
  for (int i = 0; i < GL_N; ++i) {
    long double x = cosl(3.14159265358979323846264338327950288L * (i + 0.75L) / (GL_N + 0.5L)), dp = 1;
    for (int it = 0; it < 100; ++it) {
      long double p0 = 1, p1 = x;
      for (int k = 2; k <= GL_N; ++k) {
        const long double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = GL_N * (x * p1 - p0) / (x * x - 1);
      const long double dx = p1 / dp;
      x -= dx;
      if (fabsl(dx) < 1e-19L) break;
    }
    gl_x[i] = (1 - x) / 2;
    gl_w[i] = 1 / ((1 - x * x) * dp * dp);
  }
  done = 1;
}

/* The mean of |h|^p over a piece where h goes linearly from hl to hr
 * (|hl|, |hr| <= 1 after scaling), computed independently of the library's
 * closed form: split at the root of h; a part from the root is
 * B^p / (p + 1) exactly; a sign-constant part from A to B > A: for
 * A < B / 2 the antiderivative (B^(p+1) - A^(p+1)) / ((p + 1)(B - A)) (no
 * cancellation there), else a composite Gauss-Legendre rule (4 x 12 points)
 * of the smooth integrand for p <= 64, and for larger p (where the mean
 * enters the distance only as its p-th root) the antiderivative in the form
 * B^p (1 - r^(p+1)) / ((p + 1)(1 - r)), r = A / B, 1 - r^(p+1) =
 * -expm1((p + 1) log1p(-(1 - r))). */
static long double lp_mean_same_sign(long double A, long double B, long double p) {
  if (B == 0) return 0;
  if (A == B) return powl(B, p);
  if (A < B / 2) return (powl(B, p + 1) - powl(A, p + 1)) / ((p + 1) * (B - A));
  if (p <= 64) {
    gl_init();
    long double s = 0;
    for (int q = 0; q < 4; ++q) {
      for (int i = 0; i < GL_N; ++i) {
        const long double u = (q + gl_x[i]) / 4;
        s += gl_w[i] * powl(A + (B - A) * u, p);
      }
    }
    return s / 4;
  }
  const long double d = (B - A) / B;
  return powl(B, p) * -expm1l((p + 1) * log1pl(-d)) / ((p + 1) * d);
}

static long double lp_piece_mean(long double hl, long double hr, long double p) {
  const long double x = fabsl(hl), y = fabsl(hr);
  if ((hl < 0 && hr > 0) || (hl > 0 && hr < 0)) {
    /* root at u0 = x / (x + y): u0 x^p / (p + 1) + (1 - u0) y^p / (p + 1) */
    return (x / (x + y)) * powl(x, p) / (p + 1) + (y / (x + y)) * powl(y, p) / (p + 1);
  }
  return lp_mean_same_sign(x < y ? x : y, x < y ? y : x, p);
}

/* A bounded PLF piece [l, r] (values of the dtype, l < r) with the exact
 * one-sided values of f and g at its ends and the magnitudes of the
 * segments they lie on, cut to the window [wa, wb) by exact linear
 * interpolation. */
static void ref_plf_piece(ref_acc* a, double l, double r, long double fl, long double fr, long double gl,
                          long double gr, long double fm, long double gm, double wa, double wb) {
  const double lo = l > wa ? l : wa;
  const double hi = r < wb ? r : wb;
  if (!(hi > lo)) return;
  const long double span = (long double)r - (long double)l;
  const long double sl = ((long double)lo - l) / span, sr = ((long double)hi - l) / span;
  const long double fl2 = lo > l ? fl + (fr - fl) * sl : fl, gl2 = lo > l ? gl + (gr - gl) * sl : gl;
  const long double fr2 = hi < r ? fl + (fr - fl) * sr : fr, gr2 = hi < r ? gl + (gr - gl) * sr : gr;
  fl = fl2, gl = gl2, fr = fr2, gr = gr2;
  const double w_dtype = a->dt == MPCF_FLOAT32 ? (double)((float)hi - (float)lo) : hi - lo;
  if (isinf(w_dtype)) {
    /* A piece wider than the dtype's range counts as unbounded (mpcf.h,
     * Range); on a sloped piece the library's interpolation there is
     * measured in halves: left to the range rule, unchecked. */
    if (a->op == OPK_KERNEL) a->r.piece_overflow = 1;
    else ++a->r.diff_overflow;
    return;
  }
  const long double w = (long double)hi - (long double)lo;
  const long double eps = a->dt == MPCF_FLOAT32 ? 0x1p-23L : 0x1p-52L;
  if (a->op == OPK_KERNEL) {
    const long double s = 2 * (fl * gl + fr * gr) + (fl * gr + fr * gl);
    const long double big = fm * gm;
    if (big > (long double)DBL_MAX / 8) a->r.kernel_range = 1;
    if (a->dt == MPCF_FLOAT64 && w * big * 6 > (long double)DBL_MAX / 4) a->r.piece_overflow = 1;
    a->sum += w * s / 6;
    a->r.abs_sum += w * big;
    a->r.abs_tol += 6 * w * (long double)dtype_denorm_min(a->dt) + (long double)dtype_denorm_min(a->dt);
    return;
  }
  const long double hl = fl - gl, hr = fr - gr;
  const long double A = fabsl(hl), B = fabsl(hr), mx = A > B ? A : B;
  if (mx > (long double)dtype_max(a->dt) * (1 - 1e-7L) || fm > (long double)dtype_max(a->dt) / 4 ||
      gm > (long double)dtype_max(a->dt) / 4) {
    ++a->r.diff_overflow;
  }
  const long double M = 8 * eps * (fm + gm);
  a->e_l1 += w * M;
  if (M > a->e_max) a->e_max = M;
  a->e_w[a->e_count] = w;
  a->e_m[a->e_count] = M;
  ++a->e_count;
  if (mx == 0) return;
  switch (a->op) {
    case OPK_LINF:
      if (mx > a->max) a->max = mx;
      return;
    case OPK_L1:
      a->sum += w * lp_piece_mean(hl, hr, 1.0L);
      a->r.abs_tol += (long double)dtype_denorm_min(a->dt);
      return;
    default:
      if (mx > a->max) a->max = mx;
      a->lp_w[a->lp_count] = w;
      a->lp_l[a->lp_count] = hl;
      a->lp_r[a->lp_count] = hr;
      ++a->lp_count;
      return;
  }
}

static void ref_init(ref_acc* a, mpcf_dtype dt, op_kind op, double p) {
  memset(a, 0, sizeof *a);
  a->dt = dt;
  a->op = op;
  a->p = (long double)in_dtype(dt, p);
}

/* Walks one PCF pair (f, g) into the accumulator. */
static void ref_walk_pcf(ref_acc* a, const double* ft, const double* fv, uint64_t nf, const double* gt,
                         const double* gv, uint64_t ng, double wa, double wb) {
  uint64_t i = 0, j = 0;
  double t = ft[0] < gt[0] ? ft[0] : gt[0];
  double f = 0, g = 0;
  for (;;) {
    if (i >= nf && j >= ng) {
      ref_piece(a, t, INFINITY, f, g, wa, wb);
      break;
    }
    const double tf = i < nf ? ft[i] : INFINITY;
    const double tg = j < ng ? gt[j] : INFINITY;
    const double tn = tf < tg ? tf : tg;
    ref_piece(a, t, tn, f, g, wa, wb);
    if (tf == tn) f = fv[i++];
    if (tg == tn) g = gv[j++];
    t = tn;
  }
}

/* Walks one PLF pair: the merged breakpoints, on each piece between them f
 * and g linear (ref_plf_piece), then the constant tails (a PCF piece). */
static void ref_walk_plf(ref_acc* a, const double* ft, const double* fv, uint64_t nf, const double* gt,
                         const double* gv, uint64_t ng, double wa, double wb) {
  double T[2 * MAX_M + 2];
  uint64_t nt = 0, i = 0, j = 0;
  while (i < nf || j < ng) {
    const double tf = i < nf ? ft[i] : INFINITY, tg = j < ng ? gt[j] : INFINITY;
    const double tn = tf < tg ? tf : tg;
    T[nt++] = tn;
    if (tf == tn) ++i;
    if (tg == tn) ++j;
  }
  for (uint64_t k = 0; k + 1 < nt; ++k) {
    const double l = T[k], r = T[k + 1];
    ref_plf_piece(a, l, r, plf_at(ft, fv, nf, l, 1), plf_at(ft, fv, nf, r, 0), plf_at(gt, gv, ng, l, 1),
                  plf_at(gt, gv, ng, r, 0), plf_seg_mag(ft, fv, nf, l), plf_seg_mag(gt, gv, ng, l), wa, wb);
  }
  ref_piece(a, T[nt - 1], INFINITY, fv[nf - 1], gv[ng - 1], wa, wb);
}

static ref_result ref_finish(ref_acc* ap) {
  ref_acc a_copy;
  (void)a_copy;
  ref_acc* a = ap;
  ref_result* r = &a->r;
  const mpcf_dtype dt = a->dt;
  const op_kind op = a->op;
  /* The result's own rounding to the dtype: absolute in the subnormal range. */
  r->abs_tol += 4 * (long double)dtype_denorm_min(dt);
  switch (op) {
    case OPK_KERNEL:
      if (r->abs_sum > (long double)DBL_MAX / 4) r->kernel_range = 1;
      if (r->piece_overflow || dt == MPCF_FLOAT32) r->kernel_range = 0;
      r->value = a->unbounded != 0 ? (a->unbounded > 0 ? INFINITY : -INFINITY) : a->sum;
      break;
    case OPK_L1:
      r->value = a->unbounded != 0 ? INFINITY : a->sum;
      r->abs_tol += a->e_l1;
      break;
    case OPK_LINF:
      r->value = a->max;
      r->abs_tol += a->e_max;
      break;
    case OPK_LP: {
      if (a->e_count > 0 && a->e_max > 0) {
        long double s = 0;
        for (int k = 0; k < a->e_count; ++k) s += a->e_w[k] * powl(a->e_m[k] / a->e_max, a->p);
        r->abs_tol += a->e_max * powl(s, 1.0L / a->p);
      }
      if (a->unbounded != 0) {
        r->value = INFINITY;
        break;
      }
      if (a->max == 0) {
        r->value = 0;
        break;
      }
      long double s = 0;
      for (int k = 0; k < a->lp_count; ++k) {
        s += a->lp_w[k] * lp_piece_mean(a->lp_l[k] / a->max, a->lp_r[k] / a->max, a->p);
      }
      /* Pieces whose widths add up beyond the dtype's range: +inf
       * (mpcf.h), or the value where the sum is near the limit. */
      if (s > (long double)dtype_max(dt) / 4) r->width_sum_overflow = 1;
      r->value = a->max * powl(s, 1.0L / a->p);
      break;
    }
  }
  return *r;
}

static const double* fn_t(const slot* s, uint64_t i);
static const double* fn_v(const slot* s, uint64_t i);
static uint64_t fn_m(const slot* s, uint64_t i);

/* The value of op over the window [wa, wb) (in the dtype) between object i
 * of x and object j of y (y NULL: the zero object, for the norms): the
 * components' pairs walked into one accumulator, by the walk of the slots'
 * kind (mpcf.h: d = (sum_k d_k^p)^(1/p), the sum for p = 1, the max for
 * p = inf, the kernel sum_k <x_k, y_k>). */
static ref_result obj_reference(op_kind op, double p, const slot* x, uint64_t i, const slot* y, uint64_t j,
                                double wa, double wb) {
  static ref_acc a; /* static: large */
  ref_init(&a, x->dtype, op, p);
  int identical = 1;
  for (uint64_t k = 0; k < x->K; ++k) {
    const uint64_t fi = i * x->K + k;
    const double zero_v = 0.0;
    const double* gt = y ? fn_t(y, j * x->K + k) : fn_t(x, fi);
    const double* gv = y ? fn_v(y, j * x->K + k) : &zero_v;
    const uint64_t ng = y ? fn_m(y, j * x->K + k) : 1;
    const uint64_t nf = fn_m(x, fi);
    identical &= nf == ng && memcmp(fn_t(x, fi), gt, nf * sizeof(double)) == 0 &&
                 memcmp(fn_v(x, fi), gv, nf * sizeof(double)) == 0;
    if (x->plf) {
      ref_walk_plf(&a, fn_t(x, fi), fn_v(x, fi), nf, gt, gv, ng, wa, wb);
    } else {
      ref_walk_pcf(&a, fn_t(x, fi), fn_v(x, fi), nf, gt, gv, ng, wa, wb);
    }
  }
  a.r.approx_zero = x->plf && !identical;
  return ref_finish(&a);
}

/* Checks one computed value x (in the dtype, widened to double) of op on
 * (f, g) against the reference. */
typedef struct pair_ctx {
  const char* what;
  mpcf_dtype dt;
  op_kind op;
  double p;
  double wa, wb;  /* window in the dtype */
  int moderate;   /* both functions moderate */
} pair_ctx;

static void check_pair_value(const pair_ctx* c, double x, const ref_result* ref) {
  const int distance = c->op != OPK_KERNEL;
  const char* what = c->what;
  if (tracing()) fprintf(stderr, "  check %s: %.17g (reference %.17Lg)\n", what, x, ref->value);
  /* Documented range rules (mpcf.h, "Range"): |f - g| beyond the dtype's
   * range gives +inf; a float64 piece with |w f g| > DBL_MAX, or a partial
   * sum past DBL_MAX, gives +-inf or NaN. (Widths in the dtype and float64
   * products that round to 0 are in the reference itself.) */
  const int documented = distance ? ref->diff_overflow : (ref->piece_overflow || ref->kernel_range);
  if (distance) {
    FZ_CHECK(!isnan(x), "%s: a distance is NaN (reference %.17Lg)", what, ref->value);
    FZ_CHECK(!(x < 0), "%s: a distance is negative: %.17g", what, x);
  } else if (!documented) {
    FZ_CHECK(!isnan(x), "%s: an L2 inner product of finite data is NaN (reference %.17Lg)", what, ref->value);
  }
  if (documented) return;
  if (ref->width_sum_overflow && isinf(x) && x > 0) return; /* mpcf.h: beyond, +inf */
  /* The promise for moderate data on a moderate finite window: finite. */
  if (c->moderate && isfinite(c->wa) && isfinite(c->wb) && fabs(c->wa) <= 1e6 && fabs(c->wb) <= 1e6) {
    FZ_CHECK(isfinite(x), "%s: %.17g for moderate data (|t|, |v| <= 1e6) on the finite window [%g, %g)",
             what, x, c->wa, c->wb);
  }
  const long double v = ref->value;
  const long double maxv = (long double)dtype_max(c->dt);
  const long double tol = c->dt == MPCF_FLOAT32 ? 2e-4L : 1e-10L;
  if (distance && v == 0 && ref->approx_zero) {
    FZ_CHECK(x <= ref->abs_tol, "%s: %.17g, but the integrand is exactly 0 on the whole window (allowed: the "
             "interpolation's rounding, %.3Lg)", what, x, ref->abs_tol);
    return;
  }
  if (distance && v == 0) {
    FZ_CHECK(x == 0, "%s: %.17g, but the integrand is exactly 0 on the whole window (d(f, f) = 0)", what, x);
    return;
  }
  if (isinf(v)) {
    FZ_CHECK((long double)x == v, "%s: %.17g, expected %Lg (a non-zero integrand on an unbounded piece)",
             what, x, v);
    return;
  }
  if (fabsl(v) > maxv * (1 - tol)) {
    /* Not representable (or barely): inf or the largest values are right. */
    FZ_CHECK((v > 0 ? (long double)x >= maxv * (1 - 2 * tol) : (long double)x <= -maxv * (1 - 2 * tol)),
             "%s: %.17g, expected about %.17Lg (beyond the dtype's range)", what, x, v);
    return;
  }
  const long double scale = distance ? fabsl(v) : ref->abs_sum;
  const long double err = fabsl((long double)x - v);
  FZ_CHECK(err <= tol * scale + ref->abs_tol,
           "%s: %.17g, expected %.17Lg (error %.3Lg, allowed %.3Lg)", what, x, v, err,
           tol * scale + ref->abs_tol);
}

/* ------------------------------------------------------------------ */
/* Collections                                                          */
/* ------------------------------------------------------------------ */

static const double* fn_t(const slot* s, uint64_t i) { return s->t + s->off[i]; }
static const double* fn_v(const slot* s, uint64_t i) { return s->v + s->off[i]; }
static uint64_t fn_m(const slot* s, uint64_t i) { return s->off[i + 1] - s->off[i]; }

static void check_slot_queries(const slot* s) {
  uint64_t u = 0;
  mpcf_dtype dt = (mpcf_dtype)0;
  size_t nd = 0;
  uint64_t shape[33];
  check_status("mpcf_pcfs_count", mpcf_pcfs_count(s->h, &u), ST(MPCF_OK));
  FZ_CHECK(u == s->n, "mpcf_pcfs_count: %llu, expected %llu", (unsigned long long)u, (unsigned long long)s->n);
  check_status("mpcf_pcfs_total_breakpoints", mpcf_pcfs_total_breakpoints(s->h, &u), ST(MPCF_OK));
  FZ_CHECK(u == s->off[s->n], "mpcf_pcfs_total_breakpoints: %llu, expected %llu", (unsigned long long)u,
           (unsigned long long)s->off[s->n]);
  check_status("mpcf_pcfs_dtype", mpcf_pcfs_dtype(s->h, &dt), ST(MPCF_OK));
  FZ_CHECK(dt == s->dtype, "mpcf_pcfs_dtype: %d, expected %d", (int)dt, (int)s->dtype);
  check_status("mpcf_pcfs_ndim", mpcf_pcfs_ndim(s->h, &nd), ST(MPCF_OK));
  FZ_CHECK(nd == s->ndim, "mpcf_pcfs_ndim: %zu, expected %zu", nd, s->ndim);
  memset(shape, CANARY, sizeof shape);
  check_status("mpcf_pcfs_shape", mpcf_pcfs_shape(s->h, shape, 33), ST(MPCF_OK));
  FZ_CHECK(memcmp(shape, s->shape, s->ndim * sizeof(uint64_t)) == 0, "mpcf_pcfs_shape: wrong dimensions");
  FZ_CHECK(is_canary(shape + s->ndim, (33 - s->ndim) * sizeof(uint64_t)),
           "mpcf_pcfs_shape wrote beyond ndim = %zu", s->ndim);
  mpcf_function_type ft = (mpcf_function_type)7;
  check_status("mpcf_pcfs_function_type", mpcf_pcfs_function_type(s->h, &ft), ST(MPCF_OK));
  FZ_CHECK(ft == (s->plf ? MPCF_PIECEWISE_LINEAR : MPCF_PIECEWISE_CONSTANT), "mpcf_pcfs_function_type: %d, expected %s",
           (int)ft, s->plf ? "MPCF_PIECEWISE_LINEAR" : "MPCF_PIECEWISE_CONSTANT");
  u = 777;
  check_status("mpcf_pcfs_components", mpcf_pcfs_components(s->h, &u), ST(MPCF_OK));
  FZ_CHECK(u == s->K, "mpcf_pcfs_components: %llu, expected %llu", (unsigned long long)u, (unsigned long long)s->K);
  ft = (mpcf_function_type)7;
  check_status("mpcf_pcfs_function_type", mpcf_pcfs_function_type(s->h, NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_pcfs_function_type", mpcf_pcfs_function_type(NULL, &ft), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_pcfs_components", mpcf_pcfs_components(s->h, NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_pcfs_components", mpcf_pcfs_components(NULL, &u), ST(MPCF_ERROR_INVALID_ARGUMENT));
  FZ_CHECK(ft == (mpcf_function_type)7 && u == s->K, "a failed function type / components query wrote its output");
}

/* A new handle for the slot's data (after its handle was destroyed). */
static void slot_recreate(slot* s) {
  const uint64_t total = s->off[s->n];
  float t32[MAX_PTS], v32[MAX_PTS];
  for (uint64_t k = 0; k < total; ++k) t32[k] = (float)s->t[k], v32[k] = (float)s->v[k];
  mpcf_pcfs* h = NULL;
  mpcf_status (*make)(mpcf_dtype, uint64_t, const uint64_t*, const void*, const void*, mpcf_pcfs**) =
      s->plf ? mpcf_plfs_create : mpcf_pcfs_create;
  const mpcf_status st = s->dtype == MPCF_FLOAT32 ? make(MPCF_FLOAT32, s->n, s->off, t32, v32, &h)
                                                  : make(MPCF_FLOAT64, s->n, s->off, s->t, s->v, &h);
  check_status(s->plf ? "mpcf_plfs_create" : "mpcf_pcfs_create", st, ST(MPCF_OK));
  s->h = h;
  /* the same shape and component axis as the handle it replaces */
  check_status("mpcf_pcfs_reshape", mpcf_pcfs_reshape(h, s->ndim, s->shape), ST(MPCF_OK));
  if (s->caxis) check_status("mpcf_pcfs_set_component_axis", mpcf_pcfs_set_component_axis(h, 1), ST(MPCF_OK));
}

/* opcode 0: CREATE slot dtype n flags [mutation bytes] functions...
 * flags: 1 interleaved, 2 a NULL pointer, 4 bad offsets, 8 bad data,
 * 16 function i repeats function i-1, 32 PLFs (mpcf_plfs_create*). Each function: m (1..16), then the
 * first time (value code), then per further breakpoint a gap code, then the
 * m values (value codes). */
static void op_create(fz_reader* r, state* st) {
  slot* s = &st->s[fz_u8(r) % N_SLOTS];
  const unsigned dcode = fz_u8(r);
  const int dtype_raw = (dcode & 0x80) ? (int)(dcode & 0x7f) : ((dcode & 1) ? MPCF_FLOAT32 : MPCF_FLOAT64);
  const int dtype_ok = dtype_raw == MPCF_FLOAT32 || dtype_raw == MPCF_FLOAT64;
  const mpcf_dtype dt = dtype_raw == MPCF_FLOAT32 ? MPCF_FLOAT32 : MPCF_FLOAT64;
  const uint64_t n = fz_u8(r) % (MAX_N + 1);
  const unsigned flags = fz_u8(r);
  const int interleaved = flags & 1;
  const int plf = (flags & 32) != 0;
  const unsigned null_what = (flags & 2) ? fz_u8(r) % 5 : 99;
  const unsigned off_kind = (flags & 4) ? fz_u8(r) % 3 : 99;
  const unsigned off_arg = (flags & 4) ? fz_u8(r) : 0;
  const unsigned data_kind = (flags & 8) ? fz_u8(r) % 6 : 99;
  const unsigned data_arg = (flags & 8) ? fz_u8(r) : 0;
  const uint64_t dup = (flags & 16) && n > 1 ? 1 + fz_u8(r) % (n - 1) : 0;

  uint64_t m[MAX_N];
  for (uint64_t i = 0; i < n; ++i) m[i] = 1 + fz_u8(r) % MAX_M;
  if (dup) m[dup] = m[dup - 1];
  if (off_kind == 2 && n > 0) m[off_arg % n] = 0; /* an empty function */
  uint64_t off[MAX_N + 1];
  off[0] = 0;
  for (uint64_t i = 0; i < n; ++i) off[i + 1] = off[i] + m[i];
  const uint64_t total = off[n];

  double t[MAX_PTS], v[MAX_PTS];
  for (uint64_t i = 0; i < n; ++i) {
    if (i == dup && dup) {
      memcpy(t + off[i], t + off[i - 1], m[i] * sizeof(double));
      memcpy(v + off[i], v + off[i - 1], m[i] * sizeof(double));
      continue;
    }
    if (m[i] == 0) continue;
    double prev = in_dtype(dt, value_code(r));
    t[off[i]] = prev;
    for (uint64_t k = 1; k < m[i]; ++k) {
      const unsigned c = fz_u8(r);
      double next;
      if (c < 160) {
        next = prev + ((double)c + 1.0) / 16.0;
      } else if (c < 224) {
        next = prev + ldexp(1.0, (int)c - 200);
      } else {
        switch (c) {
          case 224: next = prev; break;
          case 225: next = prev - 1.0; break;
          case 226: next = NAN; break;
          case 227: next = INFINITY; break;
          case 228: next = dt == MPCF_FLOAT32 ? (double)nextafterf((float)prev, INFINITY) : nextafter(prev, INFINITY); break;
          case 229: next = prev + 1e30; break;
          case 230: next = prev + 1e300; break;
          case 231: next = fz_raw_f64(r); break;
          case 232: next = value_code(r); break;
          case 233: next = prev + 1e6; break;
          case 234: next = prev + 1e38; break;
          default: next = prev + ((double)c - 230.0); break;
        }
      }
      prev = in_dtype(dt, next);
      t[off[i] + k] = prev;
    }
    for (uint64_t k = 0; k < m[i]; ++k) v[off[i] + k] = in_dtype(dt, value_code(r));
  }
  if (data_kind != 99 && total > 0) {
    const uint64_t k = data_arg % total;
    switch (data_kind) {
      case 0: t[k] = NAN; break;
      case 1: t[k] = INFINITY; break;
      case 2: v[k] = NAN; break;
      case 3: v[k] = -INFINITY; break;
      case 4: if (k > 0) t[k] = t[k - 1]; break;
      default:
        if (k > 0) {
          const double x = t[k];
          t[k] = t[k - 1];
          t[k - 1] = x;
        }
        break;
    }
  }
  uint64_t off_passed[MAX_N + 1];
  memcpy(off_passed, off, sizeof off);
  if (off_kind == 0) off_passed[0] = 1 + off_arg % 3;
  if (off_kind == 1 && n >= 2) {
    const uint64_t i = 1 + off_arg % (n - 1);
    const uint64_t x = off_passed[i];
    off_passed[i] = off_passed[i + 1];
    off_passed[i + 1] = x;
  }
  uint64_t cells = 0; /* elements the caller's arrays hold: the largest offset */
  for (uint64_t i = 0; i <= n; ++i) cells = off_passed[i] > cells ? off_passed[i] : cells;

  /* The caller's arrays, in the dtype, exactly `cells` long (ASan sees any
   * read beyond). */
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  unsigned char* times = malloc(cells ? cells * esz * (interleaved ? 2 : 1) : 1);
  unsigned char* values = interleaved ? NULL : malloc(cells ? cells * esz : 1);
  if (times == NULL || (!interleaved && values == NULL)) abort();
  for (uint64_t k = 0; k < cells; ++k) {
    const double tk = k < total ? t[k] : 0.0, vk = k < total ? v[k] : 0.0;
    unsigned char* tp = interleaved ? times + 2 * k * esz : times + k * esz;
    unsigned char* vp = interleaved ? times + (2 * k + 1) * esz : values + k * esz;
    if (dt == MPCF_FLOAT32) {
      const float tf = (float)tk, vf = (float)vk;
      memcpy(tp, &tf, esz);
      memcpy(vp, &vf, esz);
    } else {
      memcpy(tp, &tk, esz);
      memcpy(vp, &vk, esz);
    }
  }

  /* What the header says about these arguments. */
  expect e = {0, 0};
  const int null_out = null_what == 3;
  const int null_offsets = null_what == 0;
  const int null_times = null_what == 1 || null_what == 4;
  const int null_values = null_what == 2 || null_what == 4;
  if (null_out || !dtype_ok || null_offsets) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (!null_offsets) {
    const int null_data = interleaved ? null_times : (null_times || null_values);
    if (off_passed[n] > 0 && null_data) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    /* The header: offsets that do not start at 0 or that decrease are an
     * invalid argument; m = 0 (two equal offsets) is an invalid PCF. */
    if (off_passed[0] != 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    int monotone = 1;
    for (uint64_t i = 0; i < n; ++i) monotone &= off_passed[i + 1] >= off_passed[i];
    if (!monotone) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    if (monotone && off_passed[0] == 0 && !null_data) {
      for (uint64_t i = 0; i < n; ++i) {
        if (m[i] == 0) e.errors |= ST(MPCF_ERROR_INVALID_PCF);
        for (uint64_t k = off[i]; k < off[i + 1]; ++k) {
          if (!isfinite(t[k]) || !isfinite(v[k]) || (k > off[i] && !(t[k - 1] < t[k]))) {
            e.errors |= ST(MPCF_ERROR_INVALID_PCF);
          }
        }
      }
    } else if (monotone && off_passed[0] == 0) {
      for (uint64_t i = 0; i < n; ++i) {
        if (m[i] == 0) e.errors |= ST(MPCF_ERROR_INVALID_PCF);
      }
    }
  }
  /* A NULL data pointer with valid non-empty data must fail for the NULL;
   * with invalid data either failure is fine (the union above). */

  mpcf_pcfs* sentinel = (mpcf_pcfs*)(uintptr_t)0x5e17;
  mpcf_pcfs* out = sentinel;
  mpcf_status s_;
  const void* tp = null_times ? NULL : times;
  const void* vp = null_values ? NULL : values;
  const uint64_t* op = null_offsets ? NULL : off_passed;
  const char* call = plf ? (interleaved ? "mpcf_plfs_create_interleaved" : "mpcf_plfs_create")
                         : (interleaved ? "mpcf_pcfs_create_interleaved" : "mpcf_pcfs_create");
  if (interleaved) {
    s_ = (plf ? mpcf_plfs_create_interleaved : mpcf_pcfs_create_interleaved)((mpcf_dtype)dtype_raw, n, op, tp,
                                                                            null_out ? NULL : &out);
  } else {
    s_ = (plf ? mpcf_plfs_create : mpcf_pcfs_create)((mpcf_dtype)dtype_raw, n, op, tp, vp, null_out ? NULL : &out);
  }
  check_status(call, s_, allowed_of(e));
  free(times);
  free(values);
  if (s_ == MPCF_ERROR_INVALID_PCF && e.errors == ST(MPCF_ERROR_INVALID_PCF)) {
    /* The detail names the first violation: a function without breakpoints
     * (the offsets are checked first), else the first bad breakpoint in
     * order, as the header's rules define it. */
    int64_t want_f = -1, want_k = -1;
    for (uint64_t i = 0; i < n && want_f < 0; ++i) {
      if (m[i] == 0) want_f = (int64_t)i;
    }
    for (uint64_t i = 0; i < n && want_f < 0; ++i) {
      for (uint64_t k = off[i]; k < off[i + 1] && want_f < 0; ++k) {
        if (!isfinite(t[k]) || !isfinite(v[k]) || (k > off[i] && !(t[k - 1] < t[k]))) {
          want_f = (int64_t)i;
          want_k = (int64_t)(k - off[i]);
        }
      }
    }
    const mpcf_error_detail d = last_detail(call);
    FZ_CHECK(d.status == s_ && d.function_index == want_f && d.breakpoint_index == want_k,
             "%s: mpcf_last_error_detail says %s, function %lld, breakpoint %lld; the first violation is "
             "function %lld, breakpoint %lld (message: %s)",
             call, mpcf_status_name(d.status), (long long)d.function_index, (long long)d.breakpoint_index,
             (long long)want_f, (long long)want_k, mpcf_last_error_message());
  }
  if (s_ != MPCF_OK) {
    FZ_CHECK(out == sentinel, "%s failed and still wrote *out", call);
    return;
  }
  FZ_CHECK(out != NULL && out != sentinel, "%s succeeded without a handle", call);
  mpcf_pcfs_destroy(s->h);
  s->h = out;
  s->dtype = dt;
  s->n = n;
  memcpy(s->off, off, sizeof off);
  memcpy(s->t, t, total * sizeof(double));
  memcpy(s->v, v, total * sizeof(double));
  s->moderate = 1;
  for (uint64_t k = 0; k < total; ++k) s->moderate &= fabs(t[k]) <= 1e6 && fabs(v[k]) <= 1e6;
  s->ndim = 1;
  s->shape[0] = n;
  s->plf = plf;
  s->K = 1;
  s->caxis = 0;
  check_slot_queries(s);
}

/* opcode 1: RESHAPE slot ndim mode [dims] */
static void op_reshape(fz_reader* r, state* st) {
  const unsigned sk = fz_u8(r) % (N_SLOTS + 1);
  slot* s = sk < N_SLOTS && st->s[sk].h ? &st->s[sk] : NULL; /* NULL: a NULL handle */
  const size_t ndim = fz_u8(r) % (MAX_NDIM + 1);
  const unsigned mode = fz_u8(r);
  uint64_t shape[MAX_NDIM + 1];
  const uint64_t n = s ? s->n : 0;
  if (mode < 128) {
    for (size_t k = 0; k < ndim; ++k) shape[k] = 1;
    if (ndim > 0) shape[mode % ndim] = n;
  } else {
    for (size_t k = 0; k < ndim; ++k) {
      const unsigned c = fz_u8(r);
      if (c < 240) {
        shape[k] = c % 9;
      } else {
        switch (c) {
          case 240: shape[k] = UINT64_MAX; break;
          case 241: shape[k] = UINT64_C(1) << 32; break;
          case 242: shape[k] = UINT64_C(1) << 63; break;
          case 243: shape[k] = 0; break;
          case 244: shape[k] = n; break;
          default: shape[k] = fz_uint(r, 8); break;
        }
      }
    }
  }
  const int null_shape = mode == 255;
  expect e = {0, 0};
  if (s == NULL || null_shape || ndim < 1 || ndim > 32) {
    e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  } else {
    /* The product as the header means it: 0 when a dimension is 0. */
    int zero = 0, overflow = 0;
    uint64_t product = 1;
    for (size_t k = 0; k < ndim; ++k) zero |= shape[k] == 0;
    for (size_t k = 0; k < ndim && !zero; ++k) {
      if (product > UINT64_MAX / shape[k]) overflow = 1;
      product *= shape[k];
    }
    if (zero) product = 0, overflow = 0;
    if (overflow || product != n) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  }
  const mpcf_status s_ = mpcf_pcfs_reshape(s ? s->h : NULL, ndim, null_shape ? NULL : shape);
  check_status("mpcf_pcfs_reshape", s_, allowed_of(e));
  if (s == NULL) return;
  if (s_ == MPCF_OK) {
    s->ndim = ndim;
    memcpy(s->shape, shape, ndim * sizeof(uint64_t));
    s->K = 1; /* mpcf.h: reshape gives a collection without a component axis */
    s->caxis = 0;
  }
  check_slot_queries(s); /* a failed reshape left the shape as it was */
  /* mpcf_pcfs_shape with too small a buffer */
  if (s->ndim > 0) {
    uint64_t small[32];
    memset(small, CANARY, sizeof small);
    check_status("mpcf_pcfs_shape", mpcf_pcfs_shape(s->h, small, s->ndim - 1), ST(MPCF_ERROR_BUFFER_TOO_SMALL));
    FZ_CHECK(is_canary(small, sizeof small), "mpcf_pcfs_shape failed and still wrote the buffer");
  }
}

/* opcode 2: DESTROY slot */
static void op_destroy(fz_reader* r, state* st) {
  slot* s = &st->s[fz_u8(r) % N_SLOTS];
  mpcf_pcfs_destroy(s->h);
  s->h = NULL;
}

/* ------------------------------------------------------------------ */
/* Options                                                              */
/* ------------------------------------------------------------------ */

static void reset_options_model(opts_model* o) {
  o->backend = MPCF_BACKEND_AUTO;
  o->a = -INFINITY;
  o->b = INFINITY;
  o->split = o->min_side = o->max_elements = 0;
}

/* opcode 3: OPTIONS mask [setter arguments...]
 * mask bits: 1 backend, 2 threads, 4 window, 8 block hints, 16 memory
 * fraction, 32 CUDA threshold, 64 devices, 128 the setters get a NULL
 * handle. */
static void op_options(fz_reader* r, state* st) {
  opts_model* o = &st->o;
  const unsigned mask = fz_u8(r);
  mpcf_options* h = (mask & 128) ? NULL : o->h;
  const unsigned null_err = h == NULL ? ST(MPCF_ERROR_INVALID_ARGUMENT) : 0;
  mpcf_status s;
  if (mask & 1) {
    static const int backends[8] = {MPCF_BACKEND_CPU, MPCF_BACKEND_CPU, MPCF_BACKEND_AUTO, MPCF_BACKEND_CUDA,
                                    3, -1, 100, INT32_MIN};
    int b = backends[fz_u8(r) % 8];
    if (st->has_devices && (b == MPCF_BACKEND_AUTO || b == MPCF_BACKEND_CUDA)) b = MPCF_BACKEND_CPU;
    const int valid = b >= 0 && b <= 2;
    s = mpcf_options_set_backend(h, (mpcf_backend)b);
    check_status("mpcf_options_set_backend", s, null_err ? null_err : valid ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
    if (s == MPCF_OK) o->backend = b;
  }
  if (mask & 2) {
    static const int threads[12] = {0, 1, 2, 3, 4, -1, INT32_MIN, 4097, INT32_MAX, 4096, 1, 2};
    const int t = threads[fz_u8(r) % 12];
    s = mpcf_options_set_threads(h, t);
    /* The header promises 0 and positive counts; a huge one may be refused. */
    unsigned allowed = t < 0 ? ST(MPCF_ERROR_INVALID_ARGUMENT)
                       : t <= 4 ? ST(MPCF_OK)
                                : ST(MPCF_OK) | ST(MPCF_ERROR_INVALID_ARGUMENT);
    check_status("mpcf_options_set_threads", s, null_err ? null_err : allowed);
  }
  if (mask & 4) {
    const double a = window_code(r), b = window_code(r);
    const int valid = !isnan(a) && !isnan(b) && a < b;
    s = mpcf_options_set_window(h, a, b);
    check_status("mpcf_options_set_window", s, null_err ? null_err : valid ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
    if (s == MPCF_OK) o->a = a, o->b = b;
  }
  if (mask & 8) {
    const uint64_t split = hint_code(r), side = hint_code(r), el = hint_code(r);
    s = mpcf_options_set_block_hints(h, split, side, el);
    check_status("mpcf_options_set_block_hints", s, null_err ? null_err : ST(MPCF_OK));
    if (s == MPCF_OK) o->split = split, o->min_side = side, o->max_elements = el;
  }
  if (mask & 16) {
    static const double fr[10] = {0.8, 1.0, 0.5, 1e-300, 0.0, -0.5, 1.5, NAN, INFINITY, 1.0000000000000002};
    const double f = fr[fz_u8(r) % 10];
    const int valid = f > 0.0 && f <= 1.0;
    s = mpcf_options_set_memory_fraction(h, f);
    check_status("mpcf_options_set_memory_fraction", s,
                 null_err ? null_err : valid ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
  }
  if (mask & 32) {
    static const double th[6] = {0.0, 2e8, -1.0, NAN, INFINITY, 1e300};
    const double x = th[fz_u8(r) % 6];
    s = mpcf_options_set_cuda_threshold(h, x);
    /* The header does not say what a negative or NaN threshold gets. */
    const unsigned allowed = x >= 0 ? ST(MPCF_OK) : ST(MPCF_OK) | ST(MPCF_ERROR_INVALID_ARGUMENT);
    check_status("mpcf_options_set_cuda_threshold", s, null_err ? null_err : allowed);
  }
  if (mask & 64) {
    const unsigned c = fz_u8(r);
    static const int ids[5] = {0, 0, 1, -1, 2}; /* from ids + (c / 4) % 2: a duplicate, then a negative id */
    const size_t count = c % 4;
    const int null_ids = (c & 0x80) && count > 0;
    s = mpcf_options_set_devices(h, count, null_ids ? NULL : ids + (c / 4) % 2);
    /* Ids are checked "at computation time" or earlier: either is fine. */
    const unsigned allowed = null_ids ? ST(MPCF_ERROR_INVALID_ARGUMENT)
                             : count == 0 ? ST(MPCF_OK)
                                          : ST(MPCF_OK) | ST(MPCF_ERROR_INVALID_ARGUMENT);
    check_status("mpcf_options_set_devices", s, null_err ? null_err : allowed);
  }
}

/* The window the options give a computation, in the dtype. */
static void window_in(const opts_model* o, int use_opts, mpcf_dtype dt, double* a, double* b) {
  *a = use_opts ? in_dtype(dt, o->a) : -INFINITY;
  *b = use_opts ? in_dtype(dt, o->b) : INFINITY;
}

/* ------------------------------------------------------------------ */
/* Single pairs                                                         */
/* ------------------------------------------------------------------ */

static pair_ctx make_ctx(const char* what, const slot* x, const slot* y, op_kind op, double p,
                         const opts_model* o, int use_opts) {
  pair_ctx c;
  c.what = what;
  c.dt = x->dtype;
  c.op = op;
  c.p = p;
  window_in(o, use_opts, x->dtype, &c.wa, &c.wb);
  c.moderate = x->moderate && y->moderate;
  return c;
}

/* The library's value of (X_i, Y_j) through mpcf_lp_distance or
 * mpcf_l2_inner_product, which must succeed, checked against the reference. */
static double pair_value(const slot* x, uint64_t i, const slot* y, uint64_t j, op_kind op, double p,
                         const opts_model* o, int use_opts) {
  double d = -12345.0;
  mpcf_status s;
  if (op == OPK_KERNEL) {
    s = mpcf_l2_inner_product(x->h, i, y->h, j, use_opts ? o->h : NULL, &d);
    check_status("mpcf_l2_inner_product", s, ST(MPCF_OK));
  } else {
    s = mpcf_lp_distance(x->h, i, y->h, j, p, use_opts ? o->h : NULL, &d);
    check_status("mpcf_lp_distance", s, ST(MPCF_OK));
  }
  char what[200];
  char pdesc[40] = "";
  if (op != OPK_KERNEL) snprintf(pdesc, sizeof pdesc, ", p = %.17g", p);
  snprintf(what, sizeof what, "%s(X[%llu], Y[%llu]) %s%s, window [%.17g, %.17g)",
           op == OPK_KERNEL ? "l2_inner_product" : "lp_distance", (unsigned long long)i,
           (unsigned long long)j, x->dtype == MPCF_FLOAT32 ? "float32" : "float64", pdesc,
           use_opts ? o->a : -INFINITY, use_opts ? o->b : INFINITY);
  const pair_ctx c = make_ctx(what, x, y, op, p, o, use_opts);
  FZ_CHECK(d == in_dtype(x->dtype, d) || isnan(d), "%s: %.17g is not a value of the dtype", what, d);
  const ref_result ref = obj_reference(op, p, x, i, y, j, c.wa, c.wb);
  check_pair_value(&c, d, &ref);
  return d;
}

static int window_empty_in(const opts_model* o, int use_opts, mpcf_dtype dt) {
  double a, b;
  window_in(o, use_opts, dt, &a, &b);
  return !(a < b);
}

/* Two collections in one call (mpcf.h): the same kind of functions (else
 * MPCF_ERROR_INVALID_ARGUMENT naming both kinds) and the same component
 * axis (both or neither, the same K). Returns 1 when only the kinds differ
 * (the message is then checked), 2 for the axis, 0 when they match. */
static int pair_kind_errors(expect* e, const slot* x, const slot* y) {
  if (x == NULL || y == NULL) return 0;
  int r = 0;
  if (x->plf != y->plf) e->errors |= ST(MPCF_ERROR_INVALID_ARGUMENT), r = 1;
  if (x->caxis != y->caxis || x->K != y->K) e->errors |= ST(MPCF_ERROR_INVALID_ARGUMENT), r = r ? 3 : 2;
  return r;
}

/* After a call that failed only for mixing kinds: the message names both. */
static void check_kind_message(const char* call, mpcf_status s, int kinds) {
  if (kinds != 1 || s != MPCF_ERROR_INVALID_ARGUMENT) return;
  const char* m = mpcf_last_error_message();
  FZ_CHECK(strstr(m, "piecewise linear") != NULL && strstr(m, "piecewise constant") != NULL,
           "%s refused a PCF and a PLF collection without naming both kinds: '%s'", call, m);
}

/* opcode 4: LP_DISTANCE x i y j p flags (1 NULL options, 2 NULL out, 4 kernel) */
static void op_pair(fz_reader* r, state* st) {
  const unsigned xs = fz_u8(r) % (N_SLOTS + 1), ys = fz_u8(r) % (N_SLOTS + 1);
  const slot* x = xs < N_SLOTS && st->s[xs].h ? &st->s[xs] : NULL;
  const slot* y = ys < N_SLOTS && st->s[ys].h ? &st->s[ys] : NULL;
  const uint64_t i = index_code(r), j = index_code(r);
  const double p = p_code(r);
  const unsigned flags = fz_u8(r);
  const int use_opts = !(flags & 1), null_out = flags & 2, kernel = flags & 4;
  expect e = {0, 0};
  if (!x || !y || null_out) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (x && y && x->dtype != y->dtype) e.errors |= ST(MPCF_ERROR_DTYPE_MISMATCH);
  if ((x && i >= objs(x)) || (y && j >= objs(y))) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);

  if (!kernel && (isnan(p) || p < 1)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (x && window_empty_in(&st->o, use_opts, x->dtype)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (y && window_empty_in(&st->o, use_opts, y->dtype)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  expect ek = {0, 0};
  const int kinds = pair_kind_errors(&ek, x, y) == 1 && e.errors == 0;
  e.errors |= ek.errors;
  double d = -12345.0;
  mpcf_options* oh = use_opts ? st->o.h : NULL;
  mpcf_status s;
  if (kernel) {
    s = mpcf_l2_inner_product(x ? x->h : NULL, i, y ? y->h : NULL, j, oh, null_out ? NULL : &d);
  } else {
    s = mpcf_lp_distance(x ? x->h : NULL, i, y ? y->h : NULL, j, p, oh, null_out ? NULL : &d);
  }
  check_status(kernel ? "mpcf_l2_inner_product" : "mpcf_lp_distance", s, allowed_of(e));
  check_kind_message(kernel ? "mpcf_l2_inner_product" : "mpcf_lp_distance", s, kinds);
  if (s != MPCF_OK) {
    FZ_CHECK(d == -12345.0, "a failed single-pair call wrote *out");
    return;
  }
  /* pair_value makes the same call again and checks it against the
   * reference (which makes d(f, f) exactly 0); both calls agree bitwise. */
  const double again = pair_value(x, i, y, j, kernel ? OPK_KERNEL : distance_kind(p), p, &st->o, use_opts);
  FZ_CHECK(same_bits(d, again, x->dtype), "the same single-pair call gave %.17g, then %.17g", d, again);
}

/* ------------------------------------------------------------------ */
/* Matrix operations and tasks                                          */
/* ------------------------------------------------------------------ */

typedef enum mat_kind { MAT_PDIST, MAT_KERNEL, MAT_CDIST } mat_kind;

typedef struct mat_call {
  mat_kind kind;
  slot* x;
  slot* y; /* cdist */
  double p;
  int layout;    /* pdist, kernel: raw value */
  int metric;    /* cdist: raw value */
  int use_opts;
} mat_call;

static op_kind mat_op(const mat_call* c) {
  if (c->kind == MAT_KERNEL || (c->kind == MAT_CDIST && c->metric == MPCF_METRIC_L2_KERNEL)) return OPK_KERNEL;
  return distance_kind(c->p);
}

/* Elements the result needs (0 when the arguments are invalid anyway). */
static uint64_t mat_needed(const mat_call* c, int* layout_ok) {
  *layout_ok = 1;
  if (!c->x) return 0;
  const uint64_t n = objs(c->x);
  switch (c->kind) {
    case MAT_PDIST:
      if (c->layout == MPCF_LAYOUT_DENSE) return n * n;
      if (c->layout == MPCF_LAYOUT_CONDENSED || c->layout == MPCF_LAYOUT_PACKED_LOWER) return n * (n - (n > 0)) / 2;
      *layout_ok = 0;
      return 0;
    case MAT_KERNEL:
      if (c->layout == MPCF_LAYOUT_DENSE) return n * n;
      if (c->layout == MPCF_LAYOUT_PACKED_LOWER) return n * (n + 1) / 2;
      *layout_ok = 0;
      return 0;
    case MAT_CDIST:
      if (c->metric != MPCF_METRIC_LP_DISTANCE && c->metric != MPCF_METRIC_L2_KERNEL) *layout_ok = 0;
      return c->y ? n * objs(c->y) : 0;
  }
  return 0;
}

/* Pairs the computation covers (the progress total). */
static uint64_t mat_pairs(const mat_call* c) {
  const uint64_t n = objs(c->x);
  switch (c->kind) {
    case MAT_PDIST: return n * (n - (n > 0)) / 2;
    case MAT_KERNEL: return n * (n + 1) / 2;
    case MAT_CDIST: return n * objs(c->y);
  }
  return 0;
}

/* Element k of the result: the pair (i, j) it holds; 0 for the zero
 * diagonal of a dense distance matrix. */
static int mat_element(const mat_call* c, uint64_t k, uint64_t* i, uint64_t* j) {
  const uint64_t n = objs(c->x);
  if (c->kind == MAT_CDIST) {
    *i = k / objs(c->y);
    *j = k % objs(c->y);
    return 1;
  }
  if (c->layout == MPCF_LAYOUT_DENSE) {
    *i = k / n;
    *j = k % n;
    return !(c->kind == MAT_PDIST && *i == *j);
  }
  if (c->layout == MPCF_LAYOUT_CONDENSED) {
    /* (0,1), (0,2), ..., (0,n-1), (1,2), ... */
    uint64_t row = 0, start = 0;
    while (k >= start + (n - 1 - row)) start += n - 1 - row, ++row;
    *i = row;
    *j = row + 1 + (k - start);
    return 1;
  }
  /* packed lower: row i holds i (distances) or i + 1 (kernels) entries */
  const int diag = c->kind == MAT_KERNEL;
  uint64_t row = diag ? 0 : 1, start = 0;
  while (k >= start + row + (diag ? 1 : 0)) start += row + (diag ? 1 : 0), ++row;
  *i = row;
  *j = k - start;
  return 1;
}

static const char* mat_name(const mat_call* c) {
  switch (c->kind) {
    case MAT_PDIST: return "mpcf_pdist";
    case MAT_KERNEL: return "mpcf_l2_kernel";
    case MAT_CDIST: return "mpcf_cdist";
  }
  return "?";
}

/* libmpcf's account of a finished matrix computation (mpcf_task_info): the
 * CPU (a device only where one may be used), threads or devices to match,
 * and the merge steps of the plane worked out from the slots: the sum over
 * the computed pairs of the breakpoints of both objects. */
static void check_task_info(const char* call, mpcf_status got, const mpcf_task_info* info, const mat_call* c,
                            const state* st) {
  FZ_CHECK(got == MPCF_OK && info->struct_size == sizeof *info, "%s: its task info could not be read (%s)", call,
           mpcf_last_error_message());
  const double nx = (double)objs(c->x), bx = (double)(c->x->off[c->x->n] - c->x->off[0]);
  double want = 0.0;
  switch (c->kind) {
    case MAT_PDIST: want = nx > 0 ? (nx - 1.0) * bx : 0.0; break;
    case MAT_KERNEL: want = (nx + 1.0) * bx; break;
    case MAT_CDIST:
      want = (double)objs(c->y) * bx + nx * (double)(c->y->off[c->y->n] - c->y->off[0]);
      break;
  }
  FZ_CHECK(info->merge_steps == want, "%s: task info says %.17g merge steps, the plane has %.17g", call,
           info->merge_steps, want);
  FZ_CHECK(isfinite(info->seconds) && info->seconds >= 0.0, "%s: task info says %g seconds", call, info->seconds);
  if (info->backend == MPCF_BACKEND_CPU) {
    FZ_CHECK(info->threads >= 1 && info->device_count == 0, "%s: CPU with %d threads and %d devices", call,
             (int)info->threads, (int)info->device_count);
    FZ_CHECK(info->reason != MPCF_REASON_AUTO_THRESHOLD_MET && info->reason != MPCF_REASON_CPU_ONLY,
             "%s: a matrix computation on the CPU for reason %d", call, (int)info->reason);
  } else {
    FZ_CHECK(info->backend == MPCF_BACKEND_CUDA && st->has_devices,
             "%s: task info says backend %d", call, (int)info->backend);
    FZ_CHECK(info->threads == 0 && info->device_count >= 1, "%s: CUDA with %d threads and %d devices", call,
             (int)info->threads, (int)info->device_count);
  }
}

/* Every element of a successful result, bit for bit the single-pair value. */
static void check_mat_result(const mat_call* c, const void* buf, uint64_t needed, const opts_model* o) {
  const slot* x = c->x;
  const slot* y = c->kind == MAT_CDIST ? c->y : c->x;
  const op_kind op = mat_op(c);
  double cache[MAX_N][MAX_N];
  unsigned char have[MAX_N][MAX_N];
  memset(have, 0, sizeof have);
  for (uint64_t k = 0; k < needed; ++k) {
    const double got = element_of(buf, x->dtype, k);
    uint64_t i = 0, j = 0;
    if (!mat_element(c, k, &i, &j)) {
      FZ_CHECK(got == 0, "%s: dense distance diagonal element %llu is %.17g, not 0", mat_name(c),
               (unsigned long long)k, got);
      continue;
    }
    /* The engine computes a symmetric pair once, as (max, min). */
    uint64_t pi = i, pj = j;
    if (c->kind != MAT_CDIST && pi < pj) pi = j, pj = i;
    if (!have[pi][pj]) {
      cache[pi][pj] = pair_value(x, pi, y, pj, op, c->p, o, c->use_opts);
      have[pi][pj] = 1;
      if (c->kind != MAT_CDIST && pi != pj) {
        /* pdist(X) is cdist(X, X) bit for bit: (j, i) gives what (i, j) gives. */
        const double mirror = pair_value(x, pj, y, pi, op, c->p, o, c->use_opts);
        FZ_CHECK(same_bits(mirror, cache[pi][pj], x->dtype),
                 "%s: the pair (%llu, %llu) gives %.17g but (%llu, %llu) gives %.17g", mat_name(c),
                 (unsigned long long)pi, (unsigned long long)pj, cache[pi][pj], (unsigned long long)pj,
                 (unsigned long long)pi, mirror);
      }
    }
    FZ_CHECK(same_bits(got, cache[pi][pj], x->dtype),
             "%s: element %llu (pair %llu, %llu) is %.17g but the single-pair call gives %.17g", mat_name(c),
             (unsigned long long)k, (unsigned long long)i, (unsigned long long)j, got, cache[pi][pj]);
  }
  /* d(f, f) = 0 for every function of a distance matrix. */
  if (op != OPK_KERNEL && c->kind == MAT_PDIST) {
    for (uint64_t i = 0; i < objs(x); ++i) (void)pair_value(x, i, x, i, op, c->p, o, c->use_opts);
  }
}

static int all_nan(const void* buf, mpcf_dtype dt, uint64_t needed) {
  for (uint64_t k = 0; k < needed; ++k) {
    if (!isnan(element_of(buf, dt, k))) return 0;
  }
  return 1;
}

typedef enum exec_mode {
  EXEC_SYNC,
  EXEC_WAIT,       /* start, wait(-1) */
  EXEC_POLL,       /* start, wait with short timeouts and progress, then wait(-1) */
  EXEC_CANCEL,     /* start, cancel, wait(-1) */
  EXEC_DESTROY,    /* start, destroy at once */
  EXEC_NULL_TASK,  /* start with task == NULL */
  EXEC_DROP_INPUT, /* start, destroy the collections' handles, wait(-1): the task keeps them alive */
  EXEC_COUNT
} exec_mode;

static mpcf_status mat_call_sync(const mat_call* c, void* out, uint64_t cap, const mpcf_options* oh) {
  switch (c->kind) {
    case MAT_PDIST:
      return mpcf_pdist(c->x ? c->x->h : NULL, c->p, (mpcf_layout)c->layout, out, cap, oh);
    case MAT_KERNEL:
      return mpcf_l2_kernel(c->x ? c->x->h : NULL, (mpcf_layout)c->layout, out, cap, oh);
    case MAT_CDIST:
      return mpcf_cdist(c->x ? c->x->h : NULL, c->y ? c->y->h : NULL, (mpcf_metric)c->metric, c->p, out, cap, oh);
  }
  return MPCF_ERROR_INTERNAL;
}

static mpcf_status mat_call_start(const mat_call* c, void* out, uint64_t cap, const mpcf_options* oh,
                                  mpcf_task** task) {
  switch (c->kind) {
    case MAT_PDIST:
      return mpcf_pdist_start(c->x ? c->x->h : NULL, c->p, (mpcf_layout)c->layout, out, cap, oh, task);
    case MAT_KERNEL:
      return mpcf_l2_kernel_start(c->x ? c->x->h : NULL, (mpcf_layout)c->layout, out, cap, oh, task);
    case MAT_CDIST:
      return mpcf_cdist_start(c->x ? c->x->h : NULL, c->y ? c->y->h : NULL, (mpcf_metric)c->metric, c->p, out,
                              cap, oh, task);
  }
  return MPCF_ERROR_INTERNAL;
}

static void check_progress(mpcf_task* task, uint64_t* last_done) {
  uint64_t done = UINT64_MAX, total = UINT64_MAX;
  check_status("mpcf_task_progress", mpcf_task_progress(task, &done, &total), ST(MPCF_OK));
  FZ_CHECK(done <= total || total == 0, "mpcf_task_progress: done %llu > total %llu", (unsigned long long)done,
           (unsigned long long)total);
  FZ_CHECK(done >= *last_done, "mpcf_task_progress: done went back from %llu to %llu",
           (unsigned long long)*last_done, (unsigned long long)done);
  *last_done = done;
  check_status("mpcf_task_progress", mpcf_task_progress(task, NULL, NULL), ST(MPCF_OK));
}

/* Runs one matrix operation the way the input says and checks it. */
static void run_mat(fz_reader* r, state* st, mat_call* c) {
  const unsigned cap_mode = fz_u8(r) % 7;
  const exec_mode mode = (exec_mode)(fz_u8(r) % EXEC_COUNT);
  /* Read whatever the mode needs now, so the decoding never depends on
   * timing. */
  static const double timeout_table[4] = {0.0, 1e-4, NAN, -0.0};
  double poll_timeouts[3] = {0.0, 0.0, 0.0};
  if (mode == EXEC_POLL) {
    for (int k = 0; k < 3; ++k) poll_timeouts[k] = timeout_table[fz_u8(r) % 4];
  }
  const opts_model* o = &st->o;
  int layout_ok = 1;
  const uint64_t needed = mat_needed(c, &layout_ok);
  const op_kind op = (c->x && (c->kind != MAT_CDIST || c->y)) ? mat_op(c) : OPK_L1;
  const int distance = !(c->kind == MAT_KERNEL || (c->kind == MAT_CDIST && c->metric == MPCF_METRIC_L2_KERNEL));

  uint64_t cap = needed;
  int null_out = 0;
  switch (cap_mode) {
    case 0: cap = needed; break;
    case 1: cap = needed + 1; break;
    case 2: cap = needed + 3; break;
    case 3: cap = needed > 0 ? needed - 1 : 0; break;
    case 4: cap = 0; break;
    case 5: null_out = 1; cap = needed; break;
    default: null_out = 1; cap = 0; break;
  }
  const mpcf_dtype dt = c->x ? c->x->dtype : MPCF_FLOAT64;
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  void* buf = canary_buffer(cap * esz);
  void* out = null_out ? NULL : buf;

  expect e = {0, 0};
  if (!c->x || (c->kind == MAT_CDIST && !c->y)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (!layout_ok) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (distance && (isnan(c->p) || c->p < 1)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (c->kind == MAT_CDIST && c->x && c->y && c->x->dtype != c->y->dtype) e.errors |= ST(MPCF_ERROR_DTYPE_MISMATCH);
  const int args_known = c->x && (c->kind != MAT_CDIST || c->y) && layout_ok;
  int kinds = 0;
  if (args_known) {
    if (cap < needed) e.errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    if (null_out && needed > 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    const uint64_t pairs = mat_pairs(c);
    /* With nothing to compute the header leaves these open. */
    const unsigned status_if_work = pairs > 0 ? 0 : 1;
    if (c->use_opts && o->backend == MPCF_BACKEND_CUDA && !st->has_devices) {
      if (status_if_work == 0) e.errors |= ST(MPCF_ERROR_CUDA_UNAVAILABLE);
      else e.also |= ST(MPCF_ERROR_CUDA_UNAVAILABLE);
    }
    int empty = window_empty_in(o, c->use_opts, c->x->dtype);
    if (c->kind == MAT_CDIST) empty |= window_empty_in(o, c->use_opts, c->y->dtype);
    if (empty) {
      if (status_if_work == 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
      else e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    }
  }
  if (mode == EXEC_NULL_TASK) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  /* the messages are checked when these are the only reasons */
  const unsigned other_errors = e.errors & ~ST(MPCF_ERROR_CUDA_UNAVAILABLE);
  const int mixed = c->kind == MAT_CDIST ? pair_kind_errors(&e, c->x, c->y) : 0;
  kinds = mixed == 1 && other_errors == 0;
  const mpcf_options* oh = c->use_opts ? o->h : NULL;
  char call[64];
  snprintf(call, sizeof call, "%s%s", mat_name(c), mode == EXEC_SYNC ? "" : "_start");

  mpcf_status s;
  mpcf_task* const sentinel = (mpcf_task*)(uintptr_t)0x7a5c;
  mpcf_task* task = sentinel;
  mpcf_task_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (mode == EXEC_SYNC) {
    s = mat_call_sync(c, out, cap, oh);
    if (s == MPCF_OK) check_task_info(call, mpcf_last_task_info(&info), &info, c, st);
  } else {
    s = mat_call_start(c, out, cap, oh, mode == EXEC_NULL_TASK ? NULL : &task);
  }
  unsigned allowed = allowed_of(e);
  /* A start may also hand CUDA's absence to the task. */
  const int deferred_cuda = mode != EXEC_SYNC && e.errors == ST(MPCF_ERROR_CUDA_UNAVAILABLE);
  if (deferred_cuda) allowed |= ST(MPCF_OK);
  check_status(call, s, allowed);
  check_kind_message(call, s, kinds);
  if (s != MPCF_OK) {
    FZ_CHECK(is_canary(buf, cap * esz), "%s failed with %s and still wrote the output buffer", call,
             mpcf_status_name(s));
    FZ_CHECK(task == sentinel, "%s failed and still wrote *task", call);
    free(buf);
    return;
  }

  /* The call was accepted: the result or, from a task, possibly a failure. */
  mpcf_status final = MPCF_OK;
  int either = 0; /* destroyed unfinished: all NaN or the full result */
  if (mode != EXEC_SYNC) {
    FZ_CHECK(task != NULL && task != sentinel, "%s succeeded without a task", call);
    uint64_t last_done = 0;
    switch (mode) {
      case EXEC_POLL: {
        final = MPCF_RUNNING;
        for (int k = 0; k < 3 && final == MPCF_RUNNING; ++k) {
          check_progress(task, &last_done);
          final = mpcf_task_wait(task, poll_timeouts[k]);
        }
        if (final == MPCF_RUNNING) final = mpcf_task_wait(task, -1.0);
        break;
      }
      case EXEC_CANCEL:
        check_status("mpcf_task_cancel", mpcf_task_cancel(task), ST(MPCF_OK));
        final = mpcf_task_wait(task, -1.0);
        check_status("mpcf_task_cancel", mpcf_task_cancel(task), ST(MPCF_OK)); /* after the end: harmless */
        break;
      case EXEC_DESTROY:
        mpcf_task_destroy(task);
        task = NULL;
        either = 1;
        break;
      case EXEC_DROP_INPUT:
        /* "It keeps the collections it reads alive by itself." */
        mpcf_pcfs_destroy(c->x->h);
        c->x->h = NULL;
        if (c->y != NULL && c->y->h != NULL) {
          mpcf_pcfs_destroy(c->y->h);
          c->y->h = NULL;
        }
        final = mpcf_task_wait(task, -1.0);
        slot_recreate(c->x);
        if (c->y != NULL && c->y->h == NULL) slot_recreate(c->y);
        break;
      default:
        final = mpcf_task_wait(task, -1.0);
        break;
    }
    if (task != NULL) {
      unsigned fin = deferred_cuda ? ST(MPCF_ERROR_CUDA_UNAVAILABLE) : ST(MPCF_OK);
      if (mode == EXEC_CANCEL) fin |= ST(MPCF_ERROR_CANCELLED);
      check_status("mpcf_task_wait", final, fin);
      check_status("mpcf_task_status", mpcf_task_status(task), ST(final));
      check_status("mpcf_task_wait", mpcf_task_wait(task, 0.0), ST(final)); /* again: the same */
      check_progress(task, &last_done);
      if (final == MPCF_OK) check_task_info(call, mpcf_task_info_get(task, &info), &info, c, st);
      if (final == MPCF_OK) {
        uint64_t done = 0, total = 0;
        mpcf_task_progress(task, &done, &total);
        FZ_CHECK(done == total && (total > 0 || mat_pairs(c) == 0),
                 "%s: finished with progress %llu / %llu for %llu pairs", call, (unsigned long long)done,
                 (unsigned long long)total, (unsigned long long)mat_pairs(c));
      }
      mpcf_task_destroy(task);
    }
  }
  FZ_CHECK(is_canary((unsigned char*)buf + needed * esz, (cap - needed) * esz),
           "%s wrote beyond the %llu elements of its result", call, (unsigned long long)needed);
  if (either && all_nan(buf, dt, needed) && needed > 0) {
    final = MPCF_ERROR_CANCELLED;
  }
  if (final != MPCF_OK) {
    FZ_CHECK(all_nan(buf, dt, needed), "%s: the task ended with %s but left a non-NaN element", call,
             mpcf_status_name(final));
  } else {
    (void)op;
    check_mat_result(c, buf, needed, o);
  }
  free(buf);
}

/* A slot holding a collection, or NULL (the operation passes a NULL handle). */
static slot* slot_or_null(fz_reader* r, state* st) {
  const unsigned k = fz_u8(r) % (N_SLOTS + 1);
  return k < N_SLOTS && st->s[k].h ? &st->s[k] : NULL;
}

static int layout_code(fz_reader* r) {
  const unsigned c = fz_u8(r);
  if (c < 240) return (int)(c % 3);
  static const int bad[4] = {3, -1, 1000, INT32_MIN};
  return bad[c % 4];
}

/* opcode 5: PDIST x p layout use_opts cap_mode exec_mode [poll timeouts] */
static void op_pdist(fz_reader* r, state* st) {
  mat_call c = {MAT_PDIST, NULL, NULL, 1.0, 0, 0, 1};
  c.x = slot_or_null(r, st);
  c.p = p_code(r);
  c.layout = layout_code(r);
  c.use_opts = !(fz_u8(r) & 1);
  run_mat(r, st, &c);
}

/* opcode 6: L2_KERNEL x layout use_opts cap_mode exec_mode */
static void op_kernel(fz_reader* r, state* st) {
  mat_call c = {MAT_KERNEL, NULL, NULL, 2.0, 0, 0, 1};
  c.x = slot_or_null(r, st);
  c.layout = layout_code(r);
  c.use_opts = !(fz_u8(r) & 1);
  run_mat(r, st, &c);
}

/* opcode 7: CDIST x y metric p use_opts cap_mode exec_mode */
static void op_cdist(fz_reader* r, state* st) {
  mat_call c = {MAT_CDIST, NULL, NULL, 1.0, 0, 0, 1};
  c.x = slot_or_null(r, st);
  c.y = slot_or_null(r, st);
  const unsigned m = fz_u8(r);
  c.metric = m < 240 ? (int)(m % 2) : (m % 2 ? 2 : -1);
  c.p = p_code(r);
  c.use_opts = !(fz_u8(r) & 1);
  run_mat(r, st, &c);
}

/* opcode 8: LP_NORM x p use_opts cap_mode */
static void op_norm(fz_reader* r, state* st) {
  const slot* x = slot_or_null(r, st);
  const double p = p_code(r);
  const int use_opts = !(fz_u8(r) & 1);
  const unsigned cap_mode = fz_u8(r) % 5;
  const uint64_t needed = x ? objs(x) : 0;
  uint64_t cap = needed;
  int null_out = 0;
  if (cap_mode == 1) cap = needed + 2;
  if (cap_mode == 2) cap = needed > 0 ? needed - 1 : 0;
  if (cap_mode == 3) null_out = 1;
  if (cap_mode == 4) null_out = 1, cap = 0;
  const mpcf_dtype dt = x ? x->dtype : MPCF_FLOAT64;
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  void* buf = canary_buffer(cap * esz);
  expect e = {0, 0};
  if (!x || isnan(p) || p < 1) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (x) {
    if (cap < needed) e.errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    if (null_out && needed > 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    if (window_empty_in(&st->o, use_opts, dt)) {
      if (needed > 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
      else e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    }
  }
  const mpcf_status s = mpcf_lp_norm(x ? x->h : NULL, p, null_out ? NULL : buf, cap, use_opts ? st->o.h : NULL);
  check_status("mpcf_lp_norm", s, allowed_of(e));
  if (s != MPCF_OK) {
    FZ_CHECK(is_canary(buf, cap * esz), "mpcf_lp_norm failed and still wrote the output buffer");
    free(buf);
    return;
  }
  FZ_CHECK(is_canary((unsigned char*)buf + needed * esz, (cap - needed) * esz),
           "mpcf_lp_norm wrote beyond its %llu elements", (unsigned long long)needed);
  const op_kind op = distance_kind(p);
  for (uint64_t i = 0; i < needed; ++i) {
    char what[128];
    snprintf(what, sizeof what, "lp_norm(X[%llu]) %s, p = %.17g", (unsigned long long)i,
             dt == MPCF_FLOAT32 ? "float32" : "float64", p);
    pair_ctx c = make_ctx(what, x, x, op, p, &st->o, use_opts);
    const ref_result ref = obj_reference(op, p, x, i, NULL, 0, c.wa, c.wb);
    check_pair_value(&c, element_of(buf, dt, i), &ref);
  }
  free(buf);
}

/* opcode 9: QUERIES x y layout status what: size queries with NULL and bad
 * arguments, status names, version and build information. */
static void op_queries(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  slot* y = slot_or_null(r, st);
  const int layout = layout_code(r);
  const int status_raw = (int)(int8_t)fz_u8(r);
  const unsigned what = fz_u8(r);
  const int null_out = what & 1;
  uint64_t u = UINT64_C(0xA5A5A5A5A5A5A5A5);
  mpcf_status s;
  mpcf_pcfs* xh = x ? x->h : NULL;
  {
    int ok = 1;
    mat_call c = {MAT_PDIST, x, NULL, 1.0, layout, 0, 0};
    const uint64_t need = mat_needed(&c, &ok);
    s = mpcf_pdist_size(xh, (mpcf_layout)layout, null_out ? NULL : &u);
    check_status("mpcf_pdist_size", s, (!x || !ok || null_out) ? ST(MPCF_ERROR_INVALID_ARGUMENT) : ST(MPCF_OK));
    FZ_CHECK(s != MPCF_OK || u == need, "mpcf_pdist_size: %llu, expected %llu", (unsigned long long)u,
             (unsigned long long)need);
    FZ_CHECK(s == MPCF_OK || u == UINT64_C(0xA5A5A5A5A5A5A5A5), "mpcf_pdist_size failed and wrote *out");
  }
  {
    int ok = 1;
    u = UINT64_C(0xA5A5A5A5A5A5A5A5);
    mat_call c = {MAT_KERNEL, x, NULL, 2.0, layout, 0, 0};
    const uint64_t need = mat_needed(&c, &ok);
    s = mpcf_l2_kernel_size(xh, (mpcf_layout)layout, null_out ? NULL : &u);
    check_status("mpcf_l2_kernel_size", s, (!x || !ok || null_out) ? ST(MPCF_ERROR_INVALID_ARGUMENT) : ST(MPCF_OK));
    FZ_CHECK(s != MPCF_OK || u == need, "mpcf_l2_kernel_size: %llu, expected %llu", (unsigned long long)u,
             (unsigned long long)need);
    FZ_CHECK(s == MPCF_OK || u == UINT64_C(0xA5A5A5A5A5A5A5A5), "mpcf_l2_kernel_size failed and wrote *out");
  }
  {
    u = UINT64_C(0xA5A5A5A5A5A5A5A5);
    s = mpcf_cdist_size(xh, y ? y->h : NULL, null_out ? NULL : &u);
    /* The size needs no common dtype: the header does not ask for one. */
    expect ek = {0, 0};
    const int mixed = pair_kind_errors(&ek, x, y);
    check_status("mpcf_cdist_size", s,
                 (!x || !y || null_out || mixed) ? ST(MPCF_ERROR_INVALID_ARGUMENT)
                                                 : ST(MPCF_OK) | ST(MPCF_ERROR_DTYPE_MISMATCH));
    FZ_CHECK(s != MPCF_OK || u == objs(x) * objs(y), "mpcf_cdist_size: %llu, expected %llu", (unsigned long long)u,
             (unsigned long long)(objs(x) * objs(y)));
  }
  /* The reductions' size queries (k = 3, r = 2). */
  {
    const uint64_t n = x ? objs(x) : 0;
    u = UINT64_C(0xA5A5A5A5A5A5A5A5);
    s = mpcf_knn_size(xh, 3, null_out ? NULL : &u);
    check_status("mpcf_knn_size", s, (!x || null_out) ? ST(MPCF_ERROR_INVALID_ARGUMENT) : ST(MPCF_OK));
    FZ_CHECK(s == MPCF_OK ? u == 3 * n : u == UINT64_C(0xA5A5A5A5A5A5A5A5), "mpcf_knn_size: %llu",
             (unsigned long long)u);
    u = UINT64_C(0xA5A5A5A5A5A5A5A5);
    s = mpcf_kernel_matvec_size(xh, 2, null_out ? NULL : &u);
    check_status("mpcf_kernel_matvec_size", s, (!x || null_out) ? ST(MPCF_ERROR_INVALID_ARGUMENT) : ST(MPCF_OK));
    FZ_CHECK(s == MPCF_OK ? u == 2 * n : u == UINT64_C(0xA5A5A5A5A5A5A5A5), "mpcf_kernel_matvec_size: %llu",
             (unsigned long long)u);
  }
  /* Handle queries with NULL arguments. */
  uint64_t v = 7;
  size_t nd = 7;
  mpcf_dtype dt = (mpcf_dtype)7;
  check_status("mpcf_pcfs_count", mpcf_pcfs_count(NULL, &v), ST(MPCF_ERROR_INVALID_ARGUMENT));
  if (xh) {
    check_status("mpcf_pcfs_count", mpcf_pcfs_count(xh, NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
    check_status("mpcf_pcfs_total_breakpoints", mpcf_pcfs_total_breakpoints(xh, NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
    check_status("mpcf_pcfs_dtype", mpcf_pcfs_dtype(xh, NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
    check_status("mpcf_pcfs_ndim", mpcf_pcfs_ndim(xh, NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
    check_status("mpcf_pcfs_shape", mpcf_pcfs_shape(xh, NULL, 32), ST(MPCF_ERROR_INVALID_ARGUMENT));
  }
  check_status("mpcf_pcfs_total_breakpoints", mpcf_pcfs_total_breakpoints(NULL, &v), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_pcfs_dtype", mpcf_pcfs_dtype(NULL, &dt), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_pcfs_ndim", mpcf_pcfs_ndim(NULL, &nd), ST(MPCF_ERROR_INVALID_ARGUMENT));
  FZ_CHECK(v == 7 && nd == 7 && dt == (mpcf_dtype)7, "a failed handle query wrote its output");
  /* Tasks: NULL handles. */
  check_status("mpcf_task_wait", mpcf_task_wait(NULL, 0.0), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_task_status", mpcf_task_status(NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_task_cancel", mpcf_task_cancel(NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_task_progress", mpcf_task_progress(NULL, &v, &v), ST(MPCF_ERROR_INVALID_ARGUMENT));
  mpcf_task_destroy(NULL);
  mpcf_pcfs_destroy(NULL);
  mpcf_options_destroy(NULL);
  check_status("mpcf_options_create", mpcf_options_create(NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
  /* Names and build information: never NULL. */
  for (int k = -1; k <= MPCF_RUNNING + 1; ++k) {
    const int v = k == MPCF_RUNNING + 1 ? status_raw : k;
    const char* name = mpcf_status_name((mpcf_status)v);
    FZ_CHECK(name != NULL && name[0] != '\0', "mpcf_status_name(%d) is NULL or empty", v);
    FZ_CHECK(v < 0 || v > MPCF_RUNNING || strncmp(name, "MPCF_", 5) == 0, "mpcf_status_name(%d) is '%s'", v, name);
  }
  FZ_CHECK(mpcf_version() == MPCF_VERSION, "mpcf_version() %d != MPCF_VERSION %d", mpcf_version(), MPCF_VERSION);
  FZ_CHECK(mpcf_version_string() != NULL && mpcf_build_info() != NULL, "version string or build info is NULL");
  FZ_CHECK(mpcf_last_error_message() != NULL, "mpcf_last_error_message() is NULL");
  (void)mpcf_has_cuda();
}

/* opcode 11: CONCURRENT x p: three tasks on one collection at once (pdist,
 * l2_kernel, cdist of X with itself) while the calling thread computes
 * single pairs; any number of threads may make independent calls. */
static void op_concurrent(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  double p = p_code(r);
  const opts_model* o = &st->o;
  if (x == NULL || objs(x) == 0) return;
  if (isnan(p) || p < 1) p = 1.0;
  if (window_empty_in(o, 1, x->dtype) || (o->backend == MPCF_BACKEND_CUDA && !st->has_devices)) return;
  mat_call calls[3] = {{MAT_PDIST, x, NULL, p, MPCF_LAYOUT_DENSE, 0, 1},
                       {MAT_KERNEL, x, NULL, 2.0, MPCF_LAYOUT_PACKED_LOWER, 0, 1},
                       {MAT_CDIST, x, x, p, 0, MPCF_METRIC_LP_DISTANCE, 1}};
  const size_t esz = x->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  void* bufs[3];
  uint64_t needed[3];
  mpcf_task* tasks[3];
  for (int k = 0; k < 3; ++k) {
    int ok = 1;
    needed[k] = mat_needed(&calls[k], &ok);
    bufs[k] = canary_buffer(needed[k] * esz);
    check_status("a concurrent *_start", mat_call_start(&calls[k], bufs[k], needed[k], o->h, &tasks[k]), ST(MPCF_OK));
  }
  for (uint64_t i = 0; i < objs(x); ++i) (void)pair_value(x, i, x, (i + 1) % objs(x), distance_kind(p), p, o, 1);
  for (int k = 0; k < 3; ++k) {
    check_status("mpcf_task_wait", mpcf_task_wait(tasks[k], -1.0), ST(MPCF_OK));
    mpcf_task_destroy(tasks[k]);
    check_mat_result(&calls[k], bufs[k], needed[k], o);
    free(bufs[k]);
  }
}

/* ------------------------------------------------------------------ */
/* Reductions over the pair plane (mpcf.h: knn, kernel_matvec, streams) */
/* ------------------------------------------------------------------ */

/* The Y argument of a reduction: a collection, or NULL for "X itself"
 * (a NULL handle is not an error there). */
static slot* y_or_self(fz_reader* r, state* st) {
  const unsigned k = fz_u8(r) % (N_SLOTS + 1);
  return k < N_SLOTS && st->s[k].h ? &st->s[k] : NULL;
}

/* Runs a started task the way `mode` says (wait, poll, cancel or destroy)
 * and returns its final status; *destroyed when it was destroyed unfinished
 * (the outputs then hold the full result or NaN everywhere). Checks the
 * status calls and progress on the way. */
static mpcf_status finish_task(mpcf_task* task, exec_mode mode, unsigned allowed_final, int* destroyed) {
  uint64_t last_done = 0;
  mpcf_status final = MPCF_OK;
  *destroyed = 0;
  switch (mode) {
    case EXEC_POLL:
      final = MPCF_RUNNING;
      for (int k = 0; k < 3 && final == MPCF_RUNNING; ++k) {
        check_progress(task, &last_done);
        final = mpcf_task_wait(task, k == 1 ? 1e-4 : 0.0);
      }
      if (final == MPCF_RUNNING) final = mpcf_task_wait(task, -1.0);
      break;
    case EXEC_CANCEL:
      check_status("mpcf_task_cancel", mpcf_task_cancel(task), ST(MPCF_OK));
      final = mpcf_task_wait(task, -1.0);
      allowed_final |= ST(MPCF_ERROR_CANCELLED);
      break;
    case EXEC_DESTROY:
      mpcf_task_destroy(task);
      *destroyed = 1;
      return MPCF_OK;
    default:
      final = mpcf_task_wait(task, -1.0);
      break;
  }
  check_status("mpcf_task_wait", final, allowed_final);
  check_status("mpcf_task_status", mpcf_task_status(task), ST(final));
  check_progress(task, &last_done);
  mpcf_task_destroy(task);
  return final;
}

/* Execution modes of the reductions: sync, wait, poll, cancel, destroy,
 * start with task == NULL. */
static exec_mode reduce_mode(fz_reader* r) { return (exec_mode)(fz_u8(r) % 6); }

/* The errors every reduction shares: backend CUDA without a device, a
 * window empty in the dtype (required when there is work, allowed when not). */
static void backend_window_errors(expect* e, const state* st, int use_opts, mpcf_dtype dt, int work) {
  if (use_opts && st->o.backend == MPCF_BACKEND_CUDA && !st->has_devices) {
    if (work) e->errors |= ST(MPCF_ERROR_CUDA_UNAVAILABLE);
    else e->also |= ST(MPCF_ERROR_CUDA_UNAVAILABLE);
  }
  if (window_empty_in(&st->o, use_opts, dt)) {
    if (work) e->errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    else e->also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  }
}

/* One row's candidates sorted as the header says: ascending by (distance,
 * index), +inf last (distances are never NaN). */
typedef struct knn_entry {
  double d;
  int64_t j;
} knn_entry;

static int knn_less(const void* a, const void* b) {
  const knn_entry* x = a;
  const knn_entry* y = b;
  if (x->d != y->d) return x->d < y->d ? -1 : 1;
  return x->j < y->j ? -1 : (x->j > y->j);
}

/* opcode 12: KNN x y p k use_opts cap_mode exec_mode
 * (y: a slot, or 4 / an empty slot for Y = NULL: X itself) */
static void op_knn(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  slot* y = y_or_self(r, st);
  const double p = p_code(r);
  const unsigned kc = fz_u8(r);
  const uint64_t k = kc < 240 ? kc % 10 : (kc == 240 ? UINT64_MAX : UINT64_C(1) << 32);
  const int use_opts = !(fz_u8(r) & 1);
  const unsigned cap_mode = fz_u8(r) % 6;
  const exec_mode mode = reduce_mode(r);
  const opts_model* o = &st->o;
  const uint64_t nx = x ? objs(x) : 0;
  const uint64_t candidates = y ? objs(y) : (nx > 0 ? nx - 1 : 0);
  const int k_ok = k >= 1 && k <= candidates;
  const uint64_t need = k_ok ? nx * k : 0;
  uint64_t cap = need;
  int null_d = 0, null_i = 0;
  switch (cap_mode) {
    case 1: cap = need + 2; break;
    case 2: cap = need > 0 ? need - 1 : 0; break;
    case 3: cap = 0; break;
    case 4: null_d = 1; break;
    case 5: null_i = 1; break;
    default: break;
  }
  const mpcf_dtype dt = x ? x->dtype : MPCF_FLOAT64;
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  void* dist = canary_buffer(cap * esz);
  int64_t* idx = canary_buffer(cap * sizeof(int64_t));
  expect e = {0, 0};
  if (!x || isnan(p) || p < 1) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (x && y && x->dtype != y->dtype) e.errors |= ST(MPCF_ERROR_DTYPE_MISMATCH);
  pair_kind_errors(&e, x, y);
  if (x && !k_ok) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (x && k_ok) {
    if (cap < need) e.errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    if ((null_d || null_i) && need > 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    backend_window_errors(&e, st, use_opts, dt, need > 0);
    if (y) backend_window_errors(&e, st, use_opts, y->dtype, need > 0);
  }
  if (mode == EXEC_NULL_TASK) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  /* The checks without collections judge p and k as the header says. */
  const int p_ok = !isnan(p) && p >= 1;
  check_status("mpcf_exponent_check", mpcf_exponent_check(p),
               p_ok ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_knn_check",
               mpcf_knn_check(nx, y ? (int64_t)objs(y) : -1, x && x->caxis, p, k),
               p_ok && k_ok ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
  mpcf_options* oh = use_opts ? o->h : NULL;
  mpcf_task* const sentinel = (mpcf_task*)(uintptr_t)0x7a5c;
  mpcf_task* task = sentinel;
  mpcf_status s;
  void* dp = null_d ? NULL : dist;
  int64_t* ip = null_i ? NULL : idx;
  if (mode == EXEC_SYNC) {
    s = mpcf_knn(x ? x->h : NULL, y ? y->h : NULL, p, k, dp, ip, cap, oh);
  } else {
    s = mpcf_knn_start(x ? x->h : NULL, y ? y->h : NULL, p, k, dp, ip, cap, oh,
                       mode == EXEC_NULL_TASK ? NULL : &task);
  }
  check_status(mode == EXEC_SYNC ? "mpcf_knn" : "mpcf_knn_start", s, allowed_of(e));
  if (s != MPCF_OK) {
    FZ_CHECK(is_canary(dist, cap * esz) && is_canary(idx, cap * sizeof(int64_t)) && task == sentinel,
             "mpcf_knn failed with %s and still wrote an output", mpcf_status_name(s));
    free(dist);
    free(idx);
    return;
  }
  mpcf_status final = MPCF_OK;
  int destroyed = 0;
  if (mode != EXEC_SYNC) final = finish_task(task, mode, ST(MPCF_OK), &destroyed);
  FZ_CHECK(is_canary((unsigned char*)dist + need * esz, (cap - need) * esz) &&
               is_canary(idx + need, (cap - need) * sizeof(int64_t)),
           "mpcf_knn wrote beyond its %llu elements", (unsigned long long)need);
  int all_poisoned = 1;
  for (uint64_t q = 0; q < need; ++q) all_poisoned &= isnan(element_of(dist, dt, q)) && idx[q] == -1;
  if (final != MPCF_OK || (destroyed && all_poisoned && need > 0)) {
    FZ_CHECK(all_poisoned, "mpcf_knn ended with %s but left a distance that is not NaN or an index not -1",
             mpcf_status_name(final));
    free(dist);
    free(idx);
    return;
  }
  /* Each row: exactly the k first of all candidates sorted by (d, j). */
  const slot* ys = y ? y : x;
  for (uint64_t i = 0; i < nx; ++i) {
    knn_entry all[MAX_N];
    uint64_t m = 0;
    for (uint64_t j = 0; j < objs(ys); ++j) {
      if (!y && j == i) continue;
      all[m].d = pair_value(x, i, ys, j, distance_kind(p), p, o, use_opts);
      all[m].j = (int64_t)j;
      ++m;
    }
    qsort(all, m, sizeof all[0], knn_less);
    for (uint64_t q = 0; q < k; ++q) {
      const double d = element_of(dist, dt, i * k + q);
      const int64_t j = idx[i * k + q];
      FZ_CHECK(j == all[q].j && same_bits(d, all[q].d, dt),
               "mpcf_knn row %llu, neighbour %llu: (%.17g, %lld), expected (%.17g, %lld)", (unsigned long long)i,
               (unsigned long long)q, d, (long long)j, all[q].d, (long long)all[q].j);
    }
  }
  free(dist);
  free(idx);
}

/* The checks of a call whose header states their order: a stage counts only
 * while every earlier one passed, and the first with an error decides what
 * the call may return (any of that stage's errors, where the header leaves
 * the order within it open). Returns 1 when this stage decided. */
static int then_check(expect* e, unsigned errors, unsigned also) {
  if (e->errors != 0) return 0;
  e->errors = errors;
  e->also |= also;
  return errors != 0;
}

/* One side of mpcf_knn_both: `rows` rows of `k` neighbours among the
 * objects of `cands`, in a distances and an indices buffer of `cap`
 * elements each (either passed as NULL when null_d / null_i). */
typedef struct knn_side {
  const char* name; /* "x" or "y", as the arguments are named */
  slot* rows_of;
  slot* cands;
  uint64_t k, need, cap;
  int k_ok, null_d, null_i;
  void* dist;
  int64_t* idx;
} knn_side;

/* opcode 16: KNN_BOTH x y p k_x k_y use_opts cap_mode exec_mode
 * (y: a slot; 4 or an empty slot passes Y = NULL, which mpcf_knn_both
 * refuses; k_x, k_y as KNN's k; cap_mode mod 8: 0 exact, 1 both sides 2
 * more, 2 x_capacity one short, 3 y_capacity one short, 4..7 NULL
 * x_distances, x_indices, y_distances, y_indices). Checked as op_knn, on
 * both sides: the x side against the rows of X among Y (indices into Y),
 * the y side against the rows of Y among X (indices into X), each
 * mpcf_knn(X, Y, k_x) / mpcf_knn(Y, X, k_y) bit for bit. */
static void op_knn_both(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  slot* y = slot_or_null(r, st);
  const double p = p_code(r);
  uint64_t kk[2];
  for (int q = 0; q < 2; ++q) {
    const unsigned kc = fz_u8(r);
    kk[q] = kc < 240 ? kc % 10 : (kc == 240 ? UINT64_MAX : UINT64_C(1) << 32);
  }
  const int use_opts = !(fz_u8(r) & 1);
  const unsigned cap_mode = fz_u8(r) % 8;
  const exec_mode mode = reduce_mode(r);
  const opts_model* o = &st->o;
  const uint64_t nx = x ? objs(x) : 0, ny = y ? objs(y) : 0;
  const mpcf_dtype dt = x ? x->dtype : MPCF_FLOAT64;
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  knn_side sd[2];
  for (int q = 0; q < 2; ++q) {
    knn_side* s = &sd[q];
    s->name = q ? "y" : "x";
    s->rows_of = q ? y : x;
    s->cands = q ? x : y;
    s->k = kk[q];
    /* k_x among the objects of Y, k_y among those of X */
    s->k_ok = s->k >= 1 && s->k <= (q ? nx : ny);
    s->need = s->k_ok ? (q ? ny : nx) * s->k : 0;
    s->cap = s->need;
    s->null_d = s->null_i = 0;
  }
  switch (cap_mode) {
    case 1: sd[0].cap += 2, sd[1].cap += 2; break;
    case 2: sd[0].cap = sd[0].need > 0 ? sd[0].need - 1 : 0; break;
    case 3: sd[1].cap = sd[1].need > 0 ? sd[1].need - 1 : 0; break;
    case 4: sd[0].null_d = 1; break;
    case 5: sd[0].null_i = 1; break;
    case 6: sd[1].null_d = 1; break;
    case 7: sd[1].null_i = 1; break;
    default: break;
  }
  for (int q = 0; q < 2; ++q) {
    sd[q].dist = canary_buffer(sd[q].cap * esz);
    sd[q].idx = canary_buffer(sd[q].cap * sizeof(int64_t));
  }

  /* mpcf.h's order: X, Y and their pairing, p, k_x, k_y, the outputs; the
   * task pointer of a start comes first, backend and window last. */
  expect e = {0, 0};
  if (mode == EXEC_NULL_TASK) then_check(&e, ST(MPCF_ERROR_INVALID_ARGUMENT), 0);
  then_check(&e, !x || !y ? ST(MPCF_ERROR_INVALID_ARGUMENT) : 0, 0);
  expect pairing = {0, 0};
  int kinds = 0;
  if (x && y) {
    if (x->dtype != y->dtype) pairing.errors |= ST(MPCF_ERROR_DTYPE_MISMATCH);
    kinds = pair_kind_errors(&pairing, x, y);
  }
  const int pairing_decides = then_check(&e, pairing.errors, 0);
  const int p_ok = !isnan(p) && p >= 1;
  then_check(&e, p_ok ? 0 : ST(MPCF_ERROR_INVALID_ARGUMENT), 0);
  const int kx_decides = then_check(&e, sd[0].k_ok ? 0 : ST(MPCF_ERROR_INVALID_ARGUMENT), 0);
  const int ky_decides = then_check(&e, sd[1].k_ok ? 0 : ST(MPCF_ERROR_INVALID_ARGUMENT), 0);
  unsigned out_errors = 0;
  for (int q = 0; q < 2; ++q) {
    if (sd[q].cap < sd[q].need) out_errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    if ((sd[q].null_d || sd[q].null_i) && sd[q].need > 0) out_errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  }
  then_check(&e, out_errors, 0);
  const int args_pass = e.errors == 0;
  if (x && y) {
    expect bw = {0, 0};
    backend_window_errors(&bw, st, use_opts, x->dtype, sd[0].need > 0);
    backend_window_errors(&bw, st, use_opts, y->dtype, sd[0].need > 0);
    then_check(&e, bw.errors, bw.also);
  }
  /* The collection-free check judges p and each side's k the same way. */
  if (x && y) {
    check_status("mpcf_knn_check", mpcf_knn_check(nx, (int64_t)ny, x->caxis, p, kk[0]),
                 p_ok && sd[0].k_ok ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
    check_status("mpcf_knn_check", mpcf_knn_check(ny, (int64_t)nx, y->caxis, p, kk[1]),
                 p_ok && sd[1].k_ok ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
  }

  mpcf_options* oh = use_opts ? o->h : NULL;
  mpcf_task* const sentinel = (mpcf_task*)(uintptr_t)0x7a5c;
  mpcf_task* task = sentinel;
  void* dp[2];
  int64_t* ip[2];
  for (int q = 0; q < 2; ++q) {
    dp[q] = sd[q].null_d ? NULL : sd[q].dist;
    ip[q] = sd[q].null_i ? NULL : sd[q].idx;
  }
  const char* call = mode == EXEC_SYNC ? "mpcf_knn_both" : "mpcf_knn_both_start";
  mpcf_status s;
  if (mode == EXEC_SYNC) {
    s = mpcf_knn_both(x ? x->h : NULL, y ? y->h : NULL, p, kk[0], kk[1], dp[0], ip[0], sd[0].cap, dp[1], ip[1],
                      sd[1].cap, oh);
  } else {
    s = mpcf_knn_both_start(x ? x->h : NULL, y ? y->h : NULL, p, kk[0], kk[1], dp[0], ip[0], sd[0].cap, dp[1],
                            ip[1], sd[1].cap, oh, mode == EXEC_NULL_TASK ? NULL : &task);
  }
  check_status(call, s, allowed_of(e));
  if (tracing()) {
    fprintf(stderr, "  %s(k_x %llu, k_y %llu, capacities %llu %llu): %s %s\n", call, (unsigned long long)kk[0],
            (unsigned long long)kk[1], (unsigned long long)sd[0].cap, (unsigned long long)sd[1].cap,
            mpcf_status_name(s), s == MPCF_OK ? "" : mpcf_last_error_message());
  }
  /* The message names the argument (mpcf.h): the side whose k is wrong, or
   * both kinds of functions. */
  if (s == MPCF_ERROR_INVALID_ARGUMENT && (kx_decides || ky_decides)) {
    const char* want = kx_decides ? "k_x" : "k_y";
    FZ_CHECK(strstr(mpcf_last_error_message(), want) != NULL, "%s refused %s = %llu without naming it: '%s'",
             call, want, (unsigned long long)(kx_decides ? kk[0] : kk[1]), mpcf_last_error_message());
  }
  if (pairing_decides && x->dtype == y->dtype) check_kind_message(call, s, kinds);
  if (s != MPCF_OK) {
    for (int q = 0; q < 2; ++q) {
      FZ_CHECK(is_canary(sd[q].dist, sd[q].cap * esz) && is_canary(sd[q].idx, sd[q].cap * sizeof(int64_t)),
               "%s failed with %s and still wrote an output of the %s side", call, mpcf_status_name(s), sd[q].name);
    }
    FZ_CHECK(task == sentinel, "%s failed with %s and still wrote *task", call, mpcf_status_name(s));
    /* A synchronous call that failed its argument checks leaves no record. */
    if (mode == EXEC_SYNC && !args_pass) {
      mpcf_task_info info;
      memset(&info, 0, sizeof info);
      info.struct_size = sizeof info;
      check_status("mpcf_last_task_info", mpcf_last_task_info(&info), ST(MPCF_ERROR_INVALID_ARGUMENT));
    }
    for (int q = 0; q < 2; ++q) free(sd[q].dist), free(sd[q].idx);
    return;
  }

  mpcf_status final = MPCF_OK;
  int destroyed = 0;
  if (mode == EXEC_SYNC) {
    /* One pass over X x Y: the merge steps of a cdist of X and Y. */
    const mat_call mc = {MAT_CDIST, x, y, p, 0, MPCF_METRIC_LP_DISTANCE, use_opts};
    mpcf_task_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    check_task_info(call, mpcf_last_task_info(&info), &info, &mc, st);
  } else {
    FZ_CHECK(task != NULL && task != sentinel, "%s succeeded without a task", call);
    final = finish_task(task, mode, ST(MPCF_OK), &destroyed);
  }
  int all_poisoned = 1;
  for (int q = 0; q < 2; ++q) {
    const knn_side* sq = &sd[q];
    FZ_CHECK(is_canary((unsigned char*)sq->dist + sq->need * esz, (sq->cap - sq->need) * esz) &&
                 is_canary(sq->idx + sq->need, (sq->cap - sq->need) * sizeof(int64_t)),
             "%s wrote beyond the %llu elements of its %s side", call, (unsigned long long)sq->need, sq->name);
    for (uint64_t k = 0; k < sq->need; ++k) all_poisoned &= isnan(element_of(sq->dist, dt, k)) && sq->idx[k] == -1;
  }
  /* Destroyed unfinished: the full result or NaN / -1 everywhere. */
  if (final != MPCF_OK || (destroyed && all_poisoned && sd[0].need + sd[1].need > 0)) {
    FZ_CHECK(all_poisoned, "%s ended with %s but left a distance that is not NaN or an index not -1", call,
             mpcf_status_name(final));
    for (int q = 0; q < 2; ++q) free(sd[q].dist), free(sd[q].idx);
    return;
  }
  /* Each row of each side: exactly the k first of all its candidates
   * sorted by (d, j), d the single-pair value of (row, candidate), as
   * mpcf_knn of that side gives it. */
  for (int q = 0; q < 2; ++q) {
    const knn_side* sq = &sd[q];
    for (uint64_t i = 0; i < objs(sq->rows_of); ++i) {
      knn_entry all[MAX_N];
      uint64_t m = 0;
      for (uint64_t j = 0; j < objs(sq->cands); ++j) {
        all[m].d = pair_value(sq->rows_of, i, sq->cands, j, distance_kind(p), p, o, use_opts);
        all[m].j = (int64_t)j;
        ++m;
      }
      qsort(all, m, sizeof all[0], knn_less);
      for (uint64_t c = 0; c < sq->k; ++c) {
        const double d = element_of(sq->dist, dt, i * sq->k + c);
        const int64_t j = sq->idx[i * sq->k + c];
        FZ_CHECK(j == all[c].j && same_bits(d, all[c].d, dt),
                 "%s, %s side, row %llu, neighbour %llu: (%.17g, %lld), expected (%.17g, %lld)", call, sq->name,
                 (unsigned long long)i, (unsigned long long)c, d, (long long)j, all[c].d, (long long)all[c].j);
      }
    }
  }
  for (int q = 0; q < 2; ++q) free(sd[q].dist), free(sd[q].idx);
}

/* ------------------------------------------------------------------ */
/* Merging neighbour lists                                              */
/* ------------------------------------------------------------------ */

/* The order of every knn result (mpcf.h): ascending by distance, NaN after
 * +inf, equal distances (-0 == +0, any NaN equal to any NaN) by index. */
static int neighbour_cmp(double da, int64_t ja, double db, int64_t jb) {
  const int an = isnan(da), bn = isnan(db);
  if (an != bn) return an ? 1 : -1;
  if (!an && da != db) return da < db ? -1 : 1;
  return ja < jb ? -1 : (ja > jb);
}

/* An entry of a neighbour list, with where it came from: with equal
 * (distance, index), mpcf_knn_merge keeps a's entries before b's, each
 * list in its own order, so the reference sorts by (distance, index,
 * list, position). `raw` holds the stored bytes, copied bit for bit. */
typedef struct merge_entry {
  double d; /* the stored value (float32 widened exactly) */
  int64_t j;
  unsigned src; /* 0: a, 1: b */
  uint64_t pos;
  unsigned char raw[8];
} merge_entry;

static int merge_entry_cmp(const void* pa, const void* pb) {
  const merge_entry* a = pa;
  const merge_entry* b = pb;
  const int c = neighbour_cmp(a->d, a->j, b->d, b->j);
  if (c != 0) return c;
  if (a->src != b->src) return a->src < b->src ? -1 : 1;
  return a->pos < b->pos ? -1 : (a->pos > b->pos);
}

/* A distance of a generated list (16 codes, many ties, -0, +-inf, NaN,
 * values that overflow or underflow float32). */
static double merge_distance_code(fz_reader* r) {
  switch (fz_u8(r) % 16) {
    case 0: return 0.0;
    case 1: return 0.5;
    case 2:
    case 3: return 1.0;
    case 4: return 2.0;
    case 5: return 3.0;
    case 6: return -0.0;
    case 7: return INFINITY;
    case 8: return NAN;
    case 9: return 1e300; /* +inf in float32 */
    case 10: return -1.0;
    case 11: return 1e-45; /* the smallest float32 subnormal */
    case 12: return -INFINITY;
    case 13: return 1.0 + DBL_EPSILON; /* 1 in float32 */
    case 14: return value_code(r);
    default: return fz_raw_f64(r);
  }
}

/* An index of a generated list: 0..7 mostly (ties), some large ones. */
static int64_t merge_index_code(fz_reader* r) {
  const unsigned c = fz_u8(r);
  if (c < 240) return (int64_t)(c % 8);
  if (c == 240) return INT64_MAX;
  if (c == 241) return INT64_C(1) << 40;
  return (int64_t)c - 232; /* 10..23 */
}

/* a b, with *over set when it does not fit 64 bits. */
static uint64_t mul_over(uint64_t a, uint64_t b, int* over) {
  if (a != 0 && b > UINT64_MAX / a) {
    *over = 1;
    return UINT64_MAX;
  }
  return a * b;
}

/* Whether [p, p + pb) and [q, q + qb) share a byte (NULL or empty: no). */
static int ranges_overlap(const unsigned char* p, uint64_t pb, const unsigned char* q, uint64_t qb) {
  if (p == NULL || q == NULL || pb == 0 || qb == 0) return 0;
  const uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
  return a < b + qb && b < a + pb;
}

/* The six buffers of mpcf_knn_merge, in one canary-filled arena (so that an
 * output may be placed inside an input, and any byte written anywhere is
 * seen). */
enum { MG_AD, MG_AI, MG_BD, MG_BI, MG_OD, MG_OI, MG_REGIONS };
static const char* const MG_NAMES[MG_REGIONS] = {"a_distances", "a_indices", "b_distances",
                                                  "b_indices",   "distances", "indices"};

enum { MG_MAX_K = 8 }; /* a_k, b_k of a list the fuzzer builds */

/* opcode 17: KNN_MERGE dtype rows a_k b_k k cap_mode flags [overlap]
 * [bad kind, bad where] then the entries of a (rows x a_k) and of b (rows x
 * b_k), each a distance code and an index code; every row is sorted by the
 * header's order once generated.
 *   dtype: as CREATE (bit 7: the raw value dtype & 0x7f; else bit 0
 *     float32); rows: < 240 mod 9, 240 2^32, 241 2^62, 242 2^63, else
 *     2^64 - 1 (such lists are not built: the call must fail before reading
 *     them); a_k, b_k: < 240 mod 9, 240 2^64 - 1, else 2^63 (not built: passed
 *     NULL when rows > 0); k: < 240 mod (a_k + b_k + 2) (mod 10 for a huge
 *     list), 240 2^64 - 1, 241 2^63, 242 a_k + b_k, else a_k + b_k + 1
 *     (wrapping); cap_mode mod 4: exact, 2 more, one short, 0.
 *   flags: bits 0..5 pass NULL for a_distances, a_indices, b_distances,
 *     b_indices, distances, indices; 64: an overlap byte follows (mod 6:
 *     distances at a_distances, indices at a_indices, distances at
 *     b_distances, indices at b_indices, indices at distances, distances at
 *     a_indices; plus 8 ((byte / 6) mod 4) bytes); 128: a kind (mod 5: swap
 *     an entry with its neighbour in the row, index -1, index INT64_MIN,
 *     distance -inf, distance NaN) and a where byte (bit 0: list b; the
 *     rest: the entry) follow, which spoil one entry after the sort. */
static void op_knn_merge(fz_reader* r, state* st) {
  (void)st;
  const unsigned dcode = fz_u8(r);
  const int dtype_raw = (dcode & 0x80) ? (int)(dcode & 0x7f) : ((dcode & 1) ? MPCF_FLOAT32 : MPCF_FLOAT64);
  const int dtype_ok = dtype_raw == MPCF_FLOAT32 || dtype_raw == MPCF_FLOAT64;
  const mpcf_dtype dt = dtype_raw == MPCF_FLOAT32 ? MPCF_FLOAT32 : MPCF_FLOAT64;
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  const unsigned rc = fz_u8(r);
  static const uint64_t huge_rows[4] = {UINT64_C(1) << 32, UINT64_C(1) << 62, UINT64_C(1) << 63, UINT64_MAX};
  const uint64_t rows = rc < 240 ? rc % (MAX_N + 1) : huge_rows[rc < 243 ? rc - 240 : 3];
  uint64_t lk[2]; /* a_k, b_k */
  for (int q = 0; q < 2; ++q) {
    const unsigned c = fz_u8(r);
    lk[q] = c < 240 ? c % (MG_MAX_K + 1) : (c == 240 ? UINT64_MAX : UINT64_C(1) << 63);
  }
  const int small_lists = lk[0] <= MG_MAX_K && lk[1] <= MG_MAX_K;
  const unsigned kc = fz_u8(r);
  uint64_t k;
  if (kc < 240) k = small_lists ? kc % (lk[0] + lk[1] + 2) : kc % 10;
  else if (kc == 240) k = UINT64_MAX;
  else if (kc == 241) k = UINT64_C(1) << 63;
  else if (kc == 242) k = lk[0] + lk[1];
  else k = lk[0] + lk[1] + 1;
  const unsigned cap_mode = fz_u8(r) % 4;
  const unsigned flags = fz_u8(r);
  const unsigned ov = (flags & 64) ? fz_u8(r) : 0;
  const unsigned bad_kind = (flags & 128) ? fz_u8(r) % 5 : 0;
  const unsigned bad_at = (flags & 128) ? fz_u8(r) : 0;

  /* The lists built: every row when there are at most MAX_N, else one
   * (the call must refuse such a count before reading). */
  const uint64_t mrows = rows <= MAX_N ? rows : 1;
  uint64_t mk[2], built[2];
  merge_entry list[2][MAX_N * MG_MAX_K];
  for (int q = 0; q < 2; ++q) {
    mk[q] = lk[q] <= MG_MAX_K ? lk[q] : 0;
    built[q] = mrows * mk[q];
    for (uint64_t e = 0; e < built[q]; ++e) {
      merge_entry* en = &list[q][e];
      en->d = in_dtype(dt, merge_distance_code(r));
      en->j = merge_index_code(r);
      en->src = (unsigned)q;
      en->pos = 0;
    }
    for (uint64_t row = 0; row < mrows && mk[q] > 0; ++row) {
      qsort(list[q] + row * mk[q], mk[q], sizeof(merge_entry), merge_entry_cmp);
    }
  }
  if ((flags & 128) && built[bad_at & 1] > 0) {
    const unsigned q = bad_at & 1;
    const uint64_t e = (bad_at >> 1) % built[q], col = e % mk[q];
    merge_entry* en = &list[q][e];
    switch (bad_kind) {
      case 0: {
        /* with the next entry of its row (or the one before) */
        const uint64_t other = col + 1 < mk[q] ? e + 1 : (col > 0 ? e - 1 : e);
        const merge_entry t = list[q][other];
        list[q][other] = *en;
        *en = t;
        break;
      }
      case 1: en->j = -1; break;
      case 2: en->j = INT64_MIN; break;
      case 3: en->d = -INFINITY; break;
      default: en->d = NAN; break;
    }
  }
  for (int q = 0; q < 2; ++q) {
    for (uint64_t e = 0; e < built[q]; ++e) {
      merge_entry* en = &list[q][e];
      en->pos = e % mk[q];
      memset(en->raw, 0, sizeof en->raw);
      if (esz == sizeof(float)) {
        const float f = (float)en->d;
        memcpy(en->raw, &f, sizeof f);
      } else {
        memcpy(en->raw, &en->d, sizeof en->d);
      }
    }
  }

  /* What the header says, in its order: dtype, k, the buffers (sizes that
   * exist, NULL inputs, the outputs' capacity and NULL, overlaps), then the
   * rows of a and b. */
  int over[3] = {0, 0, 0};
  const uint64_t count[2] = {mul_over(rows, lk[0], &over[0]), mul_over(rows, lk[1], &over[1])};
  const uint64_t need = mul_over(rows, k, &over[2]);
  const uint64_t base = over[2] || need > 256 ? 16 : need;
  uint64_t cap = base;
  switch (cap_mode) {
    case 1: cap = base + 2; break;
    case 2: cap = base > 0 ? base - 1 : 0; break;
    case 3: cap = 0; break;
    default: break;
  }

  /* The arena: each region after a 16-byte gap, 8-aligned, then room for an
   * output moved into an earlier region. */
  uint64_t bytes[MG_REGIONS], at[MG_REGIONS];
  bytes[MG_AD] = built[0] * esz;
  bytes[MG_AI] = built[0] * sizeof(int64_t);
  bytes[MG_BD] = built[1] * esz;
  bytes[MG_BI] = built[1] * sizeof(int64_t);
  bytes[MG_OD] = cap * esz;
  bytes[MG_OI] = cap * sizeof(int64_t);
  uint64_t total = 0;
  for (int g = 0; g < MG_REGIONS; ++g) {
    at[g] = (total + 16 + 7) / 8 * 8;
    total = at[g] + bytes[g];
  }
  total += 16 + 32 + bytes[MG_OD] + bytes[MG_OI];
  unsigned char* arena = canary_buffer(total);
  for (int q = 0; q < 2; ++q) {
    for (uint64_t e = 0; e < built[q]; ++e) {
      memcpy(arena + at[q ? MG_BD : MG_AD] + e * esz, list[q][e].raw, esz);
      memcpy(arena + at[q ? MG_BI : MG_AI] + e * sizeof(int64_t), &list[q][e].j, sizeof(int64_t));
    }
  }
  unsigned char* ptr[MG_REGIONS];
  for (int g = 0; g < MG_REGIONS; ++g) ptr[g] = (flags & (1u << g)) ? NULL : arena + at[g];
  /* A list too long to exist here is passed as NULL (the call then must
   * refuse it before reading). */
  for (int q = 0; q < 2; ++q) {
    if (lk[q] > MG_MAX_K && rows > 0) ptr[q ? MG_BD : MG_AD] = ptr[q ? MG_BI : MG_AI] = NULL;
  }
  if (flags & 64) {
    static const int target[6] = {MG_OD, MG_OI, MG_OD, MG_OI, MG_OI, MG_OD};
    static const int into[6] = {MG_AD, MG_AI, MG_BD, MG_BI, MG_OD, MG_AI};
    const unsigned w = ov % 6;
    const uint64_t shift = 8 * ((ov / 6) % 4);
    if (ptr[target[w]] != NULL && at[into[w]] + shift + bytes[target[w]] <= total) {
      ptr[target[w]] = arena + at[into[w]] + shift;
    }
  }

  expect ex = {0, 0};
  then_check(&ex, dtype_ok ? 0 : ST(MPCF_ERROR_INVALID_ARGUMENT), 0);
  const int k_ok = k >= 1 && (k <= lk[1] || k - lk[1] <= lk[0]);
  then_check(&ex, k_ok ? 0 : ST(MPCF_ERROR_INVALID_ARGUMENT), 0);
  /* A count past 64 bits: too large to exist, or more than any capacity. */
  then_check(&ex, over[0] || over[1] || over[2] ? ST(MPCF_ERROR_INVALID_ARGUMENT) | ST(MPCF_ERROR_BUFFER_TOO_SMALL) : 0,
             0);
  unsigned in_errors = 0;
  if (count[0] > 0 && (ptr[MG_AD] == NULL || ptr[MG_AI] == NULL)) in_errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (count[1] > 0 && (ptr[MG_BD] == NULL || ptr[MG_BI] == NULL)) in_errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  then_check(&ex, in_errors, 0);
  unsigned out_errors = 0;
  if (cap < need) out_errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
  if (need > 0 && (ptr[MG_OD] == NULL || ptr[MG_OI] == NULL)) out_errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  then_check(&ex, out_errors, 0);
  if (ex.errors == 0) {
    /* Everything is small now: rows <= MAX_N, the lists built, need <= cap.
     * The outputs are rows x k elements; an overlap of their capacity
     * beyond that alone is left open by the header. */
    const uint64_t in_bytes[4] = {count[0] * esz, count[0] * sizeof(int64_t), count[1] * esz,
                                  count[1] * sizeof(int64_t)};
    int written = 0, spare = 0;
    for (int g = 0; g < 4; ++g) {
      written |= ranges_overlap(ptr[MG_OD], need * esz, ptr[g], in_bytes[g]) ||
                 ranges_overlap(ptr[MG_OI], need * sizeof(int64_t), ptr[g], in_bytes[g]);
      spare |= ranges_overlap(ptr[MG_OD], cap * esz, ptr[g], in_bytes[g]) ||
               ranges_overlap(ptr[MG_OI], cap * sizeof(int64_t), ptr[g], in_bytes[g]);
    }
    written |= ranges_overlap(ptr[MG_OD], need * esz, ptr[MG_OI], need * sizeof(int64_t));
    spare |= ranges_overlap(ptr[MG_OD], cap * esz, ptr[MG_OI], cap * sizeof(int64_t));
    then_check(&ex, written ? ST(MPCF_ERROR_INVALID_ARGUMENT) : 0, spare ? ST(MPCF_ERROR_INVALID_ARGUMENT) : 0);
  }
  if (ex.errors == 0) {
    /* Every row of a, then of b: indices >= 0, ascending by (d, j). */
    int bad = 0;
    for (int q = 0; q < 2 && !bad; ++q) {
      for (uint64_t e = 0; e < count[q] && !bad; ++e) {
        const merge_entry* en = &list[q][e];
        bad = en->j < 0 || (e % mk[q] > 0 && neighbour_cmp(en->d, en->j, en[-1].d, en[-1].j) < 0);
      }
    }
    then_check(&ex, bad ? ST(MPCF_ERROR_INVALID_ARGUMENT) : 0, 0);
  }
  if (tracing()) {
    fprintf(stderr, "  knn_merge: dtype %d, rows %llu, a_k %llu, b_k %llu, k %llu, capacity %llu, NULL mask %u\n",
            dtype_raw, (unsigned long long)rows, (unsigned long long)lk[0], (unsigned long long)lk[1],
            (unsigned long long)k, (unsigned long long)cap, flags & 63);
    for (int q = 0; q < 2; ++q) {
      for (uint64_t row = 0; row < mrows && mk[q] > 0; ++row) {
        fprintf(stderr, "    %c[%llu]:", q ? 'b' : 'a', (unsigned long long)row);
        for (uint64_t c = 0; c < mk[q]; ++c) {
          const merge_entry* en = &list[q][row * mk[q] + c];
          fprintf(stderr, " (%.9g, %lld)", en->d, (long long)en->j);
        }
        fputc('\n', stderr);
      }
    }
  }

  unsigned char* before = malloc(total);
  if (before == NULL) abort();
  memcpy(before, arena, total);
  const mpcf_status s =
      mpcf_knn_merge((mpcf_dtype)dtype_raw, rows, k, ptr[MG_AD], (const int64_t*)(void*)ptr[MG_AI], lk[0], ptr[MG_BD],
                     (const int64_t*)(void*)ptr[MG_BI], lk[1], ptr[MG_OD], (int64_t*)(void*)ptr[MG_OI], cap);
  check_status("mpcf_knn_merge", s, allowed_of(ex));
  if (tracing()) fprintf(stderr, "  -> %s %s\n", mpcf_status_name(s), s == MPCF_OK ? "" : mpcf_last_error_message());
  if (s != MPCF_OK) {
    for (uint64_t b = 0; b < total; ++b) {
      FZ_CHECK(arena[b] == before[b], "mpcf_knn_merge failed with %s and still wrote byte %llu of its buffers",
               mpcf_status_name(s), (unsigned long long)b);
    }
    free(before);
    free(arena);
    return;
  }
  /* The expected bytes: the inputs and every canary as they were, each row
   * of the outputs the k first of a's row and b's row sorted together. */
  unsigned char* want = before;
  for (uint64_t row = 0; row < rows && need > 0; ++row) {
    merge_entry all[2 * MG_MAX_K];
    uint64_t m = 0;
    for (int q = 0; q < 2; ++q) {
      for (uint64_t c = 0; c < mk[q]; ++c) all[m++] = list[q][row * mk[q] + c];
    }
    qsort(all, m, sizeof all[0], merge_entry_cmp);
    for (uint64_t c = 0; c < k; ++c) {
      memcpy(want + (ptr[MG_OD] - arena) + (row * k + c) * esz, all[c].raw, esz);
      memcpy(want + (ptr[MG_OI] - arena) + (row * k + c) * sizeof(int64_t), &all[c].j, sizeof(int64_t));
    }
  }
  for (uint64_t b = 0; b < total; ++b) {
    if (arena[b] == want[b]) continue;
    /* Name the first wrong byte: an output element, or a byte that was not
     * to change. */
    for (int g = MG_OD; g <= MG_OI; ++g) {
      const uint64_t w = g == MG_OD ? esz : sizeof(int64_t);
      if (ptr[g] == NULL || b < (uint64_t)(ptr[g] - arena) || b >= (uint64_t)(ptr[g] - arena) + need * w) continue;
      const uint64_t el = (b - (uint64_t)(ptr[g] - arena)) / w;
      const double got_d = element_of(ptr[MG_OD], dt, el), want_d = element_of(want + (ptr[MG_OD] - arena), dt, el);
      int64_t got_j, want_j;
      memcpy(&got_j, ptr[MG_OI] + el * sizeof(int64_t), sizeof got_j);
      memcpy(&want_j, want + (ptr[MG_OI] - arena) + el * sizeof(int64_t), sizeof want_j);
      fz_fail(__FILE__, __LINE__, "mpcf_knn_merge row %llu, entry %llu: %s (%.17g, %lld), expected (%.17g, %lld)",
              (unsigned long long)(el / k), (unsigned long long)(el % k), MG_NAMES[g], got_d, (long long)got_j,
              want_d, (long long)want_j);
    }
    fz_fail(__FILE__, __LINE__, "mpcf_knn_merge wrote byte %llu of its buffers, outside the %llu elements of its result",
            (unsigned long long)b, (unsigned long long)need);
  }
  free(before);
  free(arena);
}

/* What a stream's callback saw. */
typedef struct stream_log {
  mpcf_dtype dtype;
  uint64_t nrows, ncols;
  int pdist;
  double v[MAX_N][MAX_N];
  unsigned count[MAX_N][MAX_N];
  int calls, cancel_at; /* cancel_at: return non-zero on that call (0: never) */
  volatile int inside;
  /* nested: the first call runs a synchronous pdist stream of `nested_x`
     inside the callback and checks that its own block did not change;
     own: the first call asks to wait for and destroy its own task (refused,
     mpcf.h) once the start call has returned the handle. */
  int nested, own;
  const mpcf_pcfs* nested_x;
  const mpcf_options* nested_o;
  mpcf_task* volatile task;
} stream_log;

static int nested_callback(const mpcf_block* b, void* user) {
  (void)b;
  (void)user;
  return 0;
}

static int stream_callback(const mpcf_block* b, void* user) {
  stream_log* L = user;
  FZ_CHECK(!L->inside, "a stream callback runs while another one has not returned");
  L->inside = 1;
  ++L->calls;
  FZ_CHECK(b != NULL && b->dtype == L->dtype, "a stream block has the wrong dtype");
  FZ_CHECK(b->row_begin < b->row_end && b->row_end <= L->nrows && b->col_begin < b->col_end &&
               b->col_end <= L->ncols && b->values != NULL,
           "a stream block [%llu, %llu) x [%llu, %llu) lies outside the %llu x %llu result",
           (unsigned long long)b->row_begin, (unsigned long long)b->row_end, (unsigned long long)b->col_begin,
           (unsigned long long)b->col_end, (unsigned long long)L->nrows, (unsigned long long)L->ncols);
  const uint64_t w = b->col_end - b->col_begin;
  const int diagonal = L->pdist && b->row_begin == b->col_begin && b->row_end == b->col_end;
  if (L->pdist) {
    FZ_CHECK(b->row_begin >= b->col_begin, "a pdist stream block starts above the diagonal");
    FZ_CHECK(diagonal || b->row_begin >= b->col_end, "a pdist stream block straddles the diagonal unsquared");
  }
  for (uint64_t i = b->row_begin; i < b->row_end; ++i) {
    for (uint64_t j = b->col_begin; j < b->col_end; ++j) {
      const double x = element_of(b->values, L->dtype, (i - b->row_begin) * w + (j - b->col_begin));
      L->v[i][j] = x;
      ++L->count[i][j];
      if (L->pdist && !diagonal) {
        L->v[j][i] = x;
        ++L->count[j][i];
      }
    }
  }
  if (L->calls == 1 && L->nested && L->nested_x) {
    /* The values must stay valid and unchanged until this call returns,
       whatever it calls (mpcf.h); the nested stream's own status does not
       matter here (its options may be refused). */
    const size_t bytes = (size_t)((b->row_end - b->row_begin) * w) * (L->dtype == MPCF_FLOAT32 ? 4 : 8);
    unsigned char* before = malloc(bytes);
    FZ_CHECK(before != NULL, "out of memory");
    memcpy(before, b->values, bytes);
    L->inside = 0;
    (void)mpcf_pdist_stream(L->nested_x, 1.0, nested_callback, NULL, L->nested_o);
    L->inside = 1;
    FZ_CHECK(memcmp(before, b->values, bytes) == 0, "a stream block changed while its callback ran a nested stream");
    free(before);
  }
  if (L->calls == 1 && L->own && L->task != NULL) {
    mpcf_task* t = L->task;
    FZ_CHECK(mpcf_task_wait(t, 0.0) == MPCF_ERROR_INVALID_ARGUMENT,
             "mpcf_task_wait of its own task from a callback was not refused");
    mpcf_task_destroy(t); /* refused: the task runs on */
    FZ_CHECK(strstr(mpcf_last_error_message(), "own callback") != NULL,
             "mpcf_task_destroy from its own callback did not say why it refused: '%s'", mpcf_last_error_message());
  }
  L->inside = 0;
  return L->calls == L->cancel_at;
}

/* opcode 13: STREAM x y metric p use_opts how exec_mode
 * (y: a slot for cdist_stream, 4 / an empty slot for pdist_stream; how:
 * bit 0 NULL callback, bits 1..3 the callback call that cancels, 0 never;
 * bit 4 a nested stream in the first call; bit 5 the first call waits for
 * and destroys its own task, both refused) */
static void op_stream(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  slot* y = y_or_self(r, st);
  const unsigned mc = fz_u8(r);
  const int metric = mc < 240 ? (int)(mc % 2) : 7;
  const double p = p_code(r);
  const int use_opts = !(fz_u8(r) & 1);
  const unsigned how = fz_u8(r);
  const exec_mode mode = reduce_mode(r);
  const int null_cb = how & 1;
  const int pdist = y == NULL;
  const int distance = pdist || metric == MPCF_METRIC_LP_DISTANCE;
  static stream_log L;
  memset(&L, 0, sizeof L);
  L.cancel_at = (int)(how >> 1) % 8;
  L.nested = (how >> 4) & 1;
  L.own = (how >> 5) & 1;
  L.pdist = pdist;
  L.dtype = x ? x->dtype : MPCF_FLOAT64;
  L.nrows = x ? objs(x) : 0;
  L.ncols = pdist ? L.nrows : objs(y);
  expect e = {0, 0};
  if (!x || null_cb || (distance && (isnan(p) || p < 1))) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (!pdist && metric != MPCF_METRIC_LP_DISTANCE && metric != MPCF_METRIC_L2_KERNEL) {
    e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  }
  if (x && y && x->dtype != y->dtype) e.errors |= ST(MPCF_ERROR_DTYPE_MISMATCH);
  pair_kind_errors(&e, x, y);
  if (x) {
    const int work = L.nrows * L.ncols > 0;
    backend_window_errors(&e, st, use_opts, x->dtype, work);
    if (y) backend_window_errors(&e, st, use_opts, y->dtype, work);
  }
  if (mode == EXEC_NULL_TASK) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  mpcf_options* oh = use_opts ? st->o.h : NULL;
  L.nested_x = x ? x->h : NULL;
  L.nested_o = oh;
  mpcf_block_callback cb = null_cb ? NULL : stream_callback;
  mpcf_task* const sentinel = (mpcf_task*)(uintptr_t)0x7a5c;
  mpcf_task* task = sentinel;
  mpcf_task** tp = mode == EXEC_NULL_TASK ? NULL : &task;
  mpcf_status s;
  if (pdist) {
    s = mode == EXEC_SYNC ? mpcf_pdist_stream(x ? x->h : NULL, p, cb, &L, oh)
                          : mpcf_pdist_stream_start(x ? x->h : NULL, p, cb, &L, oh, tp);
  } else {
    s = mode == EXEC_SYNC ? mpcf_cdist_stream(x ? x->h : NULL, y->h, (mpcf_metric)metric, p, cb, &L, oh)
                          : mpcf_cdist_stream_start(x ? x->h : NULL, y->h, (mpcf_metric)metric, p, cb, &L, oh, tp);
  }
  /* A callback that cancels ends the computation with MPCF_ERROR_CANCELLED. */
  const unsigned cancels = L.cancel_at > 0 ? ST(MPCF_ERROR_CANCELLED) : 0;
  const char* call = pdist ? "mpcf_pdist_stream" : "mpcf_cdist_stream";
  check_status(call, s, allowed_of(e) | (mode == EXEC_SYNC && e.errors == 0 ? cancels : 0));
  if (s != MPCF_OK && (mode != EXEC_SYNC || e.errors != 0)) {
    FZ_CHECK(L.calls == 0 && task == sentinel, "%s failed its argument checks and still ran", call);
    return;
  }
  mpcf_status final = s;
  int destroyed = 0;
  L.task = mode != EXEC_SYNC && task != sentinel ? task : NULL;
  if (mode != EXEC_SYNC) final = finish_task(task, mode, ST(MPCF_OK) | cancels, &destroyed);
  if (destroyed) return;
  if (final == MPCF_ERROR_CANCELLED) {
    FZ_CHECK(mode == EXEC_CANCEL || (L.cancel_at > 0 && L.calls >= L.cancel_at),
             "%s ended cancelled though nothing cancelled it", call);
    return;
  }
  FZ_CHECK(L.cancel_at == 0 || L.calls < L.cancel_at, "%s: the callback's non-zero return did not cancel", call);
  /* Every entry exactly once, each the single-pair value. */
  const slot* ys = pdist ? x : y;
  const op_kind op = distance ? distance_kind(p) : OPK_KERNEL;
  for (uint64_t i = 0; i < L.nrows; ++i) {
    for (uint64_t j = 0; j < L.ncols; ++j) {
      FZ_CHECK(L.count[i][j] == 1, "%s: entry (%llu, %llu) came %u times", call, (unsigned long long)i,
               (unsigned long long)j, L.count[i][j]);
      const double want = pdist && i == j ? 0.0 : pair_value(x, i, ys, j, op, p, &st->o, use_opts);
      FZ_CHECK(same_bits(L.v[i][j], want, L.dtype), "%s: entry (%llu, %llu) is %.17g, the single pair %.17g", call,
               (unsigned long long)i, (unsigned long long)j, L.v[i][j], want);
    }
  }
}

/* The norms of mpcf.h's bound B for function i of s over the window [a, b)
 * (double, widths in double, as the header states them): L-infinity over
 * the pieces of positive width in the window, and L1 over the bounded ones.
 * A PLF's norms are its own (the largest |f| at the ends of its pieces in
 * the window, the integral of |f| over its bounded pieces), in long double. */
static void fn_norms1(const slot* s, uint64_t i, double a, double b, long double* linf, long double* l1b) {
  *linf = 0;
  *l1b = 0;
  const uint64_t m = fn_m(s, i);
  const double* t = fn_t(s, i);
  const double* vv = fn_v(s, i);
  for (uint64_t k = 0; k < m; ++k) {
    const double l = fmax(t[k], a);
    const double r = fmin(k + 1 < m ? t[k + 1] : INFINITY, b);
    if (!(r > l)) continue;
    if (s->plf && k + 1 < m) {
      const long double fl = plf_at(t, vv, m, l, 1), fr = plf_at(t, vv, m, r, 0);
      const long double mx = fmaxl(fabsl(fl), fabsl(fr));
      if (mx == 0) continue;
      *l1b += ((long double)r - (long double)l) * lp_piece_mean(fl, fr, 1.0L);
      if (mx > *linf) *linf = mx;
      continue;
    }
    const double v = fabs(vv[k]);
    if (v == 0) continue;
    if (r < INFINITY) *l1b += (long double)(r - l) * v; /* r - l in double: may be inf */
    if (v > *linf) *linf = v;
  }
}

/* Of object o (mpcf.h's norms of an object: the largest sup norm and the
 * sum of the L1 norms of its components). */
static void fn_norms(const slot* s, uint64_t o, double a, double b, long double* linf, long double* l1b) {
  *linf = 0;
  *l1b = 0;
  for (uint64_t k = 0; k < s->K; ++k) {
    long double x, y;
    fn_norms1(s, o * s->K + k, a, b, &x, &y);
    if (x > *linf) *linf = x;
    *l1b += y;
  }
}

/* B of output (i, c) (mpcf.h, mpcf_kernel_matvec_start): Gaussian and
 * Laplacian max_j |V[j][c]|; L2 ||X_i||_inf max_j L1b(Y_j) |V[j][c]| +
 * L1b(X_i) max_j ||Y_j||_inf |V[j][c]|, on the window. */
static long double matvec_bound(const slot* x, uint64_t i, const slot* cols, int kernel, const double* vals,
                                uint64_t rc, uint64_t c, double a, double b) {
  long double by_l1 = 0, by_linf = 0, vmax = 0;
  for (uint64_t j = 0; j < objs(cols); ++j) {
    const long double v = fabsl((long double)vals[j * rc + c]);
    if (v > vmax) vmax = v;
    if (kernel != MPCF_KERNEL_L2 || v == 0) continue;
    long double linf, l1b;
    fn_norms(cols, j, a, b, &linf, &l1b);
    if (l1b * v > by_l1) by_l1 = l1b * v;
    if (linf * v > by_linf) by_linf = linf * v;
  }
  if (kernel != MPCF_KERNEL_L2) return vmax;
  long double linf, l1b;
  fn_norms(x, i, a, b, &linf, &l1b);
  /* 0 * inf: no term can be non-zero on that side. */
  const long double u = by_l1 == 0 ? 0 : linf * by_l1;
  const long double w = by_linf == 0 ? 0 : l1b * by_linf;
  return u + w;
}

/* opcode 14: MATVEC x y kernel p scale r v_mode use_opts cap_mode exec_mode V...
 * (y: a slot, or 4 / an empty slot for Y = NULL: X itself; V: value codes) */
static void op_matvec(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  slot* y = y_or_self(r, st);
  const unsigned kc = fz_u8(r);
  const int kernel = kc < 240 ? (int)(kc % 3) : (kc % 2 ? 3 : -1);
  const double p = p_code(r);
  static const double scales[10] = {1.0, 0.5, 10.0, 1e-3, 0.0, -1.0, NAN, INFINITY, 1e300, 1e-300};
  const double scale = scales[fz_u8(r) % 10];
  const uint64_t rc = fz_u8(r) % 5; /* 0 is an error */
  const unsigned v_mode = fz_u8(r) % 4;
  const int use_opts = !(fz_u8(r) & 1);
  const unsigned cap_mode = fz_u8(r) % 5;
  const exec_mode mode = reduce_mode(r);
  const slot* cols = y ? y : x;
  const uint64_t nv = cols ? objs(cols) * rc : 0;
  double vals[MAX_N * 4];
  for (uint64_t q = 0; q < nv; ++q) vals[q] = in_dtype(x ? x->dtype : MPCF_FLOAT64, value_code(r));
  uint64_t v_elements = nv;
  if (v_mode == 1) v_elements = nv + 1;
  if (v_mode == 2) v_elements = nv > 0 ? nv - 1 : 1;
  const int null_v = v_mode == 3;
  const mpcf_dtype dt = x ? x->dtype : MPCF_FLOAT64;
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  unsigned char* V = canary_buffer((nv + 1) * esz); /* one spare for v_elements = nv + 1 */
  for (uint64_t q = 0; q < nv; ++q) {
    if (dt == MPCF_FLOAT32) {
      const float f = (float)vals[q];
      memcpy(V + q * esz, &f, esz);
    } else {
      memcpy(V + q * esz, &vals[q], esz);
    }
  }
  if (tracing()) {
    fprintf(stderr, "  matvec: kernel %d, p %g, scale %g, r %llu, V:", kernel, p, scale, (unsigned long long)rc);
    for (uint64_t q = 0; q < nv; ++q) fprintf(stderr, " %g", vals[q]);
    fprintf(stderr, " (v_elements mode %u, Y %s)\n", v_mode, y ? "given" : "NULL");
  }
  const uint64_t need = x ? objs(x) * rc : 0;
  uint64_t cap = need;
  int null_out = 0;
  if (cap_mode == 1) cap = need + 2;
  if (cap_mode == 2) cap = need > 0 ? need - 1 : 0;
  if (cap_mode == 3) null_out = 1;
  void* out = canary_buffer(cap * esz);

  expect e = {0, 0};
  const int gauss_lap = kernel == MPCF_KERNEL_GAUSSIAN || kernel == MPCF_KERNEL_LAPLACIAN;
  if (!x || kernel < 0 || kernel > 2 || rc == 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (gauss_lap && (isnan(p) || p < 1 || !isfinite(scale) || !(scale > 0))) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (x && y && x->dtype != y->dtype) e.errors |= ST(MPCF_ERROR_DTYPE_MISMATCH);
  pair_kind_errors(&e, x, y);
  if (x && rc > 0) {
    if (v_elements != nv || (null_v && nv > 0)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    int finite = 1;
    for (uint64_t q = 0; q < nv; ++q) finite &= isfinite(vals[q]);
    if (!finite && !null_v) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    if (cap < need) e.errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    if (null_out && need > 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    const int work = need > 0 && objs(cols) > 0;
    backend_window_errors(&e, st, use_opts, x->dtype, work);
    if (y) backend_window_errors(&e, st, use_opts, y->dtype, work);
  }
  if (mode == EXEC_NULL_TASK) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  /* mpcf.h: when 4 n B exceeds the double range (n = count(Y)), the call
   * fails with MPCF_ERROR_INVALID_ARGUMENT (at compute time: all NaN).
   * Allowed from a 16th of DBL_MAX on (our B is in long double, the
   * library's in double); below that, a refusal is a failure. */
  int refused = 0;
  if (e.errors == 0 && x && cols && kernel >= 0 && kernel <= 2 && rc > 0 && !null_v) {
    double a, b;
    window_in(&st->o, use_opts, x->dtype, &a, &b);
    for (uint64_t i = 0; i < objs(x) && !refused; ++i) {
      for (uint64_t c = 0; c < rc && !refused; ++c) {
        const long double B = matvec_bound(x, i, cols, kernel, vals, rc, c, a, b);
        if (!(4.0L * (long double)objs(cols) * B <= (long double)DBL_MAX / 16)) refused = 1;
      }
    }
  }
  if (refused) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  mpcf_options* oh = use_opts ? st->o.h : NULL;
  mpcf_task* const sentinel = (mpcf_task*)(uintptr_t)0x7a5c;
  mpcf_task* task = sentinel;
  mpcf_status s;
  const void* vp = null_v ? NULL : V;
  void* op = null_out ? NULL : out;
  if (mode == EXEC_SYNC) {
    s = mpcf_kernel_matvec(x ? x->h : NULL, y ? y->h : NULL, (mpcf_kernel)kernel, p, scale, vp, v_elements, rc,
                           op, cap, oh);
  } else {
    s = mpcf_kernel_matvec_start(x ? x->h : NULL, y ? y->h : NULL, (mpcf_kernel)kernel, p, scale, vp, v_elements,
                                 rc, op, cap, oh, mode == EXEC_NULL_TASK ? NULL : &task);
  }
  check_status(mode == EXEC_SYNC ? "mpcf_kernel_matvec" : "mpcf_kernel_matvec_start", s, allowed_of(e));
  if (s != MPCF_OK) {
    /* Refused by the range rule while computing: NaN or untouched. */
    const int m_nan = refused && s == MPCF_ERROR_INVALID_ARGUMENT &&
                      all_nan(out, dt, need);
    FZ_CHECK((m_nan || is_canary(out, cap * esz)) && task == sentinel,
             "mpcf_kernel_matvec failed with %s and still wrote an output", mpcf_status_name(s));
    free(V);
    free(out);
    return;
  }
  mpcf_status final = MPCF_OK;
  int destroyed = 0;
  if (mode != EXEC_SYNC) {
    /* mpcf.h: V is copied at the start call; a task that still read the
       caller's V would now see NaN (all bits set) and give other values. */
    memset(V, 0xFF, (nv + 1) * esz);
    final = finish_task(task, mode,
                        ST(MPCF_OK) | (refused ? ST(MPCF_ERROR_INVALID_ARGUMENT) : 0), &destroyed);
  }
  FZ_CHECK(is_canary((unsigned char*)out + need * esz, (cap - need) * esz), "mpcf_kernel_matvec wrote beyond its %llu elements",
           (unsigned long long)need);
  if (final != MPCF_OK || (destroyed && need > 0 && all_nan(out, dt, need))) {
    FZ_CHECK(all_nan(out, dt, need), "mpcf_kernel_matvec ended with %s but left a value that is not NaN",
             mpcf_status_name(final));
    free(V);
    free(out);
    return;
  }
  /* out[i][c] against sum_j K_ij V[j][c] from the single-pair values (each
   * checked against the reference by the pair operations), in long double
   * with IEEE rules for infinities. The header's error bound: before its
   * final rounding, out[i][c] is within n^4 2^-150 B of the exact sum, B
   * the bound of output (i, c) (matvec_bound; twice that allowed here, for
   * the library's B in double). */
  const long double tol = dt == MPCF_FLOAT32 ? 2e-4L : 1e-10L;
  static long double kij[MAX_N][MAX_N];
  const uint64_t nox = objs(x), noc = objs(cols);
  for (uint64_t i = 0; i < nox; ++i) {
    for (uint64_t j = 0; j < noc; ++j) {
      if (kernel == MPCF_KERNEL_L2) {
        kij[i][j] = pair_value(x, i, cols, j, OPK_KERNEL, 2.0, &st->o, use_opts);
      } else if (!y && i == j) {
        kij[i][j] = 1; /* the header: K_ii = 1 */
      } else {
        const long double d = pair_value(x, i, cols, j, distance_kind(p), p, &st->o, use_opts);
        kij[i][j] = kernel == MPCF_KERNEL_GAUSSIAN ? expl(-(d * d) / (2.0L * scale * scale)) : expl(-d / scale);
      }
    }
  }
  const long double n4 = (long double)noc * noc * noc * noc;
  double wa, wb;
  window_in(&st->o, use_opts, x->dtype, &wa, &wb);
  for (uint64_t c = 0; c < rc; ++c) {
    long double largest = 0;
    for (uint64_t i = 0; i < nox; ++i) {
      for (uint64_t j = 0; j < noc; ++j) {
        const long double t = fabsl(kij[i][j] * (long double)vals[j * rc + c]);
        if (t > largest) largest = t;
      }
    }
    for (uint64_t i = 0; i < nox; ++i) {
      long double sum = 0, mag = 0;
      for (uint64_t j = 0; j < noc; ++j) {
        const long double t = kij[i][j] * (long double)vals[j * rc + c];
        sum += t;
        mag += fabsl(t);
      }
      const double got = element_of(out, dt, i * rc + c);
      if (isnan(sum) || isinf(sum) || isinf(largest) || mag > (long double)dtype_max(dt) / 4) {
        /* inf * 0, inf - inf or beyond the range: IEEE rules; only a finite
         * exact sum must come out finite and close. */
        FZ_CHECK(!isinf(sum) || isnan(got) || (long double)got == sum || mag > (long double)dtype_max(dt) / 4,
                 "kernel_matvec out[%llu][%llu] = %.17g, expected %Lg", (unsigned long long)i,
                 (unsigned long long)c, got, sum);
        continue;
      }
      long double B = matvec_bound(x, i, cols, kernel, vals, rc, c, wa, wb);
      const long double grid = (n4 + 1) * ldexpl(1.0L, -149) * B;
      const long double err = fabsl((long double)got - sum);
      const long double allowed = tol * mag + grid + 4 * (long double)dtype_denorm_min(dt);
      FZ_CHECK(err <= allowed,
               "kernel_matvec out[%llu][%llu] = %.17g, expected %.17Lg (error %.3Lg, allowed %.3Lg; kernel %d, "
               "p = %g, scale = %g)",
               (unsigned long long)i, (unsigned long long)c, got, sum, err, allowed, kernel, p, scale);
    }
  }
  free(V);
  free(out);
}

/* opcode 10: OPTIONS_RESET: a fresh options handle (defaults). */
static void op_options_reset(fz_reader* r, state* st) {
  (void)r;
  mpcf_options_destroy(st->o.h);
  st->o.h = NULL;
  check_status("mpcf_options_create", mpcf_options_create(&st->o.h), ST(MPCF_OK));
  reset_options_model(&st->o);
  /* Keep fuzzing on the CPU when a device is present (see has_devices). */
  if (st->has_devices) mpcf_options_set_backend(st->o.h, MPCF_BACKEND_CPU);
}

/* ------------------------------------------------------------------ */
/* Barcodes, pointwise operations, read-out and serialization (TDA)     */
/* ------------------------------------------------------------------ */

/* A PCF as arrays of doubles (exact in its dtype). */
static double eval_pts(const double* t, const double* v, uint64_t m, double x) {
  double f = 0.0;
  for (uint64_t k = 0; k < m && t[k] <= x; ++k) f = v[k];
  return f;
}

/* The handle's data read back (count, offsets, breakpoints), after the
 * read-out calls' own checks; returns 0 when it does not fit a slot. */
typedef struct pcfs_data {
  mpcf_dtype dtype;
  uint64_t n, total;
  uint64_t* off;
  double *t, *v;
  size_t ndim;
  uint64_t shape[32];
  int plf; /* its function type is MPCF_PIECEWISE_LINEAR */
} pcfs_data;

static void pcfs_data_free(pcfs_data* d) {
  free(d->off);
  free(d->t);
  free(d->v);
  memset(d, 0, sizeof *d);
}

static void read_pcfs(mpcf_pcfs* h, pcfs_data* d) {
  memset(d, 0, sizeof *d);
  check_status("mpcf_pcfs_count", mpcf_pcfs_count(h, &d->n), ST(MPCF_OK));
  check_status("mpcf_pcfs_total_breakpoints", mpcf_pcfs_total_breakpoints(h, &d->total), ST(MPCF_OK));
  check_status("mpcf_pcfs_dtype", mpcf_pcfs_dtype(h, &d->dtype), ST(MPCF_OK));
  check_status("mpcf_pcfs_ndim", mpcf_pcfs_ndim(h, &d->ndim), ST(MPCF_OK));
  FZ_CHECK(d->ndim >= 1 && d->ndim <= 32, "ndim %zu out of 1..32", d->ndim);
  check_status("mpcf_pcfs_shape", mpcf_pcfs_shape(h, d->shape, 32), ST(MPCF_OK));
  mpcf_function_type ft = (mpcf_function_type)0;
  check_status("mpcf_pcfs_function_type", mpcf_pcfs_function_type(h, &ft), ST(MPCF_OK));
  FZ_CHECK(ft == MPCF_PIECEWISE_CONSTANT || ft == MPCF_PIECEWISE_LINEAR, "mpcf_pcfs_function_type: %d", (int)ft);
  d->plf = ft == MPCF_PIECEWISE_LINEAR;
  FZ_CHECK(d->n < (UINT64_C(1) << 24) && d->total < (UINT64_C(1) << 24), "a result of %llu functions, %llu breakpoints",
           (unsigned long long)d->n, (unsigned long long)d->total);
  d->off = malloc((d->n + 1) * sizeof *d->off);
  const size_t esz = d->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  unsigned char* tb = canary_buffer(d->total * esz);
  unsigned char* vb = canary_buffer(d->total * esz);
  d->t = malloc((d->total + 1) * sizeof(double));
  d->v = malloc((d->total + 1) * sizeof(double));
  if (d->off == NULL || d->t == NULL || d->v == NULL) abort();
  check_status("mpcf_pcfs_offsets", mpcf_pcfs_offsets(h, d->off, d->n + 1), ST(MPCF_OK));
  check_status("mpcf_pcfs_breakpoints", mpcf_pcfs_breakpoints(h, tb, vb, d->total), ST(MPCF_OK));
  FZ_CHECK(d->off[0] == 0 && d->off[d->n] == d->total, "mpcf_pcfs_offsets: not from 0 to the total");
  for (uint64_t k = 0; k < d->total; ++k) d->t[k] = element_of(tb, d->dtype, k), d->v[k] = element_of(vb, d->dtype, k);
  free(tb);
  free(vb);
}

/* Every function of a collection returned by the TDA calls is valid and in
 * canonical form (mpcf.h): strictly increasing finite times, finite values,
 * no value repeating the one before (0 before the first), no -0, the zero
 * function being the single breakpoint (0, 0). */
static void check_canonical_plf(const char* call, const pcfs_data* d);
static void check_canonical(const char* call, const pcfs_data* d) {
  if (d->plf) {
    check_canonical_plf(call, d);
    return;
  }
  for (uint64_t i = 0; i < d->n; ++i) {
    const uint64_t a = d->off[i], b = d->off[i + 1];
    FZ_CHECK(b > a, "%s: function %llu has no breakpoint", call, (unsigned long long)i);
    if (b - a == 1 && d->t[a] == 0.0 && d->v[a] == 0.0 && !signbit(d->t[a]) && !signbit(d->v[a])) continue;
    double prev = 0.0;
    for (uint64_t k = a; k < b; ++k) {
      FZ_CHECK(isfinite(d->t[k]) && isfinite(d->v[k]), "%s: function %llu, breakpoint %llu not finite", call,
               (unsigned long long)i, (unsigned long long)(k - a));
      FZ_CHECK(k == a || d->t[k - 1] < d->t[k], "%s: function %llu: times not increasing", call, (unsigned long long)i);
      FZ_CHECK(!(d->v[k] == 0.0 && signbit(d->v[k])), "%s: function %llu, breakpoint %llu: value -0", call,
               (unsigned long long)i, (unsigned long long)(k - a));
      FZ_CHECK(d->v[k] != prev, "%s: function %llu, breakpoint %llu (t = %.17g) repeats the value %.17g before it "
               "(not canonical)", call, (unsigned long long)i, (unsigned long long)(k - a), d->t[k], d->v[k]);
      prev = d->v[k];
    }
  }
}

/* A PLF result in canonical form (mpcf.h; plf_builder.hpp): valid, no -0,
 * the zero function the single breakpoint (0, 0); else it starts where it
 * stops being 0 (v_0 != 0 or v_1 != 0), no breakpoint inside a flat run
 * (v_{k-1} = v_k = v_{k+1}), the last value not that before it. */
static void check_canonical_plf(const char* call, const pcfs_data* d) {
  for (uint64_t i = 0; i < d->n; ++i) {
    const uint64_t a = d->off[i], b = d->off[i + 1], m = b - a;
    FZ_CHECK(b > a, "%s: function %llu has no breakpoint", call, (unsigned long long)i);
    const double* t = d->t + a;
    const double* v = d->v + a;
    for (uint64_t k = 0; k < m; ++k) {
      FZ_CHECK(isfinite(t[k]) && isfinite(v[k]), "%s: PLF %llu, breakpoint %llu not finite", call,
               (unsigned long long)i, (unsigned long long)k);
      FZ_CHECK(k == 0 || t[k - 1] < t[k], "%s: PLF %llu: times not increasing", call, (unsigned long long)i);
      FZ_CHECK(!(v[k] == 0.0 && signbit(v[k])), "%s: PLF %llu, breakpoint %llu: value -0", call,
               (unsigned long long)i, (unsigned long long)k);
    }
    if (m == 1 && v[0] == 0.0) {
      FZ_CHECK(t[0] == 0.0 && !signbit(t[0]), "%s: PLF %llu is zero but not the breakpoint (0, 0)", call,
               (unsigned long long)i);
      continue;
    }
    FZ_CHECK(v[0] != 0.0 || (m >= 2 && v[1] != 0.0), "%s: PLF %llu starts with two zero values (not canonical)",
             call, (unsigned long long)i);
    for (uint64_t k = 1; k + 1 < m; ++k) {
      FZ_CHECK(!(v[k - 1] == v[k] && v[k] == v[k + 1]), "%s: PLF %llu, breakpoint %llu lies inside a flat run "
               "(not canonical)", call, (unsigned long long)i, (unsigned long long)k);
    }
    FZ_CHECK(m < 2 || v[m - 1] != v[m - 2], "%s: PLF %llu repeats its last value (not canonical)", call,
             (unsigned long long)i);
  }
}

/* A function of a slot at t: the PCF's value, or the PLF's (from the right)
 * exactly; interp_mag: what a PLF's interpolation at t is relative to. */
static long double eval_fn(const slot* s, uint64_t i, double t) {
  return s->plf ? plf_at(fn_t(s, i), fn_v(s, i), fn_m(s, i), t, 1) : eval_pts(fn_t(s, i), fn_v(s, i), fn_m(s, i), t);
}
static long double interp_mag(const slot* s, uint64_t i, double t) {
  return s->plf ? plf_seg_mag(fn_t(s, i), fn_v(s, i), fn_m(s, i), t) : 0;
}

/* Function i of d against a reference: a step function that changes only at
 * the sorted times rt[0 .. nr-1] (0 before rt[0]) with values rv (long
 * double) within tolerances tol (0: bit for bit in the dtype). The result's
 * breakpoints must be among rt (or be the zero function). */
static void check_against(const char* call, const pcfs_data* d, uint64_t i, const double* rt, const long double* rv,
                          const long double* tol, uint64_t nr) {
  const uint64_t a = d->off[i], m = d->off[i + 1] - a;
  const double* t = d->t + a;
  const double* v = d->v + a;
  const int zero_fn = m == 1 && t[0] == 0.0 && v[0] == 0.0;
  if (!zero_fn) {
    uint64_t j = 0;
    for (uint64_t k = 0; k < m; ++k) {
      while (j < nr && rt[j] < t[k]) ++j;
      FZ_CHECK(j < nr && rt[j] == t[k], "%s: function %llu has a breakpoint at %.17g, not one of the inputs' times",
               call, (unsigned long long)i, t[k]);
    }
  }
  for (uint64_t j = 0; j < nr; ++j) {
    const double got = d->plf ? (double)plf_at(t, v, m, rt[j], 1) : eval_pts(t, v, m, rt[j]);
    const long double want = rv[j];
    if (tol[j] == 0) {
      FZ_CHECK(same_bits(got, in_dtype(d->dtype, (double)want), d->dtype),
               "%s: function %llu at t = %.17g is %.17g, expected %.17Lg", call, (unsigned long long)i, rt[j], got, want);
    } else {
      FZ_CHECK(fabsl((long double)got - want) <= tol[j], "%s: function %llu at t = %.17g is %.17g, expected %.17Lg "
               "within %.3Lg", call, (unsigned long long)i, rt[j], got, want, tol[j]);
    }
  }
}

/* Puts a collection into a slot when it fits (else destroys it). */
static void slot_take(slot* s, mpcf_pcfs* h, const pcfs_data* d) {
  int fits = d->n <= MAX_N && d->total <= MAX_PTS;
  for (uint64_t i = 0; fits && i < d->n; ++i) fits = d->off[i + 1] - d->off[i] <= MAX_M;
  if (!fits) {
    mpcf_pcfs_destroy(h);
    return;
  }
  mpcf_pcfs_destroy(s->h);
  s->h = h;
  s->dtype = d->dtype;
  s->n = d->n;
  memcpy(s->off, d->off, (d->n + 1) * sizeof *d->off);
  memcpy(s->t, d->t, d->total * sizeof(double));
  memcpy(s->v, d->v, d->total * sizeof(double));
  s->moderate = 1;
  for (uint64_t k = 0; k < d->total; ++k) s->moderate &= fabs(s->t[k]) <= 1e6 && fabs(s->v[k]) <= 1e6;
  s->ndim = d->ndim;
  memcpy(s->shape, d->shape, d->ndim * sizeof(uint64_t));
  s->plf = d->plf;
  s->K = 1; /* results have no component axis */
  s->caxis = 0;
  check_slot_queries(s);
}

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Sorted distinct values of x[0 .. n-1] (n afterwards). */
static uint64_t sort_unique(double* x, uint64_t n) {
  qsort(x, n, sizeof *x, cmp_double);
  uint64_t u = 0;
  for (uint64_t k = 0; k < n; ++k) {
    if (u == 0 || x[k] != x[u - 1]) x[u++] = x[k] == 0.0 ? 0.0 : x[k];
  }
  return u;
}

/* A bad enum value (for kind, dtype, reduction). */
static int enum_code(fz_reader* r, int count) {
  const unsigned c = fz_u8(r);
  if (c < 240) return (int)(c % (unsigned)count);
  static const int bad[4] = {3, -1, 1000, INT32_MIN};
  const int b = bad[c % 4];
  return b == count ? count + 1 : b;
}

/* Does x overflow the dtype when rounded to it (and is it a clear case)?
 * 1: overflows, 0: fits, -1: the sliver between the largest value and the
 * rounding limit (the header leaves it open). */
static int overflows(mpcf_dtype dt, double x) {
  if (isinf(x)) return 1;
  if (fabs(x) <= dtype_max(dt)) return 0;
  return isinf(in_dtype(dt, x)) ? 1 : -1;
}

enum { MAX_BARCODES = 4, MAX_BARS = 4 };

/* Bars: per bar a birth (value code) and a death code: < 200 birth + c / 4;
 * 200 +inf; 201 NaN; 202 birth - 1; 203 a value code; 204 birth; 205 1e39;
 * 206 birth + 1e300; else birth + (c - 200). */
static void decode_bars(fz_reader* r, uint64_t total, double* bars) {
  for (uint64_t k = 0; k < total; ++k) {
    const double b = value_code(r);
    const unsigned c = fz_u8(r);
    double d;
    if (c < 200) d = b + (double)c / 4.0;
    else if (c == 200) d = INFINITY;
    else if (c == 201) d = NAN;
    else if (c == 202) d = b - 1.0;
    else if (c == 203) d = value_code(r);
    else if (c == 204) d = b;
    else if (c == 205) d = 1e39;
    else if (c == 206) d = b + 1e300;
    else d = b + ((double)c - 200.0);
    bars[2 * k] = b;
    bars[2 * k + 1] = d;
  }
}

/* sub-operation 0: FROM_BARCODES dst kind dtype n flags [off_arg] per barcode
 * the number of bars (mod 5), per bar a birth (value code) and a death code:
 * < 200 birth + c / 4; 200 +inf; 201 NaN; 202 birth - 1; 203 a value code;
 * 204 birth; 205 1e39; 206 birth + 1e300; else birth + (c - 200).
 * flags: 1 NULL out, 2 NULL offsets, 4 NULL bars, 8 offsets[0] = 1,
 * 16 offsets[1] > offsets[2]. */
static void tda_from_barcodes(fz_reader* r, state* st) {
  slot* s = &st->s[fz_u8(r) % N_SLOTS];
  const int kind = enum_code(r, 3);
  const unsigned dcode = fz_u8(r);
  const int dtype_raw = (dcode & 0x80) ? (int)(dcode & 0x7f) : ((dcode & 1) ? MPCF_FLOAT32 : MPCF_FLOAT64);
  const int dtype_ok = dtype_raw == MPCF_FLOAT32 || dtype_raw == MPCF_FLOAT64;
  const mpcf_dtype dt = dtype_raw == MPCF_FLOAT32 ? MPCF_FLOAT32 : MPCF_FLOAT64;
  const uint64_t n = fz_u8(r) % (MAX_BARCODES + 1);
  const unsigned flags = fz_u8(r);
  uint64_t off[MAX_BARCODES + 1];
  off[0] = 0;
  for (uint64_t i = 0; i < n; ++i) off[i + 1] = off[i] + fz_u8(r) % (MAX_BARS + 1);
  const uint64_t total = off[n];
  double bars[2 * MAX_BARCODES * MAX_BARS + 2];
  decode_bars(r, total, bars);
  uint64_t off_passed[MAX_BARCODES + 1];
  memcpy(off_passed, off, sizeof off);
  if ((flags & 8) && n >= 1) off_passed[0] = 1;
  if ((flags & 16) && n >= 2 && off_passed[2] > 0) off_passed[1] = off_passed[2] + 1; /* stays <= 2 MAX_BARS */
  const int null_out = flags & 1, null_off = flags & 2, null_bars = (flags & 4) != 0;

  expect e = {0, 0};
  if (null_out || null_off || !dtype_ok || kind < 0 || kind > 2) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  int offsets_ok = !null_off && off_passed[0] == 0;
  for (uint64_t i = 0; offsets_ok && i < n; ++i) offsets_ok = off_passed[i + 1] >= off_passed[i];
  if (!null_off && !offsets_ok) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (!null_off && off_passed[n] > 0 && null_bars) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  /* per barcode: whether its values can be checked (no case the header
   * leaves open) */
  int checkable[MAX_BARCODES];
  for (uint64_t i = 0; i < n; ++i) {
    checkable[i] = 1;
    long double sum = 0;
    for (uint64_t k = off[i]; k < off[i + 1]; ++k) {
      const double b = bars[2 * k], d = bars[2 * k + 1];
      if (isnan(b) || isnan(d) || !isfinite(b) || d < b) {
        e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
        continue;
      }
      const int positive = d > b;
      if (kind == MPCF_BETTI_CURVE) {
        const int ob = overflows(dt, b), od = isinf(d) ? 0 : overflows(dt, d);
        if (positive && (ob == 1 || od == 1)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
        else if (ob || od) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT), checkable[i] = 0;
      } else {
        const double len = d - b;
        const int ol = isinf(d) ? 0 : overflows(dt, len);
        const int oe = overflows(dt, b) || (!isinf(d) && overflows(dt, d));
        if (positive && ol == 1) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
        else if (ol || oe) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT), checkable[i] = 0;
        if (kind == MPCF_ACCUMULATED_PERSISTENCE && positive && !isinf(d)) {
          sum += (long double)d - (long double)b;
          /* the meanage: different ways of computing it in double must agree */
          const double m1 = (b + d) / 2, m2 = b / 2 + d / 2, m3 = b + (d - b) / 2;
          if (!(in_dtype(dt, m1) == in_dtype(dt, m2) && in_dtype(dt, m2) == in_dtype(dt, m3)) || isinf(m1)) {
            checkable[i] = 0;
            if (isinf(in_dtype(dt, m2)) || isinf(m1)) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
          }
        }
      }
    }
    if (kind == MPCF_ACCUMULATED_PERSISTENCE) {
      if (sum > (long double)dtype_max(dt) * (1.0L + 0x1p-30L)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
      else if (sum > (long double)dtype_max(dt) * (1.0L - 0x1p-20L)) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT), checkable[i] = 0;
    }
  }
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x5e17;
  mpcf_pcfs* out = sentinel;
  const mpcf_status s_ = mpcf_pcfs_from_barcodes((mpcf_barcode_summary)kind, (mpcf_dtype)dtype_raw, n,
                                                 null_off ? NULL : off_passed, null_bars ? NULL : bars,
                                                 null_out ? NULL : &out);
  check_status("mpcf_pcfs_from_barcodes", s_, allowed_of(e));
  if (s_ != MPCF_OK) {
    FZ_CHECK(out == sentinel, "mpcf_pcfs_from_barcodes failed and still wrote *out");
    return;
  }
  pcfs_data d;
  read_pcfs(out, &d);
  FZ_CHECK(d.n == n && d.dtype == dt && d.ndim == 1 && d.shape[0] == n, "mpcf_pcfs_from_barcodes: not n = %llu "
           "functions of shape {n} in the dtype", (unsigned long long)n);
  check_canonical("mpcf_pcfs_from_barcodes", &d);
  /* the reference of each barcode, from the definitions */
  for (uint64_t i = 0; i < n; ++i) {
    if (!checkable[i]) continue;
    double rt[2 * MAX_BARS + 1];
    long double rv[2 * MAX_BARS + 1], tol[2 * MAX_BARS + 1];
    uint64_t nr = 0;
    for (uint64_t k = off[i]; k < off[i + 1]; ++k) {
      const double b = bars[2 * k], dd = bars[2 * k + 1];
      if (kind == MPCF_BETTI_CURVE) {
        rt[nr++] = in_dtype(dt, b);
        if (!isinf(dd)) rt[nr++] = in_dtype(dt, dd);
      } else if (kind == MPCF_STABLE_RANK) {
        if (!isinf(dd)) rt[nr++] = in_dtype(dt, dd - b);
      } else if (!isinf(dd) && dd > b) {
        rt[nr++] = in_dtype(dt, (b + dd) / 2);
      }
    }
    if (kind == MPCF_STABLE_RANK) rt[nr++] = 0.0;
    nr = sort_unique(rt, nr);
    for (uint64_t j = 0; j < nr; ++j) {
      const double x = rt[j];
      long double val = 0, scale = 0;
      for (uint64_t k = off[i]; k < off[i + 1]; ++k) {
        const double b = bars[2 * k], dd = bars[2 * k + 1];
        if (kind == MPCF_BETTI_CURVE) {
          val += in_dtype(dt, b) <= x && x < (isinf(dd) ? INFINITY : in_dtype(dt, dd));
        } else if (kind == MPCF_STABLE_RANK) {
          val += x >= 0 && (isinf(dd) ? 1 : in_dtype(dt, dd - b) > x);
        } else if (!isinf(dd) && dd > b && in_dtype(dt, (b + dd) / 2) <= x) {
          val += (long double)dd - (long double)b;
          scale += (long double)dd - (long double)b;
        }
      }
      rv[j] = val;
      /* accumulated persistence: the exact sum rounded once; the long double
       * reference is within 2^-60 of the sum (a few terms) */
      tol[j] = kind == MPCF_ACCUMULATED_PERSISTENCE
                   ? (dt == MPCF_FLOAT32 ? 0x1p-24L : 0x1p-53L) * fabsl(val) + 0x1p-60L * scale +
                         (long double)dtype_denorm_min(dt)
                   : 0;
    }
    check_against("mpcf_pcfs_from_barcodes", &d, i, rt, rv, tol, nr);
  }
  slot_take(s, out, &d);
  pcfs_data_free(&d);
}

/* sub-operation 1: EVALUATE x nt flags cap_mode times...
 * flags: 1 NULL t, 2 NULL out. cap_mode: 0 exact, 1 plus 2, 2 minus 1, 3 0.
 * A time code: < 192 a breakpoint of x (code % 64 % total; code % 64 when x
 * has none), as is, just below or just above it (code / 64); 192 -inf,
 * 193 +inf, 194 NaN, else a value code follows. */
static void tda_evaluate(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  const uint64_t nt = fz_u8(r) % 9;
  const unsigned flags = fz_u8(r);
  const unsigned cap_mode = fz_u8(r) % 4;
  double t[8];
  int nan_t = 0;
  const uint64_t total = x ? x->off[x->n] : 0;
  for (uint64_t j = 0; j < nt; ++j) {
    const unsigned c = fz_u8(r);
    if (c < 192) {
      const double b = total > 0 ? x->t[(c % 64) % total] : (double)(c % 64);
      t[j] = c / 64 == 0 ? b : c / 64 == 1 ? nextafter(b, -INFINITY) : nextafter(b, INFINITY);
    } else if (c == 192) {
      t[j] = -INFINITY;
    } else if (c == 193) {
      t[j] = INFINITY;
    } else if (c == 194) {
      t[j] = NAN;
    } else {
      t[j] = value_code(r);
    }
    nan_t |= isnan(t[j]);
  }
  const int null_t = flags & 1, null_out = (flags & 2) != 0;
  const uint64_t n = x ? x->n : 0, needed = n * nt;
  const uint64_t cap = cap_mode == 0 ? needed : cap_mode == 1 ? needed + 2 : cap_mode == 2 ? (needed ? needed - 1 : 0) : 0;
  expect e = {0, 0};
  if (x == NULL) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (nt > 0 && (null_t || nan_t)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (cap < needed) e.errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
  if (null_out) {
    if (needed > 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    else e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  }
  const mpcf_dtype dt = x ? x->dtype : MPCF_FLOAT64;
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  const size_t bytes = (size_t)(needed + 2) * esz;
  void* out = canary_buffer(bytes);
  const mpcf_status s_ = mpcf_pcfs_evaluate(x ? x->h : NULL, null_t ? NULL : t, nt, null_out ? NULL : out, cap);
  check_status("mpcf_pcfs_evaluate", s_, allowed_of(e));
  if (s_ != MPCF_OK) {
    FZ_CHECK(is_canary(out, bytes), "mpcf_pcfs_evaluate failed and still wrote the output");
  } else if (!null_out) {
    for (uint64_t i = 0; i < n; ++i) {
      for (uint64_t j = 0; j < nt; ++j) {
        const double got = element_of(out, dt, i * nt + j);
        if (x->plf) {
          /* exact at +-inf and at breakpoints (f(t_0) = v_0: the jump), else
           * the interpolation within a few eps of its segment */
          const long double want = plf_at(fn_t(x, i), fn_v(x, i), fn_m(x, i), t[j], 1);
          int at_bp = isinf(t[j]);
          for (uint64_t k = 0; k < fn_m(x, i); ++k) at_bp |= fn_t(x, i)[k] == t[j];
          const long double tol = at_bp ? 0
                                        : 8 * (dt == MPCF_FLOAT32 ? 0x1p-23L : 0x1p-52L) *
                                                  plf_seg_mag(fn_t(x, i), fn_v(x, i), fn_m(x, i), t[j]) +
                                              (long double)dtype_denorm_min(dt);
          if (isinf(t[j]) && t[j] > 0) {
            FZ_CHECK(same_bits(got, fn_v(x, i)[fn_m(x, i) - 1], dt), "mpcf_pcfs_evaluate: PLF f%llu(+inf) = %.17g",
                     (unsigned long long)i, got);
          } else {
            FZ_CHECK(at_bp ? same_bits(got, in_dtype(dt, (double)want), dt) : fabsl((long double)got - want) <= tol,
                     "mpcf_pcfs_evaluate: PLF f%llu(%.17g) = %.17g, expected %.17Lg (within %.3Lg)",
                     (unsigned long long)i, t[j], got, want, tol);
          }
          continue;
        }
        const double want = eval_pts(fn_t(x, i), fn_v(x, i), fn_m(x, i), t[j]);
        FZ_CHECK(same_bits(got, want, dt), "mpcf_pcfs_evaluate: f%llu(%.17g) = %.17g, expected %.17g",
                 (unsigned long long)i, t[j], got, want);
      }
    }
    FZ_CHECK(is_canary((unsigned char*)out + needed * esz, 2 * esz), "mpcf_pcfs_evaluate wrote beyond count * nt");
  }
  free(out);
}

/* sub-operation 2: READOUT x flags cap_mode: mpcf_pcfs_offsets and
 * mpcf_pcfs_breakpoints give the slot's data. flags: 1 NULL offsets,
 * 2 NULL times, 4 NULL values. cap_mode as for EVALUATE. */
static void tda_readout(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  const unsigned flags = fz_u8(r);
  const unsigned cap_mode = fz_u8(r) % 4;
  const uint64_t n = x ? x->n : 0, total = x ? x->off[x->n] : 0;
  const mpcf_dtype dt = x ? x->dtype : MPCF_FLOAT64;
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  /* offsets */
  {
    const uint64_t needed = n + 1;
    const uint64_t cap = cap_mode == 0 ? needed : cap_mode == 1 ? needed + 2 : cap_mode == 2 ? needed - 1 : 0;
    expect e = {0, 0};
    if (x == NULL) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    if (x != NULL && cap < needed) e.errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    if (x == NULL && cap < needed) e.also |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    if (flags & 1) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    uint64_t* off = canary_buffer((needed + 2) * sizeof(uint64_t));
    const mpcf_status s_ = mpcf_pcfs_offsets(x ? x->h : NULL, (flags & 1) ? NULL : off, cap);
    check_status("mpcf_pcfs_offsets", s_, allowed_of(e));
    if (s_ != MPCF_OK) {
      FZ_CHECK(is_canary(off, (needed + 2) * sizeof(uint64_t)), "mpcf_pcfs_offsets failed and still wrote");
    } else {
      FZ_CHECK(memcmp(off, x->off, needed * sizeof(uint64_t)) == 0, "mpcf_pcfs_offsets: not the slot's offsets");
      FZ_CHECK(is_canary(off + needed, 2 * sizeof(uint64_t)), "mpcf_pcfs_offsets wrote beyond count + 1");
    }
    free(off);
  }
  /* breakpoints */
  {
    const uint64_t needed = total;
    const uint64_t cap = cap_mode == 0 ? needed : cap_mode == 1 ? needed + 2 : cap_mode == 2 ? (needed ? needed - 1 : 0) : 0;
    const int null_t = (flags & 2) != 0, null_v = (flags & 4) != 0;
    expect e = {0, 0};
    if (x == NULL) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    if (cap < needed) e.errors |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    if (null_t || null_v) {
      if (needed > 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
      else e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    }
    if (x == NULL) e.also |= ST(MPCF_ERROR_BUFFER_TOO_SMALL);
    const size_t bytes = (size_t)(needed + 2) * esz;
    void* tb = canary_buffer(bytes);
    void* vb = canary_buffer(bytes);
    const mpcf_status s_ = mpcf_pcfs_breakpoints(x ? x->h : NULL, null_t ? NULL : tb, null_v ? NULL : vb, cap);
    check_status("mpcf_pcfs_breakpoints", s_, allowed_of(e));
    if (s_ != MPCF_OK) {
      FZ_CHECK(is_canary(tb, bytes) && is_canary(vb, bytes), "mpcf_pcfs_breakpoints failed and still wrote");
    } else {
      for (uint64_t k = 0; k < total; ++k) {
        FZ_CHECK(null_t || same_bits(element_of(tb, dt, k), x->t[k], dt), "mpcf_pcfs_breakpoints: time %llu is "
                 "%.17g, the slot's %.17g", (unsigned long long)k, element_of(tb, dt, k), x->t[k]);
        FZ_CHECK(null_v || same_bits(element_of(vb, dt, k), x->v[k], dt), "mpcf_pcfs_breakpoints: value %llu is "
                 "%.17g, the slot's %.17g", (unsigned long long)k, element_of(vb, dt, k), x->v[k]);
      }
      FZ_CHECK(is_canary((unsigned char*)tb + needed * esz, 2 * esz) &&
                   is_canary((unsigned char*)vb + needed * esz, 2 * esz),
               "mpcf_pcfs_breakpoints wrote beyond the total");
    }
    free(tb);
    free(vb);
  }
}

/* The union of the breakpoint times of the given functions of slots, sorted
 * and distinct (0 and -0 one time). */
static uint64_t union_times(const slot* const* ss, const uint64_t* fi, int count, double* out) {
  uint64_t u = 0;
  for (int q = 0; q < count; ++q) {
    for (uint64_t k = 0; k < fn_m(ss[q], fi[q]); ++k) out[u++] = fn_t(ss[q], fi[q])[k];
  }
  return sort_unique(out, u);
}

/* The tolerance of a value computed in double (a balanced pairwise sum of
 * `terms` terms whose absolute values add up to `abs_sum`, and one more
 * operation) and rounded once to the dtype: the double error is at most
 * (ceil(log2 terms) + 1) 2^-53 abs_sum to first order (Higham, Accuracy and
 * Stability, 4.2); twice that, plus the dtype's rounding of `value`. */
static long double sum_tolerance(mpcf_dtype dt, int terms, long double abs_sum, long double value) {
  int lg = 0;
  while ((1 << lg) < terms) ++lg;
  return (long double)(lg + 2) * 0x1p-52L * abs_sum + (dt == MPCF_FLOAT32 ? 0x1p-23L : 0x1p-52L) * fabsl(value) +
         (long double)dtype_denorm_min(dt);
}

/* sub-operation 3: REDUCE x op axis flags dst. op: an enum code (sum, mean,
 * bad values). axis: < 240 code % 34, 33 meaning MPCF_ALL_AXES; 240
 * MPCF_ALL_AXES; 241 SIZE_MAX - 1; else 1000. flags: 1 NULL out. */
static void tda_reduce(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  const int op = enum_code(r, 2);
  const unsigned ac = fz_u8(r);
  const size_t axis = ac < 240 ? (ac % 34 == 33 ? MPCF_ALL_AXES : ac % 34)
                               : ac == 240 ? MPCF_ALL_AXES : ac == 241 ? (size_t)-2 : 1000;
  const unsigned flags = fz_u8(r);
  slot* dst = &st->s[fz_u8(r) % N_SLOTS];
  const int null_out = flags & 1;
  expect e = {0, 0};
  if (x == NULL || null_out || op < 0 || op > 1) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (x != NULL && axis != MPCF_ALL_AXES && axis >= x->ndim) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  /* the groups: output o gathers the inputs whose index without the axis is o */
  uint64_t len = 1, inner = 1; /* shape = (dimensions before) x len x inner */
  size_t out_ndim = 1;
  uint64_t out_shape[32] = {1};
  if (x != NULL) {
    if (axis == MPCF_ALL_AXES) {
      len = x->n;
    } else if (axis < x->ndim) {
      len = x->shape[axis];
      for (size_t k = axis + 1; k < x->ndim; ++k) inner *= x->shape[k];
      if (x->ndim > 1) {
        out_ndim = 0;
        for (size_t k = 0; k < x->ndim; ++k) {
          if (k != axis) out_shape[out_ndim++] = x->shape[k];
        }
      }
      /* a dimension 0 elsewhere: outer * inner may be 0 while len is not */
    }
  }
  const int axis_ok = x != NULL && (axis == MPCF_ALL_AXES || axis < x->ndim);
  /* the result's count: the product of the other dimensions (0 when one of
   * them is 0), which may pass 64 bits when the axis is a 0 (shape
   * (2^63, 2, 0)): "a result too large for 64-bit sizes" */
  uint64_t n_out = axis_ok ? 1 : 0;
  int out_zero = 0, out_overflow = 0;
  if (axis_ok && axis != MPCF_ALL_AXES) {
    for (size_t k = 0; k < x->ndim; ++k) out_zero |= k != axis && x->shape[k] == 0;
    for (size_t k = 0; k < x->ndim && !out_zero; ++k) {
      if (k == axis) continue;
      if (n_out > UINT64_MAX / x->shape[k]) out_overflow = 1;
      n_out *= x->shape[k];
    }
    if (out_zero) n_out = 0;
  }
  if (out_overflow) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  /* T (fixed): huge dimensions of an empty collection cost nothing, so any
   * shape is called. */
  /* a representable but huge count of zero functions (sums over a 0 axis):
   * the library may well try to allocate it, which libFuzzer's malloc limit
   * reports as a crash; not called */
  if (!out_overflow && n_out > (UINT64_C(1) << 20)) return;
  int checkable = 1;
  if (axis_ok && op == MPCF_REDUCE_MEAN && len == 0) {
    if (n_out > 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    else e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  }
  /* overflow of the dtype: required when clear, allowed near the limit */
  if (axis_ok && n_out <= MAX_N && len > 0) {
    for (uint64_t o = 0; o < n_out; ++o) {
      const slot* ss[MAX_N];
      uint64_t fi[MAX_N];
      for (uint64_t q = 0; q < len; ++q) ss[q] = x, fi[q] = (o / inner) * len * inner + q * inner + o % inner;
      double ut[MAX_PTS];
      const uint64_t nu = union_times(ss, fi, (int)len, ut);
      for (uint64_t j = 0; j < nu; ++j) {
        long double sum = 0, abs_sum = 0;
        for (uint64_t q = 0; q < len; ++q) {
          const long double f = eval_fn(x, fi[q], ut[j]);
          sum += f;
          abs_sum += fabsl(f);
        }
        const long double val = op == MPCF_REDUCE_MEAN ? sum / (long double)len : sum;
        if (fabsl(val) > (long double)dtype_max(x->dtype) * (1.0L + 0x1p-20L)) {
          e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
        } else if (fabsl(val) > (long double)dtype_max(x->dtype) * (1.0L - 0x1p-20L) || abs_sum > DBL_MAX / 4) {
          e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
          checkable = 0;
        }
      }
    }
  }
  /* PLFs: a sum that would jump after it starts (a term starting later
   * with a non-zero first value) cannot be a PLF: MPCF_ERROR_INVALID_ARGUMENT
   * (plf_pointwise.cpp), allowed whenever the terms start at different
   * times. */
  if (x != NULL && x->plf) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x5e17;
  mpcf_pcfs* out = sentinel;
  const mpcf_status s_ = mpcf_pcfs_reduce(x ? x->h : NULL, (mpcf_reduction)op, axis, null_out ? NULL : &out);
  check_status("mpcf_pcfs_reduce", s_, allowed_of(e));
  if (s_ != MPCF_OK) {
    FZ_CHECK(out == sentinel, "mpcf_pcfs_reduce failed and still wrote *out");
    return;
  }
  pcfs_data d;
  read_pcfs(out, &d);
  FZ_CHECK(d.n == n_out && d.dtype == x->dtype, "mpcf_pcfs_reduce: %llu functions, expected %llu",
           (unsigned long long)d.n, (unsigned long long)n_out);
  FZ_CHECK(d.plf == x->plf, "mpcf_pcfs_reduce: the result is not of X's function type");
  FZ_CHECK(d.ndim == out_ndim && memcmp(d.shape, out_shape, out_ndim * sizeof(uint64_t)) == 0,
           "mpcf_pcfs_reduce: not the shape without the axis");
  check_canonical("mpcf_pcfs_reduce", &d);
  for (uint64_t o = 0; checkable && o < n_out; ++o) {
    const slot* ss[MAX_N];
    uint64_t fi[MAX_N];
    for (uint64_t q = 0; q < len; ++q) ss[q] = x, fi[q] = (o / inner) * len * inner + q * inner + o % inner;
    double ut[MAX_PTS];
    long double rv[MAX_PTS], tol[MAX_PTS];
    const uint64_t nu = union_times(ss, fi, (int)len, ut);
    for (uint64_t j = 0; j < nu; ++j) {
      long double sum = 0, abs_sum = 0, imag = 0;
      for (uint64_t q = 0; q < len; ++q) {
        const long double f = eval_fn(x, fi[q], ut[j]);
        sum += f;
        abs_sum += fabsl(f);
        imag += interp_mag(x, fi[q], ut[j]);
      }
      rv[j] = op == MPCF_REDUCE_MEAN ? sum / (long double)len : sum;
      tol[j] = sum_tolerance(x->dtype, (int)len + 1, op == MPCF_REDUCE_MEAN ? abs_sum / (long double)len : abs_sum,
                             rv[j]) +
               8 * 0x1p-52L * (op == MPCF_REDUCE_MEAN ? imag / (long double)len : imag);
    }
    check_against("mpcf_pcfs_reduce", &d, o, ut, rv, tol, nu);
  }
  slot_take(dst, out, &d);
  pcfs_data_free(&d);
}

/* sub-operation 4: COMBINE a x b y flags dst: a * X[i] + b * Y[i]
 * (a, b value codes). flags: 1 NULL out. */
static void tda_combine(fz_reader* r, state* st) {
  const double a = value_code(r);
  slot* x = slot_or_null(r, st);
  const double b = value_code(r);
  slot* y = slot_or_null(r, st);
  const unsigned flags = fz_u8(r);
  slot* dst = &st->s[fz_u8(r) % N_SLOTS];
  const int null_out = flags & 1;
  expect e = {0, 0};
  if (x == NULL || y == NULL || null_out || !isfinite(a) || !isfinite(b)) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  const int both = x != NULL && y != NULL;
  if (both && x->dtype != y->dtype) e.errors |= ST(MPCF_ERROR_DTYPE_MISMATCH);
  if (both && x->plf != y->plf) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (both && x->plf) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT); /* a jump after the start, as for reduce */
  if (both && x->n != y->n && x->n != 1 && y->n != 1) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  const int counts_ok = both && (x->n == y->n || x->n == 1 || y->n == 1);
  const uint64_t n_out = !counts_ok ? 0 : x->n == y->n ? x->n : x->n == 1 ? y->n : x->n;
  const int from_y = counts_ok && x->n == 1 && y->n != 1;
  int checkable = 1;
  if (counts_ok && x->dtype == y->dtype && x->plf == y->plf && isfinite(a) && isfinite(b)) {
    for (uint64_t i = 0; i < n_out; ++i) {
      const slot* ss[2] = {x, y};
      const uint64_t fi[2] = {x->n == 1 ? 0 : i, y->n == 1 ? 0 : i};
      double ut[2 * MAX_M];
      const uint64_t nu = union_times(ss, fi, 2, ut);
      for (uint64_t j = 0; j < nu; ++j) {
        const long double f = eval_fn(x, fi[0], ut[j]);
        const long double g = eval_fn(y, fi[1], ut[j]);
        const long double val = a * f + b * g, mag = fabsl(a * f) + fabsl(b * g);
        /* the header does not say what a value beyond the dtype gives (reduce
         * says MPCF_ERROR_INVALID_ARGUMENT): allowed there, and then only the
         * canonical form is checked */
        if (mag > (long double)dtype_max(x->dtype) * (1.0L - 0x1p-20L)) {
          e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
          checkable = 0;
        }
        (void)val;
      }
    }
  }
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x5e17;
  mpcf_pcfs* out = sentinel;
  const mpcf_status s_ = mpcf_pcfs_combine(a, x ? x->h : NULL, b, y ? y->h : NULL, null_out ? NULL : &out);
  check_status("mpcf_pcfs_combine", s_, allowed_of(e));
  if (s_ != MPCF_OK) {
    FZ_CHECK(out == sentinel, "mpcf_pcfs_combine failed and still wrote *out");
    return;
  }
  pcfs_data d;
  read_pcfs(out, &d);
  const slot* shaped = from_y ? y : x;
  FZ_CHECK(d.n == n_out && d.dtype == x->dtype, "mpcf_pcfs_combine: %llu functions, expected %llu",
           (unsigned long long)d.n, (unsigned long long)n_out);
  FZ_CHECK(d.plf == x->plf, "mpcf_pcfs_combine: the result is not of X's function type");
  FZ_CHECK(d.ndim == shaped->ndim && memcmp(d.shape, shaped->shape, d.ndim * sizeof(uint64_t)) == 0,
           "mpcf_pcfs_combine: not the shape of the %s", from_y ? "larger Y" : "X");
  check_canonical("mpcf_pcfs_combine", &d);
  for (uint64_t i = 0; checkable && i < n_out; ++i) {
    const slot* ss[2] = {x, y};
    const uint64_t fi[2] = {x->n == 1 ? 0 : i, y->n == 1 ? 0 : i};
    double ut[2 * MAX_M];
    long double rv[2 * MAX_M], tol[2 * MAX_M];
    const uint64_t nu = union_times(ss, fi, 2, ut);
    for (uint64_t j = 0; j < nu; ++j) {
      const long double f = eval_fn(x, fi[0], ut[j]);
      const long double g = eval_fn(y, fi[1], ut[j]);
      rv[j] = a * f + b * g;
      /* a f and b g rounded in double, their sum rounded: 2 + 1 roundings
       * (PLFs: plus the interpolation of each, relative to its segment) */
      tol[j] = sum_tolerance(x->dtype, 2, fabsl(a * f) + fabsl(b * g), rv[j]) +
               8 * 0x1p-52L * (fabsl((long double)a) * interp_mag(x, fi[0], ut[j]) +
                               fabsl((long double)b) * interp_mag(y, fi[1], ut[j]));
    }
    check_against("mpcf_pcfs_combine", &d, i, ut, rv, tol, nu);
  }
  slot_take(dst, out, &d);
  pcfs_data_free(&d);
}

/* sub-operation 5: ROUNDTRIP x flags: mpcf_pcfs_serialized_size,
 * mpcf_pcfs_serialize, mpcf_pcfs_deserialize give the slot's data, shape and
 * dtype back, and serialize again to the same bytes. flags: 1 NULL size
 * output, 2 a buffer one byte short, 4 a NULL buffer, 8 NULL handle. */
static void tda_roundtrip(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  const unsigned flags = fz_u8(r);
  uint64_t size = 777;
  const mpcf_pcfs* h = x && !(flags & 8) ? x->h : NULL;
  check_status("mpcf_pcfs_serialized_size", mpcf_pcfs_serialized_size(h, (flags & 1) ? NULL : &size),
               h && !(flags & 1) ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
  if (h == NULL || (flags & 1)) {
    FZ_CHECK(size == 777, "mpcf_pcfs_serialized_size failed and still wrote *out");
    if (h == NULL) {
      unsigned char buf[16];
      memset(buf, CANARY, sizeof buf);
      check_status("mpcf_pcfs_serialize", mpcf_pcfs_serialize(NULL, buf, sizeof buf), ST(MPCF_ERROR_INVALID_ARGUMENT));
      FZ_CHECK(is_canary(buf, sizeof buf), "mpcf_pcfs_serialize(NULL) wrote the buffer");
    }
    return;
  }
  const size_t esz = x->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  const uint64_t want = 40 + 8 * x->ndim + 8 * (x->n + 1) + 2 * esz * x->off[x->n] + 8;
  FZ_CHECK(size == want, "mpcf_pcfs_serialized_size: %llu, the format gives %llu", (unsigned long long)size,
           (unsigned long long)want);
  unsigned char* buf = canary_buffer(size + 8);
  if (flags & 6) {
    const mpcf_status s_ = mpcf_pcfs_serialize(h, (flags & 4) ? NULL : buf, (flags & 2) ? size - 1 : size);
    check_status("mpcf_pcfs_serialize", s_, (flags & 4) ? ST(MPCF_ERROR_INVALID_ARGUMENT) | ((flags & 2) ? ST(MPCF_ERROR_BUFFER_TOO_SMALL) : 0)
                                                        : ST(MPCF_ERROR_BUFFER_TOO_SMALL));
    FZ_CHECK(is_canary(buf, size + 8), "mpcf_pcfs_serialize failed and still wrote the buffer");
  }
  check_status("mpcf_pcfs_serialize", mpcf_pcfs_serialize(h, buf, size + 8), ST(MPCF_OK));
  FZ_CHECK(is_canary(buf + size, 8), "mpcf_pcfs_serialize wrote beyond the serialized size");
  mpcf_pcfs* back = NULL;
  const mpcf_status ds = mpcf_pcfs_deserialize(buf, size, &back);
  check_status("mpcf_pcfs_deserialize", ds, ST(MPCF_OK));
  slot copy = *x;
  copy.h = back;
  copy.K = 1; /* the component axis is not saved (mpcf.h) */
  copy.caxis = 0;
  check_slot_queries(&copy);
  pcfs_data d;
  read_pcfs(back, &d);
  for (uint64_t k = 0; k < d.total; ++k) {
    FZ_CHECK(same_bits(d.t[k], x->t[k], x->dtype) && same_bits(d.v[k], x->v[k], x->dtype),
             "mpcf_pcfs_deserialize: breakpoint %llu differs from the serialized collection's", (unsigned long long)k);
  }
  FZ_CHECK(memcmp(d.off, x->off, (x->n + 1) * sizeof(uint64_t)) == 0, "mpcf_pcfs_deserialize: other offsets");
  pcfs_data_free(&d);
  unsigned char* again = canary_buffer(size);
  check_status("mpcf_pcfs_serialize", mpcf_pcfs_serialize(back, again, size), ST(MPCF_OK));
  FZ_CHECK(memcmp(again, buf, size) == 0, "the deserialized collection serializes to other bytes");
  free(again);
  mpcf_pcfs_destroy(back);
  free(buf);
}

/* sub-operation 6: SLICE x begin end flags dst: mpcf_pcfs_slice. begin and
 * end: a byte b, b % (n + 3) (so past the end too), or UINT64_MAX for
 * b >= 250. flags: 1 NULL out. The view goes into slot dst (destroying
 * what was there, possibly X itself: the view keeps X's breakpoints
 * alive), so every later operation computes over a view and is checked
 * against the model of the functions it holds. */
static void tda_slice(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  const unsigned bb = fz_u8(r), eb = fz_u8(r);
  const unsigned flags = fz_u8(r);
  slot* dst = &st->s[fz_u8(r) % N_SLOTS];
  const uint64_t n = x ? x->n : 0;
  const uint64_t begin = bb >= 250 ? UINT64_MAX : bb % (n + 3);
  const uint64_t end = eb >= 250 ? UINT64_MAX : eb % (n + 3);
  const int null_out = flags & 1;
  const int ok = x != NULL && !null_out && begin <= end && end <= n;
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x51ce;
  mpcf_pcfs* out = sentinel;
  const mpcf_status s_ = mpcf_pcfs_slice(x ? x->h : NULL, begin, end, null_out ? NULL : &out);
  check_status("mpcf_pcfs_slice", s_, ok ? ST(MPCF_OK) : ST(MPCF_ERROR_INVALID_ARGUMENT));
  if (s_ != MPCF_OK) {
    FZ_CHECK(out == sentinel, "mpcf_pcfs_slice failed and still wrote *out");
    return;
  }
  pcfs_data d;
  read_pcfs(out, &d);
  FZ_CHECK(d.n == end - begin && d.dtype == x->dtype && d.ndim == 1 && d.shape[0] == end - begin,
           "mpcf_pcfs_slice(%llu, %llu): %llu functions of ndim %zu, expected %llu, shape {%llu}",
           (unsigned long long)begin, (unsigned long long)end, (unsigned long long)d.n, d.ndim,
           (unsigned long long)(end - begin), (unsigned long long)(end - begin));
  FZ_CHECK(d.plf == x->plf, "mpcf_pcfs_slice: the view is not of X's function type");
  const uint64_t base = x->off[begin];
  FZ_CHECK(d.total == x->off[end] - base, "mpcf_pcfs_slice: %llu breakpoints, expected %llu",
           (unsigned long long)d.total, (unsigned long long)(x->off[end] - base));
  for (uint64_t i = 0; i <= d.n; ++i) {
    FZ_CHECK(d.off[i] == x->off[begin + i] - base, "mpcf_pcfs_slice: offset %llu is %llu, expected %llu",
             (unsigned long long)i, (unsigned long long)d.off[i], (unsigned long long)(x->off[begin + i] - base));
  }
  for (uint64_t k = 0; k < d.total; ++k) {
    FZ_CHECK(same_bits(d.t[k], x->t[base + k], x->dtype) && same_bits(d.v[k], x->v[base + k], x->dtype),
             "mpcf_pcfs_slice: breakpoint %llu differs from X's breakpoint %llu", (unsigned long long)k,
             (unsigned long long)(base + k));
  }
  slot_take(dst, out, &d);
  pcfs_data_free(&d);
}


/* sub-operation 7: COMPONENTS x on: mpcf_pcfs_set_component_axis(x, on)
 * with on = the byte as a signed char (0 clears the axis). Needs ndim >= 2
 * and a last dimension >= 1 (else MPCF_ERROR_INVALID_ARGUMENT, nothing
 * changed); afterwards every computation on x runs over its objects (the
 * model: objs(), obj_reference(), fn_norms()). */
static void tda_components(fz_reader* r, state* st) {
  slot* x = slot_or_null(r, st);
  const int on = (int)(int8_t)fz_u8(r);
  unsigned allowed = ST(MPCF_OK);
  if (x == NULL) allowed = ST(MPCF_ERROR_INVALID_ARGUMENT);
  else if (on != 0 && (x->ndim < 2 || x->shape[x->ndim - 1] == 0)) allowed = ST(MPCF_ERROR_INVALID_ARGUMENT);
  const mpcf_status s_ = mpcf_pcfs_set_component_axis(x ? x->h : NULL, on);
  check_status("mpcf_pcfs_set_component_axis", s_, allowed);
  if (x == NULL) return;
  if (s_ == MPCF_OK) {
    x->caxis = on != 0;
    x->K = on != 0 ? x->shape[x->ndim - 1] : 1;
  }
  check_slot_queries(x);
  if (tracing()) fprintf(stderr, "  component axis %s: K = %llu\n", x->caxis ? "on" : "off", (unsigned long long)x->K);
}

/* The tent of a bar (birth b, death d) at t. */
static long double tent(double b, double d, double t) {
  const long double up = (long double)t - b, down = (long double)d - t;
  const long double m = up < down ? up : down;
  return m > 0 ? m : 0;
}

static int cmp_ldouble_desc(const void* a, const void* b) {
  const long double x = *(const long double*)a, y = *(const long double*)b;
  return x > y ? -1 : x < y;
}

/* mpcf.h, mpcf_plfs_landscapes: the n * k functions of the result take at
 * least 2 * sizeof(dtype) + 8 bytes each (16 in float32, 24 in float64); a
 * k for which that passes 64 bits is MPCF_ERROR_INVALID_ARGUMENT, one for
 * which it passes the machine's physical memory MPCF_ERROR_OUT_OF_MEMORY;
 * n = 0 allows any k. MPCF_OK when the result fits. */
static mpcf_status landscape_size_status(mpcf_dtype dt, uint64_t n, uint64_t k) {
  if (n == 0 || k == 0) return MPCF_OK;
  const uint64_t each = dt == MPCF_FLOAT32 ? 16 : 24;
  if (k > UINT64_MAX / each / n) return MPCF_ERROR_INVALID_ARGUMENT;
#ifdef _SC_PHYS_PAGES
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  /* both sides exact in long double's 64-bit mantissa */
  if (pages > 0 && page > 0 && (long double)n * k * each > (long double)pages * page) {
    return MPCF_ERROR_OUT_OF_MEMORY;
  }
#endif
  return MPCF_OK;
}

/* sub-operation 8: LANDSCAPES dst which dtype n flags bars-per-barcode...
 * bars... k-or-q clip: mpcf_plfs_landscapes (which bit 0 clear; k = the
 * byte % 7, 0 an error; with flags bit 8 a huge k, the byte % 7 picking
 * 2^64 - 1, 2^63, the largest k whose result's bytes fit 64 bits plus one,
 * that k itself, 2^50, 2^45, 2^62) or mpcf_plfs_silhouettes (q = the byte %
 * 10 from a table: 0, 1, 2, 0.5, 3, -1, NaN, inf, 1e300, -0). Bars as for
 * FROM_BARCODES. clip: 0 none (+inf), 1 10, 2 0, 3 -5, 4 1e6, 5 NaN, 6 -inf,
 * 7 1e39, else a value code. flags: 1 NULL out, 2 NULL offsets, 4 NULL
 * bars, 8 a huge k. Checks the status (k = 0, a k whose result is too large
 * for 64 bits or for this machine's memory, q < 0 or NaN or inf, a bad clip,
 * bad bars, an infinite bar without clip: the message names barcode and
 * bar), the shape ((n, k) or (n)), the function type (PLF), the canonical
 * form and the values: the result evaluated (mpcf_pcfs_evaluate) at its
 * breakpoints, between them and beyond them against the k-th largest tent /
 * the weighted mean of the tents, computed here from the bars. */
static void tda_landscapes(fz_reader* r, state* st) {
  slot* dst = &st->s[fz_u8(r) % N_SLOTS];
  const int silhouette = fz_u8(r) & 1;
  const unsigned dcode = fz_u8(r);
  const int dtype_raw = (dcode & 0x80) ? (int)(dcode & 0x7f) : ((dcode & 1) ? MPCF_FLOAT32 : MPCF_FLOAT64);
  const int dtype_ok = dtype_raw == MPCF_FLOAT32 || dtype_raw == MPCF_FLOAT64;
  const mpcf_dtype dt = dtype_raw == MPCF_FLOAT32 ? MPCF_FLOAT32 : MPCF_FLOAT64;
  const uint64_t n = fz_u8(r) % (MAX_BARCODES + 1);
  const unsigned flags = fz_u8(r);
  uint64_t off[MAX_BARCODES + 1];
  off[0] = 0;
  for (uint64_t i = 0; i < n; ++i) off[i + 1] = off[i] + fz_u8(r) % (MAX_BARS + 1);
  const uint64_t total = off[n];
  double bars[2 * MAX_BARCODES * MAX_BARS + 2];
  decode_bars(r, total, bars);
  const unsigned kq = fz_u8(r);
  const int huge_k = !silhouette && (flags & 8);
  /* the largest k whose n * k functions' bytes fit 64 bits (n = 0: any) */
  const uint64_t k64 = n == 0 ? UINT64_MAX : UINT64_MAX / (dt == MPCF_FLOAT32 ? 16 : 24) / n;
  const uint64_t huge[7] = {UINT64_MAX, UINT64_C(1) << 63, k64 == UINT64_MAX ? k64 : k64 + 1, k64,
                            UINT64_C(1) << 50, UINT64_C(1) << 45, UINT64_C(1) << 62};
  const uint64_t k = huge_k ? huge[kq % 7] : kq % 7;
  static const double qs[10] = {0.0, 1.0, 2.0, 0.5, 3.0, -1.0, NAN, INFINITY, 1e300, -0.0};
  const double q = qs[kq % 10];
  const unsigned cc = fz_u8(r);
  double clip;
  switch (cc) {
    case 0: clip = INFINITY; break;
    case 1: clip = 10.0; break;
    case 2: clip = 0.0; break;
    case 3: clip = -5.0; break;
    case 4: clip = 1e6; break;
    case 5: clip = NAN; break;
    case 6: clip = -INFINITY; break;
    case 7: clip = 1e39; break;
    default: clip = value_code(r); break;
  }
  const int null_out = flags & 1, null_off = (flags & 2) != 0, null_bars = (flags & 4) != 0;
  if (tracing()) {
    fprintf(stderr, "  %s, dtype %d, k %llu, q %g, clip %g, flags %u, bars:", silhouette ? "silhouettes" : "landscapes",
            dtype_raw, (unsigned long long)k, q, clip, flags);
    for (uint64_t b = 0; b < total; ++b) fprintf(stderr, " (%.17g, %.17g)", bars[2 * b], bars[2 * b + 1]);
    fputc('\n', stderr);
  }
  expect e = {0, 0};
  if (null_out || null_off || !dtype_ok) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (!null_off && total > 0 && null_bars) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (!silhouette && k == 0) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  const unsigned before_size = e.errors | e.also;
  const mpcf_status size_status = silhouette ? MPCF_OK : landscape_size_status(dt, n, k);
  if (size_status != MPCF_OK) e.errors |= ST(size_status);
  /* A huge k that this machine's memory would hold (none of the table's on
   * any machine of less than 512 TiB): not built here. */
  if (huge_k && n > 0 && size_status == MPCF_OK) return;
  if (silhouette && !(q >= 0 && isfinite(q))) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (isnan(clip) || clip == -INFINITY) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (isfinite(clip) && overflows(dt, clip) == 1) e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (isfinite(clip) && overflows(dt, clip) == -1) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT);
  const unsigned before_bars = e.errors | e.also;
  int checkable = 1;
  int bar_error = 0;
  for (uint64_t b = 0; b < total; ++b) {
    const double bi = bars[2 * b], de = bars[2 * b + 1];
    if (isnan(bi) || isnan(de) || isinf(bi) || de < bi || (isinf(de) && !isfinite(clip))) {
      bar_error = 1;
      e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
      continue;
    }
    const double death = isinf(de) ? clip : de;
    if (!(bi < death)) continue;
    if (!isfinite(death - bi)) {
      bar_error = 1;
      e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
      continue;
    }
    const int ob = overflows(dt, bi), od = overflows(dt, death);
    if (ob == 1 || od == 1) bar_error = 1, e.errors |= ST(MPCF_ERROR_INVALID_ARGUMENT);
    else if (ob || od) e.also |= ST(MPCF_ERROR_INVALID_ARGUMENT), checkable = 0;
  }
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x1a5d;
  mpcf_pcfs* out = sentinel;
  const char* call = silhouette ? "mpcf_plfs_silhouettes" : "mpcf_plfs_landscapes";
  const uint64_t* op = null_off ? NULL : off;
  const double* bp = null_bars ? NULL : bars;
  const mpcf_status s_ = silhouette ? mpcf_plfs_silhouettes((mpcf_dtype)dtype_raw, n, op, bp, q, clip,
                                                            null_out ? NULL : &out)
                                    : mpcf_plfs_landscapes((mpcf_dtype)dtype_raw, n, op, bp, k, clip,
                                                           null_out ? NULL : &out);
  check_status(call, s_, allowed_of(e));
  if (s_ != MPCF_OK) {
    FZ_CHECK(out == sentinel, "%s failed and still wrote *out", call);
    if (before_bars == 0 && bar_error) {
      const char* m = mpcf_last_error_message();
      FZ_CHECK(strstr(m, "barcode ") != NULL && strstr(m, "bar ") != NULL,
               "%s refused a bad bar without naming barcode and bar: '%s'", call, m);
    }
    if (before_size == 0 && !bar_error && size_status != MPCF_OK && (e.errors | e.also) == ST(size_status)) {
      /* refused for k alone: the message names k and its largest value */
      const char* m = mpcf_last_error_message();
      char named[48];
      snprintf(named, sizeof named, "k = %llu ", (unsigned long long)k);
      FZ_CHECK(strstr(m, named) != NULL && strstr(m, "k can be at most ") != NULL,
               "%s refused k = %llu without naming k and its largest value: '%s'", call, (unsigned long long)k, m);
    }
    return;
  }
  pcfs_data d;
  read_pcfs(out, &d);
  const uint64_t nf = silhouette ? n : n * k;
  FZ_CHECK(d.n == nf && d.dtype == dt && d.plf, "%s: %llu functions of type %s, expected %llu PLFs", call,
           (unsigned long long)d.n, d.plf ? "PLF" : "PCF", (unsigned long long)nf);
  FZ_CHECK(silhouette ? (d.ndim == 1 && d.shape[0] == n) : (d.ndim == 2 && d.shape[0] == n && d.shape[1] == k),
           "%s: not the shape %s", call, silhouette ? "(n)" : "(n, k)");
  check_canonical_plf(call, &d);
  /* the times to look at: every breakpoint, the midpoints, one before and
   * one after each function */
  enum { MAX_EVAL = 512 };
  static double ts[MAX_EVAL];
  uint64_t nt = 0;
  for (uint64_t f = 0; f < d.n && nt + 8 < MAX_EVAL; ++f) {
    const uint64_t a = d.off[f], m = d.off[f + 1] - a;
    ts[nt++] = d.t[a] - 1.0;
    for (uint64_t q2 = 0; q2 < m && nt + 3 < MAX_EVAL; ++q2) {
      ts[nt++] = d.t[a + q2];
      ts[nt++] = q2 + 1 < m ? d.t[a + q2] / 2 + d.t[a + q2 + 1] / 2 : d.t[a + q2] + 1.0;
    }
  }
  nt = sort_unique(ts, nt);
  const size_t esz = dt == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  void* vals = canary_buffer((d.n * nt + 1) * esz);
  check_status("mpcf_pcfs_evaluate", mpcf_pcfs_evaluate(out, ts, nt, vals, d.n * nt), ST(MPCF_OK));
  const long double rel = dt == MPCF_FLOAT32 ? 1e-6L : 1e-12L;
  for (uint64_t i = 0; checkable && i < n; ++i) {
    long double scale = 0; /* the size of the barcode's numbers */
    long double w[MAX_BARS], wsum = 0;
    double bb[MAX_BARS], dd[MAX_BARS];
    uint64_t nb = 0;
    for (uint64_t b = off[i]; b < off[i + 1]; ++b) {
      const double bi = bars[2 * b], de = isinf(bars[2 * b + 1]) ? clip : bars[2 * b + 1];
      if (!(bi < de)) continue;
      bb[nb] = bi;
      dd[nb] = de;
      w[nb] = silhouette ? (q == 0 ? 1.0L : powl((long double)de - bi, q)) : 1;
      wsum += w[nb];
      if (fabsl((long double)bi) + fabsl((long double)de) > scale) scale = fabsl((long double)bi) + fabsl((long double)de);
      ++nb;
    }
    /* weights beyond long double's range (q = 1e300): not checked here */
    if (silhouette && nb > 0 && !(isfinite(wsum) && wsum > LDBL_MIN * 1e100L)) continue;
    for (uint64_t j = 0; j < nt; ++j) {
      long double tv[MAX_BARS];
      long double mean = 0;
      for (uint64_t b = 0; b < nb; ++b) {
        tv[b] = tent(bb[b], dd[b], ts[j]);
        mean += w[b] * tv[b];
      }
      if (nb > 0) mean /= wsum;
      qsort(tv, nb, sizeof tv[0], cmp_ldouble_desc);
      const long double tol = rel * (scale + fabsl((long double)ts[j])) + (long double)dtype_denorm_min(dt);
      for (uint64_t f = 0; f < (silhouette ? 1 : k); ++f) {
        const long double want = silhouette ? mean : (f < nb ? tv[f] : 0);
        const uint64_t fi = silhouette ? i : i * k + f;
        const double got = element_of(vals, dt, fi * nt + j);
        FZ_CHECK(fabsl((long double)got - want) <= tol,
                 "%s: barcode %llu, %s %llu at t = %.17g is %.17g, the tents give %.17Lg (within %.3Lg)", call,
                 (unsigned long long)i, silhouette ? "silhouette" : "landscape", (unsigned long long)(f + 1), ts[j],
                 got, want, tol);
      }
    }
  }
  free(vals);
  slot_take(dst, out, &d);
  pcfs_data_free(&d);
}

/* opcode 15: TDA sub-operation (mod 9), then its arguments. */
static void op_tda(fz_reader* r, state* st) {
  switch (fz_u8(r) % 9) {
    case 0: tda_from_barcodes(r, st); break;
    case 1: tda_evaluate(r, st); break;
    case 2: tda_readout(r, st); break;
    case 3: tda_reduce(r, st); break;
    case 4: tda_combine(r, st); break;
    case 5: tda_roundtrip(r, st); break;
    case 6: tda_slice(r, st); break;
    case 7: tda_components(r, st); break;
    default: tda_landscapes(r, st); break;
  }
}

/* ------------------------------------------------------------------ */
/* The program                                                          */
/* ------------------------------------------------------------------ */

/* opcode 18: GPU_MEMORY sub [value]: the memory kept between computations.
 * sub % 6: 0 mpcf_cuda_cached_bytes(device from a table, out or NULL),
 * 1 mpcf_cuda_set_cache_limit(limit from a table) and the getter,
 * 2 mpcf_cuda_cache_limit(NULL), 3 mpcf_cuda_release_memory, 4
 * mpcf_cuda_register_host(NULL, a static buffer or a part of it; 0 bytes
 * or some), 5 mpcf_cuda_unregister_host(NULL, the buffer or a part of it).
 * Whatever another operation kept is at most the limit, and nothing is
 * kept right after a release. Registration: without a device only the
 * argument errors and CUDA_UNAVAILABLE; with one, the buffer registers once
 * (again: overlap) and unregisters once. */
static unsigned char fz_registered_buffer[8192];
static int fz_buffer_registered = 0;
static void op_register_host(fz_reader* r, int devices, int unregister) {
  const unsigned c = fz_u8(r);
  void* const table[3] = {NULL, fz_registered_buffer, fz_registered_buffer + 64};
  void* p = table[c % 3];
  if (unregister) {
    const mpcf_status s = mpcf_cuda_unregister_host(p);
    unsigned allowed = ST(MPCF_ERROR_INVALID_ARGUMENT);
    if (p != NULL && devices == 0 && !mpcf_has_cuda()) allowed = ST(MPCF_ERROR_CUDA_UNAVAILABLE);
    if (p == fz_registered_buffer && fz_buffer_registered) allowed = ST(MPCF_OK);
    check_status("mpcf_cuda_unregister_host", s, allowed);
    if (s == MPCF_OK) fz_buffer_registered = 0;
    return;
  }
  const uint64_t bytes = (c & 0x80) ? 0 : (p == fz_registered_buffer ? sizeof fz_registered_buffer : 64);
  const mpcf_status s = mpcf_cuda_register_host(p, bytes);
  unsigned allowed = ST(MPCF_ERROR_INVALID_ARGUMENT);
  if (p != NULL && bytes > 0) {
    allowed = devices == 0 ? ST(MPCF_ERROR_CUDA_UNAVAILABLE)
              : (p == fz_registered_buffer && !fz_buffer_registered) ? ST(MPCF_OK)
                                                                      : ST(MPCF_ERROR_INVALID_ARGUMENT);
  }
  check_status("mpcf_cuda_register_host", s, allowed);
  if (s == MPCF_OK && p != fz_registered_buffer) {
    FZ_CHECK(mpcf_cuda_unregister_host(p) == MPCF_OK, "a part of the buffer registered and stuck");
  } else if (s == MPCF_OK) {
    fz_buffer_registered = 1;
  }
}

static void op_gpu_memory(fz_reader* r, state* st) {
  const unsigned sub = fz_u8(r) % 6;
  const int devices = mpcf_cuda_device_count();
  switch (sub) {
    case 0: {
      const unsigned c = fz_u8(r);
      const int table[6] = {-1, 0, 1, INT32_MIN, INT32_MAX, devices};
      const int device = table[c % 6];
      const int null_out = (c & 0x80) != 0;
      uint64_t bytes = UINT64_C(0xA5A5A5A5A5A5A5A5);
      const mpcf_status s = mpcf_cuda_cached_bytes(device, null_out ? NULL : &bytes);
      const unsigned allowed = null_out || device < 0 ? ST(MPCF_ERROR_INVALID_ARGUMENT)
                               : device >= devices    ? ST(MPCF_ERROR_CUDA_UNAVAILABLE)
                                                      : ST(MPCF_OK);
      check_status("mpcf_cuda_cached_bytes", s, allowed);
      if (s != MPCF_OK) {
        FZ_CHECK(bytes == UINT64_C(0xA5A5A5A5A5A5A5A5), "a failing mpcf_cuda_cached_bytes wrote its output");
      } else {
        uint64_t limit = 0;
        FZ_CHECK(mpcf_cuda_cache_limit(&limit) == MPCF_OK, "mpcf_cuda_cache_limit failed");
        FZ_CHECK(bytes <= limit, "%llu bytes kept on device %d, above the limit %llu", (unsigned long long)bytes,
                 device, (unsigned long long)limit);
      }
      break;
    }
    case 1: {
      const uint64_t table[6] = {0, 1, 4096, UINT64_C(1) << 20, UINT64_C(1) << 30, UINT64_MAX};
      const uint64_t want = table[fz_u8(r) % 6];
      check_status("mpcf_cuda_set_cache_limit", mpcf_cuda_set_cache_limit(want), ST(MPCF_OK));
      uint64_t got = 0;
      check_status("mpcf_cuda_cache_limit", mpcf_cuda_cache_limit(&got), ST(MPCF_OK));
      FZ_CHECK(got == want, "the cache limit set to %llu reads %llu", (unsigned long long)want,
               (unsigned long long)got);
      for (int d = 0; d < devices; ++d) {
        uint64_t kept = 0;
        FZ_CHECK(mpcf_cuda_cached_bytes(d, &kept) == MPCF_OK && kept <= want,
                 "device %d keeps %llu bytes after the limit was set to %llu", d, (unsigned long long)kept,
                 (unsigned long long)want);
      }
      break;
    }
    case 2:
      check_status("mpcf_cuda_cache_limit(NULL)", mpcf_cuda_cache_limit(NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
      break;
    case 4:
    case 5:
      op_register_host(r, devices, sub == 5);
      break;
    default:
      check_status("mpcf_cuda_release_memory", mpcf_cuda_release_memory(), ST(MPCF_OK));
      for (int d = 0; d < devices; ++d) {
        uint64_t kept = 1;
        FZ_CHECK(mpcf_cuda_cached_bytes(d, &kept) == MPCF_OK && kept == 0,
                 "device %d keeps %llu bytes after mpcf_cuda_release_memory", d, (unsigned long long)kept);
      }
      break;
  }
  (void)st;
}

enum opcode {
  OPC_CREATE = 0,
  OPC_RESHAPE = 1,
  OPC_DESTROY = 2,
  OPC_OPTIONS = 3,
  OPC_PAIR = 4,
  OPC_PDIST = 5,
  OPC_L2_KERNEL = 6,
  OPC_CDIST = 7,
  OPC_LP_NORM = 8,
  OPC_QUERIES = 9,
  OPC_OPTIONS_RESET = 10,
  OPC_CONCURRENT = 11,
  OPC_KNN = 12,
  OPC_STREAM = 13,
  OPC_MATVEC = 14,
  OPC_TDA = 15, /* a sub-operation byte follows: the barcode, pointwise, read-out and serialization calls */
  OPC_KNN_BOTH = 16,
  OPC_KNN_MERGE = 17,
  OPC_GPU_MEMORY = 18,
  OPC_COUNT = 19 /* the opcode byte is taken mod OPC_COUNT */
};

static const char* const OP_NAMES[OPC_COUNT] = {
    [OPC_CREATE] = "CREATE (mpcf_pcfs_create*)", [OPC_RESHAPE] = "RESHAPE", [OPC_DESTROY] = "DESTROY",
    [OPC_OPTIONS] = "OPTIONS (mpcf_options_set_*)", [OPC_PAIR] = "PAIR (mpcf_lp_distance / mpcf_l2_inner_product)",
    [OPC_PDIST] = "PDIST (mpcf_pdist*)", [OPC_L2_KERNEL] = "L2_KERNEL (mpcf_l2_kernel*)",
    [OPC_CDIST] = "CDIST (mpcf_cdist*)", [OPC_LP_NORM] = "LP_NORM (mpcf_lp_norm)",
    [OPC_QUERIES] = "QUERIES", [OPC_OPTIONS_RESET] = "OPTIONS_RESET", [OPC_CONCURRENT] = "CONCURRENT",
    [OPC_KNN] = "KNN (mpcf_knn*)", [OPC_STREAM] = "STREAM (mpcf_pdist_stream*, mpcf_cdist_stream*)",
    [OPC_MATVEC] = "MATVEC (mpcf_kernel_matvec*)",
    [OPC_TDA] = "TDA (barcodes, evaluate, read-out, reduce, combine, files, slice, component axis, landscapes)",
    [OPC_KNN_BOTH] = "KNN_BOTH (mpcf_knn_both*)", [OPC_KNN_MERGE] = "KNN_MERGE (mpcf_knn_merge)",
    [OPC_GPU_MEMORY] = "GPU_MEMORY (mpcf_cuda_cached_bytes, mpcf_cuda_*cache_limit, mpcf_cuda_release_memory)",
};

static void trace_slots(const state* st) {
  for (int k = 0; k < N_SLOTS; ++k) {
    const slot* s = &st->s[k];
    if (s->h == NULL) continue;
    fprintf(stderr, "  slot %d: %s, n = %llu, shape (", k, s->dtype == MPCF_FLOAT32 ? "float32" : "float64",
            (unsigned long long)s->n);
    for (size_t q = 0; q < s->ndim; ++q) fprintf(stderr, "%s%llu", q ? ", " : "", (unsigned long long)s->shape[q]);
    fprintf(stderr, ")%s, K = %llu%s\n", s->plf ? ", PLFs" : "", (unsigned long long)s->K, s->caxis ? " (component axis)" : "");
    for (uint64_t i = 0; i < s->n; ++i) {
      fprintf(stderr, "    f%llu:", (unsigned long long)i);
      for (uint64_t q = s->off[i]; q < s->off[i + 1]; ++q) fprintf(stderr, " (%.9g, %.9g)", s->t[q], s->v[q]);
      fputc('\n', stderr);
    }
  }
  fprintf(stderr, "  options: backend %d, window [%.17g, %.17g), hints %llu %llu %llu\n", st->o.backend, st->o.a,
          st->o.b, (unsigned long long)st->o.split, (unsigned long long)st->o.min_side,
          (unsigned long long)st->o.max_elements);
}

static void run_op(fz_reader* r, state* st, unsigned code, int index) {
  static char context[128];
  if (tracing()) {
    fprintf(stderr, "op %d: %s\n", index, OP_NAMES[code] ? OP_NAMES[code] : "unused");
    trace_slots(st);
  }
  snprintf(context, sizeof context, "running operation %d of the input: opcode %u, %s", index, code,
           OP_NAMES[code] ? OP_NAMES[code] : "unused");
  fz_set_context(context);
  switch (code) {
    case OPC_CREATE: op_create(r, st); break;
    case OPC_RESHAPE: op_reshape(r, st); break;
    case OPC_DESTROY: op_destroy(r, st); break;
    case OPC_OPTIONS: op_options(r, st); break;
    case OPC_PAIR: op_pair(r, st); break;
    case OPC_PDIST: op_pdist(r, st); break;
    case OPC_L2_KERNEL: op_kernel(r, st); break;
    case OPC_CDIST: op_cdist(r, st); break;
    case OPC_LP_NORM: op_norm(r, st); break;
    case OPC_QUERIES: op_queries(r, st); break;
    case OPC_OPTIONS_RESET: op_options_reset(r, st); break;
    case OPC_CONCURRENT: op_concurrent(r, st); break;
    case OPC_KNN: op_knn(r, st); break;
    case OPC_STREAM: op_stream(r, st); break;
    case OPC_MATVEC: op_matvec(r, st); break;
    case OPC_TDA: op_tda(r, st); break;
    case OPC_KNN_BOTH: op_knn_both(r, st); break;
    case OPC_KNN_MERGE: op_knn_merge(r, st); break;
    case OPC_GPU_MEMORY: op_gpu_memory(r, st); break;
    default: break;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fz_reader r = {data, size};
  static state st; /* static: too big for a fuzzer thread's stack comfort */
  memset(&st, 0, sizeof st);
  st.has_devices = mpcf_cuda_device_count() > 0;
  op_options_reset(&r, &st);
  for (int k = 0; k < MAX_OPS && !fz_empty(&r); ++k) run_op(&r, &st, fz_u8(&r) % OPC_COUNT, k);
  for (int k = 0; k < N_SLOTS; ++k) mpcf_pcfs_destroy(st.s[k].h);
  mpcf_options_destroy(st.o.h);
  return 0;
}
