// Support for the GPU tests: skipping without a device, random PCFs, a
// brute-force long double reference written for these tests (it shares no
// code with libmpcf), and tolerance checks.
//
// Tolerances (DESIGN §1): relative 1e-12 for float64 and 1e-5 for float32,
// taken relative to the integral of |integrand| (so kernels with
// cancellation are judged fairly) and scaled by max(1, rectangles / 500),
// since a sum of R rounded terms has an error bound growing with R.
// L-infinity distances involve a single rounding: 2 ulp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "mpcf/mpcf.h"

namespace gputest {

// Exit code that ctest reports as "skipped" (SKIP_RETURN_CODE 77).
constexpr int kSkip = 77;

inline void skip_without_gpu(const char* program) {
  if (mpcf_cuda_device_count() == 0) {
    std::printf("%s: SKIP: no CUDA device (libmpcf: %s)\n", program, mpcf_build_info());
    std::exit(kSkip);
  }
}

// Sizes shrink under compute-sanitizer (MPCF_GPU_TEST_SMALL=1).
inline bool small_mode() {
  const char* s = std::getenv("MPCF_GPU_TEST_SMALL");
  return s != nullptr && s[0] != '\0' && s[0] != '0';
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  std::uint64_t below(std::uint64_t n) { return next() % n; }

 private:
  std::uint64_t state_;
};

// A collection in CSR form; every number is a float so the same data is
// exact in float32 and float64.
struct Pcfs {
  std::vector<std::uint64_t> offsets{0};
  std::vector<double> t;
  std::vector<double> v;
  std::size_t n() const { return offsets.size() - 1; }
  std::size_t size_of(std::size_t i) const { return offsets[i + 1] - offsets[i]; }
  void add(const std::vector<double>& times, const std::vector<double>& values) {
    t.insert(t.end(), times.begin(), times.end());
    v.insert(v.end(), values.begin(), values.end());
    offsets.push_back(t.size());
  }
};

struct RandomSpec {
  std::size_t n = 10;
  std::size_t minM = 1;
  std::size_t maxM = 20;
  bool zeroTail = true;      // last value 0
  bool nonNegative = false;  // values in [0, 10) instead of [-5, 5)
};

// Times start in [-2, 2) with gaps in [0.05, 1).
inline Pcfs random_pcfs(Rng& rng, const RandomSpec& spec) {
  Pcfs p;
  for (std::size_t i = 0; i < spec.n; ++i) {
    const std::size_t m = spec.minM + rng.below(spec.maxM - spec.minM + 1);
    std::vector<double> ts(m), vs(m);
    float t = static_cast<float>(rng.uniform() * 4.0 - 2.0);
    for (std::size_t k = 0; k < m; ++k) {
      ts[k] = t;
      vs[k] = spec.nonNegative ? static_cast<float>(rng.uniform() * 10.0)
                               : static_cast<float>(rng.uniform() * 10.0 - 5.0);
      t = t + static_cast<float>(0.05 + rng.uniform() * 0.95);
    }
    if (spec.zeroTail) vs[m - 1] = 0.0;
    p.add(ts, vs);
  }
  return p;
}

// A libmpcf collection of `p` in `dtype` (asserts success).
// float32 inner products whose float sums overflow (the GPU computes them
// again in double): n functions cycling through three kinds, f = 2^70 on
// [0, 2), g = 2^70 on [0, 1) and -2^70 on [1, 2), u = 1 on [0, 1).
inline Pcfs overflowing_inner_product_pcfs(std::size_t n) {
  Pcfs P;
  const double big = std::ldexp(1.0, 70);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) P.add({0, 2}, {big, 0});
    if (i % 3 == 1) P.add({0, 1, 2}, {big, -big, 0});
    if (i % 3 == 2) P.add({0, 1}, {1, 0});
  }
  return P;
}
// Their inner products worked out by hand, in float32: <f, g> = 2^140 -
// 2^140 = 0 (not inf - inf = NaN), <f, f> = <g, g> = 2^141 (+inf in
// float32), <f, u> = <g, u> = 2^70, <u, u> = 1.
inline float overflowing_inner_product(std::size_t i, std::size_t j) {
  const std::size_t a = i % 3, b = j % 3;
  if (a == 2 && b == 2) return 1.0f;
  if (a == 2 || b == 2) return std::ldexp(1.0f, 70);
  return a == b ? INFINITY : 0.0f;
}

