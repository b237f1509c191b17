// The PLF walk and its operations (core/plf_walk.hpp, core/plf_operations.hpp)
// against values worked out by hand and against a separate reference written
// differently: long double, every function evaluated on the union of all
// breakpoints and window ends, every piece split at the root of f - g, and
// each sign-constant piece integrated by Simpson's rule (exact for
// polynomials of degree <= 3: |h|, h^2, |h|^3 and f g) or, for other p, by a
// graded, adaptive Gauss-Legendre quadrature. Nothing here is computed by the
// code under test.
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <limits>
#include <random>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "mpcf/core/number_text.hpp"  // dtype_name
#include "mpcf/core/plf_walk.hpp"

using namespace mpcf;
using LD = long double;

template <typename T>
using Pt = SimplePoint<T, T>;
template <typename T>
using Fn = std::vector<Pt<T>>;

static const double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------
// Running the code under test.

template <typename T>
static T run(const Fn<T>& f, const Fn<T>& g, const OperationSpec& spec,
             Window<T> w = Window<T>::whole_line()) {
  return dispatch_plf_operation<T>(spec, [&](const auto& op) {
    return integrate_plf_pair(f.data(), static_cast<std::uint32_t>(f.size()), g.data(),
                              static_cast<std::uint32_t>(g.size()), w, op);
  });
}
template <typename T>
static T dist(const Fn<T>& f, const Fn<T>& g, double p, Window<T> w = Window<T>::whole_line()) {
  return run(f, g, OperationSpec::distance(p), w);
}
template <typename T>
static T kern(const Fn<T>& f, const Fn<T>& g, Window<T> w = Window<T>::whole_line()) {
  return run(f, g, OperationSpec::l2_kernel(), w);
}

// One unit in the last place of T at x (the spacing of T's numbers there).
template <typename T>
static LD ulp_of(LD x) {
  x = std::fabs(x);
  if (x < static_cast<LD>(std::numeric_limits<T>::min())) {
    return static_cast<LD>(std::numeric_limits<T>::denorm_min());
  }
  int e;
  (void)std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
}

// Distance from `got` to the exact value in ulps of T at the exact value;
// equal infinities are 0 apart, anything else non-finite is infinitely far.
template <typename T>
static LD ulps(T got, LD exact) {
  if (std::isinf(exact) || std::isinf(got)) {
    return (static_cast<LD>(got) == exact) ? 0.0L : std::numeric_limits<LD>::infinity();
  }
  if (std::isnan(got)) return std::numeric_limits<LD>::infinity();
  return std::fabs(static_cast<LD>(got) - exact) / ulp_of<T>(exact);
}

template <typename T>
static void expect_ulps(T got, LD exact, LD maxUlps, const char* what) {
  const LD d = ulps(got, exact);
  if (!(d <= maxUlps)) {
    fail_msg("%s (%s): got %.21Lg, exact %.21Lg, %Lg ulps > %Lg", what,
             dtype_name<T>(), static_cast<LD>(got), exact, d, maxUlps);
  }
}

// ---------------------------------------------------------------------------
// Hand-worked values.

template <typename T>
static void hand_tent() {
  // f: the tent (0,0), (1,1), (2,0); z: the zero function.
  const Fn<T> f{{0, 0}, {1, 1}, {2, 0}};
  const Fn<T> z{{0, 0}};
  assert_true(dist(f, z, 1.0) == T(1));                       // two triangles of area 1/2
  expect_ulps(dist(f, z, 2.0), std::sqrt(2.0L / 3), 1, "tent L2");  // 2 * int_0^1 t^2
  assert_true(dist(f, z, kInf) == T(1));
  expect_ulps(kern(f, f), 2.0L / 3, 1, "tent kernel");
  // p = 3: 2 * int_0^1 t^3 = 1/2; p = 1.5: 2 / 2.5 = 0.8.
  expect_ulps(dist(f, z, 3.0), std::cbrt(0.5L), 2, "tent L3");
  expect_ulps(dist(f, z, 1.5), std::pow(0.8L, 1 / 1.5L), 2, "tent L1.5");
  // Symmetry, and d(f, f) = 0.
  assert_true(dist(z, f, 1.0) == T(1));
  for (double p : {1.0, 1.5, 2.0, 3.0, kInf}) assert_true(dist(f, f, p) == T(0));
  assert_true(kern(f, z) == T(0));
}

template <typename T>
static void hand_sign_change() {
  // f: 3 -> -1 on [0, 1], then -1 for ever; g: 0 until 1, then -1 for ever.
  // h = f - g = 3 - 4t on [0, 1), 0 after: root at 3/4,
  // L1 = 3/4 * 3/2 + 1/4 * 1/2 = 5/4, int h^2 = (9 - 3 + 1)/3 = 7/3,
  // int |h|^3 = (81 + 1) / (4 * 4) = 41/8, Linf = 3.
  const Fn<T> f{{0, 3}, {1, -1}};
  const Fn<T> g{{1, -1}};
  assert_true(dist(f, g, 1.0) == T(1.25));
  expect_ulps(dist(f, g, 2.0), std::sqrt(7.0L / 3), 1, "crossing L2");
  expect_ulps(dist(f, g, 3.0), std::cbrt(41.0L / 8), 2, "crossing L3");
  // p = 2.5: (3^3.5 + 1) / (3.5 * 4).
  expect_ulps(dist(f, g, 2.5), std::pow((std::pow(3.0L, 3.5L) + 1) / 14, 1 / 2.5L), 2, "crossing L2.5");
  assert_true(dist(f, g, kInf) == T(3));
  // Equal non-zero tails: the distances are finite, the kernel is not.
  assert_true(kern(f, g) == std::numeric_limits<T>::infinity());
  assert_true(kern(f, f) == std::numeric_limits<T>::infinity());
  // The window [0, 1): the kernel of f with g is 0 there (g = 0).
  assert_true(kern(f, g, Window<T>{0, 1}) == T(0));
  // h changes sign at 0.5 on [0, 1]: 1 -> -1.
  const Fn<T> s{{0, 1}, {1, -1}, {2, 0}};
  const Fn<T> z{{0, 0}};
  assert_true(dist(s, z, 1.0) == T(1));  // 1/4 + 1/4 + 1/2
  expect_ulps(dist(s, z, 2.0), std::sqrt(2.0L / 3), 1, "s L2");
  expect_ulps(kern(s, z), 0.0L, 0, "s kernel with 0");
  expect_ulps(kern(s, s), 2.0L / 3, 1, "s kernel");
}

