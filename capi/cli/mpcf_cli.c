/* mpcf: the command-line tool of libmpcf. It reads PCFs from long-format
 * CSV files, runs pdist, cdist, kernel or norm through the public C API
 * (mpcf/mpcf.h only) and writes the result as .npy or CSV. Usage, formats
 * and exit codes are documented in capi/cli/README.md and in `mpcf --help`. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "csv_reader.h"
#include "inputs.h"
#include "mpcf/mpcf.h"
#include "npy_writer.h"

#ifndef MPCF_EXAMPLE_DATA
#define MPCF_EXAMPLE_DATA ""
#endif
#ifndef MPCF_EXAMPLE_DATA_FROM_BINDIR
#define MPCF_EXAMPLE_DATA_FROM_BINDIR ""
#endif

/* Exit codes (documented in README.md and --help). */
enum {
  EXIT_OK = 0,
  EXIT_DATA = 1,    /* an input or output file problem */
  EXIT_USAGE = 2,   /* bad command line */
  EXIT_RUNTIME = 3  /* libmpcf failed: no memory, CUDA unavailable, ... */
  /* and 128 + the signal number when SIGINT (130) or SIGTERM (143) cancels */
};

/* The merge-step count from which backend AUTO uses CUDA. The CLI sets it
 * explicitly so that it can say which backend ran. */
static const double DEFAULT_CUDA_THRESHOLD = 2e8;

/* ------------------------------------------------------------------ */
/* Messages                                                             */
/* ------------------------------------------------------------------ */

static void error_message(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mpcf: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int usage_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mpcf: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("\nTry 'mpcf --help' for more information.\n", stderr);
  va_end(ap);
  return EXIT_USAGE;
}

/* Exit code for a failed libmpcf call: bad PCF data is a data error,
 * everything else (memory, CUDA, internal) a runtime error. */
static int library_error(mpcf_status s, const char* context) {
  error_message("%s: %s (%s)", context, mpcf_last_error_message(), mpcf_status_name(s));
  return s == MPCF_ERROR_INVALID_PCF ? EXIT_DATA : EXIT_RUNTIME;
}

static const char* const HELP_TEXT =
    "Usage: mpcf [COMMAND] [OPTIONS] [FILE...]\n"
    "\n"
    "Exact distances and kernels between piecewise constant or linear functions (libmpcf).\n"
    "\n"
    "Commands:\n"
    "  pdist  [FILE]           Lp distances between all pairs of the functions of FILE\n"
    "  cdist  FILE_X FILE_Y    Lp distances (or L2 inner products) of every x with every y\n"
    "  kernel [FILE]           L2 inner products of all pairs, diagonal included\n"
    "  norm   [FILE]           Lp norm of every function\n"
    "  knn    [FILE] [FILE_Y] -k K\n"
    "                          the K nearest neighbours (Lp distance) of every function:\n"
    "                          among the others of FILE, or among those of FILE_Y\n"
    "Without FILE (or without any command) mpcf runs on the example dataset shipped\n"
    "with libmpcf and prints a summary. FILE '-' reads standard input.\n"
    "\n"
    "Input: CSV rows 'id,t,v' (header optional); the rows of one id are contiguous and\n"
    "sorted by strictly increasing t. Function f is 0 before its first t, v_k on\n"
    "[t_k, t_k+1) and keeps its last value for ever. A PCF file in the mpcf binary\n"
    "format (saved by libmpcf, mpcf.save in Python, pcf_save in R) is recognised by\n"
    "its content. With --from-barcodes, the CSV rows are bars 'id,birth,death'\n"
    "(death may be inf), and each id's barcode becomes one function (landscape: one\n"
    "object of K functions, lambda_1 .. lambda_K, compared as in (sum_k d_p^p)^(1/p)).\n"
    "\n"
    "Options:\n"
    "  -p P                    exponent p >= 1, or 'inf' (default 1)\n"
    "  --dtype float32|float64 precision of input and result (default float64)\n"
    "  --backend auto|cpu|cuda where to compute (default auto)\n"
    "  --threads N             CPU threads, 0 = all hardware threads (default 0)\n"
    "  --window A:B            integrate over [A, B) only; A or B may be empty or inf\n"
    "  --layout dense|condensed|packed\n"
    "                          pdist: default condensed (SciPy order); kernel: default\n"
    "                          dense (condensed is not available for kernels)\n"
    "  --metric distance|kernel  what cdist computes (default distance)\n"
    "  -k K                    knn: the number of neighbours\n"
    "  --indices PATH          knn: also write the (n, K) neighbour indices as .npy\n"
    "                          (the -o .npy file holds the distances); CSV output\n"
    "                          has rows i,j,distance instead\n"
    "  --type constant|linear  the CSV functions are piecewise constant (default) or\n"
    "                          piecewise linear (linear interpolation between breakpoints)\n"
    "  --from-barcodes betti|stable-rank|accumulated-persistence|landscape|silhouette\n"
    "                          read barcodes and compare their Betti curves, stable\n"
    "                          ranks, accumulated persistence functions, persistence\n"
    "                          landscapes or silhouettes\n"
    "  --levels K              landscape: the number of landscapes per barcode (-k K\n"
    "                          also sets it, except for knn, where -k counts neighbours)\n"
    "  --q Q                   silhouette: the weight exponent, (death - birth)^Q (default 1)\n"
    "  --clip C                landscape, silhouette: infinite deaths become C\n"
    "                          (without it an infinite bar is an error)\n"
    "  -o, --output PATH       write the result: .npy by extension, CSV otherwise,\n"
    "                          '-' for CSV on standard output\n"
    "  --format npy|csv        override the format chosen from the extension\n"
    "  --with-ids              CSV output with the functions' ids as labels\n"
    "  --cuda-threshold S      backend auto uses CUDA from S merge steps (default 2e8)\n"
    "  --summary               print the summary even when writing a result\n"
    "  --progress              show the progress bar even when stderr is no terminal\n"
    "  -q, --quiet             no progress bar and no summary\n"
    "  -h, --help              show this help;  --version  show versions and build\n"
    "\n"
    "Exit codes: 0 success, 1 bad input/output file, 2 bad command line,\n"
    "3 libmpcf failure (memory, CUDA, ...), 130 Ctrl-C (SIGINT), 143 SIGTERM.\n"
    "See capi/cli/README.md for the file formats and every error message.\n";