inline mpcf_pcfs* make_handle(const Pcfs& p, mpcf_dtype dtype) {
  mpcf_pcfs* h = nullptr;
  mpcf_status st;
  if (dtype == MPCF_FLOAT32) {
    std::vector<float> t(p.t.begin(), p.t.end()), v(p.v.begin(), p.v.end());
    st = mpcf_pcfs_create(dtype, p.n(), p.offsets.data(), t.data(), v.data(), &h);
  } else {
    st = mpcf_pcfs_create(dtype, p.n(), p.offsets.data(), p.t.data(), p.v.data(), &h);
  }
  if (st != MPCF_OK) std::printf("mpcf_pcfs_create: %s\n", mpcf_last_error_message());
  assert_int_equal(st, MPCF_OK);
  return h;
}

enum class Op { L1, Lp, Linf, Kernel };

struct Reference {
  long double value;      // the exact answer (inf when unbounded)
  long double magnitude;  // integral of |integrand| (scale of the rounding error)
  std::size_t rectangles;
};

// Brute force over the union of breakpoints: on every piece [l, r) both
// functions are looked up by walking them forward, the piece is clipped to
// [a, b), and zero integrands are skipped (so an unbounded zero piece adds
// nothing and an unbounded non-zero one gives +-inf).
inline Reference reference(const Pcfs& X, std::size_t i, const Pcfs& Y, std::size_t j, Op op,
                           double p, double a, double b) {
  std::vector<long double> times;
  for (auto k = X.offsets[i]; k < X.offsets[i + 1]; ++k) times.push_back(X.t[k]);
  for (auto k = Y.offsets[j]; k < Y.offsets[j + 1]; ++k) times.push_back(Y.t[k]);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  // Value of a function at the current piece: the last breakpoint at or
  // before it (0 before the first); `pos` only moves forward.
  auto value_at = [](const Pcfs& P, std::size_t f, std::uint64_t& pos, long double x) {
    while (pos < P.offsets[f + 1] && P.t[pos] <= x) ++pos;
    return pos == P.offsets[f] ? 0.0L : static_cast<long double>(P.v[pos - 1]);
  };
  std::uint64_t px = X.offsets[i], py = Y.offsets[j];
  const long double inf = std::numeric_limits<long double>::infinity();
  long double sum = 0, mag = 0, sup = 0;
  for (std::size_t k = 0; k < times.size(); ++k) {
    const long double fv = value_at(X, i, px, times[k]);
    const long double gv = value_at(Y, j, py, times[k]);
    const long double l = std::max<long double>(times[k], a);
    const long double r = std::min<long double>(k + 1 < times.size() ? times[k + 1] : inf, b);
    if (!(r > l)) continue;
    const long double d = fv - gv;
    long double x = 0;
    switch (op) {
      case Op::L1: x = std::fabs(d); break;
      case Op::Lp: x = std::pow(std::fabs(d), static_cast<long double>(p)); break;
      case Op::Linf: sup = std::max(sup, std::fabs(d)); continue;
      case Op::Kernel: x = fv * gv; break;
    }
    if (x == 0) continue;
    if (r == inf || l == -inf) {
      sum += x > 0 ? inf : -inf;
      mag = inf;
      continue;
    }
    sum += (r - l) * x;
    mag += (r - l) * std::fabs(x);
  }
  Reference ref{sum, mag, times.size() + 1};
  if (op == Op::Linf) ref = {sup, sup, times.size() + 1};
  if (op == Op::Lp) {
    ref.value = std::pow(sum, 1.0L / p);
    ref.magnitude = ref.value;
  }
  return ref;
}

