// Failure paths of the CUDA backend through the C API: cancellation while
// kernels run, and a real device out-of-memory (most of the GPU is taken by
// the test, then a block budget larger than what is left is requested).
// Both end with the right status, an output that holds no partial result
// (all NaN) and no device memory left behind.
#include <cuda_runtime.h>

#include <chrono>
#include <thread>

#include "gpu_test_support.hpp"

using namespace gputest;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::size_t free_device_bytes() {
  std::size_t freeB = 0, totalB = 0;
  assert_int_equal(cudaMemGetInfo(&freeB, &totalB), cudaSuccess);
  return freeB;
}

// n functions with exactly m breakpoints each (DESIGN §6 input).
Pcfs fixed_length(Rng& rng, std::size_t n, std::size_t m) {
  Pcfs p;
  p.t.reserve(n * m);
  p.v.reserve(n * m);
  std::vector<double> ts(m), vs(m);
  for (std::size_t i = 0; i < n; ++i) {
    float t = 0.0f;
    for (std::size_t k = 0; k < m; ++k) {
      ts[k] = t;
      vs[k] = k + 1 == m ? 0.0f : static_cast<float>(rng.uniform() * 10.0);
      t += static_cast<float>(0.05 + rng.uniform() * 0.95);
    }
    p.add(ts, vs);
  }
  return p;
}

template <typename T>
std::size_t count_not_nan(const std::vector<T>& v) {
  std::size_t k = 0;
  for (T x : v) k += std::isnan(x) ? 0 : 1;
  return k;
}

void test_cancel_while_kernels_run(void**) {
  Rng rng(1);
  const std::size_t n = small_mode() ? 600 : 16000;
  const std::size_t m = small_mode() ? 100 : 2000;
  const Pcfs P = fixed_length(rng, n, m);
  mpcf_pcfs* X = make_handle(P, MPCF_FLOAT64);
  mpcf_options* o = options_for(MPCF_BACKEND_CUDA);
  // Many blocks so that a block takes a small part of the whole run.
  check_ok(mpcf_options_set_block_hints(o, 256, 1, 0), "block hints");
  const std::uint64_t pairs = static_cast<std::uint64_t>(n) * (n - 1) / 2;
  std::vector<double> out(pairs, 1.0);
  mpcf_task* task = nullptr;
  check_ok(mpcf_pdist_start(X, 1.0, MPCF_LAYOUT_CONDENSED, out.data(), pairs, o, &task), "start");

  // Wait until the first blocks are stored: the GPU is then busy.
  const auto t0 = Clock::now();
  std::uint64_t done = 0, total = 0;
  while (done == 0 && seconds_since(t0) < 60.0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    check_ok(mpcf_task_progress(task, &done, &total), "progress");
  }
  assert_int_equal(total, pairs);
  if (mpcf_task_status(task) != MPCF_RUNNING) {
    std::printf("the task finished before it could be cancelled; make the problem larger\n");
    fail();
  }
  // The first stored block took at least one block's time (blocks run
  // largest first).
  const double firstBlock = seconds_since(t0);
  const auto tCancel = Clock::now();
  check_ok(mpcf_task_cancel(task), "cancel");
  const mpcf_status st = mpcf_task_wait(task, 30.0);
  const double latency = seconds_since(tCancel);
  check_ok(mpcf_task_progress(task, &done, &total), "progress");
  std::printf("first block stored after %.3f s; cancelled with %llu of %llu pairs stored; "
              "the task stopped %.3f s after the cancel\n",
              firstBlock, static_cast<unsigned long long>(done),
              static_cast<unsigned long long>(total), latency);
  assert_int_equal(st, MPCF_ERROR_CANCELLED);
  assert_true(done < total);
  // At most the block in flight and the one queued behind it finish after
  // the cancel (plus thread wake-up).
  assert_true(latency <= 3.0 * firstBlock + 0.25);
  assert_int_equal(count_not_nan(out), 0);
  mpcf_task_destroy(task);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

void test_injected_out_of_memory(void**) {
  Rng rng(2);
  const std::size_t n = small_mode() ? 3000 : 20000;
  const Pcfs P = fixed_length(rng, n, 4);
  mpcf_pcfs* X = make_handle(P, MPCF_FLOAT64);
  mpcf_options* o = options_for(MPCF_BACKEND_CUDA);
  const std::uint64_t pairs = static_cast<std::uint64_t>(n) * (n - 1) / 2;
  std::vector<double> out(pairs, 1.0);
  // Warm up: the runtime, the context and the kernel modules are loaded,
  // so the memory they take is in the baseline.
  check_ok(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out.data(), pairs, o), "warm-up pdist");
  assert_int_equal(count_not_nan(out), pairs);

  // The memory kept between computations (mpcf_cuda_cached_bytes) is
  // given back, so the baseline and the check below see only what a call
  // leaves allocated.
  check_ok(mpcf_cuda_release_memory(), "release");
  const std::size_t baseline = free_device_bytes();
  // Take all but 256 MiB of the device.
  const std::size_t leave = std::size_t(256) << 20;
  void* hog = nullptr;
  assert_true(baseline > leave);
  assert_int_equal(cudaMalloc(&hog, baseline - leave), cudaSuccess);

  // One block of n x n doubles (3.2 GB for n = 20000, 72 MB for 3000) in
  // each of the two output buffers: more than the 256 MiB left.
  check_ok(mpcf_options_set_block_hints(o, 1, 1, static_cast<std::uint64_t>(n) * n), "hints");
  const mpcf_status st = mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out.data(), pairs, o);
  const std::string msg = mpcf_last_error_message();
  std::printf("status %s: %s\n", mpcf_status_name(st), msg.c_str());
  assert_int_equal(st, MPCF_ERROR_OUT_OF_MEMORY);
  assert_true(msg.find("out of GPU memory") != std::string::npos);
  assert_true(msg.find("cudaErrorMemoryAllocation") != std::string::npos);
  assert_int_equal(count_not_nan(out), 0);  // no partial result

  assert_int_equal(cudaFree(hog), cudaSuccess);
  check_ok(mpcf_cuda_release_memory(), "release");
  // Nothing of the failed run stays allocated (4 MiB of slack for driver
  // bookkeeping outside libmpcf's control).
  const std::size_t after = free_device_bytes();
  std::printf("free device memory: %zu before, %zu after\n", baseline, after);
  assert_true(after + (std::size_t(4) << 20) >= baseline);

  // And the library still works afterwards.
  check_ok(mpcf_options_set_block_hints(o, 0, 0, 0), "hints");
  check_ok(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out.data(), pairs, o), "pdist after OOM");
  assert_int_equal(count_not_nan(out), pairs);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

}  // namespace

int main(int, char** argv) {
  skip_without_gpu(argv[0]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cancel_while_kernels_run),
      cmocka_unit_test(test_injected_out_of_memory),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
