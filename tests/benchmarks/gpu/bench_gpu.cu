// GPU benchmark of libmpcf (DESIGN §6): pdist L1 and l2_kernel, float32 and
// float64, n in {2000, 20000}, m = 128, 512 and varying uniformly in
// 10..1000. Input: t_0 = 0, gaps uniform(0.05, 1), values uniform(0, 10),
// last value 0. For every case, in the same process:
//   e2e/...   libmpcf end to end (mpcf_pdist / mpcf_l2_kernel, backend CUDA,
//             input handle -> result in host memory; condensed / packed);
//   ours/...  our block kernels alone over the whole lower triangle, data
//             already on the GPU (CUDA events), as the library chooses them
//             (PcfKernel::Auto); tiled/..., rows/..., half/... and
//             ring/... with pcf_tiled_kernel (a warp per row and two
//             tiles, the row read from global memory or, SharedRows,
//             staged in shared memory; or TiledHalfWarp: a half-warp per
//             row and one tile) or pcf_ring_kernel forced; split/... the
//             staged rows walked with split loads (SharedRowsSplit);
//   ref/...   the seed-style reference kernel: one thread per pair, points
//             read from global memory with 64-bit indexing, blocks of 1 x 32
//             threads (CUDA events), core's walk and the same output;
//   stages/...  the CUDA task alone (pdist condensed / l2_kernel packed),
//             with the pipeline's time per stage as counters (upload,
//             setup, enqueue, wait for downloads, scatter, GPU time per
//             block); stages_one_stream/... the same with consecutive blocks
//             on one compute stream (the baseline of the two-stream overlap).
// Multi-GPU (registered last, --benchmark_filter=^scale): scale/... pdist L1
// end to end at n = 50000 on the first 1, 2 and 4 GPUs (scale/registered/...:
// into an output registered with mpcf_cuda_register_host); scale_stages/... the
// task's stages per device, also with each GPU uploading the input on its
// own (own_uploads) and with one compute stream (one_stream).
// kNN with and without bin lower bounds (--benchmark_filter=^knnbins):
// knnbins/f32/<case>/gpus<g>/{bins,nobins}, the kNN task in the same run.
// Reductions (--benchmark_filter=^reduce, DESIGN §8): reduce/knn/... k = 10
// nearest neighbours end to end (mpcf_knn, CUDA) at n = 20000, 200000 and
// 500000 (m = 128, or m uniform in 10..1000), and n = 200000 of clustered
// functions (m128-clustered, see MMode); reduce/route_knn/... the route
// users take today, in the same run: the full distance matrix (mpcf_pdist,
// dense) then, per row, a partial sort for the k smallest (one host thread,
// like numpy.argpartition); reduce/matvec_r{1,16}/... kernel mat-vec (L2
// kernel) end to end, to compare with ours/l2_kernel/... (the l2_kernel
// kernels alone).
// Piecewise linear functions (--benchmark_filter=^plf, DESIGN §10): the
// same input read as PLF breakpoints; plf/pdist_L{1,2}/.../{pcf,plf} end to
// end (mpcf_pdist, condensed, CUDA) of the PCF and the PLF collection in the
// same run, n = 20000, m = 128 and 512; plf/knn/.../{pcf,plf} k = 10 at
// n = 200000, m = 128; the summary prints PLF / PCF.
// CUB (--benchmark_filter=^cub): the kNN top-k kernels and the mat-vec rows
// kernel with and without CUB's warp primitives (register_cub).
// For n = 2000 the outputs of ours, tiled, ring and ref are compared
// bitwise (the summary says "same bits" or the largest relative difference).
// Merge steps: sum over computed pairs of (breakpoints of f + of g).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/core/knn.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/cuda/block_reduce_kernels.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_integration_tasks.cuh"
#include "mpcf/cuda/pcf_block_op.cuh"
#include "mpcf/mpcf.h"

namespace {

using mpcf::BlockInfo;
using mpcf::TriangleSkipMode;

// ---- the seed-style reference kernel ----

template <typename T, typename Op>
__global__ void reference_pair_kernel(const mpcf::SimplePoint<T, T>* points,
                                      const std::size_t* offsets, std::size_t n, T* out,
                                      TriangleSkipMode skip, Op op) {
  const std::size_t i = blockIdx.x;
  const std::size_t j = static_cast<std::size_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  if (skip == TriangleSkipMode::LowerTriangle && j > i) return;
  if (skip == TriangleSkipMode::LowerTriangleSkipDiag && j >= i) return;
  const std::size_t fb = offsets[i], gb = offsets[j];
  out[i * n + j] = mpcf::integrate_pair<false>(
      points + fb, static_cast<std::uint32_t>(offsets[i + 1] - fb), points + gb,
      static_cast<std::uint32_t>(offsets[j + 1] - gb), T(0), T(0), op);
}

// ---- inputs ----

// Clustered128: m = 128, each function one of 1000 prototypes (drawn as
// Fixed128's functions) with its times moved by up to +-0.02 and its values
// by up to +-0.5: data with structure, whose nearest neighbours lie far
// closer than the typical distance (the random Fixed128 functions have
// none: their 10th neighbour of 10^6 is at 0.76 of the median distance).
enum class MMode { Fixed128, Fixed512, Varying, Clustered128 };
const char* m_name(MMode m) {
  return m == MMode::Fixed128       ? "m128"
         : m == MMode::Fixed512     ? "m512"
         : m == MMode::Clustered128 ? "m128-clustered"
                                    : "m10-1000";
}

struct Input {
  std::vector<std::uint64_t> offsets;
  std::vector<double> t, v;
};

const Input& input(std::size_t n, MMode mode) {
  static std::map<std::pair<std::size_t, int>, Input> cache;
  auto key = std::make_pair(n, static_cast<int>(mode));
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  std::mt19937_64 rng(1234 + n * 7 + static_cast<int>(mode));
  std::uniform_real_distribution<double> gap(0.05, 1.0), val(0.0, 10.0);
  std::uniform_int_distribution<int> len(10, 1000);
  Input in;
  in.offsets.push_back(0);
  if (mode == MMode::Clustered128) {
    const Input& proto = input(1000, MMode::Fixed128);
    std::uniform_int_distribution<std::size_t> pick(0, 999);
    std::uniform_real_distribution<double> dt(-0.02, 0.02), dv(-0.5, 0.5);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t p = pick(rng);
      for (std::uint64_t e = proto.offsets[p]; e < proto.offsets[p + 1]; ++e) {
        const bool first = e == proto.offsets[p], last = e + 1 == proto.offsets[p + 1];
        in.t.push_back(static_cast<float>(proto.t[e] + (first ? 0.0 : dt(rng))));
        in.v.push_back(last ? 0.0 : static_cast<float>(proto.v[e] + dv(rng)));
      }
      in.offsets.push_back(in.t.size());
    }
    return cache.emplace(key, std::move(in)).first->second;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t m = mode == MMode::Fixed128 ? 128 : mode == MMode::Fixed512 ? 512 : len(rng);
    double t = 0;
    for (std::size_t k = 0; k < m; ++k) {
      in.t.push_back(static_cast<float>(t));
      in.v.push_back(k + 1 == m ? 0.0 : static_cast<float>(val(rng)));
      t = static_cast<float>(t + gap(rng));
    }
    in.offsets.push_back(in.t.size());
  }
  return cache.emplace(key, std::move(in)).first->second;
}

// The input as a collection of T (the library's type for the kernels and
// tasks run directly).
template <typename T>
std::shared_ptr<const mpcf::PcfCollection<T>> collection_of(const Input& in) {
  std::vector<std::uint64_t> offs(in.offsets.begin(), in.offsets.end());
  std::vector<T> t(in.t.begin(), in.t.end()), v(in.v.begin(), in.v.end());
  return std::make_shared<const mpcf::PcfCollection<T>>(offs.size() - 1, offs.data(), t.data(),
                                                        v.data(), 1);
}

