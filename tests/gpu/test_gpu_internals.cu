// The CUDA building blocks below the C API: the error macro and its typed
// exceptions, RAII buffers and the caching allocator, device queries,
// CudaOffsetDataManager::upload_subset, the kernel's TriangleSkipMode, the
// pipeline's error propagation, the use of every listed GPU, the resident
// upload shared by all GPUs, blocks overlapping on two streams and the
// planner's choice of residency and slots.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <atomic>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>

#include "gpu_test_support.hpp"
#include "mpcf/core/number_text.hpp"  // dtype_name
#include "mpcf/core/result_writers.hpp"
#include "mpcf/cuda/block_matrix_support.cuh"
#include "mpcf/cuda/block_reduce_kernels.cuh"
#include "mpcf/cuda/cuda_block_pipeline.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_integration_tasks.cuh"
#include "mpcf/cuda/cuda_offset_data_manager.cuh"
#include "mpcf/cuda/knn_stage.cuh"
#include "mpcf/cuda/pcf_block_op.cuh"

using namespace gputest;
using namespace mpcf;
using namespace mpcf::cuda;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

template <typename T = double>
std::shared_ptr<const PcfCollection<T>> collection_of(const Pcfs& P) {
  const std::vector<T> t(P.t.begin(), P.t.end()), v(P.v.begin(), P.v.end());
  return std::make_shared<const PcfCollection<T>>(P.n(), P.offsets.data(), t.data(), v.data(), 1);
}

// The L1 GPU task of X against Y (Y null: pdist of X) into `consumer`.
template <typename Consumer>
auto l1_task(std::shared_ptr<const PcfCollection<double>> X,
             std::shared_ptr<const PcfCollection<double>> Y, std::shared_ptr<Consumer> consumer,
             std::vector<int> devices, const CudaExecutionConfig& cfg) {
  PairRequest<double> r;
  r.x = X;
  r.y = Y ? Y : X;
  r.symmetric = !Y;
  r.op = OperationSpec::distance(1.0);
  r.consumer = std::move(consumer);
  return make_pcf_task<double>(r, OperationL1Dist<double>{}, std::move(devices), cfg);
}

std::shared_ptr<MatrixWriter<double>> condensed_writer(std::vector<double>& out, std::size_t n) {
  return std::make_shared<MatrixWriter<double>>(
      MatrixWriter<double>::symmetric(out.data(), n, SymmetricLayout::Condensed, false));
}
std::shared_ptr<MatrixWriter<double>> dense_writer(std::vector<double>& out, std::size_t nr,
                                                   std::size_t nc) {
  return std::make_shared<MatrixWriter<double>>(MatrixWriter<double>::dense(out.data(), nr, nc));
}

// ---- errors and RAII ----

void test_error_macro_names_call_file_line_and_error(void**) {
  const int line = __LINE__ + 2;
  try {
    MPCF_CUDA_TRY(cudaSetDevice(4096));
    fail_msg("cudaSetDevice(4096) did not throw");
  } catch (const CudaError& e) {
    const std::string msg = e.what();
    std::printf("%s\n", msg.c_str());
    assert_true(contains(msg, "cudaErrorInvalidDevice"));
    assert_true(contains(msg, "cudaSetDevice(4096)"));
    assert_true(contains(msg, "test_gpu_internals.cu:" + std::to_string(line)));
    assert_true(e.kind() == ErrorKind::Cuda);
  }
  // The failure does not linger in the runtime's last-error slot.
  assert_int_equal(cudaGetLastError(), cudaSuccess);
}

void test_out_of_memory_has_its_own_type(void**) {
  try {
    DeviceArray<char> huge(std::size_t(1) << 52);  // 4 PiB
    fail_msg("a 4 PiB device array was allocated");
  } catch (const CudaOutOfMemory& e) {
    assert_true(contains(e.what(), "cudaErrorMemoryAllocation"));
    assert_true(e.kind() == ErrorKind::OutOfMemory);
  }
  try {
    PinnedHostBuffer<char> huge(std::size_t(1) << 52);
    fail_msg("a 4 PiB pinned buffer was allocated");
  } catch (const OutOfMemory& e) {
    assert_true(e.kind() == ErrorKind::OutOfMemory);
  }
  assert_int_equal(cudaGetLastError(), cudaSuccess);
}

void test_caching_allocator_reuses_blocks(void**) {
  CachingDeviceAllocator alloc(0);
  void* first = nullptr;
  {
    DeviceArray<float> a(1 << 20, &alloc);  // 4 MiB
    first = a.data();
    assert_int_equal(alloc.live_bytes(), 4u << 20);
  }
  assert_int_equal(alloc.live_bytes(), 0);
  assert_int_equal(alloc.cached_bytes(), 4u << 20);
  {
    DeviceArray<float> b((1 << 20) - 100, &alloc);  // fits the cached block
    assert_ptr_equal(b.data(), first);
    assert_int_equal(alloc.cuda_malloc_calls(), 1);
    DeviceArray<double> c(1 << 21, &alloc);  // 16 MiB: a new block
    assert_int_equal(alloc.cuda_malloc_calls(), 2);
    assert_true(static_cast<void*>(c.data()) != static_cast<void*>(b.data()));
  }
  // Moving an array moves ownership: one release only.
  DeviceArray<int> moved;
  {
    DeviceArray<int> d(10, &alloc);
    moved = std::move(d);
    assert_null(d.data());
  }
  assert_non_null(moved.data());
  moved = DeviceArray<int>();
  assert_int_equal(alloc.live_bytes(), 0);
  try {
    DeviceArray<char> e(std::size_t(1) << 52, &alloc);
    fail_msg("a 4 PiB block was allocated");
  } catch (const CudaOutOfMemory& e) {
    assert_true(contains(e.what(), "on CUDA device 0"));
  }
  assert_int_equal(alloc.live_bytes(), 0);
  // The failed allocation released the cache before it gave up.
  assert_int_equal(alloc.cached_bytes(), 0);
}

std::size_t free_bytes_now() {
  std::size_t freeB = 0, totalB = 0;
  assert_int_equal(cudaMemGetInfo(&freeB, &totalB), cudaSuccess);
  return freeB;
}

// At most limit() bytes stay cached: giving a block back beyond it frees
// cached blocks, the largest first; a lower limit frees the excess now.
void test_caching_allocator_limit(void**) {
  constexpr std::size_t MiB = std::size_t(1) << 20;
  CachingDeviceAllocator alloc(0, 20 * MiB);
  {
    DeviceArray<char> a(4 * MiB, &alloc), b(8 * MiB, &alloc), c(16 * MiB, &alloc);
  }
  // Given back c, b, a: c (16) is kept; b makes 24 > 20, which frees c,
  // the largest; a makes 12.
  assert_int_equal(alloc.cached_bytes(), 12 * MiB);
  alloc.set_limit(5 * MiB);
  assert_int_equal(alloc.cached_bytes(), 4 * MiB);
  assert_int_equal(alloc.limit(), 5 * MiB);
  alloc.set_limit(0);
  assert_int_equal(alloc.cached_bytes(), 0);
  {
    DeviceArray<char> d(MiB, &alloc);
  }
  assert_int_equal(alloc.cached_bytes(), 0);
  assert_int_equal(alloc.live_bytes(), 0);
}

// The process-wide cache of a device: every context of the device
// allocates from it, what it keeps leaves the device's free memory and the
// planner counts it as free, and release_device_caches gives it back.
void test_device_memory_cache(void**) {
  constexpr std::size_t MiB = std::size_t(1) << 20;
  constexpr std::size_t slack = 2 * MiB;  // free memory moves a little
  auto& cache = device_memory_cache(0);
  assert_ptr_equal(&cache, &device_memory_cache(0));
  const std::size_t limit = device_cache_limit();
  set_device_cache_limit(std::size_t(1) << 30);
  release_device_caches();
  assert_int_equal(device_cached_bytes(0), 0);
  const std::size_t before = free_bytes_now();
  const std::size_t plannerBefore = free_device_memory({0})[0];
  {
    GpuContext ctx(0);
    assert_ptr_equal(&ctx.allocator(), &cache);
    auto a = ctx.allocate<char>(64 * MiB);
    assert_true(free_bytes_now() + 60 * MiB <= before);
  }
  // Kept: not free for cudaMalloc, free for the planner.
  assert_int_equal(device_cached_bytes(0), 64 * MiB);
  assert_true(free_bytes_now() + 60 * MiB <= before);
  const std::size_t planner = free_device_memory({0})[0];
  assert_true(planner + slack >= plannerBefore && planner <= plannerBefore + slack);
  {
    GpuContext ctx(0);
    const std::size_t calls = cache.cuda_malloc_calls();
    auto b = ctx.allocate<char>(40 * MiB);  // the kept 64 MiB block
    assert_int_equal(cache.cuda_malloc_calls(), calls);
  }
  release_device_caches();
  assert_int_equal(device_cached_bytes(0), 0);
  assert_true(free_bytes_now() + slack >= before);
  set_device_cache_limit(limit);
}

