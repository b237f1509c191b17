# The GPU memory kept between computations: the limit, release, and the
# errors of bad arguments (no CUDA device is needed).

test_that("the limit can be read and set, and release succeeds", {
  old <- gpu_cache_limit()
  on.exit(set_gpu_cache_limit(old))
  expect_true(is.numeric(old) && old >= 0)
  set_gpu_cache_limit(12345)
  expect_identical(gpu_cache_limit(), 12345)
  set_gpu_cache_limit(2^40)
  expect_identical(gpu_cache_limit(), 2^40)
  expect_null(release_gpu_memory())
  expect_true(cuda_device_count() >= 0L)
})

test_that("bad arguments are refused with a message naming them", {
  e <- expect_error(set_gpu_cache_limit(-1), class = "mpcf_error")
  expect_match(conditionMessage(e), "bytes must be one whole number from 0 to 2^53 - 1; it is -1",
               fixed = TRUE)
  expect_error(set_gpu_cache_limit(1.5), "it is 1.5", class = "mpcf_error")
  expect_error(set_gpu_cache_limit("1"), "it is a character vector of length 1",
               class = "mpcf_error")
  expect_error(gpu_cached_bytes(0.5), "device must be one whole number", class = "mpcf_error")
  e <- expect_error(gpu_cached_bytes(-1), class = "mpcf_error")
  expect_identical(e$status, "MPCF_ERROR_INVALID_ARGUMENT")
  expect_match(conditionMessage(e), "device id -1 is negative", fixed = TRUE)
  e <- expect_error(gpu_cached_bytes(cuda_device_count()), class = "mpcf_error")
  expect_identical(e$status, "MPCF_ERROR_CUDA_UNAVAILABLE")
})

test_that("a device that exists reports what is kept", {
  skip_if(cuda_device_count() == 0L, "no CUDA device")
  expect_true(gpu_cached_bytes(0) >= 0)
})
