/* The command line of the mpcf tool: its options, their parsing, and the
 * checks of which options go with which command (cli.h). The values
 * libmpcf takes (p, the window, threads, backend, the CUDA threshold, the
 * landscapes' K, the silhouettes' Q, the clip) are judged by libmpcf
 * itself: set on the options as they are parsed, or checked with
 * mpcf_exponent_check and check_barcode_settings, so the tool repeats none
 * of its rules. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
    "  --cuda-threshold S      backend auto uses CUDA from S merge steps (default: libmpcf's)\n"
    "  --summary               print the summary even when writing a result\n"
    "  --progress              show the progress bar even when stderr is no terminal\n"
    "  -q, --quiet             no progress bar and no summary\n"
    "  -h, --help              show this help;  --version  show versions and build\n"
    "\n"
    "Exit codes: 0 success, 1 bad input/output file, 2 bad command line,\n"
    "3 libmpcf failure (memory, CUDA, ...), 130 Ctrl-C (SIGINT), 143 SIGTERM.\n"
    "See capi/cli/README.md for the file formats and every error message.\n";

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

/* The landscapes' K (k >= 1), the silhouettes' Q (finite, >= 0) and the
 * clip (not NaN or -inf, within the dtype), as libmpcf judges them: a
 * conversion of no barcodes, which checks them and has no bar to check, so
 * a bad value is a command-line error before any file is read. */
static int check_barcode_settings(const cli_barcode_spec* spec, mpcf_dtype dtype) {
  const uint64_t offsets[1] = {0};
  const double no_bars[2] = {0.0, 0.0};
  mpcf_pcfs* none = NULL;
  const int landscape = spec->kind == CLI_BARCODES_LANDSCAPE;
  const mpcf_status s =
      landscape ? mpcf_plfs_landscapes(dtype, 0, offsets, no_bars, spec->k, spec->clip, &none)
                : mpcf_plfs_silhouettes(dtype, 0, offsets, no_bars, spec->q, spec->clip, &none);
  mpcf_pcfs_destroy(none);
  if (s == MPCF_OK) return EXIT_OK;
  return usage_error("--from-barcodes %s: %s", landscape ? "landscape" : "silhouette",
                     library_reason());
}

/* -p: a number here; libmpcf judges it (p >= 1 or inf). */
static int parse_p(const char* s, double* out) {
  double p;
  if (!parse_double(s, &p)) {
    return usage_error("-p '%s' is not a number; p must be a number >= 1 or 'inf'", s);
  }
  if (mpcf_exponent_check(p) != MPCF_OK) return usage_error("-p %s: %s", s, library_reason());
  *out = p;
  return EXIT_OK;
}

/* --window A:B: two numbers here (empty or inf for the unbounded ends);
 * libmpcf judges the window (a < b, neither NaN). */
static int parse_window(const char* s, mpcf_options* options, double* a, double* b) {
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
  if (left_len > 0 && !parse_double(left, &lo)) {
    return usage_error("--window '%s': A = '%s' is not a number", s, left);
  }
  if (*right != '\0' && !parse_double(right, &hi)) {
    return usage_error("--window '%s': B = '%s' is not a number", s, right);
  }
  if (mpcf_options_set_window(options, lo, hi) != MPCF_OK) {
    return usage_error("--window '%s': %s", s, library_reason());
  }
  *a = lo;
  *b = hi;
  return EXIT_OK;
}

/* --threads N: a whole number that fits an int here; libmpcf judges it. */
static int parse_threads(const char* s, mpcf_options* options) {
  char* stop = NULL;
  errno = 0;
  const long n = strtol(s, &stop, 10);
  if (*s == '\0' || *stop != '\0' || errno == ERANGE || n < INT_MIN || n > INT_MAX) {
    return usage_error("--threads '%s' is not a whole number (0 = all hardware threads)", s);
  }
  if (mpcf_options_set_threads(options, (int)n) != MPCF_OK) {
    return usage_error("--threads %s: %s", s, library_reason());
  }
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
      if (mpcf_options_set_backend(a->options, k == 0   ? MPCF_BACKEND_AUTO
                                               : k == 1 ? MPCF_BACKEND_CPU
                                                        : MPCF_BACKEND_CUDA) != MPCF_OK) {
        return library_error(MPCF_ERROR_INTERNAL, "--backend");
      }
      return EXIT_OK;
    case OPT_THREADS:
      return parse_threads(value, a->options);
    case OPT_WINDOW:
      a->window_set = 1;
      return parse_window(value, a->options, &a->window_a, &a->window_b);
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
    case OPT_CUDA_THRESHOLD: {
      double steps;
      if (!parse_double(value, &steps)) {
        return usage_error("--cuda-threshold '%s' is not a number of merge steps", value);
      }
      if (mpcf_options_set_cuda_threshold(a->options, steps) != MPCF_OK) {
        return usage_error("--cuda-threshold %s: %s", value, library_reason());
      }
      return EXIT_OK;
    }
    case OPT_K: {
      /* A whole number here; libmpcf judges it (1 <= k <= the candidates)
         once the inputs are read. */
      char* end = NULL;
      errno = 0;
      const unsigned long long k = strtoull(value, &end, 10);
      if (value[0] == '-' || value[0] == '\0' || *end != '\0' || errno != 0) {
        return usage_error("-k '%s' is not a whole number", value);
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
      if (value[0] == '-' || value[0] == '\0' || *end != '\0' || errno != 0) {
        return usage_error("--levels '%s' is not a whole number", value);
      }
      a->bspec.k = levels;
      a->levels_set = 1;
      return EXIT_OK;
    }
    case OPT_Q:
      if (!parse_double(value, &a->bspec.q)) return usage_error("--q '%s' is not a number", value);
      a->q_set = 1;
      return EXIT_OK;
    case OPT_CLIP:
      if (!parse_double(value, &a->bspec.clip)) return usage_error("--clip '%s' is not a number", value);
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

int parse_args(int argc, char** argv, cli_args* a) {
  memset(a, 0, sizeof *a);
  a->cmd = CMD_PDIST;
  a->cmd_name = "pdist";
  a->p = 1.0;
  a->dtype = MPCF_FLOAT64;
  a->window_a = -INFINITY;
  a->window_b = INFINITY;
  a->bspec.q = 1.0;
  a->bspec.clip = INFINITY;
  const mpcf_status made = mpcf_options_create(&a->options);
  if (made != MPCF_OK) return library_error(made, "options");

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

void cli_args_free(cli_args* a) {
  mpcf_options_destroy(a->options);
  a->options = NULL;
}

int two_inputs(const cli_args* a) {
  return a->cmd == CMD_CDIST || (a->cmd == CMD_KNN && a->nfiles == 2);
}

int computes_kernel(const cli_args* a) {
  return a->cmd == CMD_KERNEL || (a->cmd == CMD_CDIST && a->metric_kernel);
}

out_format output_format(const cli_args* a) {
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

int check_args(cli_args* a) {
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
  if (landscape || silhouette) {
    const int bad = check_barcode_settings(&a->bspec, a->dtype);
    if (bad != EXIT_OK) return bad;
  }
  if (a->cmd == CMD_KNN && !a->k_set) {
    return usage_error("knn needs -k K, the number of neighbours");
  }
  if (a->cmd != CMD_KNN && (a->k_set || a->indices != NULL)) {
    return usage_error("%s applies to knn only", a->k_set ? "-k" : "--indices");
  }
  if (a->metric_set && a->cmd != CMD_CDIST) {
    return usage_error("--metric applies to cdist only");
  }
  if (computes_kernel(a) && a->p_set) {
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