template <typename T>
static void hand_constant_and_jump() {
  // f = 2 on [0, 3], down to 0 at 4: L1 = 6 + 1, int f^2 = 12 + 4/3.
  const Fn<T> f{{0, 2}, {3, 2}, {4, 0}};
  const Fn<T> z{{0, 0}};
  assert_true(dist(f, z, 1.0) == T(7));
  expect_ulps(dist(f, z, 2.0), std::sqrt(40.0L / 3), 1, "plateau L2");
  expect_ulps(kern(f, f), 40.0L / 3, 1, "plateau kernel");
  assert_true(dist(f, z, kInf) == T(2));
  // A jump at t_0: j = 0 before 1, 2 on [1, 2], down to 0 at 3; z starts
  // earlier. L1 = 2 + 1, Linf = 2 (the value at t_0 from the right).
  const Fn<T> j{{1, 2}, {2, 2}, {3, 0}};
  const Fn<T> z2{{0, 0}, {4, 0}};
  assert_true(dist(j, z2, 1.0) == T(3));
  assert_true(dist(j, z2, kInf) == T(2));
  assert_true(dist(z2, j, kInf) == T(2));
  // A window ending at the jump sees none of it; one starting there all.
  assert_true(dist(j, z2, 1.0, Window<T>{0, 1}) == T(0));
  assert_true(dist(j, z2, kInf, Window<T>{0, 1}) == T(0));
  assert_true(dist(j, z2, 1.0, Window<T>{1, 1.5}) == T(1));
  assert_true(dist(j, z2, kInf, Window<T>{1, 1.5}) == T(2));
  // Two jumps: a = 1 from 0, b = -1 from 0.5 (both constant for ever):
  // the window [0, 2): h = 1 on [0, 0.5), 2 on [0.5, 2).
  const Fn<T> a{{0, 1}}, b{{0.5, -1}};
  assert_true(dist(a, b, 1.0, Window<T>{0, 2}) == T(3.5));
  expect_ulps(dist(a, b, 2.0, Window<T>{0, 2}), std::sqrt(6.5L), 1, "jumps L2");
  assert_true(dist(a, b, kInf, Window<T>{0, 2}) == T(2));
  assert_true(dist(a, b, kInf, Window<T>{0, 0.5}) == T(1));
  assert_true(kern(a, b, Window<T>{0, 2}) == T(-1.5));
}

template <typename T>
static void hand_tails() {
  const T inf = std::numeric_limits<T>::infinity();
  const Fn<T> one{{0, 1}};          // 1 on [0, inf)
  const Fn<T> minus{{0, 0}, {1, -1}};  // 0 -> -1 on [0, 1], -1 after
  const Fn<T> z{{0, 0}};
  for (double p : {1.0, 1.5, 2.0, 3.0, 400.0}) {
    assert_true(dist(one, z, p) == inf);
    assert_true(dist(one, minus, p) == inf);
    assert_true(dist(one, one, p) == T(0));  // a zero integrand on an unbounded piece
  }
  assert_true(dist(one, z, kInf) == T(1));
  assert_true(dist(one, minus, kInf) == T(2));
  assert_true(kern(one, one) == inf);
  assert_true(kern(one, minus) == -inf);
  assert_true(kern(one, z) == T(0));
  // Finite windows give finite answers: 1 on [0, 8): L1 8, L2 sqrt 8, L3 2.
  const Window<T> w{0, 8};
  assert_true(dist(one, z, 1.0, w) == T(8));
  expect_ulps(dist(one, z, 2.0, w), std::sqrt(8.0L), 1, "window L2");
  expect_ulps(dist(one, z, 3.0, w), 2.0L, 1, "window L3");
  assert_true(kern(one, one, w) == T(8));
  // one - minus = 1 + t on [0, 1], 2 after; over [0, 8): 1.5 + 14.
  assert_true(dist(one, minus, 1.0, w) == T(15.5));
  assert_true(kern(one, minus, w) == T(-7.5));
  // Half-infinite windows.
  assert_true(dist(one, z, 1.0, Window<T>{-inf, 3}) == T(3));
  assert_true(dist(one, z, 1.0, Window<T>{5, inf}) == inf);
  assert_true(dist(minus, minus, 2.0, Window<T>{5, inf}) == T(0));
}

