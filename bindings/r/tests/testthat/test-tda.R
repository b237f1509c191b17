# Barcodes to functions, pointwise operations, read-out and files, against
# hand-worked values and plain-R references of the definitions.

ref_betti <- function(bars, s) vapply(s, function(x) sum(bars[, 1] <= x & x < bars[, 2]), 0)
ref_stable_rank <- function(bars, s) {
  vapply(s, function(x) if (x < 0) 0 else sum(bars[, 2] - bars[, 1] > x), 0)
}
ref_apf <- function(bars, s) {
  fin <- is.finite(bars[, 2])
  m <- 0.5 * bars[fin, 1] + 0.5 * bars[fin, 2]
  len <- bars[fin, 2] - bars[fin, 1]
  vapply(s, function(x) sum(len[m <= x]), 0)
}

# Dyadic bars (multiples of 1/8): every sum is exact.
random_bars <- function(k) {
  b <- sample(-32:31, k, replace = TRUE) / 8
  d <- b + sample(0:32, k, replace = TRUE) / 8
  d[runif(k) < 0.1] <- Inf
  cbind(b, d)
}

issue_bars <- rbind(c(0, 2), c(1, 3), c(1, Inf))

test_that("the hand-worked barcode gives the expected functions", {
  expect_identical(unname(as.list(betti_curve(issue_bars))[[1]]),
                   cbind(c(0, 1, 2, 3), c(1, 3, 2, 1)))
  expect_identical(unname(as.list(stable_rank(issue_bars))[[1]]), cbind(c(0, 2), c(3, 1)))
  expect_identical(unname(as.list(accumulated_persistence(issue_bars))[[1]]),
                   cbind(c(1, 2), c(2, 4)))
  zero <- cbind(0, 0)
  expect_identical(unname(as.list(betti_curve(matrix(numeric(0), ncol = 2)))[[1]]), zero)
  expect_identical(unname(as.list(stable_rank(rbind(c(5, 5))))[[1]]), zero)
})

test_that("random barcodes match the reference", {
  set.seed(7)
  barcodes <- lapply(1:30, function(i) random_bars(sample(1:20, 1)))
  for (kind in list(list(betti_curve, ref_betti), list(stable_rank, ref_stable_rank),
                    list(accumulated_persistence, ref_apf))) {
    x <- kind[[1]](barcodes)
    expect_length(x, 30)
    for (i in seq_along(barcodes)) {
      bars <- barcodes[[i]]
      s <- sort(unique(c(bars[is.finite(bars)], bars[, 2] - bars[, 1], 0, -10, 100)))
      s <- s[is.finite(s)]
      s <- c(s, s + 1 / 64)
      got <- pcf_evaluate(list(as.list(x)[[i]]), s)
      expect_identical(as.vector(got), kind[[2]](bars, s))
    }
  }
})

test_that("persistence diagrams with a dimension column are read", {
  diagram <- cbind(dimension = c(0, 0, 1, 1), Birth = c(0, 0, 1, 2), Death = c(0.5, Inf, 3, 2.5))
  both <- betti_curve(diagram)
  expect_identical(names(both), c("dimension 0", "dimension 1"))
  expect_identical(unname(as.list(both)[[2]]), cbind(c(1, 2, 2.5, 3), c(1, 2, 1, 0)))
  h1 <- stable_rank(list(a = diagram, b = diagram), dimension = 1)
  expect_identical(names(h1), c("a", "b"))
  expect_identical(unname(as.list(h1)[[1]]), cbind(c(0, 0.5, 2), c(2, 1, 0)))
  expect_error(betti_curve(list(diagram, diagram)), "choose one with dimension", class = "mpcf_error")
  expect_error(betti_curve(issue_bars, dimension = 1), "no dimension column", class = "mpcf_error")
})

test_that("bad bars are named, counted from 1 in R", {
  bad <- list(a = rbind(c(0, 1)), b = rbind(c(0, 1), c(3, 2)))
  err <- tryCatch(betti_curve(bad), error = function(e) e)
  expect_s3_class(err, "mpcf_error")
  expect_identical(err$status, "MPCF_ERROR_INVALID_ARGUMENT")
  expect_match(conditionMessage(err), "barcode 1, bar 1 (birth 3, death 2)", fixed = TRUE)
  expect_match(conditionMessage(err), "in R this is barcodes[[2]], bar 2", fixed = TRUE)
  expect_error(stable_rank(rbind(c(NA, 1))), "birth is NaN", class = "mpcf_error")
  expect_error(stable_rank(rbind(c(Inf, Inf))), "birth is infinite", class = "mpcf_error")
  expect_error(betti_curve("0,1"), "barcodes must be", class = "mpcf_error")
  expect_error(betti_curve(list(cbind(1, 2, 3))), "two-column", class = "mpcf_error")
  expect_error(betti_curve(issue_bars, dimension = -1), "non-negative", class = "mpcf_error")
})

