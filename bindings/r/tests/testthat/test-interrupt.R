# Interrupts and progress. A user interrupt (SIGINT, what Ctrl-C sends)
# arriving while R waits for libmpcf must cancel the task, and the package
# must stay usable afterwards. The uninterrupted workload takes seconds on
# one thread; an interrupted one stops within a fraction of that.

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

test_that("an interrupt raised while the progress callback runs cancels the task", {
  skip_if_no_sigint()
  x <- as_pcfs(long_workload())
  reset_task_status()
  calls <- 0
  interrupt_self <- function(done, total) {
    calls <<- calls + 1
    if (calls == 1) tools::pskill(Sys.getpid(), tools::SIGINT)
  }
  got <- tryCatch(pdist(x, backend = "cpu", threads = 1, progress = interrupt_self),
                  interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_identical(calls, 1)
  expect_identical(last_task_status(), "MPCF_ERROR_CANCELLED")
})

test_that("an interrupt arriving while R waits for libmpcf cancels the task", {
  skip_if_no_sigint()
  skip_if(Sys.which("sh") == "", "no sh to send the signal from")
  x <- as_pcfs(long_workload())
  reset_task_status()
  # A separate process sends SIGINT 0.5 s from now, while pdist waits.
  system(sprintf("sh -c 'sleep 0.5; kill -INT %d'", Sys.getpid()), wait = FALSE)
  got <- tryCatch({
    pdist(x, backend = "cpu", threads = 1, progress = FALSE)
    "finished"
  }, interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_identical(last_task_status(), "MPCF_ERROR_CANCELLED")
  # The same applies to the other long operations.
  reset_task_status()
  system(sprintf("sh -c 'sleep 0.5; kill -INT %d'", Sys.getpid()), wait = FALSE)
  got <- tryCatch({
    cdist(x, x, backend = "cpu", threads = 1, progress = FALSE)
    "finished"
  }, interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_identical(last_task_status(), "MPCF_ERROR_CANCELLED")
})

test_that("an error raised by the progress callback cancels the task and reaches the caller", {
  x <- as_pcfs(long_workload())
  reset_task_status()
  fail <- function(done, total) stop("stop requested by the callback")
  expect_error(l2_kernel(x, backend = "cpu", threads = 1, progress = fail),
               "stop requested by the callback")
  expect_identical(last_task_status(), "MPCF_ERROR_CANCELLED")
})

test_that("after a cancelled task the next computation is complete and correct", {
  f <- cbind(c(0, 1), c(3, 0))
  g <- cbind(c(0, 2), c(1, 0))
  expect_identical(as.vector(pdist(list(f, g), progress = FALSE)), 3)
  expect_identical(last_task_status(), "MPCF_OK")
})

test_that("a progress callback sees done rise to total", {
  x <- as_pcfs(long_workload(n = 1500))
  seen <- list()
  record <- function(done, total) seen[[length(seen) + 1]] <<- c(done, total)
  d <- pdist(x, backend = "cpu", threads = 1, progress = record)
  expect_identical(length(d), (1500L * 1499L) %/% 2L)
  expect_gt(length(seen), 1)
  done <- vapply(seen, `[`, 0, 1)
  total <- vapply(seen, `[`, 0, 2)
  expect_true(all(total == length(d)))
  expect_false(is.unsorted(done))
  expect_identical(done[length(done)], as.numeric(length(d)))
})

test_that("progress = TRUE draws a txtProgressBar that reaches 100%", {
  x <- as_pcfs(long_workload(n = 1500))
  out <- capture.output(d <- pdist(x, backend = "cpu", threads = 1, progress = TRUE))
  text <- paste(out, collapse = "\n")
  expect_match(text, "100%", fixed = TRUE)
  expect_match(text, "|=", fixed = TRUE)
})

test_that("short computations draw no bar", {
  out <- capture.output(pdist(list(cbind(0, 1), cbind(0, 2)), window = c(0, 1),
                              progress = TRUE))
  expect_false(any(grepl("%", out, fixed = TRUE)))
})