// A named collection's whole upload is kept on the device between
// computations (tagged blocks of the device cache): the next upload of the
// same collection takes it without a copy, another collection of the same
// size never does, and a kept block handed out for something else is
// uploaded again.
void test_kept_collection_upload(void**) {
  using Manager = CudaPcfDataManager<float>;
  auto& cache = device_memory_cache(0);
  set_device_cache_limit(std::size_t(1) << 30);
  release_device_caches();
  Rng rng(5);
  Pcfs P;
  for (int i = 0; i < 300; ++i) {
    std::vector<double> t, v;
    const int m = 1 + static_cast<int>(rng.uniform() * 40);
    for (int k = 0; k < m; ++k) {
      t.push_back(k);
      v.push_back(k + 1 == m ? 0.0 : rng.uniform());
    }
    P.add(t, v);
  }
  std::vector<float> t(P.t.begin(), P.t.end()), v(P.v.begin(), P.v.end());
  auto make = [&](float shift) {
    std::vector<float> vs(v);
    for (auto& x : vs) x = x == 0.0f ? 0.0f : x + shift;
    auto coll = std::make_shared<const PcfCollection<float>>(P.n(), P.offsets.data(), t.data(),
                                                             vs.data(), 1);
    return std::pair{coll, cuda_data_of<float>(coll)};
  };
  auto [collA, A] = make(0.0f);
  auto [collB, B] = make(1.0f);  // the same sizes, other values
  assert_true(collA->id() != collB->id());
  {
    // Ids are unique across dtypes too (a float64 copy never takes a
    // float32 collection's kept blocks).
    const std::vector<double> td(P.t), vd(P.v);
    const PcfCollection<double> d(P.n(), P.offsets.data(), td.data(), vd.data(), 1);
    const PcfCollection<float> f(P.n(), P.offsets.data(), t.data(), v.data(), 1);
    assert_true(d.id() != f.id() && d.id() != collA->id() && f.id() != collB->id());
  }
  auto contents = [](const Manager::DeviceCollection& d) {
    std::vector<PcfPoint<float>> pts(d.elements.size());
    assert_int_equal(cudaMemcpy(pts.data(), d.elements.data(), d.elements.bytes(),
                                cudaMemcpyDeviceToHost),
                     cudaSuccess);
    std::vector<std::uint32_t> offs(d.offsets.size());
    assert_int_equal(cudaMemcpy(offs.data(), d.offsets.data(), d.offsets.bytes(),
                                cudaMemcpyDeviceToHost),
                     cudaSuccess);
    return std::pair{offs, pts};
  };
  auto expected = [](const PcfCollection<float>& c) {
    const auto& data = c.data();
    std::vector<std::uint32_t> offs(c.count() + 1);
    for (std::size_t k = 0; k <= c.count(); ++k) offs[k] = static_cast<std::uint32_t>(data.offset(k));
    return std::pair{offs, data.elements()};
  };
  auto same = [](const auto& got, const auto& want) {
    assert_true(got.first == want.first);
    assert_int_equal(got.second.size(), want.second.size());
    assert_memory_equal(got.second.data(), want.second.data(),
                        want.second.size() * sizeof(PcfPoint<float>));
  };
  GpuContext ctx(0);
  const float* firstElements = nullptr;
  {
    auto d = A->upload_whole(ctx, ctx.compute_stream());
    firstElements = reinterpret_cast<const float*>(d.elements.data());
    same(contents(d), expected(*collA));
  }
  assert_int_equal(cache.tagged_blocks(), 2);
  {
    const std::size_t calls = cache.cuda_malloc_calls();
    auto d = A->upload_whole(ctx, ctx.compute_stream());  // kept: no allocation, no copy
    assert_ptr_equal(reinterpret_cast<const float*>(d.elements.data()), firstElements);
    assert_int_equal(cache.cuda_malloc_calls(), calls);
    assert_int_equal(cache.tagged_blocks(), 0);  // lent out
    same(contents(d), expected(*collA));
  }
  {
    auto d = B->upload_whole(ctx, ctx.compute_stream());  // another collection: its own data
    same(contents(d), expected(*collB));
  }
  assert_int_equal(cache.tagged_blocks(), 4);  // A kept: B's upload took new blocks
  {
    // Requests of the kept blocks' sizes get other blocks: a kept block
    // goes only to its collection.
    const std::size_t sizes[2] = {(A->count() + 1) * sizeof(std::uint32_t),
                                  static_cast<std::size_t>(A->total_elements()) * sizeof(PcfPoint<float>)};
    std::vector<DeviceArray<char>> taken;
    const std::size_t calls = cache.cuda_malloc_calls();
    for (int k = 0; k < 4; ++k) {
      taken.emplace_back(sizes[k % 2], &cache);
      assert_int_equal(cudaMemset(taken.back().data(), 0x5a, sizes[k % 2]), cudaSuccess);
    }
    assert_int_equal(cache.cuda_malloc_calls(), calls + 4);
    assert_int_equal(cache.tagged_blocks(), 4);
  }
  {
    auto d = A->upload_whole(ctx, ctx.compute_stream());
    same(contents(d), expected(*collA));
    auto e = B->upload_whole(std::vector<int>{0});  // the multi-GPU path, kept
    same(contents(e[0]), expected(*collB));
  }
  // A limit that keeps nothing frees the kept copies: uploaded again.
  set_device_cache_limit(0);
  assert_int_equal(cache.tagged_blocks(), 0);
  set_device_cache_limit(std::size_t(1) << 30);
  {
    auto d = A->upload_whole(ctx, ctx.compute_stream());
    same(contents(d), expected(*collA));
    auto e = B->upload_whole(std::vector<int>{0});  // the multi-GPU path
    same(contents(e[0]), expected(*collB));
  }
  {
    auto e = A->upload_whole(std::vector<int>{0});  // kept by the context path above
    same(contents(e[0]), expected(*collA));
  }
  // An unnamed manager keeps nothing.
  auto unnamed = std::make_shared<Manager>(
      std::shared_ptr<const PcfDataManager<float>>(collA, &collA->data()));
  const std::size_t tagsBefore = cache.tagged_blocks();
  { auto d = unnamed->upload_whole(ctx, ctx.compute_stream()); }
  assert_int_equal(cache.tagged_blocks(), tagsBefore);
  release_device_caches();
  assert_int_equal(cache.tagged_blocks(), 0);
}

// ---- the CUB variants of the reduction kernels ----

// Block values with ties, -0, +-inf and NaN (a fixed generator).
template <typename T>
std::vector<T> tricky_block(std::size_t count, std::uint32_t seed) {
  std::vector<T> v(count);
  std::uint32_t x = seed;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    const std::uint32_t c = x >> 24;
    if (c < 4) e = std::numeric_limits<T>::quiet_NaN();
    else if (c < 8) e = std::numeric_limits<T>::infinity();
    else if (c < 10) e = T(-0.0);
    else if (c < 80) e = T((x >> 8) % 7);  // ties
    else e = T((x >> 8) & 0xffff) / T(4096);
  }
  return v;
}

// A list entry as (value bits, index): KnnEntry<double> has padding bytes
// that its writes leave undefined.
using EntryBits = std::pair<std::uint64_t, std::uint32_t>;

template <typename T, typename List>
std::vector<EntryBits> knn_lists_of(const DeviceArray<T>& block, std::uint32_t nr,
                                        std::uint32_t nc, int K, TriangleSkipMode skip,
                                        std::int64_t shift) {
  // Rows: into empty lists, then the same block again at other column
  // indices (a second block of the row). Columns: segments, then merged.
  DeviceArray<KnnEntry<T>> rows(std::size_t(nr) * K), cols(std::size_t(nc) * K);
  assert_int_equal(cudaMemset(rows.data(), 0xff, rows.bytes()), cudaSuccess);
  assert_int_equal(cudaMemset(cols.data(), 0xff, cols.bytes()), cudaSuccess);
  const unsigned grid = (nr * 32 + 255) / 256;
  knn_rows_kernel<T, List><<<grid, 256>>>(block.data(), nr, nc, shift, skip, K, 0, 0, rows.data());
  knn_rows_kernel<T, List><<<grid, 256>>>(block.data(), nr, nc, shift, skip, K, 0, nc, rows.data());
  const std::uint32_t segRows = 64, segs = (nr + segRows - 1) / segRows;
  DeviceArray<KnnEntry<T>> scratch(std::size_t(segs) * nc * K);
  knn_cols_kernel<T, List><<<dim3((nc + 31) / 32, segs), kKnnStripThreads>>>(
      block.data(), nr, nc, shift, skip, K, segRows, 0, scratch.data());
  knn_cols_merge_kernel<T, List><<<(nc * 32 + 255) / 256, 256>>>(scratch.data(), nc, segs, K, 0,
                                                                 cols.data());
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<KnnEntry<T>> all(rows.size() + cols.size());
  assert_int_equal(cudaMemcpy(all.data(), rows.data(), rows.bytes(), cudaMemcpyDeviceToHost),
                   cudaSuccess);
  assert_int_equal(cudaMemcpy(all.data() + rows.size(), cols.data(), cols.bytes(),
                              cudaMemcpyDeviceToHost),
                   cudaSuccess);
  std::vector<EntryBits> out;
  out.reserve(all.size());
  for (const auto& e : all) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &e.value, sizeof(T));
    out.emplace_back(bits, e.index);
  }
  return out;
}

// The first entry where two lists differ (for the failure message).
std::string first_difference(const std::vector<EntryBits>& a, const std::vector<EntryBits>& b) {
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    if (a[k] != b[k]) {
      return "entry " + std::to_string(k) + ": value bits " + std::to_string(a[k].first) + " index " +
             std::to_string(a[k].second) + " against " + std::to_string(b[k].first) + " index " +
             std::to_string(b[k].second);
    }
  }
  return a.size() == b.size() ? "none" : "the sizes";
}

// The lists of CUB's WarpMergeSort (always, or past 8 passing candidates)
// are those of the insertion, byte for byte; and the insertion's lists are
// right (checked on the host for the first rows: the K smallest kept
// (value, index) in KnnConsumer's order).
template <typename T>
void check_topk_variants() {
  const std::uint32_t nr = 300, nc = 700;
  // Distances: never -0 (the lists' keys order -0 before +0).
  auto host = tricky_block<T>(std::size_t(nr) * nc, 7);
  for (auto& v : host) {
    if (v == T(0)) v = T(0);
  }
  DeviceArray<T> block(host.size());
  assert_int_equal(cudaMemcpy(block.data(), host.data(), block.bytes(), cudaMemcpyHostToDevice),
                   cudaSuccess);
  for (int K : {1, 5, 10, 31, 32}) {
    for (auto [skip, shift] : {std::pair{TriangleSkipMode::None, std::int64_t(0)},
                               std::pair{TriangleSkipMode::LowerTriangleSkipDiag, std::int64_t(100)}}) {
      const auto plain = knn_lists_of<T, mpcf::cuda::detail::WarpTopK<T>>(block, nr, nc, K, skip, shift);
      const auto sorted = knn_lists_of<T, mpcf::cuda::detail::WarpTopKMergeSort<T, 0>>(block, nr, nc, K, skip, shift);
      const auto hybrid = knn_lists_of<T, mpcf::cuda::detail::WarpTopKMergeSort<T, 8>>(block, nr, nc, K, skip, shift);
      if (plain != sorted || plain != hybrid) {
        fail_msg("%s K = %d skip %d: insertion and merge sort differ at %s; and sort8 at %s",
                 sizeof(T) == 4 ? "float32" : "float64", K, static_cast<int>(skip),
                 first_difference(plain, sorted).c_str(), first_difference(plain, hybrid).c_str());
      }
      // Row 3 against the host: both passes offer the row's kept values
      // (columns c and nc + c).
      const std::uint32_t row = 3;
      std::vector<std::pair<std::uint64_t, std::uint32_t>> cand;
      auto key = [](T v) -> std::uint64_t {  // ascending values, NaN last
        if (v != v) return ~std::uint64_t(0) - 1;
        const double d = static_cast<double>(v);
        std::uint64_t u;
        std::memcpy(&u, &d, 8);
        return (u >> 63) ? ~u : (u | (std::uint64_t(1) << 63));
      };
      for (std::uint32_t pass = 0; pass < 2; ++pass) {
        for (std::uint32_t c = 0; c < nc; ++c) {
          if (!pair_kept(std::int64_t(row) - std::int64_t(c) + shift, skip)) continue;
          cand.emplace_back(key(host[std::size_t(row) * nc + c]), pass * nc + c);
        }
      }
      std::sort(cand.begin(), cand.end());
      for (int e = 0; e < K; ++e) {
        const std::uint32_t got = plain[std::size_t(row) * K + e].second;
        if (got != cand[e].second) {
          fail_msg("%s K = %d skip %d: row 3 entry %d has index %u, the host's order %u",
                   sizeof(T) == 4 ? "float32" : "float64", K, static_cast<int>(skip), e, got,
                   cand[e].second);
        }
      }
    }
  }
}

void test_topk_cub_variants_same_lists(void**) {
  check_topk_variants<float>();
  check_topk_variants<double>();
}