/* ------------------------------------------------------------------ */
/* Signals                                                              */
/* ------------------------------------------------------------------ */

/* Ctrl-C (SIGINT) and SIGTERM. While a task runs, the handler only records
 * the signal and the waiting loop cancels the task, so everything is freed
 * and the temporary output removed. At any other time the handler removes
 * the temporary output itself (unlink is async-signal-safe) and lets the
 * signal end the process as usual. */
static volatile sig_atomic_t g_signal = 0;
static volatile sig_atomic_t g_defer_signals = 0;
/* The temporary outputs being written (knn writes two). */
static const char* volatile g_temp_paths[2] = {NULL, NULL};

static void on_signal(int sig) {
  g_signal = sig;
  if (!g_defer_signals) {
    for (int k = 0; k < 2; ++k) {
      const char* temp = g_temp_paths[k];
      if (temp != NULL) unlink(temp);
    }
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

static void install_signal_handlers(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

/* ------------------------------------------------------------------ */
/* Command line                                                         */
/* ------------------------------------------------------------------ */

typedef enum { CMD_PDIST, CMD_CDIST, CMD_KERNEL, CMD_NORM, CMD_KNN } command;
typedef enum { FORMAT_AUTO, FORMAT_NPY, FORMAT_CSV } out_format;

typedef struct {
  command cmd;
  const char* cmd_name;
  double p;
  int p_set;
  mpcf_dtype dtype;
  mpcf_backend backend;
  int threads;
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
  double cuda_threshold;
  const char* output;
  out_format format;
  int quiet, force_progress, force_summary, with_ids;
  const char* files[2];
  size_t nfiles;
  uint64_t k;
  int k_set;
  const char* indices; /* knn: where the indices go (.npy) */
} cli_args;

/* Parses a whole string as a double (strtod, C locale). */
static int parse_double(const char* s, double* out) {
  if (s == NULL || *s == '\0') return 0;
  char* stop = NULL;
  errno = 0;
  const double d = strtod(s, &stop);
  if (*stop != '\0') return 0;
  *out = d;
  return 1;
}

static int parse_p(const char* s, double* out) {
  double p;
  if (!parse_double(s, &p) || isnan(p)) {
    return usage_error("-p '%s' is not a number; p must be a number >= 1 or 'inf'", s);
  }
  if (p < 1.0) return usage_error("-p %s is below 1; p must be a number >= 1 or 'inf'", s);
  *out = p;
  return EXIT_OK;
}

static int parse_window(const char* s, double* a, double* b) {
  const char* colon = strchr(s, ':');
  if (colon == NULL || strchr(colon + 1, ':') != NULL) {
    return usage_error("--window '%s' is not of the form A:B (e.g. 0:10, :5, 2:, -inf:inf)", s);
  }
  char left[128];
  const size_t left_len = (size_t)(colon - s);
  if (left_len >= sizeof left) return usage_error("--window '%s': A is too long", s);
  memcpy(left, s, left_len);
  left[left_len] = '\0';
  const char* right = colon + 1;
  double lo = -INFINITY;
  double hi = INFINITY;
  if (left_len > 0 && (!parse_double(left, &lo) || isnan(lo))) {
    return usage_error("--window '%s': A = '%s' is not a number", s, left);
  }
  if (*right != '\0' && (!parse_double(right, &hi) || isnan(hi))) {
    return usage_error("--window '%s': B = '%s' is not a number", s, right);
  }
  if (!(lo < hi)) return usage_error("--window '%s': the window [A, B) needs A < B", s);
  *a = lo;
  *b = hi;
  return EXIT_OK;
}

static int parse_threads(const char* s, int* out) {
  char* stop = NULL;
  errno = 0;
  const long n = strtol(s, &stop, 10);
  if (*s == '\0' || *stop != '\0' || errno == ERANGE || n < 0 || n > 4096) {
    return usage_error("--threads '%s' is not a whole number in 0..4096 (0 = all hardware threads)",
                       s);
  }
  *out = (int)n;
  return EXIT_OK;
}

/* Matches `value` against a NULL-terminated list; returns its index or -1. */
static int choose(const char* value, const char* const* names) {
  for (int k = 0; names[k] != NULL; ++k) {
    if (strcmp(value, names[k]) == 0) return k;
  }
  return -1;
}

enum {
  OPT_P, OPT_DTYPE, OPT_BACKEND, OPT_THREADS, OPT_WINDOW, OPT_LAYOUT, OPT_METRIC, OPT_OUTPUT,
  OPT_FORMAT, OPT_WITH_IDS, OPT_CUDA_THRESHOLD, OPT_SUMMARY, OPT_PROGRESS, OPT_QUIET, OPT_HELP,
  OPT_VERSION, OPT_K, OPT_INDICES, OPT_FROM_BARCODES, OPT_TYPE, OPT_LEVELS, OPT_Q, OPT_CLIP
};

typedef struct {
  const char* long_name; /* without "--" */
  char short_name;       /* 0: none */
  int takes_value;
  int id;
} option_spec;

static const option_spec OPTIONS[] = {
    {"p", 'p', 1, OPT_P},
    {"dtype", 0, 1, OPT_DTYPE},
    {"backend", 0, 1, OPT_BACKEND},
    {"threads", 0, 1, OPT_THREADS},
    {"window", 0, 1, OPT_WINDOW},
    {"layout", 0, 1, OPT_LAYOUT},
    {"metric", 0, 1, OPT_METRIC},
    {"output", 'o', 1, OPT_OUTPUT},
    {"format", 0, 1, OPT_FORMAT},
    {"with-ids", 0, 0, OPT_WITH_IDS},
    {"cuda-threshold", 0, 1, OPT_CUDA_THRESHOLD},
    {"summary", 0, 0, OPT_SUMMARY},
    {"progress", 0, 0, OPT_PROGRESS},
    {"quiet", 'q', 0, OPT_QUIET},
    {"help", 'h', 0, OPT_HELP},
    {"version", 0, 0, OPT_VERSION},
    {"k", 'k', 1, OPT_K},
    {"indices", 0, 1, OPT_INDICES},
    {"from-barcodes", 0, 1, OPT_FROM_BARCODES},
    {"type", 0, 1, OPT_TYPE},
    {"levels", 0, 1, OPT_LEVELS},
    {"q", 0, 1, OPT_Q},
    {"clip", 0, 1, OPT_CLIP},
};
enum { N_OPTIONS = sizeof OPTIONS / sizeof OPTIONS[0] };

/* Sets one option. Returns EXIT_OK, EXIT_USAGE, or -1 for "done, exit 0"
 * (help and version). */
static int apply_option(cli_args* a, int id, const char* value) {
  static const char* const dtypes[] = {"float32", "float64", NULL};
  static const char* const backends[] = {"auto", "cpu", "cuda", NULL};
  static const char* const layouts[] = {"dense", "condensed", "packed", NULL};
  static const char* const metrics[] = {"distance", "kernel", NULL};
  static const char* const formats[] = {"npy", "csv", NULL};
  int k;
  switch (id) {
    case OPT_P:
      a->p_set = 1;
      return parse_p(value, &a->p);
    case OPT_DTYPE:
      if ((k = choose(value, dtypes)) < 0) {
        return usage_error("--dtype '%s' is not one of float32, float64", value);
      }
      a->dtype = k == 0 ? MPCF_FLOAT32 : MPCF_FLOAT64;
      return EXIT_OK;
    case OPT_BACKEND:
      if ((k = choose(value, backends)) < 0) {
        return usage_error("--backend '%s' is not one of auto, cpu, cuda", value);
      }
      a->backend = k == 0 ? MPCF_BACKEND_AUTO : (k == 1 ? MPCF_BACKEND_CPU : MPCF_BACKEND_CUDA);
      return EXIT_OK;
    case OPT_THREADS:
      return parse_threads(value, &a->threads);
    case OPT_WINDOW:
      a->window_set = 1;
      return parse_window(value, &a->window_a, &a->window_b);
    case OPT_LAYOUT:
      if ((k = choose(value, layouts)) < 0) {
        return usage_error("--layout '%s' is not one of dense, condensed, packed", value);
      }
      a->layout = k == 0 ? MPCF_LAYOUT_DENSE
                         : (k == 1 ? MPCF_LAYOUT_CONDENSED : MPCF_LAYOUT_PACKED_LOWER);
      a->layout_set = 1;
      return EXIT_OK;
    case OPT_METRIC:
      if ((k = choose(value, metrics)) < 0) {
        return usage_error("--metric '%s' is not one of distance, kernel", value);
      }
      a->metric_kernel = k == 1;
      a->metric_set = 1;
      return EXIT_OK;
    case OPT_OUTPUT:
      if (*value == '\0') return usage_error("-o/--output needs a path (or '-' for stdout)");
      a->output = value;
      return EXIT_OK;
    case OPT_FORMAT:
      if ((k = choose(value, formats)) < 0) {
        return usage_error("--format '%s' is not one of npy, csv", value);
      }
      a->format = k == 0 ? FORMAT_NPY : FORMAT_CSV;
      return EXIT_OK;
    case OPT_WITH_IDS: a->with_ids = 1; return EXIT_OK;
    case OPT_CUDA_THRESHOLD:
      if (!parse_double(value, &a->cuda_threshold) || isnan(a->cuda_threshold) ||
          a->cuda_threshold < 0) {
        return usage_error("--cuda-threshold '%s' is not a non-negative number of merge steps",
                           value);
      }
      return EXIT_OK;
    case OPT_K: {
      char* end = NULL;
      errno = 0;
      const unsigned long long k = strtoull(value, &end, 10);
      if (value[0] == '-' || value[0] == '\0' || *end != '\0' || errno != 0 || k == 0) {
        return usage_error("-k '%s' is not a whole number >= 1", value);
      }
      a->k = k;
      a->k_set = 1;
      return EXIT_OK;
    }
    case OPT_INDICES:
      if (*value == '\0') return usage_error("--indices needs a path");
      a->indices = value;
      return EXIT_OK;
    case OPT_FROM_BARCODES: {
      static const char* const kinds[] = {"betti",     "stable-rank", "accumulated-persistence",
                                          "landscape", "silhouette",  NULL};
      if ((k = choose(value, kinds)) < 0) {
        return usage_error(
            "--from-barcodes '%s' is not one of betti, stable-rank, accumulated-persistence, "
            "landscape, silhouette",
            value);
      }
      a->barcodes = (cli_barcodes)(CLI_BARCODES_BETTI + k);
      return EXIT_OK;
    }
    case OPT_TYPE: {
      static const char* const types[] = {"constant", "linear", NULL};
      if ((k = choose(value, types)) < 0) {
        return usage_error("--type '%s' is not one of constant, linear", value);
      }
      a->linear = k == 1;
      a->type_set = 1;
      return EXIT_OK;
    }
    case OPT_LEVELS: {
      char* end = NULL;
      errno = 0;
      const unsigned long long levels = strtoull(value, &end, 10);
      if (value[0] == '-' || value[0] == '\0' || *end != '\0' || errno != 0 || levels == 0) {
        return usage_error("--levels '%s' is not a whole number >= 1", value);
      }
      a->bspec.k = levels;
      a->levels_set = 1;
      return EXIT_OK;
    }
    case OPT_Q:
      if (!parse_double(value, &a->bspec.q) || !isfinite(a->bspec.q) || a->bspec.q < 0) {
        return usage_error("--q '%s' is not a finite number >= 0", value);
      }
      a->q_set = 1;
      return EXIT_OK;
    case OPT_CLIP:
      if (!parse_double(value, &a->bspec.clip) || isnan(a->bspec.clip)) {
        return usage_error("--clip '%s' is not a number", value);
      }
      a->clip_set = 1;
      return EXIT_OK;
    case OPT_SUMMARY: a->force_summary = 1; return EXIT_OK;
    case OPT_PROGRESS: a->force_progress = 1; return EXIT_OK;
    case OPT_QUIET: a->quiet = 1; return EXIT_OK;
    case OPT_HELP:
      fputs(HELP_TEXT, stdout);
      return -1;
    case OPT_VERSION:
      printf("mpcf %s (command-line tool, built against mpcf.h %d.%d.%d)\n%s\n",
             mpcf_version_string(), MPCF_VERSION_MAJOR, MPCF_VERSION_MINOR, MPCF_VERSION_PATCH,
             mpcf_build_info());
      return -1;
    default:
      return usage_error("internal: unknown option id %d", id);
  }
}

/* Parses argv. Returns EXIT_OK, EXIT_USAGE, or -1 (help/version printed). */
static int parse_args(int argc, char** argv, cli_args* a) {
  memset(a, 0, sizeof *a);
  a->cmd = CMD_PDIST;
  a->cmd_name = "pdist";
  a->p = 1.0;
  a->dtype = MPCF_FLOAT64;
  a->backend = MPCF_BACKEND_AUTO;
  a->window_a = -INFINITY;
  a->window_b = INFINITY;
  a->cuda_threshold = DEFAULT_CUDA_THRESHOLD;
  a->bspec.q = 1.0;
  a->bspec.clip = INFINITY;

  int first = 1;
  if (argc > 1 && argv[1][0] != '-') {
    static const char* const commands[] = {"pdist", "cdist", "kernel", "norm", "knn", "help", NULL};
    static const command codes[] = {CMD_PDIST, CMD_CDIST, CMD_KERNEL, CMD_NORM, CMD_KNN};
    const int k = choose(argv[1], commands);
    if (k < 0) {
      return usage_error("unknown command '%s'; the commands are pdist, cdist, kernel, norm, knn",
                         argv[1]);
    }
    if (k == 5) {
      fputs(HELP_TEXT, stdout);
      return -1;
    }
    a->cmd = codes[k];
    a->cmd_name = commands[k];
    first = 2;
  }

  int only_files = 0;
  for (int i = first; i < argc; ++i) {
    const char* arg = argv[i];
    if (only_files || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (a->nfiles == 2) {
        return usage_error("too many input files ('%s'); %s takes %s", arg, a->cmd_name,
                           a->cmd == CMD_CDIST ? "two: FILE_X FILE_Y"
                                               : (a->cmd == CMD_KNN ? "at most two: FILE FILE_Y"
                                                                    : "at most one"));
      }
      a->files[a->nfiles++] = arg;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_files = 1;
      continue;
    }
    const option_spec* spec = NULL;
    const char* value = NULL;
    char name[64];
    if (arg[1] == '-') {
      const char* eq = strchr(arg + 2, '=');
      const size_t len = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
      for (size_t k = 0; k < N_OPTIONS && len < sizeof name; ++k) {
        if (strlen(OPTIONS[k].long_name) == len && strncmp(OPTIONS[k].long_name, arg + 2, len) == 0) {
          spec = &OPTIONS[k];
        }
      }
      if (spec == NULL) return usage_error("unknown option '%s'", arg);
      snprintf(name, sizeof name, "--%s", spec->long_name);
      if (eq != NULL) {
        if (!spec->takes_value) return usage_error("option %s takes no value", name);
        value = eq + 1;
      }
    } else {
      for (size_t k = 0; k < N_OPTIONS; ++k) {
        if (OPTIONS[k].short_name != 0 && OPTIONS[k].short_name == arg[1]) spec = &OPTIONS[k];
      }
      if (spec == NULL) return usage_error("unknown option '%s'", arg);
      snprintf(name, sizeof name, "-%c", spec->short_name);
      if (arg[2] != '\0') {
        if (!spec->takes_value) return usage_error("unknown option '%s'", arg);
        value = arg + 2;
      }
    }
    if (spec->takes_value && value == NULL) {
      if (i + 1 >= argc) return usage_error("option %s needs a value", name);
      value = argv[++i];
    }
    const int r = apply_option(a, spec->id, value);
    if (r != EXIT_OK) return r;
  }
  return EXIT_OK;
}

static out_format output_format(const cli_args* a) {
  if (a->format != FORMAT_AUTO) return a->format;
  if (strcmp(a->output, "-") == 0) return FORMAT_CSV;
  const size_t len = strlen(a->output);
  if (len >= 4) {
    const char* ext = a->output + len - 4;
    if (ext[0] == '.' && (ext[1] == 'n' || ext[1] == 'N') && (ext[2] == 'p' || ext[2] == 'P') &&
        (ext[3] == 'y' || ext[3] == 'Y')) {
      return FORMAT_NPY;
    }
  }
  return FORMAT_CSV;
}

/* Checks that the options fit the command; fills in the default layout. */
static int check_args(cli_args* a) {
  if (a->cmd == CMD_CDIST) {
    if (a->nfiles != 2) {
      return usage_error("cdist needs two input files, FILE_X and FILE_Y (got %zu)", a->nfiles);
    }
    if (strcmp(a->files[0], "-") == 0 && strcmp(a->files[1], "-") == 0) {
      return usage_error("cdist: only one of FILE_X and FILE_Y can be '-' (standard input)");
    }
  } else if (a->cmd == CMD_KNN) {
    if (a->nfiles == 2 && strcmp(a->files[0], "-") == 0 && strcmp(a->files[1], "-") == 0) {
      return usage_error("knn: only one of FILE and FILE_Y can be '-' (standard input)");
    }
  } else if (a->nfiles > 1) {
    return usage_error("%s takes at most one input FILE (got %zu)", a->cmd_name, a->nfiles);
  }
  const int landscape = a->barcodes == CLI_BARCODES_LANDSCAPE;
  const int silhouette = a->barcodes == CLI_BARCODES_SILHOUETTE;
  if (landscape && !a->levels_set && a->cmd != CMD_KNN && a->k_set) {
    a->bspec.k = a->k; /* -k K / --k K: the number of landscapes */
    a->levels_set = 1;
    a->k_set = 0;
  }
  if (landscape && !a->levels_set) {
    return usage_error("--from-barcodes landscape needs --levels K (or -k K outside knn), the "
                       "number of landscapes per barcode");
  }
  if (!landscape && a->levels_set) {
    return usage_error("--levels applies to --from-barcodes landscape only");
  }
  if (!silhouette && a->q_set) return usage_error("--q applies to --from-barcodes silhouette only");
  if (!landscape && !silhouette && a->clip_set) {
    return usage_error("--clip applies to --from-barcodes landscape and silhouette only");
  }
  if (a->type_set && a->barcodes != CLI_BARCODES_NONE) {
    return usage_error("--type applies to CSV files of functions; barcodes give %s",
                       landscape || silhouette ? "piecewise linear functions"
                                               : "piecewise constant functions");
  }
  a->bspec.kind = a->barcodes;
  if (a->cmd == CMD_KNN && !a->k_set) {
    return usage_error("knn needs -k K, the number of neighbours");
  }
  if (a->cmd != CMD_KNN && (a->k_set || a->indices != NULL)) {
    return usage_error("%s applies to knn only", a->k_set ? "-k" : "--indices");
  }
  if (a->metric_set && a->cmd != CMD_CDIST) {
    return usage_error("--metric applies to cdist only");
  }
  const int kernel = a->cmd == CMD_KERNEL || (a->cmd == CMD_CDIST && a->metric_kernel);
  if (kernel && a->p_set) {
    return usage_error("-p has no meaning for %s, which computes L2 inner products",
                       a->cmd == CMD_KERNEL ? "kernel" : "cdist --metric kernel");
  }
  if (a->layout_set && (a->cmd == CMD_CDIST || a->cmd == CMD_NORM || a->cmd == CMD_KNN)) {
    return usage_error("--layout applies to pdist and kernel only; %s results have one layout",
                       a->cmd_name);
  }
  if (a->cmd == CMD_KERNEL && a->layout_set && a->layout == MPCF_LAYOUT_CONDENSED) {
    return usage_error(
        "--layout condensed is not available for kernel (a kernel matrix has a diagonal); use "
        "dense or packed");
  }
  if (!a->layout_set) a->layout = a->cmd == CMD_KERNEL ? MPCF_LAYOUT_DENSE : MPCF_LAYOUT_CONDENSED;
  if (a->format != FORMAT_AUTO && a->output == NULL) {
    return usage_error("--format needs an output path (-o PATH)");
  }
  if (a->with_ids && (a->output == NULL || output_format(a) != FORMAT_CSV)) {
    return usage_error("--with-ids needs CSV output (-o FILE.csv or -o -)");
  }
  if (a->indices != NULL && a->output != NULL && strcmp(a->indices, a->output) == 0) {
    return usage_error("--indices and -o name the same file '%s'", a->output);
  }
  if (a->indices != NULL && (a->output == NULL || output_format(a) != FORMAT_NPY)) {
    return usage_error("--indices goes with .npy output (-o FILE.npy); CSV output holds the "
                       "indices in its rows");
  }
  if (a->quiet && (a->force_progress || a->force_summary)) {
    return usage_error("--quiet cannot be combined with %s",
                       a->force_progress ? "--progress" : "--summary");
  }
  return EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* Output file: written to a temporary file next to the target and       */
/* renamed into place, so a failed run never leaves a partial result.   */
/* ------------------------------------------------------------------ */

typedef struct {
  const char* path;
  char* temp_path; /* NULL when writing in place (stdout, devices, pipes) */
  FILE* file;
  int is_stdout;
  int slot; /* its entry of g_temp_paths, -1: none */
} output_file;

static void forget_temp(output_file* o) {
  if (o->slot >= 0) g_temp_paths[o->slot] = NULL;
  o->slot = -1;
}

static int output_open(output_file* o, const char* path) {
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
  o->slot = g_temp_paths[0] == NULL ? 0 : 1;
  g_temp_paths[o->slot] = o->temp_path;
  return EXIT_OK;
}

/* Drops a half-written output. Safe to call twice or on an unopened one. */
static void output_abort(output_file* o) {
  if (o->file != NULL && !o->is_stdout) fclose(o->file);
  o->file = NULL;
  if (o->temp_path != NULL) {
    remove(o->temp_path);
    forget_temp(o);
    free(o->temp_path);
    o->temp_path = NULL;
  }
}

static int output_commit(output_file* o) {
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

/* ------------------------------------------------------------------ */
/* Result: what was computed and how it is laid out                      */
/* ------------------------------------------------------------------ */

typedef struct {
  void* data;
  uint64_t count;
  mpcf_dtype dtype;
  uint64_t shape[2];
  size_t ndim;
  int64_t* indices; /* knn: count neighbour indices */
} result;

static double result_at(const result* r, uint64_t k) {
  return r->dtype == MPCF_FLOAT32 ? (double)((const float*)r->data)[k]
                                  : ((const double*)r->data)[k];
}

/* Writes one CSV field, quoted when it holds a comma, a quote, or blanks at
 * either end (which the reader would strip). */
static void csv_put_text(FILE* f, const char* s) {
  const size_t len = strlen(s);
  const int quote = len == 0 || strpbrk(s, ",\"\r\n") != NULL || s[0] == ' ' || s[0] == '\t' ||
                    s[len - 1] == ' ' || s[len - 1] == '\t' || s[0] == '#';
  if (!quote) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (const char* c = s; *c; ++c) {
    if (*c == '"') fputc('"', f);
    fputc(*c, f);
  }
  fputc('"', f);
}

static void csv_put_number(FILE* f, double x, mpcf_dtype dtype) {
  /* 9 and 17 significant digits read back to the same float and double. */
  fprintf(f, "%.*g", dtype == MPCF_FLOAT32 ? 9 : 17, x);
}

/* A matrix, row by row; with ids, a header row of column ids and the row id
 * in front of every row. */
static void csv_put_matrix(FILE* f, const result* r, uint64_t rows, uint64_t cols,
                           char* const* row_ids, char* const* col_ids) {
  if (row_ids != NULL) {
    fputs("id", f);
    for (uint64_t j = 0; j < cols; ++j) {
      fputc(',', f);
      csv_put_text(f, col_ids[j]);
    }
    fputc('\n', f);
  }
  for (uint64_t i = 0; i < rows; ++i) {
    if (row_ids != NULL) {
      csv_put_text(f, row_ids[i]);
      fputc(',', f);
    }
    for (uint64_t j = 0; j < cols; ++j) {
      if (j > 0) fputc(',', f);
      csv_put_number(f, result_at(r, i * cols + j), r->dtype);
    }
    fputc('\n', f);
  }
}

static void csv_put_pair(FILE* f, const result* r, uint64_t k, char* const* ids, uint64_t i,
                         uint64_t j) {
  csv_put_text(f, ids[i]);
  fputc(',', f);
  csv_put_text(f, ids[j]);
  fputc(',', f);
  csv_put_number(f, result_at(r, k), r->dtype);
  fputc('\n', f);
}

static void write_csv(FILE* f, const cli_args* a, const result* r, const csv_pcfs* x,
                      const csv_pcfs* y) {
  char* const* ids = a->with_ids ? x->ids : NULL;
  if (a->cmd == CMD_KNN) {
    /* One row per neighbour: i, j (0-based indices, or ids), distance. */
    char* const* neighbour_ids = a->nfiles == 2 ? y->ids : x->ids;
    fputs(ids ? "id,neighbour_id,distance\n" : "i,j,distance\n", f);
    for (uint64_t e = 0; e < r->count; ++e) {
      const uint64_t i = e / a->k;
      const uint64_t j = (uint64_t)r->indices[e];
      if (ids) {
        csv_put_text(f, ids[i]);
        fputc(',', f);
        csv_put_text(f, neighbour_ids[j]);
      } else {
        fprintf(f, "%" PRIu64 ",%" PRIu64, i, j);
      }
      fputc(',', f);
      csv_put_number(f, result_at(r, e), r->dtype);
      fputc('\n', f);
    }
    return;
  }
  if (a->cmd == CMD_CDIST) {
    csv_put_matrix(f, r, x->n, y->n, ids, a->with_ids ? y->ids : NULL);
    return;
  }
  if ((a->cmd == CMD_PDIST || a->cmd == CMD_KERNEL) && a->layout == MPCF_LAYOUT_DENSE) {
    csv_put_matrix(f, r, x->n, x->n, ids, ids);
    return;
  }
  if (ids == NULL) {
    for (uint64_t k = 0; k < r->count; ++k) {
      csv_put_number(f, result_at(r, k), r->dtype);
      fputc('\n', f);
    }
    return;
  }
  if (a->cmd == CMD_NORM) {
    fputs("id,norm\n", f);
    for (uint64_t i = 0; i < x->n; ++i) {
      csv_put_text(f, ids[i]);
      fputc(',', f);
      csv_put_number(f, result_at(r, i), r->dtype);
      fputc('\n', f);
    }
    return;
  }
  fprintf(f, "id_1,id_2,%s\n", a->cmd == CMD_KERNEL ? "kernel" : "distance");
  uint64_t k = 0;
  if (a->layout == MPCF_LAYOUT_CONDENSED) {
    for (uint64_t i = 0; i < x->n; ++i) {
      for (uint64_t j = i + 1; j < x->n; ++j) csv_put_pair(f, r, k++, ids, i, j);
    }
  } else { /* packed lower triangle, row by row */
    const int diagonal = a->cmd == CMD_KERNEL;
    for (uint64_t i = 0; i < x->n; ++i) {
      for (uint64_t j = 0; j < i + (diagonal ? 1 : 0); ++j) csv_put_pair(f, r, k++, ids, i, j);
    }
  }
}

/* ------------------------------------------------------------------ */
/* Running a task with a progress bar and Ctrl-C                         */
/* ------------------------------------------------------------------ */

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void draw_progress(const char* label, uint64_t done, uint64_t total, double elapsed,
                          int finished) {
  enum { WIDTH = 30 };
  if (total == 0 && !finished) {
    /* The task has not sized its work yet (e.g. while CUDA starts up). */
    fprintf(stderr, "\r%s [%*s] starting  %.1f s%-40s", label, WIDTH, "", elapsed, "");
    fflush(stderr);
    return;
  }
  double frac = total > 0 ? (double)done / (double)total : 1.0;
  if (frac > 1.0) frac = 1.0;
  const int filled = (int)(frac * WIDTH);
  char bar[WIDTH + 1];
  for (int k = 0; k < WIDTH; ++k) bar[k] = k < filled ? '#' : '-';
  bar[WIDTH] = '\0';
  char eta[48] = "";
  if (!finished && frac > 0.0 && frac < 1.0) {
    snprintf(eta, sizeof eta, ", about %.1f s left", elapsed * (1.0 - frac) / frac);
  }
  /* Padded so a shorter line fully covers a longer one. */
  fprintf(stderr, "\r%s [%s] %5.1f%%  %" PRIu64 "/%" PRIu64 " entries  %.1f s%-24s", label, bar,
          100.0 * frac, done, total, elapsed, eta);
  fflush(stderr);
}

/* Waits for the task, drawing progress; Ctrl-C cancels it. */
static mpcf_status wait_for_task(mpcf_task* task, int show_progress, const char* label) {
  const double start = now_seconds();
  mpcf_status s;
  uint64_t done = 0;
  uint64_t total = 0;
  for (;;) {
    s = mpcf_task_wait(task, 0.1);
    if (s != MPCF_RUNNING) break;
    if (g_signal != 0) {
      mpcf_task_cancel(task);
      s = mpcf_task_wait(task, -1.0);
      break;
    }
    if (show_progress && mpcf_task_progress(task, &done, &total) == MPCF_OK) {
      draw_progress(label, done, total, now_seconds() - start, 0);
    }
  }
  if (show_progress) {
    if (s == MPCF_OK && mpcf_task_progress(task, &done, &total) == MPCF_OK) {
      draw_progress(label, done, total, now_seconds() - start, 1);
    }
    fputc('\n', stderr);
  }
  return s;
}

/* ------------------------------------------------------------------ */
/* Summary                                                              */
/* ------------------------------------------------------------------ */

/* FNV-1a (64 bit) of the result's bytes as written to .npy (little-endian). */
static uint64_t result_hash(const result* r) {
  const size_t elem = r->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  uint64_t h = 0xcbf29ce484222325ull;
  unsigned char chunk[4096];
  const size_t per_chunk = sizeof chunk / elem;
  const unsigned char* src = r->data;
  for (uint64_t done = 0; done < r->count;) {
    const size_t k = (size_t)(r->count - done < per_chunk ? r->count - done : per_chunk);
    npy_copy_little_endian(chunk, src + done * elem, k, elem);
    for (size_t b = 0; b < k * elem; ++b) {
      h ^= chunk[b];
      h *= 0x100000001b3ull;
    }
    done += k;
  }
  return h;
}

static void describe_exponent(char* buf, size_t size, double p) {
  if (isinf(p)) {
    snprintf(buf, size, "L-infinity");
  } else if (p == 1.0) {
    snprintf(buf, size, "L1");
  } else if (p == 2.0) {
    snprintf(buf, size, "L2");
  } else {
    snprintf(buf, size, "Lp (p = %g)", p);
  }
}

static int hardware_threads(void) {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

typedef struct {
  const char* input_names[2];
  int example;
  const csv_pcfs* x;
  const csv_pcfs* y;
  double read_seconds, compute_seconds;
  double merge_steps;
} run_info;

static void print_summary(FILE* f, const cli_args* a, const result* r, const run_info* info) {
  const char* dtype = a->dtype == MPCF_FLOAT32 ? "float32" : "float64";
  if (info->example) {
    fprintf(f, "mpcf %s on the example dataset (give a FILE to use your own data)\n", a->cmd_name);
  } else {
    fprintf(f, "mpcf %s\n", a->cmd_name);
  }
  const csv_pcfs* sets[2] = {info->x, info->y};
  const int nsets = a->cmd == CMD_CDIST || (a->cmd == CMD_KNN && a->nfiles == 2) ? 2 : 1;
  for (int s = 0; s < nsets; ++s) {
    const csv_pcfs* c = sets[s];
    const char* label = nsets == 1 ? "input" : (s == 0 ? "input X" : "input Y");
    fprintf(f, "  %-12s %s\n", label, info->input_names[s]);
    fprintf(f, "  %-12s n = %" PRIu64 " functions, %" PRIu64
               " breakpoints (min %" PRIu64 ", mean %.1f, max %" PRIu64 " per function)\n",
            "", c->n, c->total, c->min_m, (double)c->total / (double)c->n, c->max_m);
  }

  char what[96];
  char exponent[32];
  describe_exponent(exponent, sizeof exponent, a->p);
  const int kernel = a->cmd == CMD_KERNEL || (a->cmd == CMD_CDIST && a->metric_kernel);
  if (kernel) {
    snprintf(what, sizeof what, "L2 inner products");
  } else if (a->cmd == CMD_NORM) {
    snprintf(what, sizeof what, "%s norms", exponent);
  } else if (a->cmd == CMD_KNN) {
    snprintf(what, sizeof what, "%" PRIu64 " nearest neighbours (%s distance)", a->k, exponent);
  } else {
    snprintf(what, sizeof what, "%s distances", exponent);
  }
  char window[96];
  if (a->window_set) {
    snprintf(window, sizeof window, "window [%g, %g)", a->window_a, a->window_b);
  } else {
    snprintf(window, sizeof window, "whole real line");
  }
  fprintf(f, "  %-12s %s, %s, %s\n", "computed", what, window, dtype);

  const char* layout = "";
  if (a->cmd == CMD_PDIST || a->cmd == CMD_KERNEL) {
    layout = a->layout == MPCF_LAYOUT_DENSE
                 ? ", dense n x n"
                 : (a->layout == MPCF_LAYOUT_CONDENSED ? ", condensed (SciPy pdist order)"
                                                       : ", packed lower triangle");
  }
  char shape[64];
  if (r->ndim == 2) {
    snprintf(shape, sizeof shape, "(%" PRIu64 ", %" PRIu64 ")", r->shape[0], r->shape[1]);
  } else {
    snprintf(shape, sizeof shape, "(%" PRIu64 ",)", r->shape[0]);
  }
  fprintf(f, "  %-12s %" PRIu64 " values, shape %s%s\n", "result", r->count, shape, layout);

  char backend[160];
  const int devices = mpcf_cuda_device_count();
  const int threads = a->threads > 0 ? a->threads : hardware_threads();
  const int cuda = a->cmd != CMD_NORM &&
                   (a->backend == MPCF_BACKEND_CUDA ||
                    (a->backend == MPCF_BACKEND_AUTO && mpcf_has_cuda() && devices > 0 &&
                     info->merge_steps >= a->cuda_threshold));
  if (a->cmd == CMD_NORM) {
    snprintf(backend, sizeof backend, "cpu, the calling thread (norms are not parallelised)");
  } else if (cuda) {
    snprintf(backend, sizeof backend, "cuda, %d device%s", devices, devices == 1 ? "" : "s");
  } else {
    const char* why = "";
    if (a->backend == MPCF_BACKEND_AUTO) {
      why = !mpcf_has_cuda() ? " (auto: libmpcf was built without CUDA)"
                             : (devices == 0 ? " (auto: no CUDA device)"
                                             : " (auto: below the CUDA threshold)");
    }
    snprintf(backend, sizeof backend, "cpu, %d thread%s%s", threads, threads == 1 ? "" : "s", why);
  }
  fprintf(f, "  %-12s %s\n", "backend", backend);
  fprintf(f, "  %-12s read %.3f s, compute %.3f s\n", "time", info->read_seconds,
          info->compute_seconds);
  if (info->compute_seconds > 0.0) {
    fprintf(f, "  %-12s %.0f (%.3g merge steps/s)\n", "merge steps", info->merge_steps,
            info->merge_steps / info->compute_seconds);
  } else {
    fprintf(f, "  %-12s %.0f\n", "merge steps", info->merge_steps);
  }
  double sum = 0.0;
  for (uint64_t k = 0; k < r->count; ++k) sum += result_at(r, k);
  fprintf(f, "  %-12s sum = %.17g, fnv1a64 = %016" PRIx64 "\n", "checksum", sum, result_hash(r));
  if (a->output == NULL) {
    fprintf(f, "  %-12s none (write the result with -o FILE.npy or -o FILE.csv)\n", "output");
  } else {
    fprintf(f, "  %-12s %s\n", "output", strcmp(a->output, "-") == 0 ? "<stdout>" : a->output);
  }
}

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

/* Hands the points to libmpcf, which keeps its own copy; ours is freed at
 * once so that large inputs are not held twice. PLFs are created as such;
 * objects of K > 1 functions (landscapes) get the shape (n, K) and the
 * component axis, so every computation runs over the objects. */
static int make_collection(csv_pcfs* c, const char* name, mpcf_pcfs** out) {
  const uint64_t per = c->components > 1 ? c->components : 1;
  mpcf_status s = (c->linear ? mpcf_plfs_create : mpcf_pcfs_create)(
      c->dtype, c->n * per, c->offsets, c->times, c->values, out);
  free(c->times);
  free(c->values);
  c->times = NULL;
  c->values = NULL;
  if (s == MPCF_OK && per > 1) {
    const uint64_t shape[2] = {c->n, per};
    s = mpcf_pcfs_reshape(*out, 2, shape);
    if (s == MPCF_OK) s = mpcf_pcfs_set_component_axis(*out, 1);
  }
  if (s != MPCF_OK) return library_error(s, name);
  return EXIT_OK;
}

static int make_options(const cli_args* a, mpcf_options** out) {
  mpcf_status s = mpcf_options_create(out);
  if (s == MPCF_OK) s = mpcf_options_set_backend(*out, a->backend);
  if (s == MPCF_OK) s = mpcf_options_set_threads(*out, a->threads);
  if (s == MPCF_OK) s = mpcf_options_set_cuda_threshold(*out, a->cuda_threshold);
  if (s == MPCF_OK && a->window_set) s = mpcf_options_set_window(*out, a->window_a, a->window_b);
  if (s != MPCF_OK) return library_error(s, "options");
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
                  (double)bytes / 1e9, r->count, a->dtype == MPCF_FLOAT32 ? "float32" : "float64");
    return EXIT_RUNTIME;
  }
  return EXIT_OK;
}

static double merge_steps(const cli_args* a, const csv_pcfs* x, const csv_pcfs* y) {
  const double n = (double)x->n;
  const double total = (double)x->total;
  switch (a->cmd) {
    case CMD_PDIST: return (n - 1.0) * total;
    case CMD_KERNEL: return (n + 1.0) * total;
    case CMD_CDIST: return (double)y->n * total + n * (double)y->total;
    case CMD_NORM: return total + n;
    case CMD_KNN:
      return a->nfiles == 2 ? (double)y->n * total + n * (double)y->total : (n - 1.0) * total;
  }
  return 0.0;
}

static int compute(const cli_args* a, const mpcf_pcfs* X, const mpcf_pcfs* Y,
                   const mpcf_options* options, result* r, int show_progress) {
  if (a->cmd == CMD_NORM) {
    const mpcf_status s = mpcf_lp_norm(X, a->p, r->data, r->count, options);
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
    case CMD_KNN: {
      uint64_t nx = 0, ny = 0, kx = 1, ky = 1;
      mpcf_pcfs_count(X, &nx);
      mpcf_pcfs_components(X, &kx);
      if (Y) mpcf_pcfs_count(Y, &ny);
      if (Y) mpcf_pcfs_components(Y, &ky);
      nx /= kx; /* objects */
      ny /= ky;
      const uint64_t candidates = Y ? ny : (nx > 0 ? nx - 1 : 0);
      if (a->k > candidates) {
        return usage_error("-k %" PRIu64 " is more than the %" PRIu64 " %s", a->k, candidates,
                           Y ? "functions of FILE_Y" : "other functions of FILE");
      }
      s = mpcf_knn_start(X, Y, a->p, a->k, r->data, r->indices, r->count, options, &task);
      break;
    }
    case CMD_NORM: break;
  }
  if (s != MPCF_OK) return library_error(s, a->cmd_name);
  g_defer_signals = 1;
  if (g_signal != 0) mpcf_task_cancel(task); /* arrived just before */
  s = wait_for_task(task, show_progress, a->cmd_name);
  int code = EXIT_OK;
  if (g_signal != 0) {
    error_message("interrupted by %s; the computation was cancelled and nothing was written",
                  g_signal == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM");
    code = 128 + g_signal;
  } else if (s != MPCF_OK) {
    code = library_error(s, a->cmd_name);
  }
  mpcf_task_destroy(task);
  if (code == EXIT_OK) {
    g_defer_signals = 0;
    if (g_signal != 0) { /* arrived just now: still honour it */
      g_defer_signals = 1;
      error_message("interrupted by %s; nothing was written",
                    g_signal == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM");
      code = 128 + g_signal;
    }
  }
  return code;
}

static int run(const cli_args* a) {
  int code = EXIT_OK;
  csv_pcfs x;
  csv_pcfs y;
  memset(&x, 0, sizeof x);
  memset(&y, 0, sizeof y);
  mpcf_pcfs* X = NULL;
  mpcf_pcfs* Y = NULL;
  mpcf_options* options = NULL;
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
  install_signal_handlers();
  output_file index_out;
  memset(&index_out, 0, sizeof index_out);
  if (a->output != NULL && (code = output_open(&out, a->output)) != EXIT_OK) return code;
  if (a->indices != NULL && (code = output_open(&index_out, a->indices)) != EXIT_OK) {
    output_abort(&out);
    return code;
  }

  const double t0 = now_seconds();
  code = read_input(inputs[0], a, &x, &info.input_names[0]);
  const int two_inputs = a->cmd == CMD_CDIST || (a->cmd == CMD_KNN && a->nfiles == 2);
  if (code == EXIT_OK && two_inputs) {
    code = read_input(inputs[1], a, &y, &info.input_names[1]);
  }
  info.read_seconds = now_seconds() - t0;
  if (code == EXIT_OK) code = make_collection(&x, info.input_names[0], &X);
  if (code == EXIT_OK && two_inputs) code = make_collection(&y, info.input_names[1], &Y);
  if (code == EXIT_OK) code = make_options(a, &options);
  if (code == EXIT_OK) code = allocate_result(a, X, Y, &x, &y, &r);
  if (code == EXIT_OK) {
    const int show_progress =
        !a->quiet && (a->force_progress || isatty(fileno(stderr))) && a->cmd != CMD_NORM;
    info.merge_steps = merge_steps(a, &x, &y);
    const double t1 = now_seconds();
    code = compute(a, X, Y, options, &r, show_progress);
    info.compute_seconds = now_seconds() - t1;
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
  mpcf_options_destroy(options);
  mpcf_pcfs_destroy(X);
  mpcf_pcfs_destroy(Y);
  csv_pcfs_free(&x);
  csv_pcfs_free(&y);
  return code;
}

int main(int argc, char** argv) {
  cli_args args;
  int code = parse_args(argc, argv, &args);
  if (code == -1) return fflush(stdout) == 0 ? EXIT_OK : EXIT_DATA;
  if (code != EXIT_OK) return code;
  code = check_args(&args);
  if (code != EXIT_OK) return code;
  code = run(&args);
  if (fflush(stdout) != 0 && code == EXIT_OK) {
    error_message("cannot write to standard output: %s", strerror(errno));
    code = EXIT_DATA;
  }
  return code;
}
