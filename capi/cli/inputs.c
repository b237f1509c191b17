/* Barcode CSV files and binary PCF files as command inputs (see inputs.h). */
#include "inputs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { PCF_FILE_FIRST_BYTE = 0x89 };

static void report(char* err, size_t size, const char* fmt, ...) {
  if (err == NULL || size == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, size, fmt, ap);
  va_end(ap);
}

/* The first byte of the input, or EOF; standard input keeps it (ungetc). */
static int first_byte(const char* path, int* io_errno) {
  *io_errno = 0;
  if (strcmp(path, "-") == 0) {
    const int c = getc(stdin);
    if (c != EOF) ungetc(c, stdin);
    return c;
  }
  FILE* f = fopen(path, "rb");
  if (f == NULL) {
    *io_errno = errno;
    return EOF;
  }
  const int c = getc(f);
  fclose(f);
  return c;
}

/* Fills out->offsets, times, values (in out->dtype), min_m and max_m from a
 * collection; out->n must be set. Returns 0 when memory runs out. */
static int read_back(const mpcf_pcfs* X, csv_pcfs* out) {
  uint64_t total = 0;
  mpcf_dtype dtype;
  if (mpcf_pcfs_total_breakpoints(X, &total) != MPCF_OK || mpcf_pcfs_dtype(X, &dtype) != MPCF_OK) {
    return 0;
  }
  const size_t elem = dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  const size_t out_elem = out->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  uint64_t* offsets = malloc((size_t)(out->n + 1) * sizeof *offsets);
  void* t = malloc((size_t)(total ? total : 1) * elem);
  void* v = malloc((size_t)(total ? total : 1) * elem);
  void* t_out = dtype == out->dtype ? t : malloc((size_t)(total ? total : 1) * out_elem);
  void* v_out = dtype == out->dtype ? v : malloc((size_t)(total ? total : 1) * out_elem);
  int ok = offsets && t && v && t_out && v_out &&
           mpcf_pcfs_offsets(X, offsets, out->n + 1) == MPCF_OK &&
           mpcf_pcfs_breakpoints(X, t, v, total) == MPCF_OK;
  if (ok && dtype != out->dtype) {
    /* float32 -> float64 is exact; float64 -> float32 may merge times, which
     * mpcf_pcfs_create then reports like any invalid input. */
    for (uint64_t k = 0; k < total; ++k) {
      if (out->dtype == MPCF_FLOAT32) {
        ((float*)t_out)[k] = (float)((const double*)t)[k];
        ((float*)v_out)[k] = (float)((const double*)v)[k];
      } else {
        ((double*)t_out)[k] = ((const float*)t)[k];
        ((double*)v_out)[k] = ((const float*)v)[k];
      }
    }
  }
  if (dtype != out->dtype) {
    free(t);
    free(v);
  }
  if (!ok) {
    free(offsets);
    free(t_out);
    free(v_out);
    return 0;
  }
  out->offsets = offsets;
  out->times = t_out;
  out->values = v_out;
  out->total = total;
  out->min_m = UINT64_MAX;
  out->max_m = 0;
  for (uint64_t i = 0; i < out->n; ++i) {
    const uint64_t m = offsets[i + 1] - offsets[i];
    if (m < out->min_m) out->min_m = m;
    if (m > out->max_m) out->max_m = m;
  }
  return 1;
}

