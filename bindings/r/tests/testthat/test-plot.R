# plot() and lines() of collections: the coordinates handed to the graphics
# engine (read back from the recorded display list of a png() device)
# against values worked out by hand. The inputs span 20 time units, so the
# lines end at the largest time + 0.05 * 20 = largest time + 1.

# The x, y and type of every line drawn (the C_plotXY calls other than the
# empty type = "n" one that sets up the plot), in order.
drawn <- function(expr) {
  f <- tempfile(fileext = ".png")
  grDevices::png(f)
  grDevices::dev.control("enable")
  force(expr)
  p <- grDevices::recordPlot()
  grDevices::dev.off()
  expect_gt(file.size(f), 0)
  unlink(f)
  out <- list()
  for (e in p[[1]]) {
    args <- e[[2]]
    if (identical(args[[1]]$name, "C_plotXY") && !identical(args[[3]], "n")) {
      out[[length(out) + 1L]] <- list(x = args[[2]]$x, y = args[[2]]$y, type = args[[3]])
    }
  }
  out
}

test_that("PCFs are drawn as steps through their breakpoints to a common right end", {
  x <- as_pcfs(list(f = cbind(c(0, 1), c(3, 0)), g = cbind(c(0, 2, 20), c(1, 5, 0))))
  got <- drawn(plot(x))
  expect_identical(got, list(list(x = c(0, 1, 21), y = c(3, 0, 0), type = "s"),
                             list(x = c(0, 2, 20, 21), y = c(1, 5, 0, 0), type = "s")))
})

test_that("PLFs are drawn as lines, and lines() adds to the current plot", {
  p <- plfs(list(cbind(c(0, 10, 20), c(0, 10, 0)), cbind(c(5, 15), c(2, -1))))
  got <- drawn({
    plot(as_pcfs(list(cbind(0, 1))), right = 30)
    lines(p, col = "red")
  })
  expect_identical(got, list(list(x = c(0, 30), y = c(1, 1), type = "s"),
                             list(x = c(0, 10, 20, 21), y = c(0, 10, 0, 0), type = "l"),
                             list(x = c(5, 15, 21), y = c(2, -1, -1), type = "l")))
})

test_that("a landscape is one line per level through its tents", {
  # Barcode (0, 4), (1, 3): lambda_1(t) = max(0, min(t, 4 - t)),
  # lambda_2(t) = max(0, min(t - 1, 3 - t)).
  l <- landscape(list(cbind(c(0, 1), c(4, 3))), k = 2)
  got <- drawn(plot(l, right = 6))
  expect_length(got, 2L)
  lam <- list(function(t) pmax(0, pmin(t, 4 - t)), function(t) pmax(0, pmin(t - 1, 3 - t)))
  for (j in 1:2) {
    n <- length(got[[j]]$x)
    expect_identical(got[[j]]$x[n], 6)
    expect_identical(got[[j]]$y, c(lam[[j]](got[[j]]$x[-n]), 0))
    expect_identical(got[[j]]$type, "l")
  }
  expect_true(any(got[[1]]$x == 2 & got[[1]]$y == 2))
})

test_that("the vertices, the right end and its checks", {
  v <- mpcf:::.plot_vertices(as_pcfs(list(cbind(2, 7))))
  expect_identical(v$right, 3)   # one time: a tail of 1
  expect_identical(v$lines[[1]], list(x = c(2, 3), y = c(7, 7)))
  expect_false(v$linear)
  expect_error(plot(as_pcfs(list(cbind(0, 1))), right = "a"), "right must be a single finite number",
               class = "mpcf_error")
})
