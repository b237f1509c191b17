// The rectangle walk: merges the breakpoints of two PCFs in time order and
// folds every rectangle [l, r) x (f value, g value) into an operation's
// accumulator. Shared by the CPU executor and the CUDA kernels.
//
// Both functions must have at least one breakpoint. Left of the first
// breakpoint of either function both values are 0, so that region never
// contributes; right of the last breakpoint the last values hold for ever,
// which is the one rectangle that may be unbounded.
#pragma once

#include <cstdint>
#include <limits>

#include "mpcf/core/host_device.hpp"
#include "mpcf/core/point.hpp"

namespace mpcf {

// Integration window [a, b). The whole line is a = -inf, b = +inf.
template <typename T>
struct Window {
  T a;
  T b;
  static Window whole_line() {
    return {-std::numeric_limits<T>::infinity(), std::numeric_limits<T>::infinity()};
  }
};

namespace detail {

template <typename T>
MPCF_HD T min_value(T x, T y) {
  return y < x ? y : x;
}
template <typename T>
MPCF_HD T max_value(T x, T y) {
  return x < y ? y : x;
}

// Width of [l, r) clipped to the window (may be negative: no contribution).
template <bool Windowed, typename T>
MPCF_HD T clipped_width(T l, T r, T a, T b) {
  if constexpr (Windowed) {
    return min_value(r, b) - max_value(l, a);
  } else {
    (void)a;
    (void)b;
    return r - l;
  }
}

}  // namespace detail

// Walks f[0..nf) and g[0..ng) and returns op.finalize(accumulated value).
// Windowed = false skips the clipping (the window must then be the whole line).
template <bool Windowed, typename T, typename Op>
MPCF_HD T integrate_pair(const SimplePoint<T, T>* f, std::uint32_t nf,
                         const SimplePoint<T, T>* g, std::uint32_t ng, T a, T b,
                         const Op& op) {
  T acc = op.init();
  T fv = T(0);
  T gv = T(0);
  T t = detail::min_value(f[0].t, g[0].t);
  std::uint32_t i = 0;
  std::uint32_t j = 0;

  // Both functions still have breakpoints ahead.
  while (i < nf && j < ng) {
    const T tf = f[i].t;
    const T tg = g[j].t;
    const T tn = detail::min_value(tf, tg);
    acc = op.fold(acc, detail::clipped_width<Windowed>(t, tn, a, b), op.integrand(fv, gv));
    const bool af = tf <= tn;
    const bool ag = tg <= tn;
    fv = af ? f[i].v : fv;
    gv = ag ? g[j].v : gv;
    i += af ? 1u : 0u;
    j += ag ? 1u : 0u;
    t = tn;
  }
  // Only f has breakpoints left; g keeps its last value.
  while (i < nf) {
    const T tn = f[i].t;
    acc = op.fold(acc, detail::clipped_width<Windowed>(t, tn, a, b), op.integrand(fv, gv));
    fv = f[i].v;
    ++i;
    t = tn;
  }
  // Only g has breakpoints left.
  while (j < ng) {
    const T tn = g[j].t;
    acc = op.fold(acc, detail::clipped_width<Windowed>(t, tn, a, b), op.integrand(fv, gv));
    gv = g[j].v;
    ++j;
    t = tn;
  }
  // The unbounded last rectangle [t, +inf), clipped to the window.
  const T inf = std::numeric_limits<T>::infinity();
  acc = op.fold(acc, detail::clipped_width<true>(t, inf, a, b), op.integrand(fv, gv));
  return op.finalize(acc);
}

// Dispatches on whether the window is the whole line.
template <typename T, typename Op>
MPCF_HD T integrate_pair(const SimplePoint<T, T>* f, std::uint32_t nf,
                         const SimplePoint<T, T>* g, std::uint32_t ng,
                         const Window<T>& w, const Op& op) {
  const T inf = std::numeric_limits<T>::infinity();
  if (w.a == -inf && w.b == inf) {
    return integrate_pair<false>(f, nf, g, ng, w.a, w.b, op);
  }
  return integrate_pair<true>(f, nf, g, ng, w.a, w.b, op);
}

}  // namespace mpcf
