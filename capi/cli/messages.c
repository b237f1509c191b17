/* The tool's error messages (cli.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

void error_message(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mpcf: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

int usage_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("mpcf: error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("\nTry 'mpcf --help' for more information.\n", stderr);
  va_end(ap);
  return EXIT_USAGE;
}

int library_error(mpcf_status s, const char* context) {
  error_message("%s: %s (%s)", context, mpcf_last_error_message(), mpcf_status_name(s));
  return s == MPCF_ERROR_INVALID_PCF ? EXIT_DATA : EXIT_RUNTIME;
}

const char* library_reason(void) {
  /* Every libmpcf message starts with its entry point: "mpcf_x: ". */
  const char* m = mpcf_last_error_message();
  const char* colon = strncmp(m, "mpcf_", 5) == 0 ? strstr(m, ": ") : NULL;
  return colon != NULL ? colon + 2 : m;
}
