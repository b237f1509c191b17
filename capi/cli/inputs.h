/* The inputs of the CLI's commands beyond PCF CSV files: persistence
 * barcodes in CSV ('id,birth,death', --from-barcodes) turned into PCFs by
 * libmpcf, and PCF files in the mpcf binary format (mpcf_pcfs_save, Python's
 * mpcf.save, ...), recognised by their first byte. Either way the result
 * is a csv_pcfs, as csv_read_pcfs makes it, so the rest of the tool does not
 * care where the functions came from. */
#ifndef MPCF_CLI_INPUTS_H
#define MPCF_CLI_INPUTS_H

#include <stddef.h>

#include "csv_reader.h"
#include "mpcf/mpcf.h"

typedef enum cli_barcodes {
  CLI_BARCODES_NONE = 0, /* the input holds PCFs */
  CLI_BARCODES_BETTI,
  CLI_BARCODES_STABLE_RANK,
  CLI_BARCODES_ACCUMULATED_PERSISTENCE,
  CLI_BARCODES_LANDSCAPE, /* PLFs: lambda_1 .. lambda_K, objects of K components */
  CLI_BARCODES_SILHOUETTE /* PLFs: one power-weighted silhouette per barcode */
} cli_barcodes;

/** What to make of barcodes: the summary, the number of landscapes (k >= 1),
 *  the silhouette's weight exponent q, and the value infinite deaths are
 *  clipped to for landscapes and silhouettes (INFINITY: none). */
typedef struct cli_barcode_spec {
  cli_barcodes kind;
  uint64_t k;
  double q;
  double clip;
} cli_barcode_spec;

/** Reads the input `path` ("-" = standard input) into *out in `dtype`:
 *  a PCF file when it starts with the format's magic byte 0x89 (out->linear
 *  is the file's function type), else a barcode CSV when barcodes->kind is
 *  not CLI_BARCODES_NONE (landscapes: out->components = k, one id per
 *  barcode), else a CSV of functions (out->linear = `linear`).
 *  Returns CSV_OK or a failure status with a one-line message in err.
 *  Functions read from a PCF file get the ids "0", "1", ... */
csv_status cli_read_input(const char* path, const char* display_name, mpcf_dtype dtype,
                          const cli_barcode_spec* barcodes, int linear, csv_pcfs* out, char* err,
                          size_t err_size);

#endif /* MPCF_CLI_INPUTS_H */
