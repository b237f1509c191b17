/* Signals and the wait with a progress bar (signals.h). */
#define _POSIX_C_SOURCE 200809L

#include "signals.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static volatile sig_atomic_t g_signal = 0;
static volatile sig_atomic_t g_defer_signals = 0;
/* The temporary outputs being written (knn writes two). */
static const char* volatile g_temp_paths[2] = {NULL, NULL};

static void on_signal(int sig) {
  g_signal = sig;
  if (!g_defer_signals) {
    for (int k = 0; k < 2; ++k) {
      const char* temp = g_temp_paths[k];
      if (temp != NULL) unlink(temp);
    }
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

void signals_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int signals_track_temp(const char* path) {
  const int slot = g_temp_paths[0] == NULL ? 0 : 1;
  g_temp_paths[slot] = path;
  return slot;
}

void signals_forget_temp(int slot) {
  if (slot >= 0 && slot < 2) g_temp_paths[slot] = NULL;
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void draw_progress(const char* label, uint64_t done, uint64_t total, double elapsed,
                          int finished) {
  enum { WIDTH = 30 };
  if (total == 0 && !finished) {
    /* The task has not sized its work yet (e.g. while CUDA starts up). */
    fprintf(stderr, "\r%s [%*s] starting  %.1f s%-40s", label, WIDTH, "", elapsed, "");
    fflush(stderr);
    return;
  }
  double frac = total > 0 ? (double)done / (double)total : 1.0;
  if (frac > 1.0) frac = 1.0;
  const int filled = (int)(frac * WIDTH);
  char bar[WIDTH + 1];
  for (int k = 0; k < WIDTH; ++k) bar[k] = k < filled ? '#' : '-';
  bar[WIDTH] = '\0';
  char eta[48] = "";
  if (!finished && frac > 0.0 && frac < 1.0) {
    snprintf(eta, sizeof eta, ", about %.1f s left", elapsed * (1.0 - frac) / frac);
  }
  /* Padded so a shorter line fully covers a longer one. */
  fprintf(stderr, "\r%s [%s] %5.1f%%  %" PRIu64 "/%" PRIu64 " entries  %.1f s%-24s", label, bar,
          100.0 * frac, done, total, elapsed, eta);
  fflush(stderr);
}

/* Waits for the task, drawing progress; a signal cancels it. */
static mpcf_status wait_drawing(mpcf_task* task, int show_progress, const char* label) {
  const double start = now_seconds();
  mpcf_status s;
  uint64_t done = 0;
  uint64_t total = 0;
  for (;;) {
    s = mpcf_task_wait(task, 0.1);
    if (s != MPCF_RUNNING) break;
    if (g_signal != 0) {
      mpcf_task_cancel(task);
      s = mpcf_task_wait(task, -1.0);
      break;
    }
    if (show_progress && mpcf_task_progress(task, &done, &total) == MPCF_OK) {
      draw_progress(label, done, total, now_seconds() - start, 0);
    }
  }
  if (show_progress) {
    if (s == MPCF_OK && mpcf_task_progress(task, &done, &total) == MPCF_OK) {
      draw_progress(label, done, total, now_seconds() - start, 1);
    }
    fputc('\n', stderr);
  }
  return s;
}

static const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT (Ctrl-C)" : "SIGTERM";
}

int signals_wait_for_task(mpcf_task* task, int show_progress, const char* label) {
  g_defer_signals = 1;
  if (g_signal != 0) mpcf_task_cancel(task); /* arrived just before */
  const mpcf_status s = wait_drawing(task, show_progress, label);
  if (g_signal != 0) {
    error_message("interrupted by %s; the computation was cancelled and nothing was written",
                  signal_name(g_signal));
    return 128 + g_signal;
  }
  return s == MPCF_OK ? EXIT_OK : library_error(s, label);
}

int signals_end_wait(int code) {
  if (code != EXIT_OK) return code; /* signals stay deferred: the run cleans up and exits */
  g_defer_signals = 0;
  if (g_signal != 0) { /* arrived just now: still honour it */
    g_defer_signals = 1;
    error_message("interrupted by %s; nothing was written", signal_name(g_signal));
    return 128 + g_signal;
  }
  return EXIT_OK;
}
