# Persistence barcodes to PCFs (Betti curves, stable ranks, accumulated
# persistence), pointwise operations (sum, mean, linear combinations,
# evaluation), the read-out of breakpoints and PCF files.

.barcode_kinds <- c(betti = 0L, stable_rank = 1L, accumulated_persistence = 2L)

betti_curve <- function(barcodes, dimension = NULL) {
  .from_barcodes("betti", barcodes, dimension, sys.call())
}

stable_rank <- function(barcodes, dimension = NULL) {
  .from_barcodes("stable_rank", barcodes, dimension, sys.call())
}

accumulated_persistence <- function(barcodes, dimension = NULL) {
  .from_barcodes("accumulated_persistence", barcodes, dimension, sys.call())
}

# A persistence diagram of the TDA package (class "diagram") or any matrix or
# data frame with columns dimension, birth and death (any case).
.dimension_columns <- function(x) {
  nm <- tolower(colnames(x))
  if (is.null(nm) || !all(c("dimension", "birth", "death") %in% nm)) return(NULL)
  match(c("dimension", "birth", "death"), nm)
}

# One barcode as a two-column double matrix (birth, death).
.bars <- function(x, where, call) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (!is.matrix(x) || !(is.double(x) || is.integer(x)) || ncol(x) != 2L) {
    .abort(sprintf("%s must be a two-column numeric matrix of (birth, death) rows; it is %s",
                   where, .describe(x)), call)
  }
  storage.mode(x) <- "double"
  x
}

# The barcodes of `x` as a list of two-column matrices, and their names.
.collect_barcodes <- function(x, dimension, call) {
  single <- is.matrix(x) || is.data.frame(x)
  items <- if (single) list(x) else x
  if (!is.list(items)) {
    .abort(sprintf(paste(
      "barcodes must be a two-column matrix of (birth, death) rows, a persistence",
      "diagram with columns dimension, birth and death, or a list of them; it is %s"),
      .describe(x)), call)
  }
  out <- list()
  labels <- character(0)
  for (i in seq_along(items)) {
    item <- items[[i]]
    where <- if (single) "barcodes" else .element_name("barcodes", items, i)
    cols <- if (is.matrix(item) || is.data.frame(item)) .dimension_columns(item) else NULL
    if (!is.null(cols)) {
      m <- as.matrix(item)[, cols, drop = FALSE]
      storage.mode(m) <- "double"
      if (is.null(dimension)) {
        if (!single) {
          .abort(sprintf("%s is a persistence diagram with several dimensions; choose one with dimension =",
                         where), call)
        }
        for (d in sort(unique(m[, 1]))) {
          out[[length(out) + 1L]] <- m[m[, 1] == d, 2:3, drop = FALSE]
          labels <- c(labels, sprintf("dimension %d", as.integer(d)))
        }
        next
      }
      out[[length(out) + 1L]] <- m[m[, 1] == dimension, 2:3, drop = FALSE]
    } else {
      if (!is.null(dimension)) {
        .abort(sprintf(paste(
          "dimension = %s was given but %s has no dimension column; dimension selects",
          "from persistence diagrams with columns dimension, birth and death"),
          format(dimension), where), call)
      }
      out[[length(out) + 1L]] <- .bars(item, where, call)
    }
    nm <- names(items)
    labels <- c(labels, if (!is.null(nm) && !single) nm[i] else "")
  }
  list(bars = out, labels = if (all(labels == "")) NULL else labels)
}

.check_dimension <- function(dimension, call) {
  if (is.null(dimension)) return(NULL)
  if (!is.numeric(dimension) || length(dimension) != 1L || is.na(dimension) ||
      dimension < 0 || dimension != round(dimension)) {
    .abort(sprintf("dimension must be NULL or a non-negative whole number; it is %s",
                   .describe(dimension)), call)
  }
  as.double(dimension)
}

# The barcodes in CSR form: offsets, interleaved (birth, death), labels.
.barcode_csr <- function(barcodes, dimension, call) {
  dimension <- .check_dimension(dimension, call)
  got <- .collect_barcodes(barcodes, dimension, call)
  counts <- vapply(got$bars, nrow, 0L)
  offsets <- c(0, cumsum(as.double(counts)))
  flat <- if (length(got$bars)) as.double(t(do.call(rbind, got$bars))) else double(0)
  list(offsets = offsets, flat = flat, labels = got$labels, n = length(got$bars))
}

.from_barcodes <- function(kind, barcodes, dimension, call) {
  csr <- .barcode_csr(barcodes, dimension, call)
  ptr <- .naming_bars(
    .Call(C_from_barcodes, .barcode_kinds[[kind]], csr$offsets, csr$flat),
    barcodes, csr$n, call)
  .new_pcfs(ptr, csr$labels)
}

