# last_task_info(): libmpcf's own account of the last computation that
# succeeded (mpcf_task_info), with the fields of Python's
# mpcf.last_task_info(). Merge steps are worked out here from the
# breakpoint counts by mpcf.h's rule: the sum over the pairs computed of the
# breakpoints of both functions.

# m = 1, 2, 4 breakpoints (B = 7); y: m = 3, 1 (B = 4).
x <- list(cbind(0, 0), cbind(c(0, 1), c(1, 0)), cbind(c(0, 1, 2, 3), c(1, 2, 3, 0)))
y <- list(cbind(c(0, 1, 2), c(1, 2, 0)), cbind(0, 0))
breakpoints <- function(fs) sum(vapply(fs, nrow, double(1)))

test_that("before any computation there is none (NULL)", {
  # A fresh R session: this one has computed in other test files.
  libs <- paste(deparse(.libPaths()), collapse = "")
  code <- sprintf(".libPaths(%s); cat(is.null(mpcf::last_task_info()))", libs)
  out <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = TRUE)
  expect_identical(out, "TRUE")
})

test_that("after pdist on the CPU: backend, threads asked for, merge steps (n - 1) B", {
  pdist(x, backend = "cpu", threads = 3, progress = FALSE)
  info <- last_task_info()
  expect_named(info, c("backend", "reason", "threads", "devices", "merge_steps", "seconds"))
  expect_identical(info$backend, "cpu")
  expect_identical(info$reason, "requested")
  expect_identical(info$threads, 3L)
  expect_identical(info$devices, integer(0))
  n <- length(x)
  expect_identical(info$merge_steps, (n - 1) * breakpoints(x))   # 2 x 7 = 14
  expect_identical(info$merge_steps, 14)
  expect_true(is.double(info$seconds) && info$seconds >= 0)
})

test_that("the other computations report their own merge steps", {
  nx <- as.double(length(x))
  ny <- as.double(length(y))
  cross <- ny * breakpoints(x) + nx * breakpoints(y)             # 2 x 7 + 3 x 4 = 26
  l2_kernel(x, backend = "cpu", threads = 2, progress = FALSE)
  expect_identical(last_task_info()$merge_steps, (nx + 1) * breakpoints(x))  # 28
  cdist(x, y, backend = "cpu", threads = 2, progress = FALSE)
  expect_identical(last_task_info()$merge_steps, cross)
  knn(x, 1, y, backend = "cpu", threads = 2, progress = FALSE)
  expect_identical(last_task_info()$merge_steps, cross)
  kernel_matvec(x, c(1, 1), y, backend = "cpu", threads = 2, progress = FALSE)
  expect_identical(last_task_info()$merge_steps, cross)
  # lp_norm computes on the calling thread, as Python's does (backend auto):
  # each function against the zero function (m = 1).
  lp_norm(x)
  info <- last_task_info()
  expect_identical(info$reason, "computed on the CPU only")
  expect_identical(info$threads, 1L)
  expect_identical(info$merge_steps, breakpoints(x) + nx)        # 10
})

test_that("a call that fails leaves the account of the last one that succeeded", {
  pdist(x, backend = "cpu", threads = 2, progress = FALSE)
  expect_error(pdist(x, p = 0.5, backend = "cpu", threads = 3, progress = FALSE),
               class = "mpcf_error")
  expect_identical(last_task_info()$threads, 2L)
})
