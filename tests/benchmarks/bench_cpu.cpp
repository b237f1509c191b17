// CPU backend benchmark: pdist L1 through the public C API, float32 and
// float64, for a few n and m, reporting merge steps per second (one merge
// step = one rectangle of the walk; a pair of PCFs with m breakpoints each
// takes about 2m). In the same run, a plain baseline — one thread, a
// textbook branchy merge over std::vector<std::pair> — gives the ratio.
//
//   ./bench_cpu --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "mpcf/mpcf.h"

namespace {

// DESIGN §6 input: t_0 = 0, gaps uniform(0.05, 1), values uniform(0, 10),
// last value 0, m breakpoints each.
struct Input {
  std::vector<std::uint64_t> offsets;
  std::vector<double> t, v;
  std::vector<float> t32, v32;
};

Input make_input(std::size_t n, std::size_t m, unsigned seed = 7) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> gap(0.05, 1.0), val(0.0, 10.0);
  Input in;
  in.offsets.push_back(0);
  for (std::size_t i = 0; i < n; ++i) {
    double t = 0.0;
    for (std::size_t k = 0; k < m; ++k) {
      const float tf = static_cast<float>(t);
      const float vf = k + 1 == m ? 0.0f : static_cast<float>(val(rng));
      in.t.push_back(tf);
      in.v.push_back(vf);
      in.t32.push_back(tf);
      in.v32.push_back(vf);
      t += gap(rng);
    }
    in.offsets.push_back(in.t.size());
  }
  return in;
}

void check(mpcf_status s) {
  if (s != MPCF_OK) throw std::runtime_error(mpcf_last_error_message());
}

// Merge steps of a pdist: sum over pairs i > j of (m_i + m_j) = (n-1) * total.
double merge_steps(std::size_t n, std::size_t m) {
  return static_cast<double>(n - 1) * static_cast<double>(n * m);
}