template <typename T>
static void hand_windows() {
  const Fn<T> f{{0, 0}, {1, 1}, {2, 0}};
  const Fn<T> z{{0, 0}};
  // [0.5, 1.5) cuts both pieces in their middles: L1 2 * (0.5 + 1) / 2 * 0.5.
  const Window<T> w{0.5, 1.5};
  assert_true(dist(f, z, 1.0, w) == T(0.75));
  assert_true(dist(f, z, kInf, w) == T(1));
  expect_ulps(kern(f, f, w), 7.0L / 12, 1, "cut kernel");  // 2 int_0.5^1 t^2
  expect_ulps(dist(f, z, 2.0, w), std::sqrt(7.0L / 12), 1, "cut L2");
  // [0.25, 0.75): int t = 1/4, Linf = h(0.75-) = 0.75, int t^2 = 13/96.
  const Window<T> v{0.25, 0.75};
  assert_true(dist(f, z, 1.0, v) == T(0.25));
  assert_true(dist(f, z, kInf, v) == T(0.75));
  expect_ulps(kern(f, f, v), 13.0L / 96, 1, "inner kernel");
  expect_ulps(dist(f, z, 3.0, v), std::cbrt(0.3125L * 0.25L), 2, "inner L3");  // (0.75^4 - 0.25^4) / 4
  // Entirely before t_0, entirely after the last breakpoints, empty.
  for (double p : {1.0, 2.0, 3.0, kInf}) {
    assert_true(dist(f, z, p, Window<T>{-3, -1}) == T(0));
    assert_true(dist(f, z, p, Window<T>{10, 12}) == T(0));
    assert_true(dist(f, z, p, Window<T>{1, 1}) == T(0));
    assert_true(dist(f, z, p, Window<T>{1.5, 0.5}) == T(0));
  }
  assert_true(kern(f, f, Window<T>{-3, -1}) == T(0));
  const Fn<T> one{{0, 1}};
  assert_true(dist(one, z, 1.0, Window<T>{10, 12}) == T(2));
  assert_true(dist(one, z, kInf, Window<T>{10, 12}) == T(1));
  // A window whose ends are breakpoints equals the unwindowed walk there.
  assert_true(dist(f, z, 1.0, Window<T>{0, 2}) == dist(f, z, 1.0));
  assert_true(dist(f, z, 2.0, Window<T>{0, 1}) == dist(f, z, 2.0, Window<T>{1, 2}));
  // A window of the whole line through the windowed path: bitwise the same.
  const T inf = std::numeric_limits<T>::infinity();
  const Fn<T> g{{-1, 0.5}, {0.5, -2}, {3, 0.25}};
  PlfOperationLpDist<T> op(3.0);
  const T wide = integrate_plf_pair<true>(f.data(), 3, g.data(), 3, -inf, inf, op);
  const T plain = integrate_plf_pair<false>(f.data(), 3, g.data(), 3, -inf, inf, op);
  assert_true(wide == plain && wide == inf);
  assert_true(integrate_plf_pair<true>(f.data(), 3, g.data(), 3, -inf, inf, PlfOperationL1Dist<T>{}) == inf);
}

static void test_hand_worked(void**) {
  hand_tent<float>();
  hand_tent<double>();
  hand_sign_change<float>();
  hand_sign_change<double>();
  hand_constant_and_jump<float>();
  hand_constant_and_jump<double>();
  hand_tails<float>();
  hand_tails<double>();
  hand_windows<float>();
  hand_windows<double>();
}

// ---------------------------------------------------------------------------
// Interpolation: exact ends, monotone, within the end values, no overflow.

template <typename T>
static void interpolation_properties() {
  using detail::plf_interpolate;
  const T big = std::numeric_limits<T>::max();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int rep = 0; rep < 2000; ++rep) {
    const T t0 = static_cast<T>(u(rng) * 100);
    const T t1 = t0 + static_cast<T>(std::fabs(u(rng)) * 50 + 1e-3);
    const T scale = rep % 3 == 0 ? big / 2 : T(10);
    const T v0 = static_cast<T>(u(rng)) * scale;
    const T v1 = static_cast<T>(u(rng)) * scale;
    assert_true(plf_interpolate(t0, v0, t1, v1, t0) == v0);
    assert_true(plf_interpolate(t0, v0, t1, v1, t1) == v1);
    // Monotone and within [lo, hi] on a sweep: 300 neighbours of each end
    // (where the exactness must not break monotonicity) and 1000 steps between.
    std::vector<T> xs;
    for (T x = t0; xs.size() < 300; x = std::nextafter(x, t1)) xs.push_back(x);
    for (int k = 1; k < 1000; ++k) xs.push_back(t0 + (t1 - t0) * (static_cast<T>(k) / 1000));
    std::vector<T> tail;
    for (T x = t1; tail.size() < 300; x = std::nextafter(x, t0)) tail.push_back(x);
    xs.insert(xs.end(), tail.rbegin(), tail.rend());
    std::sort(xs.begin(), xs.end());
    const T lo = std::min(v0, v1), hi = std::max(v0, v1);
    T prev = v0;
    for (T x : xs) {
      const T y = plf_interpolate(t0, v0, t1, v1, x);
      assert_true(y >= lo && y <= hi);
      assert_true(v1 >= v0 ? y >= prev : y <= prev);
      prev = y;
    }
  }
  // A segment wider than the largest value and values of opposite signs
  // near it: finite, exact midpoint.
  assert_true(plf_interpolate(-big, -big, big, big, T(0)) == T(0));
  assert_true(plf_interpolate(-big, T(1), big, T(3), T(0)) == T(2));
  assert_true(plf_interpolate(-big, T(1), big, T(3), big) == T(3));
  const T y = plf_interpolate(-big, -big, big, big, big / 2);
  assert_true(std::isfinite(y) && y > 0);
  // Dyadic data on a power-of-two segment: exact.
  assert_true(plf_interpolate(T(1), T(-3), T(5), T(5), T(2.5)) == T(0));
  assert_true(plf_interpolate(T(1), T(3), T(5), T(5), T(2)) == T(3.5));
}

static void test_interpolation(void**) {
  interpolation_properties<float>();
  interpolation_properties<double>();
}

// ---------------------------------------------------------------------------
// The reference: long double, written from the definition.

struct RefFn {
  std::vector<LD> t, v;
};