// The mat-vec rows kernel with cub::WarpReduce adds the same level sums and
// flags as the hand-written shuffles (r = 1: one column per pass; r = 5:
// passes of kMatvecChunk).
template <typename T>
void check_matvec_reduce_variants() {
  const std::uint32_t nr = 200, nc = 900;
  auto host = tricky_block<T>(std::size_t(nr) * nc, 11);
  for (auto& v : host) {
    if (std::isinf(v)) v = T(0.5);  // K = the value (L2): finite terms but for NaN
  }
  DeviceArray<T> block(host.size());
  assert_int_equal(cudaMemcpy(block.data(), host.data(), block.bytes(), cudaMemcpyHostToDevice),
                   cudaSuccess);
  for (std::uint32_t r : {1u, 5u}) {
    std::vector<T> V(std::size_t(nc) * r);
    for (std::size_t e = 0; e < V.size(); ++e) V[e] = T(int((e * 37) % 19) - 9) / T(8);
    std::vector<double> grids(r, 16.0);
    DeviceArray<T> dV(V.size());
    DeviceArray<double> dG(grids.size());
    assert_int_equal(cudaMemcpy(dV.data(), V.data(), dV.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    assert_int_equal(cudaMemcpy(dG.data(), grids.data(), dG.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    auto run = [&](bool cub) {
      DeviceArray<double> sums(std::size_t(nr) * r * ExactSum::kLevels);
      DeviceArray<std::uint32_t> flags(std::size_t(nr) * r);
      assert_int_equal(cudaMemset(sums.data(), 0, sums.bytes()), cudaSuccess);
      assert_int_equal(cudaMemset(flags.data(), 0, flags.bytes()), cudaSuccess);
      MatvecArgs<T> a{};
      a.kind = KernelKind::L2;
      a.scale = 1.0;
      a.V = dV.data();
      a.r = r;
      a.grids = dG.data();
      a.gridsPerRow = false;
      a.ratio = exact_sum_level_ratio(nc);
      a.skip = TriangleSkipMode::None;
      a.sums = sums.data();
      a.flags = flags.data();
      const unsigned grid = (nr * 32 + 255) / 256;
      if (r == 1) {
        if (cub) matvec_rows_kernel<T, 1, true><<<grid, 256>>>(block.data(), nr, nc, a);
        else matvec_rows_kernel<T, 1, false><<<grid, 256>>>(block.data(), nr, nc, a);
      } else {
        if (cub) matvec_rows_kernel<T, kMatvecChunk, true><<<grid, 256>>>(block.data(), nr, nc, a);
        else matvec_rows_kernel<T, kMatvecChunk, false><<<grid, 256>>>(block.data(), nr, nc, a);
      }
      assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<double> hs(sums.size());
      std::vector<std::uint32_t> hf(flags.size());
      assert_int_equal(cudaMemcpy(hs.data(), sums.data(), sums.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
      assert_int_equal(cudaMemcpy(hf.data(), flags.data(), flags.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
      return std::pair{hs, hf};
    };
    const auto plain = run(false), viaCub = run(true);
    assert_memory_equal(plain.first.data(), viaCub.first.data(), plain.first.size() * sizeof(double));
    assert_true(plain.second == viaCub.second);
    // NaN values in the block set the NaN flag of their rows.
    std::uint32_t nanRows = 0;
    for (std::uint32_t i = 0; i < nr; ++i) nanRows += (plain.second[std::size_t(i) * r] & ExactSum::kNaN) ? 1 : 0;
    assert_true(nanRows > 0);
  }
}

void test_matvec_cub_reduce_same_sums(void**) {
  check_matvec_reduce_variants<float>();
  check_matvec_reduce_variants<double>();
}

// ---- device queries ----

void test_device_queries(void**) {
  cudaDeviceProp prop{};
  assert_int_equal(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  // floor(sqrt(SMs * 1024)): 132 SMs (H100/H200) -> 367, 108 (A100) -> 332.
  const std::uint64_t side = get_min_block_side({0});
  std::printf("%s: %d SMs, min block side %llu\n", prop.name, prop.multiProcessorCount,
              static_cast<unsigned long long>(side));
  assert_true(side * side <= static_cast<std::uint64_t>(prop.multiProcessorCount) * 1024);
  assert_true((side + 1) * (side + 1) > static_cast<std::uint64_t>(prop.multiProcessorCount) * 1024);
  if (prop.multiProcessorCount == 132) assert_int_equal(side, 367);

  std::size_t freeB = 0, totalB = 0;
  assert_int_equal(cudaMemGetInfo(&freeB, &totalB), cudaSuccess);
  const std::uint64_t elems = get_max_output_elements({0}, 0.8, sizeof(float));
  const double want = freeB * 0.8 / 2 / sizeof(float);
  assert_true(std::fabs(static_cast<double>(elems) - want) <= 0.01 * want);  // free memory moves a little

  const int n = usable_device_count();
  assert_int_equal(resolve_devices({}).size(), n);
  try {
    resolve_devices({0, n + 3});
    fail_msg("a missing device was accepted");
  } catch (const CudaUnavailable& e) {
    assert_true(contains(e.what(), "device id " + std::to_string(n + 3) + " does not exist"));
  }
  try {
    resolve_devices({0, 0});
    fail_msg("a repeated device was accepted");
  } catch (const InvalidArgument& e) {
    assert_true(contains(e.what(), "listed twice"));
  }
  assert_int_equal(device_names().size(), n);
  assert_true(contains(build_info(), "devices=" + std::to_string(n) + " (" + prop.name));
}

// ---- data manager ----

void test_upload_subset_reindexes_offsets(void**) {
  Pcfs P;
  P.add({0, 1}, {1, 2});        // 0: 2 points
  P.add({5}, {6});              // 1: 1 point
  P.add({7, 8, 9}, {1, 2, 3});  // 2: 3 points
  P.add({10}, {4});             // 3: 1 point
  P.add({11, 12}, {5, 6});      // 4: 2 points
  auto data = cuda_data_of<double>(collection_of(P));
  assert_int_equal(data->max_subset_elements(3), 6);  // functions 1..3 or 2..4
  GpuContext ctx(0);
  auto s = data->allocate_subset(ctx, 3);
  assert_int_equal(s.capacityElements, 6);
  data->upload_subset(s, 1, 3, ctx.compute_stream());
  std::uint32_t offs[4];
  PcfPoint<double> pts[5];
  assert_int_equal(cudaMemcpyAsync(offs, s.offsets.data(), sizeof offs, cudaMemcpyDeviceToHost,
                                   ctx.compute_stream()), cudaSuccess);
  assert_int_equal(cudaMemcpyAsync(pts, s.elements.data(), sizeof pts, cudaMemcpyDeviceToHost,
                                   ctx.compute_stream()), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(ctx.compute_stream()), cudaSuccess);
  const std::uint32_t wantOffs[4] = {0, 1, 4, 5};
  const double wantT[5] = {5, 7, 8, 9, 10}, wantV[5] = {6, 1, 2, 3, 4};
  for (int k = 0; k < 4; ++k) assert_int_equal(offs[k], wantOffs[k]);
  for (int k = 0; k < 5; ++k) {
    assert_true(pts[k].t == wantT[k]);
    assert_true(pts[k].v == wantV[k]);
  }
  // A second upload reuses the same arrays.
  data->upload_subset(s, 3, 2, ctx.compute_stream());
  assert_int_equal(cudaMemcpyAsync(offs, s.offsets.data(), 3 * sizeof(std::uint32_t),
                                   cudaMemcpyDeviceToHost, ctx.compute_stream()), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(ctx.compute_stream()), cudaSuccess);
  assert_int_equal(offs[0], 0);
  assert_int_equal(offs[1], 1);
  assert_int_equal(offs[2], 3);
  try {
    data->upload_subset(s, 0, 4, ctx.compute_stream());
    fail_msg("a subset larger than the device arrays was accepted");
  } catch (const std::logic_error&) {
  }
}

// ---- the kernel's skip modes ----

// Runs one block through PcfBlockOp (the whole collection on the GPU, kernel
// `kernel`) and returns it (n_rows x n_cols, row-major).
//
// With bounds (host arrays, row i's at rowBounds[i * rowStride], column j's
// at colBounds[j * colStride]; colBounds empty: none), the kernels get them
// as PairBounds (pair_bounds.hpp) from device copies.
//
// binned: with bin lower bounds (PcfBlockOp::enable_bin_bounds, where the
// operation has them); `bins`, when given, receives the spec and the bins
// and norms of the sorted rows with the block's row order.
struct BinsSeen {
  BinSpec spec;
  std::vector<float> rowBins;  // bin s of sorted row r at s * rows + r
  std::vector<float> rowNorm;
  std::vector<std::uint32_t> rowOrder;
};
template <typename T, typename OpT>
std::vector<T> run_block_with(const Pcfs& P, const BlockInfo& block, TriangleSkipMode skip,
                              OpT fn, Window<T> window, PcfKernel kernel,
                              const std::vector<T>* rowBounds = nullptr, std::uint64_t rowStride = 0,
                              const std::vector<T>* colBounds = nullptr,
                              std::uint64_t colStride = 0, bool binned = false,
                              BinsSeen* bins = nullptr) {
  auto data = cuda_data_of<T>(collection_of<T>(P));
  PcfBlockOp<T, OpT> op(data, data, fn, window, skip);
  op.set_kernel(kernel);
  if (binned) op.enable_bin_bounds();
  BlockScheduler::Config c;
  c.nRows = P.n();
  c.nCols = P.n();
  c.mode = BlockMode::Full;
  const std::uint64_t side = std::max(block.n_rows(), block.n_cols());
  c.maxOutputElements = side * side;
  BlockScheduler sched(c);
  GpuContext ctx(0);
  auto storage = op.init_gpu_storage(ctx, sched);
  auto out = ctx.allocate<T>(block.elements());
  assert_int_equal(cudaMemsetAsync(out.data(), 0, out.bytes(), ctx.compute_stream()), cudaSuccess);
  PairBounds<T> bounds;
  DeviceArray<T> rb, cb;
  auto upload = [&](const std::vector<T>& host, DeviceArray<T>& dev) {
    dev = ctx.allocate<T>(host.size());
    assert_int_equal(cudaMemcpy(dev.data(), host.data(), dev.bytes(), cudaMemcpyHostToDevice),
                     cudaSuccess);
  };
  if (rowBounds) {
    upload(*rowBounds, rb);
    bounds.rows = rb.data();
    bounds.rowStride = rowStride;
  }
  if (colBounds && !colBounds->empty()) {
    upload(*colBounds, cb);
    bounds.cols = cb.data();
    bounds.colStride = colStride;
  }
  op.exec_block(storage, block, out.data(), ctx, 0, bounds);
  std::vector<T> host(block.elements());
  assert_int_equal(cudaMemcpyAsync(host.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost,
                                   ctx.compute_stream()), cudaSuccess);
  assert_int_equal(cudaStreamSynchronize(ctx.compute_stream()), cudaSuccess);
  if (bins && storage.binSpec.enabled()) {
    // Where the kernels find the bins (bin s of sorted row r at
    // rowBins[s * rowStride + r]) and the rows' norms.
    const BinArgs b = PcfBlockOp<T, OpT>::bin_args(storage, storage.slots[0]);
    const std::size_t S = b.spec.bins, nr = block.n_rows();
    std::vector<float> rowBins(S * std::size_t(b.rowStride));
    assert_int_equal(cudaMemcpy(rowBins.data(), b.rowBins, rowBins.size() * sizeof(float),
                                cudaMemcpyDeviceToHost), cudaSuccess);
    bins->spec = b.spec;
    bins->rowBins.assign(S * nr, 0.0f);
    for (std::size_t s = 0; s < S; ++s) {
      for (std::size_t r = 0; r < nr; ++r) bins->rowBins[s * nr + r] = rowBins[s * b.rowStride + r];
    }
    bins->rowNorm.resize(nr);
    assert_int_equal(cudaMemcpy(bins->rowNorm.data(), b.rowNorm, nr * sizeof(float),
                                cudaMemcpyDeviceToHost), cudaSuccess);
    bins->rowOrder = storage.slots[0].plan.rowOrder;
  }
  return host;
}

std::vector<double> run_block(const Pcfs& P, const BlockInfo& block, TriangleSkipMode skip) {
  return run_block_with<double>(P, block, skip, OperationL1Dist<double>{},
                                Window<double>::whole_line(), PcfKernel::Auto);
}

void test_kernel_triangle_skip_modes(void**) {
  Rng rng(8);
  RandomSpec spec;
  spec.n = 80;
  spec.minM = 2;  // with a zero tail, m = 1 would be the zero function
  spec.maxM = 9;
  spec.nonNegative = true;
  const Pcfs P = random_pcfs(rng, spec);
  struct Case {
    BlockInfo block;
    TriangleSkipMode skip;
  };
  const Case cases[] = {
      {{{0, 69}, {0, 69}, 0}, TriangleSkipMode::LowerTriangleSkipDiag},  // diagonal block
      {{{0, 69}, {0, 69}, 0}, TriangleSkipMode::LowerTriangle},
      {{{0, 69}, {0, 69}, 0}, TriangleSkipMode::None},
      {{{40, 79}, {0, 44}, 0}, TriangleSkipMode::LowerTriangleSkipDiag},  // straddles, shifted
      {{{10, 45}, {50, 79}, 0}, TriangleSkipMode::LowerTriangle},          // wholly above: nothing
  };
  for (const Case& cs : cases) {
    const auto got = run_block(P, cs.block, cs.skip);
    for (std::size_t r = 0; r < cs.block.n_rows(); ++r) {
      for (std::size_t c = 0; c < cs.block.n_cols(); ++c) {
        const std::size_t i = cs.block.rows.first + r, j = cs.block.cols.first + c;
        const bool kept = cs.skip == TriangleSkipMode::None ||
                          (cs.skip == TriangleSkipMode::LowerTriangle ? i >= j : i > j);
        const double v = got[r * cs.block.n_cols() + c];
        if (!kept) {
          if (v != 0.0) fail_msg("skipped pair (%zu, %zu) holds %g", i, j, v);
          continue;
        }
        const Reference ref = reference(P, i, P, j, Op::L1, 1.0, -INFINITY, INFINITY);
        if (!close_enough(v, ref.value, ref.magnitude, ref.rectangles, MPCF_FLOAT64, Op::L1)) {
          fail_msg("pair (%zu, %zu): kernel %.17g, reference %.17Lg", i, j, v, ref.value);
        }
        if (i != j && ref.value == 0) fail_msg("degenerate input: pair (%zu, %zu) is 0", i, j);
      }
    }
  }
}

// ---- the two block kernels ----

// Functions of `m` breakpoints whose lanes in a tile walk far apart: even
// indices dense on [0, 1), odd ones spread over [0, 4m); all of one length,
// so the sorted tiles keep them interleaved. A group's lanes then run far
// outside the ring of their row.
Pcfs spread_pcfs(Rng& rng, std::size_t n, std::size_t m) {
  Pcfs p;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> ts(m), vs(m);
    for (std::size_t k = 0; k < m; ++k) {
      ts[k] = i % 2 == 0 ? static_cast<float>(k / double(m)) : static_cast<double>(4 * k);
      vs[k] = k + 1 == m ? 0.0 : static_cast<float>(rng.uniform() * 10.0 - 5.0);
    }
    p.add(ts, vs);
  }
  return p;
}

// Functions on the integer grid 0..30: many breakpoints of f and g coincide.
Pcfs tied_pcfs(Rng& rng, std::size_t n) {
  Pcfs p;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> ts, vs;
    for (int t = 0; t <= 30; ++t) {
      if (t == 0 || rng.uniform() < 0.5) {
        ts.push_back(t);
        vs.push_back(std::floor(rng.uniform() * 7.0) - 3.0);
      }
    }
    vs.back() = 0.0;
    p.add(ts, vs);
  }
  return p;
}

// pcf_ring_kernel against pcf_tiled_kernel, with a warp walking one row
// against two tiles (Tiled; SharedRows: the row staged in shared memory
// too) and two rows against one (TiledHalfWarp), on the same blocks (blocks of 3 and 5 tiles: a last row group with one tile of
// two): the same bits
// for every operation, window, pair selection and dtype, with tied
// breakpoints, lanes far outside their ring (global reads, checked runs of
// steps), values outside the plain fold's bounds (+-1e308 in float64, where
// |f - g| and f * g overflow) and padding lanes; and, withReference, the
// reference (which does not overflow where float64 does).
const char* kernel_name(PcfKernel k) {
  switch (k) {
    case PcfKernel::Ring: return "ring";
    case PcfKernel::SharedRows: return "tiled (shared rows)";
    case PcfKernel::SharedRowsSplit: return "tiled (shared rows, split loads)";
    case PcfKernel::TiledHalfWarp: return "tiled (half-warps)";
    case PcfKernel::Tiled: return "tiled";
    default: return "auto";
  }
}

template <typename T>
void ring_vs_tiled(const Pcfs& P, const char* what, bool withReference = true) {
  const std::size_t n = P.n();
  struct Case {
    BlockInfo block;
    TriangleSkipMode skip;
  };
  const Case cases[] = {
      {{{0, n - 1}, {0, n - 1}, 0}, TriangleSkipMode::LowerTriangleSkipDiag},  // sorted triangle
      {{{0, n - 1}, {0, n - 1}, 0}, TriangleSkipMode::LowerTriangle},
      {{{n / 3, n - 1}, {0, n / 2}, 0}, TriangleSkipMode::LowerTriangleSkipDiag},  // by index
      {{{n / 2, n - 1}, {0, n / 2 - 1}, 0}, TriangleSkipMode::None},              // every pair
  };
  const Window<T> windows[] = {Window<T>::whole_line(), Window<T>{T(-1), T(7.5)}};
  auto check = [&](auto fn, Op op, double p) {
    using OpT = decltype(fn);
    for (const Case& cs : cases) {
      for (const Window<T>& w : windows) {
        const auto tiled = run_block_with<T>(P, cs.block, cs.skip, fn, w, PcfKernel::Tiled);
        const auto ring = run_block_with<T>(P, cs.block, cs.skip, fn, w, PcfKernel::Ring);
        for (const PcfKernel other :
             {PcfKernel::Ring, PcfKernel::SharedRows, PcfKernel::TiledHalfWarp,
              PcfKernel::SharedRowsSplit}) {
          const auto got =
              other == PcfKernel::Ring ? ring : run_block_with<T>(P, cs.block, cs.skip, fn, w, other);
          for (std::size_t k = 0; k < got.size(); ++k) {
            if (std::memcmp(&got[k], &tiled[k], sizeof(T)) != 0) {
              fail_msg("%s, %s, %s, block rows %zu.., element %zu: %s %.17g, tiled %.17g", what,
                       op_name(op).c_str(), dtype_name<T>(), cs.block.rows.first, k,
                       kernel_name(other), double(got[k]), double(tiled[k]));
            }
          }
        }
        if (!withReference || cs.skip != TriangleSkipMode::None) continue;
        for (std::size_t r = 0; r < cs.block.n_rows(); ++r) {  // the reference, every pair
          for (std::size_t c = 0; c < cs.block.n_cols(); ++c) {
            const std::size_t i = cs.block.rows.first + r, j = cs.block.cols.first + c;
            const Reference ref = reference(P, i, P, j, op, p, w.a, w.b);
            const double got = ring[r * cs.block.n_cols() + c];
            if (!close_enough(got, ref.value, ref.magnitude, ref.rectangles,
                              sizeof(T) == 4 ? MPCF_FLOAT32 : MPCF_FLOAT64, op)) {
              fail_msg("%s, %s: pair (%zu, %zu): ring %.17g, reference %.17Lg", what,
                       op_name(op).c_str(), i, j, got, ref.value);
            }
          }
        }
      }
    }
    (void)sizeof(OpT);
  };
  check(OperationL1Dist<T>{}, Op::L1, 1);
  check(OperationL2InnerProduct<T>{}, Op::Kernel, 2);
  if (small_mode()) return;  // under compute-sanitizer: the ring protocol is the same for all
  check(OperationLpDist<T>(T(2.5)), Op::Lp, 2.5);
  check(OperationLinfDist<T>{}, Op::Linf, INFINITY);
}

void test_ring_kernel_same_bits_as_tiled(void**) {
  Rng rng(31);
  RandomSpec spec;
  spec.n = 90;  // the last tile has padding lanes
  spec.minM = 1;
  spec.maxM = 60;
  const Pcfs random = random_pcfs(rng, spec);
  const Pcfs spread = spread_pcfs(rng, 48, 200);
  const Pcfs tied = tied_pcfs(rng, 70);
  Pcfs huge = random;
  for (std::size_t k = 0; k < huge.v.size(); k += 7) huge.v[k] = k % 2 ? 1e308 : -1e308;

  // Tiles of these sizes leave room for rings: the ring kernel runs.
  GpuContext ctx(0);
  const std::uint64_t deepest = 16 * 201 * sizeof(PcfPoint<double>);
  using L1Op = PcfBlockOp<double, OperationL1Dist<double>>;
  const std::size_t shared = ctx.info().sharedMemPerBlockOptin;
  assert_true(L1Op::ring_groups(PcfKernel::Ring, deepest, shared) >= PcfRingGeometry::kMinGroups);
  assert_true(L1Op::ring_groups(PcfKernel::Auto, deepest, shared) >= PcfRingGeometry::kMinGroups);
  assert_int_equal(L1Op::ring_groups(PcfKernel::Tiled, deepest, shared), 0);
  assert_int_equal(L1Op::ring_groups(PcfKernel::Ring, shared, shared), 0);  // no room left
  using L1OpF = PcfBlockOp<float, OperationL1Dist<float>>;
  assert_int_equal(L1OpF::ring_groups(PcfKernel::Auto, deepest, shared), 0);  // float: tiled

  for (const auto& [P, what] : {std::pair<const Pcfs*, const char*>{&random, "random"},
                                {&spread, "spread"},
                                {&tied, "tied"}}) {
    ring_vs_tiled<double>(*P, what);
    ring_vs_tiled<float>(*P, what);
  }
  ring_vs_tiled<double>(huge, "huge values", false);
}

// Pruned walks (PairBounds, pair_bounds.hpp): with bounds for the rows and
// columns of a block, every pair is either its exact value, bit for bit
// (the pcf_tiled_kernel without bounds), or, only where the exact value is
// above both bounds and neither is NaN, a value above both and at most the
// exact one. The bounds are fractions of each row's (column's) median exact
// value, some NaN, some +inf, with strides; with column bounds and without
// (rows alone decide); for L1 and L-infinity, both dtypes, windows, every
// pair selection and each tiled kernel (the ring kernel ignores bounds: its
// values stay exact). Each tiled kernel must stop some walks (a test that
// fails when bounds are ignored), and Lp, whose partial values may round
// above the final one, never does.
template <typename T>
T median_of(std::vector<T> x) {
  if (x.empty()) return T(0);
  std::nth_element(x.begin(), x.begin() + x.size() / 2, x.end());
  return x[x.size() / 2];
}

// Blocks of a collection of n functions that take each pair selection: the
// whole plane's diagonal block (the sorted triangle), a block straddling
// the diagonal (by index, with byIndexSkip) and one below it (every pair).
struct BlockCase {
  BlockInfo block;
  TriangleSkipMode skip;
};
std::vector<BlockCase> selection_cases(std::size_t n, TriangleSkipMode byIndexSkip) {
  return {{{{0, n - 1}, {0, n - 1}, 0}, TriangleSkipMode::LowerTriangleSkipDiag},
          {{{n / 3, n - 1}, {0, n / 2}, 0}, byIndexSkip},
          {{{n / 2, n - 1}, {0, n / 2 - 1}, 0}, TriangleSkipMode::None}};
}

// Pairs ruled out by bin bounds (+inf where the exact value is finite) and
// pairs computed with bin bounds, [float64, float32].
std::size_t g_binSkipped[2] = {0, 0};
std::size_t g_binPairs[2] = {0, 0};

template <typename T, typename OpT>
void check_pruned_op(const Pcfs& P, const char* what, OpT fn, Op op, bool prunable,
                     std::size_t& pruned, std::size_t& pairs) {
  const std::size_t n = P.n();
  const auto cases = selection_cases(n, TriangleSkipMode::LowerTriangleSkipDiag);
  const Window<T> windows[] = {Window<T>::whole_line(), Window<T>{T(-1), T(7.5)}};
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const PcfKernel kernels[] = {PcfKernel::Tiled, PcfKernel::SharedRows, PcfKernel::TiledHalfWarp,
                               PcfKernel::Ring, PcfKernel::SharedRowsSplit};
  const std::vector<T> none;
  for (const BlockCase& cs : cases) {
    const std::size_t nr = cs.block.n_rows(), nc = cs.block.n_cols();
    std::vector<char> kept(nr * nc);
    for (std::size_t r = 0; r < nr; ++r) {
      for (std::size_t c = 0; c < nc; ++c) {
        kept[r * nc + c] = cs.skip == TriangleSkipMode::None ||
                           cs.block.rows.first + r > cs.block.cols.first + c;
      }
    }
    for (const Window<T>& w : windows) {
      const std::vector<T> exact = run_block_with<T>(P, cs.block, cs.skip, fn, w, PcfKernel::Tiled);
      // Bounds: stride 3 for rows, 2 for columns (the gaps hold -1: read
      // there, a walk would stop at once).
      std::vector<T> rowB(nr * 3, T(-1)), colB(nc * 2, T(-1));
      for (std::size_t r = 0; r < nr; ++r) {
        std::vector<T> row;
        for (std::size_t c = 0; c < nc; ++c) {
          if (kept[r * nc + c]) row.push_back(exact[r * nc + c]);
        }
        rowB[r * 3] = r % 7 == 3    ? nan
                      : r % 11 == 5 ? inf
                                    : T(0.25 + 0.1 * (r % 6)) * median_of(row);
      }
      for (std::size_t c = 0; c < nc; ++c) {
        std::vector<T> col;
        for (std::size_t r = 0; r < nr; ++r) {
          if (kept[r * nc + c]) col.push_back(exact[r * nc + c]);
        }
        colB[c * 2] = c % 5 == 2 ? nan : T(0.2 + 0.15 * (c % 4)) * median_of(col);
      }
      for (int withCols = 1; withCols >= 0; --withCols) {
        for (const PcfKernel kernel : kernels) {
         for (const bool binned : {false, true}) {
          const std::vector<T> got = run_block_with<T>(P, cs.block, cs.skip, fn, w, kernel, &rowB,
                                                       3, withCols ? &colB : &none, 2, binned);
          std::size_t stopped = 0;
          for (std::size_t e = 0; e < nr * nc; ++e) {
            if (std::memcmp(&exact[e], &got[e], sizeof(T)) == 0) continue;
            const std::size_t r = e / nc, c = e % nc;
            const T br = rowB[r * 3], bc = withCols ? colB[c * 2] : -inf;
            const bool bounded = prunable && kept[e] && !std::isnan(br) && !std::isnan(bc);
            // A stopped walk: above both bounds, at most the exact value.
            const bool stop = bounded && kernel != PcfKernel::Ring && got[e] > br &&
                              got[e] > bc && got[e] <= exact[e];
            // Ruled out by its bin bound: +inf, only where the exact value
            // is above both bounds.
            const bool skip = bounded && binned && got[e] == inf && exact[e] > br &&
                              exact[e] > bc;
            if (!stop && !skip) {
              fail_msg("%s, %s, %s, %s%s, block rows %zu.., pair (%zu, %zu)%s: got %.17g, exact "
                       "%.17g, bounds %.17g / %.17g",
                       what, op_name(op).c_str(), dtype_name<T>(), kernel_name(kernel),
                       binned ? " with bin bounds" : "", cs.block.rows.first, r, c,
                       withCols ? "" : " (rows only)", double(got[e]), double(exact[e]),
                       double(br), double(bc));
            }
            if (skip && exact[e] != inf) ++g_binSkipped[sizeof(T) == 4];
            ++stopped;
          }
          if (binned && op == Op::L1) g_binPairs[sizeof(T) == 4] += nr * nc;
          if (prunable && kernel != PcfKernel::Ring && !binned) {
            pruned += stopped;
            pairs += nr * nc;
          }
         }
        }
      }
    }
  }
}

template <typename T>
void check_pruned_block(const Pcfs& P, const char* what, std::size_t& pruned, std::size_t& pairs) {
  check_pruned_op<T>(P, what, OperationL1Dist<T>{}, Op::L1, true, pruned, pairs);
  if (small_mode()) return;  // under compute-sanitizer: the same kernels for all
  check_pruned_op<T>(P, what, OperationLinfDist<T>{}, Op::Linf, true, pruned, pairs);
  check_pruned_op<T>(P, what, OperationLpDist<T>(T(2.5)), Op::Lp, false, pruned, pairs);
}

void test_pruned_walks_stop_only_above_their_bounds(void**) {
  Rng rng(47);
  RandomSpec spec;
  spec.n = small_mode() ? 40 : 90;
  spec.minM = 1;
  spec.maxM = 60;
  const Pcfs random = random_pcfs(rng, spec);
  const Pcfs tied = tied_pcfs(rng, 70);
  // Values outside the plain fold's bounds (UncheckedSumFold): the checked
  // walk, and float32 sums that overflow to +inf.
  Pcfs huge32 = random, huge64 = random;
  for (std::size_t k = 0; k < random.v.size(); k += 7) {
    huge32.v[k] = k % 2 ? 1e38 : -1e38;
    huge64.v[k] = k % 2 ? 1e308 : -1e308;
  }
  auto both = [&](const Pcfs& P32, const Pcfs& P64, const char* what, bool count) {
    std::size_t p32 = 0, n32 = 0, p64 = 0, n64 = 0;
    check_pruned_block<float>(P32, what, p32, n32);
    check_pruned_block<double>(P64, what, p64, n64);
    std::printf("pruned walks, %s: float32 %zu of %zu, float64 %zu of %zu\n", what, p32, n32, p64,
                n64);
    if (count) assert_true(p32 > n32 / 20 && p64 > n64 / 20);
  };
  g_binSkipped[0] = g_binSkipped[1] = 0;
  g_binPairs[0] = g_binPairs[1] = 0;
  both(random, random, "random", true);
  // Bin bounds (L1 only) must rule out some pairs of the random functions
  // (a test that fails when they are ignored).
  std::printf("ruled out by bin bounds, random: float32 %zu of %zu, float64 %zu of %zu\n",
              g_binSkipped[1], g_binPairs[1], g_binSkipped[0], g_binPairs[0]);
  assert_true(g_binSkipped[1] > g_binPairs[1] / 50 && g_binSkipped[0] > g_binPairs[0] / 50);
  if (small_mode()) return;
  both(tied, tied, "tied", true);
  both(huge32, huge64, "huge values", false);
}

// Bin bounds (bin_bounds.hpp) never rule out a pair whose walk value is not
// above its bound. Nested functions f_i = base + 0.37 i bump (bump >= 0,
// shared breakpoints, last values 0): f_i - f_j keeps one sign, so in exact
// arithmetic the bin sum of every pair equals its L1 distance (over the
// whole line and in a window inside the span). Each row's bound is its
// largest exact walk value in the block (columns [0, n - 1 - k]): every pair
// is open (so the bound kernel adds all bins: no early stop) and the pair
// at the bound is tight, where rounding alone decides: the margins must
// keep it (built with c1 = 1, c2 = c3 = 0 this test fails on the GPU: a
// tight pair gets +inf; a NumPy emulation of both float sums puts the bin
// sum above the walk's value for 430 of the 1,560 pairs). The bins are checked against
// prefix integrals in long double, the norms against the bins.
template <typename T>
void check_tight_pairs(std::uint64_t seed) {
  Rng rng(seed);
  const std::size_t n = small_mode() ? 24 : 40, M = 40;
  std::vector<double> times(M), base(M), bump(M);
  double t = -1.0;
  for (std::size_t k = 0; k < M; ++k) {
    times[k] = t;
    t += 0.05 + 0.95 * rng.uniform();
    base[k] = 10 * rng.uniform();
    bump[k] = rng.uniform();
  }
  base[M - 1] = bump[M - 1] = 0;
  Pcfs P;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> v(M);
    for (std::size_t k = 0; k < M; ++k) v[k] = base[k] + 0.37 * double(i) * bump[k];
    P.add(times, v);
  }
  const BlockInfo whole{{0, n - 1}, {0, n - 1}, 0};
  const std::vector<T> none;
  std::size_t checkedBins = 0;
  for (const Window<T> w : {Window<T>::whole_line(), Window<T>{T(-0.5), T(12)}}) {
    const std::vector<T> exact = run_block_with<T>(P, whole, TriangleSkipMode::None,
                                                   OperationL1Dist<T>{}, w, PcfKernel::Tiled);
    for (std::size_t j = 0; j < 4; ++j) {
      const std::size_t nc = n - j;  // columns [0, nc)
      std::vector<T> rowB(n, T(0)), want(n * nc);
      for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t c = 0; c < nc; ++c) {
          want[r * nc + c] = exact[r * n + c];
          rowB[r] = std::max(rowB[r], exact[r * n + c]);
        }
      }
      BinsSeen bins;
      const std::vector<T> got = run_block_with<T>(
          P, BlockInfo{{0, n - 1}, {0, nc - 1}, 0}, TriangleSkipMode::None, OperationL1Dist<T>{},
          w, PcfKernel::Auto, &rowB, 1, &none, 0, true, &bins);
      assert_true(bins.spec.enabled());
      for (std::size_t e = 0; e < n * nc; ++e) {
        if (std::memcmp(&got[e], &want[e], sizeof(T)) != 0) {
          fail_msg("%s, window [%g, %g]: pair (%zu, %zu), exact %.17g, its row's bound %.17g: "
                   "got %.17g",
                   dtype_name<T>(), double(w.a), double(w.b), e / nc, e % nc, double(want[e]),
                   double(rowB[e / nc]), double(got[e]));
        }
      }
      if (j > 0) continue;
      // The bins of every row: F_s = P(e_{s+1}) - P(e_s), P the prefix
      // integral of the function as stored (values rounded to T).
      const std::size_t S = bins.spec.bins;
      for (std::size_t r = 0; r < n; ++r) {
        const std::size_t f = bins.rowOrder[r];
        auto prefix = [&](long double x) {
          long double sum = 0;
          for (std::size_t k = 0; k < M; ++k) {
            const long double tk = static_cast<T>(P.t[P.offsets[f] + k]);
            const long double vk = static_cast<T>(P.v[P.offsets[f] + k]);
            const long double next =
                k + 1 < M ? static_cast<long double>(static_cast<T>(P.t[P.offsets[f] + k + 1]))
                          : std::numeric_limits<long double>::infinity();
            if (x <= tk) break;
            sum += vk * ((x < next ? x : next) - tk);
          }
          return sum;
        };
        double absSum = 0;
        for (std::size_t b = 0; b < S; ++b) {
          const double x = bins.spec.lo + double(b) * bins.spec.width;
          const double y = bins.spec.lo + double(b + 1) * bins.spec.width;
          const long double integral = prefix(y) - prefix(x);
          const float have = bins.rowBins[b * n + r];
          absSum += std::fabs(double(have));
          if (std::fabs(static_cast<long double>(have) - integral) >
              0x1p-23L * std::fabs(integral) + 1e-12L) {
            fail_msg("%s: bin %zu of function %zu is %.9g, its integral %.17Lg", dtype_name<T>(),
                     b, f, double(have), integral);
          }
          ++checkedBins;
        }
        const double norm = bins.rowNorm[r];
        if (!(norm >= absSum && norm <= absSum * (1 + 1e-6) + 1e-30)) {
          fail_msg("%s: norm %.9g of function %zu, bins' absolute sum %.17g", dtype_name<T>(),
                   norm, f, absSum);
        }
      }
    }
  }
  assert_true(checkedBins > 0);
}

// Bounds far below every distance: every selected pair is ruled out (+inf;
// thread blocks of the bound kernel whose pairs are all ruled out after
// their first bins stop there), none is walked, and the pairs the block
// does not compute keep the zeros they had.
void test_bin_bounds_rule_out_every_pair(void**) {
  Rng rng(91);
  RandomSpec spec;
  spec.n = small_mode() ? 150 : 300;
  spec.minM = 20;
  spec.maxM = 60;
  const Pcfs P = random_pcfs(rng, spec);
  const std::size_t n = P.n();
  const BlockInfo whole{{0, n - 1}, {0, n - 1}, 0};
  std::vector<float> rowB(n, 1e-6f);
  const std::vector<float> none;
  const std::vector<float> got =
      run_block_with<float>(P, whole, TriangleSkipMode::LowerTriangleSkipDiag,
                            OperationL1Dist<float>{}, Window<float>::whole_line(), PcfKernel::Auto,
                            &rowB, 1, &none, 0, true);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const float want = i > j ? std::numeric_limits<float>::infinity() : 0.0f;
      if (got[i * n + j] != want) {
        fail_msg("pair (%zu, %zu): %.9g, expected %.9g", i, j, double(got[i * n + j]),
                 double(want));
      }
    }
  }
}

// Tiles too deep for shared memory (float64, m = 1,200: 307 KB a tile): the
// binned walk reads them from global memory. Bounds at half of each row's
// median: every pair is exact, a stopped walk above its bound, or +inf
// above it, and some pairs are ruled out.
void test_bin_bounds_with_unstaged_tiles(void**) {
  Rng rng(23);
  RandomSpec spec;
  spec.n = 40;
  spec.minM = 1200;
  spec.maxM = 1200;
  const Pcfs P = random_pcfs(rng, spec);
  const std::size_t n = P.n();
  const BlockInfo whole{{0, n - 1}, {0, n - 1}, 0};
  const auto skip = TriangleSkipMode::None;
  const std::vector<double> exact = run_block_with<double>(
      P, whole, skip, OperationL1Dist<double>{}, Window<double>::whole_line(), PcfKernel::Tiled);
  std::vector<double> rowB(n);
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<double> row(exact.begin() + r * n, exact.begin() + (r + 1) * n);
    rowB[r] = 0.5 * median_of(row);
  }
  const std::vector<double> none;
  const std::vector<double> got =
      run_block_with<double>(P, whole, skip, OperationL1Dist<double>{},
                             Window<double>::whole_line(), PcfKernel::Auto, &rowB, 1, &none, 0, true);
  std::size_t ruledOut = 0;
  for (std::size_t e = 0; e < n * n; ++e) {
    const double b = rowB[e / n];
    const bool same = std::memcmp(&got[e], &exact[e], sizeof(double)) == 0;
    const bool stopped = got[e] > b && got[e] <= exact[e];
    const bool out = std::isinf(got[e]) && exact[e] > b;
    if (!same && !stopped && !out) {
      fail_msg("pair (%zu, %zu): got %.17g, exact %.17g, bound %.17g", e / n, e % n, got[e],
               exact[e], b);
    }
    ruledOut += out && !same;
  }
  std::printf("unstaged tiles: %zu of %zu pairs ruled out by bin bounds\n", ruledOut, n * n);
  assert_true(ruledOut > 0);
}

void test_bin_bounds_keep_pairs_at_their_bound(void**) {
  check_tight_pairs<float>(5);
  check_tight_pairs<double>(6);
}

// PcfBlockOp::launch_shape: which kernel and staging a launch gets, on a
// plan of three float64 tiles of depths 12, 8 and 6 points (16 columns of
// 16-byte points: 3072, 2048 and 1536 bytes).
void test_launch_shapes(void**) {
  BlockLayoutPlan p;
  p.nTiles = 3;
  const std::uint32_t C = PcfTileGeometry::kTileCols;
  p.tileOffsets = {0, 12 * C, 20 * C, 26 * C};
  const std::uint64_t b0 = 3072, b1 = 2048, b2 = 1536;
  assert_int_equal(tile_bytes(p, 0, sizeof(PcfPoint<double>)), b0);
  assert_int_equal(tile_bytes(p, 2, sizeof(PcfPoint<double>)), b2);
  using OpD = PcfBlockOp<double, OperationL1Dist<double>>;
  const std::uint64_t kSm = 233472;  // 228 KiB per multiprocessor
  // The pair fits: two tiles per row group, both staged.
  auto s = OpD::launch_shape(PcfKernel::Tiled, p, 0, 3, b0 + b1, kSm);
  assert_int_equal(s.ringGroups, 0);
  assert_int_equal(s.warpTiles, 2);
  assert_int_equal(s.sharedTiles, b0 + b1);
  // Only the first tile fits: one tile per half-warp, staged.
  s = OpD::launch_shape(PcfKernel::Tiled, p, 0, 3, b0 + b1 - 1, kSm);
  assert_int_equal(s.warpTiles, 1);
  assert_int_equal(s.sharedTiles, b0);
  // Nothing fits: pairs from global memory.
  s = OpD::launch_shape(PcfKernel::Tiled, p, 0, 3, b0 - 1, kSm);
  assert_int_equal(s.warpTiles, 2);
  assert_int_equal(s.sharedTiles, 0);
  // A launch of one tile: no pair to stage.
  s = OpD::launch_shape(PcfKernel::Tiled, p, 2, 3, b0 + b1, kSm);
  assert_int_equal(s.warpTiles, 2);
  assert_int_equal(s.sharedTiles, b2);
  // Half-warps always take one tile.
  s = OpD::launch_shape(PcfKernel::TiledHalfWarp, p, 0, 3, b0 + b1, kSm);
  assert_int_equal(s.warpTiles, 1);
  assert_int_equal(s.sharedTiles, b0);
  s = OpD::launch_shape(PcfKernel::TiledHalfWarp, p, 0, 3, b0 - 1, kSm);
  assert_int_equal(s.warpTiles, 1);
  assert_int_equal(s.sharedTiles, 0);
  // Rings where they fit next to the first tile; else the tiled kernel.
  const std::uint64_t room = b0 + 16 * 1024;  // 16 rings of 64 points of 16 bytes
  s = OpD::launch_shape(PcfKernel::Ring, p, 0, 3, room, kSm);
  assert_int_equal(s.ringGroups, 16);
  assert_int_equal(s.warpTiles, 1);
  assert_int_equal(s.sharedTiles, b0);
  s = OpD::launch_shape(PcfKernel::Ring, p, 0, 3, b0 + b1, kSm);  // room for 2 rings (fewer than 8)
  assert_int_equal(s.ringGroups, 0);
  assert_int_equal(s.warpTiles, 2);
  assert_int_equal(s.rowBufferPoints, 0);  // Ring and Tiled leave the rows in global memory

  // SharedRows: rows of 9 and 5 points with their sentinels (longest
  // first): buffers of 10 points (whole 16-byte units) per warp. Thread
  // blocks of 256 take 5120 + 8 * 10 * 16 = 6400 bytes, 8 resident (2048
  // threads): 64 warps; 512 and 1024 threads give 64 too: 256 is kept.
  p.nRows = 2;
  p.rowOffsets = {0, 9, 14};
  const std::uint64_t kBlock = 232448;  // 227 KiB per thread block
  s = OpD::launch_shape(PcfKernel::SharedRows, p, 0, 3, kBlock, kSm);
  assert_int_equal(s.warpTiles, 2);
  assert_int_equal(s.sharedTiles, b0 + b1);
  assert_int_equal(s.rowBufferPoints, 10);
  assert_int_equal(s.threads, 256);
  // A row of 1000 points (16,000 bytes per warp): 256 threads take
  // 133,120 bytes, one block per multiprocessor (8 warps), 512 do not fit:
  // fewer than 16 warps, so the rows stay in global memory.
  p.rowOffsets = {0, 1000, 1005};
  s = OpD::launch_shape(PcfKernel::SharedRows, p, 0, 3, kBlock, kSm);
  assert_int_equal(s.rowBufferPoints, 0);
  assert_int_equal(s.threads, 0);
  assert_int_equal(s.warpTiles, 2);
  assert_int_equal(s.sharedTiles, b0 + b1);
  // Auto in float64: rings where shared rows leave too few warps (as just
  // above), shared rows where they fit.
  s = OpD::launch_shape(PcfKernel::Auto, p, 0, 3, kBlock, kSm);
  assert_int_equal(s.ringGroups, 48);  // (232448 - 3072) / 1024 = 224, at most kMaxGroups
  assert_int_equal(s.rowBufferPoints, 0);
  p.rowOffsets = {0, 9, 14};
  s = OpD::launch_shape(PcfKernel::Auto, p, 0, 3, kBlock, kSm);
  assert_int_equal(s.ringGroups, 0);
  assert_int_equal(s.rowBufferPoints, 10);
  assert_false(s.splitLoads);
  // Auto in float32 (walks without bounds): shared rows with split loads
  // where they leave room for 32 warps (8-byte points: tiles of 1536 and 1024 bytes, buffers of
  // 80 bytes per warp, 64 warps with 256 threads), else half-warps.
  using OpF = PcfBlockOp<float, OperationL1Dist<float>>;
  const std::uint64_t f0 = 12 * C * sizeof(PcfPoint<float>), f1 = 8 * C * sizeof(PcfPoint<float>);
  auto sf = OpF::launch_shape(PcfKernel::Auto, p, 0, 3, kBlock, kSm);
  assert_int_equal(sf.ringGroups, 0);
  assert_true(sf.splitLoads);
  assert_int_equal(sf.rowBufferPoints, 10);
  assert_int_equal(sf.warpTiles, 2);
  assert_int_equal(sf.sharedTiles, f0 + f1);
  assert_int_equal(sf.threads, 256);
  // Walks with bounds (a kNN) keep half-warps in float32.
  sf = OpF::launch_shape(PcfKernel::Auto, p, 0, 3, kBlock, kSm, true);
  assert_false(sf.splitLoads);
  assert_int_equal(sf.rowBufferPoints, 0);
  assert_int_equal(sf.warpTiles, 1);
  assert_int_equal(sf.sharedTiles, f0);
  // The row of 1000 points (8,000 bytes per warp): 256 threads take 66,560
  // bytes, 3 blocks per multiprocessor (24 warps), 512 threads one block
  // (16 warps): enough for SharedRowsSplit asked for (16), not for Auto.
  p.rowOffsets = {0, 1000, 1005};
  sf = OpF::launch_shape(PcfKernel::SharedRowsSplit, p, 0, 3, kBlock, kSm);
  assert_true(sf.splitLoads);
  assert_int_equal(sf.rowBufferPoints, 1000);
  assert_int_equal(sf.threads, 256);
  sf = OpF::launch_shape(PcfKernel::Auto, p, 0, 3, kBlock, kSm);
  assert_false(sf.splitLoads);
  assert_int_equal(sf.rowBufferPoints, 0);
  assert_int_equal(sf.warpTiles, 1);
  assert_int_equal(sf.sharedTiles, f0);
}

// float32 inner products whose float attempt overflows, through each block
// kernel: the redo launch computes them again in double
// (overflowing_inner_product_pcfs, values by hand in overflowing_inner_product).
// Several such pairs share each warp and tile with ordinary ones (kinds
// cycle); every pair selection and a window holding [0, 2).
void test_float32_inner_product_redo_in_every_kernel(void**) {
  const Pcfs P = overflowing_inner_product_pcfs(70);
  const std::size_t n = P.n();
  const auto cases = selection_cases(n, TriangleSkipMode::LowerTriangle);
  for (const PcfKernel kernel : {PcfKernel::Tiled, PcfKernel::SharedRows, PcfKernel::TiledHalfWarp,
                                 PcfKernel::Ring}) {
    for (const Window<float>& w : {Window<float>::whole_line(), Window<float>{-1.0f, 3.0f}}) {
      for (const BlockCase& cs : cases) {
        const auto got = run_block_with<float>(P, cs.block, cs.skip,
                                               OperationL2InnerProduct<float>{}, w, kernel);
        for (std::size_t r = 0; r < cs.block.n_rows(); ++r) {
          for (std::size_t c = 0; c < cs.block.n_cols(); ++c) {
            const std::size_t i = cs.block.rows.first + r, j = cs.block.cols.first + c;
            if (!pair_kept(static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j), cs.skip)) {
              continue;
            }
            const float value = got[r * cs.block.n_cols() + c];
            const float want = overflowing_inner_product(i, j);
            if (!(value == want)) {
              fail_msg("%s kernel, %s, pair (%zu, %zu): %g, want %g", kernel_name(kernel),
                       w.is_whole_line() ? "whole line" : "window", i, j, double(value),
                       double(want));
            }
          }
        }
      }
    }
  }
}

