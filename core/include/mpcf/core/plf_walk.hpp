// The walk of a pair of piecewise linear functions (DESIGN §10): merges the
// breakpoints of f and g in time order; between two consecutive merged
// times l < r both functions are linear, so the walk hands the operation
// (plf_operations.hpp) the piece's width and the one-sided end values
// f(l+), f(r-), g(l+), g(r-). Shared by the CPU executor and the CUDA
// kernels, like the PCF rectangle walk (walk.hpp) it mirrors.
//
// A PLF is m >= 1 breakpoints (t_k, v_k), finite, strictly increasing t:
// f = 0 left of t_0 (a jump to v_0 at t_0), the linear interpolation of
// v_k and v_{k+1} on [t_k, t_{k+1}], v_{m-1} right of t_{m-1}. So left of
// the first breakpoint of either function both are 0 and nothing
// contributes; between breakpoints a function's value at the other's
// breakpoint (or at a window end) is interpolated on its own segment by
// detail::plf_interpolate (exact at the segment's ends, monotone); right of
// both last breakpoints both are constant, the one piece that may be
// unbounded.
#pragma once

#include <cstdint>
#include <limits>

#include "mpcf/core/host_device.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/plf_operations.hpp"
#include "mpcf/core/point.hpp"
#include "mpcf/core/walk.hpp"

namespace mpcf {

namespace detail {

// The value at x of f on the piece where f has i breakpoints at or left of
// the piece's left end: 0 before f's first breakpoint (i = 0), its last
// value after its last one (i = n), else interpolated on [t_{i-1}, t_i].
template <typename T>
MPCF_HD T plf_segment_value(const SimplePoint<T, T>* f, std::uint32_t i, std::uint32_t n, T x) {
  if (i == 0) return T(0);
  if (i >= n) return f[n - 1].v;
  return plf_interpolate(f[i - 1].t, f[i - 1].v, f[i].t, f[i].v, x);
}

// Folds the piece [l, r] (end values fl, fr, gl, gr; f at segment i, g at
// segment j) into acc. Windowed: the piece is cut to [max(l, a), min(r, b)]
// and a cut end takes the functions' values there, interpolated on their
// own segments as at any breakpoint; a piece outside the window is skipped
// before any interpolation.
template <bool Windowed, typename T, typename Op>
MPCF_HD op_acc_t<Op> plf_fold_piece(op_acc_t<Op> acc, const Op& op, T l, T r, T fl, T fr, T gl,
                                    T gr, const SimplePoint<T, T>* f, std::uint32_t i,
                                    std::uint32_t nf, const SimplePoint<T, T>* g,
                                    std::uint32_t j, std::uint32_t ng, T a, T b) {
  if constexpr (!Windowed) {
    (void)f, (void)i, (void)nf, (void)g, (void)j, (void)ng, (void)a, (void)b;
    return op.piece(acc, r - l, fl, fr, gl, gr);
  } else {
    const T lo = max_value(l, a);
    const T hi = min_value(r, b);
    const T w = hi - lo;
    if (!(w > T(0))) return acc;
    if (lo > l) {
      fl = plf_segment_value(f, i, nf, lo);
      gl = plf_segment_value(g, j, ng, lo);
    }
    if (hi < r) {
      fr = plf_segment_value(f, i, nf, hi);
      gr = plf_segment_value(g, j, ng, hi);
    }
    return op.piece(acc, w, fl, fr, gl, gr);
  }
}

}  // namespace detail

// The walk of one PLF pair as a resumable state (the interface of PairWalk:
// init, both_active, step, finish), so the CPU executor can step several
// pairs in lockstep. t is the left end of the next piece, fv = f(t+) and
// gv = g(t+); i and j count the breakpoints of f and g at or left of t.
template <bool Windowed, typename T, typename Op>
struct PlfPairWalk {
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

