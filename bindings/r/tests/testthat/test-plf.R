# Piecewise linear functions, landscapes, silhouettes and objects of several
# functions, against values worked out by hand.

tent <- cbind(c(0, 1, 2), c(0, 1, 0))
zero <- cbind(0, 0)

test_that("PLFs interpolate and their distances are exact", {
  x <- plfs(list(tent = tent, zero = zero, ramp = cbind(c(0, 2), c(0, 2))))
  expect_s3_class(x, "mpcf_pcfs")
  expect_output(print(x), "3 PLFs")
  expect_identical(as.matrix(pdist(x, progress = FALSE))[1, 2], 1)   # the area of the tent
  expect_equal(as.matrix(pdist(x, p = 2, progress = FALSE))[1, 2], sqrt(2 / 3))
  expect_identical(as.matrix(pdist(x, p = Inf, progress = FALSE))[1, 2], 1)
  expect_identical(lp_distance(tent, zero, type = "linear"), 1)
  expect_identical(lp_distance(tent, zero, p = 2), 1)   # as PCFs: 1 on [1, 2)
  expect_identical(unname(pcf_evaluate(x, c(0.5, 1.5, 3))),
                   rbind(c(0.5, 0.5, 0), c(0, 0, 0), c(0.5, 1.5, 2)))
  expect_identical(length(as_pcfs(list(tent), type = "linear")), 1L)
  df <- data.frame(id = c("a", "a", "a"), t = c(0, 1, 2), v = c(0, 1, 0))
  expect_identical(as.numeric(lp_norm(as_pcfs(df, type = "linear"))), 1)
  expect_error(as_pcfs(list(tent), type = "cubic"), "constant", class = "mpcf_error")
})

test_that("mixing PCFs and PLFs is an error naming both", {
  e <- expect_error(cdist(plfs(list(tent)), list(tent), progress = FALSE), class = "mpcf_error")
  expect_match(conditionMessage(e), "piecewise linear functions (PLFs)", fixed = TRUE)
  expect_match(conditionMessage(e), "piecewise constant functions (PCFs)", fixed = TRUE)
})

# Barcode a: (0, 2): lambda_1 = (0,0),(1,1),(2,0), lambda_2 = 0. Barcode b:
# (0, 4), (1, 3): lambda_1 = (0,0),(2,2),(4,0), lambda_2 = (1,0),(2,1),(3,0).
barcodes <- list(a = rbind(c(0, 2)), b = rbind(c(0, 4), c(1, 3)))

test_that("landscapes have the hand-worked breakpoints", {
  L <- landscape(barcodes, k = 2)
  expect_identical(length(L), 4L)
  expect_output(print(L), "4 PLFs.*2 per object")
  got <- lapply(as.list(L), unname)
  expect_identical(got[[1]], cbind(c(0, 1, 2), c(0, 1, 0)))
  expect_identical(got[[2]], cbind(0, 0))
  expect_identical(got[[3]], cbind(c(0, 2, 4), c(0, 2, 0)))
  expect_identical(got[[4]], cbind(c(1, 2, 3), c(0, 1, 0)))
  expect_identical(names(L), c("a: lambda_1", "a: lambda_2", "b: lambda_1", "b: lambda_2"))
})

test_that("landscape distances over objects of k components", {
  L <- landscape(barcodes, k = 2)
  # L1: |lambda_1 - lambda_1'| integrates to 4 - 1 = 3, lambda_2' to 1.
  d <- pdist(L, components = TRUE, progress = FALSE)
  expect_s3_class(d, "dist")
  expect_identical(attr(d, "Size"), 2L)
  expect_identical(attr(d, "Labels"), c("a", "b"))
  expect_identical(as.numeric(d), 4)
  # L2: the lambda_1 difference squared integrates to 4, lambda_2' squared to 2/3.
  expect_equal(as.numeric(pdist(L, p = 2, components = TRUE, progress = FALSE)), sqrt(4 + 2 / 3))
  expect_identical(as.numeric(pdist(L, components = 2, progress = FALSE)), 4)
  # The collection itself still holds single functions.
  expect_identical(attr(pdist(L, progress = FALSE), "Size"), 4L)
  expect_identical(unname(cdist(L, L, components = TRUE, progress = FALSE)),
                   rbind(c(0, 4), c(4, 0)))
  # Kernel: 2/3, 16/3 + 2/3 and the cross term 1/3 + 1 - 1/3 = 1.
  expect_equal(unname(l2_kernel(L, components = TRUE, progress = FALSE)),
               rbind(c(2 / 3, 1), c(1, 6)))
  nn <- knn(L, 1, components = TRUE, progress = FALSE)
  expect_identical(unname(nn$index[, 1]), c(2L, 1L))
  expect_identical(unname(nn$distance[, 1]), c(4, 4))
  expect_equal(kernel_matvec(L, c(1, 0), components = TRUE, progress = FALSE), c(2 / 3, 1))
  expect_error(pdist(L, components = 3, progress = FALSE), "does not divide",
               class = "mpcf_error")
})

test_that("infinite bars need clip; silhouettes are weighted means of tents", {
  e <- expect_error(landscape(rbind(c(1, Inf)), 1), class = "mpcf_error")
  expect_match(conditionMessage(e), "barcode 0, bar 0")
  expect_identical(unname(pcf_evaluate(landscape(rbind(c(1, Inf)), 1, clip = 3), c(2, 3))),
                   cbind(1, 0))
  # k >= 1 is libmpcf's rule (its message); R checks what its types carry.
  expect_error(landscape(barcodes, 0), "k = 0: ask for at least one landscape (k >= 1)",
               fixed = TRUE, class = "mpcf_error")
  expect_error(landscape(barcodes, -1), "k must be a single whole number of landscapes; it is -1",
               fixed = TRUE, class = "mpcf_error")
  expect_error(landscape(barcodes, 1.5), "it is 1.5", class = "mpcf_error")
  expect_error(landscape(barcodes, NA), "it is a logical vector of length 1",
               class = "mpcf_error")
  # q = 1, bars (0, 2) and (0, 4): weights 2 and 4; at 1: (2 + 4) / 6 = 1; at
  # 2: (0 + 8) / 6 = 4/3. q = 0: (1 + 1) / 2 and (0 + 2) / 2.
  S <- silhouette(rbind(c(0, 2), c(0, 4)))
  expect_identical(length(S), 1L)
  expect_equal(as.numeric(pcf_evaluate(S, c(1, 2))), c(1, 4 / 3))
  expect_equal(as.numeric(pcf_evaluate(silhouette(rbind(c(0, 2), c(0, 4)), q = 0), c(1, 2))),
               c(1, 1))
  expect_error(silhouette(rbind(c(0, 2)), q = "a"), "q must be", class = "mpcf_error")
})

test_that("PLF files keep their kind", {
  path <- tempfile(fileext = ".mpcf")
  on.exit(unlink(path))
  L <- landscape(barcodes, k = 2)
  pcf_save(L, path)
  back <- pcf_load(path)
  expect_output(print(back), "PLFs")
  expect_identical(unname(lapply(as.list(back), unname)), unname(lapply(as.list(L), unname)))
})
