/* fuzz_csv: the CLI's CSV reader (capi/cli/csv_reader.c). The fuzz input is
 * the file's content; it is read as float64 and as float32, and checked:
 *
 *  - an accepted file gives consistent arrays (offsets, ids, first lines,
 *    the line of every row, min_m/max_m);
 *  - libmpcf judges the numbers (the reader does not): mpcf_pcfs_create and
 *    mpcf_pcfs_create_interleaved either both accept the arrays, with the
 *    same data (counts, and the supremum norm of every function, which is
 *    exactly max |v_k|), or both refuse them with MPCF_ERROR_INVALID_PCF
 *    naming a breakpoint that is not finite or not after the one before,
 *    which csv_where places on that row's line;
 *  - writing the arrays back as canonical CSV and reading that gives the
 *    same arrays bit for bit (any NaN for a NaN);
 *  - float32 accepts only what float64 accepts, with the same functions and
 *    the float64 numbers rounded to float;
 *  - a rejection is CSV_ERROR_FORMAT with a message naming the file and a
 *    line of it ("fuzz.csv:LINE: ..."; only "no data rows" names no line),
 *    and leaves the output empty; float32 fails no later than float64. */
#define _GNU_SOURCE

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "csv_reader.h"
#include "fuzz_support.h"
#include "mpcf/mpcf.h"

#define NAME "fuzz.csv"

/* A file the reader can open by path whose content is set per input: a
 * memfd (no disk traffic), else a temporary file. */
typedef struct mem_file {
  int fd;
  char path[64];
} mem_file;

static char g_tmp_paths[2][64];

static void remove_tmp_files(void) {
  for (int k = 0; k < 2; ++k) {
    if (g_tmp_paths[k][0] != '\0') unlink(g_tmp_paths[k]);
  }
}

static void mem_file_open(mem_file* f, const char* tag) {
  if (f->path[0] != '\0') return;
  f->fd = memfd_create(tag, 0);
  if (f->fd >= 0) {
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", f->fd);
    return;
  }
  /* No memfd: a temporary file, removed at exit. */
  snprintf(f->path, sizeof f->path, "/tmp/mpcf_fuzz_csv_XXXXXX");
  f->fd = mkstemp(f->path);
  FZ_CHECK(f->fd >= 0, "cannot create a temporary file: %s", strerror(errno));
  const int k = g_tmp_paths[0][0] == '\0' ? 0 : 1;
  if (k == 0) atexit(remove_tmp_files);
  snprintf(g_tmp_paths[k], sizeof g_tmp_paths[k], "%s", f->path);
}

static void mem_file_set(mem_file* f, const void* data, size_t size) {
  FZ_CHECK(ftruncate(f->fd, 0) == 0, "ftruncate: %s", strerror(errno));
  size_t done = 0;
  while (done < size) {
    const ssize_t w = pwrite(f->fd, (const char*)data + done, size - done, (off_t)done);
    FZ_CHECK(w > 0, "pwrite: %s", strerror(errno));
    done += (size_t)w;
  }
}

static double element(const csv_pcfs* p, const void* a, uint64_t k) {
  return p->dtype == MPCF_FLOAT32 ? (double)((const float*)a)[k] : ((const double*)a)[k];
}

static uint64_t line_count(const uint8_t* data, size_t size) {
  uint64_t lines = 0;
  for (size_t k = 0; k < size; ++k) lines += data[k] == '\n';
  if (size > 0 && data[size - 1] != '\n') ++lines;
  return lines;
}

static void check_empty(const csv_pcfs* p) {
  FZ_CHECK(p->n == 0 && p->total == 0 && p->offsets == NULL && p->times == NULL && p->values == NULL &&
               p->ids == NULL && p->first_line == NULL,
           "a rejected file left data in the output");
}

/* The line a message names: 0 for the "no data rows" message. */
static uint64_t message_line(const char* err, uint64_t lines) {
  const size_t nl = strlen(NAME);
  FZ_CHECK(strncmp(err, NAME ":", nl + 1) == 0, "the message does not start with the file name: '%s'", err);
  const char* rest = err + nl + 1;
  if (strncmp(rest, " no data rows", 13) == 0) return 0;
  char* end = NULL;
  const unsigned long long line = strtoull(rest, &end, 10);
  FZ_CHECK(end != rest && *end == ':' && line >= 1 && line <= lines,
           "the message names no line of the file (%llu lines): '%s'", (unsigned long long)lines, err);
  return line;
}