template <typename T>
static RefFn to_ref(const Fn<T>& f, LD scale = 1) {
  RefFn r;
  for (const auto& p : f) {
    r.t.push_back(p.t);
    r.v.push_back(static_cast<LD>(p.v) * scale);
  }
  return r;
}

// f on the open interval that contains `mid` (no breakpoint strictly inside
// it), as the linear function of that interval evaluated at x.
static LD ref_value(const RefFn& f, LD mid, LD x) {
  std::size_t k = 0;
  while (k < f.t.size() && f.t[k] <= mid) ++k;
  if (k == 0) return 0;
  if (k == f.t.size()) return f.v.back();
  return f.v[k - 1] + (f.v[k] - f.v[k - 1]) * ((x - f.t[k - 1]) / (f.t[k] - f.t[k - 1]));
}

struct RefPiece {
  LD l, r, fl, fm, fr, gl, gm, gr;  // values at l+, the middle, r-
};

struct RefSplit {
  std::vector<RefPiece> pieces;  // bounded pieces inside the window
  bool tail = false;             // the window reaches +inf
  LD ftail = 0, gtail = 0;       // the values there
};

static RefSplit ref_split(const RefFn& f, const RefFn& g, LD a, LD b) {
  std::vector<LD> pts;
  for (LD x : f.t) pts.push_back(x);
  for (LD x : g.t) pts.push_back(x);
  if (std::isfinite(a)) pts.push_back(a);
  if (std::isfinite(b)) pts.push_back(b);
  std::vector<LD> in;
  for (LD x : pts) {
    if (x >= a && x <= b) in.push_back(x);
  }
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  RefSplit s;
  for (std::size_t k = 0; k + 1 < in.size(); ++k) {
    const LD l = in[k], r = in[k + 1], m = l / 2 + r / 2;
    s.pieces.push_back({l, r, ref_value(f, m, l), ref_value(f, m, m), ref_value(f, m, r),
                        ref_value(g, m, l), ref_value(g, m, m), ref_value(g, m, r)});
  }
  if (b == std::numeric_limits<LD>::infinity() && a < b) {
    s.tail = true;
    s.ftail = f.v.back();
    s.gtail = g.v.back();
  }
  return s;
}