template <typename T>
mpcf_pcfs* handle_of(const Input& in, bool linear = false) {
  std::vector<T> t(in.t.begin(), in.t.end()), v(in.v.begin(), in.v.end());
  mpcf_pcfs* h = nullptr;
  const mpcf_dtype dt = sizeof(T) == 4 ? MPCF_FLOAT32 : MPCF_FLOAT64;
  auto create = linear ? mpcf_plfs_create : mpcf_pcfs_create;
  if (create(dt, in.offsets.size() - 1, in.offsets.data(), t.data(), v.data(), &h) != MPCF_OK) {
    std::fprintf(stderr, "mpcf_pcfs_create: %s\n", mpcf_last_error_message());
    std::abort();
  }
  return h;
}

double merge_steps(const Input& in, bool kernel) {
  const double n = static_cast<double>(in.offsets.size() - 1);
  return (kernel ? n + 1 : n - 1) * static_cast<double>(in.offsets.back());
}

// ---- results for the summary ----

struct Row {
  double e2e = NAN, e2e0 = NAN, ours = NAN, tiled = NAN, ring = NAN, ref = NAN, steps = 0;
  std::vector<double> oursOut, tiledOut, rowsOut, halfOut, ringOut, splitOut, refOut;  // lower triangles (n = 2000 cases)
  std::string stages;
  std::string stagesOneStream;  // the same with consecutive blocks on one compute stream
};
std::map<std::string, Row>& rows() {
  static std::map<std::string, Row> r;
  return r;
}

std::string case_name(bool kernel, bool f32, std::size_t n, MMode m) {
  return std::string(kernel ? "l2_kernel" : "pdist_L1") + "/" + (f32 ? "f32" : "f64") + "/n" +
         std::to_string(n) + "/" + m_name(m);
}

#define CHECK_CUDA(call)                                                                   \
  do {                                                                                     \
    cudaError_t e_ = (call);                                                               \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_));                \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)

// ---- benchmarks ----

// Options for the CUDA backend on `devices` (empty: every GPU).
mpcf_options* cuda_options(const std::vector<int>& devices) {
  mpcf_options* o = nullptr;
  mpcf_options_create(&o);
  mpcf_options_set_backend(o, MPCF_BACKEND_CUDA);
  if (!devices.empty()) mpcf_options_set_devices(o, devices.size(), devices.data());
  return o;
}

