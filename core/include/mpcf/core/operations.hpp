// Operation functors for the rectangle walk. Each one turns the two values of
// a rectangle into an integrand and folds width * integrand into an
// accumulator. The rule of DESIGN §1 lives in `fold`: a rectangle whose
// integrand is exactly zero, or whose width is not positive, contributes
// exactly zero, so an unbounded zero rectangle never produces NaN and an
// unbounded non-zero one produces +-inf.
#pragma once

#include <cmath>
#include <limits>

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
// Adds width * x unless x is zero or the width is not positive. The two
// tests are combined with & (not &&) so the host compiler emits no branch.
template <typename T>
MPCF_HD T fold_sum(T acc, T width, T x) {
  const bool keep = (width > T(0)) & (x != T(0));
  const T sum = acc + width * x;
  return keep ? sum : acc;
}
}  // namespace detail

// Integral of |f - g|.
template <typename T>
struct OperationL1Dist {
  MPCF_HD T init() const { return T(0); }
  MPCF_HD T integrand(T fv, T gv) const { return detail::abs_value(fv - gv); }
  MPCF_HD T fold(T acc, T width, T x) const { return detail::fold_sum(acc, width, x); }
  MPCF_HD T finalize(T acc) const { return acc; }
};

// (Integral of |f - g|^p)^(1/p), 1 < p < inf.
template <typename T>
struct OperationLpDist {
  T p;
  T invP;
  explicit OperationLpDist(T p_) : p(p_), invP(T(1) / p_) {}
  MPCF_HD T init() const { return T(0); }
  MPCF_HD T integrand(T fv, T gv) const {
    return detail::power(detail::abs_value(fv - gv), p);
  }
  MPCF_HD T fold(T acc, T width, T x) const { return detail::fold_sum(acc, width, x); }
  MPCF_HD T finalize(T acc) const { return detail::power(acc, invP); }
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

// Integral of f * g.
template <typename T>
struct OperationL2InnerProduct {
  MPCF_HD T init() const { return T(0); }
  MPCF_HD T integrand(T fv, T gv) const { return fv * gv; }
  MPCF_HD T fold(T acc, T width, T x) const { return detail::fold_sum(acc, width, x); }
  MPCF_HD T finalize(T acc) const { return acc; }
};

}  // namespace mpcf

namespace mpcf {

// Which operation a computation runs, as chosen at the API (runtime value);
// dispatch_operation turns it into the functor type for the templates.
enum class OpKind { L1, Lp, Linf, L2InnerProduct };

struct OperationSpec {
  OpKind kind = OpKind::L1;
  double p = 1.0;
  bool is_kernel() const { return kind == OpKind::L2InnerProduct; }

  // p = 1 -> L1, p = inf -> Linf, else Lp.
  static OperationSpec distance(double p) {
    if (p == 1.0) return {OpKind::L1, 1.0};
    if (p == std::numeric_limits<double>::infinity()) return {OpKind::Linf, p};
    return {OpKind::Lp, p};
  }
  static OperationSpec l2_kernel() { return {OpKind::L2InnerProduct, 2.0}; }
};

template <typename T, typename Fn>
decltype(auto) dispatch_operation(const OperationSpec& spec, Fn&& fn) {
  switch (spec.kind) {
    case OpKind::Lp:
      return fn(OperationLpDist<T>(static_cast<T>(spec.p)));
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