/* The reader's invariants on an accepted file. */
static void check_accepted(const csv_pcfs* p, uint64_t lines) {
  FZ_CHECK(p->n >= 1, "an accepted file has no functions");
  FZ_CHECK(p->offsets != NULL && p->ids != NULL && p->first_line != NULL && p->times && p->values,
           "an accepted file has NULL arrays");
  FZ_CHECK(p->offsets[0] == 0 && p->offsets[p->n] == p->total, "offsets[0] = %llu, offsets[n] = %llu, total = %llu",
           (unsigned long long)p->offsets[0], (unsigned long long)p->offsets[p->n], (unsigned long long)p->total);
  uint64_t min_m = UINT64_MAX, max_m = 0;
  for (uint64_t i = 0; i < p->n; ++i) {
    const uint64_t m = p->offsets[i + 1] - p->offsets[i];
    FZ_CHECK(p->offsets[i + 1] > p->offsets[i], "function %llu has no breakpoints", (unsigned long long)i);
    min_m = m < min_m ? m : min_m;
    max_m = m > max_m ? m : max_m;
    FZ_CHECK(p->ids[i] != NULL && p->ids[i][0] != '\0', "function %llu has an empty id", (unsigned long long)i);
    for (uint64_t j = 0; j < i; ++j) {
      FZ_CHECK(strcmp(p->ids[i], p->ids[j]) != 0, "ids %llu and %llu are both '%s'", (unsigned long long)j,
               (unsigned long long)i, p->ids[i]);
    }
    FZ_CHECK(p->first_line[i] >= 1 && p->first_line[i] <= lines && (i == 0 || p->first_line[i] > p->first_line[i - 1]),
             "function %llu: first line %llu", (unsigned long long)i, (unsigned long long)p->first_line[i]);
    /* Every row has its line: the function's first line first, then later
     * lines of the file, row after row. */
    for (uint64_t k = p->offsets[i]; k < p->offsets[i + 1]; ++k) {
      const uint64_t line = csv_row_line(p, k);
      FZ_CHECK(k == p->offsets[i] ? line == p->first_line[i]
                                  : line > csv_row_line(p, k - 1) && line <= lines,
               "function %llu: breakpoint %llu on line %llu", (unsigned long long)i,
               (unsigned long long)(k - p->offsets[i]), (unsigned long long)line);
    }
  }
  FZ_CHECK(p->min_m == min_m && p->max_m == max_m, "min_m/max_m %llu/%llu, expected %llu/%llu",
           (unsigned long long)p->min_m, (unsigned long long)p->max_m, (unsigned long long)min_m,
           (unsigned long long)max_m);
}

/* libmpcf refused the arrays: for a breakpoint that is not finite or not
 * after the one before, which csv_where places on its row's line. */
static void check_refusal(const csv_pcfs* p, mpcf_status s, const char* call, mpcf_error_detail* d) {
  FZ_CHECK(s == MPCF_ERROR_INVALID_PCF, "%s refuses the reader's arrays with %s: %s", call, mpcf_status_name(s),
           mpcf_last_error_message());
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  FZ_CHECK(mpcf_last_error_detail(d) == MPCF_OK && d->function_index >= 0 &&
               (uint64_t)d->function_index < p->n && d->breakpoint_index >= 0 &&
               (uint64_t)d->breakpoint_index < p->offsets[d->function_index + 1] - p->offsets[d->function_index],
           "%s: the detail names function %lld, breakpoint %lld", call, (long long)d->function_index,
           (long long)d->breakpoint_index);
  const uint64_t k = p->offsets[d->function_index] + (uint64_t)d->breakpoint_index;
  const double t = element(p, p->times, k), v = element(p, p->values, k);
  FZ_CHECK(!isfinite(t) || !isfinite(v) || (d->breakpoint_index > 0 && !(element(p, p->times, k - 1) < t)),
           "%s refuses breakpoint %llu (t = %.17g, v = %.17g), which is valid", call, (unsigned long long)k, t, v);
  char where[256], want[128];
  FZ_CHECK(csv_where(p, NAME, d->function_index, d->breakpoint_index, where, sizeof where) == 1,
           "csv_where does not place function %lld", (long long)d->function_index);
  snprintf(want, sizeof want, NAME ":%llu: id '", (unsigned long long)csv_row_line(p, k));
  FZ_CHECK(strncmp(where, want, strlen(want)) == 0, "csv_where says '%s', expected '%s...'", where, want);
}

