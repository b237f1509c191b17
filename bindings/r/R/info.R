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

# CUDA devices and the GPU memory libmpcf keeps between computations
# (mpcf_cuda_device_count, mpcf_cuda_cached_bytes, mpcf_cuda_cache_limit,
# mpcf_cuda_set_cache_limit, mpcf_cuda_release_memory). Byte counts are
# doubles (exact below 2^53).
cuda_device_count <- function() {
  .Call(C_gpu_memory, 0L, NULL)
}

gpu_cached_bytes <- function(device = 0L) {
  call <- match.call()
  if (!is.numeric(device) || length(device) != 1L || is.na(device) ||
      device != round(device) || abs(device) >= 2^31) {
    .abort(sprintf("device must be one whole number (a CUDA device id from 0); it is %s",
                   .one_number(device)), call)
  }
  .mpcf_call(.Call(C_gpu_memory, 1L, as.integer(device)), call)
}

gpu_cache_limit <- function() {
  .mpcf_call(.Call(C_gpu_memory, 2L, NULL), match.call())
}

set_gpu_cache_limit <- function(bytes) {
  call <- match.call()
  if (!is.numeric(bytes) || length(bytes) != 1L || is.na(bytes) || bytes < 0 ||
      bytes != round(bytes) || bytes >= 2^53) {
    .abort(sprintf("bytes must be one whole number from 0 to 2^53 - 1; it is %s",
                   .one_number(bytes)), call)
  }
  invisible(.mpcf_call(.Call(C_gpu_memory, 3L, as.double(bytes)), call))
}

.one_number <- function(x) {
  if (is.numeric(x) && length(x) == 1L) format(x) else .describe(x)
}

release_gpu_memory <- function() {
  invisible(.mpcf_call(.Call(C_gpu_memory, 4L, NULL), match.call()))
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