template <typename T>
void bm_end_to_end(benchmark::State& state, bool kernel, std::size_t n, MMode m, int device) {
  const Input& in = input(n, m);
  mpcf_pcfs* X = handle_of<T>(in);
  mpcf_options* o = cuda_options(device >= 0 ? std::vector<int>{device} : std::vector<int>{});
  const mpcf_layout layout = kernel ? MPCF_LAYOUT_PACKED_LOWER : MPCF_LAYOUT_CONDENSED;
  std::uint64_t size = 0;
  if (kernel) mpcf_l2_kernel_size(X, layout, &size); else mpcf_pdist_size(X, layout, &size);
  std::vector<T> out(size);
  for (auto _ : state) {
    const mpcf_status st = kernel ? mpcf_l2_kernel(X, layout, out.data(), size, o)
                                  : mpcf_pdist(X, 1.0, layout, out.data(), size, o);
    if (st != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
  }
  const double steps = merge_steps(in, kernel);
  state.counters["merge_steps_per_s"] = benchmark::Counter(steps, benchmark::Counter::kIsIterationInvariantRate);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// One output buffer of at least `bytes` for the cases that share it (up to
// 10 GB at n = 50000), allocated and touched once, outside the timings.
template <typename T>
T* shared_output(std::size_t count) {
  static std::vector<unsigned char> buffer;
  if (buffer.size() < count * sizeof(T)) buffer.resize(count * sizeof(T));
  return reinterpret_cast<T*>(buffer.data());
}

// Multi-GPU scaling (DESIGN §6): pdist L1 end to end (condensed) on the
// first `gpus` devices, n = 50000, into the shared output buffer.
std::map<std::string, double>& scale_times() {
  static std::map<std::string, double> t;  // "case/gpusK" -> seconds
  return t;
}

//
// registered: the output is page-locked with mpcf_cuda_register_host before
// the calls (outside the timing, as a caller that reuses its buffer does)
// and the GPUs write the result straight into it; unregistered at the end.
template <typename T>
void bm_scaling(benchmark::State& state, std::size_t n, MMode m, int gpus, bool registered = false) {
  const Input& in = input(n, m);
  mpcf_pcfs* X = handle_of<T>(in);
  std::vector<int> devices(static_cast<std::size_t>(gpus));
  std::iota(devices.begin(), devices.end(), 0);
  mpcf_options* o = cuda_options(devices);
  std::uint64_t size = 0;
  mpcf_pdist_size(X, MPCF_LAYOUT_CONDENSED, &size);
  T* out = shared_output<T>(size);
  struct Registration {
    void* p = nullptr;
    ~Registration() {
      if (p) mpcf_cuda_unregister_host(p);
    }
  } reg;
  if (registered) {
    const auto t = std::chrono::steady_clock::now();
    if (mpcf_cuda_register_host(out, size * sizeof(T)) != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      return;
    }
    reg.p = out;
    state.counters["register_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  // One call outside the timing: the steady state, not the first call's
  // device allocations and pinned chunks.
  if (mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, size, o) != MPCF_OK) {
    state.SkipWithError(mpcf_last_error_message());
  }
  for (auto _ : state) {
    if (mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, size, o) != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
  }
  state.counters["merge_steps_per_s"] =
      benchmark::Counter(merge_steps(in, false), benchmark::Counter::kIsIterationInvariantRate);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// Times `launch` (enqueued on `stream`) with events; one launch per iteration.
template <typename Launch>
void time_launches(benchmark::State& state, cudaStream_t stream, Launch launch) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  launch();  // warm-up (module load, clocks)
  CHECK_CUDA(cudaStreamSynchronize(stream));
  for (auto _ : state) {
    CHECK_CUDA(cudaEventRecord(a, stream));
    launch();
    CHECK_CUDA(cudaEventRecord(b, stream));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    state.SetIterationTime(ms / 1000.0);
  }
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
}

// Keeps the computed lower triangle (i > j, or i >= j for kernels) of an
// n x n device buffer for the bitwise comparison of ours and ref.
template <typename T>
std::vector<double> lower_triangle(const T* device, std::size_t n, bool kernel) {
  std::vector<T> all(n * n);
  CHECK_CUDA(cudaMemcpy(all.data(), device, all.size() * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<double> low;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < (kernel ? i + 1 : i); ++j) low.push_back(all[i * n + j]);
  }
  return low;
}

// Which kernel a bm_kernels case times.
enum class KernelCase { Ours, Tiled, Rows, Half, Ring, Split, Ref };
const char* kernel_case_name(KernelCase k) {
  switch (k) {
    case KernelCase::Ours: return "ours/";
    case KernelCase::Tiled: return "tiled/";
    case KernelCase::Rows: return "rows/";
    case KernelCase::Half: return "half/";
    case KernelCase::Ring: return "ring/";
    case KernelCase::Split: return "split/";
    case KernelCase::Ref: default: return "ref/";
  }
}

template <typename T, typename Op>
void bm_kernels(benchmark::State& state, KernelCase which, bool kernel, std::size_t n, MMode m) {
  const bool reference = which == KernelCase::Ref;
  const Input& in = input(n, m);
  auto coll = collection_of<T>(in);
  const TriangleSkipMode skip =
      kernel ? TriangleSkipMode::LowerTriangle : TriangleSkipMode::LowerTriangleSkipDiag;
  mpcf::cuda::GpuContext ctx(0);
  auto out = ctx.allocate<T>(static_cast<std::size_t>(n) * n);
  CHECK_CUDA(cudaMemsetAsync(out.data(), 0, out.bytes(), ctx.compute_stream()));
  if (reference) {
    const auto& pts = coll->data().elements();
    auto dPts = ctx.allocate<mpcf::SimplePoint<T, T>>(pts.size());
    auto dOff = ctx.allocate<std::size_t>(n + 1);
    std::vector<std::size_t> o64(in.offsets.begin(), in.offsets.end());
    CHECK_CUDA(cudaMemcpy(dPts.data(), pts.data(), dPts.bytes(), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dOff.data(), o64.data(), dOff.bytes(), cudaMemcpyHostToDevice));
    const dim3 block(1, 32), grid(static_cast<unsigned>(n), static_cast<unsigned>((n + 31) / 32));
    time_launches(state, ctx.compute_stream(), [&] {
      reference_pair_kernel<T, Op><<<grid, block, 0, ctx.compute_stream()>>>(
          dPts.data(), dOff.data(), n, out.data(), skip, Op{});
      CHECK_CUDA(cudaGetLastError());
    });
  } else {
    auto data = mpcf::cuda::cuda_data_of<T>(coll);
    mpcf::cuda::PcfBlockOp<T, Op> op(data, data, Op{}, mpcf::Window<T>::whole_line(), skip);
    op.set_kernel(which == KernelCase::Tiled  ? mpcf::cuda::PcfKernel::Tiled
                  : which == KernelCase::Rows ? mpcf::cuda::PcfKernel::SharedRows
                  : which == KernelCase::Half ? mpcf::cuda::PcfKernel::TiledHalfWarp
                  : which == KernelCase::Ring ? mpcf::cuda::PcfKernel::Ring
                  : which == KernelCase::Split ? mpcf::cuda::PcfKernel::SharedRowsSplit
                                              : mpcf::cuda::PcfKernel::Auto);
    mpcf::BlockScheduler::Config c;
    c.nRows = c.nCols = n;
    c.mode = mpcf::BlockMode::LowerTriangle;
    c.maxOutputElements = static_cast<std::uint64_t>(n) * n;
    mpcf::BlockScheduler sched(c);
    auto storage = op.init_gpu_storage(ctx, sched);
    const BlockInfo whole = sched.blocks().at(0);
    op.upload_block(storage, whole, ctx.compute_stream());
    time_launches(state, ctx.compute_stream(),
                  [&] { op.launch_block(storage, whole, out.data(), ctx.compute_stream()); });
  }
  const double steps = merge_steps(in, kernel);
  state.counters["merge_steps_per_s"] = benchmark::Counter(steps, benchmark::Counter::kIsIterationInvariantRate);
  if (n <= 2000) {
    Row& row = rows()[case_name(kernel, sizeof(T) == 4, n, m)];
    auto& keep = which == KernelCase::Ref     ? row.refOut
                 : which == KernelCase::Tiled ? row.tiledOut
                 : which == KernelCase::Half  ? row.halfOut
                 : which == KernelCase::Rows  ? row.rowsOut
                 : which == KernelCase::Ring  ? row.ringOut
                 : which == KernelCase::Split ? row.splitOut
                                              : row.oursOut;
    keep = lower_triangle(out.data(), n, kernel);
  }
}

// The per-device lines of the stages cases, printed after the summary.
std::map<std::string, std::vector<std::string>>& device_stage_lines() {
  static std::map<std::string, std::vector<std::string>> lines;
  return lines;
}

std::string stage_line(const mpcf::cuda::PipelineStats& st) {
  char line[400];
  std::snprintf(line, sizeof line,
                "upload %.4f, setup %.4f (context %.4f, storage %.4f, buffers %.4f, chunks "
                "%.4f), first "
                "block at %.4f, "
                "enqueue %.4f, wait %.4f, scatter %.4f; GPU per block %.4f; %llu blocks; done at "
                "%.4f; plan %.4f, run %.4f, teardown %.4f",
                st.upload, st.setup, st.context, st.storage, st.buffers, st.chunks,
                st.first_block, st.enqueue, st.wait,
                st.scatter, st.gpu_compute, static_cast<unsigned long long>(st.blocks), st.finish,
                st.plan, st.total, st.teardown);
  return line;
}

// The CUDA task alone (pdist condensed / l2_kernel packed) on the first
// `gpus` devices, with the pipeline's stage timings of the last iteration:
// for the summary table, or per device for the scaling table (scaling).
template <typename T, typename Op>
void bm_stages(benchmark::State& state, bool kernel, std::size_t n, MMode m, int gpus,
               bool scaling, bool sharedUpload = true, bool overlap = true) {
  const Input& in = input(n, m);
  auto coll = collection_of<T>(in);
  const mpcf::SymmetricLayout layout =
      kernel ? mpcf::SymmetricLayout::PackedLower : mpcf::SymmetricLayout::Condensed;
  T* out = shared_output<T>(mpcf::symmetric_result_size(n, layout, kernel));
  mpcf::cuda::CudaExecutionConfig cfg;
  cfg.devices.resize(static_cast<std::size_t>(gpus));
  std::iota(cfg.devices.begin(), cfg.devices.end(), 0);
  cfg.sharedUpload = sharedUpload;
  cfg.overlapBlocks = overlap;
  mpcf::cuda::PipelineStats st;
  std::vector<mpcf::cuda::PipelineStats> perDevice;
  bool resident = false;
  int slots = 0;
  std::size_t blocks = 0;
  auto run = [&](auto& task) {
    mpcf::TaskControl control;
    task.run(control);
    st = task.stats();
    perDevice = task.stats_per_device();
    resident = task.resident();
    slots = task.slots();
    blocks = task.block_count();
  };
  for (auto _ : state) {
    mpcf::PairRequest<T> request;
    request.x = request.y = coll;
    request.symmetric = true;
    request.op = kernel ? mpcf::OperationSpec::l2_kernel() : mpcf::OperationSpec::distance(1.0);
    request.consumer = std::make_shared<mpcf::MatrixWriter<T>>(
        mpcf::MatrixWriter<T>::symmetric(out, n, layout, kernel));
    auto task = mpcf::cuda::make_pcf_task<T>(request, Op{}, cfg.devices, cfg);
    run(*task);
  }
  state.counters["blocks"] = static_cast<double>(blocks);
  state.counters["resident"] = resident ? 1 : 0;
  state.counters["setup_s"] = st.setup;
  state.counters["storage_s"] = st.storage;
  state.counters["enqueue_s"] = st.enqueue;
  state.counters["wait_s"] = st.wait;
  state.counters["scatter_s"] = st.scatter;
  state.counters["gpu_s"] = st.gpu_compute;
  state.counters["pipeline_s"] = st.total;
  char head[128];
  std::snprintf(head, sizeof head, "pipeline %.4f s (with the upload), %zu blocks, %s, %d slot(s); ",
                st.total, blocks, resident ? "resident" : "streamed", slots);
  const std::string name = case_name(kernel, sizeof(T) == 4, n, m);
  if (!scaling) {
    (overlap ? rows()[name].stages : rows()[name].stagesOneStream) = head + stage_line(st);
    return;
  }
  std::string key = name + "/gpus" + std::to_string(gpus) + (sharedUpload ? "" : "/own_uploads");
  if (!overlap) key += "/one_stream";
  auto& lines = device_stage_lines()[key];
  lines.assign(1, head);
  for (std::size_t d = 0; d < perDevice.size(); ++d) {
    lines.push_back("GPU " + std::to_string(d) + ": " + stage_line(perDevice[d]));
  }
}

// Largest relative difference of two outputs ("same bits" when identical).
std::string compare_outputs(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return "";
  if (a.size() != b.size()) return "sizes differ";
  if (std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0) return "same bits";
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double scale = std::max(std::fabs(a[k]), std::fabs(b[k]));
    if (a[k] != b[k]) worst = std::max(worst, scale > 0 ? std::fabs(a[k] - b[k]) / scale : 1.0);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "max rel diff %.3g", worst);
  return buf;
}

// Reporter that also keeps the times for the summary table.
// ---- reductions ----

std::vector<std::string>& reduce_stage_lines() {
  static std::vector<std::string> lines;
  return lines;
}

std::map<std::string, double>& reduce_times() {
  static std::map<std::string, double> t;  // "knn/f32/n20000/m128" -> seconds
  return t;
}

// The results' fingerprint (FNV-1a of distances then indices), to show
// the same bits for every GPU count and configuration.
template <typename T>
std::uint64_t knn_fingerprint(const std::vector<T>& dist, const std::vector<std::int64_t>& idx) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](const void* p, std::size_t bytes) {
    for (std::size_t b = 0; b < bytes; ++b) {
      h ^= static_cast<const unsigned char*>(p)[b];
      h *= 0x100000001b3ull;
    }
  };
  mix(dist.data(), dist.size() * sizeof(T));
  mix(idx.data(), idx.size() * sizeof(std::int64_t));
  return h;
}

