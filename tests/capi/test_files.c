/* Saving and loading PCF files through the C API, the file-system side
 * (mpcf.h, "Files"): what mpcf_pcfs_save follows, keeps and refuses, that a
 * save killed half-way leaves the old file and no orphan (the
 * MPCF_DEBUG_SAVE_STOP hook), that stale temporaries neither block a save
 * nor stay forever, and that mpcf_pcfs_load reads a pipe or device only as
 * far as the header declares. The format itself and its errors are in
 * test_tda.c. Each test forks where a process must die or a pipe must be
 * fed; none depends on timing. */
#define _DEFAULT_SOURCE /* flock, mknod, makedev, utimensat */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mpcf/mpcf.h"
#include "expect_error.h"

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

/* The file at path loads and holds X. */
static void expect_file_holds(const char* path, const mpcf_pcfs* X) {
  mpcf_pcfs* Y = NULL;
  ok(mpcf_pcfs_load(path, &Y));
  expect_same(X, Y);
  mpcf_pcfs_destroy(Y);
}

static void expect_file_type(const char* path, mode_t type) {
  struct stat st;
  assert_int_equal(lstat(path, &st), 0);
  if ((st.st_mode & S_IFMT) != type) fail_msg("'%s' changed its file type", path);
}

/* The sorted names in directory `dir` (without . and ..), joined by '/'. */
static char* listing(const char* dir) {
  DIR* d = opendir(dir);
  assert_non_null(d);
  char* names[256];
  size_t count = 0;
  const struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    assert_true(count < 256);
    names[count++] = strdup(e->d_name);
  }
  closedir(d);
  for (size_t i = 1; i < count; ++i) { /* insertion sort */
    for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; --j) {
      char* tmp = names[j];
      names[j] = names[j - 1];
      names[j - 1] = tmp;
    }
  }
  size_t len = 1;
  for (size_t i = 0; i < count; ++i) len += strlen(names[i]) + 1;
  char* out = calloc(len, 1);
  assert_non_null(out);
  for (size_t i = 0; i < count; ++i) {
    strcat(out, names[i]);
    strcat(out, "/");
    free(names[i]);
  }
  return out;
}

/* The names of `dir` that start with ".mpcf-save-": how many; the first
 * one is copied to `first` (when not NULL). */
static int leftovers(const char* dir, char* first, size_t cap) {
  DIR* d = opendir(dir);
  assert_non_null(d);
  int count = 0;
  const struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, ".mpcf-save-", 11) != 0) continue;
    if (count++ == 0 && first) snprintf(first, cap, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  return count;
}

static void make_subdir(const char* path) { assert_int_equal(mkdir(path, 0755), 0); }

static void set_hook(const char* name, const char* value) {
  if (value) {
    assert_int_equal(setenv(name, value, 1), 0);
  } else {
    assert_int_equal(unsetenv(name), 0);
  }
}

/* Saves X to path in a child process with MPCF_DEBUG_SAVE_STOP set (and
 * MPCF_DEBUG_SAVE_NAMED when `named`); the child must die by SIGKILL. */
static void save_killed_half_way(const mpcf_pcfs* X, const char* path, int named) {
  fflush(NULL);
  const pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    setenv("MPCF_DEBUG_SAVE_STOP", "1", 1);
    if (named) setenv("MPCF_DEBUG_SAVE_NAMED", "1", 1);
    const mpcf_status s = mpcf_pcfs_save(X, path);
    fprintf(stderr, "the save was not stopped: %s (%s)\n", mpcf_status_name(s),
            mpcf_last_error_message());
    _exit(3);
  }
  int status = 0;
  assert_int_equal(waitpid(child, &status, 0), child);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    fail_msg("the child that saved with MPCF_DEBUG_SAVE_STOP=1 was not killed by SIGKILL (status 0x%x)",
             status);
  }
}

/* Whether `dir` accepts O_TMPFILE (then a killed save leaves nothing). */
static int has_tmpfile(const char* dir) {
#ifdef O_TMPFILE
  const int fd = open(dir, O_TMPFILE | O_WRONLY, 0600);
  if (fd >= 0) {
    close(fd);
    return 1;
  }
#else
  (void)dir;
#endif
  return 0;
}