// Gauss-Legendre, 16 points, nodes by Newton's method on P_16.
struct GaussLegendre {
  static constexpr int n = 16;
  LD x[n], w[n];
  GaussLegendre() {
    const LD pi = 3.141592653589793238462643383279502884L;
    for (int i = 0; i < n; ++i) {
      LD z = std::cos(pi * (i + 0.75L) / (n + 0.5L)), dp = 0;
      for (int it = 0; it < 100; ++it) {
        LD p0 = 1, p1 = z;
        for (int k = 2; k <= n; ++k) {
          const LD p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n * (z * p1 - p0) / (z * z - 1);
        const LD dz = p1 / dp;
        z -= dz;
        if (std::fabs(dz) < 1e-21L) break;
      }
      x[i] = z;
      w[i] = 2 / ((1 - z * z) * dp * dp);
    }
  }
  template <typename F>
  LD rule(const F& f, LD a, LD b) const {
    const LD c = a / 2 + b / 2, h = (b - a) / 2;
    LD s = 0;
    for (int i = 0; i < n; ++i) s += w[i] * f(c + h * x[i]);
    return s * h;
  }
  // Bisects until two levels agree within the absolute tolerance tol.
  template <typename F>
  LD adaptive(const F& f, LD a, LD b, LD whole, LD tol, int depth) const {
    const LD m = a / 2 + b / 2;
    const LD l = rule(f, a, m), r = rule(f, m, b);
    if (depth == 0 || std::fabs(l + r - whole) <= tol) return l + r;
    return adaptive(f, a, m, l, tol, depth - 1) + adaptive(f, m, b, r, tol, depth - 1);
  }
  // int_0^1 f for f >= 0, on a mesh graded geometrically toward both ends
  // (an integrable singularity u^p at a root of h; the narrow peak of a
  // large power), each interval refined until it is within 2e-18 of the
  // whole integral (long double's eps is 5.4e-20, double's 1.1e-16).
  template <typename F>
  LD unit(const F& f) const {
    std::vector<LD> u{0};
    for (int k = 40; k >= 2; --k) u.push_back(std::ldexp(1.0L, -k));
    u.push_back(0.5L);
    for (int k = 2; k <= 40; ++k) u.push_back(1 - std::ldexp(1.0L, -k));
    u.push_back(1);
    std::vector<LD> est(u.size() - 1);
    LD total = 0;
    for (std::size_t k = 0; k + 1 < u.size(); ++k) total += est[k] = rule(f, u[k], u[k + 1]);
    const LD tol = 2e-18L * total;
    LD s = 0;
    for (std::size_t k = 0; k + 1 < u.size(); ++k) s += adaptive(f, u[k], u[k + 1], est[k], tol, 30);
    return s;
  }
};
static const GaussLegendre kGL;

// A piece [l, r] split at the root of h where h changes sign inside it.
struct SignPiece {
  LD w, hl, hm, hr;  // width; h at the left end, the middle, the right end
};

static std::vector<SignPiece> sign_pieces(const RefFn& f, const RefFn& g, const RefPiece& p) {
  const LD hl = p.fl - p.gl, hr = p.fr - p.gr;
  const LD m = p.l / 2 + p.r / 2;
  auto h = [&](LD x) { return ref_value(f, m, x) - ref_value(g, m, x); };
  if ((hl < 0 && hr > 0) || (hl > 0 && hr < 0)) {
    const LD x0 = p.l + (p.r - p.l) * (hl / (hl - hr));
    return {{x0 - p.l, hl, h(p.l / 2 + x0 / 2), 0}, {p.r - x0, 0, h(x0 / 2 + p.r / 2), hr}};
  }
  return {{p.r - p.l, hl, p.fm - p.gm, hr}};
}

// int |h / s|^p over the bounded pieces: Simpson for p = 1, 2, 3, else the
// quadrature; +inf for a non-zero tail.
static LD ref_power_sum(const RefFn& f, const RefFn& g, const RefSplit& sp, LD p, LD s) {
  const bool simpson = p == 1 || p == 2 || p == 3;
  LD sum = 0;
  for (const RefPiece& pc : sp.pieces) {
    for (const SignPiece& q : sign_pieces(f, g, pc)) {
      if (!(q.w > 0)) continue;
      if (simpson) {
        auto F = [&](LD h) { return std::pow(std::fabs(h) / s, p); };
        sum += q.w / 6 * (F(q.hl) + 4 * F(q.hm) + F(q.hr));
      } else {
        const LD a = std::fabs(q.hl) / s, b = std::fabs(q.hr) / s;
        sum += q.w * kGL.unit([&](LD u) { return std::pow(a + (b - a) * u, p); });
      }
    }
  }
  if (sp.tail && sp.ftail != sp.gtail) sum = std::numeric_limits<LD>::infinity();
  return sum;
}

static LD ref_sup(const RefSplit& sp) {
  LD m = 0;
  for (const RefPiece& pc : sp.pieces) {
    if (pc.r > pc.l) m = std::max({m, std::fabs(pc.fl - pc.gl), std::fabs(pc.fr - pc.gr)});
  }
  if (sp.tail) m = std::max(m, std::fabs(sp.ftail - sp.gtail));
  return m;
}

static LD ref_distance(const RefFn& f, const RefFn& g, LD a, LD b, LD p) {
  const RefSplit sp = ref_split(f, g, a, b);
  const LD s = ref_sup(sp);
  if (std::isinf(p) || s == 0) return s;
  const LD sum = ref_power_sum(f, g, sp, p, s);
  return std::isinf(sum) ? sum : s * std::pow(sum, 1 / p);
}

// ||f||_p (which = 0) or ||g||_p (which = 1) over the bounded pieces of the
// pair in the window, the constant tail beyond both last breakpoints left
// out: the scale of the rounding errors of the interpolated values (the
// tail is stored, not interpolated).
static LD ref_norm(const RefFn& f, const RefFn& g, LD a, LD b, LD p, int which) {
  RefSplit sp = ref_split(f, g, a, b);
  sp.tail = false;
  for (RefPiece& pc : sp.pieces) {
    if (which == 1) {
      pc.fl = pc.gl, pc.fm = pc.gm, pc.fr = pc.gr;
    }
    pc.gl = pc.gm = pc.gr = 0;
  }
  const RefFn zero{{f.t[0]}, {0}};
  const LD s = ref_sup(sp);
  if (std::isinf(p) || s == 0) return s;
  return s * std::pow(ref_power_sum(which == 1 ? g : f, zero, sp, p, s), 1 / p);
}

static LD ref_kernel(const RefFn& f, const RefFn& g, LD a, LD b) {
  const RefSplit sp = ref_split(f, g, a, b);
  LD sum = 0;
  for (const RefPiece& pc : sp.pieces) {
    sum += (pc.r - pc.l) / 6 * (pc.fl * pc.gl + 4 * pc.fm * pc.gm + pc.fr * pc.gr);
  }
  if (sp.tail && sp.ftail * sp.gtail != 0) {
    sum = sp.ftail * sp.gtail > 0 ? std::numeric_limits<LD>::infinity()
                                  : -std::numeric_limits<LD>::infinity();
  }
  return sum;
}

// ---------------------------------------------------------------------------
// Random dyadic data: times and values multiples of 2^-4 in small ranges.
// With power-of-two gaps every interpolated value (at the other function's
// breakpoints, at window ends on the grid) is exact in both dtypes, so the
// only roundings left are the operations' own; with other gaps the
// interpolation rounds too.

template <typename T>
static Fn<T> random_plf(std::mt19937_64& rng, bool pow2Gaps, T scale = 1) {
  std::uniform_int_distribution<int> len(1, 10), start(-48, 48), val(-64, 64), e(-4, 1), gap(1, 40),
      coin(0, 3);
  const int m = len(rng);
  Fn<T> f;
  LD t = start(rng) / 16.0L;
  for (int k = 0; k < m; ++k) {
    T v = static_cast<T>(val(rng) / 16.0L) * scale;
    if (k == m - 1 && coin(rng) != 0) v = 0;  // mostly vanishing tails
    f.push_back({static_cast<T>(t), v});
    t += pow2Gaps ? std::ldexp(1.0L, e(rng)) : gap(rng) / 16.0L;
  }
  return f;
}

template <typename T>
static Window<T> random_window(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 4), pos(-96, 160);
  const T inf = std::numeric_limits<T>::infinity();
  T a = static_cast<T>(pos(rng) / 16.0L), b = static_cast<T>(pos(rng) / 16.0L);
  if (b < a) std::swap(a, b);
  switch (kind(rng)) {
    case 0:
    case 1:
      return Window<T>::whole_line();
    case 2:
      return {a, inf};
    case 3:
      return {-inf, b};
    default:
      return {a, b};
  }
}


// ---------------------------------------------------------------------------
// Random pairs against the reference.

// The largest errors seen for one operation.
struct ErrorStats {
  char name[24] = {0};
  LD maxUlps = 0;  // |error| in ulps of the exact value
  LD maxCond = 0;  // |error| / (eps * the condition scale), where one is given
  long n = 0;
};

