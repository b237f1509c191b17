#include "fuzz_support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint8_t fz_u8(fz_reader* r) {
  if (r->n == 0) return 0;
  --r->n;
  return *r->p++;
}

uint64_t fz_uint(fz_reader* r, int k) {
  uint64_t x = 0;
  for (int i = 0; i < k; ++i) x |= (uint64_t)fz_u8(r) << (8 * i);
  return x;
}

double fz_raw_f64(fz_reader* r) {
  const uint64_t bits = fz_uint(r, 8);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

float fz_raw_f32(fz_reader* r) {
  const uint32_t bits = (uint32_t)fz_uint(r, 4);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static const char* g_current_input = NULL;
static const char* g_context = NULL;

void fz_set_current_input(const char* name) { g_current_input = name; }
void fz_set_context(const char* what) { g_context = what; }

void fz_fail(const char* file, int line, const char* fmt, ...) {
  fprintf(stderr, "mpcf fuzz: CHECK FAILED at %s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (g_context != NULL) fprintf(stderr, "mpcf fuzz: while %s\n", g_context);
  if (g_current_input != NULL) fprintf(stderr, "mpcf fuzz: input %s\n", g_current_input);
  if (!fz_strict()) {
    fprintf(stderr,
            "mpcf fuzz: (known defects were filtered; MPCF_FUZZ_STRICT=1 checks everything)\n");
  }
  fflush(stderr);
  abort();
}

static int g_strict = -1;

int fz_strict(void) {
  if (g_strict < 0) {
    const char* s = getenv("MPCF_FUZZ_STRICT");
    g_strict = s != NULL && strcmp(s, "1") == 0;
  }
  return g_strict;
}

void fz_set_strict(int on) { g_strict = on ? 1 : 0; }

int fz_known(int defect, int cond) {
  (void)defect;
  return cond && !fz_strict();
}