/* ---- D2: a stale temporary never blocks a save ---- */

/* The temporary names of the old scheme (PATH.mpcf-tmp-PID-N, opened with
 * O_EXCL) made a leftover with this process's pid fail every later save
 * with "File exists", naming the destination. Any leftover is now just
 * another file. */
static void test_stale_temporaries_do_not_block(void** s) {
  (void)s;
  mpcf_pcfs* X = collection(3, 4, 0);
  mpcf_pcfs* Y = collection(3, 4, 10);
  const char* path = in_dir("d2.mpcf");
  ok(mpcf_pcfs_save(X, path));
  for (int k = 0; k < 64; ++k) {
    char stale[600];
    snprintf(stale, sizeof stale, "%s.mpcf-tmp-%ld-%d", path, (long)getpid(), k);
    FILE* f = fopen(stale, "wb");
    assert_non_null(f);
    fclose(f);
  }
  ok(mpcf_pcfs_save(Y, path));
  expect_file_holds(path, Y);
  /* and in a named-temporary leftover of a killed save (below) */
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

/* ---- D4: what save follows, keeps and refuses ---- */

static void test_save_follows_symlinks(void** s) {
  (void)s;
  mpcf_pcfs* X = collection(2, 3, 0);
  mpcf_pcfs* Y = collection(2, 3, 5);
  make_subdir(in_dir("sym"));
  make_subdir(in_dir("sym/data"));
  make_subdir(in_dir("sym/links"));

  /* A relative link into another directory: the target is replaced, the
   * link stays a link to it. */
  const char* target = in_dir("sym/data/t.mpcf");
  ok(mpcf_pcfs_save(X, target));
  const char* link = in_dir("sym/links/l.mpcf");
  assert_int_equal(symlink("../data/t.mpcf", link), 0);
  ok(mpcf_pcfs_save(Y, link));
  expect_file_type(link, S_IFLNK);
  expect_file_type(target, S_IFREG);
  expect_file_holds(target, Y);
  char text[256];
  const ssize_t len = readlink(link, text, sizeof text - 1);
  assert_true(len > 0);
  text[len] = '\0';
  assert_string_equal(text, "../data/t.mpcf");

  /* A chain of two links, the first absolute. */
  const char* link2 = in_dir("sym/l2.mpcf");
  assert_int_equal(symlink(link, link2), 0);
  ok(mpcf_pcfs_save(X, link2));
  expect_file_type(link2, S_IFLNK);
  expect_file_type(link, S_IFLNK);
  expect_file_holds(target, X);

  /* A dangling link: the save creates its target. */
  const char* dangling = in_dir("sym/links/dangling.mpcf");
  assert_int_equal(symlink("../data/new.mpcf", dangling), 0);
  ok(mpcf_pcfs_save(Y, dangling));
  expect_file_type(dangling, S_IFLNK);
  expect_file_type(in_dir("sym/data/new.mpcf"), S_IFREG);
  expect_file_holds(in_dir("sym/data/new.mpcf"), Y);

  /* A loop: refused, named. */
  const char* loop = in_dir("sym/loop.mpcf");
  assert_int_equal(symlink("loop.mpcf", loop), 0);
  expect_error(mpcf_pcfs_save(X, loop), MPCF_ERROR_INVALID_ARGUMENT, loop);
  expect_error(MPCF_ERROR_INVALID_ARGUMENT, MPCF_ERROR_INVALID_ARGUMENT, "symbolic links");
  expect_file_type(loop, S_IFLNK);

  /* Nothing but the files above is left in the directories. */
  char* names = listing(in_dir("sym/data"));
  assert_string_equal(names, "new.mpcf/t.mpcf/");
  free(names);
  names = listing(in_dir("sym/links"));
  assert_string_equal(names, "dangling.mpcf/l.mpcf/");
  free(names);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

static mode_t mode_of(const char* path) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return st.st_mode & 07777;
}

static void test_save_keeps_mode_and_owner(void** s) {
  (void)s;
  mpcf_pcfs* X = collection(2, 3, 0);
  /* A new file: 0666 less the umask. */
  const mode_t old_mask = umask(027);
  ok(mpcf_pcfs_save(X, in_dir("mode-new.mpcf")));
  umask(old_mask);
  assert_int_equal(mode_of(in_dir("mode-new.mpcf")), 0640);

  /* A replaced file keeps its mode, whatever the umask. */
  const char* path = in_dir("mode-0600.mpcf");
  ok(mpcf_pcfs_save(X, path));
  assert_int_equal(chmod(path, 0600), 0);
  ok(mpcf_pcfs_save(X, path));
  assert_int_equal(mode_of(path), 0600);
  assert_int_equal(chmod(path, 0604), 0);
  ok(mpcf_pcfs_save(X, path));
  assert_int_equal(mode_of(path), 0604);
  /* through a link, the target's mode */
  const char* link = in_dir("mode-link.mpcf");
  assert_int_equal(symlink(path, link), 0);
  ok(mpcf_pcfs_save(X, link));
  assert_int_equal(mode_of(path), 0604);

  /* And its owner, where the caller may set it (root). */
  if (geteuid() == 0) {
    assert_int_equal(chown(path, 1234, 4321), 0);
    ok(mpcf_pcfs_save(X, path));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 1234);
    assert_int_equal(st.st_gid, 4321);
    assert_int_equal(st.st_mode & 07777, 0604);
  }
  expect_file_holds(path, X);
  mpcf_pcfs_destroy(X);
}