// ---- the pipeline ----

// A BlockOp wrapping another (the PCF one) for the pipeline: its types,
// skip mode and storage; the wrappers below bring their own exec_block.
template <typename Inner>
struct WrappedBlockOp {
  using value_type = typename Inner::value_type;
  using GpuStorage = typename Inner::GpuStorage;
  const Inner& inner;
  TriangleSkipMode skip_mode() const { return inner.skip_mode(); }
  GpuStorage init_gpu_storage(GpuContext& ctx, const BlockScheduler& s) const {
    return inner.init_gpu_storage(ctx, s);
  }
};

// Wraps PcfBlockOp; throws a CUDA-style failure at the third block, or
// spoils the output with non-zero bytes in skipped entries.
template <typename Inner>
struct FaultyBlockOp : WrappedBlockOp<Inner> {
  using typename WrappedBlockOp<Inner>::value_type;
  using typename WrappedBlockOp<Inner>::GpuStorage;
  bool spoil;
  mutable std::atomic<int> calls{0};
  void exec_block(GpuStorage& st, const BlockInfo& b, value_type* out, GpuContext& ctx,
                  int slot) const {
    if (!spoil && ++calls == 3) {
      throw CudaError(cudaErrorLaunchFailure, "injected failure at the third block");
    }
    this->inner.exec_block(st, b, out, ctx, slot);
    if (spoil) {
      MPCF_CUDA_TRY(cudaMemsetAsync(out, 0x3f, b.elements() * sizeof(value_type),
                                    ctx.compute_stream(slot)));
    }
  }
};

