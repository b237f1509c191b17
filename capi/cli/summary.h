/* The summary the tool prints after a run: the inputs, what was computed,
 * the result's shape, and where and how it ran: backend, devices or
 * threads, merge steps and compute time as libmpcf reports them
 * (mpcf_task_info), and a checksum of the result. */
#ifndef MPCF_CLI_SUMMARY_H
#define MPCF_CLI_SUMMARY_H

#include <stdio.h>

#include "cli.h"
#include "csv_reader.h"

typedef struct {
  const char* input_names[2];
  int example; /* the inputs are the example dataset */
  const csv_pcfs* x;
  const csv_pcfs* y;
  double read_seconds;
  mpcf_task_info task; /* libmpcf's account of the computation */
} run_info;

void print_summary(FILE* f, const cli_args* a, const result* r, const run_info* info);

#endif /* MPCF_CLI_SUMMARY_H */