# Runs `expr` (a .Call making a collection from barcodes) as .mpcf_call does,
# adding to a message about a bar (libmpcf reports barcode and bar, from 0:
# .last_error_detail()) where that is in R.
.naming_bars <- function(expr, barcodes, n, call) {
  tryCatch(
    .mpcf_call(expr, call),
    mpcf_error = function(e) {
      d <- .last_error_detail()
      if (is.na(d[["barcode"]]) || is.na(d[["bar"]])) stop(e)
      i <- d[["barcode"]] + 1
      where <- if (n == 1L && (is.matrix(barcodes) || is.data.frame(barcodes)))
        "barcodes" else sprintf("barcodes[[%d]]", i)
      .abort(sprintf("%s (libmpcf counts from 0; in R this is %s, bar %d)", e$message, where,
                     d[["bar"]] + 1), call, e$status)
    })
}

.check_clip <- function(clip, call) {
  if (is.null(clip)) return(Inf)
  if (!is.numeric(clip) || length(clip) != 1L || is.na(clip)) {
    .abort(sprintf("clip must be NULL or a single number; it is %s", .describe(clip)), call)
  }
  as.double(clip)
}

landscape <- function(barcodes, k, clip = NULL, dimension = NULL) {
  call <- sys.call()
  k <- .check_count(k, "landscapes", call)
  clip <- .check_clip(clip, call)
  csr <- .barcode_csr(barcodes, dimension, call)
  ptr <- .naming_bars(.Call(C_landscapes, csr$offsets, csr$flat, k, clip), barcodes, csr$n,
                      call)
  labels <- if (is.null(csr$labels)) NULL else
    paste0(rep(csr$labels, each = k), ": lambda_", rep(seq_len(k), csr$n))
  .new_pcfs(ptr, labels, components = k, object_labels = csr$labels)
}

silhouette <- function(barcodes, q = 1, clip = NULL, dimension = NULL) {
  call <- sys.call()
  if (!is.numeric(q) || length(q) != 1L || is.na(q)) {
    .abort(sprintf("q must be a single number >= 0; it is %s", .describe(q)), call)
  }
  clip <- .check_clip(clip, call)
  csr <- .barcode_csr(barcodes, dimension, call)
  ptr <- .naming_bars(.Call(C_silhouettes, csr$offsets, csr$flat, as.double(q), clip),
                      barcodes, csr$n, call)
  .new_pcfs(ptr, csr$labels)
}

pcf_sum <- function(x) {
  call <- sys.call()
  pcfs <- .as_pcfs(x, "x", call)
  .new_pcfs(.mpcf_call(.Call(C_reduce, pcfs$ptr, 0L), call), NULL)
}

pcf_mean <- function(x) {
  call <- sys.call()
  pcfs <- .as_pcfs(x, "x", call)
  .new_pcfs(.mpcf_call(.Call(C_reduce, pcfs$ptr, 1L), call), NULL)
}

mean.mpcf_pcfs <- function(x, ...) pcf_mean(x)

.check_coefficient <- function(v, name, call) {
  if (!is.numeric(v) || length(v) != 1L || is.na(v)) {
    .abort(sprintf("%s must be a single number; it is %s", name, .describe(v)), call)
  }
  as.double(v)
}

pcf_combine <- function(x, y, a = 1, b = 1) {
  call <- sys.call()
  xs <- .as_pcfs(x, "x", call)
  ys <- .as_pcfs(y, "y", call)
  a <- .check_coefficient(a, "a", call)
  b <- .check_coefficient(b, "b", call)
  ptr <- .mpcf_call(.Call(C_combine, xs$ptr, ys$ptr, a, b), call)
  .new_pcfs(ptr, if (length(xs) >= length(ys)) names(xs) else names(ys))
}

pcf_evaluate <- function(x, t) {
  call <- sys.call()
  pcfs <- .as_pcfs(x, "x", call)
  if (!is.numeric(t) || anyNA(t)) {
    .abort(sprintf("t must be a numeric vector without NA or NaN; it is %s", .describe(t)), call)
  }
  m <- .mpcf_call(.Call(C_evaluate, pcfs$ptr, as.double(t)), call)
  if (!is.null(names(pcfs))) rownames(m) <- names(pcfs)
  m
}

as.list.mpcf_pcfs <- function(x, ...) {
  b <- .mpcf_call(.Call(C_breakpoints, .subset2(x, "ptr")), sys.call())
  out <- lapply(seq_len(length(x)), function(i) {
    k <- seq.int(b$offsets[i] + 1, length.out = b$offsets[i + 1] - b$offsets[i])
    cbind(t = b$times[k], v = b$values[k])
  })
  names(out) <- names(x)
  out
}

.check_path <- function(path, call) {
  if (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path)) {
    .abort(sprintf("path must be a single file name; it is %s", .describe(path)), call)
  }
  path.expand(path)
}

pcf_save <- function(x, path) {
  call <- sys.call()
  pcfs <- .as_pcfs(x, "x", call)
  .mpcf_call(.Call(C_save, pcfs$ptr, .check_path(path, call)), call)
  invisible(path)
}

pcf_load <- function(path) {
  call <- sys.call()
  .new_pcfs(.mpcf_call(.Call(C_load, .check_path(path, call)), call), NULL)
}
