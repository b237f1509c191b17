// The SIMD CPU walk gives the bits of the scalar walk, on every instruction
// set this machine runs (SSE4, AVX2, AVX-512 where present on x86-64, NEON on
// aarch64; the others are reported as skipped):
//  * walk_pairs_simd against integrate_pair, pair by pair, on random
//    functions with shared and equal times, negative and -0 times, zero and
//    equal values, unbounded tails (+inf results), values near the largest
//    finite (overflow to +-inf and NaN inner products), tiny values, windows
//    (finite, half-infinite, outside the data), for L1, p = 2, 3, 1.5, 400,
//    1e39 and 1e300 (beyond float's range), p = inf and the L2 inner product, with the
//    unchecked fold wherever unchecked_fold_allowed says so and the checked
//    fold always; lengths 1 to 40 in one batch (lanes of one group stop at
//    different steps) and batches that do not fill the last group; for L1
//    and L-inf also with bounds (PairBatch::bound): each value exact, or
//    above its bound and at most the exact one, some groups stopping;
//  * the CPU executor on every instruction set and 1, 2, 3 and 7 threads, small and
//    default blocks, symmetric (distances and kernels) and cross planes,
//    row-major and column-major consumers: the same bits as the scalar walk;
//  * the same for piecewise linear functions (DESIGN §10): walk_plf_pairs_simd
//    against integrate_plf_pair on the same inputs (and p = 32, 33: the last
//    integer p that the PLF Lp takes by products and the first it does not)
//    plus times so far apart
//    that a segment is wider than the largest finite value, on the tame path
//    wherever plf_tame_walk_allowed says so and on the general path always,
//    and the CPU executor on PLF requests against its scalar walk;
//  * the executor on objects of three components (PCF and PLF), whose SIMD
//    walk carries each pair's accumulator across the components, against
//    the scalar ObjectPair.
#include <atomic>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "mpcf/core/errors.hpp"
#include "mpcf/core/matrix_integrate.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/core/simd_walk.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/core/walk.hpp"

using namespace mpcf;

