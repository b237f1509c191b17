# knn and kernel_matvec against the plain-R reference on the full matrices.

test_that("knn returns the neighbours a sort of the reference matrix gives", {
  set.seed(21)
  x <- random_pcfs(25)
  D <- ref_pdist_matrix(x, p = 1)
  nn <- knn(x, 4, progress = FALSE)
  expect_true(is.integer(nn$index))
  expect_identical(dim(nn$index), c(25L, 4L))
  for (i in seq_along(x)) {
    others <- setdiff(seq_along(x), i)
    want <- others[order(D[i, others], others)][1:4]
    expect_identical(nn$index[i, ], as.integer(want))
    expect_equal(nn$distance[i, ], D[i, want], tolerance = 1e-12)
  }
})

test_that("knn against y: ties go to the smaller index, 1-based", {
  x <- list(cbind(c(0, 1), c(1, 0)), cbind(c(0, 1), c(2, 0)))
  y <- list(cbind(c(0, 1), c(3, 0)), cbind(c(0, 1), c(1, 0)), cbind(c(0, 1), c(3, 0)),
            cbind(c(0, 1), c(1, 0)))
  nn <- knn(x, 3, y, progress = FALSE)
  # x1 = 1: distances to y = 2, 0, 2, 0 -> y2, y4, y1
  expect_identical(nn$index[1, ], c(2L, 4L, 1L))
  expect_identical(nn$distance[1, ], c(0, 0, 2))
  # x2 = 2: distances 1, 1, 1, 1 -> y1, y2, y3
  expect_identical(nn$index[2, ], c(1L, 2L, 3L))
  expect_error(knn(x, 5, y, progress = FALSE), "k = 5 is more than the 4 functions of Y",
               class = "mpcf_error")
  expect_error(knn(x, 0, progress = FALSE), "k = 0; k must be at least 1", class = "mpcf_error")
  expect_error(knn(x, -1, progress = FALSE), "k must be a single whole number of neighbours; it is -1")
  expect_error(knn(x, 1.5, progress = FALSE), "it is 1.5")
  expect_error(knn(x, 2, progress = FALSE), "k = 2 is more than the 1 other functions")
})

test_that("kernel_matvec matches the reference kernel matrix times v", {
  set.seed(22)
  x <- random_pcfs(18)
  y <- random_pcfs(11)
  v <- matrix(runif(11 * 2, -1, 1), 11, 2)
  K <- ref_cross(x, y, function(f, g) ref_inner(f, g))
  got <- kernel_matvec(x, v, y, progress = FALSE)
  expect_equal(got, K %*% v, tolerance = 1e-10, ignore_attr = TRUE)
  D <- ref_pdist_matrix(x, p = 2)
  w <- runif(18)
  got <- kernel_matvec(x, w, kernel = "gaussian", sigma = 3, progress = FALSE)
  expect_equal(got, as.vector(exp(-D^2 / 18) %*% w), tolerance = 1e-12)
  D1 <- ref_pdist_matrix(x, p = 1)
  got <- kernel_matvec(x, w, kernel = "laplacian", sigma = 2, progress = FALSE)
  expect_equal(got, as.vector(exp(-D1 / 2) %*% w), tolerance = 1e-12)
  expect_error(kernel_matvec(x, w[-1], progress = FALSE), "v must be a numeric vector of length 18")
  expect_error(kernel_matvec(x, w, kernel = "rbf", progress = FALSE), "kernel must be one of")
  expect_error(kernel_matvec(x, w, kernel = "gaussian", sigma = 0, progress = FALSE),
               "scale = 0", class = "mpcf_error")
  w[3] <- NA
  expect_error(kernel_matvec(x, w, progress = FALSE), "V\\[2\\]\\[0\\] = nan is not finite",
               class = "mpcf_error")
})