template <typename T>
void bm_knn(benchmark::State& state, std::size_t n, MMode m, std::size_t k, int gpus = 0,
            bool warm = true) {
  const Input& in = input(n, m);
  mpcf_pcfs* X = handle_of<T>(in);
  std::vector<int> devices;
  for (int d = 0; d < gpus; ++d) devices.push_back(d);
  mpcf_options* o = cuda_options(devices);
  std::vector<T> dist(n * k);
  std::vector<std::int64_t> idx(n * k);
  // One call outside the timing: the first call loads the kernels.
  if (warm && mpcf_knn(X, nullptr, 1.0, k, dist.data(), idx.data(), n * k, o) != MPCF_OK) {
    state.SkipWithError(mpcf_last_error_message());
  }
  for (auto _ : state) {
    if (mpcf_knn(X, nullptr, 1.0, k, dist.data(), idx.data(), n * k, o) != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
  }
  state.counters["merge_steps_per_s"] =
      benchmark::Counter(merge_steps(in, false), benchmark::Counter::kIsIterationInvariantRate);
  std::printf("knn fingerprint n=%zu %s gpus=%d: %016llx\n", n, m_name(m), gpus,
              static_cast<unsigned long long>(knn_fingerprint(dist, idx)));
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// Today's route: the dense matrix, then the k smallest of every row.
template <typename T>
void bm_route_knn(benchmark::State& state, std::size_t n, MMode m, std::size_t k) {
  const Input& in = input(n, m);
  mpcf_pcfs* X = handle_of<T>(in);
  mpcf_options* o = cuda_options({});
  T* D = shared_output<T>(n * n);
  std::vector<std::int64_t> idx(n * k);
  std::vector<std::int64_t> order(n);
  for (auto _ : state) {
    if (mpcf_pdist(X, 1.0, MPCF_LAYOUT_DENSE, D, n * n, o) != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
    for (std::size_t i = 0; i < n; ++i) {
      const T* row = D + i * n;
      std::iota(order.begin(), order.end(), 0);
      auto less = [&](std::int64_t a, std::int64_t b) {
        return row[a] < row[b] || (row[a] == row[b] && a < b);
      };
      std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k + 1),
                       order.end(), less);
      std::sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k + 1), less);
      std::size_t q = 0;
      for (std::size_t e = 0; e <= k && q < k; ++e) {
        if (order[e] != static_cast<std::int64_t>(i)) idx[i * k + q++] = order[e];
      }
    }
    benchmark::DoNotOptimize(idx.data());
  }
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

template <typename T>
void bm_matvec(benchmark::State& state, std::size_t n, MMode m, std::size_t r,
               std::uint64_t splitHint = 0) {
  const Input& in = input(n, m);
  mpcf_pcfs* X = handle_of<T>(in);
  mpcf_options* o = cuda_options({});
  if (splitHint) mpcf_options_set_block_hints(o, splitHint, 0, 0);
  std::vector<T> V(n * r), out(n * r);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : V) v = static_cast<T>(u(rng));
  if (mpcf_kernel_matvec(X, nullptr, MPCF_KERNEL_L2, 2.0, 1.0, V.data(), V.size(), r, out.data(),
                         out.size(), o) != MPCF_OK) {
    state.SkipWithError(mpcf_last_error_message());
  }
  for (auto _ : state) {
    if (mpcf_kernel_matvec(X, nullptr, MPCF_KERNEL_L2, 2.0, 1.0, V.data(), V.size(), r, out.data(),
                           out.size(), o) != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
  }
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// The C API mat-vec call in its phases (reduce/matvec_phases/...): the
// start call (checks, the norms of X, the consumer, the plan), the wait
// (the task's run), the destroy; beside them the norms of X alone, as the
// start call computes them. Where the end-to-end time that the task's
// stages (stages_matvec) do not show goes.
template <typename T>
void bm_matvec_phases(benchmark::State& state, std::size_t n, MMode m) {
  const Input& in = input(n, m);
  mpcf_pcfs* X = handle_of<T>(in);
  mpcf_options* o = cuda_options({});
  std::vector<T> V(n), out(n);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : V) v = static_cast<T>(u(rng));
  std::vector<T> t(in.t.begin(), in.t.end()), v(in.v.begin(), in.v.end());
  const mpcf::PcfCollection<T> coll(n, in.offsets.data(), t.data(), v.data(), 1);
  using Clock = std::chrono::steady_clock;
  auto secs = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  double startS = 0, waitS = 0, destroyS = 0, normsS = 0, taskS = 0;
  std::size_t iters = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    mpcf_task* task = nullptr;
    if (mpcf_kernel_matvec_start(X, nullptr, MPCF_KERNEL_L2, 2.0, 1.0, V.data(), V.size(), 1,
                                 out.data(), out.size(), o, &task) != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
    const auto t1 = Clock::now();
    const mpcf_status st = mpcf_task_wait(task, -1);
    const auto t2 = Clock::now();
    mpcf_task_info info{};
    info.struct_size = sizeof info;
    mpcf_task_info_get(task, &info);
    mpcf_task_destroy(task);
    const auto t3 = Clock::now();
    if (st != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
    state.PauseTiming();
    const auto n0 = Clock::now();
    double sink = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto f = mpcf::function_norms(coll.data().data_of(i), coll.data().size_of(i),
                                          -INFINITY, INFINITY);
      sink += f.l1 + f.linf;
    }
    benchmark::DoNotOptimize(sink);
    normsS += secs(n0, Clock::now());
    state.ResumeTiming();
    startS += secs(t0, t1);
    waitS += secs(t1, t2);
    destroyS += secs(t2, t3);
    taskS += info.seconds;
    ++iters;
  }
  if (iters > 0) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "matvec_r1 %s n=%zu, C API, mean of %zu: start call %.4f, wait %.4f, destroy "
                  "%.4f (task_info seconds %.4f); the norms of X alone %.4f",
                  sizeof(T) == 4 ? "f32" : "f64", n, iters, startS / iters, waitS / iters,
                  destroyS / iters, taskS / iters, normsS / iters);
    reduce_stage_lines().push_back(line);
  }
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// The kNN and mat-vec tasks alone, with the pipeline's stage timings (as
// stages/...): where the time of a reduction goes.
template <typename T>
void bm_reduce_stages(benchmark::State& state, bool matvec, std::size_t n, MMode m) {
  const Input& in = input(n, m);
  auto coll = collection_of<T>(in);
  mpcf::cuda::CudaExecutionConfig cfg;
  cfg.devices = {0};
  const std::size_t k = 10, r = 1;
  std::vector<T> dist(n * k), V(n * r, T(0.5)), out(n * r);
  std::vector<std::int64_t> idx(n * k);
  std::vector<mpcf::FunctionNorms> norms(n);
  for (std::size_t i = 0; i < n; ++i) {
    norms[i] = mpcf::function_norms(coll->data().data_of(i), coll->data().size_of(i),
                                    -INFINITY, INFINITY);
  }
  mpcf::cuda::PipelineStats st;
  double makeTime = 0, runTime = 0, iterTime = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    mpcf::PairRequest<T> request;
    request.x = request.y = coll;
    request.symmetric = true;
    mpcf::TaskControl control;
    if (matvec) {
      request.op = mpcf::OperationSpec::l2_kernel();
      request.consumer = std::make_shared<mpcf::MatvecConsumer<T>>(
          mpcf::KernelSpec{}, V.data(), r, out.data(), n, n, norms, norms);
      auto task = mpcf::cuda::make_pcf_task<T>(request, mpcf::OperationL2InnerProduct<T>{},
                                               cfg.devices, cfg);
      const auto t1 = std::chrono::steady_clock::now();
      task->run(control);
      st = task->stats();
      makeTime = std::chrono::duration<double>(t1 - t0).count();
      runTime = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    } else {
      request.op = mpcf::OperationSpec::distance(1.0);
      request.consumer = std::make_shared<mpcf::KnnConsumer<T>>(dist.data(), idx.data(), n, k);
      auto task = mpcf::cuda::make_pcf_task<T>(request, mpcf::OperationL1Dist<T>{}, cfg.devices,
                                               cfg);
      const auto t1 = std::chrono::steady_clock::now();
      task->run(control);
      st = task->stats();
      makeTime = std::chrono::duration<double>(t1 - t0).count();
      runTime = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    }
    iterTime = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  char head[160];
  std::snprintf(head, sizeof head, "%s %s n=%zu", matvec ? "matvec_r1" : "knn_k10",
                sizeof(T) == 4 ? "f32" : "f64", n);
  char outer[120];
  std::snprintf(outer, sizeof outer, "; task made in %.4f, run() %.4f, with its end %.4f", makeTime,
                runTime, iterTime);
  reduce_stage_lines().push_back(std::string(head) + ": " + stage_line(st) + outer);
}

