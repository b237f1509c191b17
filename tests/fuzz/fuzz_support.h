/* What the fuzz targets share: a reader that decodes the fuzz input byte by
 * byte, the failure report, and the switch between the two modes of the
 * known-defect filter. Plain C11, so the same sources build as libFuzzer
 * targets (clang) and as corpus replay programs (any compiler). */
#ifndef MPCF_FUZZ_SUPPORT_H
#define MPCF_FUZZ_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/* The libFuzzer entry point each target defines. */
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

/* ---- decoding the input ---- */

/* Bytes still to decode. Reading past the end gives zeros, so every input,
 * however short, decodes to something. */
typedef struct fz_reader {
  const uint8_t* p;
  size_t n;
} fz_reader;

uint8_t fz_u8(fz_reader* r);
/* k bytes (1..8), little-endian. */
uint64_t fz_uint(fz_reader* r, int k);
/* The 8 bytes of a double / the 4 bytes of a float, as stored. */
double fz_raw_f64(fz_reader* r);
float fz_raw_f32(fz_reader* r);
static inline int fz_empty(const fz_reader* r) { return r->n == 0; }

/* ---- failures ---- */

/* Prints "mpcf fuzz: CHECK FAILED at file:line: <message>" (and the input
 * being replayed, if any) to stderr, then aborts: libFuzzer saves the input
 * as a crash, the replay program dies and its ctest test fails. */
void fz_fail(const char* file, int line, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4), noreturn))
#endif
    ;

#define FZ_CHECK(cond, ...)                                                    \
  do {                                                                         \
    if (!(cond)) fz_fail(__FILE__, __LINE__, __VA_ARGS__);                     \
  } while (0)

/* The replay program names the file it is running, for the failure report. */
void fz_set_current_input(const char* name);

/* What the target is doing (e.g. "op 3: mpcf_pdist"), for the failure
 * report. The string must outlive the next fz_set_context call. */
void fz_set_context(const char* what);

/* ---- known defects ---- */

/* Strict mode turns the known-defect filter off: every check runs on every
 * input. The regressions replay runs strict (that is why its inputs fail
 * until the defects are fixed); libFuzzer runs and the corpus replay do not,
 * so a known defect does not hide new ones. Strict when the environment
 * variable MPCF_FUZZ_STRICT is set to 1, or after fz_set_strict(1). */
int fz_strict(void);
void fz_set_strict(int on);

/* True when an input hits a target's known defect `defect` (cond) and the
 * known-defect filter is on (not strict): the check that defect breaks is
 * then skipped. `defect` names the entry of the target's enum known_defect. */
int fz_known(int defect, int cond);

#endif /* MPCF_FUZZ_SUPPORT_H */