void BM_pdist_l1(benchmark::State& state, mpcf_dtype dtype) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const Input in = make_input(n, m);
  mpcf_pcfs* X = nullptr;
  check(dtype == MPCF_FLOAT32
            ? mpcf_pcfs_create(dtype, n, in.offsets.data(), in.t32.data(), in.v32.data(), &X)
            : mpcf_pcfs_create(dtype, n, in.offsets.data(), in.t.data(), in.v.data(), &X));
  mpcf_options* o = nullptr;
  check(mpcf_options_create(&o));
  check(mpcf_options_set_backend(o, MPCF_BACKEND_CPU));
  check(mpcf_options_set_threads(o, threads));
  const std::uint64_t size = n * (n - 1) / 2;
  std::vector<double> out64(dtype == MPCF_FLOAT64 ? size : 0);
  std::vector<float> out32(dtype == MPCF_FLOAT32 ? size : 0);
  void* out = dtype == MPCF_FLOAT32 ? static_cast<void*>(out32.data()) : out64.data();
  for (auto _ : state) {
    check(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, size, o));
    benchmark::ClobberMemory();
  }
  state.counters["steps_per_s"] =
      benchmark::Counter(merge_steps(n, m), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = threads;
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// The reductions over the same pairs as pdist (DESIGN §8: within 1.15x of
// pdist): k = 10 nearest neighbours, and the L2-kernel mat-vec with r
// columns (range(3)).
mpcf_pcfs* cpu_case(benchmark::State& state, mpcf_dtype dtype, mpcf_options** o) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  static const Input in = make_input(2000, 128);  // every case here is n = 2000, m = 128
  if (n != 2000 || m != 128) throw std::runtime_error("reduction cases are n = 2000, m = 128");
  mpcf_pcfs* X = nullptr;
  check(dtype == MPCF_FLOAT32
            ? mpcf_pcfs_create(dtype, n, in.offsets.data(), in.t32.data(), in.v32.data(), &X)
            : mpcf_pcfs_create(dtype, n, in.offsets.data(), in.t.data(), in.v.data(), &X));
  check(mpcf_options_create(o));
  check(mpcf_options_set_backend(*o, MPCF_BACKEND_CPU));
  check(mpcf_options_set_threads(*o, static_cast<int>(state.range(2))));
  state.counters["steps_per_s"] =
      benchmark::Counter(merge_steps(n, m), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = static_cast<double>(state.range(2));
  return X;
}

void BM_knn(benchmark::State& state, mpcf_dtype dtype) {
  mpcf_options* o = nullptr;
  mpcf_pcfs* X = cpu_case(state, dtype, &o);
  const std::size_t n = 2000, k = 10;
  std::vector<double> dist(n * k);
  std::vector<std::int64_t> idx(n * k);
  for (auto _ : state) {
    check(mpcf_knn(X, nullptr, 1.0, k, dist.data(), idx.data(), n * k, o));
    benchmark::ClobberMemory();
  }
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

void BM_matvec(benchmark::State& state, mpcf_dtype dtype) {
  mpcf_options* o = nullptr;
  mpcf_pcfs* X = cpu_case(state, dtype, &o);
  const std::size_t n = 2000, r = static_cast<std::size_t>(state.range(3));
  std::vector<double> V64(n * r, 0.5), out64(n * r);
  std::vector<float> V32(n * r, 0.5f), out32(n * r);
  const void* V = dtype == MPCF_FLOAT32 ? static_cast<const void*>(V32.data()) : V64.data();
  void* out = dtype == MPCF_FLOAT32 ? static_cast<void*>(out32.data()) : out64.data();
  for (auto _ : state) {
    check(mpcf_kernel_matvec(X, nullptr, MPCF_KERNEL_L2, 2.0, 1.0, V, n * r, r, out, n * r, o));
    benchmark::ClobberMemory();
  }
  state.counters["r"] = static_cast<double>(r);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// Baseline: the obvious implementation, one thread.
double naive_l1(const std::vector<std::pair<double, double>>& f,
                const std::vector<std::pair<double, double>>& g) {
  std::size_t i = 0, j = 0;
  double fv = 0, gv = 0, t = std::min(f[0].first, g[0].first), acc = 0;
  while (i < f.size() || j < g.size()) {
    double next;
    if (j >= g.size() || (i < f.size() && f[i].first < g[j].first)) {
      next = f[i].first;
    } else {
      next = g[j].first;
    }
    acc += (next - t) * std::fabs(fv - gv);
    if (i < f.size() && f[i].first == next) fv = f[i++].second;
    if (j < g.size() && g[j].first == next) gv = g[j++].second;
    t = next;
  }
  return acc;  // both end with value 0 here, so no tail
}

void BM_baseline_naive_l1_f64(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const Input in = make_input(n, m);
  std::vector<std::vector<std::pair<double, double>>> fs(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (auto k = in.offsets[i]; k < in.offsets[i + 1]; ++k) fs[i].emplace_back(in.t[k], in.v[k]);
  }
  std::vector<double> out(n * (n - 1) / 2);
  for (auto _ : state) {
    std::size_t k = 0;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) out[k++] = naive_l1(fs[i], fs[j]);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["steps_per_s"] =
      benchmark::Counter(merge_steps(n, m), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = 1;
}

}  // namespace

BENCHMARK_CAPTURE(BM_pdist_l1, f32, MPCF_FLOAT32)
    ->Args({2000, 128, 1})->Args({2000, 128, 2})->Args({1000, 32, 2})->Args({500, 512, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_pdist_l1, f64, MPCF_FLOAT64)
    ->Args({2000, 128, 1})->Args({2000, 128, 2})->Args({1000, 32, 2})->Args({500, 512, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_knn, f32, MPCF_FLOAT32)->Args({2000, 128, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_knn, f64, MPCF_FLOAT64)->Args({2000, 128, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_matvec, f32, MPCF_FLOAT32)->Args({2000, 128, 2, 1})->Args({2000, 128, 2, 16})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_matvec, f64, MPCF_FLOAT64)->Args({2000, 128, 2, 1})->Args({2000, 128, 2, 16})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_baseline_naive_l1_f64)->Args({2000, 128})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
