# Agreement with the plain-R reference (helper-reference.R) on random input.

test_that("the reference itself reproduces the hand-computed values", {
  expect_identical(ref_lp(cbind(c(0, 1), c(3, 0)), cbind(c(0, 2), c(1, 0))), 3)
  expect_identical(ref_lp(cbind(c(0, 2, 3), c(10, 5, 0)), cbind(c(0, 6), c(5, 0))), 25)
  expect_identical(ref_inner(cbind(c(0, 3), c(4, 0)), cbind(c(0, 3), c(2, 0))), 24)
  expect_identical(ref_lp(cbind(0, 1), cbind(0, 2)), Inf)
})

for (p in c(1, 2, 3.5, Inf)) {
  test_that(sprintf("pdist agrees with the reference for p = %s", p), {
    set.seed(100 + match(p, c(1, 2, 3.5, Inf)))
    x <- random_pcfs(25)
    d <- pdist(x, p = p, progress = FALSE)
    ref <- ref_pdist_matrix(x, p)
    expect_equal(as.matrix(d), ref, tolerance = 1e-12, ignore_attr = TRUE)
  })
}

test_that("pdist agrees with the reference on a window, for non-vanishing functions", {
  set.seed(11)
  x <- c(random_pcfs(10, tail = 3), random_pcfs(10), random_pcfs(5, tail = -1))
  for (w in list(c(-1, 4), c(0.5, 2.25), c(-Inf, 1))) {
    d <- pdist(x, p = 2, window = w, progress = FALSE)
    expect_equal(as.matrix(d), ref_pdist_matrix(x, 2, w), tolerance = 1e-12,
                 ignore_attr = TRUE)
  }
  # Without a window, different tails make the distance infinite.
  d <- as.matrix(pdist(x, progress = FALSE))
  expect_equal(d, ref_pdist_matrix(x, 1), tolerance = 1e-12, ignore_attr = TRUE)
  expect_true(all(is.infinite(d[1:10, 11:20])))
})

test_that("cdist agrees with the reference", {
  set.seed(12)
  x <- random_pcfs(13)
  y <- random_pcfs(7)
  for (p in c(1, 2.5, Inf)) {
    m <- cdist(x, y, p = p, progress = FALSE)
    expect_identical(dim(m), c(13L, 7L))
    expect_equal(m, ref_cross(x, y, function(f, g) ref_lp(f, g, p)),
                 tolerance = 1e-12)
  }
})

test_that("l2_kernel agrees with the reference, alone and across", {
  set.seed(13)
  x <- random_pcfs(17)
  y <- random_pcfs(4, tail = 2)
  k <- l2_kernel(x, progress = FALSE)
  expect_equal(k, ref_cross(x, x, ref_inner), tolerance = 1e-12)
  expect_identical(k, t(k))
  w <- c(-0.5, 3)
  kxy <- l2_kernel(x, y, window = w, progress = FALSE)
  expect_equal(kxy, ref_cross(x, y, function(f, g) ref_inner(f, g, w)),
               tolerance = 1e-12)
})

test_that("lp_distance and lp_norm agree with the reference", {
  set.seed(14)
  x <- random_pcfs(12)
  zero <- cbind(0, 0)
  for (p in c(1, 2, 4, Inf)) {
    expect_equal(lp_norm(x, p = p), vapply(x, ref_lp, 0, g = zero, p = p),
                 tolerance = 1e-12)
    expect_equal(lp_distance(x[[1]], x[[2]], p = p), ref_lp(x[[1]], x[[2]], p),
                 tolerance = 1e-12)
  }
})

test_that("the number of threads does not change a single bit", {
  set.seed(15)
  x <- random_pcfs(60)
  d1 <- pdist(x, p = 2, threads = 1, progress = FALSE)
  d2 <- pdist(x, p = 2, threads = 2, progress = FALSE)
  expect_identical(unclass(d1)[seq_along(d1)], unclass(d2)[seq_along(d2)])
  expect_identical(l2_kernel(x, threads = 1, progress = FALSE),
                   l2_kernel(x, threads = 2, progress = FALSE))
})

test_that("backend = \"cpu\" gives the same result as the reference", {
  set.seed(16)
  x <- random_pcfs(9)
  expect_equal(as.matrix(pdist(x, backend = "cpu", progress = FALSE)),
               ref_pdist_matrix(x), tolerance = 1e-12, ignore_attr = TRUE)
})
