/* Writing a result as CSV (beside npy_writer.h, which writes .npy): numbers
 * with 9 (float32) or 17 (float64) significant digits, which read back to
 * the same value; with ids (--with-ids), labelled rows and columns or
 * (id_1, id_2, value) rows for the triangular layouts; knn as
 * (i, j, distance) rows. capi/cli/README.md shows every shape. */
#ifndef MPCF_CLI_CSV_WRITER_H
#define MPCF_CLI_CSV_WRITER_H

#include <stdio.h>

#include "cli.h"
#include "csv_reader.h"

/* Writes the result r of the command a, computed from x (and y), to f. */
void write_csv(FILE* f, const cli_args* a, const result* r, const csv_pcfs* x, const csv_pcfs* y);

#endif /* MPCF_CLI_CSV_WRITER_H */
