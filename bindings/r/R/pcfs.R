# Input conversion: R data -> an "mpcf_pcfs" object, a validated float64
# collection held by libmpcf behind a tagged external pointer (released by a
# finalizer when R collects it).

as_pcfs <- function(x) {
  .as_pcfs(x, "x", sys.call())
}

.as_pcfs <- function(x, arg, call) {
  if (inherits(x, "mpcf_pcfs")) return(x)
  if (is.data.frame(x)) return(.pcfs_from_data_frame(x, arg, call))
  if (is.list(x)) return(.pcfs_from_list(x, arg, call))
  .abort(sprintf(paste(
    "%s must be a list of two-column numeric matrices (t, v), a data frame",
    "with columns id, t and v, or an mpcf_pcfs object; it is %s"),
    arg, .describe(x)), call)
}

.new_pcfs <- function(ptr, labels) {
  info <- .Call(C_pcfs_info, ptr)
  structure(list(ptr = ptr, labels = labels, n = info[1L],
                 breakpoints = info[2L]),
            class = "mpcf_pcfs")
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

.pcfs_from_list <- function(x, arg, call) {
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
  ptr <- .mpcf_call(.Call(C_pcfs_from_list, x), call, hint)
  .new_pcfs(ptr, names(x))
}

# A long data frame: one row per breakpoint, columns id, t, v. Functions come
# in the order in which their ids first appear; the rows of one id keep their
# order (nothing is sorted by time: unsorted times are an error).
.pcfs_from_data_frame <- function(x, arg, call) {
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
                          as.double(v)[rows]), call, hint)
  .new_pcfs(ptr, as.character(ids))
}

# One PCF given as a two-column numeric matrix (for lp_distance).
.single_pcf <- function(m, arg, call) {
  if (!.is_pcf_matrix(m)) {
    .abort(sprintf("%s must be a two-column numeric matrix (t, v); it is %s",
                   arg, .describe(m)), call)
  }
  hint <- function(pcf, bp) if (is.na(bp)) arg else sprintf("%s, row %d", arg, bp + 1)
  .new_pcfs(.mpcf_call(.Call(C_pcfs_from_list, list(m)), call, hint), NULL)
}

length.mpcf_pcfs <- function(x) as.integer(.subset2(x, "n"))

names.mpcf_pcfs <- function(x) .subset2(x, "labels")

print.mpcf_pcfs <- function(x, ...) {
  cat(sprintf("<mpcf_pcfs: %s PCF%s, %s breakpoints, float64>\n",
              format(.subset2(x, "n"), big.mark = ","),
              if (.subset2(x, "n") == 1) "" else "s",
              format(.subset2(x, "breakpoints"), big.mark = ",")))
  invisible(x)
}
