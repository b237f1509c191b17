/* mpcf: the command-line tool of libmpcf. It reads PCFs from long-format
 * CSV files, runs pdist, cdist, kernel, norm or knn through the public C API
 * (mpcf/mpcf.h only) and writes the result as .npy or CSV. Usage, formats
 * and exit codes are documented in capi/cli/README.md and in `mpcf --help`.
 * This file reads the inputs, computes and writes; the command line is
 * cli_args.c, the rest is named in cli.h. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "csv_reader.h"
#include "csv_writer.h"
#include "inputs.h"
#include "mpcf/mpcf.h"
#include "npy_writer.h"
#include "output_file.h"
#include "signals.h"
#include "summary.h"

#ifndef MPCF_EXAMPLE_DATA
#define MPCF_EXAMPLE_DATA ""
#endif
#ifndef MPCF_EXAMPLE_DATA_FROM_BINDIR
#define MPCF_EXAMPLE_DATA_FROM_BINDIR ""
#endif

/* ------------------------------------------------------------------ */
/* Inputs                                                               */
/* ------------------------------------------------------------------ */

static int file_exists(const char* path) {
  struct stat st;
  return path[0] != '\0' && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The installed example dataset, relative to this executable's folder (so
 * a moved install prefix still finds it); "" when unknown. */
static const char* installed_example_path(void) {
  static char path[4096];
  char exe[4096];
  if (MPCF_EXAMPLE_DATA_FROM_BINDIR[0] == '\0') return "";
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "";
  exe[n] = '\0';
  char* slash = strrchr(exe, '/');
  if (slash == NULL) return "";
  *slash = '\0';
  const int w = snprintf(path, sizeof path, "%s/%s", exe, MPCF_EXAMPLE_DATA_FROM_BINDIR);
  return w > 0 && (size_t)w < sizeof path ? path : "";
}

/* The example dataset: $MPCF_EXAMPLE_DATA, else the installed copy, else
 * the copy in the source tree. */
static const char* example_path(void) {
  const char* env = getenv("MPCF_EXAMPLE_DATA");
  if (env != NULL && env[0] != '\0') {
    if (!file_exists(env)) {
      error_message("MPCF_EXAMPLE_DATA is set to '%s', which is not a readable file", env);
      return NULL;
    }
    return env;
  }
  const char* installed = installed_example_path();
  if (file_exists(installed)) return installed;
  if (file_exists(MPCF_EXAMPLE_DATA)) return MPCF_EXAMPLE_DATA;
  error_message(
      "the example dataset was not found (looked for '%s' and '%s'); give an input FILE or set "
      "MPCF_EXAMPLE_DATA",
      installed, MPCF_EXAMPLE_DATA);
  return NULL;
}

static int read_input(const char* path, const cli_args* a, csv_pcfs* out, const char** name) {
  *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
  char err[1024];
  const csv_status s =
      cli_read_input(path, *name, a->dtype, &a->bspec, a->linear, out, err, sizeof err);
  if (s == CSV_OK) return EXIT_OK;
  error_message("%s", err);
  return s == CSV_ERROR_NO_MEMORY ? EXIT_RUNTIME : EXIT_DATA;
}

/* After libmpcf refused the points of *c (MPCF_ERROR_INVALID_PCF): its
 * message with the line and id of the breakpoint its detail names in front;
 * EXIT_DATA, or 0 when c has no lines to name (then library_error). */
static int report_invalid_points(const csv_pcfs* c, const char* name) {
  mpcf_error_detail d;
  memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  char where[256];
  if (mpcf_last_error_detail(&d) != MPCF_OK ||
      !csv_where(c, name, d.function_index, d.breakpoint_index, where, sizeof where)) {
    return 0;
  }
  /* Times that differ in the file may be one float32: say so. */
  const uint64_t first = c->offsets[d.function_index];
  const uint64_t m = c->offsets[d.function_index + 1] - first;
  int float32_tie = 0;
  if (c->dtype == MPCF_FLOAT32 && d.breakpoint_index > 0 && (uint64_t)d.breakpoint_index < m) {
    const float* t = (const float*)c->times + first;
    float32_tie = t[d.breakpoint_index] == t[d.breakpoint_index - 1];
  }
  error_message("%s: %s%s", where, library_reason(),
                float32_tie ? " (read as float32; --dtype float64 keeps apart times that float32 "
                              "rounds to one)"
                            : "");
  return EXIT_DATA;
}

/* Hands the points to libmpcf, which checks them (finite, strictly
 * increasing times) and keeps its own copy; ours is freed at once so that
 * large inputs are not held twice. PLFs are created as such; objects of
 * K > 1 functions (landscapes) get the shape (n, K) and the component axis,
 * so every computation runs over the objects. */
