/* Test support: a call's status and last error message. Include after
 * <cmocka.h> and "mpcf/mpcf.h". */
#ifndef MPCF_TESTS_EXPECT_ERROR_H
#define MPCF_TESTS_EXPECT_ERROR_H

#include <string.h>

/* `got` must be `want`, and the last error message must contain `needle`
 * (unless NULL). */
static void expect_error(mpcf_status got, mpcf_status want, const char* needle) {
  if (got != want) {
    fail_msg("status %s, expected %s (message: %s)", mpcf_status_name(got), mpcf_status_name(want),
             mpcf_last_error_message());
  }
  const char* msg = mpcf_last_error_message();
  assert_non_null(msg);
  if (needle && !strstr(msg, needle)) fail_msg("message '%s' lacks '%s'", msg, needle);
}

#endif