// A BlockOp that records the bounds the pipeline hands it and passes them
// on to the PCF one, or not.
template <typename Inner>
struct BoundsRecordingOp : WrappedBlockOp<Inner> {
  using typename WrappedBlockOp<Inner>::value_type;
  using typename WrappedBlockOp<Inner>::GpuStorage;
  bool pass;
  std::uint64_t stride;  // expected of both sides: 2 k (an entry is two values)
  mutable std::atomic<int> calls{0}, complete{0};
  void exec_block(GpuStorage& st, const BlockInfo& b, value_type* out, GpuContext& ctx, int slot,
                  const PairBounds<value_type>& bounds = {}) const {
    ++calls;
    if (bounds.rows && bounds.cols && bounds.rowStride == stride && bounds.colStride == stride) {
      ++complete;
    }
    this->inner.exec_block(st, b, out, ctx, slot, pass ? bounds : PairBounds<value_type>{});
  }
};

// The pipeline hands a kNN's bounds to its BlockOp (every block, rows and
// columns on the symmetric plane, the lists' stride), the PCF BlockOp
// takes them in the pipeline's call, and the lists are the same bits with
// the bounds as without (small blocks: most walks run after the lists have
// filled).
void test_knn_pipeline_passes_pair_bounds(void**) {
  using Inner = PcfBlockOp<float, OperationL1Dist<float>>;
  static_assert(requires(const Inner& op, Inner::GpuStorage& st, const BlockInfo& b, float* out,
                         GpuContext& ctx, const PairBounds<float>& bounds) {
    op.exec_block(st, b, out, ctx, 0, bounds);
  });
  Rng rng(12);
  RandomSpec spec;
  spec.n = small_mode() ? 150 : 400;
  spec.maxM = 40;
  const Pcfs P = random_pcfs(rng, spec);
  auto data = cuda_data_of<float>(collection_of<float>(P));
  Inner inner(data, data, {}, Window<float>::whole_line(), TriangleSkipMode::LowerTriangleSkipDiag);
  BlockScheduler::Config c;
  c.nRows = c.nCols = P.n();
  c.mode = BlockMode::LowerTriangle;
  c.maxOutputElements = 48 * 48;
  BlockScheduler sched(c);
  PairPlane plane;
  plane.nRows = plane.nCols = P.n();
  plane.skip = TriangleSkipMode::LowerTriangleSkipDiag;
  const std::size_t k = 7;
  std::vector<float> dist[2];
  std::vector<std::int64_t> idx[2];
  for (int pass = 0; pass < 2; ++pass) {
    dist[pass].assign(P.n() * k, 0.0f);
    idx[pass].assign(P.n() * k, 0);
    KnnConsumer<float> knn(dist[pass].data(), idx[pass].data(), P.n(), k);
    knn.prepare(plane);
    KnnStage<float> stage(knn, plane);
    BoundsRecordingOp<Inner> op{{inner}, pass == 1, 2 * k};
    CudaBlockPipeline<BoundsRecordingOp<Inner>> pipeline(op, sched, {0}, 2);
    TaskControl control;
    pipeline.run(control, stage);
    knn.finish();
    assert_int_equal(op.calls.load(), static_cast<int>(sched.blocks().size()));
    assert_int_equal(op.complete.load(), op.calls.load());
  }
  assert_true(std::memcmp(dist[0].data(), dist[1].data(), dist[0].size() * sizeof(float)) == 0);
  assert_true(idx[0] == idx[1]);
}

