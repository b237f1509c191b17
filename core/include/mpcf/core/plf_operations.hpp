// Operation functors for piecewise linear functions (DESIGN §10). The PLF
// walk (plf_walk.hpp) hands every merged piece to an operation as its width
// w and the one-sided values of f and g at its two ends,
//   op.piece(acc, w, fl, fr, gl, gr)   fl = f(l+), fr = f(r-), likewise g,
// and on the piece both functions, so h = f - g and f * g's factors, are
// linear. Every integral over a piece is in closed form:
//   L1      integral |h|           (split at the root of h when it changes sign)
//   L2      integral h^2           = w (hl^2 + hl hr + hr^2) / 3
//   Lp      integral |h|^p         = w B^p G(rho, p), B = max(|hl|, |hr|)
//   Linf    max(|hl|, |hr|)         over pieces of positive width
//   kernel  integral f g           = w (2 fl gl + fl gr + fr gl + 2 fr gr) / 6
// The rule of DESIGN §1 is kept as in operations.hpp: a piece whose
// integrand is exactly zero (h = 0 at both ends; for the kernel a zero
// closed form) or whose width is not positive contributes exactly zero, and
// a non-zero one of infinite width contributes +inf (+-inf for the kernel),
// never NaN.
//
// Everything here is MPCF_HD and calls only functions that nvcc device code
// has (fabs, pow, sqrt, expm1, log1p), so the CUDA kernels use it unchanged.
#pragma once

#include <cmath>
#include <limits>

#include "mpcf/core/host_device.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/walk.hpp"  // detail::min_value, detail::max_value

