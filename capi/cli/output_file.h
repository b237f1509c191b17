/* The result file: written to a temporary file next to the target and
 * renamed into place, so a failed or interrupted run never leaves a partial
 * result (a signal removes the temporary file: signals.h). Standard output
 * ("-"), devices and pipes are written in place. */
#ifndef MPCF_CLI_OUTPUT_FILE_H
#define MPCF_CLI_OUTPUT_FILE_H

#include <stdio.h>

typedef struct {
  const char* path;
  char* temp_path; /* NULL when writing in place (stdout, devices, pipes) */
  FILE* file;
  int is_stdout;
  int slot; /* its slot of signals_track_temp, -1: none */
} output_file;

/* Opens `path` ("-": standard output) for writing. Returns EXIT_OK, or
 * EXIT_DATA / EXIT_RUNTIME with the message printed. */
int output_open(output_file* o, const char* path);
/* Flushes, closes and renames the file into place. Returns EXIT_OK or
 * EXIT_DATA (message printed; the temporary file removed). */
int output_commit(output_file* o);
/* Drops a half-written output. Safe to call twice or on an unopened
 * (zeroed) one. */
void output_abort(output_file* o);

#endif /* MPCF_CLI_OUTPUT_FILE_H */
