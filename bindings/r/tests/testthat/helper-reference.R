# A plain-R reference for the integrals, written independently of libmpcf:
# evaluate both functions on every piece between consecutive breakpoints
# (and window ends) and add up the pieces, with a zero integrand giving 0
# even on an unbounded piece.

ref_eval <- function(f, s) {
  # f(s) for a two-column matrix f; 0 before the first breakpoint.
  k <- findInterval(s, f[, 1])
  ifelse(k == 0, 0, f[pmax(k, 1), 2])
}

# The pieces [lo, hi) of the window on which f and g are both constant, with
# a point inside each to evaluate them at.
ref_pieces <- function(f, g, window) {
  a <- window[1]
  b <- window[2]
  cuts <- sort(unique(c(f[, 1], g[, 1])))
  cuts <- cuts[cuts > a & cuts < b]
  lo <- c(a, cuts)
  hi <- c(cuts, b)
  at <- lo
  # An unbounded-below piece lies before every breakpoint: both are 0 there.
  at[!is.finite(lo)] <- min(c(f[, 1], g[, 1])) - 1
  list(width = hi - lo, fv = ref_eval(f, at), gv = ref_eval(g, at))
}

ref_integral <- function(integrand, width) {
  terms <- ifelse(integrand == 0, 0, integrand * width)
  sum(terms)
}

ref_lp <- function(f, g, p = 1, window = c(-Inf, Inf)) {
  pc <- ref_pieces(f, g, window)
  diff <- abs(pc$fv - pc$gv)
  if (is.infinite(p)) return(max(diff))
  ref_integral(diff^p, pc$width)^(1 / p)
}

ref_inner <- function(f, g, window = c(-Inf, Inf)) {
  pc <- ref_pieces(f, g, window)
  ref_integral(pc$fv * pc$gv, pc$width)
}

ref_cross <- function(x, y, fun) {
  outer(seq_along(x), seq_along(y),
        Vectorize(function(i, j) fun(x[[i]], y[[j]])))
}

# A random PCF: m breakpoints starting near `start`, values in [-5, 10], the
# last one 0 unless `tail` is given.
random_pcf <- function(m = sample(1:8, 1), start = runif(1, -2, 2), tail = 0) {
  t <- start + cumsum(c(0, runif(m - 1, 0.05, 1.5)))
  v <- round(runif(m, -5, 10), 2)
  v[m] <- tail
  cbind(t = t, v = v)
}

random_pcfs <- function(n, ...) {
  lapply(seq_len(n), function(i) random_pcf(...))
}

# Square matrix of the pairwise reference distances.
ref_pdist_matrix <- function(x, p = 1, window = c(-Inf, Inf)) {
  ref_cross(x, x, function(f, g) ref_lp(f, g, p, window))
}

# A workload that takes many seconds on one thread (for interrupts: an
# interrupted computation stops within a fraction of a second).
long_workload <- function(n = 4000, m = 200) {
  set.seed(7)
  replicate(n, cbind(cumsum(runif(m, 0.05, 1)), c(runif(m - 1, 0, 10), 0)),
            simplify = FALSE)
}

last_task_status <- function() .Call(mpcf:::C_last_task_status)