void register_reduce() {
  auto reg = [](const std::string& name, int iters, auto body) {
    benchmark::RegisterBenchmark(("reduce/" + name).c_str(), body)
        ->Iterations(iters)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  };
  const std::size_t k = 10;
  for (bool f32 : {true, false}) {
    const std::string dt = f32 ? "f32" : "f64";
    const std::string c20 = dt + "/n20000/m128";
    if (f32) {
      reg("knn/" + c20, 5, [=](benchmark::State& s) { bm_knn<float>(s, 20000, MMode::Fixed128, k); });
      reg("route_knn/" + c20, 1,
          [=](benchmark::State& s) { bm_route_knn<float>(s, 20000, MMode::Fixed128, k); });
    } else {
      reg("knn/" + c20, 5, [=](benchmark::State& s) { bm_knn<double>(s, 20000, MMode::Fixed128, k); });
    }
    for (std::size_t r : {1, 16}) {
      const std::string name = "matvec_r" + std::to_string(r) + "/" + c20;
      if (f32) {
        reg(name, 3, [=](benchmark::State& s) { bm_matvec<float>(s, 20000, MMode::Fixed128, r); });
      } else {
        reg(name, 3, [=](benchmark::State& s) { bm_matvec<double>(s, 20000, MMode::Fixed128, r); });
      }
    }
  }
  reg("stages_knn/f32/n20000/m128", 2,
      [=](benchmark::State& s) { bm_reduce_stages<float>(s, false, 20000, MMode::Fixed128); });
  // The plane in fewer, larger blocks (split hint 1: one block, 4; the
  // automatic plan cuts it into 32 per GPU): what the blocks' tails cost.
  for (std::uint64_t split : {1, 4}) {
    reg("matvec_r1_split" + std::to_string(split) + "/f32/n20000/m128", 3,
        [=](benchmark::State& s) { bm_matvec<float>(s, 20000, MMode::Fixed128, 1, split); });
  }
  reg("matvec_phases/f32/n20000/m128", 3,
      [=](benchmark::State& s) { bm_matvec_phases<float>(s, 20000, MMode::Fixed128); });
  reg("stages_matvec/f32/n20000/m128", 2,
      [=](benchmark::State& s) { bm_reduce_stages<float>(s, true, 20000, MMode::Fixed128); });
  reg("knn/f32/n200000/m128", 1,
      [=](benchmark::State& s) { bm_knn<float>(s, 200000, MMode::Fixed128, k); });
  reg("knn/f32/n200000/m128-clustered", 1,
      [=](benchmark::State& s) { bm_knn<float>(s, 200000, MMode::Clustered128, k); });
  reg("knn/f32/n500000/m10-1000", 1,
      [=](benchmark::State& s) { bm_knn<float>(s, 500000, MMode::Varying, k); });
}

// The kNN task itself (make_pcf_task, what mpcf_knn runs) with and without
// bin lower bounds (CudaExecutionConfig::binBounds): knnbins/.../{bins,
// nobins}, the same input and GPUs in the same run, one timed call each
// (the kernels are loaded by main's warm-up), with fingerprints.
template <typename T>
void bm_knn_bins(benchmark::State& state, std::size_t n, MMode m, int gpus, bool bins) {
  const Input& in = input(n, m);
  auto coll = collection_of<T>(in);
  mpcf::cuda::CudaExecutionConfig cfg;
  for (int d = 0; d < gpus; ++d) cfg.devices.push_back(d);
  cfg.binBounds = bins;
  const std::size_t k = 10;
  std::vector<T> dist(n * k);
  std::vector<std::int64_t> idx(n * k);
  for (auto _ : state) {
    mpcf::PairRequest<T> request;
    request.x = request.y = coll;
    request.symmetric = true;
    request.op = mpcf::OperationSpec::distance(1.0);
    request.consumer = std::make_shared<mpcf::KnnConsumer<T>>(dist.data(), idx.data(), n, k);
    auto task = mpcf::cuda::make_pcf_task<T>(request, mpcf::OperationL1Dist<T>{}, cfg.devices, cfg);
    mpcf::TaskControl control;
    task->run(control);
  }
  state.counters["merge_steps_per_s"] =
      benchmark::Counter(merge_steps(in, false), benchmark::Counter::kIsIterationInvariantRate);
  std::printf("knn fingerprint n=%zu %s gpus=%d %s: %016llx\n", n, m_name(m), gpus,
              bins ? "bins" : "nobins",
              static_cast<unsigned long long>(knn_fingerprint(dist, idx)));
}

void register_knn_bins() {
  struct Case {
    const char* name;
    std::size_t n;
    MMode m;
    int iters;
  };
  const Case cases[] = {{"n20000/m128", 20000, MMode::Fixed128, 3},
                        {"n200000/m128", 200000, MMode::Fixed128, 1},
                        {"n200000/m128-clustered", 200000, MMode::Clustered128, 1},
                        {"n500000/m10-1000", 500000, MMode::Varying, 1},
                        {"n1000000/m128", 1000000, MMode::Fixed128, 1}};
  for (const Case& c : cases) {
    for (int gpus : {1, 2}) {
      if (gpus > mpcf_cuda_device_count()) continue;
      for (bool bins : {false, true}) {
        const std::string name = std::string("knnbins/f32/") + c.name + "/gpus" +
                                 std::to_string(gpus) + (bins ? "/bins" : "/nobins");
        benchmark::RegisterBenchmark(name.c_str(),
                                     [=](benchmark::State& s) {
                                       bm_knn_bins<float>(s, c.n, c.m, gpus, bins);
                                     })
            ->Iterations(c.iters)->UseRealTime()->Unit(benchmark::kMillisecond);
      }
    }
  }
}

// kNN on the first 1, 2 and 4 GPUs (as many as the machine has), k = 10:
// n = 500000 with m uniform in 10..1000 and n = 1000000 with m = 128
// (--benchmark_filter=^knnscale; one timed call each, no untimed one: the
// kernels are loaded by main's warm-up and the knn cases before).
void register_knn_scaling() {
  for (int gpus : {1, 2, 4}) {
    if (gpus > mpcf_cuda_device_count()) continue;
    const std::string g = "/gpus" + std::to_string(gpus);
    benchmark::RegisterBenchmark(("knnscale/f32/n500000/m10-1000" + g).c_str(),
                                 [=](benchmark::State& s) {
                                   bm_knn<float>(s, 500000, MMode::Varying, 10, gpus, false);
                                 })
        ->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("knnscale/f32/n1000000/m128" + g).c_str(),
                                 [=](benchmark::State& s) {
                                   bm_knn<float>(s, 1000000, MMode::Fixed128, 10, gpus, false);
                                 })
        ->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
  }
}