test_that("means, sums and combinations are pointwise", {
  f <- cbind(c(0, 2), c(1, 0))
  g <- cbind(c(1, 3), c(3, 0))
  h <- cbind(0, 3)
  expect_identical(unname(as.list(pcf_sum(list(f, g, h)))[[1]]),
                   cbind(c(0, 1, 2, 3), c(4, 7, 6, 3)))
  expect_identical(unname(as.list(pcf_mean(list(f, g)))[[1]]),
                   cbind(c(0, 1, 2, 3), c(0.5, 2, 1.5, 0)))
  expect_identical(as.list(mean(as_pcfs(list(f, g)))), as.list(pcf_mean(list(f, g))))
  expect_error(pcf_mean(list()), "mean of no functions", class = "mpcf_error")
  combo <- pcf_combine(list(f, h), list(cbind(c(1, 2), c(1, 0))), a = 2, b = -1)
  expect_length(combo, 2)
  expect_identical(unname(as.list(combo)[[1]]), cbind(c(0, 1, 2), c(2, 1, 0)))
  expect_identical(unname(as.list(combo)[[2]]), cbind(c(0, 1, 2), c(6, 5, 6)))
  expect_error(pcf_combine(list(f, g, h), list(f, g)), "3 functions", class = "mpcf_error")
  expect_error(pcf_combine(list(f), list(g), a = NA), "single number", class = "mpcf_error")

  set.seed(3)
  fs <- lapply(1:20, function(i) {
    m <- sample(1:8, 1)
    cbind(cumsum(runif(m, 0.1, 1)), runif(m, -5, 5))
  })
  s <- sort(c(unlist(lapply(fs, function(m) m[, 1])), -1, 100))
  want <- rowMeans(vapply(fs, function(m) ref_eval(m, s), numeric(length(s))))
  expect_equal(as.vector(pcf_evaluate(pcf_mean(fs), s)), want, tolerance = 1e-12)
})

test_that("pcf_evaluate gives a length(x) by length(t) matrix", {
  x <- list(a = cbind(c(0, 1), c(3, 0)), b = cbind(c(0, 2), c(1, 0)))
  m <- pcf_evaluate(x, c(2.5, -Inf, 0.5, 1, Inf))
  expect_identical(m, rbind(a = c(0, 0, 3, 0, 0), b = c(0, 0, 1, 1, 0)))
  expect_identical(dim(pcf_evaluate(x, numeric(0))), c(2L, 0L))
  expect_error(pcf_evaluate(x, c(0, NA)), "without NA", class = "mpcf_error")
  expect_error(pcf_evaluate(x, "a"), "numeric vector", class = "mpcf_error")
})

test_that("as.list returns the breakpoints, which as_pcfs accepts back", {
  x <- list(a = cbind(c(0, 1), c(3, 0)), b = cbind(0.5, 1))
  back <- as.list(as_pcfs(x))
  expect_identical(names(back), c("a", "b"))
  expect_identical(unname(back$b), cbind(0.5, 1))
  expect_identical(colnames(back$a), c("t", "v"))
  expect_identical(as.vector(pdist(back, progress = FALSE)), as.vector(pdist(x, progress = FALSE)))
})

test_that("pcf_save and pcf_load round-trip and check the file", {
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  x <- list(cbind(c(0, 1), c(3, 0)), cbind(0.5, 1))
  path <- file.path(dir, "x.mpcf")
  expect_identical(pcf_save(x, path), path)
  expect_identical(list.files(dir), "x.mpcf")
  y <- pcf_load(path)
  expect_s3_class(y, "mpcf_pcfs")
  expect_identical(unname(as.list(y)), lapply(x, function(m) { colnames(m) <- c("t", "v"); m }))
  # the format, written by hand: magic, version 1, float64, ndim 1, n 2, total 3, ...
  bytes <- readBin(path, "raw", 1000)
  expect_identical(bytes[1:8], as.raw(c(0x89, 0x4d, 0x50, 0x43, 0x46, 0x0d, 0x0a, 0x1a)))
  expect_identical(readBin(bytes[9:16], "integer", 2, size = 4, endian = "little"), c(1L, 2L))
  expect_identical(length(bytes), 40L + 8L + 24L + 48L + 8L)

  csv <- file.path(dir, "x.csv")
  writeLines(c("id,t,v", "a,0,1"), csv)
  expect_error(pcf_load(csv), "not an mpcf PCF file", class = "mpcf_error")
  writeBin(bytes[1:100], file.path(dir, "short.mpcf"))
  expect_error(pcf_load(file.path(dir, "short.mpcf")), "truncated", class = "mpcf_error")
  flipped <- bytes
  flipped[90] <- as.raw(bitwXor(as.integer(flipped[90]), 1L))
  writeBin(flipped, file.path(dir, "flip.mpcf"))
  expect_error(pcf_load(file.path(dir, "flip.mpcf")), "checksum", class = "mpcf_error")
  expect_error(pcf_load(file.path(dir, "missing.mpcf")), "No such file", class = "mpcf_error")
  expect_error(pcf_save(x, file.path(dir, "no", "such.mpcf")), "No such file", class = "mpcf_error")
  expect_error(pcf_load(c("a", "b")), "single file name", class = "mpcf_error")
})