// One result: infinities must match exactly; a finite one must be within
// tolUlps ulps of the exact value plus tolCond * eps * condScale.
template <typename T>
static void check(ErrorStats& st, T got, LD exact, LD condScale, LD tolUlps, LD tolCond, int rep) {
  ++st.n;
  if (std::isinf(exact) || !std::isfinite(got)) {
    if (static_cast<LD>(got) != exact) {
      fail_msg("rep %d, %s (%s): got %.21Lg, exact %.21Lg", rep, st.name, dtype_name<T>(),
               static_cast<LD>(got), exact);
    }
    return;
  }
  const LD eps = std::numeric_limits<T>::epsilon();
  const LD err = std::fabs(static_cast<LD>(got) - exact);
  st.maxUlps = std::max(st.maxUlps, err / ulp_of<T>(exact));
  if (condScale > 0) st.maxCond = std::max(st.maxCond, err / (eps * condScale));
  if (!(err <= tolUlps * ulp_of<T>(exact) + tolCond * eps * condScale)) {
    fail_msg("rep %d, %s (%s): got %.21Lg, exact %.21Lg (%Lg ulps)", rep, st.name, dtype_name<T>(),
             static_cast<LD>(got), exact, err / ulp_of<T>(exact));
  }
}

static void report(const char* what, const ErrorStats& st) {
  std::printf("  %-32s %-12s n = %5ld  max %6.3Lf ulps", what, st.name, st.n, st.maxUlps);
  if (st.maxCond > 0) std::printf(",  max %6.3Lf eps * condition scale", st.maxCond);
  std::printf("\n");
}

// With exact interpolation (pow2Gaps) a result must be within tolUlps of the
// exact value. Otherwise the interpolated values of f and g carry absolute
// errors of a few eps |f|, eps |g|, which their difference keeps however
// small it is, so the bound adds tolCond * eps times the condition scale:
// ||f||_p + ||g||_p on the window for distances, ||f||_2 ||g||_2 for the
// kernel (over the functions' breakpoints: see ref_norm). Every distance must also be bitwise symmetric in f and g.
template <typename T>
static void random_against_reference(bool pow2Gaps, unsigned seed, int pairs, const std::vector<double>& ps,
                                     bool withKernel, LD tolUlps, LD tolCond) {
  std::mt19937_64 rng(seed);
  std::vector<ErrorStats> st(ps.size() + 1);
  for (std::size_t k = 0; k < ps.size(); ++k) std::snprintf(st[k].name, sizeof st[k].name, "p = %g", ps[k]);
  std::snprintf(st.back().name, sizeof st.back().name, "kernel");
  for (int rep = 0; rep < pairs; ++rep) {
    const Fn<T> f = random_plf<T>(rng, pow2Gaps), g = random_plf<T>(rng, pow2Gaps);
    const Window<T> w = random_window<T>(rng);
    const RefFn rf = to_ref(f), rg = to_ref(g);
    for (std::size_t k = 0; k < ps.size(); ++k) {
      const LD p = static_cast<T>(ps[k]);  // the code rounds p to T
      const T got = dist(f, g, ps[k], w);
      const LD exact = ref_distance(rf, rg, w.a, w.b, p);
      const LD cond = pow2Gaps ? 0 : ref_norm(rf, rg, w.a, w.b, p, 0) + ref_norm(rf, rg, w.a, w.b, p, 1);
      check(st[k], got, exact, cond, tolUlps, tolCond, rep);
      assert_true(dist(g, f, ps[k], w) == got);
    }
    if (withKernel) {
      const T got = kern(f, g, w);
      const LD exact = ref_kernel(rf, rg, w.a, w.b);
      const LD cond = pow2Gaps ? 0 : ref_norm(rf, rg, w.a, w.b, 2, 0) * ref_norm(rf, rg, w.a, w.b, 2, 1);
      check(st.back(), got, exact, cond, tolUlps, tolCond, rep);
      assert_true(kern(g, f, w) == got);
    }
  }
  char what[48];
  std::snprintf(what, sizeof what, "%s, %s interp.", dtype_name<T>(), pow2Gaps ? "exact" : "rounded");
  for (const auto& s : st) {
    if (s.n) report(what, s);
  }
}

static void test_random_exact_interpolation(void**) {
  random_against_reference<float>(true, 11, 3000, {1, 2, 3, kInf}, true, 4, 0);
  random_against_reference<double>(true, 12, 3000, {1, 2, 3, kInf}, true, 4, 0);
  random_against_reference<float>(true, 13, 100, {1.5, 2.5, 7}, false, 4, 0);
  random_against_reference<double>(true, 14, 100, {1.5, 2.5, 7}, false, 4, 0);
}

static void test_random_rounded_interpolation(void**) {
  random_against_reference<float>(false, 21, 3000, {1, 2, 3, kInf}, true, 4, 8);
  random_against_reference<double>(false, 22, 3000, {1, 2, 3, kInf}, true, 4, 8);
  random_against_reference<float>(false, 23, 60, {1.5, 2.5, 7}, false, 4, 8);
  random_against_reference<double>(false, 24, 60, {1.5, 2.5, 7}, false, 4, 8);
}

// ---------------------------------------------------------------------------
// Range: values near 1e300 (float64) and 1e30 (float32), tiny values, large
// p. The data are the random dyadic data times 2^e, so the exact answer is
// 2^e times the reference of the unscaled data (the scaled reference).

