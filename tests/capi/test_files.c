/* Loading PCF files through the C API, the file-system side (mpcf.h,
 * "Files"): mpcf_pcfs_load reads a pipe or device only as far as the
 * header declares. The format itself and its errors are in test_tda.c.
 * Each test forks where a pipe must be fed; none depends on timing. */

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"

#define SENTINEL ((mpcf_pcfs*)(uintptr_t)0x1234)

static char g_dir[64];

static int make_dir(void** s) {
  (void)s;
  strcpy(g_dir, "/tmp/mpcf-files-test-XXXXXX");
  return mkdtemp(g_dir) == NULL ? -1 : 0;
}

static int remove_dir(void** s) {
  (void)s;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void expect_error(mpcf_status got, mpcf_status want, const char* needle) {
  if (got != want) {
    fail_msg("status %s, expected %s (message: %s)", mpcf_status_name(got), mpcf_status_name(want),
             mpcf_last_error_message());
  }
  if (needle && !strstr(mpcf_last_error_message(), needle)) {
    fail_msg("message '%s' lacks '%s'", mpcf_last_error_message(), needle);
  }
}

static void ok(mpcf_status s) {
  if (s != MPCF_OK) fail_msg("%s: %s", mpcf_status_name(s), mpcf_last_error_message());
}

/* A path in the test's directory (static storage, one of 32 rotating
 * buffers, so a test can hold several at once). */
static const char* in_dir(const char* fmt, ...) {
  static char paths[32][512];
  static int next = 0;
  char* p = paths[next];
  next = (next + 1) % 32;
  int k = snprintf(p, sizeof paths[0], "%s/", g_dir);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p + k, sizeof paths[0] - (size_t)k, fmt, ap);
  va_end(ap);
  return p;
}

/* n functions, function i: breakpoints (k, i + k + 1), k < m, then a last
 * value 0; `seed` shifts the values so two collections differ. */
static mpcf_pcfs* collection(uint64_t n, uint64_t m, double seed) {
  uint64_t* off = malloc((n + 1) * sizeof *off);
  double* t = malloc(n * m * sizeof *t + 1);
  double* v = malloc(n * m * sizeof *v + 1);
  assert_non_null(off);
  assert_non_null(t);
  assert_non_null(v);
  for (uint64_t i = 0; i <= n; ++i) off[i] = i * m;
  for (uint64_t i = 0; i < n; ++i) {
    for (uint64_t k = 0; k < m; ++k) {
      t[i * m + k] = (double)k;
      v[i * m + k] = k + 1 == m ? 0 : seed + (double)(i + k + 1);
    }
  }
  mpcf_pcfs* X = NULL;
  ok(mpcf_pcfs_create(MPCF_FLOAT64, n, off, t, v, &X));
  free(off);
  free(t);
  free(v);
  return X;
}

/* The serialized bytes of X (malloc'd; *size set). */
static unsigned char* bytes_of(const mpcf_pcfs* X, uint64_t* size) {
  ok(mpcf_pcfs_serialized_size(X, size));
  unsigned char* b = malloc(*size);
  assert_non_null(b);
  ok(mpcf_pcfs_serialize(X, b, *size));
  return b;
}

/* X and Y serialize to the same bytes (same shape, dtype and data). */
static void expect_same(const mpcf_pcfs* X, const mpcf_pcfs* Y) {
  uint64_t a = 0, b = 0;
  unsigned char* x = bytes_of(X, &a);
  unsigned char* y = bytes_of(Y, &b);
  assert_int_equal(a, b);
  assert_memory_equal(x, y, a);
  free(x);
  free(y);
}

/* In a child whose address space may grow by at most 2 GiB more (so an
 * unbounded read fails instead of filling the machine): /dev/zero is not
 * a PCF file, at once. */
static void test_load_dev_zero(void** s) {
  (void)s;
  fflush(NULL);
  const pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    unsigned long pages = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    if (f) {
      if (fscanf(f, "%lu", &pages) != 1) pages = 0;
      fclose(f);
    }
    if (pages > 0) {
      const struct rlimit lim = {(rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)2 << 30),
                                 RLIM_INFINITY};
      setrlimit(RLIMIT_AS, &lim);
    }
    alarm(120); /* a last bound, should the read neither stop nor fail */
    mpcf_pcfs* X = SENTINEL;
    const mpcf_status st = mpcf_pcfs_load("/dev/zero", &X);
    const char* msg = mpcf_last_error_message();
    if (st != MPCF_ERROR_INVALID_ARGUMENT || !strstr(msg, "not an mpcf PCF file") ||
        !strstr(msg, "/dev/zero") || X != SENTINEL) {
      fprintf(stderr, "load(\"/dev/zero\"): %s: %s\n", mpcf_status_name(st), msg);
      _exit(1);
    }
    _exit(0);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("status 0x%x (see above)", status);
}

/* A child writes `n` bytes into the FIFO at `path`, then `zeros` zero bytes
 * (stopping when the reader has gone), then closes it. */