/* A path that is not a regular file (or a link to one) is refused, named,
 * and left as it is. */
static void refused(const mpcf_pcfs* X, const char* path, const char* what, mode_t type) {
  expect_error(mpcf_pcfs_save(X, path), MPCF_ERROR_INVALID_ARGUMENT, path);
  expect_error(MPCF_ERROR_INVALID_ARGUMENT, MPCF_ERROR_INVALID_ARGUMENT, what);
  expect_file_type(path, type);
}

static void test_save_refuses_special_files(void** s) {
  (void)s;
  mpcf_pcfs* X = collection(2, 3, 0);
  make_subdir(in_dir("special"));
  const char* before = NULL;

  refused(X, in_dir("special"), "is a directory", S_IFDIR);

  const char* fifo = in_dir("special/fifo");
  assert_int_equal(mkfifo(fifo, 0644), 0);
  refused(X, fifo, "is a FIFO", S_IFIFO);

  const char* sock = in_dir("special/sock");
  const int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
  assert_true(sfd >= 0);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  assert_true(strlen(sock) < sizeof addr.sun_path);
  strcpy(addr.sun_path, sock);
  assert_int_equal(bind(sfd, (const struct sockaddr*)&addr, sizeof addr), 0);
  refused(X, sock, "is a socket", S_IFSOCK);
  close(sfd);

  /* Links to special files: the link is named, with what it points to. */
  const char* to_null = in_dir("special/to-null");
  assert_int_equal(symlink("/dev/null", to_null), 0);
  refused(X, to_null, "is a symbolic link to '/dev/null', which is a character device", S_IFLNK);
  expect_file_type("/dev/null", S_IFCHR);
  const char* to_dir = in_dir("special/to-dir");
  assert_int_equal(symlink(".", to_dir), 0);
  refused(X, to_dir, "which is a directory", S_IFLNK);
  const char* to_fifo = in_dir("special/to-fifo");
  assert_int_equal(symlink("fifo", to_fifo), 0);
  refused(X, to_fifo, "which is a FIFO", S_IFLNK);

  /* A device node of its own (root may make one). */
  if (geteuid() == 0) {
    const char* dev = in_dir("special/null-device");
    if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) == 0) {
      refused(X, dev, "is a character device", S_IFCHR);
    }
  }
  /* A path ending in '/' names a directory. */
  refused(X, in_dir("special/"), "directory", S_IFDIR);
  before = listing(in_dir("special"));
  assert_null(strstr(before, ".mpcf"));
  free((void*)before);
  mpcf_pcfs_destroy(X);
}

/* Any name the file system accepts: 245 bytes (the old temporary suffix
 * made it too long) and NAME_MAX. */