template <typename T>
static void scaled_values(int e, unsigned seed, int pairs, LD relTol) {
  std::mt19937_64 rng(seed);
  const T s = std::ldexp(T(1), e);
  const std::vector<double> ps{1, 1.5, 2, 3, 7, 400, 1e6, kInf};
  std::vector<ErrorStats> st(ps.size() + 1);
  for (std::size_t k = 0; k < ps.size(); ++k) std::snprintf(st[k].name, sizeof st[k].name, "p = %g", ps[k]);
  std::snprintf(st.back().name, sizeof st.back().name, "kernel");
  for (int rep = 0; rep < pairs; ++rep) {
    const Fn<T> f = random_plf<T>(rng, true), g = random_plf<T>(rng, true);
    Fn<T> fs = f, gs = g, gi = g;
    for (auto& q : fs) q.v *= s;
    for (auto& q : gs) q.v *= s;
    for (auto& q : gi) q.v /= s;
    const Window<T> w = random_window<T>(rng);
    const RefFn rf = to_ref(f), rg = to_ref(g);
    for (std::size_t k = 0; k < ps.size(); ++k) {
      const T got = dist(fs, gs, ps[k], w);
      const LD exact = std::ldexp(ref_distance(rf, rg, w.a, w.b, static_cast<T>(ps[k])), e);
      assert_true(!std::isnan(got));
      if (std::isinf(exact)) {
        assert_true(got == std::numeric_limits<T>::infinity());
        continue;
      }
      assert_true(std::isfinite(got));
      const LD tol = std::max(relTol * exact, 4 * ulp_of<T>(exact));
      check(st[k], got, exact, 0, tol / ulp_of<T>(exact), 0, rep);
    }
    // The kernel of 2^e f with 2^-e g is the kernel of f with g, bitwise.
    assert_true(kern(fs, gi, w) == kern(f, g, w));
  }
  char what[48];
  std::snprintf(what, sizeof what, "%s, values * 2^%d", dtype_name<T>(), e);
  for (std::size_t k = 0; k < ps.size(); ++k) report(what, st[k]);
}

static void test_large_and_tiny_values(void**) {
  scaled_values<double>(996, 31, 50, 1e-12L);    // |values| up to 2^998 ~ 2.7e300
  scaled_values<double>(-1000, 32, 50, 1e-12L);  // down to 2^-1004 ~ 6e-303
  scaled_values<float>(100, 33, 50, 1e-5L);      // up to 2^102 ~ 5e30
  scaled_values<float>(-100, 34, 50, 1e-5L);     // down to 2^-104 ~ 5e-32
}

// |f - g| beyond the largest value (f = -g near it) gives +inf for every
// distance, never NaN; halving keeps the L1 of values near the largest one
// finite and exact.
template <typename T>
static void overflowing_differences(T big) {
  const T inf = std::numeric_limits<T>::infinity();
  const Fn<T> f{{0, big}, {1, -big}, {2, 0}};
  const Fn<T> g{{0, -big}, {1, big}, {2, 0}};
  for (double p : {1.0, 1.5, 2.0, 3.0, 400.0, 1e6, kInf}) {
    assert_true(dist(f, g, p) == inf);
    assert_true(dist(f, g, p, Window<T>{0.25, 1.5}) == inf);
  }
  const Fn<T> z{{0, 0}};
  // |f| = big (1 - 2t) on [0, 1], big (2 - t) on [1, 2]: L1 = big,
  // int f^2 = 2/3 big^2, int |f|^3 = 1/2 big^3.
  assert_true(dist(f, z, 1.0) == big);
  expect_ulps(dist(f, z, 2.0), static_cast<LD>(big) * std::sqrt(2.0L / 3), 2, "big L2");
  expect_ulps(dist(f, z, 3.0), static_cast<LD>(big) * std::cbrt(0.5L), 2, "big L3");
  assert_true(dist(f, z, kInf) == big);
}

static void test_overflowing_differences(void**) {
  overflowing_differences<float>(3e38f);
  overflowing_differences<double>(1.5e308);
}

// float32 p beyond FLT_MAX (p_T = +inf) and huge finite p: the distance is
// the largest |f - g| on a bounded support (+inf on an unbounded one), as
// the PCF Lp gives.
template <typename T>
static void huge_p(const std::vector<double>& ps, unsigned seed) {
  std::mt19937_64 rng(seed);
  for (int rep = 0; rep < 500; ++rep) {
    const Fn<T> f = random_plf<T>(rng, rep % 2 == 0), g = random_plf<T>(rng, rep % 2 == 0);
    const Window<T> w = random_window<T>(rng);
    const T sup = dist(f, g, kInf, w);
    const T l2 = dist(f, g, 2.0, w);
    for (double p : ps) {
      const T d = dist(f, g, p, w);
      if (std::isinf(l2)) {
        assert_true(d == std::numeric_limits<T>::infinity());
      } else {
        assert_true(d == sup);
      }
    }
  }
}

static void test_huge_p(void**) {
  huge_p<float>({1e39, 1e300, std::numeric_limits<double>::max(), 0x1p41, 1e10}, 41);
  huge_p<double>({1e300, std::numeric_limits<double>::max(), 0x1p71, 1e25}, 42);
}

// h from 1 to 1 + e on [0, 1) (e = 2^-40 in float64, 2^-20 in float32): the
// closed form must not cancel. Exact: the mean of (1 + e u)^p is the series
// sum_k C(p, k) e^k / (k + 1).
template <typename T>
static void near_constant(T e) {
  for (double p : {1.0001, 1.5, 2.0, 2.5, 3.0, 7.0, 40.0, 400.0, 1e4, 1e6}) {
    const LD pt = static_cast<T>(p);
    LD term = 1, mean = 0;
    for (int k = 0; k < 400; ++k) {
      mean += term / (k + 1);
      term *= (pt - k) / (k + 1) * static_cast<LD>(e);
      if (std::fabs(term) < 1e-30L * mean) break;
    }
    const LD exact = std::pow(mean, 1 / pt);
    const Window<T> w{0, 1};
    for (int sign : {1, -1}) {
      const Fn<T> up{{0, T(sign)}, {1, T(sign) * (1 + e)}};
      const Fn<T> down{{0, T(sign) * (1 + e)}, {1, T(sign)}};
      const Fn<T> z{{0, 0}};
      expect_ulps(dist(up, z, p, w), exact, 2, "near-constant, rising");
      expect_ulps(dist(down, z, p, w), exact, 2, "near-constant, falling");
      expect_ulps(dist(z, up, p, w), exact, 2, "near-constant, g - f");
    }
  }
}