static int make_collection(csv_pcfs* c, const char* name, mpcf_pcfs** out) {
  const uint64_t per = c->components > 1 ? c->components : 1;
  mpcf_status s = (c->linear ? mpcf_plfs_create : mpcf_pcfs_create)(
      c->dtype, c->n * per, c->offsets, c->times, c->values, out);
  const int located = s == MPCF_ERROR_INVALID_PCF ? report_invalid_points(c, name) : 0;
  free(c->times);
  free(c->values);
  c->times = NULL;
  c->values = NULL;
  if (located) return located;
  if (s == MPCF_OK && per > 1) {
    const uint64_t shape[2] = {c->n, per};
    s = mpcf_pcfs_reshape(*out, 2, shape);
    if (s == MPCF_OK) s = mpcf_pcfs_set_component_axis(*out, 1);
  }
  if (s != MPCF_OK) return library_error(s, name);
  return EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* The run                                                              */
/* ------------------------------------------------------------------ */

/* Sizes the result of the command and allocates it. */
static int allocate_result(const cli_args* a, const mpcf_pcfs* X, const mpcf_pcfs* Y,
                           const csv_pcfs* x, const csv_pcfs* y, result* r) {
  mpcf_status s = MPCF_OK;
  r->dtype = a->dtype;
  switch (a->cmd) {
    case CMD_PDIST: s = mpcf_pdist_size(X, a->layout, &r->count); break;
    case CMD_KERNEL: s = mpcf_l2_kernel_size(X, a->layout, &r->count); break;
    case CMD_CDIST: s = mpcf_cdist_size(X, Y, &r->count); break;
    case CMD_NORM: r->count = x->n; break;
    case CMD_KNN: s = mpcf_knn_size(X, a->k, &r->count); break;
  }
  if (s != MPCF_OK) return library_error(s, "result size");
  if ((a->cmd == CMD_PDIST || a->cmd == CMD_KERNEL) && a->layout == MPCF_LAYOUT_DENSE) {
    r->ndim = 2;
    r->shape[0] = r->shape[1] = x->n;
  } else if (a->cmd == CMD_CDIST) {
    r->ndim = 2;
    r->shape[0] = x->n;
    r->shape[1] = y->n;
  } else if (a->cmd == CMD_KNN) {
    r->ndim = 2;
    r->shape[0] = x->n;
    r->shape[1] = a->k;
  } else {
    r->ndim = 1;
    r->shape[0] = r->count;
  }
  const size_t elem = a->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  if (r->count > SIZE_MAX / elem) {
    error_message("the result has %" PRIu64 " values, too many for this machine's memory",
                  r->count);
    return EXIT_RUNTIME;
  }
  const size_t bytes = (size_t)r->count * elem;
  r->data = malloc(bytes > 0 ? bytes : 1);
  if (r->data != NULL && a->cmd == CMD_KNN) {
    r->indices = malloc(r->count > 0 ? (size_t)r->count * sizeof(int64_t) : 1);
    if (r->indices == NULL) {
      free(r->data);
      r->data = NULL;
    }
  }
  if (r->data == NULL) {
    error_message("cannot allocate %.3g GB for the result (%" PRIu64 " values of %s)",
                  (double)bytes / 1e9, r->count, cli_dtype_name(a->dtype));
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

/* Runs the command; *info receives libmpcf's account of it. */
static int compute(const cli_args* a, const mpcf_pcfs* X, const mpcf_pcfs* Y, result* r,
                   int show_progress, mpcf_task_info* info) {
  const mpcf_options* options = a->options;
  if (a->cmd == CMD_NORM) {
    mpcf_status s = mpcf_lp_norm(X, a->p, r->data, r->count, options);
    if (s == MPCF_OK) s = mpcf_last_task_info(info);
    return s == MPCF_OK ? EXIT_OK : library_error(s, "norm");
  }
  mpcf_task* task = NULL;
  mpcf_status s = MPCF_OK;
  switch (a->cmd) {
    case CMD_PDIST:
      s = mpcf_pdist_start(X, a->p, a->layout, r->data, r->count, options, &task);
      break;
    case CMD_KERNEL:
      s = mpcf_l2_kernel_start(X, a->layout, r->data, r->count, options, &task);
      break;
    case CMD_CDIST:
      s = mpcf_cdist_start(X, Y, a->metric_kernel ? MPCF_METRIC_L2_KERNEL : MPCF_METRIC_LP_DISTANCE,
                           a->p, r->data, r->count, options, &task);
      break;
    case CMD_KNN:
      s = mpcf_knn_start(X, Y, a->p, a->k, r->data, r->indices, r->count, options, &task);
      break;
    case CMD_NORM: break;
  }
  if (s != MPCF_OK) return library_error(s, a->cmd_name);
  int code = signals_wait_for_task(task, show_progress, a->cmd_name);
  if (code == EXIT_OK) {
    s = mpcf_task_info_get(task, info);
    if (s != MPCF_OK) code = library_error(s, "task info");
  }
  mpcf_task_destroy(task);
  return signals_end_wait(code);
}

/* knn: k against the inputs' counts, by libmpcf's rule, before the result
 * is sized (a k beyond the candidates is a command-line error). */
static int check_k(const cli_args* a, const csv_pcfs* x, const csv_pcfs* y) {
  if (a->cmd != CMD_KNN) return EXIT_OK;
  const int64_t ny = two_inputs(a) ? (int64_t)y->n : -1;
  if (mpcf_knn_check(x->n, ny, x->components > 1, a->p, a->k) != MPCF_OK) {
    return usage_error("knn -k %" PRIu64 ": %s", a->k, library_reason());
  }
  return EXIT_OK;
}

static int run(const cli_args* a) {
  int code = EXIT_OK;
  csv_pcfs x;
  csv_pcfs y;
  memset(&x, 0, sizeof x);
  memset(&y, 0, sizeof y);
  mpcf_pcfs* X = NULL;
  mpcf_pcfs* Y = NULL;
  result r;
  memset(&r, 0, sizeof r);
  output_file out;
  memset(&out, 0, sizeof out);
  run_info info;
  memset(&info, 0, sizeof info);
  info.x = &x;
  info.y = &y;

  const char* inputs[2] = {a->files[0], a->files[1]};
  if (a->nfiles == 0) {
    inputs[0] = example_path();
    if (inputs[0] == NULL) return EXIT_DATA;
    info.example = 1;
  }
  signals_install();
  output_file index_out;
  memset(&index_out, 0, sizeof index_out);
  if (a->output != NULL && (code = output_open(&out, a->output)) != EXIT_OK) return code;
  if (a->indices != NULL && (code = output_open(&index_out, a->indices)) != EXIT_OK) {
    output_abort(&out);
    return code;
  }

  const double t0 = now_seconds();
  code = read_input(inputs[0], a, &x, &info.input_names[0]);
  if (code == EXIT_OK && two_inputs(a)) {
    code = read_input(inputs[1], a, &y, &info.input_names[1]);
  }
  info.read_seconds = now_seconds() - t0;
  if (code == EXIT_OK) code = make_collection(&x, info.input_names[0], &X);
  if (code == EXIT_OK && two_inputs(a)) code = make_collection(&y, info.input_names[1], &Y);
  if (code == EXIT_OK) code = check_k(a, &x, &y);
  if (code == EXIT_OK) code = allocate_result(a, X, Y, &x, &y, &r);
  if (code == EXIT_OK) {
    const int show_progress =
        !a->quiet && (a->force_progress || isatty(fileno(stderr))) && a->cmd != CMD_NORM;
    memset(&info.task, 0, sizeof info.task);
    info.task.struct_size = sizeof info.task;
    code = compute(a, X, Y, &r, show_progress, &info.task);
  }
  if (code == EXIT_OK && a->output != NULL) {
    if (output_format(a) == FORMAT_NPY) {
      errno = 0;
      if (npy_write(out.file, r.dtype, r.shape, r.ndim, r.data, r.count) != 0) {
        error_message("cannot write '%s': %s", a->output, strerror(errno ? errno : EIO));
        code = EXIT_DATA;
      }
      errno = 0;
      if (code == EXIT_OK && a->indices != NULL &&
          npy_write_int64(index_out.file, r.shape, r.ndim, r.indices, r.count) != 0) {
        error_message("cannot write '%s': %s", a->indices, strerror(errno ? errno : EIO));
        code = EXIT_DATA;
      }
    } else {
      write_csv(out.file, a, &r, &x, &y);
    }
    if (code == EXIT_OK) code = output_commit(&out);
    if (code == EXIT_OK && a->indices != NULL) code = output_commit(&index_out);
  }
  if (code == EXIT_OK) {
    const int to_stdout = a->output != NULL && strcmp(a->output, "-") == 0;
    const int wanted = a->output == NULL || a->force_summary || info.example;
    if (!a->quiet && wanted) print_summary(to_stdout ? stderr : stdout, a, &r, &info);
  }

  output_abort(&out);
  output_abort(&index_out);
  free(r.data);
  free(r.indices);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
  csv_pcfs_free(&x);
  csv_pcfs_free(&y);
  return code;
}

int main(int argc, char** argv) {
  cli_args args;
  int code = parse_args(argc, argv, &args);
  if (code == -1) {
    cli_args_free(&args);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_DATA;
  }
  if (code == EXIT_OK) code = check_args(&args);
  if (code == EXIT_OK) code = run(&args);
  cli_args_free(&args);
  if (code == EXIT_USAGE) return code;
  if (fflush(stdout) != 0 && code == EXIT_OK) {
    error_message("cannot write to standard output: %s", strerror(errno));
    code = EXIT_DATA;
  }
  return code;
}
