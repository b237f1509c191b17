/* The .npy format, version 1.0: "\x93NUMPY", the bytes 1 and 0, the header
 * length as a little-endian uint16, then an ASCII Python dict literal padded
 * with spaces and ending in '\n' so that the data starts at a multiple of 64
 * bytes, then the raw elements. */
#include "npy_writer.h"

#include <errno.h>
#include <string.h>

enum { NPY_ALIGN = 64, NPY_MAGIC_LEN = 10 /* magic 6 + version 2 + length 2 */ };

static int host_is_little_endian(void) {
  const uint16_t probe = 1;
  unsigned char first;
  memcpy(&first, &probe, 1);
  return first == 1;
}

static const char* descr_of(mpcf_dtype dtype) {
  switch (dtype) {
    case MPCF_FLOAT32: return "<f4";
    case MPCF_FLOAT64: return "<f8";
    default: return NULL;
  }
}

static size_t preamble_with(char* buf, size_t buf_size, const char* descr, const uint64_t* shape,
                            size_t ndim) {
  if (descr == NULL || ndim > NPY_MAX_DIMS || (ndim > 0 && shape == NULL) || buf_size < NPY_MAGIC_LEN + 1) return 0;

  /* The dict, written after the 10 magic/length bytes. */
  char* dict = buf + NPY_MAGIC_LEN;
  const size_t room = buf_size - NPY_MAGIC_LEN;
  size_t len = 0;
  int w = snprintf(dict, room, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  if (w < 0 || (size_t)w >= room) return 0;
  len = (size_t)w;
  for (size_t k = 0; k < ndim; ++k) {
    w = snprintf(dict + len, room - len, "%s%llu", k == 0 ? "" : ", ", (unsigned long long)shape[k]);
    if (w < 0 || (size_t)w >= room - len) return 0;
    len += (size_t)w;
  }
  w = snprintf(dict + len, room - len, "%s), }", ndim == 1 ? "," : "");
  if (w < 0 || (size_t)w >= room - len) return 0;
  len += (size_t)w;

  /* Pad with spaces so that magic + dict + '\n' is a multiple of 64. */
  size_t total = NPY_MAGIC_LEN + len + 1;
  total = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
  if (total > buf_size || total - NPY_MAGIC_LEN > 0xFFFF) return 0;
  memset(dict + len, ' ', total - NPY_MAGIC_LEN - len - 1);
  buf[total - 1] = '\n';

  const size_t header_len = total - NPY_MAGIC_LEN;
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (char)(header_len & 0xFF);
  buf[9] = (char)((header_len >> 8) & 0xFF);
  return total;
}

size_t npy_preamble(char* buf, size_t buf_size, mpcf_dtype dtype, const uint64_t* shape,
                    size_t ndim) {
  return preamble_with(buf, buf_size, descr_of(dtype), shape, ndim);
}

void npy_copy_little_endian(unsigned char* dst, const void* src, size_t count, size_t elem_size) {
  const unsigned char* s = src;
  if (host_is_little_endian()) {
    memcpy(dst, s, count * elem_size);
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    for (size_t b = 0; b < elem_size; ++b) dst[i * elem_size + b] = s[i * elem_size + elem_size - 1 - b];
  }
}

static int write_array(FILE* file, const char* descr, size_t elem, const uint64_t* shape,
                       size_t ndim, const void* data, uint64_t count) {
  uint64_t product = 1;
  for (size_t k = 0; k < ndim; ++k) product *= shape[k];
  char preamble[1024];
  const size_t plen = preamble_with(preamble, sizeof preamble, descr, shape, ndim);
  if (plen == 0 || product != count || (count > 0 && data == NULL)) {
    errno = EINVAL;
    return -1;
  }
  errno = 0;
  if (fwrite(preamble, 1, plen, file) != plen) return -1;
  if (host_is_little_endian()) {
    if (count > 0 && fwrite(data, elem, (size_t)count, file) != (size_t)count) return -1;
    return 0;
  }
  unsigned char chunk[8192];
  const size_t per_chunk = sizeof chunk / elem;
  const unsigned char* src = data;
  for (uint64_t done = 0; done < count;) {
    const size_t k = (size_t)(count - done < per_chunk ? count - done : per_chunk);
    npy_copy_little_endian(chunk, src + done * elem, k, elem);
    if (fwrite(chunk, elem, k, file) != k) return -1;
    done += k;
  }
  return 0;
}

int npy_write(FILE* file, mpcf_dtype dtype, const uint64_t* shape, size_t ndim, const void* data,
              uint64_t count) {
  return write_array(file, descr_of(dtype), dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double),
                     shape, ndim, data, count);
}

int npy_write_int64(FILE* file, const uint64_t* shape, size_t ndim, const int64_t* data,
                    uint64_t count) {
  return write_array(file, "<i8", sizeof(int64_t), shape, ndim, data, count);
}