namespace mpcf {

namespace detail {

template <typename T>
MPCF_HD T expm1_value(T x) {
#if defined(__CUDA_ARCH__)
  return ::expm1(x);
#else
  return std::expm1(x);
#endif
}
template <typename T>
MPCF_HD T log1p_value(T x) {
#if defined(__CUDA_ARCH__)
  return ::log1p(x);
#else
  return std::log1p(x);
#endif
}

// The value at x of the segment from (t0, v0) to (t1, v1), t0 < t1,
// t0 <= x <= t1. Exact at both ends (x = t0 gives v0, x = t1 gives v1),
// monotone in x and never outside [min(v0, v1), max(v0, v1)], for every
// finite input (no overflow, no NaN).
//
// Rounding: the fraction s = (x - t0) / (t1 - t0) is rounded twice or three
// times (s lies in [0, 1], s = 1 exactly at x = t1); then P0811's lerp (the
// algorithm of C++20 std::lerp, which device code does not have):
//   v0, v1 of one sign:        v0 + s (v1 - v0), clamped not to pass v1;
//   v0, v1 of opposite signs:  s v1 + (1 - s) v0 (no overflow of v1 - v0).
// Each step is monotone in s, so the whole is monotone in x. The absolute
// error is a few units of eps * max(|v0|, |v1|). When all numbers are
// dyadic with few bits and t1 - t0 is a power of two, every step is exact.
//
// A segment wider than the dtype's largest value (t1 - t0 = inf) is
// measured in halves (x/2 - t0/2 over t1/2 - t0/2): multiplying by 1 in the
// ordinary case changes no bit.
template <typename T>
MPCF_HD T plf_interpolate(T t0, T v0, T t1, T v1, T x) {
  const T c = (t1 - t0) == std::numeric_limits<T>::infinity() ? T(0.5) : T(1);
  const T s = (x * c - t0 * c) / (t1 * c - t0 * c);
  if (s == T(1)) return v1;
  if ((v0 <= T(0) && v1 >= T(0)) || (v0 >= T(0) && v1 <= T(0))) {
    return s * v1 + (T(1) - s) * v0;
  }
  const T y = v0 + s * (v1 - v0);
  return v1 > v0 ? min_value(y, v1) : max_value(y, v1);
}

// The end values of h on a piece as the closed forms use them:
// A = min(|hl|, |hr|), B = max(|hl|, |hr|), and whether h changes sign
// strictly inside the piece (both ends non-zero, opposite signs; a product
// hl * hr < 0 would underflow to 0 for tiny values).
template <typename T>
struct PlfEnds {
  T a;
  T b;
  bool opposite;
};
template <typename T>
MPCF_HD PlfEnds<T> plf_ends(T hl, T hr) {
  const T x = abs_value(hl);
  const T y = abs_value(hr);
  PlfEnds<T> e;
  e.a = min_value(x, y);
  e.b = max_value(x, y);
  e.opposite = (hl < T(0) && hr > T(0)) || (hl > T(0) && hr < T(0));
  return e;
}

// The mean of |h| over a piece: (A + B) / 2 without a sign change, else
// (A^2 + B^2) / (2 (A + B)), written as ((B - A) + 2 A (A / (A + B))) / 2:
// two non-negative terms, so no cancellation, and no square that could
// overflow or underflow. Beyond half the largest value both ends are halved
// first (exact there) so A + B cannot overflow; 0.5 / c undoes it exactly.
// The result never exceeds B; B = inf (an overflowed difference) gives inf.
template <typename T>
MPCF_HD T plf_mean_abs(const PlfEnds<T>& e) {
  const T inf = std::numeric_limits<T>::infinity();
  const T c = e.b > std::numeric_limits<T>::max() / T(2) ? T(0.5) : T(1);
  const T a = e.a * c;
  const T b = e.b * c;
  const T s = a + b;
  const T m = e.opposite ? (b - a) + T(2) * a * (a / s) : s;
  return e.b == inf ? inf : m * (T(0.5) / c);
}

// The mean of h^2 over a piece over B^2: (1 + sigma rho + rho^2) / 3 with
// rho = A / B, sigma = -1 across a sign change. At least 3/4 of the larger
// of its terms, so the subtraction does not cancel; 1 for a constant piece.
template <typename T>
MPCF_HD T plf_mean_square_factor(const PlfEnds<T>& e) {
  const bool finite = e.b > T(0) && e.b < std::numeric_limits<T>::infinity();
  const T rho = e.a / (finite ? e.b : T(1));
  const T mid = e.opposite ? -rho : rho;
  return finite ? (T(1) + mid + rho * rho) / T(3) : T(1);
}

// The mean of |h|^p over a piece over B^p, G in [1 / (2 (p + 1)), 1], with
// p1 = p + 1 and rho = A / B:
//   same sign:     G = (1 - rho^(p+1)) / ((p + 1) (1 - rho)), G = 1 at rho = 1;
//   opposite signs G = (1 + rho^(p+1)) / ((p + 1) (1 + rho)).
// Near rho = 1 the first numerator cancels; with d = 1 - rho = (B - A) / B
// (B - A exact when A >= B / 2, so d is then correctly rounded),
// 1 - rho^(p+1) = -expm1((p + 1) log1p(-d)), accurate for every d in
// [0, 1] (d = 1: log1p(-1) = -inf, expm1(-inf) = -1). The opposite-sign form
// has no cancellation. Errors in G reach the distance divided by p (it is
// the p-th root of a sum), so pow's relative error (p + 1) eps / 2 in
// rho^(p+1) is harmless. B = 0 or inf gives 1 (the caller drops B = 0;
// B = inf makes the distance +inf whatever G is).
template <typename T>
MPCF_HD T plf_power_mean_factor(const PlfEnds<T>& e, T p1) {
  const bool finite = e.b > T(0) && e.b < std::numeric_limits<T>::infinity();
  const T b = finite ? e.b : T(1);
  const T a = finite ? e.a : T(1);
  if (e.opposite) {
    const T rho = a / b;
    return (T(1) + power(rho, p1)) / (p1 * (T(1) + rho));
  }
  const T d = (b - a) / b;
  if (d == T(0)) return T(1);
  return -expm1_value(p1 * log1p_value(-d)) / (p1 * d);
}

// x^n, n >= 1, by binary powering: the same products in the same order on
// every device and in every SIMD lane (relative error below 2 log2(n) eps).
template <typename T>
MPCF_HD T power_int(T x, int n) {
  T result = T(1);
  for (;;) {
    if (n & 1) result = result * x;
    n >>= 1;
    if (n == 0) return result;
    x = x * x;
  }
}

// plf_power_mean_factor for an integer p = n (3 <= n <= 32) by products
// alone, rho = A / B:
//   same sign:     G = (1 + rho + ... + rho^n) / (n + 1), Horner's rule on
//                  terms of one sign (no cancellation, relative error below
//                  2n eps, which the distance divides by p), G = 1 at rho = 1;
//   opposite signs G = (1 + rho^(n+1)) / ((n + 1) (1 + rho)).
// B = 0 or inf gives rho = 1, as plf_power_mean_factor takes it.
template <typename T>
MPCF_HD T plf_power_mean_factor_int(const PlfEnds<T>& e, int n, T p1) {
  const bool finite = e.b > T(0) && e.b < std::numeric_limits<T>::infinity();
  const T rho = finite ? e.a / e.b : T(1);
  if (e.opposite) return (T(1) + power_int(rho, n + 1)) / (p1 * (T(1) + rho));
  T h = T(1);
  for (int k = 0; k < n; ++k) h = h * rho + T(1);
  return h / p1;
}

}  // namespace detail

// Integral of |f - g|, accumulated in T as the PCF L1 distance: each piece
// adds w * mean|h| (w * (A + B) / 2 is rounded twice; across a sign change
// a few roundings more, all of terms without cancellation). An infinite
// width gives +inf whenever B > 0, even if the mean underflowed to 0.
template <typename T>
struct PlfOperationL1Dist {
  MPCF_HD T init() const { return T(0); }
  MPCF_HD T piece(T acc, T w, T fl, T fr, T gl, T gr) const {
    const detail::PlfEnds<T> e = detail::plf_ends(fl - gl, fr - gr);
    const T inf = std::numeric_limits<T>::infinity();
    const T term = w == inf ? inf : w * detail::plf_mean_abs(e);
    return (w > T(0) && e.b != T(0)) ? acc + term : acc;
  }
  MPCF_HD T finalize(T acc) const { return acc; }
};

// (Integral of (f - g)^2)^(1/2) in the scaled power sum of operations.hpp
// (ScaledPowerSum): a piece is a rectangle of width w * G2 (G2 <= 1, so no
// overflow) at height B, the largest |h| at its ends, so it adds
// w G2 (B / scale)^2 = integral of (h / scale)^2 exactly as the closed form.
template <typename T>
struct PlfOperationL2Dist {
  MPCF_HD ScaledPowerSum<T> init() const { return {T(0), T(0)}; }
  MPCF_HD ScaledPowerSum<T> piece(ScaledPowerSum<T> acc, T w, T fl, T fr, T gl, T gr) const {
    const detail::PlfEnds<T> e = detail::plf_ends(fl - gl, fr - gr);
    const T wg = w * detail::plf_mean_square_factor(e);
    return detail::scaled_fold(acc, wg, e.b, [](T r) { return r * r; });
  }
  MPCF_HD T finalize(ScaledPowerSum<T> acc) const {
    return detail::scaled_finalize(acc, [](T s) { return detail::square_root(s); });
  }
};

// (Integral of |f - g|^p)^(1/p), 1 < p < inf, p != 2, in the scaled power
// sum: a piece adds w G (B / scale)^p with G = plf_power_mean_factor. As in
// OperationLpDist, p and 1/p are rounded to T from double, and p + 1 is
// rounded once from the exact p_T + 1.
//
// An integer p from 3 to 32 takes products instead of pow, expm1 and log1p
// (n = p; zero otherwise): G by plf_power_mean_factor_int and the ratio's
// power by power_int (a few times faster, as accurate).
//
// For p >= 2^40 (float32) or 2^70 (float64), G is taken as 1: G lies in
// [1 / (2 (p + 1)), 1] and enters the distance as a factor G^(1/p) within
// ln(2 (p + 1)) / p of 1, below a hundredth of an ulp there; it also keeps
// w G from underflowing as G -> 0 and covers p_T = +inf (float32 p beyond
// FLT_MAX), where the distance is the largest |f - g| (or +inf over an
// unbounded support), as the PCF Lp gives. Below the threshold G >= 2^-71,
// so w G underflows only for widths below about 2^-900 (float64) or 2^-85
// (float32).
template <typename T>
struct PlfOperationLpDist {
  T p;
  T invP;
  T p1;
  bool flat;
  int n;
  explicit PlfOperationLpDist(double p_)
      : p(static_cast<T>(p_)),
        invP(static_cast<T>(1.0 / p_)),
        p1(static_cast<T>(static_cast<double>(static_cast<T>(p_)) + 1.0)),
        flat(p_ >= (sizeof(T) == 4 ? 0x1p40 : 0x1p70)),
        n(p_ >= 3 && p_ <= 32 && p_ == static_cast<double>(static_cast<int>(p_)) ? static_cast<int>(p_)
                                                                               : 0) {}
  MPCF_HD ScaledPowerSum<T> init() const { return {T(0), T(0)}; }
  // G of a piece (1 when flat).
  MPCF_HD T mean_factor(const detail::PlfEnds<T>& e) const {
    if (flat) return T(1);
    return n ? detail::plf_power_mean_factor_int(e, n, p1) : detail::plf_power_mean_factor(e, p1);
  }
  // r^p of a ratio r in [0, 1].
  MPCF_HD T ratio_power(T r) const { return n ? detail::power_int(r, n) : detail::power(r, p); }
  MPCF_HD ScaledPowerSum<T> piece(ScaledPowerSum<T> acc, T w, T fl, T fr, T gl, T gr) const {
    const detail::PlfEnds<T> e = detail::plf_ends(fl - gl, fr - gr);
    const PlfOperationLpDist op = *this;
    return detail::scaled_fold(acc, w * mean_factor(e), e.b, [op](T r) { return op.ratio_power(r); });
  }
  MPCF_HD T finalize(ScaledPowerSum<T> acc) const {
    const T ip = invP;
    return detail::scaled_finalize(acc, [ip](T s) { return detail::power(s, ip); });
  }
};

// Supremum of |f - g| over the window: the largest |h| at the two ends of
// the pieces of positive width (h is linear on a piece, so its extremes are
// at the ends; the one-sided values mean that a jump, e.g. at a function's
// first breakpoint, counts with the value it jumps to, and that a single
// point of zero width never counts).
template <typename T>
struct PlfOperationLinfDist {
  MPCF_HD T init() const { return T(0); }
  MPCF_HD T piece(T acc, T w, T fl, T fr, T gl, T gr) const {
    const T x = detail::max_value(detail::abs_value(fl - gl), detail::abs_value(fr - gr));
    return (w > T(0) && x > acc) ? x : acc;
  }
  MPCF_HD T finalize(T acc) const { return acc; }
};

// Integral of f * g. A piece adds w S with
// S = 2 (fl gl + fr gr) + (fl gr + fr gl), accumulated in double; the sum
// is divided by 6 once, at the end (so dyadic data with few bits is exact
// up to that one division). For float32 data every product of two values is
// exact in double and no sum can overflow (|w S| <= 6 FLT_MAX^3), so finite
// input never gives NaN except inf - inf between a piece wider than FLT_MAX
// and an unbounded one. For float64 data the sum overflows to +-inf when
// |w S| or a partial sum exceeds DBL_MAX (values beyond about 1e153 on a
// piece of width 1), and products below 2^-1075 round to 0, as for PCFs. A
// piece with S = 0 adds exactly 0 whatever its width (S = 6 f g on the
// constant tails, so a zero product never meets an infinite width).
template <typename T>
struct PlfOperationL2InnerProduct {
  using Wide = double;
  MPCF_HD Wide init() const { return Wide(0); }
  MPCF_HD Wide piece(Wide acc, T w, T fl, T fr, T gl, T gr) const {
    const Wide fL = fl, fR = fr, gL = gl, gR = gr;
    const Wide s = Wide(2) * (fL * gL + fR * gR) + (fL * gR + fR * gL);
    return (w > T(0) && s != Wide(0)) ? acc + static_cast<Wide>(w) * s : acc;
  }
  MPCF_HD T finalize(Wide acc) const { return static_cast<T>(acc / Wide(6)); }
};

// OperationSpec (operations.hpp) to the PLF functor: p = 1 -> L1,
// p = 2 -> L2, p = inf -> Linf, other p -> Lp, kernel -> inner product.
template <typename T, typename Fn>
decltype(auto) dispatch_plf_operation(const OperationSpec& spec, Fn&& fn) {
  switch (spec.kind) {
    case OpKind::L2:
      return fn(PlfOperationL2Dist<T>{});
    case OpKind::Lp:
      return fn(PlfOperationLpDist<T>(spec.p));
    case OpKind::Linf:
      return fn(PlfOperationLinfDist<T>{});
    case OpKind::L2InnerProduct:
      return fn(PlfOperationL2InnerProduct<T>{});
    case OpKind::L1:
    default:
      return fn(PlfOperationL1Dist<T>{});
  }
}

}  // namespace mpcf
