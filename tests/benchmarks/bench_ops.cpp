// The operations' cost per merge step, on one thread, through core's walk
// (integrate_pairs_lockstep, as the CPU executor runs it): L1, L2 (p = 2),
// Lp (p = 3) and the L2 inner product, each beside the operation it
// replaced, kept here as the baseline of the same run:
//  * unscaled/Lp: acc + width * |f - g|^p, finalize acc^(1/p) (pow for every
//    p, including 2), which overflowed for large p;
//  * unscaled/L2IP: the float32 inner product accumulated in float32.
//
// BM_matvec_consume times the kernel mat-vec's consumer alone (its exact
// sums, kernel_matvec.hpp) on stand-in block values, per pair of the plane:
// beside the walk's time per pair (bench_cpu BM_pdist_l1 with 1 thread) it
// says what share of a mat-vec the reduction takes.
//
// BM_scatter_runs: memcpy against stream_copy for the block scatter.
//
//   ./bench_ops --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/walk.hpp"

namespace {

template <typename T>
struct UnscaledLp {
  T p;
  T invP;
  explicit UnscaledLp(double p_) : p(static_cast<T>(p_)), invP(static_cast<T>(1.0 / p_)) {}
  T init() const { return T(0); }
  T integrand(T fv, T gv) const { return std::pow(std::fabs(fv - gv), p); }
  T fold(T acc, T width, T x) const { return mpcf::detail::fold_sum(acc, width, x); }
  T finalize(T acc) const { return std::pow(acc, invP); }
};

template <typename T>
struct UnscaledInnerProduct {
  T init() const { return T(0); }
  T integrand(T fv, T gv) const { return fv * gv; }
  T fold(T acc, T width, T x) const { return mpcf::detail::fold_sum(acc, width, x); }
  T finalize(T acc) const { return acc; }
};

// n functions of m breakpoints: t_0 = 0, gaps uniform(0.05, 1), values
// uniform(0, 10), last value 0.
template <typename T>
std::vector<std::vector<mpcf::PcfPoint<T>>> make_functions(std::size_t n, std::size_t m) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> gap(0.05, 1.0), val(0.0, 10.0);
  std::vector<std::vector<mpcf::PcfPoint<T>>> fs(n);
  for (auto& f : fs) {
    double t = 0;
    for (std::size_t k = 0; k < m; ++k) {
      f.push_back({static_cast<T>(t), k + 1 == m ? T(0) : static_cast<T>(val(rng))});
      t += gap(rng);
    }
  }
  return fs;
}

// All pairs (i, j), j < i, of 256 functions of m = 128 breakpoints, four
// columns in lockstep.
template <typename T, typename Op>
void BM_walk(benchmark::State& state, Op op) {
  constexpr std::size_t n = 256, m = 128;
  const auto fs = make_functions<T>(n, m);
  T sink = 0;
  for (auto _ : state) {
    for (std::size_t i = 1; i < n; ++i) {
      std::size_t j = 0;
      for (; j + 4 <= i; j += 4) {
        const mpcf::PcfPoint<T>* g[4];
        std::uint32_t ng[4];
        T out[4];
        for (int k = 0; k < 4; ++k) {
          g[k] = fs[j + k].data();
          ng[k] = m;
        }
        mpcf::integrate_pairs_lockstep<4, false>(fs[i].data(), m, g, ng, T(0), T(0), op, out);
        sink += out[0] + out[1] + out[2] + out[3];
      }
      for (; j < i; ++j) {
        sink += mpcf::integrate_pair<false>(fs[i].data(), m, fs[j].data(), m, T(0), T(0), op);
      }
    }
    benchmark::DoNotOptimize(sink);
  }
  state.counters["steps_per_s"] = benchmark::Counter(
      double(n) * (n - 1) / 2 * 2 * m, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_f32(benchmark::State& state, auto op) { BM_walk<float>(state, op); }
void BM_f64(benchmark::State& state, auto op) { BM_walk<double>(state, op); }

// The consumer of mpcf_kernel_matvec(X, V) with r = range(0) columns,
// kernel range(1) (0: L2, 2: Laplacian), on the symmetric plane of
// n = 2000 objects cut into blocks of 128 x 128 (as the CPU executor cuts
// it for 2 threads), one thread: prepare, every block's values (stand-ins:
// distances uniform in (50, 300), inner products in (0, 3000), the
// benchmark input's sizes), finish. No walk.
template <typename T>
void BM_matvec_consume(benchmark::State& state) {
  constexpr std::size_t n = 2000, side = 128;
  const auto r = static_cast<std::size_t>(state.range(0));
  const bool l2 = state.range(1) == 0;
  mpcf::KernelSpec spec;
  spec.kind = l2 ? mpcf::KernelKind::L2 : mpcf::KernelKind::Laplacian;
  spec.p = 1.0;
  spec.scale = 100.0;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> value(l2 ? 0.0 : 50.0, l2 ? 3000.0 : 300.0), v(-1.0, 1.0);
  std::vector<T> V(n * r), out(n * r), values(side * side);
  for (auto& x : V) x = static_cast<T>(v(rng));
  for (auto& x : values) x = static_cast<T>(value(rng));
  // Norms of the benchmark input (m = 128, gaps of about 0.5, values to 10).
  std::vector<mpcf::FunctionNorms> norms(l2 ? n : 0, mpcf::FunctionNorms{320.0, 10.0});
  mpcf::PairPlane plane;
  plane.nRows = plane.nCols = n;
  plane.skip = l2 ? mpcf::TriangleSkipMode::LowerTriangle : mpcf::TriangleSkipMode::LowerTriangleSkipDiag;
  mpcf::BlockScheduler::Config c;
  c.nRows = c.nCols = n;
  c.mode = mpcf::BlockMode::LowerTriangle;
  c.maxOutputElements = side * side;
  const mpcf::BlockScheduler scheduler(c);
  for (auto _ : state) {
    mpcf::MatvecConsumer<T> consumer(spec, V.data(), r, out.data(), n, n, norms, norms);
    consumer.prepare(plane);
    for (const mpcf::BlockInfo& b : scheduler.blocks()) {
      consumer.consume(mpcf::BlockPiece<T>{b, values.data(), mpcf::BlockOrder::RowMajor});
    }
    consumer.finish();
    benchmark::DoNotOptimize(out.data());
  }
  const double pairs = double(n) * (n - 1) / 2;
  state.counters["ns_per_pair"] = benchmark::Counter(
      pairs * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["r"] = static_cast<double>(r);
  state.SetLabel(l2 ? "l2" : "laplacian");
}

// A copy with non-temporal stores (SSE2 MOVNTDQ on x86-64, memcpy
// elsewhere), 16-byte aligned stores, fenced: the alternative to memcpy
// that the scatter benchmark measures. (Measured slower end to end in the
// GPU pipeline, so the library's writer keeps memcpy: RESULTS.md,
// "Non-temporal stores in the block scatter".)
void stream_copy(void* dst, const void* src, std::size_t bytes) {
#if defined(__x86_64__)
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const std::size_t head = std::min(bytes, (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15);
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  std::size_t k = 0;
  for (; k + 64 <= bytes; k += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k + 48), e);
  }
  for (; k + 16 <= bytes; k += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + k),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k)));
  }
  std::memcpy(d + k, s + k, bytes - k);
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

