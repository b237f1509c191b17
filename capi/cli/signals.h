/* Ctrl-C (SIGINT) and SIGTERM, and the wait for a computation with a
 * progress bar. While a task runs, the handler only records the signal and
 * the wait cancels the task, so everything is freed and the temporary
 * output removed. At any other time the handler removes the temporary
 * outputs itself (unlink is async-signal-safe) and lets the signal end the
 * process as usual. */
#ifndef MPCF_CLI_SIGNALS_H
#define MPCF_CLI_SIGNALS_H

#include "mpcf/mpcf.h"

/* Installs the handlers of SIGINT and SIGTERM. */
void signals_install(void);

/* Registers a temporary output for the handler to remove (at most two at a
 * time: knn writes two); returns its slot for signals_forget_temp. */
int signals_track_temp(const char* path);
void signals_forget_temp(int slot);

/* Waits for the task, drawing a progress bar on stderr when show_progress
 * (`label` in front); from now on a signal cancels the task. Returns
 * EXIT_OK, 128 + the signal when one cancelled it, or library_error's code
 * when the task failed (messages printed). Call signals_end_wait after
 * destroying the task. */
int signals_wait_for_task(mpcf_task* task, int show_progress, const char* label);

/* Ends the wait: signals act at once again. A signal that arrived after the
 * task ended still counts: returns 128 + it (message printed) when `code`
 * is EXIT_OK, else `code`. */
int signals_end_wait(int code);

/* Seconds of a monotonic clock. */
double now_seconds(void);

#endif /* MPCF_CLI_SIGNALS_H */
