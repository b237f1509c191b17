/* fuzz_pcf_file: the reader of the mpcf PCF file format (mpcf.h, "Files";
 * README.md, "The PCF file format"). The fuzz input is the file's bytes. It
 * is read with mpcf_pcfs_deserialize and, through a memfd (or a temporary
 * file), with mpcf_pcfs_load; an input whose last 8 bytes are not the FNV-1a
 * hash of the bytes before them is also read a second time with the right
 * hash written in, so that fuzzing gets past the hash to the fields and the
 * PCFs behind it. Checked, against an independent model of the format
 * written from the documentation:
 *
 *  - a file the model rejects fails with the documented status: a wrong
 *    magic, version, dtype, ndim, shape, length or hash, offsets that do
 *    not start at 0, decrease or do not end at the total, are
 *    MPCF_ERROR_INVALID_ARGUMENT (the message says "not an mpcf PCF file",
 *    "truncated" or "corrupt" when that is the only problem); bad PCFs
 *    (m = 0, times not finite or not strictly increasing, values not
 *    finite) are MPCF_ERROR_INVALID_PCF, exactly when mpcf_pcfs_create
 *    refuses the same arrays with it; a failure has a non-empty message and
 *    leaves *out untouched; no absurd allocation for huge counts
 *    (libFuzzer's malloc limit and ASan catch one);
 *  - a file the model accepts gives a collection with the file's count,
 *    total, dtype, ndim, shape, offsets and breakpoints, bit for bit;
 *    mpcf_pcfs_serialized_size is the file's length and mpcf_pcfs_serialize
 *    writes exactly the file's bytes (the format leaves no freedom: every
 *    byte is a field or the hash) and nothing beyond; the collection that
 *    mpcf_pcfs_create makes of the same arrays (reshaped) serializes to the
 *    same bytes; deserializing the serialization gives the same data;
 *  - mpcf_pcfs_load of the same bytes gives the same status and data;
 *  - mpcf_pcfs_load of the same bytes through a pipe (a stream, read only
 *    as far as its header declares) gives the status and data of
 *    mpcf_pcfs_deserialize of that prefix, and a message naming the pipe;
 *  - the argument errors: NULL out, NULL data with size > 0, NULL path, a
 *    serialize buffer one byte short (MPCF_ERROR_BUFFER_TOO_SMALL, the
 *    buffer untouched), NULL handles;
 *  - nothing leaks (LeakSanitizer). */
#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_support.h"
#include "mpcf/mpcf.h"

enum { HEADER = 40, MAX_NDIM = 32 };

static const uint8_t MAGIC[8] = {0x89, 0x4D, 0x50, 0x43, 0x46, 0x0D, 0x0A, 0x1A};

#define ST(s) (1u << (unsigned)(s))
#define CANARY 0xA5

static uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (size_t k = 0; k < n; ++k) {
    h ^= p[k];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

static uint64_t le64(const uint8_t* p) {
  uint64_t x = 0;
  for (int k = 7; k >= 0; --k) x = (x << 8) | p[k];
  return x;
}

static uint32_t le32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* ------------------------------------------------------------------ */
/* The model: what the documentation says about these bytes             */
/* ------------------------------------------------------------------ */

enum {
  BAD_MAGIC = 1,     /* shorter than the magic, or other bytes */
  BAD_VERSION = 2,
  BAD_DTYPE = 4,
  BAD_NDIM = 8,
  BAD_LENGTH = 16,   /* shorter than the fixed header, or not the length the fields give */
  BAD_HASH = 32,
  BAD_SHAPE = 64,    /* product of the dimensions != n */
  BAD_OFFSETS = 128, /* offsets[0] != 0, decreasing, or offsets[n] != total */
  BAD_PCF = 256,     /* m = 0, a time or value not finite, times not increasing */
  BAD_LONG = 1024,   /* longer than the fields give: "truncated" or "corrupt" */
  BAD_HUGE = 512,    /* the length the fields give does not fit 64 bits (the message may say so
                      * instead of "truncated": a size too large for 64 bits) */
  BAD_TYPE = 2048    /* version 2: a function type code other than 1 or 2 */
};

typedef struct model {
  unsigned bad;
  int defect_s; /* known defect S applies */
  int also_pcf; /* MPCF_ERROR_INVALID_PCF is acceptable too (bad offsets and a bad function) */
  int dtype; /* 1 float32, 2 float64 (as stored) */
  int type;  /* 1 piecewise constant, 2 piecewise linear (version 2 only; version 1: 1) */
  uint64_t ndim, n, total;
  const uint8_t* shape;   /* ndim uint64 */
  const uint8_t* offsets; /* n + 1 uint64 */
  const uint8_t* times;   /* total elements */
  const uint8_t* values;
  size_t esz;
} model;

static double element(const model* m, const uint8_t* base, uint64_t k) {
  if (m->esz == 4) {
    float f;
    memcpy(&f, base + 4 * k, 4);
    return (double)f;
  }
  double d;
  memcpy(&d, base + 8 * k, 8);
  return d;
}

static model read_model(const uint8_t* p, size_t size) {
  model m;
  memset(&m, 0, sizeof m);
  if (size < 8 || memcmp(p, MAGIC, 8) != 0) m.bad |= BAD_MAGIC;
  if (size < HEADER) {
    m.bad |= BAD_LENGTH;
    return m;
  }
  const uint32_t version = le32(p + 8);
  if (version != 1 && version != 2) m.bad |= BAD_VERSION;
  const uint32_t dt = le32(p + 12);
  if (dt != 1 && dt != 2) m.bad |= BAD_DTYPE;
  m.dtype = (int)dt;
  m.esz = dt == 1 ? 4 : 8;
  /* version 1: a uint64 ndim; version 2: uint32 ndim, uint32 function type */
  m.type = 1;
  m.ndim = le64(p + 16);
  if (version == 2) {
    m.ndim = le32(p + 16);
    m.type = (int)le32(p + 20);
    if (m.type != 1 && m.type != 2) m.bad |= BAD_TYPE;
  }
  m.n = le64(p + 24);
  m.total = le64(p + 32);
  if (m.ndim < 1 || m.ndim > MAX_NDIM) m.bad |= BAD_NDIM;
  if (m.bad & (BAD_NDIM | BAD_DTYPE)) return m; /* the length is not defined */
  /* HEADER + 8 ndim + 8 (n + 1) + 2 esz total + 8, in 128 bits */
  const unsigned __int128 want = (unsigned __int128)HEADER + 8u * (unsigned __int128)m.ndim +
                                 8u * ((unsigned __int128)m.n + 1u) + 2u * m.esz * (unsigned __int128)m.total + 8u;
  if (want != (unsigned __int128)size) {
    m.bad |= BAD_LENGTH;
    if (want >> 64) m.bad |= BAD_HUGE;
    if (want < (unsigned __int128)size) m.bad |= BAD_LONG;
    return m;
  }
  if (fnv1a(p, size - 8) != le64(p + size - 8)) m.bad |= BAD_HASH;
  m.shape = p + HEADER;
  m.offsets = m.shape + 8 * m.ndim;
  m.times = m.offsets + 8 * (m.n + 1);
  m.values = m.times + m.esz * m.total;
  int zero = 0, overflow = 0;
  uint64_t product = 1;
  for (uint64_t k = 0; k < m.ndim; ++k) zero |= le64(m.shape + 8 * k) == 0;
  for (uint64_t k = 0; k < m.ndim && !zero; ++k) {
    const uint64_t d = le64(m.shape + 8 * k);
    if (product > UINT64_MAX / d) overflow = 1;
    product *= d;
  }
  if (zero) {
    /* known defect S: the product of the non-zero dimensions overflows */
    uint64_t nz = 1;
    for (uint64_t k = 0; k < m.ndim; ++k) {
      const uint64_t d = le64(m.shape + 8 * k);
      if (d == 0) continue;
      if (nz > UINT64_MAX / d) m.defect_s = 1;
      nz *= d;
    }
    product = 0, overflow = 0;
  }
  if (overflow || product != m.n) m.bad |= BAD_SHAPE;
  int offsets_ok = le64(m.offsets) == 0 && le64(m.offsets + 8 * m.n) == m.total;
  for (uint64_t i = 0; i < m.n && offsets_ok; ++i) offsets_ok = le64(m.offsets + 8 * (i + 1)) >= le64(m.offsets + 8 * i);
  if (!offsets_ok) {
    m.bad |= BAD_OFFSETS;
    /* Several problems: any of their statuses will do. A function before
     * the first decrease that is empty (m = 0, MPCF_ERROR_INVALID_PCF) or
     * has more than 2^32 - 1 breakpoints (the library's limit per function,
     * MPCF_ERROR_INVALID_PCF; mpcf.h does not state it) may be reported
     * first. */
    for (uint64_t i = 0; i < m.n; ++i) {
      const uint64_t a = le64(m.offsets + 8 * i), b = le64(m.offsets + 8 * (i + 1));
      if (b < a) break;
      if (b == a || b - a > UINT64_C(0xffffffff)) m.also_pcf = 1;
    }
    return m;
  }
  for (uint64_t i = 0; i < m.n; ++i) {
    const uint64_t a = le64(m.offsets + 8 * i), b = le64(m.offsets + 8 * (i + 1));
    if (a == b) m.bad |= BAD_PCF;
    for (uint64_t k = a; k < b; ++k) {
      const double t = element(&m, m.times, k), v = element(&m, m.values, k);
      if (!isfinite(t) || !isfinite(v) || (k > a && !(element(&m, m.times, k - 1) < t))) m.bad |= BAD_PCF;
    }
  }
  return m;
}

/* ------------------------------------------------------------------ */
/* Known defects (README.md, "Known defects and regressions")           */
/* ------------------------------------------------------------------ */

/* None today. (S, the reader refusing a zero dimension beside dimensions
 * whose product passes 64 bits, e.g. (2^63, 2, 0) for n = 0, is fixed; its
 * reproducers are corpus/pcf_file/fixed-S-*.) */
typedef enum known_defect { KNOWN_NONE } known_defect;  /* tested with fz_known(k, cond) */

/* ------------------------------------------------------------------ */
/* Checks                                                               */
/* ------------------------------------------------------------------ */

static void check_status(const char* call, mpcf_status s, unsigned allowed) {
  FZ_CHECK((int)s >= 0 && (int)s <= MPCF_RUNNING && (allowed & ST(s)), "%s returned %s (allowed mask 0x%x; message: %s)",
           call, mpcf_status_name(s), allowed, mpcf_last_error_message());
  if (s != MPCF_OK) {
    const char* msg = mpcf_last_error_message();
    FZ_CHECK(msg != NULL && msg[0] != '\0', "%s failed with %s and an empty error message", call, mpcf_status_name(s));
  }
}

static int is_canary(const void* p, size_t bytes) {
  const unsigned char* b = p;
  for (size_t k = 0; k < bytes; ++k) {
    if (b[k] != CANARY) return 0;
  }
  return 1;
}

/* The collection h holds exactly the data of the model m (a valid file). */
static void check_same_data(const char* what, mpcf_pcfs* h, const model* m) {
  uint64_t u = 0;
  mpcf_dtype dt = (mpcf_dtype)0;
  size_t nd = 0;
  check_status("mpcf_pcfs_count", mpcf_pcfs_count(h, &u), ST(MPCF_OK));
  FZ_CHECK(u == m->n, "%s: count %llu, the file says %llu", what, (unsigned long long)u, (unsigned long long)m->n);
  check_status("mpcf_pcfs_total_breakpoints", mpcf_pcfs_total_breakpoints(h, &u), ST(MPCF_OK));
  FZ_CHECK(u == m->total, "%s: total %llu, the file says %llu", what, (unsigned long long)u,
           (unsigned long long)m->total);
  check_status("mpcf_pcfs_dtype", mpcf_pcfs_dtype(h, &dt), ST(MPCF_OK));
  FZ_CHECK((int)dt == (m->dtype == 1 ? MPCF_FLOAT32 : MPCF_FLOAT64), "%s: dtype %d, the file says %d", what, (int)dt,
           m->dtype);
  mpcf_function_type ft = (mpcf_function_type)0;
  check_status("mpcf_pcfs_function_type", mpcf_pcfs_function_type(h, &ft), ST(MPCF_OK));
  FZ_CHECK((int)ft == (m->type == 2 ? MPCF_PIECEWISE_LINEAR : MPCF_PIECEWISE_CONSTANT),
           "%s: function type %d, the file says %d", what, (int)ft, m->type);
  check_status("mpcf_pcfs_ndim", mpcf_pcfs_ndim(h, &nd), ST(MPCF_OK));
  FZ_CHECK(nd == m->ndim, "%s: ndim %zu, the file says %llu", what, nd, (unsigned long long)m->ndim);
  uint64_t shape[MAX_NDIM + 1];
  memset(shape, CANARY, sizeof shape);
  check_status("mpcf_pcfs_shape", mpcf_pcfs_shape(h, shape, MAX_NDIM + 1), ST(MPCF_OK));
  for (uint64_t k = 0; k < m->ndim; ++k) {
    FZ_CHECK(shape[k] == le64(m->shape + 8 * k), "%s: shape[%llu] differs from the file's", what, (unsigned long long)k);
  }
  FZ_CHECK(is_canary(shape + m->ndim, (MAX_NDIM + 1 - m->ndim) * 8), "%s: mpcf_pcfs_shape wrote beyond ndim", what);

  uint64_t* off = malloc((m->n + 2) * 8);
  FZ_CHECK(off != NULL, "malloc");
  memset(off, CANARY, (m->n + 2) * 8);
  check_status("mpcf_pcfs_offsets", mpcf_pcfs_offsets(h, off, m->n + 2), ST(MPCF_OK));
  for (uint64_t i = 0; i <= m->n; ++i) {
    FZ_CHECK(off[i] == le64(m->offsets + 8 * i), "%s: offsets[%llu] = %llu, the file says %llu", what,
             (unsigned long long)i, (unsigned long long)off[i], (unsigned long long)le64(m->offsets + 8 * i));
  }
  FZ_CHECK(is_canary(off + m->n + 1, 8), "%s: mpcf_pcfs_offsets wrote beyond count + 1", what);
  free(off);

  const size_t bytes = (size_t)m->total * m->esz;
  unsigned char* t = malloc(bytes + 8);
  unsigned char* v = malloc(bytes + 8);
  FZ_CHECK(t != NULL && v != NULL, "malloc");
  memset(t, CANARY, bytes + 8);
  memset(v, CANARY, bytes + 8);
  check_status("mpcf_pcfs_breakpoints", mpcf_pcfs_breakpoints(h, t, v, m->total + 8 / m->esz), ST(MPCF_OK));
  FZ_CHECK(memcmp(t, m->times, bytes) == 0, "%s: the times differ from the file's bit for bit", what);
  FZ_CHECK(memcmp(v, m->values, bytes) == 0, "%s: the values differ from the file's bit for bit", what);
  FZ_CHECK(is_canary(t + bytes, 8) && is_canary(v + bytes, 8), "%s: mpcf_pcfs_breakpoints wrote beyond the total",
           what);
  free(t);
  free(v);
}

/* h serializes to exactly the bytes p[0 .. size-1]. */
static void check_serializes_to(const char* what, mpcf_pcfs* h, const uint8_t* p, size_t size) {
  uint64_t need = 0;
  check_status("mpcf_pcfs_serialized_size", mpcf_pcfs_serialized_size(h, &need), ST(MPCF_OK));
  FZ_CHECK(need == size, "%s: mpcf_pcfs_serialized_size %llu, the file has %zu bytes", what, (unsigned long long)need,
           size);
  unsigned char* buf = malloc(size + 16);
  FZ_CHECK(buf != NULL, "malloc");
  memset(buf, CANARY, size + 16);
  /* one byte short: nothing written */
  check_status("mpcf_pcfs_serialize", mpcf_pcfs_serialize(h, buf, size - 1), ST(MPCF_ERROR_BUFFER_TOO_SMALL));
  FZ_CHECK(is_canary(buf, size + 16), "%s: mpcf_pcfs_serialize failed (buffer too small) and wrote", what);
  check_status("mpcf_pcfs_serialize", mpcf_pcfs_serialize(h, NULL, size + 16), ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_pcfs_serialize", mpcf_pcfs_serialize(h, buf, size + 16), ST(MPCF_OK));
  FZ_CHECK(memcmp(buf, p, size) == 0, "%s: mpcf_pcfs_serialize wrote other bytes than the file's", what);
  FZ_CHECK(is_canary(buf + size, 16), "%s: mpcf_pcfs_serialize wrote beyond the serialized size", what);
  free(buf);
}

/* mpcf_pcfs_create's verdict on the file's arrays (the file's fields being
 * valid and its offsets consistent); on success, the handle, reshaped. */
static mpcf_status create_from_model(const model* m, mpcf_pcfs** out) {
  *out = NULL;
  uint64_t* off = malloc((m->n + 1) * 8);
  FZ_CHECK(off != NULL, "malloc");
  for (uint64_t i = 0; i <= m->n; ++i) off[i] = le64(m->offsets + 8 * i);
  /* aligned copies of the arrays, exactly `total` elements (ASan sees
   * reads beyond) */
  const size_t bytes = (size_t)m->total * m->esz;
  void* t = malloc(bytes ? bytes : 1);
  void* v = malloc(bytes ? bytes : 1);
  FZ_CHECK(t != NULL && v != NULL, "malloc");
  memcpy(t, m->times, bytes);
  memcpy(v, m->values, bytes);
  const mpcf_status s =
      (m->type == 2 ? mpcf_plfs_create : mpcf_pcfs_create)(m->dtype == 1 ? MPCF_FLOAT32 : MPCF_FLOAT64, m->n, off,
                                                           m->total ? t : NULL, m->total ? v : NULL, out);
  free(off);
  free(t);
  free(v);
  if (s == MPCF_OK) {
    uint64_t shape[MAX_NDIM];
    for (uint64_t k = 0; k < m->ndim; ++k) shape[k] = le64(m->shape + 8 * k);
    check_status("mpcf_pcfs_reshape", mpcf_pcfs_reshape(*out, (size_t)m->ndim, shape), ST(MPCF_OK));
  }
  return s;
}

static int one_flag(unsigned bad, unsigned flag) { return bad == flag; }

/* A failure's message names the problem (when it is the only one). */
static void check_message(const char* call, const model* m) {
  const char* msg = mpcf_last_error_message();
  if (one_flag(m->bad, BAD_MAGIC)) {
    FZ_CHECK(strstr(msg, "not an mpcf PCF file") != NULL, "%s: a wrong magic, and the message does not say \"not an "
             "mpcf PCF file\": %s", call, msg);
  }
  if (one_flag(m->bad, BAD_LENGTH | BAD_LONG)) {
    FZ_CHECK(strstr(msg, "truncated") != NULL || strstr(msg, "corrupt") != NULL,
             "%s: a file longer than its fields say, and the message says neither \"truncated\" nor \"corrupt\": %s",
             call, msg);
  }
  if (one_flag(m->bad, BAD_LENGTH)) {
    /* shorter than the fields say: "truncated"; the library also says "too
     * large to exist" when the fields describe more than it could hold */
    FZ_CHECK(strstr(msg, "truncated") != NULL || strstr(msg, "too large") != NULL,
             "%s: a file shorter than its fields say, and the message says neither \"truncated\" nor \"too large\": %s",
             call, msg);
  }
  if (one_flag(m->bad, BAD_TYPE)) {
    FZ_CHECK(strstr(msg, "function type") != NULL, "%s: a wrong function type, and the message does not say so: %s",
             call, msg);
  }
  if (one_flag(m->bad, BAD_HASH)) {
    FZ_CHECK(strstr(msg, "corrupt") != NULL, "%s: a wrong hash, and the message does not say \"corrupt\": %s", call,
             msg);
  }
}

/* ------------------------------------------------------------------ */
/* A file the loader can open by path                                   */
/* ------------------------------------------------------------------ */

static int g_fd = -1;
static char g_path[64];
static char g_tmp_path[64];

static void remove_tmp_file(void) {
  if (g_tmp_path[0] != '\0') unlink(g_tmp_path);
}

static const char* file_with(const uint8_t* p, size_t size) {
  if (g_fd < 0) {
    g_fd = memfd_create("fuzz.mpcf", 0);
    if (g_fd >= 0) {
      snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
    } else {
      snprintf(g_path, sizeof g_path, "/tmp/mpcf_fuzz_pcf_XXXXXX");
      g_fd = mkstemp(g_path);
      FZ_CHECK(g_fd >= 0, "cannot create a temporary file: %s", strerror(errno));
      snprintf(g_tmp_path, sizeof g_tmp_path, "%s", g_path);
      atexit(remove_tmp_file);
    }
  }
  FZ_CHECK(ftruncate(g_fd, 0) == 0, "ftruncate: %s", strerror(errno));
  size_t done = 0;
  while (done < size) {
    const ssize_t w = pwrite(g_fd, p + done, size - done, (off_t)done);
    FZ_CHECK(w > 0, "pwrite: %s", strerror(errno));
    done += (size_t)w;
  }
  return g_path;
}

/* The bytes in a pipe, complete (its write end closed), opened by path
 * through /proc/self/fd (opening an anonymous pipe's read end does not wait
 * for a writer). Returns the read end's descriptor, or -1 when the bytes do
 * not fit a pipe's buffer (then the check is skipped). */
static int pipe_with(const uint8_t* p, size_t size, char* path, size_t cap) {
  int fds[2];
  FZ_CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
  if (size > 65536 && fcntl(fds[1], F_SETPIPE_SZ, (int)(size < (1u << 30) ? size : (1u << 30))) < (int)size) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t w = write(fds[1], p + done, size - done);
    FZ_CHECK(w > 0, "write to a pipe: %s", strerror(errno));
    done += (size_t)w;
  }
  close(fds[1]);
  snprintf(path, cap, "/proc/self/fd/%d", fds[0]);
  return fds[0];
}

/* The length the header declares, when the fields that give it are valid
 * (so that the loader reads that far). */
static int declared_length(const uint8_t* p, size_t size, uint64_t* want) {
  if (size < HEADER || memcmp(p, MAGIC, 8) != 0 || (le32(p + 8) != 1 && le32(p + 8) != 2)) return 0;
  const uint32_t dt = le32(p + 12);
  const int v2 = le32(p + 8) == 2;
  const uint64_t ndim = v2 ? le32(p + 16) : le64(p + 16), n = le64(p + 24), total = le64(p + 32);
  if (v2 && le32(p + 20) != 1 && le32(p + 20) != 2) return 0;
  if ((dt != 1 && dt != 2) || ndim < 1 || ndim > MAX_NDIM) return 0;
  const unsigned __int128 w = (unsigned __int128)HEADER + 8u * (unsigned __int128)ndim +
                              8u * ((unsigned __int128)n + 1u) + 2u * (dt == 1 ? 4u : 8u) * (unsigned __int128)total + 8u;
  if (w >> 64) return 0;
  *want = (uint64_t)w;
  return 1;
}

/* mpcf_pcfs_load of the bytes through a pipe: a stream, read as far as the
 * header declares and no further, so it behaves as mpcf_pcfs_deserialize of
 * that prefix (of all the bytes, when they are fewer or the header is
 * invalid): the same status, the same data. A failure's message names the
 * pipe; for a complete prefix it names the problem as for a file. */
static void check_pipe(const uint8_t* p, size_t size, const char* what) {
  char path[64];
  const int fd = pipe_with(p, size, path, sizeof path);
  if (fd < 0) return;
  uint64_t want = 0;
  size_t prefix = size;
  if (declared_length(p, size, &want) && want < size) prefix = (size_t)want;
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x5e17;
  mpcf_pcfs* ref = sentinel;
  const mpcf_status s = mpcf_pcfs_deserialize(p, prefix, &ref);
  mpcf_pcfs* loaded = sentinel;
  const mpcf_status l = mpcf_pcfs_load(path, &loaded);
  close(fd);
  FZ_CHECK(l == s, "%s: mpcf_pcfs_load through a pipe says %s, mpcf_pcfs_deserialize of its first %zu bytes %s",
           what, mpcf_status_name(l), prefix, mpcf_status_name(s));
  if (l != MPCF_OK) {
    FZ_CHECK(loaded == sentinel, "%s: mpcf_pcfs_load through a pipe failed and still wrote *out", what);
    const char* msg = mpcf_last_error_message();
    FZ_CHECK(strstr(msg, path) != NULL, "%s: mpcf_pcfs_load through a pipe: the message does not name %s: %s", what,
             path, msg);
    const model m = read_model(p, prefix);
    if (prefix == want || one_flag(m.bad, BAD_MAGIC)) check_message("mpcf_pcfs_load through a pipe", &m);
  } else {
    const model m = read_model(p, prefix);
    check_same_data("mpcf_pcfs_load through a pipe", loaded, &m);
    mpcf_pcfs_destroy(loaded);
    mpcf_pcfs_destroy(ref);
  }
}

/* ------------------------------------------------------------------ */
/* One file                                                             */
/* ------------------------------------------------------------------ */

static void check_file(const uint8_t* p, size_t size, const char* what) {
  const model m = read_model(p, size);
  unsigned allowed;
  if (m.bad & ~(unsigned)BAD_PCF) {
    allowed = ST(MPCF_ERROR_INVALID_ARGUMENT);
    if (m.also_pcf && (m.bad & ~(unsigned)(BAD_OFFSETS | BAD_PCF)) == 0) allowed |= ST(MPCF_ERROR_INVALID_PCF);
  } else if (m.bad & BAD_PCF) {
    allowed = ST(MPCF_ERROR_INVALID_PCF);
  } else {
    allowed = ST(MPCF_OK);
  }
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x5e17;
  mpcf_pcfs* out = sentinel;
  const mpcf_status s = mpcf_pcfs_deserialize(p, size, &out);
  check_status("mpcf_pcfs_deserialize", s, allowed);

  /* mpcf_pcfs_create on the same arrays: the same verdict on the PCFs */
  mpcf_pcfs* created = NULL;
  if ((m.bad & ~(unsigned)BAD_PCF) == 0) {
    const mpcf_status c = create_from_model(&m, &created);
    FZ_CHECK(c == s,
             "%s: mpcf_pcfs_deserialize says %s, mpcf_pcfs_create on the file's arrays %s", what,
             mpcf_status_name(s), mpcf_status_name(c));
  }

  if (s != MPCF_OK) {
    FZ_CHECK(out == sentinel, "%s: mpcf_pcfs_deserialize failed and still wrote *out", what);
    check_message("mpcf_pcfs_deserialize", &m);
  } else {
    FZ_CHECK(out != NULL && out != sentinel, "%s: mpcf_pcfs_deserialize succeeded without a handle", what);
    check_same_data(what, out, &m);
    /* A version 2 file of function type 1 (PCFs) is a valid file, but
     * libmpcf writes PCF collections as version 1 (mpcf.h): the same
     * collection in version 1 (version 1, the uint32 ndim and type become
     * one uint64 ndim, the hash recomputed), the one encoding serialize
     * gives (found by fuzz_pcf_file: a v2 type-1 file serialized to other
     * bytes). The sizes agree: 4 + 4 bytes against 8. */
    const uint8_t* want = p;
    uint8_t* v1 = NULL;
    if (le32(p + 8) == 2 && m.type == 1) {
      v1 = malloc(size);
      FZ_CHECK(v1 != NULL, "malloc");
      memcpy(v1, p, size);
      v1[8] = 1, v1[9] = v1[10] = v1[11] = 0;
      v1[20] = v1[21] = v1[22] = v1[23] = 0;
      const uint64_t h = fnv1a(v1, size - 8);
      for (int k = 0; k < 8; ++k) v1[size - 8 + k] = (uint8_t)(h >> (8 * k));
      want = v1;
    }
    check_serializes_to(what, out, want, size);
    check_serializes_to("mpcf_pcfs_create of the file's arrays", created, want, size);
    free(v1);
    /* deserializing the serialization (the same bytes, from another buffer) */
    uint8_t* copy = malloc(size);
    FZ_CHECK(copy != NULL, "malloc");
    check_status("mpcf_pcfs_serialize", mpcf_pcfs_serialize(out, copy, size), ST(MPCF_OK));
    mpcf_pcfs* again = NULL;
    check_status("mpcf_pcfs_deserialize", mpcf_pcfs_deserialize(copy, size, &again), ST(MPCF_OK));
    check_same_data("the deserialized serialization", again, &m);
    mpcf_pcfs_destroy(again);
    free(copy);
  }
  mpcf_pcfs_destroy(created);

  /* mpcf_pcfs_load of the same bytes: the same status and data */
  mpcf_pcfs* loaded = sentinel;
  const mpcf_status l = mpcf_pcfs_load(file_with(p, size), &loaded);
  check_status("mpcf_pcfs_load", l, allowed);
  FZ_CHECK(l == s, "%s: mpcf_pcfs_load says %s, mpcf_pcfs_deserialize %s", what, mpcf_status_name(l),
           mpcf_status_name(s));
  if (l != MPCF_OK) {
    FZ_CHECK(loaded == sentinel, "%s: mpcf_pcfs_load failed and still wrote *out", what);
    check_message("mpcf_pcfs_load", &m);
  } else {
    check_same_data("mpcf_pcfs_load", loaded, &m);
    mpcf_pcfs_destroy(loaded);
  }
  if (s == MPCF_OK) mpcf_pcfs_destroy(out);
  check_pipe(p, size, what);
}

/* The argument errors of the file calls (the same for every input). */
static void check_argument_errors(const uint8_t* p, size_t size) {
  mpcf_pcfs* const sentinel = (mpcf_pcfs*)(uintptr_t)0x5e17;
  mpcf_pcfs* out = sentinel;
  check_status("mpcf_pcfs_deserialize(NULL out)", mpcf_pcfs_deserialize(p, size, NULL),
               ST(MPCF_ERROR_INVALID_ARGUMENT));
  check_status("mpcf_pcfs_deserialize(NULL data)", mpcf_pcfs_deserialize(NULL, size + 1, &out),
               ST(MPCF_ERROR_INVALID_ARGUMENT));
  FZ_CHECK(out == sentinel, "mpcf_pcfs_deserialize(NULL data) wrote *out");
  check_status("mpcf_pcfs_deserialize(NULL, 0)", mpcf_pcfs_deserialize(NULL, 0, &out),
               ST(MPCF_ERROR_INVALID_ARGUMENT));
  FZ_CHECK(out == sentinel, "mpcf_pcfs_deserialize(NULL, 0) wrote *out");
  check_status("mpcf_pcfs_load(NULL path)", mpcf_pcfs_load(NULL, &out), ST(MPCF_ERROR_INVALID_ARGUMENT));
  FZ_CHECK(out == sentinel, "mpcf_pcfs_load(NULL path) wrote *out");
  check_status("mpcf_pcfs_load(NULL out)", mpcf_pcfs_load(file_with(p, size), NULL), ST(MPCF_ERROR_INVALID_ARGUMENT));
  uint64_t u = 12345;
  check_status("mpcf_pcfs_serialized_size(NULL)", mpcf_pcfs_serialized_size(NULL, &u),
               ST(MPCF_ERROR_INVALID_ARGUMENT));
  FZ_CHECK(u == 12345, "mpcf_pcfs_serialized_size(NULL) wrote *out");
  unsigned char buf[8];
  memset(buf, CANARY, sizeof buf);
  check_status("mpcf_pcfs_serialize(NULL)", mpcf_pcfs_serialize(NULL, buf, sizeof buf),
               ST(MPCF_ERROR_INVALID_ARGUMENT));
  FZ_CHECK(is_canary(buf, sizeof buf), "mpcf_pcfs_serialize(NULL) wrote the buffer");
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  /* a private copy of exactly `size` bytes: ASan sees any read beyond */
  uint8_t* p = malloc(size ? size : 1);
  FZ_CHECK(p != NULL, "malloc");
  memcpy(p, data, size);
  fz_set_context("the input as it is");
  check_file(p, size, "the input");
  if (size >= HEADER + 8 && fnv1a(p, size - 8) != le64(p + size - 8)) {
    /* the same bytes with the right hash */
    const uint64_t h = fnv1a(p, size - 8);
    for (int k = 0; k < 8; ++k) p[size - 8 + k] = (uint8_t)(h >> (8 * k));
    fz_set_context("the input with its hash fixed");
    check_file(p, size, "the input with its hash fixed");
  }
  fz_set_context("the argument errors");
  check_argument_errors(p, size);
  free(p);
  return 0;
}
