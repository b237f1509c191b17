// CPU backend benchmark: pdist L1 through the public C API, float32 and
// float64, for a few n and m, reporting merge steps per second (one merge
// step = one rectangle of the walk; a pair of PCFs with m breakpoints each
// takes about 2m). Cases with `scalar` in their name run the scalar walk
// (MPCF_CPU_SIMD=scalar, the walk before the SIMD one) beside the library's
// choice of instruction set (label: cpu_simd=...), and a plain baseline —
// one thread, a textbook branchy merge over std::vector<std::pair> — gives
// the ratio to the obvious implementation. The pdist_output cases time a
// 200 MB result written into a fresh allocation each call (malloc; the
// library faults it in ahead of the writes) or with that switched off
// (MPCF_OUTPUT_PREFAULT=0), beside the same call into an already-touched
// buffer. BM_plf_vs_pcf times the same breakpoints as PCFs and as PLFs in
// every iteration (the PLF/PCF ratio of one run, on one load), and
// BM_matvec_vs_full the kernel mat-vec beside the full-matrix call over the
// same pairs in the same way.
//
//   ./bench_cpu --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
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

// The library's choice of instruction set for the CPU walk, from its build
// information ("cpu_simd=avx2"), or MPCF_CPU_SIMD where that is set (the
// library caps it at what the CPU runs).
std::string cpu_simd_label() {
  if (const char* env = std::getenv("MPCF_CPU_SIMD"); env != nullptr && *env != '\0') {
    return std::string("MPCF_CPU_SIMD=") + env;
  }
  const std::string info = mpcf_build_info();
  const auto at = info.find("cpu_simd=");
  if (at == std::string::npos) return "cpu_simd=?";
  const auto end = info.find_first_of(" ;", at);
  return info.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// MPCF_CPU_SIMD=scalar for the lifetime of the object when `scalar`.
struct ScalarWalk {
  explicit ScalarWalk(bool on) : on_(on) {
    if (on_) setenv("MPCF_CPU_SIMD", "scalar", 1);
  }
  ~ScalarWalk() {
    if (on_) unsetenv("MPCF_CPU_SIMD");
  }
  bool on_;
};

mpcf_pcfs* make_pcfs(const Input& in, std::size_t n, mpcf_dtype dtype) {
  mpcf_pcfs* X = nullptr;
  check(dtype == MPCF_FLOAT32
            ? mpcf_pcfs_create(dtype, n, in.offsets.data(), in.t32.data(), in.v32.data(), &X)
            : mpcf_pcfs_create(dtype, n, in.offsets.data(), in.t.data(), in.v.data(), &X));
  return X;
}

// The thread count of a case: 0 means every hardware thread.
double resolved_threads(long threads) {
  return threads > 0 ? static_cast<double>(threads)
                     : static_cast<double>(std::max(1u, std::thread::hardware_concurrency()));
}

mpcf_options* cpu_options(int threads) {
  mpcf_options* o = nullptr;
  check(mpcf_options_create(&o));
  check(mpcf_options_set_backend(o, MPCF_BACKEND_CPU));
  check(mpcf_options_set_threads(o, threads));
  return o;
}

void pdist_l1(benchmark::State& state, mpcf_dtype dtype, bool scalar) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const Input in = make_input(n, m);
  mpcf_pcfs* X = make_pcfs(in, n, dtype);
  mpcf_options* o = cpu_options(threads);
  const std::uint64_t size = n * (n - 1) / 2;
  std::vector<double> out64(dtype == MPCF_FLOAT64 ? size : 0);
  std::vector<float> out32(dtype == MPCF_FLOAT32 ? size : 0);
  void* out = dtype == MPCF_FLOAT32 ? static_cast<void*>(out32.data()) : out64.data();
  ScalarWalk walk(scalar);
  for (auto _ : state) {
    check(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, size, o));
    benchmark::ClobberMemory();
  }
  state.counters["steps_per_s"] =
      benchmark::Counter(merge_steps(n, m), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = resolved_threads(threads);
  state.SetLabel(scalar ? "cpu_simd=scalar" : cpu_simd_label());
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

void BM_pdist_l1(benchmark::State& state, mpcf_dtype dtype) { pdist_l1(state, dtype, false); }
void BM_pdist_l1_scalar(benchmark::State& state, mpcf_dtype dtype) { pdist_l1(state, dtype, true); }

// pdist L1, float32, n = 10000, m = 32 (a 200 MB condensed result), into
// (range(0)) 0: the same, already-touched buffer every call; 1: a fresh
// malloc every call; 2: a fresh malloc with the prefaulting switched off.
void BM_pdist_output(benchmark::State& state) {
  const std::size_t n = 10000, m = 32;
  const int mode = static_cast<int>(state.range(0));
  const int threads = static_cast<int>(state.range(1));
  const Input in = make_input(n, m);
  mpcf_pcfs* X = make_pcfs(in, n, MPCF_FLOAT32);
  mpcf_options* o = cpu_options(threads);
  const std::uint64_t size = n * (n - 1) / 2;
  std::vector<float> touched(mode == 0 ? size : 0, 1.0f);
  if (mode == 2) setenv("MPCF_OUTPUT_PREFAULT", "1", 1);
  for (auto _ : state) {
    float* out = touched.data();
    if (mode != 0) {
      state.PauseTiming();
      out = static_cast<float*>(std::malloc(size * sizeof(float)));  // fresh pages (mmap)
      if (out == nullptr) throw std::bad_alloc();
      state.ResumeTiming();
    }
    check(mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, out, size, o));
    benchmark::ClobberMemory();
    if (mode != 0) {
      state.PauseTiming();
      std::free(out);
      state.ResumeTiming();
    }
  }
  if (mode == 2) unsetenv("MPCF_OUTPUT_PREFAULT");
  state.SetLabel(mode == 0 ? "touched" : mode == 1 ? "fresh" : "fresh, MPCF_OUTPUT_PREFAULT=1");
  state.counters["threads"] = resolved_threads(threads);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// Clustered: n functions, each one of `protos` prototypes (drawn as
// make_input's) with its times moved by up to +-0.02 and its values by up
// to +-0.5: data whose nearest neighbours lie far below the typical
// distance, where kNN walks stop early (BM_knn_clustered).
Input make_clustered(std::size_t n, std::size_t m, std::size_t protos) {
  const Input proto = make_input(protos, m, 11);
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<std::size_t> pick(0, protos - 1);
  std::uniform_real_distribution<double> dt(-0.02, 0.02), dv(-0.5, 0.5);
  Input in;
  in.offsets.push_back(0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t p = pick(rng);
    for (std::uint64_t e = proto.offsets[p]; e < proto.offsets[p + 1]; ++e) {
      const bool first = e == proto.offsets[p], last = e + 1 == proto.offsets[p + 1];
      const float tf = static_cast<float>(proto.t[e] + (first ? 0.0 : dt(rng)));
      const float vf = last ? 0.0f : static_cast<float>(proto.v[e] + dv(rng));
      in.t.push_back(tf);
      in.v.push_back(vf);
      in.t32.push_back(tf);
      in.v32.push_back(vf);
    }
    in.offsets.push_back(in.t.size());
  }
  return in;
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
  state.counters["threads"] = resolved_threads(state.range(2));
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

// kNN (k = 10, L1) of n = range(0) clustered PCFs (100 prototypes, m = 128),
// range(1) threads.
void BM_knn_clustered(benchmark::State& state, mpcf_dtype dtype) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::size_t k = 10;
  const Input in = make_clustered(n, 128, 100);
  mpcf_pcfs* X = make_pcfs(in, n, dtype);
  mpcf_options* o = cpu_options(static_cast<int>(state.range(1)));
  std::vector<double> dist(n * k);
  std::vector<std::int64_t> idx(n * k);
  for (auto _ : state) {
    check(mpcf_knn(X, nullptr, 1.0, k, dist.data(), idx.data(), n * k, o));
    benchmark::ClobberMemory();
  }
  state.counters["threads"] = resolved_threads(state.range(1));
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
    // range(4): 0 the L2 kernel (the pairs of l2_kernel), 2 Laplacian of
    // the L1 distance (the pairs of pdist L1).
    const mpcf_kernel kind = state.range(4) == 2 ? MPCF_KERNEL_LAPLACIAN : MPCF_KERNEL_L2;
    check(mpcf_kernel_matvec(X, nullptr, kind, 1.0, 100.0, V, n * r, r, out, n * r, o));
    benchmark::ClobberMemory();
  }
  state.counters["r"] = static_cast<double>(r);
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// The mat-vec against the full-matrix call over the same pairs, both in
// every iteration (which goes first alternates), so that both see the same
// load on a shared machine (DESIGN §6: CPU reductions within 1.15x of CPU
// pdist): range(3) = r; range(4) = 2: the Laplacian of the L1 distance
// against pdist L1 (condensed), 0: the L2 kernel against l2_kernel
// (packed). Counters: medians over the iterations of each wall time, of
// their ratio, and of the ratio of the process's CPU times (all threads;
// what other jobs take from the machine moves it less than the wall time).
void BM_matvec_vs_full(benchmark::State& state, mpcf_dtype dtype) {
  mpcf_options* o = nullptr;
  mpcf_pcfs* X = cpu_case(state, dtype, &o);
  const std::size_t n = 2000, r = static_cast<std::size_t>(state.range(3));
  const bool l2 = state.range(4) == 0;
  std::vector<double> V64(n * r, 0.5), y64(n * r);
  std::vector<float> V32(n * r, 0.5f), y32(n * r);
  const void* V = dtype == MPCF_FLOAT32 ? static_cast<const void*>(V32.data()) : V64.data();
  void* y = dtype == MPCF_FLOAT32 ? static_cast<void*>(y32.data()) : y64.data();
  const std::size_t size = l2 ? n * (n + 1) / 2 : n * (n - 1) / 2;
  std::vector<double> full64(dtype == MPCF_FLOAT64 ? size : 0);
  std::vector<float> full32(dtype == MPCF_FLOAT32 ? size : 0);
  void* full = dtype == MPCF_FLOAT32 ? static_cast<void*>(full32.data()) : full64.data();
  struct Times {
    double wall, cpu;
  };
  auto timed = [](auto call) {
    timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    const auto t0 = std::chrono::steady_clock::now();
    call();
    benchmark::ClobberMemory();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    return Times{wall, double(c1.tv_sec - c0.tv_sec) + 1e-9 * double(c1.tv_nsec - c0.tv_nsec)};
  };
  auto runFull = [&] {
    return timed([&] {
      check(l2 ? mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, full, size, o)
               : mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, full, size, o));
    });
  };
  auto runMatvec = [&] {
    return timed([&] {
      check(mpcf_kernel_matvec(X, nullptr, l2 ? MPCF_KERNEL_L2 : MPCF_KERNEL_LAPLACIAN, 1.0, 100.0,
                               V, n * r, r, y, n * r, o));
    });
  };
  std::vector<double> fullS, matvecS, ratio, cpuRatio;
  bool matvecFirst = false;
  for (auto _ : state) {
    Times a, b;
    if (matvecFirst) {
      b = runMatvec();
      a = runFull();
    } else {
      a = runFull();
      b = runMatvec();
    }
    matvecFirst = !matvecFirst;
    fullS.push_back(a.wall);
    matvecS.push_back(b.wall);
    ratio.push_back(b.wall / a.wall);
    cpuRatio.push_back(b.cpu / a.cpu);
    state.SetIterationTime(a.wall + b.wall);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
  };
  state.counters["full_s"] = median(fullS);
  state.counters["matvec_s"] = median(matvecS);
  state.counters["matvec_per_full"] = median(ratio);
  state.counters["cpu_matvec_per_full"] = median(cpuRatio);
  state.counters["r"] = static_cast<double>(r);
  state.SetLabel(std::string(l2 ? "l2 / l2_kernel" : "laplacian / pdist L1") + ", " + cpu_simd_label());
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// l2_kernel, packed: the pairs the L2 mat-vec computes, with the matrix
// written (the mat-vec's baseline for that kernel).
void BM_l2_kernel(benchmark::State& state, mpcf_dtype dtype) {
  mpcf_options* o = nullptr;
  mpcf_pcfs* X = cpu_case(state, dtype, &o);
  const std::size_t n = 2000, size = n * (n + 1) / 2;
  std::vector<double> out64(dtype == MPCF_FLOAT64 ? size : 0);
  std::vector<float> out32(dtype == MPCF_FLOAT32 ? size : 0);
  void* out = dtype == MPCF_FLOAT32 ? static_cast<void*>(out32.data()) : out64.data();
  for (auto _ : state) {
    check(mpcf_l2_kernel(X, MPCF_LAYOUT_PACKED_LOWER, out, size, o));
    benchmark::ClobberMemory();
  }
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// pdist of the same breakpoints read as piecewise constant (range(3) = 0)
// or piecewise linear (1) functions, p = range(4): the PLF cost beside the
// PCF call (DESIGN §6: PLF pdist within 2.5x of PCF pdist on the CPU).
void BM_pdist_type(benchmark::State& state, mpcf_dtype dtype) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const bool linear = state.range(3) == 1;
  const double p = static_cast<double>(state.range(4));
  const Input in = make_input(n, m);
  mpcf_pcfs* X = nullptr;
  auto create = linear ? mpcf_plfs_create : mpcf_pcfs_create;
  check(dtype == MPCF_FLOAT32
            ? create(dtype, n, in.offsets.data(), in.t32.data(), in.v32.data(), &X)
            : create(dtype, n, in.offsets.data(), in.t.data(), in.v.data(), &X));
  mpcf_options* o = cpu_options(threads);
  const std::uint64_t size = n * (n - 1) / 2;
  std::vector<double> out64(dtype == MPCF_FLOAT64 ? size : 0);
  std::vector<float> out32(dtype == MPCF_FLOAT32 ? size : 0);
  void* out = dtype == MPCF_FLOAT32 ? static_cast<void*>(out32.data()) : out64.data();
  for (auto _ : state) {
    check(mpcf_pdist(X, p, MPCF_LAYOUT_CONDENSED, out, size, o));
    benchmark::ClobberMemory();
  }
  state.counters["steps_per_s"] =
      benchmark::Counter(merge_steps(n, m), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = resolved_threads(threads);
  state.SetLabel(linear ? "PLF" : "PCF");
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X);
}

