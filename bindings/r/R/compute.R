# The user-facing computations. Each converts its input, checks its
# arguments in R (clear messages naming the argument), then hands over to
# the C++ glue, which writes libmpcf's results straight into the R vector or
# matrix that is returned.

.backends <- c(auto = 0L, cpu = 1L, cuda = 2L)

.check_p <- function(p, call) {
  if (!is.numeric(p) || length(p) != 1L || is.na(p)) {
    .abort(sprintf("p must be a single number >= 1 (or Inf); it is %s",
                   .describe(p)), call)
  }
  as.double(p)
}

.check_window <- function(window, call) {
  if (is.null(window)) return(NULL)
  if (!is.numeric(window) || length(window) != 2L) {
    .abort(sprintf("window must be NULL (the whole line) or c(a, b); it is %s",
                   .describe(window)), call)
  }
  as.double(window)
}

.check_backend <- function(backend, call) {
  if (!is.character(backend) || length(backend) != 1L ||
      is.na(backend) || !(backend %in% names(.backends))) {
    .abort(sprintf("backend must be one of \"auto\", \"cpu\", \"cuda\"; it is %s",
                   if (is.character(backend) && length(backend) == 1L)
                     sprintf("\"%s\"", backend) else .describe(backend)), call)
  }
  .backends[[backend]]
}

.check_threads <- function(threads, call) {
  if (is.null(threads)) return(0L)
  if (!is.numeric(threads) || length(threads) != 1L || is.na(threads) ||
      threads < 1 || threads != round(threads) || threads > .Machine$integer.max) {
    .abort(sprintf("threads must be NULL (all cores) or a positive whole number; it is %s",
                   if (is.numeric(threads) && length(threads) == 1L)
                     format(threads) else .describe(threads)), call)
  }
  as.integer(threads)
}

# progress: TRUE/FALSE (a txtProgressBar, shown once a computation is still
# running at a poll, every 0.1 s) or a function(done, total), which sees the
# progress at each poll and the finished state (total, total) once. Returns
# the callback the glue calls (or NULL) and a closer for on.exit().
.progress <- function(progress, call) {
  if (is.function(progress)) return(list(callback = progress, close = function() NULL))
  if (!is.logical(progress) || length(progress) != 1L || is.na(progress)) {
    .abort(sprintf("progress must be TRUE, FALSE or a function(done, total); it is %s",
                   .describe(progress)), call)
  }
  if (!progress) return(list(callback = NULL, close = function() NULL))
  bar <- NULL
  list(
    callback = function(done, total) {
      # A computation that finished before the first poll draws no bar.
      # Nor does one that has not sized its work yet (total 0).
      if (is.null(bar) && (total <= 0 || done >= total)) return(invisible(NULL))
      if (is.null(bar)) bar <<- utils::txtProgressBar(min = 0, max = max(total, 1), style = 3)
      utils::setTxtProgressBar(bar, done)
    },
    close = function() if (!is.null(bar)) close(bar)
  )
}

# The checked arguments every matrix function shares, and its progress bar
# (the caller closes it: on.exit(a$bar$close(), add = TRUE)).
.run_args <- function(window, backend, threads, progress, call) {
  list(window = .check_window(window, call), backend = .check_backend(backend, call),
       threads = .check_threads(threads, call), bar = .progress(progress, call))
}

.method_name <- function(p) {
  if (is.infinite(p)) "Linf" else if (p == 1) "L1" else if (p == 2) "L2" else "Lp"
}

pdist <- function(x, p = 1, window = NULL, backend = "auto", threads = NULL,
                  progress = interactive(), components = FALSE) {
  call <- sys.call()
  pcfs <- .objects(.as_pcfs(x, "x", call), components, call)
  p <- .check_p(p, call)
  a <- .run_args(window, backend, threads, progress, call)
  on.exit(a$bar$close(), add = TRUE)
  d <- .mpcf_call(.Call(C_pdist, pcfs$ptr, p, a$window, a$backend, a$threads,
                        a$bar$callback), call)
  attr(d, "Size") <- length(pcfs)
  if (!is.null(names(pcfs))) attr(d, "Labels") <- names(pcfs)
  attr(d, "Diag") <- FALSE
  attr(d, "Upper") <- FALSE
  attr(d, "method") <- .method_name(p)
  attr(d, "p") <- p
  attr(d, "call") <- call
  class(d) <- "dist"
  d
}

cdist <- function(x, y, p = 1, window = NULL, backend = "auto", threads = NULL,
                  progress = interactive(), components = FALSE) {
  call <- sys.call()
  .cross(x, y, 0L, p, window, backend, threads, progress, components, call)
}

l2_kernel <- function(x, y = NULL, window = NULL, backend = "auto", threads = NULL,
                      progress = interactive(), components = FALSE) {
  call <- sys.call()
  if (!is.null(y)) {
    return(.cross(x, y, 1L, 2, window, backend, threads, progress, components, call))
  }
  pcfs <- .objects(.as_pcfs(x, "x", call), components, call)
  a <- .run_args(window, backend, threads, progress, call)
  on.exit(a$bar$close(), add = TRUE)
  k <- .mpcf_call(.Call(C_l2_kernel, pcfs$ptr, a$window, a$backend, a$threads,
                        a$bar$callback), call)
  if (!is.null(names(pcfs))) dimnames(k) <- list(names(pcfs), names(pcfs))
  k
}

# metric 0: Lp distance, 1: L2 inner product.
.cross <- function(x, y, metric, p, window, backend, threads, progress, components, call) {
  xs <- .objects(.as_pcfs(x, "x", call), components, call)
  ys <- .objects(.as_pcfs(y, "y", call), components, call)
  p <- .check_p(p, call)
  a <- .run_args(window, backend, threads, progress, call)
  on.exit(a$bar$close(), add = TRUE)
  m <- .mpcf_call(.Call(C_cdist, xs$ptr, ys$ptr, metric, p, a$window, a$backend,
                        a$threads, a$bar$callback), call)
  if (!is.null(names(xs)) || !is.null(names(ys))) {
    dimnames(m) <- list(names(xs), names(ys))
  }
  m
}

lp_distance <- function(f, g, p = 1, window = NULL, type = c("constant", "linear")) {
  call <- sys.call()
  linear <- .check_type(type, call)
  fs <- .single_pcf(f, "f", call, linear)
  gs <- .single_pcf(g, "g", call, linear)
  p <- .check_p(p, call)
  window <- .check_window(window, call)
  .mpcf_call(.Call(C_lp_distance, fs$ptr, gs$ptr, p, window), call)
}

lp_norm <- function(x, p = 1, window = NULL) {
  call <- sys.call()
  pcfs <- .as_pcfs(x, "x", call)
  p <- .check_p(p, call)
  window <- .check_window(window, call)
  out <- .mpcf_call(.Call(C_lp_norm, pcfs$ptr, p, window), call)
  names(out) <- names(pcfs)
  out
}
