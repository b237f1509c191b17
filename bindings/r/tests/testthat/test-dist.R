# The `dist` object pdist returns: class, size, labels, order, and that
# R's tools for distances accept it.

named_input <- function() {
  set.seed(21)
  x <- random_pcfs(6)
  names(x) <- c("a", "b", "c", "d", "e", "f")
  x
}

test_that("pdist returns a dist in R's order, equal to as.dist of the reference matrix", {
  x <- named_input()
  d <- pdist(x, progress = FALSE)
  ref <- as.dist(ref_pdist_matrix(x))
  expect_s3_class(d, "dist")
  expect_identical(attr(d, "Size"), 6L)
  expect_identical(attr(d, "Labels"), names(x))
  expect_false(attr(d, "Diag"))
  expect_false(attr(d, "Upper"))
  expect_identical(attr(d, "method"), "L1")
  expect_identical(length(d), 15L)
  expect_equal(as.vector(d), as.vector(ref), tolerance = 1e-12)
  # the first entries are (a, b), (a, c): R's column-wise lower triangle
  expect_equal(as.vector(d)[1:2], c(ref_lp(x$a, x$b), ref_lp(x$a, x$c)),
               tolerance = 1e-12)
  expect_equal(as.vector(d)[15], ref_lp(x$e, x$f), tolerance = 1e-12)
})

test_that("the method attribute names the exponent", {
  x <- named_input()
  expect_identical(attr(pdist(x, p = 2, progress = FALSE), "method"), "L2")
  expect_identical(attr(pdist(x, p = 3, progress = FALSE), "method"), "Lp")
  expect_identical(attr(pdist(x, p = 3, progress = FALSE), "p"), 3)
  expect_identical(attr(pdist(x, p = Inf, progress = FALSE), "method"), "Linf")
})

test_that("as.matrix gives the symmetric matrix with a zero diagonal and the names", {
  x <- named_input()
  m <- as.matrix(pdist(x, progress = FALSE))
  expect_identical(dimnames(m), list(names(x), names(x)))
  expect_identical(unname(diag(m)), rep(0, 6))
  expect_identical(m, t(m))
  expect_equal(m, ref_pdist_matrix(x), tolerance = 1e-12, ignore_attr = TRUE)
})

test_that("hclust and cmdscale accept the result", {
  # Three functions at L1 distances d(a, b) = 1, d(a, c) = 5, d(b, c) = 4:
  # indicator functions of [0, 1), [0, 2) and [0, 6).
  x <- list(a = cbind(c(0, 1), c(1, 0)), b = cbind(c(0, 2), c(1, 0)),
            c = cbind(c(0, 6), c(1, 0)))
  d <- pdist(x, progress = FALSE)
  expect_identical(as.vector(d), c(1, 5, 4))
  hc <- hclust(d, method = "complete")
  expect_identical(hc$labels, c("a", "b", "c"))
  expect_identical(hc$merge, rbind(c(-1L, -2L), c(-3L, 1L)))
  expect_identical(hc$height, c(1, 5))
  expect_identical(hc$dist.method, "L1")
  expect_identical(cutree(hc, k = 2), c(a = 1L, b = 1L, c = 2L))
  pts <- cmdscale(d, k = 1)
  expect_identical(rownames(pts), c("a", "b", "c"))
  # The points lie on a line: the coordinates reproduce the distances.
  expect_equal(as.vector(dist(pts)), c(1, 5, 4), tolerance = 1e-9)
})

test_that("unnamed input gives a dist without labels", {
  set.seed(22)
  d <- pdist(random_pcfs(4), progress = FALSE)
  expect_null(attr(d, "Labels"))
  expect_identical(attr(d, "Size"), 4L)
})

test_that("collections of zero and one functions give empty dists", {
  d0 <- pdist(list(), progress = FALSE)
  expect_s3_class(d0, "dist")
  expect_identical(attr(d0, "Size"), 0L)
  expect_length(d0, 0L)
  d1 <- pdist(list(only = cbind(0, 0)), progress = FALSE)
  expect_identical(attr(d1, "Size"), 1L)
  expect_length(d1, 0L)
  expect_identical(as.matrix(d1), matrix(0, 1, 1, dimnames = list("only", "only")))
  expect_identical(dim(l2_kernel(list(), progress = FALSE)), c(0L, 0L))
  expect_identical(dim(cdist(list(), list(cbind(0, 1)), progress = FALSE)), c(0L, 1L))
})

test_that("data frame ids become the labels, in order of first appearance", {
  df <- data.frame(id = c("q", "p", "q", "r", "p"),
                   t = c(0, 0, 1, 5, 2),
                   v = c(3, 1, 0, 2, 0))
  d <- pdist(df, progress = FALSE)
  expect_identical(attr(d, "Labels"), c("q", "p", "r"))
  # q = 3 on [0, 1); p = 1 on [0, 2); r = 2 from t = 5 on (infinite tail)
  expect_identical(as.vector(d), c(3, Inf, Inf))
})