// PLF against PCF in one case: every iteration runs the operation on the
// same breakpoints read as piecewise constant, then as piecewise linear
// functions (DESIGN §6: PLF pdist within 2.5x of PCF pdist on the CPU), so
// that both see the same load on a shared machine. range(3): 1, 2, 3: pdist
// with that p; 4: pdist p = inf; 0: l2_kernel (packed); range(4) = 1: in
// the window [10, 50) (the functions span about [0, 65]); range(5) = K > 1:
// n objects of K functions each (a component axis, DESIGN §11; K = 5 is a
// landscape's lambda_1..lambda_5). Counters: the
// medians over the iterations of each time and of the ratio PLF / PCF (run
// with --benchmark_repetitions for medians over repetitions as well).
void BM_plf_vs_pcf(benchmark::State& state, mpcf_dtype dtype) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const int op = static_cast<int>(state.range(3));
  const bool windowed = state.range(4) == 1;
  const auto K = static_cast<std::size_t>(state.range(5));
  const Input in = make_input(n * K, m);
  mpcf_pcfs* X[2] = {nullptr, nullptr};
  for (int linear = 0; linear < 2; ++linear) {
    auto create = linear ? mpcf_plfs_create : mpcf_pcfs_create;
    check(dtype == MPCF_FLOAT32
              ? create(dtype, n * K, in.offsets.data(), in.t32.data(), in.v32.data(), &X[linear])
              : create(dtype, n * K, in.offsets.data(), in.t.data(), in.v.data(), &X[linear]));
    if (K > 1) {
      const std::uint64_t shape[2] = {n, K};
      check(mpcf_pcfs_reshape(X[linear], 2, shape));
      check(mpcf_pcfs_set_component_axis(X[linear], 1));
    }
  }
  mpcf_options* o = cpu_options(threads);
  if (windowed) check(mpcf_options_set_window(o, 10.0, 50.0));
  const std::uint64_t size = op == 0 ? n * (n + 1) / 2 : n * (n - 1) / 2;
  std::vector<double> out64(dtype == MPCF_FLOAT64 ? size : 0);
  std::vector<float> out32(dtype == MPCF_FLOAT32 ? size : 0);
  void* out = dtype == MPCF_FLOAT32 ? static_cast<void*>(out32.data()) : out64.data();
  const double p = op == 4 ? HUGE_VAL : static_cast<double>(op);
  auto run = [&](const mpcf_pcfs* x) {
    const auto t0 = std::chrono::steady_clock::now();
    if (op == 0) {
      check(mpcf_l2_kernel(x, MPCF_LAYOUT_PACKED_LOWER, out, size, o));
    } else {
      check(mpcf_pdist(x, p, MPCF_LAYOUT_CONDENSED, out, size, o));
    }
    benchmark::ClobberMemory();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> pcf, plf, ratio;
  for (auto _ : state) {
    const double a = run(X[0]);
    const double b = run(X[1]);
    pcf.push_back(a);
    plf.push_back(b);
    ratio.push_back(b / a);
    state.SetIterationTime(a + b);
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
  };
  state.counters["pcf_s"] = median(pcf);
  state.counters["plf_s"] = median(plf);
  state.counters["plf_per_pcf"] = median(ratio);
  state.counters["threads"] = resolved_threads(threads);
  state.SetLabel(std::string(op == 0 ? "l2_kernel" : op == 4 ? "p=inf" : "p=" + std::to_string(op)) +
                 (windowed ? ", window [10, 50)" : "") +
                 (K > 1 ? ", " + std::to_string(K) + " components" : "") + ", " + cpu_simd_label());
  mpcf_options_destroy(o);
  mpcf_pcfs_destroy(X[0]);
  mpcf_pcfs_destroy(X[1]);
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

// Threads: 1, and every hardware thread (0).
BENCHMARK_CAPTURE(BM_pdist_l1, f32, MPCF_FLOAT32)
    ->Args({2000, 128, 1})->Args({2000, 128, 0})->Args({500, 512, 1})->Args({500, 512, 0})
    ->Args({1000, 32, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_pdist_l1_scalar, f32, MPCF_FLOAT32)
    ->Args({2000, 128, 1})->Args({2000, 128, 0})->Args({500, 512, 1})->Args({500, 512, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_pdist_l1, f64, MPCF_FLOAT64)
    ->Args({2000, 128, 1})->Args({2000, 128, 0})->Args({500, 512, 1})->Args({500, 512, 0})
    ->Args({1000, 32, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_pdist_l1_scalar, f64, MPCF_FLOAT64)
    ->Args({2000, 128, 1})->Args({2000, 128, 0})->Args({500, 512, 1})->Args({500, 512, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_pdist_output)->ArgNames({"output", "threads"})
    ->Args({0, 0})->Args({1, 0})->Args({2, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_knn, f32, MPCF_FLOAT32)->Args({2000, 128, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_knn, f64, MPCF_FLOAT64)->Args({2000, 128, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_knn_clustered, f32, MPCF_FLOAT32)->Args({2000, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_knn_clustered, f64, MPCF_FLOAT64)->Args({2000, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
// 200 functions per prototype: lists fill with near neighbours early.
BENCHMARK_CAPTURE(BM_knn_clustered, f32, MPCF_FLOAT32)->Args({20000, 0})->Iterations(1)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_matvec, f32, MPCF_FLOAT32)->Args({2000, 128, 0, 1, 0})->Args({2000, 128, 0, 16, 0})
    ->Args({2000, 128, 0, 1, 2})->Args({2000, 128, 0, 16, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_matvec, f64, MPCF_FLOAT64)->Args({2000, 128, 0, 1, 0})->Args({2000, 128, 0, 16, 0})
    ->Args({2000, 128, 0, 1, 2})->Args({2000, 128, 0, 16, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
// n, m, threads, r, kernel (2: Laplacian against pdist L1, 0: L2 against
// l2_kernel); 4 paired calls per repetition.
BENCHMARK_CAPTURE(BM_matvec_vs_full, f32, MPCF_FLOAT32)
    ->ArgNames({"n", "m", "threads", "r", "kernel"})
    ->Args({2000, 128, 0, 1, 2})->Args({2000, 128, 0, 16, 2})->Args({2000, 128, 0, 1, 0})->Args({2000, 128, 0, 16, 0})
    ->Iterations(4)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK_CAPTURE(BM_matvec_vs_full, f64, MPCF_FLOAT64)
    ->ArgNames({"n", "m", "threads", "r", "kernel"})
    ->Args({2000, 128, 0, 1, 2})->Args({2000, 128, 0, 16, 2})->Args({2000, 128, 0, 1, 0})->Args({2000, 128, 0, 16, 0})
    ->Iterations(4)->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK_CAPTURE(BM_l2_kernel, f32, MPCF_FLOAT32)->Args({2000, 128, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_l2_kernel, f64, MPCF_FLOAT64)->Args({2000, 128, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_pdist_type, f32, MPCF_FLOAT32)
    ->ArgNames({"n", "m", "threads", "linear", "p"})
    ->Args({2000, 128, 0, 0, 1})->Args({2000, 128, 0, 1, 1})->Args({2000, 128, 0, 0, 2})->Args({2000, 128, 0, 1, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_pdist_type, f64, MPCF_FLOAT64)
    ->ArgNames({"n", "m", "threads", "linear", "p"})
    ->Args({2000, 128, 0, 0, 1})->Args({2000, 128, 0, 1, 1})->Args({2000, 128, 0, 0, 2})->Args({2000, 128, 0, 1, 2})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
// n, m, threads, op (p; 4: p = inf; 0: l2_kernel), window, components.
BENCHMARK_CAPTURE(BM_plf_vs_pcf, f32, MPCF_FLOAT32)
    ->ArgNames({"n", "m", "threads", "op", "window", "K"})
    ->Args({2000, 128, 0, 1, 0, 1})->Args({2000, 128, 0, 2, 0, 1})->Args({1000, 128, 0, 3, 0, 1})
    ->Args({2000, 128, 0, 4, 0, 1})->Args({2000, 128, 0, 0, 0, 1})->Args({2000, 128, 0, 1, 1, 1})
    ->Args({500, 512, 0, 1, 0, 1})->Args({400, 128, 0, 1, 0, 5})->Args({400, 128, 0, 2, 0, 5})
    ->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK_CAPTURE(BM_plf_vs_pcf, f64, MPCF_FLOAT64)
    ->ArgNames({"n", "m", "threads", "op", "window", "K"})
    ->Args({2000, 128, 0, 1, 0, 1})->Args({2000, 128, 0, 2, 0, 1})->Args({1000, 128, 0, 3, 0, 1})
    ->Args({2000, 128, 0, 4, 0, 1})->Args({2000, 128, 0, 0, 0, 1})->Args({2000, 128, 0, 1, 1, 1})
    ->Args({500, 512, 0, 1, 0, 1})->Args({400, 128, 0, 1, 0, 5})->Args({400, 128, 0, 2, 0, 5})
    ->Unit(benchmark::kMillisecond)->UseManualTime();
BENCHMARK(BM_baseline_naive_l1_f64)->Args({2000, 128})->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
