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
  /* The line of every row (breakpoint, or bar), as runs of rows on
   * consecutive lines: row run_row[r] is on line run_line[r], the rows
   * after it up to the next run on the lines after that. runs == 0 for
   * functions that were not read from a CSV file. See csv_row_line. */
  uint64_t runs;
  uint64_t* run_row;
  uint64_t* run_line;
} csv_pcfs;

/** Reads `path` ("-" reads standard input; `display_name` is what error
 *  messages call the file, e.g. "data.csv" or "<stdin>"). Rows must be
 *  CSV of three fields, numbers must fit the dtype, and the rows of an id
 *  must be contiguous; the numbers themselves are libmpcf's to check when
 *  the collection is created (csv_where locates its error). On success fills
 *  *out (free it with csv_pcfs_free) and returns CSV_OK. On failure writes a
 *  one-line message, without the "mpcf: error: " prefix, to err (at most
 *  err_size bytes, NUL included), leaves *out empty and returns the status. */
csv_status csv_read_pcfs(const char* path, const char* display_name, mpcf_dtype dtype,
                         csv_pcfs* out, char* err, size_t err_size);

/** Reads persistence barcodes from a CSV file of rows 'id,birth,death'
 *  (header optional, the rows of one id contiguous, in any order; death may
 *  be 'inf'). Like csv_read_pcfs, with times = births and values = deaths,
 *  in float64; the bars are libmpcf's to check (finite birth, birth <=
 *  death), and csv_where names the line of the bar its error names. */
csv_status csv_read_barcodes(const char* path, const char* display_name, csv_pcfs* out,
                             char* err, size_t err_size);

/** The line (1-based) of row `row` (offsets[i] + k: breakpoint k of
 *  function i, or bar k of barcode i) of a file read by csv_read_pcfs or
 *  csv_read_barcodes; 0 when unknown. */
uint64_t csv_row_line(const csv_pcfs* pcfs, uint64_t row);

/** Where libmpcf's error detail (mpcf_last_error_detail: function and
 *  breakpoint, or barcode and bar; breakpoint -1 for the function itself)
 *  is in the file: writes "NAME:LINE: id 'ID'" to buf (at most size bytes)
 *  and returns 1, or returns 0 when *pcfs has no lines (not read from a
 *  CSV file, or objects of several functions) or the index is out of
 *  range. libmpcf judges the numbers (finite, strictly increasing times,
 *  birth <= death); the tool puts this in front of its message. */
int csv_where(const csv_pcfs* pcfs, const char* display_name, int64_t function,
              int64_t breakpoint, char* buf, size_t size);

/** "float32" or "float64": the dtype's name in the tool's messages. */
static inline const char* cli_dtype_name(mpcf_dtype dtype) {
  return dtype == MPCF_FLOAT32 ? "float32" : "float64";
}

/** Frees everything csv_read_pcfs allocated and empties *pcfs. Safe on an
 *  emptied or zero-initialised struct. */
void csv_pcfs_free(csv_pcfs* pcfs);

#endif /* MPCF_CLI_CSV_READER_H */
