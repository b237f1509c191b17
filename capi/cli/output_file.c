/* The output file (output_file.h). */
#define _POSIX_C_SOURCE 200809L

#include "output_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "signals.h"

static void forget_temp(output_file* o) {
  signals_forget_temp(o->slot);
  o->slot = -1;
}

int output_open(output_file* o, const char* path) {
  memset(o, 0, sizeof *o);
  o->slot = -1;
  o->path = path;
  if (strcmp(path, "-") == 0) {
    o->file = stdout;
    o->is_stdout = 1;
    return EXIT_OK;
  }
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      error_message("cannot write '%s': it is a directory", path);
      return EXIT_DATA;
    }
    if (!S_ISREG(st.st_mode)) {
      /* A device or pipe: there is nothing to rename. */
      o->file = fopen(path, "wb");
      if (o->file == NULL) {
        error_message("cannot open '%s' for writing: %s", path, strerror(errno));
        return EXIT_DATA;
      }
      return EXIT_OK;
    }
  }
  const size_t len = strlen(path) + 48;
  o->temp_path = malloc(len);
  if (o->temp_path == NULL) {
    error_message("out of memory");
    return EXIT_RUNTIME;
  }
  snprintf(o->temp_path, len, "%s.mpcf-tmp-%ld", path, (long)getpid());
  errno = 0;
  o->file = fopen(o->temp_path, "wbx");
  if (o->file == NULL) {
    const int temp_errno = errno;
    free(o->temp_path);
    o->temp_path = NULL;
    /* Name the real cause: the target itself may not be writable (a
       read-only file, /proc), or only its directory refuses a new file. */
    char dir[4096];
    const char* slash = strrchr(path, '/');
    if (slash == NULL) {
      snprintf(dir, sizeof dir, ".");
    } else {
      snprintf(dir, sizeof dir, "%.*s", (int)(slash == path ? 1 : slash - path), path);
    }
    struct stat dst;
    FILE* probe = fopen(path, "r+b");
    if (stat(dir, &dst) != 0 || !S_ISDIR(dst.st_mode)) {
      if (probe != NULL) fclose(probe);
      error_message("cannot write '%s': the directory '%s' does not exist", path, dir);
    } else if (probe == NULL && errno != ENOENT) {
      error_message("cannot write '%s': %s", path, strerror(errno));
    } else {
      if (probe != NULL) fclose(probe);
      error_message("cannot create the output file '%s': its directory does not accept the "
                    "temporary file '%s.mpcf-tmp-*' it is written to first (%s)",
                    path, path, strerror(temp_errno));
    }
    return EXIT_DATA;
  }
  o->slot = signals_track_temp(o->temp_path);
  return EXIT_OK;
}

void output_abort(output_file* o) {
  if (o->file != NULL && !o->is_stdout) fclose(o->file);
  o->file = NULL;
  if (o->temp_path != NULL) {
    remove(o->temp_path);
    forget_temp(o);
    free(o->temp_path);
    o->temp_path = NULL;
  }
}

int output_commit(output_file* o) {
  int failed = fflush(o->file) != 0 || ferror(o->file);
  int saved = errno;
  if (!o->is_stdout) {
    if (fclose(o->file) != 0 && !failed) {
      failed = 1;
      saved = errno;
    }
    o->file = NULL;
  }
  if (!failed && o->temp_path != NULL && rename(o->temp_path, o->path) != 0) {
    failed = 1;
    saved = errno;
  }
  if (failed) {
    error_message("cannot write '%s': %s", o->is_stdout ? "<stdout>" : o->path,
                  strerror(saved ? saved : EIO));
    output_abort(o);
    return EXIT_DATA;
  }
  forget_temp(o);
  free(o->temp_path);
  o->temp_path = NULL;
  return EXIT_OK;
}
