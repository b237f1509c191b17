// Operation functors for the rectangle walk. Each one turns the two values of
// a rectangle into an integrand and folds width * integrand into an
// accumulator. The rule of DESIGN §1 lives in `fold`: a rectangle whose
// integrand is exactly zero, or whose width is not positive, contributes
// exactly zero, so an unbounded zero rectangle never produces NaN and an
// unbounded non-zero one produces +-inf.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "mpcf/core/host_device.hpp"

namespace mpcf {

namespace detail {
// fabs, not a comparison: a branch on the sign of f - g would mispredict
// half the time on the host.
template <typename T>
MPCF_HD T abs_value(T x) {
#if defined(__CUDA_ARCH__)
  return ::fabs(x);
#else
  return std::fabs(x);
#endif
}
template <typename T>
MPCF_HD T power(T x, T p) {
#if defined(__CUDA_ARCH__)
  return ::pow(x, p);
#else
  return std::pow(x, p);
#endif
}
template <typename T>
MPCF_HD T square_root(T x) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(x);
#else
  return std::sqrt(x);
#endif
}
template <typename T>
MPCF_HD bool is_inf(T x) {
  return x == std::numeric_limits<T>::infinity() || x == -std::numeric_limits<T>::infinity();
}
// Adds width * x (in the accumulator's type A) unless x is zero or the width
// is not positive. The two tests are combined with & (not &&) so the host
// compiler emits no branch.
template <typename A, typename W, typename X>
MPCF_HD A fold_sum(A acc, W width, X x) {
  const bool keep = (width > W(0)) & (x != X(0));
  const A sum = acc + static_cast<A>(width) * static_cast<A>(x);
  return keep ? sum : acc;
}
}  // namespace detail

// The accumulator type of an operation (what init() returns).
template <typename Op>
using op_acc_t = decltype(std::declval<const Op&>().init());

// Integral of |f - g|.
template <typename T>
struct OperationL1Dist {
  MPCF_HD T init() const { return T(0); }
  MPCF_HD T integrand(T fv, T gv) const { return detail::abs_value(fv - gv); }
  MPCF_HD T fold(T acc, T width, T x) const { return detail::fold_sum(acc, width, x); }
  MPCF_HD T finalize(T acc) const { return acc; }
};

// The accumulator of the Lp distances: the value is
// scale * sum^(1/p), sum = sum over rectangles of width * (|f - g| / scale)^p,
// scale = the largest |f - g| met so far. Every power is of a ratio <= 1, so
// nothing overflows where the result is representable, and the largest
// rectangle never underflows (it contributes width * 1); whenever a larger
// difference arrives the sum is rescaled. An unbounded rectangle of non-zero
// difference makes sum = +inf, which stays +inf (never inf * 0 = NaN).
template <typename T>
struct ScaledPowerSum {
  T scale;
  T sum;
};

namespace detail {
// One rectangle of width w > 0 and difference x > 0 into a scaled power sum;
// q = (smaller / larger)^p of x and the current scale.
template <typename T>
MPCF_HD ScaledPowerSum<T> scaled_add(ScaledPowerSum<T> acc, T w, T x, T q, bool up) {
  const T inf = std::numeric_limits<T>::infinity();
  // inf * q stays inf even when q underflowed to 0.
  const T sumScaled = acc.sum == inf ? inf : acc.sum * q;
  const T term = w == inf ? inf : w * q;
  ScaledPowerSum<T> n;
  n.sum = up ? sumScaled + w : acc.sum + term;
  n.scale = up ? x : acc.scale;
  return n;
}
template <typename T, typename Pow>
MPCF_HD ScaledPowerSum<T> scaled_fold(ScaledPowerSum<T> acc, T width, T x, Pow pow_of_ratio) {
  const bool keep = (width > T(0)) & (x != T(0));
  const bool up = x > acc.scale;
  // Computed on every path (no branch), used only when keep: 0/0 is
  // possible when !keep and then discarded. x equal to the scale gives
  // ratio 1, also when both are +inf (an overflowed |f - g|: inf / inf
  // would be NaN; the sum then ends as +inf, as mpcf.h states).
  const T r = x == acc.scale ? T(1) : (up ? acc.scale / x : x / acc.scale);
  const ScaledPowerSum<T> n = scaled_add(acc, width, x, pow_of_ratio(r), up);
  return keep ? n : acc;
}
template <typename T, typename Root>
MPCF_HD T scaled_finalize(ScaledPowerSum<T> acc, Root root_of_sum) {
  if (acc.scale == T(0)) return T(0);
  if (acc.sum == std::numeric_limits<T>::infinity()) return acc.sum;
  return acc.scale * root_of_sum(acc.sum);
}
}  // namespace detail

// (Integral of |f - g|^p)^(1/p), 1 < p < inf, p != 2, as a scaled power sum
// (exact wherever the result is representable; see ScaledPowerSum). p and
// 1/p are rounded to T from double: in float32 a p beyond FLT_MAX becomes
// +inf, for which pow(r, p) is 1 at r = 1 and 0 below, and the result is the
// largest difference (or +inf over an unbounded support), as for any such p.
template <typename T>
struct OperationLpDist {
  T p;
  T invP;
  explicit OperationLpDist(double p_) : p(static_cast<T>(p_)), invP(static_cast<T>(1.0 / p_)) {}
  MPCF_HD ScaledPowerSum<T> init() const { return {T(0), T(0)}; }
  MPCF_HD T integrand(T fv, T gv) const { return detail::abs_value(fv - gv); }
  MPCF_HD ScaledPowerSum<T> fold(ScaledPowerSum<T> acc, T width, T x) const {
    const T pp = p;
    return detail::scaled_fold(acc, width, x, [pp](T r) { return detail::power(r, pp); });
  }
  MPCF_HD T finalize(ScaledPowerSum<T> acc) const {
    const T ip = invP;
    return detail::scaled_finalize(acc, [ip](T s) { return detail::power(s, ip); });
  }
};