void test_pipeline_stops_on_failure(void**) {
  Rng rng(9);
  RandomSpec spec;
  spec.n = 200;
  const Pcfs P = random_pcfs(rng, spec);
  auto data = cuda_data_of<double>(collection_of(P));
  using Inner = PcfBlockOp<double, OperationL1Dist<double>>;
  Inner inner(data, data, {}, Window<double>::whole_line(), TriangleSkipMode::LowerTriangleSkipDiag);
  BlockScheduler::Config c;
  c.nRows = c.nCols = P.n();
  c.mode = BlockMode::LowerTriangle;
  c.maxOutputElements = 40 * 40;  // 15 blocks
  BlockScheduler sched(c);
  std::vector<double> out(P.n() * (P.n() - 1) / 2, 0.0);
  auto writer = MatrixWriter<double>::symmetric(out.data(), P.n(), SymmetricLayout::PackedLower, false);
  PairPlane plane;
  plane.nRows = plane.nCols = P.n();
  plane.skip = TriangleSkipMode::LowerTriangleSkipDiag;
  writer.prepare(plane);
  IdentityStage<double> scatter(writer, plane, false);
  {
    FaultyBlockOp<Inner> faulty{{inner}, false};
    CudaBlockPipeline<FaultyBlockOp<Inner>> pipeline(faulty, sched, {0}, 2);
    TaskControl control;
    try {
      pipeline.run(control, scatter);
      fail_msg("the injected failure did not surface");
    } catch (const CudaError& e) {
      assert_true(contains(e.what(), "injected failure"));
    }
    assert_true(pipeline.blocks_per_device()[0] < sched.blocks().size());
  }
  {
    FaultyBlockOp<Inner> spoiled{{inner}, true};
    CudaBlockPipeline<FaultyBlockOp<Inner>> pipeline(spoiled, sched, {0}, 2);
    TaskControl control;
    try {
      pipeline.run(control, scatter);
      fail_msg("non-zero skipped entries were not detected");
    } catch (const std::logic_error& e) {
      assert_true(contains(e.what(), "outside the computed triangle"));
    }
  }
  {
    // Cancelled before it starts: nothing computed, Cancelled thrown.
    CudaBlockPipeline<Inner> pipeline(inner, sched, {0}, 2);
    TaskControl control;
    control.request_cancel();
    try {
      pipeline.run(control, scatter);
      fail_msg("a cancelled pipeline ran");
    } catch (const Cancelled&) {
    }
    assert_int_equal(pipeline.blocks_per_device()[0], 0);
  }
}

