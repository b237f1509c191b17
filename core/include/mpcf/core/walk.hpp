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
#include <cstring>
#include <limits>
#include <type_traits>

#include "mpcf/core/host_device.hpp"
#include "mpcf/core/operations.hpp"
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
  // True when no clipping is needed (the walk's Windowed = false path).
  MPCF_HD bool is_whole_line() const {
    return a == -std::numeric_limits<T>::infinity() && b == std::numeric_limits<T>::infinity();
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

// c ? a : b without a branch. On the host, compilers tend to turn a
// conditional floating-point load into a branch, which the merge's
// unpredictable comparisons make expensive; an integer mask select stays
// branch-free. (Bitwise exact: it only moves bits.)
template <typename T>
MPCF_HD T select(bool c, T a, T b) {
#if defined(__CUDA_ARCH__)
  return c ? a : b;
#else
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  U ua, ub;
  std::memcpy(&ua, &a, sizeof(T));
  std::memcpy(&ub, &b, sizeof(T));
  const U mask = U(0) - static_cast<U>(c);
  const U r = (ua & mask) | (ub & ~mask);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
#endif
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

// The walk of one pair as a resumable state, so the CPU executor can step
// several independent pairs in lockstep (instruction-level parallelism: the
// merge of one pair is a chain of dependent loads and compares).
template <bool Windowed, typename T, typename Op>
struct PairWalk {
  const SimplePoint<T, T>* f;
  const SimplePoint<T, T>* g;
  std::uint32_t nf, ng, i, j;
  T t, fv, gv;
  op_acc_t<Op> acc;

  MPCF_HD void init(const SimplePoint<T, T>* f_, std::uint32_t nf_, const SimplePoint<T, T>* g_,
                    std::uint32_t ng_, const Op& op) {
    f = f_;
    g = g_;
    nf = nf_;
    ng = ng_;
    i = 0;
    j = 0;
    t = detail::min_value(f[0].t, g[0].t);
    fv = T(0);
    gv = T(0);
    acc = op.init();
  }

  // Both functions still have breakpoints ahead.
  MPCF_HD bool both_active() const { return i < nf && j < ng; }

  // One rectangle while both_active().
  MPCF_HD void step(T a, T b, const Op& op) {
    const T tf = f[i].t;
    const T tg = g[j].t;
    const T fNext = f[i].v;
    const T gNext = g[j].v;
    const T tn = detail::min_value(tf, tg);
    acc = op.fold(acc, detail::clipped_width<Windowed>(t, tn, a, b), op.integrand(fv, gv));
    const bool af = tf <= tn;
    const bool ag = tg <= tn;
    fv = detail::select(af, fNext, fv);
    gv = detail::select(ag, gNext, gv);
    i += af ? 1u : 0u;
    j += ag ? 1u : 0u;
    t = tn;
  }

  // Runs the rest of the walk and returns op.finalize(accumulated value).
  MPCF_HD T finish(T a, T b, const Op& op) { return op.finalize(accumulate(a, b, op)); }

  // Runs the rest of the walk and returns the accumulated value, not
  // finalized: the components of an object (DESIGN §11) continue one
  // accumulator across their walks (start each with continue_from).
  MPCF_HD op_acc_t<Op> accumulate(T a, T b, const Op& op) {
    while (both_active()) step(a, b, op);
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
    return acc;
  }

  // After init: accumulate into `previous` (an earlier component's sum).
  MPCF_HD void continue_from(op_acc_t<Op> previous) { acc = previous; }
};

// Walks f[0..nf) and g[0..ng) and returns op.finalize(accumulated value).
// Windowed = false skips the clipping (the window must then be the whole line).
template <bool Windowed, typename T, typename Op>
MPCF_HD T integrate_pair(const SimplePoint<T, T>* f, std::uint32_t nf,
                         const SimplePoint<T, T>* g, std::uint32_t ng, T a, T b,
                         const Op& op) {
  PairWalk<Windowed, T, Op> w;
  w.init(f, nf, g, ng, op);
  return w.finish(a, b, op);
}

// K pairs (f, g[k]) walked in lockstep while all of them have both functions
// active, then finished one by one. Same arithmetic per pair as
// integrate_pair, so the results are bitwise identical to it.
template <int K, bool Windowed, typename T, typename Op>
inline void integrate_pairs_lockstep(const SimplePoint<T, T>* f, std::uint32_t nf,
                                     const SimplePoint<T, T>* const* g, const std::uint32_t* ng,
                                     T a, T b, const Op& op, T* out) {
  PairWalk<Windowed, T, Op> w[K];
  for (int k = 0; k < K; ++k) w[k].init(f, nf, g[k], ng[k], op);
  for (;;) {
    bool all = true;
    for (int k = 0; k < K; ++k) all &= w[k].both_active();
    if (!all) break;
    for (int k = 0; k < K; ++k) w[k].step(a, b, op);
  }
  for (int k = 0; k < K; ++k) out[k] = w[k].finish(a, b, op);
}

// Dispatches on whether the window is the whole line.
template <typename T, typename Op>
MPCF_HD T integrate_pair(const SimplePoint<T, T>* f, std::uint32_t nf,
                         const SimplePoint<T, T>* g, std::uint32_t ng,
                         const Window<T>& w, const Op& op) {
  if (w.is_whole_line()) {
    return integrate_pair<false>(f, nf, g, ng, w.a, w.b, op);
  }
  return integrate_pair<true>(f, nf, g, ng, w.a, w.b, op);
}

}  // namespace mpcf