void print_reduce() {
  if (reduce_times().empty()) return;
  for (const auto& l : reduce_stage_lines()) std::printf("%s\n", l.c_str());
  std::printf("\nReductions (end to end, CUDA, k = 10):\n");
  for (const auto& [name, sec] : reduce_times()) std::printf("  %-32s %10.4f s\n", name.c_str(), sec);
  auto get = [](const std::string& key) {
    auto it = reduce_times().find(key);
    return it == reduce_times().end() ? NAN : it->second;
  };
  const double knn = get("knn/f32/n20000/m128"), route = get("route_knn/f32/n20000/m128");
  if (!std::isnan(knn) && !std::isnan(route)) {
    std::printf("  knn vs the route (full matrix + partial sort), n = 20000: %.1fx faster\n",
                route / knn);
  }
  for (const char* dt : {"f32", "f64"}) {
    const std::string c = std::string(dt) + "/n20000/m128";
    auto it = rows().find("l2_kernel/" + c);
    if (it == rows().end() || std::isnan(it->second.ours)) continue;
    for (const char* r : {"1", "16"}) {
      const double mv = get(std::string("matvec_r") + r + "/" + c);
      std::printf("  matvec r = %s, %s: %.4f s = %.2fx the l2_kernel kernels (%.4f s)\n", r, dt,
                  mv, mv / it->second.ours, it->second.ours);
    }
  }
}

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      const std::string name = r.benchmark_name();
      const auto slash = name.find('/');
      const std::string kind = name.substr(0, slash);
      std::string key = name.substr(slash + 1);
      key = key.substr(0, key.find("/iterations"));
      key = key.substr(0, key.find("/manual_time"));
      key = key.substr(0, key.find("/real_time"));
      const double sec = r.GetAdjustedRealTime() / 1e9 *
                         (r.time_unit == benchmark::kMillisecond ? 1e6 : r.time_unit == benchmark::kMicrosecond ? 1e3 : 1.0);
      if (kind == "scale") {
        scale_times()[key] = sec;
        continue;
      }
      if (kind == "scale_stages") continue;
      if (kind == "reduce") {
        reduce_times()[key] = sec;
        continue;
      }
      Row& row = rows()[key];
      if (kind == "e2e") row.e2e = sec;
      if (kind == "e2e_gpu0") row.e2e0 = sec;
      if (kind == "ours") row.ours = sec;
      if (kind == "tiled") row.tiled = sec;
      if (kind == "ring") row.ring = sec;
      if (kind == "ref") row.ref = sec;
      (void)row;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

void print_summary() {
  // Issue limit of DESIGN §6: 132 SMs x 128 lanes x 1.98 GHz / 12 instructions per step.
  const double issueLimit = 132.0 * 128 * 1.98e9 / 12;
  std::printf("\n%-32s %9s %9s %9s %9s %9s %8s %9s %9s %12s %12s %8s\n", "case", "e2e_s",
              "kernel_s", "tiled_s", "ring_s", "ref_s", "ref/kern", "tiled/kern", "ref/e2e",
              "e2e_steps/s", "kern_steps/s", "of_limit");
  const bool several = mpcf_cuda_device_count() >= 2;
  if (several) std::printf("(e2e uses all %d GPUs; e2e_gpu0_s is GPU 0 alone)\n", mpcf_cuda_device_count());
  for (const auto& [name, row] : rows()) {
    std::printf("%-32s %9.4f %9.4f %9.4f %9.4f %9.4f %8.2f %9.2f %9.2f %12.3e %12.3e %7.1f%%\n",
                name.c_str(), row.e2e, row.ours, row.tiled, row.ring, row.ref, row.ref / row.ours,
                row.tiled / row.ours, row.ref / row.e2e, row.steps / row.e2e,
                row.steps / row.ours, 100.0 * row.steps / row.ours / issueLimit);
    for (const auto& [label, other] : {std::pair{"ours vs ref", &row.refOut},
                                       std::pair{"ours vs tiled", &row.tiledOut},
                                       std::pair{"ours vs rows", &row.rowsOut},
                                       std::pair{"ours vs half", &row.halfOut},
                                       std::pair{"ours vs ring", &row.ringOut},
                                       std::pair{"ours vs split", &row.splitOut}}) {
      const std::string same = compare_outputs(row.oursOut, *other);
      if (!same.empty()) std::printf("%-32s %s: %s\n", "", label, same.c_str());
    }
    if (!row.stages.empty()) std::printf("%-32s %s\n", "", row.stages.c_str());
    if (!row.stagesOneStream.empty()) {
      std::printf("%-32s one compute stream: %s\n", "", row.stagesOneStream.c_str());
    }
    if (several && !std::isnan(row.e2e0)) {
      std::printf("%-32s e2e_gpu0_s %.4f, scaling efficiency %.1f%%\n", "", row.e2e0,
                  100.0 * row.e2e0 / row.e2e / mpcf_cuda_device_count());
    }
  }
}

void print_scaling() {
  if (scale_times().empty()) return;
  std::printf("\nMulti-GPU scaling, pdist L1 condensed end to end (efficiency = t1 / (k * tk))\n");
  std::printf("%-28s %10s %10s %10s %8s %8s\n", "case", "1 GPU s", "2 GPUs s", "4 GPUs s", "eff 2",
              "eff 4");
  std::map<std::string, std::map<int, double>> byCase;
  for (const auto& [key, sec] : scale_times()) {
    const auto at = key.rfind("/gpus");
    byCase[key.substr(0, at)][std::stoi(key.substr(at + 5))] = sec;
  }
  for (const auto& [name, t] : byCase) {
    auto get = [&](int k) { auto it = t.find(k); return it == t.end() ? NAN : it->second; };
    const double t1 = get(1), t2 = get(2), t4 = get(4);
    std::printf("%-28s %10.4f %10.4f %10.4f %7.1f%% %7.1f%%\n", name.c_str(), t1, t2, t4,
                100.0 * t1 / (2 * t2), 100.0 * t1 / (4 * t4));
  }
  for (const auto& [name, lines] : device_stage_lines()) {
    std::printf("%s\n", name.c_str());
    for (const auto& l : lines) std::printf("  %s\n", l.c_str());
  }
}

// Registers `name` running body.template operator()<T, Op>(state) for the
// case's dtype (f32: float) and operation (kernel: the L2 kernel, else the
// L1 distance).
template <typename Body>
benchmark::internal::Benchmark* register_typed(const std::string& name, bool f32, bool kernel,
                                               Body body) {
  auto reg = [&]<typename T, typename Op>() {
    return benchmark::RegisterBenchmark(
        name.c_str(), [=](benchmark::State& s) { body.template operator()<T, Op>(s); });
  };
  using F = float;
  using D = double;
  if (f32) {
    return kernel ? reg.template operator()<F, mpcf::OperationL2InnerProduct<F>>()
                  : reg.template operator()<F, mpcf::OperationL1Dist<F>>();
  }
  return kernel ? reg.template operator()<D, mpcf::OperationL2InnerProduct<D>>()
                : reg.template operator()<D, mpcf::OperationL1Dist<D>>();
}