// Every GPU computes the same bits, alone and together (4 GPUs: all of
// them). Which GPU takes which block is up to the shared queue: with a
// problem this small one GPU may take every block before another has set up
// (seen on a 4-GPU machine: 0 and 45 blocks), so the blocks per device are
// printed, and only their sum is checked; that several GPUs share real work
// shows in the scaling benchmark.
void test_every_listed_gpu_is_used(void**) {
  const int n = usable_device_count();
  if (n < 2) {
    std::printf("test_every_listed_gpu_is_used: SKIP: needs 2 CUDA devices, found %d\n", n);
    skip();
  }
  Rng rng(10);
  RandomSpec spec;
  spec.n = 700;
  spec.maxM = 50;
  const Pcfs P = random_pcfs(rng, spec);
  const std::size_t pairs = P.n() * (P.n() - 1) / 2;
  auto X = collection_of(P);
  std::size_t blockCount = 0;
  auto run_on = [&](std::vector<int> devices, std::vector<double>& out) {
    CudaExecutionConfig cfg;
    cfg.devices = devices;
    cfg.splitHint = 64;
    cfg.minBlockSide = 1;
    auto task = l1_task(X, nullptr, condensed_writer(out, P.n()), devices, cfg);
    TaskControl control;
    task->run(control);
    assert_int_equal(control.done(), pairs);
    blockCount = task->block_count();
    return task->blocks_per_device();
  };
  std::vector<double> one(pairs);
  run_on({0}, one);
  assert_true(blockCount > 1);
  for (int d = 1; d < n; ++d) {  // each GPU alone
    std::vector<double> alone(pairs);
    const auto used = run_on({d}, alone);
    assert_int_equal(used[0], blockCount);
    assert_memory_equal(one.data(), alone.data(), pairs * sizeof(double));
  }
  for (int k : {2, n}) {  // the first two, then every GPU
    std::vector<int> devices(static_cast<std::size_t>(k));
    std::iota(devices.begin(), devices.end(), 0);
    std::vector<double> together(pairs);
    const auto used = run_on(devices, together);
    std::uint64_t sum = 0;
    std::printf("blocks per device (%d GPUs):", k);
    for (int d = 0; d < k; ++d) {
      std::printf(" %llu", static_cast<unsigned long long>(used[static_cast<std::size_t>(d)]));
      sum += used[static_cast<std::size_t>(d)];
    }
    std::printf("\n");
    assert_int_equal(sum, blockCount);
    assert_memory_equal(one.data(), together.data(), pairs * sizeof(double));
  }
}