// p = 2: the same scaled sum with r * r and a square root (no pow).
template <typename T>
struct OperationL2Dist {
  MPCF_HD ScaledPowerSum<T> init() const { return {T(0), T(0)}; }
  MPCF_HD T integrand(T fv, T gv) const { return detail::abs_value(fv - gv); }
  MPCF_HD ScaledPowerSum<T> fold(ScaledPowerSum<T> acc, T width, T x) const {
    return detail::scaled_fold(acc, width, x, [](T r) { return r * r; });
  }
  MPCF_HD T finalize(ScaledPowerSum<T> acc) const {
    return detail::scaled_finalize(acc, [](T s) { return detail::square_root(s); });
  }
};

// Supremum of |f - g| over the rectangles of positive width in the window.
template <typename T>
struct OperationLinfDist {
  MPCF_HD T init() const { return T(0); }
  MPCF_HD T integrand(T fv, T gv) const { return detail::abs_value(fv - gv); }
  MPCF_HD T fold(T acc, T width, T x) const {
    return (width > T(0) && x > acc) ? x : acc;
  }
  MPCF_HD T finalize(T acc) const { return acc; }
};

// Integral of f * g, accumulated in double: for float32 data each product
// f * g and each width * f * g is exact or correctly rounded in double and
// no intermediate sum can overflow (|t|, |v| <= FLT_MAX), so a finite float32
// input never gives NaN, and the result is rounded to float32 once. For
// float64 data a piece whose |width * f * g| exceeds DBL_MAX overflows to
// +-inf (and two such pieces of opposite signs give NaN).
template <typename T>
struct OperationL2InnerProduct {
  using Wide = double;
  MPCF_HD Wide init() const { return Wide(0); }
  MPCF_HD Wide integrand(T fv, T gv) const { return static_cast<Wide>(fv) * static_cast<Wide>(gv); }
  MPCF_HD Wide fold(Wide acc, T width, Wide x) const { return detail::fold_sum(acc, width, x); }
  MPCF_HD T finalize(Wide acc) const { return static_cast<T>(acc); }
};

// Operations whose accumulator is the value (finalize is the identity) and
// never decreases along the walk: every fold adds a term >= 0 (L1: width *
// |f - g|, rounded, so never below the sum before it) or takes a maximum
// (L-infinity). A partial value above a bound then means the value is above
// it too, so a walk may stop there when the consumer needs no exact value
// above the bound (BlockConsumer::pair_bounds; the GPU's PairBounds). Not
// the Lp and L2 distances: their scaled sums are rescaled with rounding, so
// a partial value may round above the final one.
template <typename Op>
struct MonotoneFold : std::false_type {};
template <typename T>
struct MonotoneFold<OperationL1Dist<T>> : std::true_type {};
template <typename T>
struct MonotoneFold<OperationLinfDist<T>> : std::true_type {};

// The bound of a pair from its row's and its column's (a kNN's k-th
// entries; pass -inf for a column without one): the larger, as a pair must
// pass both to enter neither list; +inf (no bound) when either is NaN (an
// empty entry). The CPU executor and the GPU kernels both take it from here.
template <typename T>
MPCF_HD T pair_bound_of(T row, T col) {
  if (row != row || col != col) return std::numeric_limits<T>::infinity();
  return row > col ? row : col;
}

}  // namespace mpcf

namespace mpcf {

// Which operation a computation runs, as chosen at the API (runtime value);
// dispatch_operation turns it into the functor type for the templates.
enum class OpKind { L1, L2, Lp, Linf, L2InnerProduct };

struct OperationSpec {
  OpKind kind = OpKind::L1;
  double p = 1.0;
  bool is_kernel() const { return kind == OpKind::L2InnerProduct; }

  // p = 1 -> L1, p = 2 -> L2, p = inf -> Linf, else Lp.
  static OperationSpec distance(double p) {
    if (p == 1.0) return {OpKind::L1, 1.0};
    if (p == 2.0) return {OpKind::L2, 2.0};
    if (p == std::numeric_limits<double>::infinity()) return {OpKind::Linf, p};
    return {OpKind::Lp, p};
  }
  static OperationSpec l2_kernel() { return {OpKind::L2InnerProduct, 2.0}; }
};

template <typename T, typename Fn>
decltype(auto) dispatch_operation(const OperationSpec& spec, Fn&& fn) {
  switch (spec.kind) {
    case OpKind::L2:
      return fn(OperationL2Dist<T>{});
    case OpKind::Lp:
      return fn(OperationLpDist<T>(spec.p));
    case OpKind::Linf:
      return fn(OperationLinfDist<T>{});
    case OpKind::L2InnerProduct:
      return fn(OperationL2InnerProduct<T>{});
    case OpKind::L1:
    default:
      return fn(OperationL1Dist<T>{});
  }
}

}  // namespace mpcf