static void test_near_constant(void**) {
  near_constant<float>(0x1p-20f);
  near_constant<double>(0x1p-40);
}

// The factor G of the Lp closed form, across rho = A / B and p, against
// the quadrature, with d = 1 - rho and the peak of the power at v = 0:
//   same signs      G = int_0^1 (1 - d v)^p dv,
//   opposite signs  G = (rho^(p+1) I + I) / (1 + rho), I = int_0^1 (1 - v)^p dv,
// each power as exp(p log1p(-x)), so that a large p does not magnify the
// rounding of 1 - x. rho is exact here (B = 1), so what is measured is the
// closed form's own rounding. (In the distance an error of G is divided by
// p.)
template <typename T>
static void power_mean_factor(T closeToOne) {
  const std::vector<T> rhos{0,    0x1p-30f, 0.1f, 0.25f, 0.5f, 0.75f, 0.9f, 1 - T(0x1p-10f),
                            1 - T(0x1p-16f), closeToOne, 1};
  LD maxErr = 0;
  for (double p : {1.0001, 1.01, 1.5, 2.5, 3.0, 7.0, 40.0, 400.0, 1e4, 1e6}) {
    const PlfOperationLpDist<T> op(p);
    const LD pt = op.p;
    for (T rho : rhos) {
      for (bool opposite : {false, true}) {
        if (opposite && rho == 0) continue;
        const LD r = rho, d = 1 - r;
        LD exact;
        if (opposite) {
          const LD i = kGL.unit([&](LD v) { return std::exp(pt * std::log1p(-v)); });
          exact = (std::pow(r, pt + 1) * i + i) / (1 + r);
        } else {
          exact = kGL.unit([&](LD v) { return std::exp(pt * std::log1p(-d * v)); });
        }
        // The operation's own G: products for integer p up to 32 (3, 7),
        // expm1 / log1p otherwise.
        const T got = op.mean_factor(detail::PlfEnds<T>{rho, T(1), opposite});
        const LD err = ulps(got, exact);
        maxErr = std::max(maxErr, err);
        if (!(err <= 16)) {
          fail_msg("G(%s, rho = %.9Lg, p = %g, %s): got %.21Lg, exact %.21Lg, %Lg ulps", dtype_name<T>(), r, p,
                   opposite ? "opposite" : "same", static_cast<LD>(got), exact, err);
        }
      }
    }
  }
  std::printf("  G(rho, p), %-21s max %6.3Lf ulps\n", dtype_name<T>(), maxErr);
}

static void test_power_mean_factor(void**) {
  power_mean_factor<float>(1 - 0x1p-23f);
  power_mean_factor<double>(1 - 0x1p-40);
}

// Lockstep walks give bitwise the results of one walk at a time.
template <typename T, typename Op>
static void lockstep_same(const Op& op, std::mt19937_64& rng) {
  constexpr int K = 4;
  for (int rep = 0; rep < 200; ++rep) {
    const Fn<T> f = random_plf<T>(rng, rep % 2 == 0);
    Fn<T> g[K];
    const Pt<T>* gp[K];
    std::uint32_t ng[K];
    for (int k = 0; k < K; ++k) {
      g[k] = random_plf<T>(rng, rep % 2 == 0);
      gp[k] = g[k].data();
      ng[k] = static_cast<std::uint32_t>(g[k].size());
    }
    const Window<T> w = random_window<T>(rng);
    const std::uint32_t nf = static_cast<std::uint32_t>(f.size());
    T out[K];
    if (w.is_whole_line()) {
      integrate_plf_pairs_lockstep<K, false>(f.data(), nf, gp, ng, w.a, w.b, op, out);
    } else {
      integrate_plf_pairs_lockstep<K, true>(f.data(), nf, gp, ng, w.a, w.b, op, out);
    }
    for (int k = 0; k < K; ++k) {
      const T one = integrate_plf_pair(f.data(), nf, gp[k], ng[k], w, op);
      assert_true(one == out[k] || (std::isnan(one) && std::isnan(out[k])));
    }
  }
}

template <typename T>
static void lockstep_all(unsigned seed) {
  std::mt19937_64 rng(seed);
  lockstep_same<T>(PlfOperationL1Dist<T>{}, rng);
  lockstep_same<T>(PlfOperationL2Dist<T>{}, rng);
  lockstep_same<T>(PlfOperationLpDist<T>(2.5), rng);
  lockstep_same<T>(PlfOperationLinfDist<T>{}, rng);
  lockstep_same<T>(PlfOperationL2InnerProduct<T>{}, rng);
}

static void test_lockstep(void**) {
  lockstep_all<float>(51);
  lockstep_all<double>(52);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hand_worked),
      cmocka_unit_test(test_interpolation),
      cmocka_unit_test(test_random_exact_interpolation),
      cmocka_unit_test(test_random_rounded_interpolation),
      cmocka_unit_test(test_large_and_tiny_values),
      cmocka_unit_test(test_overflowing_differences),
      cmocka_unit_test(test_huge_p),
      cmocka_unit_test(test_near_constant),
      cmocka_unit_test(test_power_mean_factor),
      cmocka_unit_test(test_lockstep),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
