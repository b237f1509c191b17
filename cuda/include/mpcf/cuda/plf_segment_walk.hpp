// The PLF walk of the GPU kernel (ObjectBlockOp): the pieces and closed
// forms of core's PlfPairWalk (plf_walk.hpp, DESIGN §10), rearranged for a
// GPU, where the profile of a thread per pair running PlfPairWalk showed it
// issue-bound at about 120 instructions per merge step, a third of the lanes
// idle from divergence: two interpolations per step (each an IEEE division
// and the branches of plf_interpolate's exact-end, monotone lerp), three
// loops for the phases of the merge.
//
//  * Each function keeps its current segment in registers (PlfCursor): its
//    left end t0, the value v0 there and its slope, computed once when the
//    walk enters the segment (one division per breakpoint consumed, not per
//    interpolation). Its value inside the segment is v0 + (x - t0) slope;
//    at the segment's right end the walk takes the stored value, so every
//    breakpoint's value is exact. A segment whose width or rise overflows
//    the dtype (or whose slope does) is interpolated by plf_interpolate, as
//    on the CPU.
//  * One loop: a function with no breakpoint left has its next time at
//    +inf, so the other one is consumed; the unbounded last piece follows.
//  * The same operations (plf_operations.hpp) fold the same pieces, so the
//    results differ from the CPU's only by the rounding of interpolated
//    values: within a few units of eps times the segment's largest |v| (the
//    CPU's interpolation has the same order of error), exact on dyadic data
//    whose segment widths are powers of two. d(f, f) = 0 and
//    d(f, g) = d(g, f) hold bitwise.
//
// Plain C++ with MPCF_HD, so the host tests check it against PlfPairWalk.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "mpcf/core/host_device.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/plf_operations.hpp"
#include "mpcf/core/plf_walk.hpp"
#include "mpcf/core/point.hpp"
#include "mpcf/core/walk.hpp"

namespace mpcf::cuda {

namespace detail {

template <typename T>
MPCF_HD bool not_finite(T x) {
  return !(x - x == T(0));  // inf and NaN
}

}  // namespace detail

// One function's position in the merge: the segment [t0, tNext] it is on.
template <typename T>
struct PlfCursor {
  const SimplePoint<T, T>* p;
  std::uint32_t n;
  std::uint32_t i;  // breakpoints consumed
  T t0, v0, slope;  // the segment's line: v0 + (x - t0) slope
  T t1, v1;         // its right end (the stored breakpoint; for plf_interpolate)
  T tNext;          // the next breakpoint's time, +inf when none is left
  T leftNext;       // the function's left limit there (0 at its first breakpoint)
  bool exact;       // huge segment: plf_interpolate instead of the slope

  // Before the first breakpoint: the constant 0.
  MPCF_HD void init(const SimplePoint<T, T>* points, std::uint32_t count) {
    p = points;
    n = count;
    i = 0;
    t0 = p[0].t;
    v0 = T(0);
    slope = T(0);
    t1 = t0;
    v1 = T(0);
    tNext = p[0].t;
    leftNext = T(0);
    exact = false;
  }

  // The value at x inside the current segment (t0 <= x <= tNext, x finite).
  MPCF_HD T at(T x) const {
    if (exact) return mpcf::detail::plf_interpolate(t0, v0, t1, v1, x);
    return slope == T(0) ? v0 : v0 + (x - t0) * slope;
  }

  // Crosses the breakpoint at tNext: the walk is then on the segment that
  // starts there (the constant last value after the last breakpoint).
  MPCF_HD void advance() {
    t0 = p[i].t;
    v0 = p[i].v;
    ++i;
    if (i < n) {
      t1 = p[i].t;
      v1 = p[i].v;
      const T w = t1 - t0;
      const T rise = v1 - v0;
      slope = rise / w;
      exact = detail::not_finite(w) || detail::not_finite(rise) || detail::not_finite(slope);
      tNext = t1;
      leftNext = v1;
    } else {
      t1 = t0;
      v1 = v0;
      slope = T(0);
      exact = false;
      tNext = std::numeric_limits<T>::infinity();
      leftNext = v0;
    }
  }
};

// The interface of PlfPairWalk (init, continue_from, accumulate, finish).
template <bool Windowed, typename T, typename Op>
struct PlfSegmentWalk {
  PlfCursor<T> f, g;
  T t, fv, gv;
  op_acc_t<Op> acc;

  MPCF_HD void init(const SimplePoint<T, T>* f_, std::uint32_t nf, const SimplePoint<T, T>* g_,
                    std::uint32_t ng, const Op& op) {
    f.init(f_, nf);
    g.init(g_, ng);
    t = mpcf::detail::min_value(f.tNext, g.tNext);
    fv = T(0);
    gv = T(0);
    acc = op.init();
  }

  MPCF_HD void continue_from(op_acc_t<Op> previous) { acc = previous; }

  // The piece [l, r] with end values fl, fr, gl, gr, cut to the window: a
  // cut end takes the functions' values there on their current segments.
  MPCF_HD void fold(const Op& op, T l, T r, T fl, T fr, T gl, T gr, T a, T b) {
    if constexpr (!Windowed) {
      (void)a, (void)b;
      acc = op.piece(acc, r - l, fl, fr, gl, gr);
    } else {
      const T lo = mpcf::detail::max_value(l, a);
      const T hi = mpcf::detail::min_value(r, b);
      const T w = hi - lo;
      if (!(w > T(0))) return;
      if (lo > l) {
        fl = f.at(lo);
        gl = g.at(lo);
      }
      if (hi < r) {
        fr = f.at(hi);
        gr = g.at(hi);
      }
      acc = op.piece(acc, w, fl, fr, gl, gr);
    }
  }

  MPCF_HD op_acc_t<Op> accumulate(T a, T b, const Op& op) {
    const T inf = std::numeric_limits<T>::infinity();
    for (;;) {
      const T tn = mpcf::detail::min_value(f.tNext, g.tNext);
      if (tn == inf) break;
      const bool af = f.tNext <= tn;
      const bool ag = g.tNext <= tn;
      const T fr = af ? f.leftNext : f.at(tn);
      const T gr = ag ? g.leftNext : g.at(tn);
      fold(op, t, tn, fv, fr, gv, gr, a, b);
      if (af) {
        f.advance();
        fv = f.v0;
      } else {
        fv = fr;
      }
      if (ag) {
        g.advance();
        gv = g.v0;
      } else {
        gv = gr;
      }
      t = tn;
    }
    // The unbounded last piece [t, +inf), both constant, cut to the window
    // (unwindowed: of infinite width, as in PlfPairWalk).
    fold(op, t, inf, fv, fv, gv, gv, a, b);
    return acc;
  }

  MPCF_HD T finish(T a, T b, const Op& op) { return op.finalize(accumulate(a, b, op)); }
};

}  // namespace mpcf::cuda