namespace {

template <typename T>
using Fn = std::vector<PcfPoint<T>>;

template <typename T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// The SIMD instruction sets this machine runs.
std::vector<CpuSimd> simd_targets() {
  std::vector<CpuSimd> out;
  for (int s = 1; s < kCpuSimdCount; ++s) {
    const auto c = static_cast<CpuSimd>(s);
    if (cpu_simd_supported(c)) {
      out.push_back(c);
    } else {
      std::printf("[ SKIPPED  ] %s: %s on this machine\n", cpu_simd_name(c),
                  cpu_simd_compiled(c) ? "not supported by the CPU" : "not compiled in");
    }
  }
  return out;
}

// Random functions of `kind`:
//  0: times from a shared grid of 0.25 steps (many equal times across
//     functions), small integer values with zeros, last value 0;
//  1: like 0 with a non-zero last value (unbounded tails);
//  2: negative and positive times, -0.0 among them, values of both signs;
//  3: values near the largest finite (overflow);
//  4: tiny values (underflow of scaled powers);
//  5: the benchmark input (gaps uniform(0.05, 1), values uniform(0, 10));
//  6: times spread over +-0.9 max (neighbouring times further apart than the
//     largest finite value), small values of both signs.
template <typename T>
Fn<T> random_function(std::mt19937_64& rng, int kind, std::size_t m) {
  std::uniform_int_distribution<int> step(1, 3), small(-2, 3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double big = static_cast<double>(std::numeric_limits<T>::max());
  Fn<T> f;
  double t = kind == 2 ? -2.0 * static_cast<double>(m) * u(rng) : 0.25 * step(rng) - 0.25;
  if (kind == 6) t = -0.9 * big * u(rng);
  for (std::size_t k = 0; k < m; ++k) {
    T v;
    switch (kind) {
      case 3: v = static_cast<T>((u(rng) < 0.5 ? -1 : 1) * big * (0.5 + 0.5 * u(rng))); break;
      case 4: v = static_cast<T>(4 * u(rng) * static_cast<double>(std::numeric_limits<T>::min())); break;
      case 5: v = static_cast<T>(10.0 * u(rng)); break;
      default: v = static_cast<T>(small(rng)); break;
    }
    if ((kind == 0 || kind == 5) && k + 1 == m) v = T(0);
    if (kind == 6 && k > 0) {
      const double lambda = 0.3 + 0.6 * u(rng);  // a convex combination: no overflow
      t = (1 - lambda) * t + lambda * 0.9 * big;
    }
    T tt = static_cast<T>(t);
    if (kind == 2 && !f.empty() && f.back().t < T(0) && tt >= T(0)) tt = -T(0);  // a -0 time
    if (!f.empty() && !(f.back().t < tt)) continue;  // keep times strictly increasing
    f.push_back({tt, v});
    if (kind != 6) t += kind == 5 ? 0.05 + 0.95 * u(rng) : 0.25 * step(rng);
  }
  if (f.empty()) f.push_back({T(0), T(1)});
  return f;
}

template <typename T>
std::vector<Window<T>> windows() {
  const T inf = std::numeric_limits<T>::infinity();
  return {Window<T>::whole_line(), {T(0.5), T(3.25)}, {-inf, T(2)}, {T(-1.5), inf},
          {T(1000), T(2000)}, {T(-3), T(1e6)}};
}

// Walks that stop early (MonotoneFold operations with PairBatch::bound):
// how many values came out partial, over all checks of a test.
std::size_t g_stopped = 0;

template <typename T, typename Op>
void check_batch(CpuSimd simd, const std::vector<Fn<T>>& fs, const Window<T>& w, const Op& op,
                 const char* what, int kind) {
  ShiftedPoints<T> pts;
  std::vector<std::uint32_t> first;
  T maxT = 0, maxV = 0;
  for (const auto& f : fs) {
    first.push_back(static_cast<std::uint32_t>(pts.append(f.data(), f.size())));
    for (const auto& p : f) {
      maxT = std::max(maxT, std::fabs(p.t));
      maxV = std::max(maxV, std::fabs(p.v));
    }
  }
  // Every ordered pair (i, j), i != j, and a few with i == j.
  std::vector<std::uint32_t> fi, gi, steps;
  std::vector<std::pair<std::size_t, std::size_t>> which;
  for (std::size_t i = 0; i < fs.size(); ++i) {
    for (std::size_t j = 0; j < fs.size(); ++j) {
      if (i == j && i % 3 != 0) continue;
      fi.push_back(first[i]);
      gi.push_back(first[j]);
      steps.push_back(static_cast<std::uint32_t>(fs[i].size() + fs[j].size()));
      which.push_back({i, j});
    }
  }
  for (int unchecked = 0; unchecked < 2; ++unchecked) {
    if (unchecked && !unchecked_fold_allowed(w, op, maxT, maxV)) continue;
    // The whole list, and a prefix that leaves the last group part empty.
    for (std::size_t count : {fi.size(), std::min<std::size_t>(fi.size(), 37)}) {
      std::vector<T> out(count, T(-12345));
      PairBatch<T> b;
      b.points = pts.points.data();
      b.pointCount = pts.points.size();
      b.f = fi.data();
      b.g = gi.data();
      b.steps = steps.data();
      b.count = count;
      b.out = out.data();
      walk_pairs_simd(simd, b, w, op, unchecked != 0);
      for (std::size_t k = 0; k < count; ++k) {
        const auto [i, j] = which[k];
        const T want = integrate_pair(fs[i].data(), static_cast<std::uint32_t>(fs[i].size()),
                                      fs[j].data(), static_cast<std::uint32_t>(fs[j].size()), w, op);
        if (!same_bits(want, out[k])) {
          fail_msg("%s %s (float%d, input kind %d, window [%g, %g), %s fold): pair (%zu, %zu) of "
                   "lengths %zu, %zu: scalar %.17g, SIMD %.17g",
                   cpu_simd_name(simd), what, int(sizeof(T) * 8), kind, double(w.a), double(w.b),
                   unchecked ? "unchecked" : "checked", i, j, fs[i].size(), fs[j].size(),
                   double(want), double(out[k]));
        }
      }
      if constexpr (MonotoneFold<Op>::value) {
        // With bounds: a value is exact, or partial (above its bound, at most
        // the exact one) when every lane of its group passed its bound.
        // Bounds: 0.3 of the value (groups stop), the value itself (no lane
        // is ever above it: all exact), 0.3 with every 7th bound NaN.
        for (int pattern = 0; pattern < 3; ++pattern) {
          std::vector<T> bound(count), got(count, T(-12345));
          for (std::size_t k = 0; k < count; ++k) {
            bound[k] = pattern == 1 ? out[k]
                       : pattern == 2 && k % 7 == 3 ? std::numeric_limits<T>::quiet_NaN()
                                                    : T(0.3) * out[k];
          }
          b.out = got.data();
          b.bound = bound.data();
          walk_pairs_simd(simd, b, w, op, unchecked != 0);
          for (std::size_t k = 0; k < count; ++k) {
            if (same_bits(out[k], got[k])) continue;
            ++g_stopped;
            if (pattern == 1 || !(got[k] > bound[k] && got[k] <= out[k])) {
              fail_msg("%s %s (float%d, kind %d, window [%g, %g), %s fold, bounds %d): pair %zu: "
                       "exact %.17g, bounded walk %.17g, bound %.17g",
                       cpu_simd_name(simd), what, int(sizeof(T) * 8), kind, double(w.a),
                       double(w.b), unchecked ? "unchecked" : "checked", pattern, k,
                       double(out[k]), double(got[k]), double(bound[k]));
            }
          }
          b.bound = nullptr;
          b.out = out.data();
        }
      }
    }
  }
}

template <typename T>
void check_all_operations(CpuSimd simd, const std::vector<Fn<T>>& fs, int kind) {
  for (const auto& w : windows<T>()) {
    check_batch(simd, fs, w, OperationL1Dist<T>{}, "L1", kind);
    check_batch(simd, fs, w, OperationL2Dist<T>{}, "L2", kind);
    check_batch(simd, fs, w, OperationLpDist<T>(3.0), "Lp, p = 3", kind);
    check_batch(simd, fs, w, OperationLpDist<T>(1.5), "Lp, p = 1.5", kind);
    check_batch(simd, fs, w, OperationLpDist<T>(400.0), "Lp, p = 400", kind);
    check_batch(simd, fs, w, OperationLpDist<T>(1e39), "Lp, p = 1e39", kind);
    check_batch(simd, fs, w, OperationLpDist<T>(1e300), "Lp, p = 1e300", kind);
    check_batch(simd, fs, w, OperationLinfDist<T>{}, "Linf", kind);
    check_batch(simd, fs, w, OperationL2InnerProduct<T>{}, "L2 inner product", kind);
  }
}

template <typename T>
void check_walk(CpuSimd simd) {
  std::mt19937_64 rng(20261125);
  std::uniform_int_distribution<std::size_t> len(1, 40);
  for (int kind = 0; kind <= 5; ++kind) {
    std::vector<Fn<T>> fs;
    for (int k = 0; k < 14; ++k) fs.push_back(random_function<T>(rng, kind, len(rng)));
    fs.push_back(Fn<T>{{T(0), T(0)}});  // the zero function, one breakpoint
    fs.push_back(Fn<T>{{T(1), T(2)}});  // a constant tail from t = 1
    check_all_operations(simd, fs, kind);
  }
  // All of one length (no lane stops early).
  std::vector<Fn<T>> same;
  for (int k = 0; k < 24; ++k) same.push_back(random_function<T>(rng, 5, 16));
  bool all16 = true;
  for (const auto& f : same) all16 &= f.size() == 16;
  assert_true(all16);
  check_all_operations(simd, same, 5);
}

void test_walk_same_bits_as_scalar(void**) {
  for (CpuSimd s : simd_targets()) {
    g_stopped = 0;
    check_walk<float>(s);
    check_walk<double>(s);
    // The bounded walks stopped some groups (0.3 of the value: every lane
    // passes its bound well before its last step).
    if (g_stopped == 0) fail_msg("%s: no bounded walk stopped early", cpu_simd_name(s));
  }
}

// ---- piecewise linear functions ----

template <typename T, typename Op>
void check_plf_batch(CpuSimd simd, const std::vector<Fn<T>>& fs, const Window<T>& w, const Op& op,
                     const char* what, int kind) {
  ShiftedPoints<T> pts;
  std::vector<std::uint32_t> first;
  T maxT = 0, maxV = 0;
  for (const auto& f : fs) {
    first.push_back(static_cast<std::uint32_t>(pts.append_linear(f.data(), f.size())));
    for (const auto& p : f) {
      maxT = std::max(maxT, std::fabs(p.t));
      maxV = std::max(maxV, std::fabs(p.v));
    }
  }
  std::vector<std::uint32_t> fi, gi, steps;
  std::vector<std::pair<std::size_t, std::size_t>> which;
  for (std::size_t i = 0; i < fs.size(); ++i) {
    for (std::size_t j = 0; j < fs.size(); ++j) {
      if (i == j && i % 3 != 0) continue;
      fi.push_back(first[i]);
      gi.push_back(first[j]);
      steps.push_back(static_cast<std::uint32_t>(fs[i].size() + fs[j].size()));
      which.push_back({i, j});
    }
  }
  for (int tame = 0; tame < 2; ++tame) {
    if (tame && !plf_tame_walk_allowed<T>(op, maxT, maxV)) continue;
    for (std::size_t count : {fi.size(), std::min<std::size_t>(fi.size(), 37)}) {
      std::vector<T> out(count, T(-12345));
      PairBatch<T> b;
      b.points = pts.points.data();
      b.pointCount = pts.points.size();
      b.f = fi.data();
      b.g = gi.data();
      b.steps = steps.data();
      b.count = count;
      b.out = out.data();
      walk_plf_pairs_simd(simd, b, w, op, tame != 0);
      for (std::size_t k = 0; k < count; ++k) {
        const auto [i, j] = which[k];
        const T want =
            integrate_plf_pair(fs[i].data(), static_cast<std::uint32_t>(fs[i].size()), fs[j].data(),
                               static_cast<std::uint32_t>(fs[j].size()), w, op);
        if (!same_bits(want, out[k])) {
          fail_msg("PLF %s %s (float%d, input kind %d, window [%g, %g), %s path): pair (%zu, %zu) "
                   "of lengths %zu, %zu: scalar %.17g, SIMD %.17g",
                   cpu_simd_name(simd), what, int(sizeof(T) * 8), kind, double(w.a), double(w.b),
                   tame ? "tame" : "general", i, j, fs[i].size(), fs[j].size(), double(want),
                   double(out[k]));
        }
      }
    }
  }
}

template <typename T>
void check_plf_operations(CpuSimd simd, const std::vector<Fn<T>>& fs, int kind) {
  for (const auto& w : windows<T>()) {
    check_plf_batch(simd, fs, w, PlfOperationL1Dist<T>{}, "L1", kind);
    check_plf_batch(simd, fs, w, PlfOperationL2Dist<T>{}, "L2", kind);
    check_plf_batch(simd, fs, w, PlfOperationLpDist<T>(3.0), "Lp, p = 3", kind);
    check_plf_batch(simd, fs, w, PlfOperationLpDist<T>(1.5), "Lp, p = 1.5", kind);
    check_plf_batch(simd, fs, w, PlfOperationLpDist<T>(32.0), "Lp, p = 32", kind);  // products
    check_plf_batch(simd, fs, w, PlfOperationLpDist<T>(33.0), "Lp, p = 33", kind);  // pow
    check_plf_batch(simd, fs, w, PlfOperationLpDist<T>(400.0), "Lp, p = 400", kind);
    check_plf_batch(simd, fs, w, PlfOperationLpDist<T>(1e39), "Lp, p = 1e39", kind);
    check_plf_batch(simd, fs, w, PlfOperationLpDist<T>(1e300), "Lp, p = 1e300", kind);
    check_plf_batch(simd, fs, w, PlfOperationLinfDist<T>{}, "Linf", kind);
    check_plf_batch(simd, fs, w, PlfOperationL2InnerProduct<T>{}, "L2 inner product", kind);
  }
}

template <typename T>
void check_plf_walk(CpuSimd simd) {
  std::mt19937_64 rng(20261126);
  std::uniform_int_distribution<std::size_t> len(1, 40);
  for (int kind = 0; kind <= 6; ++kind) {
    std::vector<Fn<T>> fs;
    for (int k = 0; k < 14; ++k) fs.push_back(random_function<T>(rng, kind, len(rng)));
    fs.push_back(Fn<T>{{T(0), T(0)}});
    fs.push_back(Fn<T>{{T(1), T(2)}});
    fs.push_back(Fn<T>{{T(-1), T(-2)}, {T(1), T(2)}});  // crosses zero at 0
    check_plf_operations(simd, fs, kind);
  }
  std::vector<Fn<T>> same;
  for (int k = 0; k < 24; ++k) same.push_back(random_function<T>(rng, 5, 16));
  check_plf_operations(simd, same, 5);
  // Sign changes of f - g with one end near half an ulp of the other
  // (2^-22 .. 2^-26 of 1 for float32, 2^-51 .. 2^-55 for float64), where
  // B - A and A + B round to the same number or just do not; against the
  // zero function, against each other and against constants.
  std::vector<Fn<T>> edge{Fn<T>{{T(0), T(0)}}, Fn<T>{{T(0), T(1)}}, Fn<T>{{T(-1), T(-1)}}};
  const int e0 = std::numeric_limits<T>::digits;
  for (int e = e0 - 2; e <= e0 + 2; ++e) {
    const T tiny = std::ldexp(T(1), -e);
    edge.push_back(Fn<T>{{T(0), T(-1)}, {T(1), tiny}});
    edge.push_back(Fn<T>{{T(0), tiny}, {T(1), T(-1)}});
    edge.push_back(Fn<T>{{T(0), T(1) + tiny}, {T(0.5), -tiny}, {T(1), T(1)}});
  }
  check_plf_operations(simd, edge, 7);
}

void test_plf_walk_same_bits_as_scalar(void**) {
  for (CpuSimd s : simd_targets()) {
    check_plf_walk<float>(s);
    check_plf_walk<double>(s);
  }
}

// ---- the executor ----

template <typename T>
std::shared_ptr<const PcfCollection<T>> collection(const std::vector<Fn<T>>& fs) {
  std::vector<std::uint64_t> offsets{0};
  std::vector<T> t, v;
  for (const auto& f : fs) {
    for (const auto& p : f) {
      t.push_back(p.t);
      v.push_back(p.v);
    }
    offsets.push_back(t.size());
  }
  return std::make_shared<const PcfCollection<T>>(fs.size(), offsets.data(), t.data(), v.data(), 1);
}

// The result of a request on the CPU executor, through the matrix writer.
template <typename T>
std::vector<T> run_cpu(const std::shared_ptr<const PcfCollection<T>>& X,
                       const std::shared_ptr<const PcfCollection<T>>& Y, OperationSpec spec,
                       Window<T> w, SymmetricLayout layout, CpuExecutionConfig cfg,
                       bool linear = false, std::uint32_t components = 1) {
  PairRequest<T> req;
  req.linear = linear;
  req.components = components;
  req.x = X;
  req.y = Y ? Y : X;
  req.symmetric = !Y;
  req.op = spec;
  req.window = w;
  std::vector<T> out;
  std::shared_ptr<MatrixWriter<T>> writer;
  const std::size_t nx = req.row_objects(), ny = req.col_objects();
  if (Y) {
    out.assign(nx * ny, T(-1));
    writer = std::make_shared<MatrixWriter<T>>(MatrixWriter<T>::dense(out.data(), nx, ny));
  } else {
    out.assign(symmetric_result_size(nx, layout, spec.is_kernel()), T(-1));
    writer = std::make_shared<MatrixWriter<T>>(
        MatrixWriter<T>::symmetric(out.data(), nx, layout, spec.is_kernel()));
  }
  req.consumer = writer;
  Task task(make_cpu_work<T>(std::move(req), cfg));
  task.run_here();
  if (task.error()) std::rethrow_exception(task.error());
  return out;
}

// Single functions (components = 1) or objects of `components` functions
// (DESIGN §11), whose SIMD walk carries each pair's accumulator from one
// component to the next.
template <typename T>
void check_executor(bool linear, std::uint32_t components = 1) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::size_t> len(1, 60);
  std::vector<Fn<T>> xs, ys;
  for (int k = 0; k < (components == 1 ? 71 : 72); ++k) {
    xs.push_back(random_function<T>(rng, k % 3, len(rng)));
  }
  for (int k = 0; k < 45; ++k) ys.push_back(random_function<T>(rng, 5, len(rng)));
  const auto X = collection(xs), Y = collection(ys);
  const OperationSpec specs[] = {OperationSpec::distance(1), OperationSpec::distance(2),
                                 OperationSpec::distance(3), OperationSpec::distance(1.5),
                                 OperationSpec::distance(400),
                                 OperationSpec::distance(std::numeric_limits<double>::infinity()),
                                 OperationSpec::l2_kernel()};
  const T inf = std::numeric_limits<T>::infinity();
  const Window<T> wins[] = {Window<T>::whole_line(), {T(0.75), inf}};
  for (const auto& spec : specs) {
    for (const auto& w : wins) {
      for (int cross = 0; cross < 2; ++cross) {
        for (SymmetricLayout layout : {SymmetricLayout::Condensed, SymmetricLayout::Dense}) {
          if (cross && layout == SymmetricLayout::Dense) continue;
          if (spec.is_kernel() && layout == SymmetricLayout::Condensed) layout = SymmetricLayout::PackedLower;
          CpuExecutionConfig scalar;
          scalar.simd = CpuSimd::Scalar;
          scalar.threads = 1;
          const auto want =
              run_cpu<T>(X, cross ? Y : nullptr, spec, w, layout, scalar, linear, components);
          for (CpuSimd s : simd_targets()) {
            for (int threads : {1, 2, 3, 7}) {
              for (std::uint64_t blockElements : {std::uint64_t(0), std::uint64_t(100)}) {
                CpuExecutionConfig cfg;
                cfg.simd = s;
                cfg.threads = threads;
                cfg.maxBlockElements = blockElements;
                const auto got =
                    run_cpu<T>(X, cross ? Y : nullptr, spec, w, layout, cfg, linear, components);
                assert_int_equal(got.size(), want.size());
                for (std::size_t k = 0; k < got.size(); ++k) {
                  if (!same_bits(got[k], want[k])) {
                    fail_msg("%s executor, %u components, %s, %d threads, block elements %llu, "
                             "op %d, %s, layout %d, float%d: element %zu: scalar %.17g, SIMD %.17g",
                             linear ? "PLF" : "PCF", components, cpu_simd_name(s), threads, (unsigned long long)blockElements,
                             int(spec.kind), cross ? "cross" : "symmetric", int(layout),
                             int(sizeof(T) * 8), k, double(want[k]), double(got[k]));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

void test_executor_same_bits_as_scalar(void**) {
  check_executor<float>(false);
  check_executor<double>(false);
}

void test_plf_executor_same_bits_as_scalar(void**) {
  check_executor<float>(true);
  check_executor<double>(true);
}

void test_components_executor_same_bits_as_scalar(void**) {
  for (bool linear : {false, true}) {
    check_executor<float>(linear, 3);
    check_executor<double>(linear, 3);
  }
}

// A consumer with bounds (BlockConsumer::pair_bounds): the values of every
// kept pair in a dense nx x ny matrix; row i's bound rowB[i], column j's
// colB[j] (withCols; else rows alone).
template <typename T>
class BoundedDense final : public BlockConsumer<T> {
 public:
  BoundedDense(std::vector<T>& out, std::size_t ny, const std::vector<T>& rowB,
               const std::vector<T>& colB, bool withCols)
      : out_(out), ny_(ny), rowB_(rowB), colB_(colB), withCols_(withCols) {}
  ConsumerKind kind() const noexcept override { return ConsumerKind::Stream; }
  void prepare(const PairPlane& plane) override { plane_ = plane; }
  void consume(const BlockPiece<T>& piece) override {
    const BlockInfo& b = piece.block;
    for (std::size_t r = 0; r < b.n_rows(); ++r) {
      for (std::size_t c = 0; c < b.n_cols(); ++c) {
        const std::size_t i = b.rows.first + r, j = b.cols.first + c;
        if (pair_kept(i, j, plane_.skip)) out_[i * ny_ + j] = piece.at(r, c);
      }
    }
  }
  bool pair_bounds(const BlockInfo& b, std::vector<T>& rows, std::vector<T>& cols) override {
    ++calls;
    rows.assign(rowB_.begin() + b.rows.first, rowB_.begin() + b.rows.last + 1);
    cols.clear();
    if (withCols_) cols.assign(colB_.begin() + b.cols.first, colB_.begin() + b.cols.last + 1);
    return true;
  }
  void finish() override {}
  void poison() noexcept override {}
  std::atomic<int> calls{0};

 private:
  std::vector<T>& out_;
  std::size_t ny_;
  const std::vector<T>& rowB_;
  const std::vector<T>& colB_;
  bool withCols_;
  PairPlane plane_;
};

// The executor hands a consumer's bounds to the SIMD walk: for L1 and
// L-inf every kept pair is its exact value (the matrix writer's, bit for
// bit) or a value above its row's and column's bounds (rows alone: its
// row's) and at most the exact one, never where a bound is NaN, and some
// groups stop; L2 (no MonotoneFold) stays exact. Symmetric and cross
// planes, whole and small blocks, 1 and 3 threads.
template <typename T>
void check_executor_bounds() {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::size_t> len(1, 60);
  std::vector<Fn<T>> xs, ys;
  for (int k = 0; k < 70; ++k) xs.push_back(random_function<T>(rng, 5, len(rng)));
  for (int k = 0; k < 45; ++k) ys.push_back(random_function<T>(rng, 5, len(rng)));
  const auto X = collection(xs), Y = collection(ys);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::size_t stopped = 0;
  for (const double p : {1.0, std::numeric_limits<double>::infinity(), 2.0}) {
    const OperationSpec spec = OperationSpec::distance(p);
    for (int cross = 0; cross < 2; ++cross) {
      const std::size_t nx = xs.size(), ny = cross ? ys.size() : xs.size();
      CpuExecutionConfig scalar;
      scalar.simd = CpuSimd::Scalar;
      const auto exact = run_cpu<T>(X, cross ? Y : nullptr, spec, Window<T>::whole_line(),
                                    SymmetricLayout::Dense, scalar);
      std::vector<T> rowB(nx), colB(ny);
      for (std::size_t i = 0; i < nx; ++i) {
        double sum = 0;
        for (std::size_t j = 0; j < ny; ++j) sum += double(exact[i * ny + j]);
        rowB[i] = i % 7 == 3 ? nan : T(0.3 * sum / double(ny));
      }
      for (std::size_t j = 0; j < ny; ++j) {
        double sum = 0;
        for (std::size_t i = 0; i < nx; ++i) sum += double(exact[i * ny + j]);
        colB[j] = j % 5 == 2 ? nan : T(0.25 * sum / double(nx));
      }
      const TriangleSkipMode skip =
          cross ? TriangleSkipMode::None : TriangleSkipMode::LowerTriangleSkipDiag;
      // The plane through the executor under cfg into a BoundedDense
      // consumer of the bounds above; the values, and how often the
      // executor asked for bounds.
      auto run_bounded = [&](bool withCols, const CpuExecutionConfig& cfg, int& calls) {
        std::vector<T> got(nx * ny, T(-1));
        auto consumer = std::make_shared<BoundedDense<T>>(got, ny, rowB, colB, withCols);
        PairRequest<T> req;
        req.x = X;
        req.y = cross ? Y : X;
        req.symmetric = !cross;
        req.op = spec;
        req.consumer = consumer;
        Task task(make_cpu_work<T>(std::move(req), cfg));
        task.run_here();
        if (task.error()) std::rethrow_exception(task.error());
        calls = consumer->calls.load();
        return got;
      };
      // The scalar walk computes every value in full and asks for no bounds.
      {
        int calls = -1;
        const std::vector<T> got = run_bounded(true, scalar, calls);
        assert_int_equal(calls, 0);
        for (std::size_t i = 0; i < nx; ++i) {
          for (std::size_t j = 0; j < ny; ++j) {
            if (pair_kept(i, j, skip)) assert_true(same_bits(exact[i * ny + j], got[i * ny + j]));
          }
        }
      }
      for (CpuSimd s : simd_targets()) {
        for (const bool withCols : {true, false}) {
          for (const std::uint64_t blockElements : {std::uint64_t(0), std::uint64_t(100)}) {
            CpuExecutionConfig cfg;
            cfg.simd = s;
            cfg.threads = blockElements ? 3 : 1;
            cfg.maxBlockElements = blockElements;
            int calls = -1;
            const std::vector<T> got = run_bounded(withCols, cfg, calls);
            const bool monotone = p != 2.0;
            assert_true(calls > 0 || !monotone);
            for (std::size_t i = 0; i < nx; ++i) {
              for (std::size_t j = 0; j < ny; ++j) {
                if (!pair_kept(i, j, skip)) continue;
                const T e = exact[i * ny + j], g = got[i * ny + j];
                if (same_bits(e, g)) continue;
                const T br = rowB[i], bc = withCols ? colB[j] : -std::numeric_limits<T>::infinity();
                if (!monotone || std::isnan(br) || std::isnan(bc) || !(g > br && g > bc && g <= e)) {
                  fail_msg("%s, p = %g, %s, %s, block elements %llu: pair (%zu, %zu): exact %.17g, "
                           "bounded %.17g, bounds %.17g / %.17g",
                           cpu_simd_name(s), p, cross ? "cross" : "symmetric",
                           withCols ? "rows and columns" : "rows", (unsigned long long)blockElements,
                           i, j, double(e), double(g), double(br), double(bc));
                }
                ++stopped;
              }
            }
          }
        }
      }
    }
  }
  if (!simd_targets().empty() && stopped == 0) fail_msg("no bounded walk stopped early");
}

void test_executor_hands_bounds_to_the_walk(void**) {
  check_executor_bounds<float>();
  check_executor_bounds<double>();
}

// The names and the order of the instruction sets, and the choice from
// MPCF_CPU_SIMD (capped at what the CPU runs among the sets of the build's
// architecture; a set of the other architecture is refused).
void test_choice(void**) {
  assert_string_equal(cpu_simd_name(CpuSimd::Scalar), "scalar");
  assert_string_equal(cpu_simd_name(CpuSimd::SSE4), "sse4");
  assert_string_equal(cpu_simd_name(CpuSimd::AVX2), "avx2");
  assert_string_equal(cpu_simd_name(CpuSimd::AVX512), "avx512");
  assert_string_equal(cpu_simd_name(CpuSimd::NEON), "neon");
  assert_true(cpu_simd_supported(CpuSimd::Scalar));
  const CpuSimd best = cpu_simd_best();
  assert_true(cpu_simd_supported(best));
  for (int s = static_cast<int>(best) + 1; s < kCpuSimdCount; ++s) {
    assert_false(cpu_simd_supported(static_cast<CpuSimd>(s)));
  }
  setenv("MPCF_CPU_SIMD", "scalar", 1);
  assert_true(cpu_simd_default() == CpuSimd::Scalar);
#if defined(__x86_64__)
  const char* highest = "avx512";  // the best is at most avx512
  const char* other = "neon";
  const char* otherSets = "its sets are scalar, sse4, avx2, avx512";
  assert_false(cpu_simd_compiled(CpuSimd::NEON));
#elif defined(__aarch64__)
  const char* highest = "neon";
  const char* other = "avx2";
  const char* otherSets = "its sets are scalar, neon";
  for (CpuSimd s : {CpuSimd::SSE4, CpuSimd::AVX2, CpuSimd::AVX512}) assert_false(cpu_simd_compiled(s));
#else
  const char* highest = nullptr;
  const char* other = "neon";
  const char* otherSets = "its sets are scalar";
#endif
  if (highest != nullptr) {
    setenv("MPCF_CPU_SIMD", highest, 1);
    assert_true(cpu_simd_default() == best);
  }
  setenv("MPCF_CPU_SIMD", other, 1);
  try {
    (void)cpu_simd_default();
    fail_msg("MPCF_CPU_SIMD=%s was not refused", other);
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    if (msg.find(std::string("MPCF_CPU_SIMD=") + other) == std::string::npos ||
        msg.find(otherSets) == std::string::npos) {
      fail_msg("message '%s'", msg.c_str());
    }
  }
  setenv("MPCF_CPU_SIMD", "no-such-set", 1);
  assert_true(cpu_simd_default() == best);
  unsetenv("MPCF_CPU_SIMD");
  assert_true(cpu_simd_default() == best);
  std::string compiled;
  for (int s = 1; s < kCpuSimdCount; ++s) {
    if (cpu_simd_compiled(static_cast<CpuSimd>(s))) {
      compiled += std::string(" ") + cpu_simd_name(static_cast<CpuSimd>(s));
    }
  }
  std::printf("instruction sets: best %s (compiled:%s)\n", cpu_simd_name(best), compiled.c_str());
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_choice),
      cmocka_unit_test(test_walk_same_bits_as_scalar),
      cmocka_unit_test(test_executor_same_bits_as_scalar),
      cmocka_unit_test(test_plf_walk_same_bits_as_scalar),
      cmocka_unit_test(test_plf_executor_same_bits_as_scalar),
      cmocka_unit_test(test_components_executor_same_bits_as_scalar),
      cmocka_unit_test(test_executor_hands_bounds_to_the_walk),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
