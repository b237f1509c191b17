# Errors: every bad input and every libmpcf failure becomes a condition of
# class "mpcf_error" (a subclass of "error") raised from the user's call. Its
# `status` field holds the libmpcf status name, e.g. "MPCF_ERROR_INVALID_PCF".

.abort <- function(message, call, status = "MPCF_ERROR_INVALID_ARGUMENT") {
  stop(structure(
    class = c("mpcf_error", "error", "condition"),
    list(message = message, call = call, status = status)
  ))
}

# Runs `expr` (a .Call into the package) and turns the "[STATUS] message"
# errors the C++ glue raises into mpcf_error conditions. `hint`, when given,
# is a function(pcf, breakpoint) of 0-based indices (breakpoint NA when
# libmpcf names none) returning where that is in the user's R input; it is
# appended to messages about invalid PCF data, whose indices libmpcf reports
# (.last_error_detail()). Other conditions (interrupts, errors raised by a
# progress callback) pass through untouched.
.mpcf_call <- function(expr, call, hint = NULL) {
  tryCatch(expr, error = function(e) {
    msg <- conditionMessage(e)
    m <- regmatches(msg, regexec("^\\[(MPCF_[A-Z_]+)\\] ", msg))[[1L]]
    if (length(m) == 0L) stop(e)
    status <- m[2L]
    text <- substring(msg, nchar(m[1L]) + 1L)
    if (!is.null(hint) && status == "MPCF_ERROR_INVALID_PCF") {
      text <- .with_location(text, hint, .last_error_detail())
    }
    .abort(text, call, status)
  })
}

# Where the input of the error just raised is invalid, as libmpcf reports it
# (mpcf_last_error_detail): c(function, breakpoint, barcode, bar), 0-based,
# NA where it names none. Read it right after the error.
.last_error_detail <- function() .Call(C_last_error_detail)

# libmpcf counts functions and breakpoints from 0; R users count from 1 and
# may have used names or a data frame. Append where the offending entry is
# in their input.
.with_location <- function(text, hint, detail) {
  if (is.na(detail[["function"]])) return(text)
  where <- hint(detail[["function"]], detail[["breakpoint"]])
  paste0(text, " (libmpcf counts from 0; in R this is ", where, ")")
}

# A short description of an R object for error messages.
.describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.data.frame(x)) return(sprintf("a data frame with columns %s",
                                       paste(names(x), collapse = ", ")))
  if (is.matrix(x)) {
    return(sprintf("%s %s matrix with %d row%s and %d column%s",
                   .article(typeof(x)), typeof(x),
                   nrow(x), if (nrow(x) == 1L) "" else "s",
                   ncol(x), if (ncol(x) == 1L) "" else "s"))
  }
  if (is.function(x)) return("a function")
  if (is.list(x)) return(sprintf("a list of length %d", length(x)))
  if (is.factor(x)) return(sprintf("a factor of length %d", length(x)))
  sprintf("%s %s vector of length %d", .article(typeof(x)), typeof(x), length(x))
}

.article <- function(word) if (grepl("^[aeiou]", word)) "an" else "a"