inline double base_tolerance(mpcf_dtype dtype) { return dtype == MPCF_FLOAT32 ? 1e-5 : 1e-12; }

// |got - want| within the tolerance described at the top, relative to
// `magnitude`; infinities must match exactly.
inline bool close_enough(double got, long double want, long double magnitude,
                         std::size_t rectangles, mpcf_dtype dtype, Op op) {
  if (std::isnan(got)) return false;
  if (std::isinf(static_cast<double>(want)) || std::isinf(got)) {
    return static_cast<double>(want) == got;
  }
  long double tol;
  if (op == Op::Linf) {
    tol = 2 * (dtype == MPCF_FLOAT32 ? std::numeric_limits<float>::epsilon()
                                     : std::numeric_limits<double>::epsilon());
  } else {
    tol = base_tolerance(dtype) * std::max<long double>(1, rectangles / 500.0L);
  }
  return std::fabs(static_cast<long double>(got) - want) <= tol * magnitude;
}

inline std::string op_name(Op op) {
  switch (op) {
    case Op::L1: return "L1";
    case Op::Lp: return "Lp";
    case Op::Linf: return "Linf";
    case Op::Kernel: return "L2 kernel";
  }
  return "?";
}

// Reads element k of an output buffer of `dtype` as double.
inline double element(const std::vector<unsigned char>& buf, mpcf_dtype dtype, std::size_t k) {
  if (dtype == MPCF_FLOAT32) {
    float x;
    std::memcpy(&x, buf.data() + k * sizeof(float), sizeof(float));
    return x;
  }
  double x;
  std::memcpy(&x, buf.data() + k * sizeof(double), sizeof(double));
  return x;
}

inline std::size_t dtype_size(mpcf_dtype dtype) {
  return dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
}

// Options for a backend, with an optional window.
inline mpcf_options* options_for(mpcf_backend backend) {
  mpcf_options* o = nullptr;
  assert_int_equal(mpcf_options_create(&o), MPCF_OK);
  assert_int_equal(mpcf_options_set_backend(o, backend), MPCF_OK);
  return o;
}

inline void check_ok(mpcf_status st, const char* what) {
  if (st != MPCF_OK) {
    std::printf("%s failed: %s: %s\n", what, mpcf_status_name(st), mpcf_last_error_message());
  }
  assert_int_equal(st, MPCF_OK);
}

// Runs pdist / l2_kernel (op Kernel) of X into a dense n x n buffer.
inline std::vector<unsigned char> dense_symmetric(mpcf_pcfs* X, mpcf_dtype dtype, Op op, double p,
                                                  const mpcf_options* o) {
  std::uint64_t size = 0;
  if (op == Op::Kernel) {
    check_ok(mpcf_l2_kernel_size(X, MPCF_LAYOUT_DENSE, &size), "mpcf_l2_kernel_size");
  } else {
    check_ok(mpcf_pdist_size(X, MPCF_LAYOUT_DENSE, &size), "mpcf_pdist_size");
  }
  std::vector<unsigned char> out(std::max<std::uint64_t>(size, 1) * dtype_size(dtype));
  if (op == Op::Kernel) {
    check_ok(mpcf_l2_kernel(X, MPCF_LAYOUT_DENSE, out.data(), size, o), "mpcf_l2_kernel");
  } else {
    check_ok(mpcf_pdist(X, p, MPCF_LAYOUT_DENSE, out.data(), size, o), "mpcf_pdist");
  }
  return out;
}

inline double p_of(Op op) {
  switch (op) {
    case Op::L1: return 1.0;
    case Op::Lp: return 2.5;
    case Op::Linf: return INFINITY;
    case Op::Kernel: return 2.0;
  }
  return 1.0;
}

}  // namespace gputest