static void test_save_long_names(void** s) {
  (void)s;
  mpcf_pcfs* X = collection(2, 3, 0);
  long name_max = pathconf(g_dir, _PC_NAME_MAX);
  if (name_max <= 0 || name_max > 1000) name_max = 255;
  const size_t lengths[2] = {245, (size_t)name_max};
  for (int k = 0; k < 2; ++k) {
    char name[1024];
    memset(name, 'n', lengths[k]);
    memcpy(name + lengths[k] - 5, ".mpcf", 5);
    name[lengths[k]] = '\0';
    const char* path = in_dir("%s", name);
    ok(mpcf_pcfs_save(X, path));
    ok(mpcf_pcfs_save(X, path)); /* and replaces it */
    expect_file_holds(path, X);
    assert_int_equal(unlink(path), 0);
  }
  mpcf_pcfs_destroy(X);
}

/* As a non-root caller: a read-only file is refused and kept; a
 * directory it may not write is named in the message. 0 when all held. */
static int read_only_checks(const mpcf_pcfs* Y, const char* path) {
  int failed = 0;
  if (mpcf_pcfs_save(Y, path) != MPCF_ERROR_INVALID_ARGUMENT ||
      !strstr(mpcf_last_error_message(), path) ||
      !strstr(mpcf_last_error_message(), "Permission denied")) {
    fprintf(stderr, "saving over a read-only file: %s\n", mpcf_last_error_message());
    failed = 1;
  }
  const char* locked = in_dir("ro/locked");
  if (mkdir(locked, 0555) != 0) return 1;
  char inner[600];
  snprintf(inner, sizeof inner, "%s/x.mpcf", locked);
  if (mpcf_pcfs_save(Y, inner) != MPCF_ERROR_INVALID_ARGUMENT ||
      !strstr(mpcf_last_error_message(), "Permission denied") ||
      !strstr(mpcf_last_error_message(), locked)) {
    fprintf(stderr, "saving into a read-only directory: %s\n", mpcf_last_error_message());
    failed = 1;
  }
  return failed;
}

/* A file the caller may not write is refused, not replaced (checked by
 * this process, or by a child that drops root). */
static void test_save_refuses_read_only_file(void** s) {
  (void)s;
  mpcf_pcfs* X = collection(2, 3, 0);
  mpcf_pcfs* Y = collection(2, 3, 5);
  make_subdir(in_dir("ro"));
  assert_int_equal(chmod(g_dir, 0755), 0);
  assert_int_equal(chmod(in_dir("ro"), 0777), 0);
  const char* path = in_dir("ro/x.mpcf");
  ok(mpcf_pcfs_save(X, path));
  assert_int_equal(chmod(path, 0444), 0);
  if (geteuid() != 0) {
    assert_int_equal(read_only_checks(Y, path), 0);
  } else {
    fflush(NULL);
    const pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0 || geteuid() == 0) _exit(2);
      _exit(read_only_checks(Y, path));
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("status 0x%x (see above)", status);
  }
  expect_file_holds(path, X);
  assert_int_equal(mode_of(path), 0444);
  assert_int_equal(chmod(g_dir, 0700), 0);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
}

/* ---- D5: a save killed half-way ---- */

/* The child dies half-way through the file (MPCF_DEBUG_SAVE_STOP): the
 * destination still holds the old file and, with O_TMPFILE, nothing new is
 * in the directory; the next save succeeds. */
static void test_killed_save_keeps_old_file(void** s) {
  (void)s;
  mpcf_pcfs* old_data = collection(200, 50, 0);
  mpcf_pcfs* new_data = collection(200, 50, 7);
  make_subdir(in_dir("killed"));
  const char* path = in_dir("killed/x.mpcf");
  ok(mpcf_pcfs_save(old_data, path));
  char* before = listing(in_dir("killed"));

  save_killed_half_way(new_data, path, 0);
  expect_file_holds(path, old_data);
  char* after = listing(in_dir("killed"));
  if (has_tmpfile(in_dir("killed"))) {
    assert_string_equal(after, before); /* no orphan */
  } else {
    assert_true(leftovers(in_dir("killed"), NULL, 0) <= 1); /* the named temporary */
  }
  free(after);

  ok(mpcf_pcfs_save(new_data, path));
  expect_file_holds(path, new_data);
  if (has_tmpfile(in_dir("killed"))) {
    after = listing(in_dir("killed"));
    assert_string_equal(after, before);
    free(after);
  }
  free(before);
  mpcf_pcfs_destroy(old_data);
  mpcf_pcfs_destroy(new_data);
}

