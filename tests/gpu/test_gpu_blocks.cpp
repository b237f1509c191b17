// Results never depend on the block decomposition or the number of GPUs:
// many small blocks (tiny budget, large split hint, minimum side 1) give the
// same bits as one block, a block downloaded in several chunks the same as
// blocks of one chunk, and two (and four) GPUs the same bits as one. Progress ends
// at done == total == the number of pairs.
#if defined(MPCF_TEST_CUDART)
#include <cuda_runtime.h>
#endif

#include <string>
#include <vector>

#include "gpu_test_support.hpp"

using namespace gputest;

namespace {

struct Hints {
  std::uint64_t split, minSide, maxElements;
};

std::vector<unsigned char> run_pdist(mpcf_pcfs* X, mpcf_dtype dtype, Op op, mpcf_layout layout,
                                     const Hints& h, const std::vector<int>& devices,
                                     std::uint64_t expectedPairs) {
  mpcf_options* o = options_for(MPCF_BACKEND_CUDA);
  check_ok(mpcf_options_set_block_hints(o, h.split, h.minSide, h.maxElements), "block hints");
  if (!devices.empty()) check_ok(mpcf_options_set_devices(o, devices.size(), devices.data()), "devices");
  std::uint64_t size = 0;
  const bool kernel = op == Op::Kernel;
  check_ok(kernel ? mpcf_l2_kernel_size(X, layout, &size) : mpcf_pdist_size(X, layout, &size), "size");
  std::vector<unsigned char> out(std::max<std::uint64_t>(size, 1) * dtype_size(dtype));
  mpcf_task* task = nullptr;
  check_ok(kernel ? mpcf_l2_kernel_start(X, layout, out.data(), size, o, &task)
                  : mpcf_pdist_start(X, p_of(op), layout, out.data(), size, o, &task),
           "start");
  check_ok(mpcf_task_wait(task, -1.0), "wait");
  std::uint64_t done = 0, total = 0;
  check_ok(mpcf_task_progress(task, &done, &total), "progress");
  assert_int_equal(total, expectedPairs);
  assert_int_equal(done, expectedPairs);
  mpcf_task_destroy(task);
  mpcf_options_destroy(o);
  return out;
}

std::vector<unsigned char> run_cdist(mpcf_pcfs* X, mpcf_pcfs* Y, mpcf_dtype dtype, Op op,
                                     const Hints& h, const std::vector<int>& devices) {
  mpcf_options* o = options_for(MPCF_BACKEND_CUDA);
  check_ok(mpcf_options_set_block_hints(o, h.split, h.minSide, h.maxElements), "block hints");
  if (!devices.empty()) check_ok(mpcf_options_set_devices(o, devices.size(), devices.data()), "devices");
  std::uint64_t size = 0;
  check_ok(mpcf_cdist_size(X, Y, &size), "size");
  std::vector<unsigned char> out(std::max<std::uint64_t>(size, 1) * dtype_size(dtype));
  check_ok(mpcf_cdist(X, Y, op == Op::Kernel ? MPCF_METRIC_L2_KERNEL : MPCF_METRIC_LP_DISTANCE,
                      p_of(op), out.data(), size, o),
           "cdist");
  mpcf_options_destroy(o);
  return out;
}

void expect_same_bits(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b,
                      const char* what) {
  if (a.size() != b.size() || std::memcmp(a.data(), b.data(), a.size()) != 0) {
    std::printf("%s: results differ from the single-block run\n", what);
    fail();
  }
}

Pcfs uneven(Rng& rng, std::size_t n) {
  RandomSpec spec;
  spec.n = n;
  spec.minM = 1;
  spec.maxM = small_mode() ? 200 : 700;  // some column tiles exceed the staging capacity
  return random_pcfs(rng, spec);
}

void test_many_blocks_same_bits_pdist(void**) {
  Rng rng(42);
  const std::size_t n = small_mode() ? 45 : 157;
  const Pcfs P = uneven(rng, n);
  const Hints one{1, 1, static_cast<std::uint64_t>(n) * n};
  const Hints tiny{1, 1, 64};        // block side 8
  // Automatic budget split 1000 ways (40 under compute-sanitizer, where
  // every launch is slow; side-1 blocks are left out there).
  const Hints split{small_mode() ? 40u : 1000u, 1, 0};
  const Hints single{1, 1, 1};       // block side 1: one pair per block
  for (mpcf_dtype dtype : {MPCF_FLOAT32, MPCF_FLOAT64}) {
    mpcf_pcfs* X = make_handle(P, dtype);
    for (Op op : {Op::L1, Op::Lp, Op::Linf, Op::Kernel}) {
      const std::uint64_t pairs = op == Op::Kernel ? n * (n + 1) / 2 : n * (n - 1) / 2;
      for (mpcf_layout layout : {MPCF_LAYOUT_DENSE, MPCF_LAYOUT_PACKED_LOWER}) {
        const auto ref = run_pdist(X, dtype, op, layout, one, {}, pairs);
        expect_same_bits(ref, run_pdist(X, dtype, op, layout, tiny, {}, pairs), "tiny budget");
        expect_same_bits(ref, run_pdist(X, dtype, op, layout, split, {}, pairs), "split hint 1000");
        if (layout == MPCF_LAYOUT_DENSE && op == Op::L1 && !small_mode()) {
          expect_same_bits(ref, run_pdist(X, dtype, op, layout, single, {}, pairs), "side 1");
        }
      }
    }
    mpcf_pcfs_destroy(X);
  }
}

void test_many_blocks_same_bits_cdist(void**) {
  Rng rng(43);
  const Pcfs PX = uneven(rng, small_mode() ? 30 : 90);
  const Pcfs PY = uneven(rng, small_mode() ? 41 : 131);
  const std::uint64_t all = static_cast<std::uint64_t>(PX.n()) * PY.n();
  for (mpcf_dtype dtype : {MPCF_FLOAT32, MPCF_FLOAT64}) {
    mpcf_pcfs* X = make_handle(PX, dtype);
    mpcf_pcfs* Y = make_handle(PY, dtype);
    for (Op op : {Op::L1, Op::Kernel}) {
      const auto ref = run_cdist(X, Y, dtype, op, {1, 1, all}, {});
      expect_same_bits(ref, run_cdist(X, Y, dtype, op, {1, 1, 100}, {}), "cdist tiny budget");
      const std::uint64_t ways = small_mode() ? 40 : 500;  // fewer launches under the sanitizer
      expect_same_bits(ref, run_cdist(X, Y, dtype, op, {ways, 1, 0}, {}), "cdist split");
    }
    mpcf_pcfs_destroy(X);
    mpcf_pcfs_destroy(Y);
  }
}

// Blocks larger than the pipeline's pinned chunks (8 MiB) are downloaded and
// stored in several chunks of whole rows (dense, packed) or columns
// (condensed): the same bits as small blocks that fit one chunk.
void test_blocks_stored_in_chunks(void**) {
  Rng rng(46);
  RandomSpec spec;
  spec.n = small_mode() ? 1200 : 3000;
  spec.maxM = 40;
  const Pcfs P = random_pcfs(rng, spec);
  const std::size_t n = P.n();
  for (mpcf_dtype dtype : {MPCF_FLOAT32, MPCF_FLOAT64}) {
    mpcf_pcfs* X = make_handle(P, dtype);
    for (mpcf_layout layout : {MPCF_LAYOUT_CONDENSED, MPCF_LAYOUT_PACKED_LOWER, MPCF_LAYOUT_DENSE}) {
      const std::uint64_t pairs = n * (n - 1) / 2;
      const auto small = run_pdist(X, dtype, Op::L1, layout, {1, 1, 256 * 256}, {}, pairs);
      const auto large = run_pdist(X, dtype, Op::L1, layout, {1, 1, n * n}, {}, pairs);
      expect_same_bits(small, large, "one block in chunks");
    }
    mpcf_pcfs_destroy(X);
  }
}

// Free memory of device 0 in bytes (0 when unknown).
std::size_t free_device_memory() {
#if defined(MPCF_TEST_CUDART)
  std::size_t freeB = 0, totalB = 0;
  if (cudaMemGetInfo(&freeB, &totalB) == cudaSuccess) return freeB;
  (void)cudaGetLastError();
#endif
  return 0;
}

// A memory fraction so small that the function data forces the block side
// down (the planner halves it until the data fits): the data half of the
// budget holds 24 times the longest function, less than the collection,
// but enough for the smallest block's layout (a tile of 16 columns of the
// longest function, one row and the uploaded pair).
void test_tiny_memory_fraction(void**) {
  Rng rng(44);
  const Pcfs P = uneven(rng, small_mode() ? 60 : 400);
  const std::size_t n = P.n();
  std::size_t longest = 0;
  for (std::size_t i = 0; i < n; ++i) longest = std::max<std::size_t>(longest, P.size_of(i));
  const double dataBytes = 24.0 * (longest + 1) * 2 * sizeof(double);
  assert_true(dataBytes < P.t.size() * 2 * sizeof(double));  // the input does not fit
  const std::size_t freeB = free_device_memory();
  const double fraction = freeB > 0 ? 2 * dataBytes / static_cast<double>(freeB) : 1e-5;
  std::printf("memory fraction %.3g (%.0f bytes for function data)\n", fraction, dataBytes);
  mpcf_pcfs* X = make_handle(P, MPCF_FLOAT64);
  const auto ref = run_pdist(X, MPCF_FLOAT64, Op::L1, MPCF_LAYOUT_CONDENSED, {1, 1, n * n}, {},
                             n * (n - 1) / 2);
  mpcf_options* o = options_for(MPCF_BACKEND_CUDA);
  check_ok(mpcf_options_set_memory_fraction(o, fraction), "fraction");
  std::vector<unsigned char> out(ref.size());
  check_ok(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out.data(), n * (n - 1) / 2, o), "pdist");
  expect_same_bits(ref, out, "tiny memory fraction");
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

void test_two_gpus_same_bits(void**) {
  if (mpcf_cuda_device_count() < 2) {
    std::printf("test_two_gpus_same_bits: SKIP: needs 2 CUDA devices, found %d\n",
                mpcf_cuda_device_count());
    skip();
  }
  Rng rng(45);
  const Pcfs P = uneven(rng, small_mode() ? 60 : 600);
  const std::size_t n = P.n();
  for (mpcf_dtype dtype : {MPCF_FLOAT32, MPCF_FLOAT64}) {
    mpcf_pcfs* X = make_handle(P, dtype);
    const Hints many{64, 1, 0};
    const std::uint64_t pairs = n * (n - 1) / 2;
    const auto one = run_pdist(X, dtype, Op::L1, MPCF_LAYOUT_CONDENSED, many, {0}, pairs);
    // Two GPUs in both orders; on machines with 4, all four in both orders.
    const std::vector<std::vector<int>> lists = {{0, 1}, {1, 0}, {0, 1, 2, 3}, {3, 2, 1, 0}};
    for (const auto& devices : lists) {
      if (static_cast<int>(devices.size()) > mpcf_cuda_device_count()) continue;
      std::string what = "devices";
      for (int d : devices) {
        what += ' ';
        what += std::to_string(d);
      }
      expect_same_bits(one, run_pdist(X, dtype, Op::L1, MPCF_LAYOUT_CONDENSED, many, devices, pairs),
                       what.c_str());
    }
    mpcf_pcfs_destroy(X);
  }
}

}  // namespace

int main(int, char** argv) {
  skip_without_gpu(argv[0]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_many_blocks_same_bits_pdist),
      cmocka_unit_test(test_many_blocks_same_bits_cdist),
      cmocka_unit_test(test_tiny_memory_fraction),
      cmocka_unit_test(test_blocks_stored_in_chunks),
      cmocka_unit_test(test_two_gpus_same_bits),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
