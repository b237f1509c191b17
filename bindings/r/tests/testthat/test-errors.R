# Every bad input gives an mpcf_error naming what is wrong; libmpcf's own
# message (function and breakpoint index) is carried into R.

good <- list(a = cbind(c(0, 1), c(3, 0)), b = cbind(c(0, 2), c(1, 0)))

expect_mpcf_error <- function(expr, pattern, status = "MPCF_ERROR_INVALID_ARGUMENT") {
  e <- expect_error(expr, class = "mpcf_error")
  expect_match(conditionMessage(e), pattern, fixed = TRUE)
  expect_identical(e$status, status)
  invisible(e)
}

test_that("x must be a list, a data frame or an mpcf_pcfs object", {
  expect_mpcf_error(pdist(1:3), "x must be a list of two-column numeric matrices")
  expect_mpcf_error(pdist(cbind(0, 1)), "it is a double matrix with 1 row and 2 columns")
  expect_mpcf_error(pdist(NULL), "it is NULL")
  expect_mpcf_error(cdist(good, "a"), "y must be a list of two-column numeric matrices")
})

test_that("every list element must be a two-column numeric matrix", {
  expect_mpcf_error(pdist(list(cbind(0, 1), c(0, 1))),
                    "x[[2]] must be a two-column numeric matrix (t, v); it is a double vector of length 2")
  expect_mpcf_error(pdist(list(a = cbind(0, 1), b = cbind(0, 1, 2))),
                    "x[[\"b\"]] must be a two-column numeric matrix (t, v); it is a double matrix with 1 row and 3 columns")
  expect_mpcf_error(pdist(list(matrix(c("0", "1"), 1, 2))), "it is a character matrix")
  expect_mpcf_error(pdist(list(matrix(TRUE, 1, 2))), "it is a logical matrix")
  expect_mpcf_error(pdist(list(data.frame(t = 0, v = 1))),
                    "x[[1]] must be a two-column numeric matrix (t, v); it is a data frame")
})

test_that("invalid PCF data carries libmpcf's message and the R location", {
  e <- expect_mpcf_error(
    pdist(list(a = cbind(c(0, 1), c(1, 0)), b = cbind(c(0, 2, 2), c(1, 2, 0)))),
    "mpcf_pcfs_create: PCF 1, breakpoint 2: time 2 repeats the previous time 2",
    "MPCF_ERROR_INVALID_PCF")
  expect_match(conditionMessage(e), "in R this is x[[\"b\"]], row 3", fixed = TRUE)
  e <- expect_mpcf_error(pdist(list(cbind(c(0, 3, 1), c(1, 2, 0)))),
                         "PCF 0, breakpoint 2: time 1 is smaller than the previous time 3",
                         "MPCF_ERROR_INVALID_PCF")
  expect_match(conditionMessage(e), "in R this is x[[1]], row 3", fixed = TRUE)
  e <- expect_mpcf_error(pdist(list(cbind(0, 1), matrix(numeric(0), 0, 2))),
                         "PCF 1 has no breakpoints", "MPCF_ERROR_INVALID_PCF")
  expect_match(conditionMessage(e), "in R this is x[[2]])", fixed = TRUE)
  expect_mpcf_error(pdist(list(cbind(c(0, 1), c(NaN, 0)))),
                    "PCF 0, breakpoint 0: value is nan; values must be finite",
                    "MPCF_ERROR_INVALID_PCF")
  expect_mpcf_error(pdist(list(cbind(0, 1), cbind(c(0, Inf), c(1, 0)))),
                    "PCF 1, breakpoint 1: time is inf", "MPCF_ERROR_INVALID_PCF")
  # integer NA becomes a NaN that libmpcf rejects
  expect_mpcf_error(pdist(list(cbind(c(0L, NA), c(1L, 0L)))),
                    "PCF 0, breakpoint 1: time is nan", "MPCF_ERROR_INVALID_PCF")
  expect_mpcf_error(lp_distance(cbind(0, 1), cbind(c(1, 0), c(1, 1))),
                    "in R this is g, row 2", "MPCF_ERROR_INVALID_PCF")
})

test_that("the R location comes from libmpcf's indices, not its message", {
  # Function 1 (from 0), breakpoint 2: the third row of x$b repeats a time.
  expect_error(pdist(list(a = cbind(c(0, 1), c(1, 0)), b = cbind(c(0, 2, 2), c(1, 2, 0)))),
               class = "mpcf_error")
  expect_identical(mpcf:::.last_error_detail(),
                   c("function" = 1, breakpoint = 2, barcode = NA_real_, bar = NA_real_))
  # A whole function (no breakpoints): no breakpoint index.
  expect_error(pdist(list(cbind(0, 1), matrix(numeric(0), 0, 2))), class = "mpcf_error")
  expect_identical(mpcf:::.last_error_detail()[c("function", "breakpoint")],
                   c("function" = 1, breakpoint = NA_real_))
  # An error of the glue's own carries none.
  expect_error(pdist(good, p = 0.5, progress = FALSE), class = "mpcf_error")
  expect_true(all(is.na(mpcf:::.last_error_detail())))
  # Bars: barcode 1, bar 0 is (3, 1).
  expect_error(betti_curve(list(cbind(0, 1), cbind(3, 1))), "in R this is barcodes[[2]], bar 1",
               fixed = TRUE, class = "mpcf_error")
  expect_identical(mpcf:::.last_error_detail()[c("barcode", "bar")], c(barcode = 1, bar = 0))
})

