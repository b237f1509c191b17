// The operations' cost per merge step, on one thread, through core's walk
// (integrate_pairs_lockstep, as the CPU executor runs it): L1, L2 (p = 2),
// Lp (p = 3) and the L2 inner product, each beside the operation it
// replaced, kept here as the baseline of the same run:
//  * unscaled/Lp: acc + width * |f - g|^p, finalize acc^(1/p) (pow for every
//    p, including 2), which overflowed for large p;
//  * unscaled/L2IP: the float32 inner product accumulated in float32.
//
//   ./bench_ops --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

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

BENCHMARK_MAIN();
