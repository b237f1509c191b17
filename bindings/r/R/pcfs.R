# Input conversion: R data -> an "mpcf_pcfs" object, a validated float64
# collection held by libmpcf behind a tagged external pointer (released by a
# finalizer when R collects it).

as_pcfs <- function(x, type = c("constant", "linear")) {
  call <- sys.call()
  .as_pcfs(x, "x", call, .check_type(type, call))
}

plfs <- function(x) {
  .as_pcfs(x, "x", sys.call(), TRUE)
}

# type: "constant" (PCFs) or "linear" (PLFs) -> whether the functions are PLFs.
.check_type <- function(type, call) {
  if (!is.character(type) || length(type) < 1L || is.na(type[1]) ||
      !(type[1] %in% c("constant", "linear"))) {
    .abort(sprintf("type must be \"constant\" or \"linear\"; it is %s", .describe(type)), call)
  }
  type[1] == "linear"
}

.as_pcfs <- function(x, arg, call, linear = FALSE) {
  if (inherits(x, "mpcf_pcfs")) return(x)
  if (is.data.frame(x)) return(.pcfs_from_data_frame(x, arg, call, linear))
  if (is.list(x)) return(.pcfs_from_list(x, arg, call, linear))
  .abort(sprintf(paste(
    "%s must be a list of two-column numeric matrices (t, v), a data frame",
    "with columns id, t and v, or an mpcf_pcfs object; it is %s"),
    arg, .describe(x)), call)
}

# components: functions per object for `components = TRUE` (landscape() sets
# k); object_labels: the objects' names (the barcodes').
.new_pcfs <- function(ptr, labels, components = 1, object_labels = NULL) {
  info <- .Call(C_pcfs_info, ptr)
  structure(list(ptr = ptr, labels = labels, n = info[1L],
                 breakpoints = info[2L], linear = info[3L] == 2,
                 components = components, object_labels = object_labels),
            class = "mpcf_pcfs")
}

# The collection the computations see for `components`: x itself (FALSE),
# or a view of x's functions grouped into objects of x$components (TRUE) or
# K (a number) consecutive functions, with the component axis. x is not
# changed.
.objects <- function(x, components, call) {
  if (isFALSE(components)) return(x)
  K <- if (isTRUE(components)) .subset2(x, "components") else components
  if (!is.numeric(K) || length(K) != 1L || is.na(K) || K < 1 || K != round(K)) {
    .abort(sprintf("components must be TRUE, FALSE or a positive whole number; it is %s",
                   .describe(components)), call)
  }
  n <- length(x)
  if (n %% K != 0) {
    .abort(sprintf("components = %d does not divide the %d functions of x into objects",
                   as.integer(K), as.integer(n)), call)
  }
  ptr <- .mpcf_call(.Call(C_objects, .subset2(x, "ptr"), as.double(K)), call)
  labels <- .subset2(x, "object_labels")
  if (length(labels) != n / K) labels <- NULL
  .new_pcfs(ptr, labels)
}

.is_pcf_matrix <- function(m) {
  is.matrix(m) && (is.double(m) || is.integer(m)) && ncol(m) == 2L
}

# How the user refers to element i (1-based) of list `x` named `arg`.
.element_name <- function(arg, x, i) {
  nm <- names(x)
  if (!is.null(nm) && !is.na(nm[i]) && nzchar(nm[i])) {
    sprintf("%s[[\"%s\"]]", arg, nm[i])
  } else {
    sprintf("%s[[%d]]", arg, i)
  }
}

.pcfs_from_list <- function(x, arg, call, linear = FALSE) {
  ok <- vapply(x, .is_pcf_matrix, NA)
  if (!all(ok)) {
    i <- which(!ok)[1L]
    .abort(sprintf("%s must be a two-column numeric matrix (t, v); it is %s",
                   .element_name(arg, x, i), .describe(x[[i]])), call)
  }
  hint <- function(pcf, bp) {
    where <- .element_name(arg, x, pcf + 1)
    if (is.na(bp)) where else sprintf("%s, row %d", where, bp + 1)
  }
  ptr <- .mpcf_call(.Call(C_pcfs_from_list, x, linear), call, hint)
  .new_pcfs(ptr, names(x))
}

# A long data frame: one row per breakpoint, columns id, t, v. Functions come
# in the order in which their ids first appear; the rows of one id keep their
# order (nothing is sorted by time: unsorted times are an error).
.pcfs_from_data_frame <- function(x, arg, call, linear = FALSE) {
  missing_cols <- setdiff(c("id", "t", "v"), names(x))
  if (length(missing_cols) > 0L) {
    .abort(sprintf("%s is a data frame without column%s %s; it needs columns id, t and v",
                   arg, if (length(missing_cols) > 1L) "s" else "",
                   paste(missing_cols, collapse = ", ")), call)
  }
  id <- x[["id"]]
  t <- x[["t"]]
  v <- x[["v"]]
  for (col in c("t", "v")) {
    if (!is.numeric(x[[col]])) {
      .abort(sprintf("column %s of %s must be numeric; it is %s", col, arg,
                     .describe(x[[col]])), call)
    }
  }
  if (anyNA(id)) {
    .abort(sprintf("column id of %s is missing (NA) in row %d", arg,
                   which(is.na(id))[1L]), call)
  }
  ids <- unique(id)
  group <- match(id, ids)
  rows <- order(group, method = "radix")  # stable: rows of an id keep their order
  offsets <- c(0, cumsum(as.double(tabulate(group, length(ids)))))
  hint <- function(pcf, bp) {
    first <- offsets[pcf + 1] + 1
    row <- rows[if (is.na(bp)) first else first + bp]
    sprintf("id \"%s\", row %d of %s", as.character(ids[pcf + 1]), row, arg)
  }
  ptr <- .mpcf_call(.Call(C_pcfs_from_csr, offsets, as.double(t)[rows],
                          as.double(v)[rows], linear), call, hint)
  .new_pcfs(ptr, as.character(ids))
}

# One PCF given as a two-column numeric matrix (for lp_distance).
.single_pcf <- function(m, arg, call, linear = FALSE) {
  if (!.is_pcf_matrix(m)) {
    .abort(sprintf("%s must be a two-column numeric matrix (t, v); it is %s",
                   arg, .describe(m)), call)
  }
  hint <- function(pcf, bp) if (is.na(bp)) arg else sprintf("%s, row %d", arg, bp + 1)
  .new_pcfs(.mpcf_call(.Call(C_pcfs_from_list, list(m), linear), call, hint), NULL)
}

length.mpcf_pcfs <- function(x) as.integer(.subset2(x, "n"))

names.mpcf_pcfs <- function(x) .subset2(x, "labels")

print.mpcf_pcfs <- function(x, ...) {
  k <- .subset2(x, "components")
  cat(sprintf("<mpcf_pcfs: %s %s%s, %s breakpoints, float64%s>\n",
              format(.subset2(x, "n"), big.mark = ","),
              if (isTRUE(.subset2(x, "linear"))) "PLF" else "PCF",
              if (.subset2(x, "n") == 1) "" else "s",
              format(.subset2(x, "breakpoints"), big.mark = ","),
              if (!is.null(k) && k > 1) sprintf(", %d per object", as.integer(k)) else ""))
  invisible(x)
}
