/* Reading PCFs from a long-format CSV file (id,t,v) into CSR arrays for
 * mpcf_pcfs_create. The format and every error it reports are documented in
 * capi/cli/README.md. */
#ifndef MPCF_CLI_CSV_READER_H
#define MPCF_CLI_CSV_READER_H

#include <stddef.h>
#include <stdint.h>

#include "mpcf/mpcf.h"

typedef enum csv_status {
  CSV_OK = 0,
  /** The file could not be opened or read. */
  CSV_ERROR_IO = 1,
  /** The file breaks the format; the message names the line. */
  CSV_ERROR_FORMAT = 2,
  /** Memory ran out while reading. */
  CSV_ERROR_NO_MEMORY = 3
} csv_status;

/** PCFs read from one CSV file, in the order of first appearance of their
 *  ids. Function i has breakpoints offsets[i] .. offsets[i+1]-1 of `times`
 *  and `values`, stored in `dtype` (float or double). */
typedef struct csv_pcfs {
  mpcf_dtype dtype;
  uint64_t n;          /* number of functions */
  uint64_t total;      /* number of breakpoints, offsets[n] */
  uint64_t* offsets;   /* n + 1 entries */
  void* times;         /* total elements of dtype */
  void* values;        /* total elements of dtype */
  char** ids;          /* n NUL-terminated ids */
  uint64_t* first_line; /* line of each function's first row */
  uint64_t min_m, max_m; /* fewest and most breakpoints of one function */
  /* Set by the CLI's inputs (zero from csv_read_pcfs): */
  int linear;          /* piecewise linear functions (PLFs) rather than PCFs */
  uint64_t components; /* 0 or 1: n functions; K > 1: n objects of K functions each
                          (offsets then has n * K + 1 entries; ids and first_line n) */
} csv_pcfs;

/** Reads `path` ("-" reads standard input; `display_name` is what error
 *  messages call the file, e.g. "data.csv" or "<stdin>"). On success fills
 *  *out (free it with csv_pcfs_free) and returns CSV_OK. On failure writes a
 *  one-line message, without the "mpcf: error: " prefix, to err (at most
 *  err_size bytes, NUL included), leaves *out empty and returns the status. */
csv_status csv_read_pcfs(const char* path, const char* display_name, mpcf_dtype dtype,
                         csv_pcfs* out, char* err, size_t err_size);

/** Reads persistence barcodes from a CSV file of rows 'id,birth,death'
 *  (header optional, the rows of one id contiguous, in any order; death may
 *  be 'inf'). Like csv_read_pcfs, with times = births and values = deaths,
 *  in float64; every bar is checked (finite birth, birth <= death) and an
 *  error names the line. */
csv_status csv_read_barcodes(const char* path, const char* display_name, csv_pcfs* out,
                             char* err, size_t err_size);

/** "float32" or "float64": the dtype's name in the tool's messages. */
static inline const char* cli_dtype_name(mpcf_dtype dtype) {
  return dtype == MPCF_FLOAT32 ? "float32" : "float64";
}

/** Frees everything csv_read_pcfs allocated and empties *pcfs. Safe on an
 *  emptied or zero-initialised struct. */
void csv_pcfs_free(csv_pcfs* pcfs);

#endif /* MPCF_CLI_CSV_READER_H */