/* The library takes the arrays and holds the same data, or refuses them
 * (both forms alike) for a breakpoint that is not valid. */
/* The reader's times and values as the interleaved (t, v) points of
 * mpcf_pcfs_create_interleaved (malloc'd; the caller frees it). */
static unsigned char* interleaved(const csv_pcfs* p) {
  const size_t esz = p->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  unsigned char* pts = malloc(2 * p->total * esz + 1);
  if (pts == NULL) abort();
  for (uint64_t k = 0; k < p->total; ++k) {
    memcpy(pts + 2 * k * esz, (const unsigned char*)p->times + k * esz, esz);
    memcpy(pts + (2 * k + 1) * esz, (const unsigned char*)p->values + k * esz, esz);
  }
  return pts;
}

static void check_library(const csv_pcfs* p) {
  mpcf_pcfs* h = NULL;
  mpcf_status s = mpcf_pcfs_create(p->dtype, p->n, p->offsets, p->times, p->values, &h);
  if (s != MPCF_OK) {
    mpcf_error_detail d, d2;
    check_refusal(p, s, "mpcf_pcfs_create", &d);
    unsigned char* pts = interleaved(p);
    mpcf_pcfs* h2 = NULL;
    s = mpcf_pcfs_create_interleaved(p->dtype, p->n, p->offsets, pts, &h2);
    free(pts);
    FZ_CHECK(s != MPCF_OK, "mpcf_pcfs_create_interleaved accepts what mpcf_pcfs_create refuses");
    check_refusal(p, s, "mpcf_pcfs_create_interleaved", &d2);
    FZ_CHECK(d2.function_index == d.function_index && d2.breakpoint_index == d.breakpoint_index,
             "the two forms refuse other breakpoints");
    return;
  }
  uint64_t u = 0;
  FZ_CHECK(mpcf_pcfs_count(h, &u) == MPCF_OK && u == p->n, "count %llu, expected %llu", (unsigned long long)u,
           (unsigned long long)p->n);
  FZ_CHECK(mpcf_pcfs_total_breakpoints(h, &u) == MPCF_OK && u == p->total, "total %llu, expected %llu",
           (unsigned long long)u, (unsigned long long)p->total);
  /* The supremum norm over the whole line is max |v_k| exactly. */
  const size_t esz = p->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  void* norms = malloc(p->n * esz);
  if (norms == NULL) abort();
  s = mpcf_lp_norm(h, INFINITY, norms, p->n, NULL);
  FZ_CHECK(s == MPCF_OK, "mpcf_lp_norm: %s: %s", mpcf_status_name(s), mpcf_last_error_message());
  for (uint64_t i = 0; i < p->n; ++i) {
    double want = 0;
    for (uint64_t k = p->offsets[i]; k < p->offsets[i + 1]; ++k) {
      const double a = fabs(element(p, p->values, k));
      want = a > want ? a : want;
    }
    const double got = element(p, norms, i);
    FZ_CHECK(got == want, "function %llu: the library's supremum norm %.17g differs from max |v| = %.17g",
             (unsigned long long)i, got, want);
  }
  free(norms);
  /* The interleaved form of the same arrays. */
  unsigned char* pts = interleaved(p);
  mpcf_pcfs* h2 = NULL;
  s = mpcf_pcfs_create_interleaved(p->dtype, p->n, p->offsets, pts, &h2);
  FZ_CHECK(s == MPCF_OK, "mpcf_pcfs_create_interleaved rejects what the CSV reader accepted: %s: %s",
           mpcf_status_name(s), mpcf_last_error_message());
  /* Same functions: distance 0 between X[i] and its interleaved copy. */
  for (uint64_t i = 0; i < p->n; ++i) {
    double d = -1;
    s = mpcf_lp_distance(h, i, h2, i, INFINITY, NULL, &d);
    FZ_CHECK(s == MPCF_OK && d == 0, "function %llu: distance %.17g to its interleaved copy (%s)",
             (unsigned long long)i, d, mpcf_status_name(s));
  }
  free(pts);
  mpcf_pcfs_destroy(h2);
  mpcf_pcfs_destroy(h);
}

