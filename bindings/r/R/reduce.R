# Reductions without the n x n matrix: k nearest neighbours and kernel
# matrix-vector products (libmpcf reduces each block as it is computed).

# A count argument (knn's and landscape's k) as the double the glue hands
# to libmpcf's uint64: a single whole number that R's matrices and labels
# can carry (0 .. .Machine$integer.max). libmpcf judges its range (k >= 1;
# for knn also k <= the candidates), and its message names the rule.
.check_count <- function(k, what, call) {
  if (!is.numeric(k) || length(k) != 1L || is.na(k) || k < 0 || k != round(k) ||
      k > .Machine$integer.max) {
    .abort(sprintf("k must be a single whole number of %s; it is %s", what,
                   if (is.numeric(k) && length(k) == 1L) format(k) else .describe(k)), call)
  }
  as.double(k)
}

.kernels <- c(l2 = 0L, gaussian = 1L, laplacian = 2L)

knn <- function(x, k, y = NULL, p = 1, window = NULL, backend = "auto", threads = NULL,
                progress = interactive(), components = FALSE) {
  call <- sys.call()
  xs <- .objects(.as_pcfs(x, "x", call), components, call)
  ys <- if (is.null(y)) NULL else .objects(.as_pcfs(y, "y", call), components, call)
  k <- .check_count(k, "neighbours", call)
  p <- .check_p(p, call)
  a <- .run_args(window, backend, threads, progress, call)
  on.exit(a$bar$close(), add = TRUE)
  res <- .mpcf_call(.Call(C_knn, xs$ptr, if (is.null(ys)) NULL else ys$ptr, p, k, a$window,
                          a$backend, a$threads, a$bar$callback), call)
  if (!is.null(names(xs))) {
    rownames(res$index) <- names(xs)
    rownames(res$distance) <- names(xs)
  }
  res
}

kernel_matvec <- function(x, v, y = NULL, kernel = c("l2", "gaussian", "laplacian"),
                          p = NULL, sigma = 1, window = NULL, backend = "auto",
                          threads = NULL, progress = interactive(), components = FALSE) {
  call <- sys.call()
  xs <- .objects(.as_pcfs(x, "x", call), components, call)
  ys <- if (is.null(y)) NULL else .objects(.as_pcfs(y, "y", call), components, call)
  if (!is.character(kernel) || length(kernel) < 1L || is.na(kernel[1]) ||
      !(kernel[1] %in% names(.kernels))) {
    .abort(sprintf("kernel must be one of \"l2\", \"gaussian\", \"laplacian\"; it is %s",
                   .describe(kernel)), call)
  }
  kernel <- kernel[1]
  if (is.null(p)) p <- if (kernel == "laplacian") 1 else 2
  p <- .check_p(p, call)
  if (!is.numeric(sigma) || length(sigma) != 1L || is.na(sigma)) {
    .abort(sprintf("sigma must be a single number > 0; it is %s", .describe(sigma)), call)
  }
  rows <- length(if (is.null(ys)) xs else ys)
  vector <- is.null(dim(v))
  if (!is.numeric(v) || (vector && length(v) != rows) ||
      (!vector && (length(dim(v)) != 2L || nrow(v) != rows))) {
    .abort(sprintf("v must be a numeric vector of length %d or a matrix with %d rows (%s)", rows,
                   rows, if (is.null(ys)) "length(x)" else "length(y)"), call)
  }
  m <- matrix(as.double(v), nrow = rows)
  a <- .run_args(window, backend, threads, progress, call)
  on.exit(a$bar$close(), add = TRUE)
  out <- .mpcf_call(.Call(C_kernel_matvec, xs$ptr, if (is.null(ys)) NULL else ys$ptr,
                          .kernels[[kernel]], p, as.double(sigma), m, a$window, a$backend,
                          a$threads, a$bar$callback), call)
  if (vector) out <- out[, 1]
  out
}
