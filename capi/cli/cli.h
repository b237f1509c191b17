/* What the parts of the mpcf command-line tool share: exit codes, the
 * "mpcf: error: " messages, the parsed command line and the result of a
 * command. The parts: cli_args.c (the command line), output_file.c
 * (atomic output), csv_writer.c (CSV results; npy_writer.c writes .npy),
 * signals.c (Ctrl-C / SIGTERM and the wait with a progress bar), summary.c
 * (what ran, as libmpcf reports it) and mpcf_cli.c (reading, computing,
 * writing). */
#ifndef MPCF_CLI_CLI_H
#define MPCF_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "inputs.h"
#include "mpcf/mpcf.h"

/* Exit codes (documented in README.md and --help). */
enum {
  EXIT_OK = 0,
  EXIT_DATA = 1,    /* an input or output file problem */
  EXIT_USAGE = 2,   /* bad command line */
  EXIT_RUNTIME = 3  /* libmpcf failed: no memory, CUDA unavailable, ... */
  /* and 128 + the signal number when SIGINT (130) or SIGTERM (143) cancels */
};

/* "mpcf: error: " + the formatted message + newline, on stderr. */
void error_message(const char* fmt, ...);
/* error_message plus the --help hint; returns EXIT_USAGE. */
int usage_error(const char* fmt, ...);
/* A failed libmpcf call: "context: <libmpcf's message> (STATUS)". Returns
 * EXIT_DATA for bad PCF data, EXIT_RUNTIME for everything else. */
int library_error(mpcf_status s, const char* context);
/* libmpcf's last message without the entry point's name in front
 * ("mpcf_exponent_check: p = 0.5 is ..." -> "p = 0.5 is ..."), for
 * messages about a command-line value. */
const char* library_reason(void);

typedef enum { CMD_PDIST, CMD_CDIST, CMD_KERNEL, CMD_NORM, CMD_KNN } command;
typedef enum { FORMAT_AUTO, FORMAT_NPY, FORMAT_CSV } out_format;

/* The command line, parsed and checked. The settings libmpcf takes
 * (backend, threads, window, CUDA threshold) are set on `options` as they
 * are parsed, so libmpcf's own checks judge them. */
typedef struct {
  command cmd;
  const char* cmd_name;
  double p;
  int p_set;
  mpcf_dtype dtype;
  mpcf_options* options; /* owned: cli_args_free */
  double window_a, window_b;
  int window_set;
  mpcf_layout layout;
  int layout_set;
  int metric_kernel;
  int metric_set;
  cli_barcodes barcodes;
  cli_barcode_spec bspec; /* levels (k), q and clip for landscapes and silhouettes */
  int levels_set, q_set, clip_set;
  int linear, type_set;
  const char* output;
  out_format format;
  int quiet, force_progress, force_summary, with_ids;
  const char* files[2];
  size_t nfiles;
  uint64_t k;
  int k_set;
  const char* indices; /* knn: where the indices go (.npy) */
} cli_args;

/* Parses argv into *a. Returns EXIT_OK, EXIT_USAGE, EXIT_RUNTIME (libmpcf
 * could not make the options), or -1 when --help or --version was printed
 * (exit 0). Free *a with cli_args_free whatever it returned. */
int parse_args(int argc, char** argv, cli_args* a);
/* Checks that the options fit the command; fills in the default layout. */
int check_args(cli_args* a);
void cli_args_free(cli_args* a);
/* The output format: --format, else by the extension of -o. */
out_format output_format(const cli_args* a);
/* Whether the command reads two inputs (cdist; knn with FILE_Y). */
int two_inputs(const cli_args* a);
/* Whether the command computes L2 inner products (kernel, cdist --metric kernel). */
int computes_kernel(const cli_args* a);

/* What a command computed, laid out as written. */
typedef struct {
  void* data;
  uint64_t count;
  mpcf_dtype dtype;
  uint64_t shape[2];
  size_t ndim;
  int64_t* indices; /* knn: count neighbour indices */
} result;

static inline double result_at(const result* r, uint64_t k) {
  return r->dtype == MPCF_FLOAT32 ? (double)((const float*)r->data)[k]
                                  : ((const double*)r->data)[k];
}

#endif /* MPCF_CLI_CLI_H */