/* Writes p as canonical CSV (every id quoted, numbers that read back
 * exactly). */
static char* canonical_csv(const csv_pcfs* p, size_t* size) {
  size_t cap = 256, len = 0;
  char* out = malloc(cap);
  if (out == NULL) abort();
  for (uint64_t i = 0; i < p->n; ++i) {
    for (uint64_t k = p->offsets[i]; k < p->offsets[i + 1]; ++k) {
      const size_t need = 2 * strlen(p->ids[i]) + 128;
      if (len + need > cap) {
        while (len + need > cap) cap *= 2;
        out = realloc(out, cap);
        if (out == NULL) abort();
      }
      out[len++] = '"';
      for (const char* c = p->ids[i]; *c; ++c) {
        if (*c == '"') out[len++] = '"';
        out[len++] = *c;
      }
      const int digits = p->dtype == MPCF_FLOAT32 ? 9 : 17;
      len += (size_t)snprintf(out + len, cap - len, "\",%.*g,%.*g\n", digits, element(p, p->times, k), digits,
                              element(p, p->values, k));
    }
  }
  *size = len;
  return out;
}

/* Element k of x and y (arrays of p's dtype) is the same number: the same
 * bits, or NaN in both (a NaN's sign and payload do not survive text). */
static int same_number(const csv_pcfs* p, const void* x, const void* y, uint64_t k) {
  const size_t esz = p->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  if (isnan(element(p, x, k))) return isnan(element(p, y, k));
  return memcmp((const char*)x + k * esz, (const char*)y + k * esz, esz) == 0;
}

static void check_round_trip(const csv_pcfs* p, mem_file* f) {
  size_t size = 0;
  char* text = canonical_csv(p, &size);
  mem_file_set(f, text, size);
  csv_pcfs q;
  char err[512];
  const csv_status s = csv_read_pcfs(f->path, "canonical.csv", p->dtype, &q, err, sizeof err);
  FZ_CHECK(s == CSV_OK, "the canonical CSV of an accepted file is rejected: %s\n%.*s", err, (int)size, text);
  FZ_CHECK(q.n == p->n && q.total == p->total, "canonical CSV: %llu functions / %llu breakpoints, expected %llu / %llu",
           (unsigned long long)q.n, (unsigned long long)q.total, (unsigned long long)p->n,
           (unsigned long long)p->total);
  FZ_CHECK(memcmp(q.offsets, p->offsets, (p->n + 1) * sizeof(uint64_t)) == 0, "canonical CSV: other offsets");
  for (uint64_t k = 0; k < p->total; ++k) {
    FZ_CHECK(same_number(&q, q.times, p->times, k) && same_number(&q, q.values, p->values, k),
             "canonical CSV: other number at row %llu", (unsigned long long)k);
  }
  for (uint64_t i = 0; i < p->n; ++i) {
    FZ_CHECK(strcmp(q.ids[i], p->ids[i]) == 0, "canonical CSV: id %llu is '%s', expected '%s'",
             (unsigned long long)i, q.ids[i], p->ids[i]);
  }
  csv_pcfs_free(&q);
  free(text);
}