static pid_t feed_fifo(const char* path, const unsigned char* b, size_t n, size_t zeros) {
  fflush(NULL);
  const pid_t child = fork();
  assert_true(child >= 0);
  if (child != 0) return child;
  signal(SIGPIPE, SIG_IGN);
  const int fd = open(path, O_WRONLY);
  if (fd < 0) _exit(2);
  size_t done = 0;
  while (done < n) {
    const ssize_t w = write(fd, b + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(0); /* the reader closed it */
    done += (size_t)w;
  }
  static unsigned char zero[1 << 16];
  for (size_t z = 0; z < zeros;) {
    const size_t k = zeros - z < sizeof zero ? zeros - z : sizeof zero;
    const ssize_t w = write(fd, zero, k);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    z += (size_t)w;
  }
  close(fd);
  _exit(0);
}

/* Ends the feeding child, whatever it is doing (blocked in open when the
 * loader never opened the FIFO). */
static void reap(pid_t child) {
  kill(child, SIGKILL);
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
}

static void put_u64(unsigned char* p, uint64_t x) {
  for (int k = 0; k < 8; ++k) p[k] = (unsigned char)(x >> (8 * k));
}

static void test_load_fifo(void** s) {
  (void)s;
  mpcf_pcfs* X = collection(50, 10, 0);
  uint64_t size = 0;
  unsigned char* b = bytes_of(X, &size);
  const char* fifo = in_dir("load.fifo");
  assert_int_equal(mkfifo(fifo, 0600), 0);

  /* The file, then EOF. */
  pid_t child = feed_fifo(fifo, b, size, 0);
  mpcf_pcfs* Y = SENTINEL;
  const mpcf_status st1 = mpcf_pcfs_load(fifo, &Y);
  reap(child);
  ok(st1);
  expect_same(X, Y);
  mpcf_pcfs_destroy(Y);

  /* The file, then 64 MiB of zeros: read up to the declared size only. */
  child = feed_fifo(fifo, b, size, (size_t)64 << 20);
  Y = SENTINEL;
  const mpcf_status st2 = mpcf_pcfs_load(fifo, &Y);
  reap(child);
  ok(st2);
  expect_same(X, Y);
  mpcf_pcfs_destroy(Y);

  /* Less than the file, then EOF: truncated, "ended early". */
  child = feed_fifo(fifo, b, size - 9, 0);
  Y = SENTINEL;
  const mpcf_status st3 = mpcf_pcfs_load(fifo, &Y);
  reap(child);
  expect_error(st3, MPCF_ERROR_INVALID_ARGUMENT, "truncated");
  expect_error(st3, MPCF_ERROR_INVALID_ARGUMENT, "ended early");
  expect_error(st3, MPCF_ERROR_INVALID_ARGUMENT, fifo);
  assert_ptr_equal(Y, SENTINEL);

  /* Short streams: the messages of short files. */
  child = feed_fifo(fifo, b, 3, 0);
  const mpcf_status st4 = mpcf_pcfs_load(fifo, &Y);
  reap(child);
  expect_error(st4, MPCF_ERROR_INVALID_ARGUMENT, "not an mpcf PCF file");
  expect_error(st4, MPCF_ERROR_INVALID_ARGUMENT, "only 3 bytes");
  child = feed_fifo(fifo, b, 20, 0);
  const mpcf_status st5 = mpcf_pcfs_load(fifo, &Y);
  reap(child);
  expect_error(st5, MPCF_ERROR_INVALID_ARGUMENT, "truncated");
  expect_error(st5, MPCF_ERROR_INVALID_ARGUMENT, "40-byte header");
  /* Garbage at once: not a PCF file, whatever follows. */
  child = feed_fifo(fifo, (const unsigned char*)"id,t,v\n", 7, (size_t)64 << 20);
  const mpcf_status st6 = mpcf_pcfs_load(fifo, &Y);
  reap(child);
  expect_error(st6, MPCF_ERROR_INVALID_ARGUMENT, "not an mpcf PCF file");
  assert_ptr_equal(Y, SENTINEL);
  free(b);
  mpcf_pcfs_destroy(X);
}

/* A header that declares a huge collection, then EOF: "ended early", and
 * nothing of the declared size allocated up front (2^50 offsets or 2^50
 * breakpoints would be an out-of-memory error, or an ASan abort). */
static void test_load_fifo_huge_header(void** s) {
  (void)s;
  static const unsigned char head[16] = {0x89, 'M', 'P', 'C', 'F', '\r', '\n', 0x1a,
                                         1, 0, 0, 0, 2, 0, 0, 0};
  const char* fifo = in_dir("huge.fifo");
  assert_int_equal(mkfifo(fifo, 0600), 0);
  unsigned char b[72];
  memcpy(b, head, 16);
  /* 2^50 functions of shape (2^50): EOF in the offsets */
  put_u64(b + 16, 1);
  put_u64(b + 24, (uint64_t)1 << 50);
  put_u64(b + 32, (uint64_t)1 << 50);
  put_u64(b + 40, (uint64_t)1 << 50);
  put_u64(b + 48, 0);
  pid_t child = feed_fifo(fifo, b, 56, 0);
  mpcf_pcfs* Y = SENTINEL;
  mpcf_status st = mpcf_pcfs_load(fifo, &Y);
  reap(child);
  expect_error(st, MPCF_ERROR_INVALID_ARGUMENT, "ended early");
  assert_ptr_equal(Y, SENTINEL);

  /* one function of 2^50 breakpoints: EOF in the times */
  put_u64(b + 24, 1);
  put_u64(b + 40, 1);
  put_u64(b + 48, 0);
  put_u64(b + 56, (uint64_t)1 << 50);
  put_u64(b + 64, 0); /* a first time, 0.0 */
  child = feed_fifo(fifo, b, 72, 0);
  st = mpcf_pcfs_load(fifo, &Y);
  reap(child);
  expect_error(st, MPCF_ERROR_INVALID_ARGUMENT, "ended early");
  assert_ptr_equal(Y, SENTINEL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_dev_zero),
      cmocka_unit_test(test_load_fifo),
      cmocka_unit_test(test_load_fifo_huge_header),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