test_that("data frame input is checked column by column", {
  expect_mpcf_error(pdist(data.frame(id = 1, t = 0)),
                    "x is a data frame without column v; it needs columns id, t and v")
  expect_mpcf_error(pdist(data.frame(x = 1)), "without columns id, t, v")
  expect_mpcf_error(pdist(data.frame(id = 1, t = "0", v = 1)),
                    "column t of x must be numeric; it is a character vector")
  expect_mpcf_error(pdist(data.frame(id = 1, t = 0, v = factor("a"))),
                    "column v of x must be numeric; it is a factor")
  expect_mpcf_error(pdist(data.frame(id = c(1, NA), t = 0, v = 1)),
                    "column id of x is missing (NA) in row 2")
  e <- expect_mpcf_error(pdist(data.frame(id = c("a", "b", "a", "b"), t = c(0, 0, 1, 0),
                                          v = c(1, 1, 0, 0))),
                         "PCF 1, breakpoint 1: time 0 repeats the previous time 0",
                         "MPCF_ERROR_INVALID_PCF")
  expect_match(conditionMessage(e), "in R this is id \"b\", row 4 of x", fixed = TRUE)
})

test_that("p must be a number >= 1", {
  expect_mpcf_error(pdist(good, p = 0.5, progress = FALSE),
                    "mpcf_pdist_start: p = 0.5 is not a valid exponent; p must be >= 1")
  expect_mpcf_error(cdist(good, good, p = -Inf, progress = FALSE),
                    "mpcf_cdist_start: p = -inf is not a valid exponent")
  expect_mpcf_error(lp_distance(good$a, good$b, p = 0),
                    "mpcf_lp_distance: p = 0 is not a valid exponent")
  expect_mpcf_error(lp_norm(good, p = 0.99), "mpcf_lp_norm: p = 0.99 is not a valid exponent")
  expect_mpcf_error(pdist(good, p = NA), "p must be a single number >= 1 (or Inf); it is a logical vector")
  expect_mpcf_error(pdist(good, p = "2"), "p must be a single number >= 1 (or Inf); it is a character vector")
  expect_mpcf_error(pdist(good, p = c(1, 2)), "it is a double vector of length 2")
})

test_that("window must be NULL or c(a, b) with a < b", {
  expect_mpcf_error(pdist(good, window = c(2, 1), progress = FALSE),
                    "mpcf_options_set_window: window [2, 1) is invalid; it needs a < b")
  expect_mpcf_error(l2_kernel(good, window = c(1, 1), progress = FALSE),
                    "window [1, 1) is invalid")
  expect_mpcf_error(lp_norm(good, window = c(NaN, 1)), "window [nan, 1) is invalid")
  expect_mpcf_error(pdist(good, window = 1:3), "window must be NULL (the whole line) or c(a, b); it is an integer vector of length 3")
  expect_mpcf_error(pdist(good, window = c("a", "b")), "it is a character vector of length 2")
})

test_that("backend, threads and progress are checked", {
  expect_mpcf_error(pdist(good, backend = "gpu"),
                    "backend must be one of \"auto\", \"cpu\", \"cuda\"; it is \"gpu\"")
  expect_mpcf_error(pdist(good, backend = c("cpu", "auto")), "it is a character vector of length 2")
  expect_mpcf_error(pdist(good, threads = 0), "threads must be NULL (all cores) or a positive whole number; it is 0")
  expect_mpcf_error(pdist(good, threads = 1.5), "it is 1.5")
  expect_mpcf_error(pdist(good, threads = "2"), "it is a character vector of length 1")
  expect_mpcf_error(pdist(good, threads = 5000, progress = FALSE),
                    "mpcf_options_set_threads: threads = 5000 is outside 0..4096")
  expect_mpcf_error(pdist(good, progress = NA), "progress must be TRUE, FALSE or a function(done, total)")
  expect_mpcf_error(pdist(good, progress = "yes"), "it is a character vector of length 1")
})

test_that("backend = \"cuda\" without a usable GPU is a clear error", {
  if (grepl("cuda=on", mpcf_build_info(), fixed = TRUE) &&
      !grepl("devices=0", mpcf_build_info(), fixed = TRUE)) {
    skip("this libmpcf has CUDA and may have a device")
  }
  expect_mpcf_error(pdist(good, backend = "cuda", progress = FALSE),
                    "CUDA not available", "MPCF_ERROR_CUDA_UNAVAILABLE")
  expect_mpcf_error(l2_kernel(good, backend = "cuda", progress = FALSE),
                    "CUDA not available", "MPCF_ERROR_CUDA_UNAVAILABLE")
})

test_that("lp_distance takes two matrices", {
  expect_mpcf_error(lp_distance(good, good$a),
                    "f must be a two-column numeric matrix (t, v); it is a list of length 2")
  expect_mpcf_error(lp_distance(good$a, 3), "g must be a two-column numeric matrix (t, v); it is a double vector")
})

test_that("a handle restored from serialization, or a foreign pointer, is refused", {
  x <- as_pcfs(good)
  restored <- unserialize(serialize(x, NULL))
  expect_mpcf_error(pdist(restored, progress = FALSE),
                    "x no longer holds data: an mpcf_pcfs handle does not survive saveRDS()")
  fake <- structure(list(ptr = new("externalptr"), labels = NULL, n = 1, breakpoints = 1),
                    class = "mpcf_pcfs")
  expect_mpcf_error(cdist(good, fake, progress = FALSE),
                    "y is not an mpcf_pcfs handle (make one with as_pcfs())")
})

test_that("errors leave the package usable", {
  expect_error(pdist(list(cbind(c(1, 0), c(0, 0)))), class = "mpcf_error")
  expect_identical(as.vector(pdist(good, progress = FALSE)), 3)
})
