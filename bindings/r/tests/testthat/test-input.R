# The accepted input forms describe the same functions.

test_that("a list, a data frame and an mpcf_pcfs object give the same result", {
  set.seed(31)
  x <- random_pcfs(7)
  names(x) <- paste0("f", 1:7)
  df <- do.call(rbind, lapply(names(x), function(nm)
    data.frame(id = nm, t = x[[nm]][, 1], v = x[[nm]][, 2])))
  # interleave the functions' rows: first rows of all, then second rows, ...
  rank_in_id <- ave(seq_len(nrow(df)), df$id, FUN = seq_along)
  df <- df[order(rank_in_id, method = "radix"), ]
  expect_false(identical(df$id, sort(df$id)))
  d_list <- pdist(x, progress = FALSE)
  d_df <- pdist(df, progress = FALSE)
  d_obj <- pdist(as_pcfs(x), progress = FALSE)
  expect_identical(as.vector(d_df), as.vector(d_list))
  expect_identical(as.vector(d_obj), as.vector(d_list))
  expect_identical(attr(d_df, "Labels"), names(x))
  expect_identical(attr(d_obj, "Labels"), names(x))
  expect_equal(as.vector(d_list), as.vector(as.dist(ref_pdist_matrix(x))),
               tolerance = 1e-12)
})

test_that("rows of different ids may interleave; each id keeps its row order", {
  df <- data.frame(id = c(2, 1, 2, 1), t = c(0, 0, 1, 3), v = c(5, 1, 0, 0))
  d <- pdist(df, progress = FALSE)
  # 2: 5 on [0, 1); 1: 1 on [0, 3) -> 4 * 1 + 1 * 2 = 6
  expect_identical(attr(d, "Labels"), c("2", "1"))
  expect_identical(as.vector(d), 6)
})

test_that("factor ids work and unused levels are ignored", {
  df <- data.frame(id = factor(c("b", "b", "a"), levels = c("z", "a", "b")),
                   t = c(0, 1, 0), v = c(1, 0, 0))
  d <- pdist(df, progress = FALSE)
  expect_identical(attr(d, "Labels"), c("b", "a"))
  expect_identical(as.vector(d), 1)
})

test_that("integer input is converted to double", {
  xi <- list(cbind(c(0L, 1L), c(3L, 0L)), cbind(c(0L, 2L), c(1L, 0L)))
  expect_true(is.integer(xi[[1]]))
  expect_identical(as.vector(pdist(xi, progress = FALSE)), 3)
  expect_identical(lp_distance(xi[[1]], xi[[2]]), 3)
  dfi <- data.frame(id = c(1L, 1L), t = c(0L, 2L), v = c(4L, 0L))
  expect_identical(lp_norm(dfi), c(`1` = 8))
})

test_that("as_pcfs objects print, and report length and names", {
  x <- as_pcfs(list(a = cbind(c(0, 1), c(3, 0)), b = cbind(c(0, 2, 4), c(1, 2, 0))))
  expect_s3_class(x, "mpcf_pcfs")
  expect_identical(length(x), 2L)
  expect_identical(names(x), c("a", "b"))
  expect_output(print(x), "<mpcf_pcfs: 2 PCFs, 5 breakpoints, float64>", fixed = TRUE)
  expect_identical(as_pcfs(x), x)
  expect_null(names(as_pcfs(list(cbind(0, 1)))))
})

test_that("many handles are released by the garbage collector without trouble", {
  for (i in 1:200) as_pcfs(list(cbind(c(0, 1), c(i, 0))))
  gc()
  expect_identical(lp_norm(list(cbind(c(0, 1), c(7, 0)))), 7)
})

test_that("version and build information come from the loaded library", {
  expect_s3_class(mpcf_version(), "package_version")
  expect_true(mpcf_version() >= "0.1.0")
  expect_identical(substr(mpcf_build_info(), 1, nchar(paste0("libmpcf ", mpcf_version(), ";"))),
                   paste0("libmpcf ", mpcf_version(), ";"))
})