/* A PCF file, from a path or (already known to start with 0x89) stdin. */
static csv_status read_pcf_file(const char* path, const char* name, mpcf_dtype dtype,
                                csv_pcfs* out, char* err, size_t err_size) {
  mpcf_pcfs* X = NULL;
  mpcf_status s;
  if (strcmp(path, "-") == 0) {
    size_t size = 0, cap = 1 << 16;
    unsigned char* buf = malloc(cap);
    size_t got = 0;
    while (buf != NULL && (got = fread(buf + size, 1, cap - size, stdin)) > 0) {
      size += got;
      if (size == cap) {
        unsigned char* grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (grown == NULL) {
          free(buf);
          buf = NULL;
          break;
        }
        buf = grown;
        cap *= 2;
      }
    }
    if (buf == NULL) {
      report(err, err_size, "%s: out of memory while reading the file", name);
      return CSV_ERROR_NO_MEMORY;
    }
    if (ferror(stdin)) {
      report(err, err_size, "cannot read '%s': %s", name, strerror(errno));
      free(buf);
      return CSV_ERROR_IO;
    }
    s = mpcf_pcfs_deserialize(buf, size, &X);
    free(buf);
  } else {
    s = mpcf_pcfs_load(path, &X);
  }
  if (s != MPCF_OK) {
    /* libmpcf's message names the file ("mpcf_pcfs_load: file 'x' is ..."). */
    const char* msg = mpcf_last_error_message();
    const char* colon = strstr(msg, ": ");
    if (strcmp(path, "-") == 0 || colon == NULL) {
      report(err, err_size, "%s: %s", name, colon ? colon + 2 : msg);
    } else {
      report(err, err_size, "%s", colon + 2);
    }
    return s == MPCF_ERROR_OUT_OF_MEMORY ? CSV_ERROR_NO_MEMORY : CSV_ERROR_FORMAT;
  }
  memset(out, 0, sizeof *out);
  out->dtype = dtype;
  csv_status status = CSV_OK;
  if (mpcf_pcfs_count(X, &out->n) != MPCF_OK) status = CSV_ERROR_FORMAT;
  if (status == CSV_OK && out->n == 0) {
    report(err, err_size, "%s: the file holds no functions", name);
    status = CSV_ERROR_FORMAT;
  }
  if (status == CSV_OK) {
    out->ids = calloc((size_t)out->n, sizeof(char*));
    out->first_line = calloc((size_t)out->n, sizeof(uint64_t));
    int ok = out->ids != NULL && out->first_line != NULL;
    for (uint64_t i = 0; ok && i < out->n; ++i) {
      char id[24];
      snprintf(id, sizeof id, "%" PRIu64, i);
      out->ids[i] = malloc(strlen(id) + 1);
      if (out->ids[i] == NULL) {
        ok = 0;
      } else {
        strcpy(out->ids[i], id);
      }
    }
    if (!ok || !read_back(X, out)) {
      report(err, err_size, "%s: out of memory while reading the file", name);
      status = CSV_ERROR_NO_MEMORY;
    }
  }
  if (status == CSV_OK) {
    mpcf_function_type type = MPCF_PIECEWISE_CONSTANT;
    if (mpcf_pcfs_function_type(X, &type) == MPCF_OK) out->linear = type == MPCF_PIECEWISE_LINEAR;
  }
  mpcf_pcfs_destroy(X);
  if (status != CSV_OK) {
    csv_pcfs_free(out);
    out->dtype = dtype;
  }
  return status;
}

static mpcf_barcode_summary summary_of(cli_barcodes kind) {
  switch (kind) {
    case CLI_BARCODES_STABLE_RANK: return MPCF_STABLE_RANK;
    case CLI_BARCODES_ACCUMULATED_PERSISTENCE: return MPCF_ACCUMULATED_PERSISTENCE;
    case CLI_BARCODES_BETTI:
    case CLI_BARCODES_LANDSCAPE: /* made by mpcf_plfs_landscapes, never asked */
    case CLI_BARCODES_SILHOUETTE:
    case CLI_BARCODES_NONE: break;
  }
  return MPCF_BETTI_CURVE;
}

/* A barcode CSV: bars read (and checked, naming lines) by csv_read_barcodes,
 * turned into PCFs by libmpcf, read back into `out`, ids kept. */
