/* The corpus replay program: runs a fuzz target's LLVMFuzzerTestOneInput
 * once on every input file it is given, without libFuzzer, so any compiler
 * builds it and every ctest run replays the corpus.
 *
 *   fuzz_TARGET_replay [--strict] [--timeout SECONDS] PATH...
 *
 * A PATH is a file or a directory (its regular files, not its
 * subdirectories, in name order). --strict turns the known-defect filter off
 * (see fuzz_support.h). An input running longer than SECONDS (default 60;
 * every corpus input takes milliseconds) is reported as a hang. Exit status
 * 0 when every input passed; a failed check aborts with a report naming the
 * input. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fuzz_support.h"

static char g_running[4096];

static void on_alarm(int sig) {
  (void)sig;
  static const char head[] = "mpcf fuzz replay: TIMEOUT (a hang?) in input ";
  ssize_t ignored = write(STDERR_FILENO, head, sizeof head - 1);
  ignored = write(STDERR_FILENO, g_running, strlen(g_running));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  _exit(1);
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Reads a whole file; NULL on failure (message printed). */
static unsigned char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "mpcf fuzz replay: cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, len = 0;
  unsigned char* buf = malloc(cap);
  while (buf != NULL) {
    len += fread(buf + len, 1, cap - len, f);
    if (len < cap) break;
    unsigned char* grown = realloc(buf, cap * 2);
    if (grown == NULL) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = grown;
    cap *= 2;
  }
  const int bad = buf == NULL || ferror(f);
  fclose(f);
  if (bad) {
    fprintf(stderr, "mpcf fuzz replay: cannot read %s\n", path);
    free(buf);
    return NULL;
  }
  *size = len;
  return buf;
}

static int run_file(const char* path, unsigned timeout) {
  size_t size = 0;
  unsigned char* data = read_file(path, &size);
  if (data == NULL) return 0;
  snprintf(g_running, sizeof g_running, "%s", path);
  fz_set_current_input(path);
  const double t0 = now_seconds();
  alarm(timeout);
  LLVMFuzzerTestOneInput(data, size);
  alarm(0);
  printf("ok   %s (%zu bytes, %.3f s)\n", path, size, now_seconds() - t0);
  fflush(stdout);
  free(data);
  return 1;
}

static int by_name(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* Runs the regular files directly inside `dir`; returns how many ran, -1 on
 * an error. */
static int run_dir(const char* dir, unsigned timeout) {
  DIR* d = opendir(dir);
  if (d == NULL) {
    fprintf(stderr, "mpcf fuzz replay: cannot open directory %s: %s\n", dir, strerror(errno));
    return -1;
  }
  char** paths = NULL;
  size_t count = 0, cap = 0;
  struct dirent* e;
  int ok = 1;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    const size_t len = strlen(dir) + strlen(e->d_name) + 2;
    char* path = malloc(len);
    if (path == NULL) {
      ok = 0;
      break;
    }
    snprintf(path, len, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(path);
      continue;
    }
    if (count == cap) {
      cap = cap ? 2 * cap : 64;
      char** grown = realloc(paths, cap * sizeof *paths);
      if (grown == NULL) {
        free(path);
        ok = 0;
        break;
      }
      paths = grown;
    }
    paths[count++] = path;
  }
  closedir(d);
  if (paths != NULL) qsort(paths, count, sizeof *paths, by_name);
  int ran = 0;
  for (size_t k = 0; k < count; ++k) {
    if (ok && !run_file(paths[k], timeout)) ok = 0;
    if (ok) ++ran;
    free(paths[k]);
  }
  free(paths);
  return ok ? ran : -1;
}

int main(int argc, char** argv) {
  unsigned timeout = 60;
  int ran = 0;
  int paths = 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  for (int k = 1; k < argc; ++k) {
    if (strcmp(argv[k], "--strict") == 0) {
      fz_set_strict(1);
      continue;
    }
    if (strcmp(argv[k], "--timeout") == 0 && k + 1 < argc) {
      timeout = (unsigned)strtoul(argv[++k], NULL, 10);
      continue;
    }
    ++paths;
    struct stat st;
    if (stat(argv[k], &st) != 0) {
      fprintf(stderr, "mpcf fuzz replay: %s: %s\n", argv[k], strerror(errno));
      return 2;
    }
    if (S_ISDIR(st.st_mode)) {
      const int r = run_dir(argv[k], timeout);
      if (r < 0) return 2;
      ran += r;
    } else {
      if (!run_file(argv[k], timeout)) return 2;
      ++ran;
    }
  }
  if (paths == 0) {
    fprintf(stderr, "usage: %s [--strict] [--timeout SECONDS] FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  if (ran == 0) {
    fprintf(stderr, "mpcf fuzz replay: no input files found\n");
    return 2;
  }
  printf("mpcf fuzz replay: %d inputs passed%s\n", ran, fz_strict() ? " (strict)" : "");
  return 0;
}