// The scatter of downloaded blocks into a large output (MatrixWriter): an
// 8 MiB chunk of runs of 6,250 doubles (a block column at n = 50,000 on two
// GPUs) copied to condensed-like offsets spread over a 1 GiB output that
// was written once before (no page faults), with memcpy (the baseline) and
// with stream_copy (non-temporal stores, above), on 1 to 16 threads at once (the
// pipeline's scatter threads of one GPU). Bytes per second of the copied
// runs, all threads together.
template <bool kStream>
void BM_scatter_runs(benchmark::State& state) {
  constexpr std::size_t kRun = 6250, kRuns = (std::size_t(8) << 20) / (kRun * sizeof(double));
  constexpr std::size_t kOut = (std::size_t(1) << 30) / sizeof(double);
  static std::vector<double> out(kOut, 1.0);  // made before the threads start
  std::vector<double> chunk(kRun * kRuns);
  for (std::size_t k = 0; k < chunk.size(); ++k) chunk[k] = double(k);
  // Each thread (a scatter thread of the pipeline) starts elsewhere.
  std::size_t at = (kOut / 16) * static_cast<std::size_t>(state.thread_index());
  for (auto _ : state) {
    for (std::size_t r = 0; r < kRuns; ++r) {
      at = (at + 49999 * 8 + kRun) % (kOut - kRun);  // about one condensed row apart
      if constexpr (kStream) {
        stream_copy(out.data() + at, chunk.data() + r * kRun, kRun * sizeof(double));
      } else {
        std::memcpy(out.data() + at, chunk.data() + r * kRun, kRun * sizeof(double));
      }
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kRuns * kRun * sizeof(double)));
}

}  // namespace

BENCHMARK_CAPTURE(BM_f32, L1, mpcf::OperationL1Dist<float>{});
BENCHMARK_CAPTURE(BM_f32, L2, mpcf::OperationL2Dist<float>{});
BENCHMARK_CAPTURE(BM_f32, unscaled_L2, UnscaledLp<float>(2.0));
BENCHMARK_CAPTURE(BM_f32, Lp3, mpcf::OperationLpDist<float>(3.0));
BENCHMARK_CAPTURE(BM_f32, unscaled_Lp3, UnscaledLp<float>(3.0));
BENCHMARK_CAPTURE(BM_f32, L2IP, mpcf::OperationL2InnerProduct<float>{});
BENCHMARK_CAPTURE(BM_f32, unscaled_L2IP, UnscaledInnerProduct<float>{});
BENCHMARK_CAPTURE(BM_f64, L1, mpcf::OperationL1Dist<double>{});
BENCHMARK_CAPTURE(BM_f64, L2, mpcf::OperationL2Dist<double>{});
BENCHMARK_CAPTURE(BM_f64, unscaled_L2, UnscaledLp<double>(2.0));
BENCHMARK_CAPTURE(BM_f64, Lp3, mpcf::OperationLpDist<double>(3.0));
BENCHMARK_CAPTURE(BM_f64, unscaled_Lp3, UnscaledLp<double>(3.0));
BENCHMARK_CAPTURE(BM_f64, L2IP, mpcf::OperationL2InnerProduct<double>{});
BENCHMARK_TEMPLATE(BM_matvec_consume, float)->ArgNames({"r", "kernel"})
    ->Args({1, 2})->Args({16, 2})->Args({1, 0})->Args({16, 0})->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_matvec_consume, double)->ArgNames({"r", "kernel"})
    ->Args({1, 2})->Args({16, 2})->Args({1, 0})->Args({16, 0})->Unit(benchmark::kMillisecond);

BENCHMARK_TEMPLATE(BM_scatter_runs, false)->Name("BM_scatter_runs/memcpy")->ThreadRange(1, 16)->UseRealTime();
BENCHMARK_TEMPLATE(BM_scatter_runs, true)->Name("BM_scatter_runs/stream_copy")->ThreadRange(1, 16)->UseRealTime();

BENCHMARK_MAIN();