/* The failures that need no file content, once per process. */
static void check_fixed_failures(void) {
  csv_pcfs p;
  char err[256];
  csv_status s = csv_read_pcfs("/dev/null", NAME, (mpcf_dtype)3, &p, err, sizeof err);
  FZ_CHECK(s == CSV_ERROR_FORMAT && strstr(err, "dtype 3") != NULL, "a bad dtype: status %d, '%s'", (int)s, err);
  check_empty(&p);
  s = csv_read_pcfs("/nonexistent/mpcf-fuzz.csv", "missing.csv", MPCF_FLOAT64, &p, err, sizeof err);
  FZ_CHECK(s == CSV_ERROR_IO && strncmp(err, "cannot open 'missing.csv'", 25) == 0, "a missing file: status %d, '%s'",
           (int)s, err);
  check_empty(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static int once = 0;
  if (!once) {
    once = 1;
    check_fixed_failures();
  }
  static mem_file input, canonical;
  mem_file_open(&input, "fuzz_csv_input");
  mem_file_open(&canonical, "fuzz_csv_canonical");
  mem_file_set(&input, data, size);
  const uint64_t lines = line_count(data, size);

  csv_pcfs r64, r32;
  char err64[512], err32[512];
  const csv_status s64 = csv_read_pcfs(input.path, NAME, MPCF_FLOAT64, &r64, err64, sizeof err64);
  const csv_status s32 = csv_read_pcfs(input.path, NAME, MPCF_FLOAT32, &r32, err32, sizeof err32);
  uint64_t line64 = 0, line32 = 0;
  if (s64 != CSV_OK) {
    FZ_CHECK(s64 == CSV_ERROR_FORMAT, "float64: status %d (%s)", (int)s64, err64);
    FZ_CHECK(strlen(err64) > 0 && strlen(err64) < sizeof err64, "float64: empty error message");
    line64 = message_line(err64, lines);
    check_empty(&r64);
  } else {
    check_accepted(&r64, lines);
    check_library(&r64);
    check_round_trip(&r64, &canonical);
  }
  if (s32 != CSV_OK) {
    FZ_CHECK(s32 == CSV_ERROR_FORMAT, "float32: status %d (%s)", (int)s32, err32);
    FZ_CHECK(strlen(err32) > 0 && strlen(err32) < sizeof err32, "float32: empty error message");
    line32 = message_line(err32, lines);
    check_empty(&r32);
  } else {
    check_accepted(&r32, lines);
    check_library(&r32);
    check_round_trip(&r32, &canonical);
  }
  /* float32 is float64 plus rounding: it accepts less, and fails no later. */
  FZ_CHECK(!(s32 == CSV_OK && s64 != CSV_OK), "float32 accepts a file float64 rejects: %s", err64);
  if (s64 != CSV_OK && line64 > 0) {
    FZ_CHECK(line32 > 0 && line32 <= line64, "float64 fails at line %llu but float32 at %llu: '%s' / '%s'",
             (unsigned long long)line64, (unsigned long long)line32, err64, err32);
  }
  if (s32 == CSV_OK) {
    FZ_CHECK(r32.n == r64.n && r32.total == r64.total, "float32 and float64 read other functions");
    FZ_CHECK(memcmp(r32.offsets, r64.offsets, (r64.n + 1) * sizeof(uint64_t)) == 0 &&
                 memcmp(r32.first_line, r64.first_line, r64.n * sizeof(uint64_t)) == 0,
             "float32 and float64 read other offsets or lines");
    for (uint64_t i = 0; i < r64.n; ++i) {
      FZ_CHECK(strcmp(r32.ids[i], r64.ids[i]) == 0, "float32 and float64 read other ids");
    }
    for (uint64_t k = 0; k < r64.total; ++k) {
      const float t = (float)((const double*)r64.times)[k], v = (float)((const double*)r64.values)[k];
      FZ_CHECK(memcmp(&t, (const float*)r32.times + k, sizeof t) == 0 &&
                   memcmp(&v, (const float*)r32.values + k, sizeof v) == 0,
               "breakpoint %llu: float32 is not the float64 number rounded", (unsigned long long)k);
    }
  }
  /* A short message buffer truncates safely. */
  if (s64 != CSV_OK && size > 0) {
    char small[17];
    const size_t cap = 1 + data[0] % 16;
    memset(small, 'x', sizeof small);
    csv_pcfs t;
    csv_read_pcfs(input.path, NAME, MPCF_FLOAT64, &t, small, cap);
    FZ_CHECK(strnlen(small, cap) < cap && small[cap] == 'x', "a %zu-byte message buffer was overrun", cap);
    csv_pcfs_free(&t);
  }
  csv_pcfs_free(&r64);
  csv_pcfs_free(&r32);
  return 0;
}