void register_all() {
  const std::size_t sizes[] = {2000, 20000};
  const MMode modes[] = {MMode::Fixed128, MMode::Fixed512, MMode::Varying};
  for (bool kernel : {false, true}) {
    for (bool f32 : {true, false}) {
      for (std::size_t n : sizes) {
        for (MMode m : modes) {
          const std::string name = case_name(kernel, f32, n, m);
          rows()[name].steps = merge_steps(input(n, m), kernel);
          const int iters = n >= 20000 ? 1 : 5;
          // e2e: every GPU; e2e_gpu0 (machines with several GPUs): GPU 0 only.
          for (int device : {-1, 0}) {
            if (device == 0 && mpcf_cuda_device_count() < 2) continue;
            const std::string full = (device < 0 ? "e2e/" : "e2e_gpu0/") + name;
            register_typed(full, f32, kernel, [=]<typename T, typename Op>(benchmark::State& s) {
              bm_end_to_end<T>(s, kernel, n, m, device);
            })->Iterations(iters)->UseRealTime()->Unit(benchmark::kMillisecond);
          }
          // stages_one_stream: the baseline of the two compute streams.
          for (bool overlap : {true, false}) {
            const std::string full = (overlap ? "stages/" : "stages_one_stream/") + name;
            register_typed(full, f32, kernel, [=]<typename T, typename Op>(benchmark::State& s) {
              bm_stages<T, Op>(s, kernel, n, m, 1, false, true, overlap);
            })->Iterations(iters)->UseRealTime()->Unit(benchmark::kMillisecond);
          }
          for (KernelCase which :
               {KernelCase::Ours, KernelCase::Tiled, KernelCase::Rows, KernelCase::Half,
                KernelCase::Ring, KernelCase::Split, KernelCase::Ref}) {
            const std::string full = kernel_case_name(which) + name;
            register_typed(full, f32, kernel, [=]<typename T, typename Op>(benchmark::State& s) {
              bm_kernels<T, Op>(s, which, kernel, n, m);
            })->Iterations(iters)->UseManualTime()->Unit(benchmark::kMillisecond);
          }
        }
      }
    }
  }
}

// PLF against PCF (see the top): seconds per case, for the summary.
std::map<std::string, double>& plf_times() {
  static std::map<std::string, double> t;  // "pdist_L1/f32/m128/plf" -> seconds
  return t;
}

// pairWalk: MPCF_CUDA_PLF_WALK=pair for the call (PlfPairWalk instead of the
// lane walk: the previous GPU PLF kernel, in the same run).
template <typename T>
void bm_plf(benchmark::State& state, bool knn, double p, std::size_t n, MMode m, bool linear,
            const std::string& key, bool pairWalk = false) {
  if (pairWalk) setenv("MPCF_CUDA_PLF_WALK", "pair", 1);
  const Input& in = input(n, m);
  mpcf_pcfs* X = handle_of<T>(in, linear);
  mpcf_options* o = cuda_options({});
  const std::size_t k = 10;
  std::uint64_t size = 0;
  mpcf_pdist_size(X, MPCF_LAYOUT_CONDENSED, &size);
  T* out = knn ? nullptr : shared_output<T>(size);
  std::vector<T> dist(knn ? n * k : 0);
  std::vector<std::int64_t> idx(knn ? n * k : 0);
  auto call = [&] {
    return knn ? mpcf_knn(X, nullptr, p, k, dist.data(), idx.data(), n * k, o)
               : mpcf_pdist(X, p, MPCF_LAYOUT_CONDENSED, out, size, o);
  };
  double best = INFINITY;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (call() != MPCF_OK) {
      state.SkipWithError(mpcf_last_error_message());
      break;
    }
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  plf_times()[key] = best;
  state.counters["merge_steps_per_s"] =
      benchmark::Counter(merge_steps(in, false), benchmark::Counter::kIsIterationInvariantRate);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
  if (pairWalk) unsetenv("MPCF_CUDA_PLF_WALK");
}

