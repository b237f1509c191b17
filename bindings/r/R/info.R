# Version and build information, libmpcf's account of the last computation,
# and the load-time check that the libmpcf found at run time is the one the
# package was compiled against.

mpcf_version <- function() {
  package_version(.Call(C_version_info)$library_string)
}

mpcf_build_info <- function() {
  .Call(C_build_info)
}

# libmpcf's own account of the last computation that succeeded
# (mpcf_task_info), kept by the C++ glue: the same fields as Python's
# mpcf.last_task_info(); NULL before the first.
last_task_info <- function() {
  .Call(C_last_task_info)
}

.format_version <- function(v) {
  sprintf("%d.%d.%d", v %/% 10000L, (v %/% 100L) %% 100L, v %% 100L)
}

.onLoad <- function(libname, pkgname) {
  v <- .Call(C_version_info)
  # Same major version, and at least the minor/patch the package was built
  # against (a newer library keeps the ABI within a major version).
  if (v$library %/% 10000L != v$header %/% 10000L || v$library < v$header) {
    stop(sprintf(paste(
      "the mpcf package was built against libmpcf %s but the libmpcf loaded",
      "at run time is %s; reinstall the package against the installed libmpcf"),
      .format_version(v$header), v$library_string), call. = FALSE)
  }
}
