# plot() and lines() for collections: PCFs as steps, PLFs as lines through
# their breakpoints, one line per function.

# The right end of the drawing for breakpoint times in [lo, hi]: hi plus 5%
# of hi - lo, or hi + 1 when lo == hi.
.right_end <- function(lo, hi) {
  span <- hi - lo
  hi + if (span > 0) 0.05 * span else 1
}

# The points drawn: for each function its breakpoints followed by
# (right, last value), as list(x = ..., y = ...); `right` defaults to
# .right_end over all breakpoint times. Returns list(lines, right, linear).
.plot_vertices <- function(x, right = NULL, call = sys.call(-1)) {
  x <- .as_pcfs(x, "x", call)
  fs <- as.list(x)
  times <- unlist(lapply(fs, function(f) f[, 1]), use.names = FALSE)
  if (is.null(right)) {
    right <- if (length(times)) .right_end(min(times), max(times)) else 1
  } else if (!is.numeric(right) || length(right) != 1L || !is.finite(right)) {
    .abort(sprintf("right must be a single finite number; it is %s", .describe(right)), call)
  }
  lines <- lapply(fs, function(f) {
    m <- nrow(f)
    list(x = unname(c(f[, 1], right)), y = unname(c(f[, 2], f[m, 2])))
  })
  names(lines) <- names(fs)
  list(lines = lines, right = right, linear = isTRUE(.subset2(x, "linear")))
}

.draw_lines <- function(v, col, lty, lwd, ...) {
  n <- length(v$lines)
  col <- rep_len(col, n)
  lty <- rep_len(lty, n)
  lwd <- rep_len(lwd, n)
  type <- if (v$linear) "l" else "s"
  for (i in seq_len(n)) {
    graphics::lines(v$lines[[i]]$x, v$lines[[i]]$y, type = type,
                    col = col[i], lty = lty[i], lwd = lwd[i], ...)
  }
}

plot.mpcf_pcfs <- function(x, ..., right = NULL, col = seq_len(max(1L, length(x))),
                           lty = 1, lwd = 1, xlim = NULL, ylim = NULL,
                           xlab = "t", ylab = "f(t)") {
  v <- .plot_vertices(x, right, sys.call())
  xs <- unlist(lapply(v$lines, `[[`, "x"), use.names = FALSE)
  ys <- unlist(lapply(v$lines, `[[`, "y"), use.names = FALSE)
  if (is.null(xlim)) xlim <- if (length(xs)) range(xs) else c(0, 1)
  if (is.null(ylim)) ylim <- if (length(ys)) range(ys) else c(0, 1)
  graphics::plot.default(NA, type = "n", xlim = xlim, ylim = ylim, xlab = xlab, ylab = ylab, ...)
  .draw_lines(v, col, lty, lwd)
  invisible(v$lines)
}

lines.mpcf_pcfs <- function(x, ..., right = NULL, col = seq_len(max(1L, length(x))),
                            lty = 1, lwd = 1) {
  v <- .plot_vertices(x, right, sys.call())
  .draw_lines(v, col, lty, lwd, ...)
  invisible(v$lines)
}