void register_plf() {
  for (bool f32 : {true, false}) {
    for (const double p : {1.0, 2.0}) {
      for (MMode m : {MMode::Fixed128, MMode::Fixed512}) {
        for (int kind = 0; kind < 3; ++kind) {  // PCF, PLF, PLF by PlfPairWalk
          const bool linear = kind > 0, pairWalk = kind == 2;
          const std::string key = std::string(p == 1 ? "pdist_L1/" : "pdist_L2/") +
                                  (f32 ? "f32/" : "f64/") + "n20000/" + m_name(m) + "/" +
                                  (pairWalk ? "plfpair" : linear ? "plf" : "pcf");
          auto body = [=](benchmark::State& s) {
            if (f32) bm_plf<float>(s, false, p, 20000, m, linear, key, pairWalk);
            else bm_plf<double>(s, false, p, 20000, m, linear, key, pairWalk);
          };
          benchmark::RegisterBenchmark(("plf/" + key).c_str(), body)
              ->Iterations(2)->UseRealTime()->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
  for (bool linear : {false, true}) {
    const std::string key = std::string("knn/f32/n200000/m128/") + (linear ? "plf" : "pcf");
    benchmark::RegisterBenchmark(("plf/" + key).c_str(), [=](benchmark::State& s) {
      bm_plf<float>(s, true, 1.0, 200000, MMode::Fixed128, linear, key);
    })->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);
  }
}

void print_plf() {
  bool header = false;
  for (const auto& [key, t] : plf_times()) {
    if (key.size() < 4 || key.substr(key.size() - 4) != "/plf") continue;
    const std::string base = key.substr(0, key.size() - 4);
    auto it = plf_times().find(base + "/pcf");
    if (it == plf_times().end()) continue;
    if (!header) {
      std::printf("\nPLF vs PCF, end to end, best of the iterations (seconds; PLF pair walk:\n"
                  "MPCF_CUDA_PLF_WALK=pair, the kernel before the lane walk):\n");
      std::printf("  %-32s %10s %10s %8s %14s %8s\n", "case", "PCF", "PLF", "PLF/PCF",
                  "PLF pair walk", "pair/PCF");
      header = true;
    }
    auto pw = plf_times().find(base + "/plfpair");
    const double tp = pw == plf_times().end() ? NAN : pw->second;
    std::printf("  %-32s %10.4f %10.4f %8.2f %14.4f %8.2f\n", base.c_str(), it->second, t,
                t / it->second, tp, tp / it->second);
  }
}

// The scaling cases: n = 50000, m = 128 and 512, f32 and f64, on 1, 2 and 4
// GPUs (as many as the machine has). Registered last; select them with
// --benchmark_filter=^scale (scale/ and scale_stages/).
void register_scaling() {
  const std::size_t n = 50000;
  for (bool f32 : {true, false}) {
    for (MMode m : {MMode::Fixed128, MMode::Fixed512}) {
      for (int gpus : {1, 2, 4}) {
        if (gpus > mpcf_cuda_device_count()) continue;
        const std::string name = case_name(false, f32, n, m) + "/gpus" + std::to_string(gpus);
        register_typed("scale/" + name, f32, false, [=]<typename T, typename Op>(benchmark::State& s) {
          bm_scaling<T>(s, n, m, gpus);
        })->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
        // The result written by the GPUs straight into registered memory.
        register_typed("scale/registered/" + name, f32, false,
                       [=]<typename T, typename Op>(benchmark::State& s) {
                         bm_scaling<T>(s, n, m, gpus, true);
                       })
            ->Iterations(3)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
        // The pipeline's stages per device; baselines: every GPU uploading
        // the input on its own, consecutive blocks on one compute stream.
        struct Variant {
          const char* suffix;
          bool sharedUpload, overlap;
        };
        for (const Variant v : {Variant{"", true, true}, Variant{"/own_uploads", false, true},
                                Variant{"/one_stream", true, false}}) {
          if (!v.sharedUpload && gpus == 1) continue;
          register_typed("scale_stages/" + name + v.suffix, f32, false,
                         [=]<typename T, typename Op>(benchmark::State& s) {
                           bm_stages<T, Op>(s, false, n, m, gpus, true, v.sharedUpload, v.overlap);
                         })
              ->Iterations(2)
              ->UseRealTime()
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
}

}  // namespace

// ---- CUB against the hand-written reductions (--benchmark_filter=^cub) ----
//
// The kNN top-k kernels and the mat-vec rows kernel alone (CUDA events), on
// one block of nR x nC values uniform in [0, 1) made on the device: the
// insertion list (insert/), CUB's WarpMergeSort for every round with a
// passing candidate (sort/) or past 8 of them (sort8/); the mat-vec rows
// kernel's warp sum by hand (shfl/) or cub::WarpReduce (warpreduce/).
// topk_first: rows into empty lists (most candidates pass early);
// topk_later: the same rows against a second block (few pass);
// topk_cols: the column kernel (segments) and the merge into empty lists.

__global__ void uniform_block_kernel(float* f, double* d, std::uint64_t count, std::uint32_t seed) {
  for (std::uint64_t e = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; e < count;
       e += std::uint64_t(gridDim.x) * blockDim.x) {
    std::uint64_t x = (e + 1) * 0x9E3779B97F4A7C15ull ^ (std::uint64_t(seed) << 32);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    const double u = double(x >> 11) * 0x1p-53;
    if (f) f[e] = float(u);
    if (d) d[e] = u;
  }
}

template <typename T>
struct CubBlocks {
  std::uint32_t nR = 4096, nC = 16384;
  mpcf::cuda::DeviceArray<T> a, b;
  CubBlocks() : a(std::size_t(nR) * nC), b(std::size_t(nR) * nC) {
    for (auto* arr : {&a, &b}) {
      T* p = arr->data();
      uniform_block_kernel<<<1024, 256>>>(std::is_same_v<T, float> ? reinterpret_cast<float*>(p) : nullptr,
                                          std::is_same_v<T, double> ? reinterpret_cast<double*>(p) : nullptr,
                                          arr->size(), arr == &a ? 1u : 2u);
    }
    CHECK_CUDA(cudaDeviceSynchronize());
  }
};

template <typename T>
CubBlocks<T>& cub_blocks() {
  static CubBlocks<T> blocks;
  return blocks;
}

enum class TopkCase { First, Later, Cols };

template <typename T, typename List>
void bm_topk(benchmark::State& state, TopkCase which, int K) {
  using mpcf::cuda::KnnEntry;
  auto& blk = cub_blocks<T>();
  const std::uint32_t nR = blk.nR, nC = blk.nC;
  mpcf::cuda::DeviceArray<KnnEntry<T>> lists(std::size_t(std::max(nR, nC)) * K);
  const std::uint32_t segRows = 512, segs = (nR + segRows - 1) / segRows;
  mpcf::cuda::DeviceArray<KnnEntry<T>> scratch(std::size_t(segs) * nC * K);
  cudaStream_t st = nullptr;
  const unsigned rowGrid = (nR * 32 + 255) / 256;
  auto rows = [&](const T* block, std::uint32_t colBase) {
    mpcf::cuda::knn_rows_kernel<T, List><<<rowGrid, 256, 0, st>>>(
        block, nR, nC, 0, TriangleSkipMode::None, K, 0, colBase, lists.data());
  };
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  for (auto _ : state) {
    CHECK_CUDA(cudaMemsetAsync(lists.data(), 0xff, lists.bytes(), st));
    if (which == TopkCase::Later) rows(blk.a.data(), 0);
    CHECK_CUDA(cudaEventRecord(e0, st));
    if (which == TopkCase::Cols) {
      mpcf::cuda::knn_cols_kernel<T, List><<<dim3((nC + 31) / 32, segs), mpcf::cuda::kKnnStripThreads, 0, st>>>(
          blk.a.data(), nR, nC, 0, TriangleSkipMode::None, K, segRows, 0, scratch.data());
      mpcf::cuda::knn_cols_merge_kernel<T, List><<<(nC * 32 + 255) / 256, 256, 0, st>>>(
          scratch.data(), nC, segs, K, 0, lists.data());
    } else {
      rows(which == TopkCase::Later ? blk.b.data() : blk.a.data(), which == TopkCase::Later ? nC : 0);
    }
    CHECK_CUDA(cudaEventRecord(e1, st));
    CHECK_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    state.SetIterationTime(ms / 1000.0);
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
}

template <typename T, bool kCub>
void bm_matvec_reduce(benchmark::State& state) {
  auto& blk = cub_blocks<T>();
  const std::uint32_t nR = blk.nR, nC = blk.nC;
  mpcf::cuda::DeviceArray<T> V(nC);
  uniform_block_kernel<<<64, 256>>>(std::is_same_v<T, float> ? reinterpret_cast<float*>(V.data()) : nullptr,
                                    std::is_same_v<T, double> ? reinterpret_cast<double*>(V.data()) : nullptr,
                                    nC, 3u);
  mpcf::cuda::DeviceArray<double> grids(1), sums(std::size_t(nR) * mpcf::ExactSum::kLevels);
  mpcf::cuda::DeviceArray<std::uint32_t> flags(nR);
  const double g = 64.0;
  CHECK_CUDA(cudaMemcpy(grids.data(), &g, sizeof g, cudaMemcpyHostToDevice));
  mpcf::cuda::MatvecArgs<T> a{};
  a.kind = mpcf::KernelKind::L2;
  a.scale = 1.0;
  a.V = V.data();
  a.r = 1;
  a.grids = grids.data();
  a.ratio = mpcf::exact_sum_level_ratio(nC);
  a.skip = TriangleSkipMode::None;
  a.sums = sums.data();
  a.flags = flags.data();
  const unsigned grid = (nR * 32 + 255) / 256;
  time_launches(state, nullptr, [&] {
    mpcf::cuda::matvec_rows_kernel<T, 1, kCub><<<grid, 256>>>(blk.a.data(), nR, nC, a);
  });
}

void register_cub() {
  auto reg = [](const std::string& name, auto body) {
    benchmark::RegisterBenchmark(("cub/" + name).c_str(), body)
        ->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);
  };
  const int K = 10;
  auto add = [&]<typename T>(const std::string& dt) {
    using namespace mpcf::cuda::detail;
    for (auto [which, cname] : {std::pair{TopkCase::First, "topk_first"}, std::pair{TopkCase::Later, "topk_later"},
                                std::pair{TopkCase::Cols, "topk_cols"}}) {
      const std::string tail = std::string("/") + dt + "/k10";
      reg(std::string(cname) + "/insert" + tail, [=](benchmark::State& s) { bm_topk<T, WarpTopK<T>>(s, which, K); });
      reg(std::string(cname) + "/sort" + tail,
          [=](benchmark::State& s) { bm_topk<T, WarpTopKMergeSort<T, 0>>(s, which, K); });
      reg(std::string(cname) + "/sort8" + tail,
          [=](benchmark::State& s) { bm_topk<T, WarpTopKMergeSort<T, 8>>(s, which, K); });
    }
    reg("matvec_rows/shfl/" + dt + "/r1", [](benchmark::State& s) { bm_matvec_reduce<T, false>(s); });
    reg("matvec_rows/warpreduce/" + dt + "/r1", [](benchmark::State& s) { bm_matvec_reduce<T, true>(s); });
  };
  add.template operator()<float>("f32");
  add.template operator()<double>("f64");
}

int main(int argc, char** argv) {
  if (mpcf_cuda_device_count() == 0) {
    std::printf("bench_gpu: no CUDA device; nothing to measure (%s)\n", mpcf_build_info());
    return 0;
  }
  std::printf("%s\n", mpcf_build_info());
  // Warm-up outside any timing: CUDA context and kernel modules.
  for (int d = 0; d < mpcf_cuda_device_count(); ++d) {
    for (bool f32 : {true, false}) {
      const Input& in = input(300, MMode::Fixed128);
      mpcf_pcfs* X = f32 ? handle_of<float>(in) : handle_of<double>(in);
      mpcf_options* o = cuda_options({d});
      std::vector<double> out(300 * 300);
      mpcf_pdist(X, 1.0, MPCF_LAYOUT_DENSE, out.data(), out.size(), o);
      mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, out.data(), out.size(), o);
      mpcf_options_destroy(o);
      mpcf_pcfs_destroy(X);
    }
  }
  register_all();
  register_reduce();
  register_plf();
  register_knn_scaling();
  register_knn_bins();
  register_scaling();
  register_cub();
  benchmark::Initialize(&argc, argv);
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary();
  print_reduce();
  print_scaling();
  print_plf();
  benchmark::Shutdown();
  return 0;
}
