# Interrupts and progress. A user interrupt (SIGINT, what Ctrl-C sends)
# arriving while R waits for libmpcf must cancel the task, and the package
# must stay usable afterwards. The tasks under test are held by libmpcf's
# testing hook (MPCF_DEBUG_HOLD_TASKS): they compute nothing until they are
# cancelled, so they are still running when the interrupt arrives, however
# fast or loaded the machine is.

skip_if_no_sigint <- function() {
  skip_on_os("windows")
  skip_if(is.na(tools::SIGINT), "no SIGINT on this platform")
}

# Runs a small computation so that the recorded task status is MPCF_OK: a
# later "MPCF_ERROR_CANCELLED" then comes from the task under test.
reset_task_status <- function() {
  pdist(list(cbind(0, 1), cbind(0, 2)), window = c(0, 1), progress = FALSE)
  stopifnot(last_task_status() == "MPCF_OK")
}

# Evaluates expr with every task it starts held until cancelled.
held <- function(expr) {
  Sys.setenv(MPCF_DEBUG_HOLD_TASKS = "1")
  on.exit(Sys.unsetenv("MPCF_DEBUG_HOLD_TASKS"))
  expr
}

small <- function() list(cbind(c(0, 1), c(3, 0)), cbind(c(0, 2), c(1, 0)), cbind(0, 5))

test_that("an interrupt raised while the progress callback runs cancels the task", {
  skip_if_no_sigint()
  reset_task_status()
  calls <- 0
  interrupt_self <- function(done, total) {
    calls <<- calls + 1
    if (calls == 1) tools::pskill(Sys.getpid(), tools::SIGINT)
  }
  got <- tryCatch(held(pdist(small(), backend = "cpu", threads = 1, progress = interrupt_self)),
                  interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_identical(calls, 1)
  expect_identical(last_task_status(), "MPCF_ERROR_CANCELLED")
})

test_that("an interrupt arriving while R waits for libmpcf cancels the task", {
  skip_if_no_sigint()
  skip_if(Sys.which("sh") == "", "no sh to send the signal from")
  # The first poll of the (held) task starts a process that sends SIGINT a
  # moment later, while pdist waits: the task cannot have finished.
  signal_soon <- function() {
    sent <- FALSE
    function(done, total) {
      if (!sent) {
        sent <<- TRUE
        system(sprintf("sh -c 'sleep 0.2; kill -INT %d'", Sys.getpid()), wait = FALSE)
      }
    }
  }
  reset_task_status()
  got <- tryCatch({
    held(pdist(small(), backend = "cpu", threads = 1, progress = signal_soon()))
    "finished"
  }, interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_identical(last_task_status(), "MPCF_ERROR_CANCELLED")
  # The same applies to the other long operations.
  reset_task_status()
  got <- tryCatch({
    held(cdist(small(), small(), backend = "cpu", threads = 1, progress = signal_soon()))
    "finished"
  }, interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_identical(last_task_status(), "MPCF_ERROR_CANCELLED")
})

test_that("an error raised by the progress callback cancels the task and reaches the caller", {
  reset_task_status()
  fail <- function(done, total) stop("stop requested by the callback")
  expect_error(held(l2_kernel(small(), backend = "cpu", threads = 1, progress = fail)),
               "stop requested by the callback")
  expect_identical(last_task_status(), "MPCF_ERROR_CANCELLED")
})

test_that("after a cancelled task the next computation is complete and correct", {
  f <- cbind(c(0, 1), c(3, 0))
  g <- cbind(c(0, 2), c(1, 0))
  expect_identical(as.vector(pdist(list(f, g), progress = FALSE)), 3)
  expect_identical(last_task_status(), "MPCF_OK")
})

test_that("a progress callback ends with done == total, never going back", {
  x <- as_pcfs(long_workload(n = 300))
  seen <- list()
  record <- function(done, total) seen[[length(seen) + 1]] <<- c(done, total)
  d <- pdist(x, backend = "cpu", threads = 1, progress = record)
  expect_identical(length(d), (300L * 299L) %/% 2L)
  # At least the finished state, whatever the machine's speed.
  expect_gte(length(seen), 1)
  done <- vapply(seen, `[`, 0, 1)
  total <- vapply(seen, `[`, 0, 2)
  expect_true(all(total[total > 0] == length(d)))
  expect_false(is.unsorted(done))
  expect_identical(done[length(done)], as.numeric(length(d)))
  expect_identical(total[length(total)], as.numeric(length(d)))
})

test_that("the bar of progress = TRUE is drawn from the first poll and reaches 100%", {
  bar <- mpcf:::.progress(TRUE, NULL)
  out <- capture.output({
    bar$callback(0, 0)      # not sized yet: no bar
    bar$callback(10, 40)
    bar$callback(40, 40)
    bar$close()
  })
  text <- paste(out, collapse = "\n")
  expect_match(text, "100%", fixed = TRUE)
  expect_match(text, "|=", fixed = TRUE)
  # A computation whose first report is its finished state draws nothing.
  bar <- mpcf:::.progress(TRUE, NULL)
  out <- capture.output({
    bar$callback(40, 40)
    bar$close()
  })
  expect_identical(out, character(0))
})

test_that("short computations draw no bar", {
  out <- capture.output(pdist(list(cbind(0, 1), cbind(0, 2)), window = c(0, 1),
                              progress = TRUE))
  expect_false(any(grepl("%", out, fixed = TRUE)))
})