/* Without O_TMPFILE (forced by MPCF_DEBUG_SAVE_NAMED) a killed save leaves
 * its named temporary ".mpcf-save-XXXXXX"; it blocks nothing, and a later
 * save removes it once no process holds it and it has not been written to
 * for an hour (its time is set back here instead of waiting). One that a
 * process holds (flock) is never removed. */
static void test_killed_named_save_is_cleaned_up(void** s) {
  (void)s;
  mpcf_pcfs* old_data = collection(100, 20, 0);
  mpcf_pcfs* new_data = collection(100, 20, 3);
  make_subdir(in_dir("named"));
  const char* dir = in_dir("named");
  const char* path = in_dir("named/x.mpcf");
  set_hook("MPCF_DEBUG_SAVE_NAMED", "1");
  ok(mpcf_pcfs_save(old_data, path));
  assert_int_equal(leftovers(dir, NULL, 0), 0);

  save_killed_half_way(new_data, path, 1);
  expect_file_holds(path, old_data);
  char stale[600];
  assert_int_equal(leftovers(dir, stale, sizeof stale), 1);
  struct stat st;
  assert_int_equal(stat(stale, &st), 0);
  assert_true(st.st_size > 0);
  /* it blocks nothing, and a fresh one is kept */
  ok(mpcf_pcfs_save(new_data, path));
  expect_file_holds(path, new_data);
  assert_int_equal(leftovers(dir, NULL, 0), 1);
  assert_int_equal(stat(stale, &st), 0);

  /* held by a process (this one): kept, however old */
  const struct timespec old_times[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
  assert_int_equal(utimensat(AT_FDCWD, stale, old_times, 0), 0);
  const int held = open(stale, O_RDWR);
  assert_true(held >= 0);
  assert_int_equal(flock(held, LOCK_EX | LOCK_NB), 0);
  ok(mpcf_pcfs_save(old_data, path));
  assert_int_equal(stat(stale, &st), 0);
  close(held);

  /* no longer held, two hours old: removed by the next save */
  ok(mpcf_pcfs_save(new_data, path));
  assert_int_equal(leftovers(dir, NULL, 0), 0);
  expect_file_holds(path, new_data);
  char* names = listing(dir);
  assert_string_equal(names, "x.mpcf/");
  free(names);
  set_hook("MPCF_DEBUG_SAVE_NAMED", NULL);
  mpcf_pcfs_destroy(old_data);
  mpcf_pcfs_destroy(new_data);
}

/* The hook stops only saves; unset or "0" it does nothing. */
static void test_save_stop_hook_off(void** s) {
  (void)s;
  mpcf_pcfs* X = collection(2, 3, 0);
  set_hook("MPCF_DEBUG_SAVE_STOP", "0");
  ok(mpcf_pcfs_save(X, in_dir("hook-off.mpcf")));
  set_hook("MPCF_DEBUG_SAVE_STOP", "");
  ok(mpcf_pcfs_save(X, in_dir("hook-off.mpcf")));
  set_hook("MPCF_DEBUG_SAVE_STOP", NULL);
  expect_file_holds(in_dir("hook-off.mpcf"), X);
  mpcf_pcfs_destroy(X);
}

/* ---- D6: loading a device or a pipe ---- */

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
      cmocka_unit_test(test_stale_temporaries_do_not_block),
      cmocka_unit_test(test_save_follows_symlinks),
      cmocka_unit_test(test_save_keeps_mode_and_owner),
      cmocka_unit_test(test_save_refuses_special_files),
      cmocka_unit_test(test_save_long_names),
      cmocka_unit_test(test_save_refuses_read_only_file),
      cmocka_unit_test(test_killed_save_keeps_old_file),
      cmocka_unit_test(test_killed_named_save_is_cleaned_up),
      cmocka_unit_test(test_save_stop_hook_off),
      cmocka_unit_test(test_load_dev_zero),
      cmocka_unit_test(test_load_fifo),
      cmocka_unit_test(test_load_fifo_huge_header),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
