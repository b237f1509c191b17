/* Writing arrays in NumPy's .npy format (version 1.0), so that results open
 * with numpy.load: C order, little-endian float32 ('<f4') or float64 ('<f8'). */
#ifndef MPCF_CLI_NPY_WRITER_H
#define MPCF_CLI_NPY_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mpcf/mpcf.h"

/** Largest number of dimensions npy_write accepts. */
#define NPY_MAX_DIMS 32

/** Builds the .npy preamble (magic, version 1.0, header length, the header
 *  dictionary padded with spaces to a multiple of 64 bytes and ending in
 *  '\n') into buf. Returns its length, or 0 when ndim > NPY_MAX_DIMS, the
 *  dtype is unknown or buf is too small (1024 bytes always suffice). */
size_t npy_preamble(char* buf, size_t buf_size, mpcf_dtype dtype, const uint64_t* shape,
                    size_t ndim);

/** Writes a complete .npy file to `file`: the preamble, then `count`
 *  elements of `data` (host order in memory, little-endian on disk). count
 *  must equal the product of the shape. Returns 0, or -1 when writing failed
 *  (errno tells why) or the arguments are inconsistent (errno = EINVAL). */
int npy_write(FILE* file, mpcf_dtype dtype, const uint64_t* shape, size_t ndim, const void* data,
              uint64_t count);

/** Like npy_write, for int64 elements ('<i8'). */
int npy_write_int64(FILE* file, const uint64_t* shape, size_t ndim, const int64_t* data,
                    uint64_t count);

/** Copies count elements of elem_size bytes (4 or 8) from src to dst in
 *  little-endian byte order, whatever the host's order. */
void npy_copy_little_endian(unsigned char* dst, const void* src, size_t count, size_t elem_size);

#endif /* MPCF_CLI_NPY_WRITER_H */