// The resident input sent to every GPU in one pass (upload_resident) gives
// the same bits as each GPU uploading it on its own, and blocks overlapping
// on two streams the same bits as blocks on one, for pdist (rows and columns
// one collection) and cdist (two), on one GPU and on every GPU; the values
// agree with the brute-force reference.
void test_shared_upload_and_overlap_same_bits(void**) {
  const int gpus = usable_device_count();
  if (gpus < 1) skip();
  Rng rng(11);
  RandomSpec spec;
  spec.n = 160;
  spec.maxM = 40;
  const Pcfs X = random_pcfs(rng, spec);
  spec.n = 90;
  const Pcfs Y = random_pcfs(rng, spec);
  auto cx = collection_of(X);
  auto cy = collection_of(Y);
  const std::size_t pairs = X.n() * (X.n() - 1) / 2;
  std::vector<std::vector<int>> lists{{0}};
  if (gpus > 1) {
    lists.emplace_back(static_cast<std::size_t>(gpus));
    std::iota(lists.back().begin(), lists.back().end(), 0);
  }
  struct Variant {
    bool shared, overlap;
  };
  const Variant variants[] = {{false, true}, {true, true}, {true, false}};
  for (const auto& devices : lists) {
    std::vector<double> pd[3], cd[3];
    for (int k = 0; k < 3; ++k) {
      const bool shared = variants[k].shared, overlap = variants[k].overlap;
      CudaExecutionConfig cfg;
      cfg.devices = devices;
      cfg.splitHint = 16;
      cfg.minBlockSide = 1;
      cfg.sharedUpload = shared;
      cfg.overlapBlocks = overlap;
      pd[k].assign(pairs, -1.0);
      auto p = l1_task(cx, nullptr, condensed_writer(pd[k], X.n()), devices, cfg);
      TaskControl c1;
      p->run(c1);
      assert_true(p->resident());
      assert_true(shared ? p->stats().upload > 0 : p->stats().upload == 0);
      assert_int_equal(p->slots(), overlap ? 2 : 1);
      assert_true(p->block_count() > 2);
      cd[k].assign(X.n() * Y.n(), -1.0);
      auto x = l1_task(cx, cy, dense_writer(cd[k], X.n(), Y.n()), devices, cfg);
      TaskControl c2;
      x->run(c2);
      assert_true(x->resident());
      assert_true(shared ? x->stats().upload > 0 : x->stats().upload == 0);
      assert_int_equal(x->slots(), overlap ? 2 : 1);
    }
    for (int k = 1; k < 3; ++k) {
      assert_memory_equal(pd[0].data(), pd[k].data(), pairs * sizeof(double));
      assert_memory_equal(cd[0].data(), cd[k].data(), cd[0].size() * sizeof(double));
    }
    for (std::size_t i = 0, k = 0; i < X.n(); ++i) {
      for (std::size_t j = 0; j < Y.n(); ++j) {
        const Reference r = reference(X, i, Y, j, Op::L1, 1, -INFINITY, INFINITY);
        assert_true(close_enough(cd[1][i * Y.n() + j], r.value, r.magnitude, r.rectangles,
                                 MPCF_FLOAT64, Op::L1));
      }
      for (std::size_t j = i + 1; j < X.n(); ++j, ++k) {  // condensed: (i, j > i) row by row
        const Reference r = reference(X, i, X, j, Op::L1, 1, -INFINITY, INFINITY);
        assert_true(close_enough(pd[1][k], r.value, r.magnitude, r.rectangles, MPCF_FLOAT64,
                                 Op::L1));
      }
    }
  }
}

// The pipeline with the op's two slots on two streams against one slot on
// one stream, with streamed data (subsets per block and slot) and resident
// data (uploaded by each GPU's storage), for functions of one length (one
// launch per block: blocks overlap) and of many lengths (several launches:
// a block waits for the other stream): the same bits, and the reference.
void test_two_slots_streamed_and_resident(void**) {
  using BlockOpL1 = PcfBlockOp<double, OperationL1Dist<double>>;
  for (const bool varying : {false, true}) {
    Rng rng(varying ? 21 : 22);
    RandomSpec spec;
    spec.n = 150;
    spec.minM = varying ? 1 : 24;
    spec.maxM = varying ? 60 : 24;
    const Pcfs P = random_pcfs(rng, spec);
    auto data = cuda_data_of<double>(collection_of(P));
    BlockScheduler::Config c;
    c.nRows = c.nCols = P.n();
    c.mode = BlockMode::LowerTriangle;
    c.maxOutputElements = 40 * 40;
    BlockScheduler sched(c);
    assert_true(sched.blocks().size() > 4);
    const std::size_t pairs = P.n() * (P.n() - 1) / 2;
    struct Variant {
      bool resident;
      int slots;
    };
    const Variant variants[] = {{false, 2}, {false, 1}, {true, 2}};
    std::vector<double> out[3];
    for (int k = 0; k < 3; ++k) {
      BlockOpL1 op(data, data, {}, Window<double>::whole_line(), TriangleSkipMode::LowerTriangleSkipDiag);
      op.set_resident(variants[k].resident);
      op.set_slots(variants[k].slots);
      out[k].assign(pairs, -1.0);
      auto writer =
          MatrixWriter<double>::symmetric(out[k].data(), P.n(), SymmetricLayout::PackedLower, false);
      PairPlane plane;
      plane.nRows = plane.nCols = P.n();
      plane.skip = TriangleSkipMode::LowerTriangleSkipDiag;
      writer.prepare(plane);
      IdentityStage<double> scatter(writer, plane, false);
      CudaBlockPipeline<BlockOpL1> pipeline(op, sched, {0}, 2, variants[k].slots > 1);
      TaskControl control;
      pipeline.run(control, scatter);
      assert_int_equal(pipeline.blocks_per_device()[0], sched.blocks().size());
    }
    assert_memory_equal(out[0].data(), out[1].data(), pairs * sizeof(double));
    assert_memory_equal(out[0].data(), out[2].data(), pairs * sizeof(double));
    for (std::size_t i = 1, k = 0; i < P.n(); ++i) {
      for (std::size_t j = 0; j < i; ++j, ++k) {  // packed lower: (i, j < i) row by row
        const Reference r = reference(P, i, P, j, Op::L1, 1, -INFINITY, INFINITY);
        assert_true(close_enough(out[0][k], r.value, r.magnitude, r.rectangles, MPCF_FLOAT64,
                                 Op::L1));
      }
    }
  }
}

// The planner's choice of residency and slots, with an op whose storage
// sizes are given as fractions of this GPU's data budget: resident before
// streamed, two slots before one, one slot without overlapBlocks, and
// OutOfMemory when not even one slot of streamed data fits.
struct PlanProbe {
  using value_type = double;
  std::uint64_t residentBytes;
  std::uint64_t perSlotBytes;
  bool indices_fit(std::size_t, std::size_t) const { return true; }
  bool resident_possible() const { return true; }
  std::uint64_t gpu_storage_bytes(std::size_t, std::size_t, bool resident, int slots) const {
    return (resident ? residentBytes : 0) + static_cast<std::uint64_t>(slots) * perSlotBytes;
  }
};

void test_planner_slots(void**) {
  CudaExecutionConfig cfg;
  cfg.devices = {0};
  const double budget = static_cast<double>(get_data_budget_bytes(cfg.devices, cfg.memoryFraction));
  assert_true(budget > 1e6);
  auto plan = [&](double resident, double perSlot, bool overlap) {
    CudaExecutionConfig c = cfg;
    c.overlapBlocks = overlap;
    const PlanProbe op{static_cast<std::uint64_t>(resident * budget),
                       static_cast<std::uint64_t>(perSlot * budget)};
    return plan_blocks(1000, 1000, BlockMode::LowerTriangle, op, c.devices, c);
  };
  struct Case {
    double resident, perSlot;
    bool overlap;
    bool wantResident;
    int wantSlots;
  };
  const Case cases[] = {
      {0.5, 0.2, true, true, 2},   // 0.9 of the budget
      {0.5, 0.3, true, true, 1},   // two slots 1.1, one 0.8: resident wins over streamed x 2
      {2.0, 0.4, true, false, 2},  // not resident; streamed 0.8
      {2.0, 0.6, true, false, 1},  // streamed 1.2 with two slots, 0.6 with one
      {0.5, 0.1, false, true, 1},  // overlap off
  };
  for (const Case& k : cases) {
    const BlockPlan p = plan(k.resident, k.perSlot, k.overlap);
    assert_int_equal(p.resident, k.wantResident);
    assert_int_equal(p.slots, k.wantSlots);
  }
  try {
    plan(2.0, 1.2, true);
    fail_msg("a plan whose data never fits was accepted");
  } catch (const OutOfMemory& e) {
    assert_true(contains(e.what(), "smallest possible block"));
  }

  // What the consumer's stage keeps on the GPU counts too (a fraction of
  // the budget, whatever the block).
  auto planWithStage = [&](double resident, double perSlot, double stage) {
    const PlanProbe op{static_cast<std::uint64_t>(resident * budget),
                       static_cast<std::uint64_t>(perSlot * budget)};
    const auto stageBytes = static_cast<std::uint64_t>(stage * budget);
    return plan_blocks(1000, 1000, BlockMode::LowerTriangle, op, cfg.devices, cfg,
                       [&](std::size_t, std::size_t) { return stageBytes; });
  };
  const Case staged[] = {
      {0.5, 0.2, true, true, 2},   // stage 0:    0.9
      {0.5, 0.2, true, true, 1},   // stage 0.25: 1.15 with two slots, 0.95 with one
      {0.5, 0.2, true, false, 2},  // stage 0.35: resident 1.05 at best, streamed 0.75
  };
  const double stageOf[] = {0.0, 0.25, 0.35};
  for (int k = 0; k < 3; ++k) {
    const BlockPlan p = planWithStage(staged[k].resident, staged[k].perSlot, stageOf[k]);
    assert_int_equal(p.resident, staged[k].wantResident);
    assert_int_equal(p.slots, staged[k].wantSlots);
  }
  try {
    planWithStage(0.1, 0.1, 1.5);
    fail_msg("a stage larger than the budget was accepted");
  } catch (const OutOfMemory& e) {
    assert_true(contains(e.what(), "the reduction keeps"));
  }
  try {
    planWithStage(2.0, 0.7, 0.5);  // one slot of data fits the budget, not beside the stage
    fail_msg("data that fits only without the stage was accepted");
  } catch (const OutOfMemory& e) {
    assert_true(contains(e.what(), "after the reduction's"));
  }
}

}  // namespace

int main(int, char** argv) {
  skip_without_gpu(argv[0]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_error_macro_names_call_file_line_and_error),
      cmocka_unit_test(test_out_of_memory_has_its_own_type),
      cmocka_unit_test(test_caching_allocator_reuses_blocks),
      cmocka_unit_test(test_caching_allocator_limit),
      cmocka_unit_test(test_device_memory_cache),
      cmocka_unit_test(test_kept_collection_upload),
      cmocka_unit_test(test_topk_cub_variants_same_lists),
      cmocka_unit_test(test_matvec_cub_reduce_same_sums),
      cmocka_unit_test(test_device_queries),
      cmocka_unit_test(test_upload_subset_reindexes_offsets),
      cmocka_unit_test(test_kernel_triangle_skip_modes),
      cmocka_unit_test(test_ring_kernel_same_bits_as_tiled),
      cmocka_unit_test(test_pruned_walks_stop_only_above_their_bounds),
      cmocka_unit_test(test_bin_bounds_keep_pairs_at_their_bound),
      cmocka_unit_test(test_bin_bounds_rule_out_every_pair),
      cmocka_unit_test(test_bin_bounds_with_unstaged_tiles),
      cmocka_unit_test(test_launch_shapes),
      cmocka_unit_test(test_float32_inner_product_redo_in_every_kernel),
      cmocka_unit_test(test_knn_pipeline_passes_pair_bounds),
      cmocka_unit_test(test_pipeline_stops_on_failure),
      cmocka_unit_test(test_every_listed_gpu_is_used),
      cmocka_unit_test(test_shared_upload_and_overlap_same_bits),
      cmocka_unit_test(test_two_slots_streamed_and_resident),
      cmocka_unit_test(test_planner_slots),
  };
  // MPCF_GPU_TEST_FILTER: only the tests whose names match (CMocka's
  // pattern, e.g. "test_pruned*"), for runs on the GPU machine.
  if (const char* filter = std::getenv("MPCF_GPU_TEST_FILTER")) cmocka_set_test_filter(filter);
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