  // One piece [t, next merged breakpoint] while both_active(). At its own
  // breakpoint a function's left limit is the stored value (0 at its first
  // breakpoint: the jump), its right limit the stored value; elsewhere both
  // are the interpolated value. (The first step is the zero-width piece
  // [t_0, t_0], which no operation counts.)
  MPCF_HD void step(T a, T b, const Op& op) {
    const T tf = f[i].t;
    const T tg = g[j].t;
    const T fNext = f[i].v;
    const T gNext = g[j].v;
    const T tn = detail::min_value(tf, tg);
    const bool af = tf <= tn;
    const bool ag = tg <= tn;
    const T fr = af ? (i == 0 ? T(0) : fNext) : detail::plf_segment_value(f, i, nf, tn);
    const T gr = ag ? (j == 0 ? T(0) : gNext) : detail::plf_segment_value(g, j, ng, tn);
    acc = detail::plf_fold_piece<Windowed>(acc, op, t, tn, fv, fr, gv, gr, f, i, nf, g, j, ng, a, b);
    fv = af ? fNext : fr;
    gv = ag ? gNext : gr;
    i += af ? 1u : 0u;
    j += ag ? 1u : 0u;
    t = tn;
  }

  // Runs the rest of the walk and returns op.finalize(accumulated value).
  MPCF_HD T finish(T a, T b, const Op& op) { return op.finalize(accumulate(a, b, op)); }

  // After init: accumulate into `previous` (an earlier component's sum;
  // DESIGN §11).
  MPCF_HD void continue_from(op_acc_t<Op> previous) { acc = previous; }

  // Runs the rest of the walk and returns the accumulated value, not
  // finalized (the components of an object share one accumulator).
  MPCF_HD op_acc_t<Op> accumulate(T a, T b, const Op& op) {
    while (both_active()) step(a, b, op);
    // Only f has breakpoints left; g keeps its last value.
    while (i < nf) {
      const T tn = f[i].t;
      const T fr = i == 0 ? T(0) : f[i].v;
      acc = detail::plf_fold_piece<Windowed>(acc, op, t, tn, fv, fr, gv, gv, f, i, nf, g, j, ng, a, b);
      fv = f[i].v;
      ++i;
      t = tn;
    }
    // Only g has breakpoints left.
    while (j < ng) {
      const T tn = g[j].t;
      const T gr = j == 0 ? T(0) : g[j].v;
      acc = detail::plf_fold_piece<Windowed>(acc, op, t, tn, fv, fv, gv, gr, f, i, nf, g, j, ng, a, b);
      gv = g[j].v;
      ++j;
      t = tn;
    }
    // The unbounded last piece [t, +inf), both constant, clipped to the
    // window (always: it is the one piece an infinite window end reaches).
    const T inf = std::numeric_limits<T>::infinity();
    acc = detail::plf_fold_piece<true>(acc, op, t, inf, fv, fv, gv, gv, f, i, nf, g, j, ng, a, b);
    return acc;
  }
};

// Walks f[0..nf) and g[0..ng) and returns op.finalize(accumulated value).
// Windowed = false skips the clipping (the window must then be the whole line).
template <bool Windowed, typename T, typename Op>
MPCF_HD T integrate_plf_pair(const SimplePoint<T, T>* f, std::uint32_t nf,
                             const SimplePoint<T, T>* g, std::uint32_t ng, T a, T b,
                             const Op& op) {
  PlfPairWalk<Windowed, T, Op> w;
  w.init(f, nf, g, ng, op);
  return w.finish(a, b, op);
}

// K pairs (f, g[k]) walked in lockstep while all of them have both functions
// active, then finished one by one; bitwise the same results as
// integrate_plf_pair.
template <int K, bool Windowed, typename T, typename Op>
inline void integrate_plf_pairs_lockstep(const SimplePoint<T, T>* f, std::uint32_t nf,
                                         const SimplePoint<T, T>* const* g,
                                         const std::uint32_t* ng, T a, T b, const Op& op, T* out) {
  PlfPairWalk<Windowed, T, Op> w[K];
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
MPCF_HD T integrate_plf_pair(const SimplePoint<T, T>* f, std::uint32_t nf,
                             const SimplePoint<T, T>* g, std::uint32_t ng, const Window<T>& w,
                             const Op& op) {
  if (w.is_whole_line()) {
    return integrate_plf_pair<false>(f, nf, g, ng, w.a, w.b, op);
  }
  return integrate_plf_pair<true>(f, nf, g, ng, w.a, w.b, op);
}

}  // namespace mpcf