static csv_status read_barcode_csv(const char* path, const char* name, mpcf_dtype dtype,
                                   const cli_barcode_spec* spec, csv_pcfs* out, char* err,
                                   size_t err_size) {
  const cli_barcodes kind = spec->kind;
  csv_pcfs bars;
  csv_status status = csv_read_barcodes(path, name, &bars, err, err_size);
  if (status != CSV_OK) return status;
  double* interleaved = malloc((size_t)(2 * bars.total + 1) * sizeof(double));
  if (interleaved == NULL) {
    report(err, err_size, "%s: out of memory while reading the file", name);
    csv_pcfs_free(&bars);
    return CSV_ERROR_NO_MEMORY;
  }
  for (uint64_t k = 0; k < bars.total; ++k) {
    interleaved[2 * k] = ((const double*)bars.times)[k];
    interleaved[2 * k + 1] = ((const double*)bars.values)[k];
  }
  mpcf_pcfs* X = NULL;
  mpcf_status s;
  if (kind == CLI_BARCODES_LANDSCAPE) {
    s = mpcf_plfs_landscapes(dtype, bars.n, bars.offsets, interleaved, spec->k, spec->clip, &X);
  } else if (kind == CLI_BARCODES_SILHOUETTE) {
    s = mpcf_plfs_silhouettes(dtype, bars.n, bars.offsets, interleaved, spec->q, spec->clip, &X);
  } else {
    s = mpcf_pcfs_from_barcodes(summary_of(kind), dtype, bars.n, bars.offsets, interleaved, &X);
  }
  free(interleaved);
  if (s != MPCF_OK) {
    /* libmpcf checks the bars; its detail names the barcode and the bar,
     * which give the line. */
    mpcf_error_detail d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    char where[256];
    if (mpcf_last_error_detail(&d) == MPCF_OK &&
        csv_where(&bars, name, d.barcode_index, d.bar_index, where, sizeof where)) {
      report(err, err_size, "%s: %s", where, library_reason());
    } else {
      report(err, err_size, "%s: %s", name, library_reason());
    }
    csv_pcfs_free(&bars);
    return s == MPCF_ERROR_OUT_OF_MEMORY ? CSV_ERROR_NO_MEMORY : CSV_ERROR_FORMAT;
  }
  memset(out, 0, sizeof *out);
  out->dtype = dtype;
  /* Landscapes: k functions per barcode, read back as n * k functions; the
   * collection then holds n objects of k components. */
  const uint64_t per = kind == CLI_BARCODES_LANDSCAPE ? spec->k : 1;
  out->n = bars.n * per;
  const int ok = read_back(X, out);
  out->n = bars.n;
  out->linear = kind == CLI_BARCODES_LANDSCAPE || kind == CLI_BARCODES_SILHOUETTE;
  out->components = per;
  if (!ok) {
    report(err, err_size, "%s: out of memory while reading the file", name);
    status = CSV_ERROR_NO_MEMORY;
  } else {
    /* The ids and lines move over from the barcodes. */
    out->ids = bars.ids;
    out->first_line = bars.first_line;
    bars.ids = NULL;
    bars.first_line = NULL;
    bars.n = 0;
  }
  mpcf_pcfs_destroy(X);
  csv_pcfs_free(&bars);
  if (status != CSV_OK) {
    csv_pcfs_free(out);
    out->dtype = dtype;
  }
  return status;
}

csv_status cli_read_input(const char* path, const char* display_name, mpcf_dtype dtype,
                          const cli_barcode_spec* spec, int linear, csv_pcfs* out, char* err,
                          size_t err_size) {
  const cli_barcodes barcodes = spec->kind;
  int io_errno = 0;
  const int c = first_byte(path, &io_errno);
  if (c == PCF_FILE_FIRST_BYTE) {
    if (barcodes != CLI_BARCODES_NONE) {
      memset(out, 0, sizeof *out);
      report(err, err_size,
             "%s is a PCF file (mpcf binary format), not a barcode CSV; drop --from-barcodes",
             display_name);
      return CSV_ERROR_FORMAT;
    }
    return read_pcf_file(path, display_name, dtype, out, err, err_size);
  }
  if (barcodes != CLI_BARCODES_NONE) {
    return read_barcode_csv(path, display_name, dtype, spec, out, err, err_size);
  }
  const csv_status s = csv_read_pcfs(path, display_name, dtype, out, err, err_size);
  if (s == CSV_OK) out->linear = linear;
  return s;
}
