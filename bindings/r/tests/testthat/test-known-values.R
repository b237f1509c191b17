# Values worked out by hand.

f1 <- cbind(c(0, 1), c(3, 0))          # 3 on [0, 1)
g1 <- cbind(c(0, 2), c(1, 0))          # 1 on [0, 2)
f2 <- cbind(c(0, 2, 3), c(10, 5, 0))   # 10 on [0, 2), 5 on [2, 3)
g2 <- cbind(c(0, 6), c(5, 0))          # 5 on [0, 6)

test_that("L1 distances match the hand-computed values", {
  # |3 - 1| * 1 + |0 - 1| * 1 = 3
  expect_identical(lp_distance(f1, g1), 3)
  # 5 * 2 + 0 * 1 + 5 * 3 = 25
  expect_identical(lp_distance(f2, g2), 25)
  expect_identical(as.vector(pdist(list(f1, g1), progress = FALSE)), 3)
  expect_identical(as.vector(pdist(list(f2, g2), progress = FALSE)), 25)
})

test_that("L2 and L-infinity distances match the hand-computed values", {
  # sqrt(2^2 * 1 + 1^2 * 1) = sqrt(5)
  expect_equal(lp_distance(f1, g1, p = 2), sqrt(5), tolerance = 1e-14)
  expect_identical(lp_distance(f1, g1, p = Inf), 2)
  # (5^3 * 2 + 5^3 * 3)^(1/3) = 625^(1/3)
  expect_equal(lp_distance(f2, g2, p = 3), 625^(1 / 3), tolerance = 1e-14)
})

test_that("the L2 kernel matches the hand-computed matrix", {
  x <- list(cbind(c(0, 3), c(4, 0)), cbind(c(0, 3), c(2, 0)))
  k <- l2_kernel(x, progress = FALSE)
  expect_identical(k, matrix(c(48, 24, 24, 12), 2, 2))
})

test_that("a window restricts the integral to [a, b)", {
  # on [0.5, 1.5): |3 - 1| * 0.5 + |0 - 1| * 0.5 = 1.5
  expect_identical(lp_distance(f1, g1, window = c(0.5, 1.5)), 1.5)
  # constant functions 1 and 3 from t = 0, on [-1, 4): 2 * 4 = 8
  one <- cbind(0, 1)
  three <- cbind(0, 3)
  expect_identical(lp_distance(one, three, window = c(-1, 4)), 8)
  expect_identical(as.vector(pdist(list(one, three), window = c(-1, 4),
                                   progress = FALSE)), 8)
})

test_that("a non-zero integrand on an unbounded piece gives Inf, a zero one gives 0", {
  one <- cbind(0, 1)
  minus <- cbind(0, -2)
  expect_identical(lp_distance(one, cbind(0, 3)), Inf)
  expect_identical(lp_distance(one, one), 0)
  expect_identical(l2_kernel(list(one, minus), progress = FALSE),
                   matrix(c(Inf, -Inf, -Inf, Inf), 2, 2))
  # equal tails: only the bounded part counts, exactly
  a <- cbind(c(0, 1), c(2, 7))
  b <- cbind(c(0, 1), c(5, 7))
  expect_identical(lp_distance(a, b), 3)
  expect_identical(lp_norm(list(one), window = c(-Inf, 2)), 2)
})

test_that("lp_norm is the distance to the zero function", {
  x <- list(a = f1, b = f2)
  expect_identical(lp_norm(x), c(a = 3, b = 25))
  # sqrt(3^2 * 1) = 3, sqrt(10^2 * 2 + 5^2 * 1) = 15
  expect_equal(lp_norm(x, p = 2), c(a = 3, b = 15), tolerance = 1e-14)
  expect_identical(lp_norm(x, p = Inf), c(a = 3, b = 10))
})

test_that("cdist matches hand-computed values and keeps the orientation", {
  # rows are x, columns y: d(f1, g1) = 3, d(f2, g1) = 9 * 2 + 5 = 23,
  # d(f1, g2) = 2 + 5 * 5 = 27, d(f2, g2) = 25, d(f1, f1) = 0,
  # d(f2, f1) = 7 + 10 + 5 = 22
  m <- cdist(list(p = f1, q = f2), list(u = g1, v = g2, w = f1), progress = FALSE)
  expect_identical(m, matrix(c(3, 23, 27, 25, 0, 22), 2, 3,
                             dimnames = list(c("p", "q"), c("u", "v", "w"))))
})
