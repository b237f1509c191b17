// The GPU walk of a pair of piecewise linear functions on the tame path: a
// thread walks one pair as a lane of the CPU's SIMD PLF walk does
// (core/include/mpcf/core/simd_plf_walk-inl.hpp, whose comments give the
// reasoning): one loop of exactly nf + ng steps, each consuming the next
// point of A, the function whose next point comes first, and interpolating
// B there; A and B swap where B's next point then comes first. Every
// branch of PlfPairWalk is a select, so the threads of a warp do not
// diverge however their pairs' breakpoints interleave; a function past its
// last point reads the virtual sentinel (+inf, v_{m-1}) instead of memory.
//
// The arithmetic is the SIMD lane's (the same +, -, *, / and compares in
// the same order), compiled without fused multiply-adds (the translation
// units that include this header are built with --fmad=false, as core is
// built with -ffp-contract=off), so a pair's value is bitwise the CPU's
// (integrate_plf_pair) for every operation here. Tame: every |t| and |v|
// of both collections within max / 4 (plf_tame_walk_allowed), which the
// caller checks; the folds then drop the halvings and, on the whole line,
// the tests that change no bit (see the SIMD folds).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "mpcf/core/plf_operations.hpp"
#include "mpcf/core/plf_walk.hpp"
#include "mpcf/core/point.hpp"

namespace mpcf::cuda::lane {

template <typename T>
__device__ __forceinline__ T min_v(T x, T y) {
  return y < x ? y : x;
}
template <typename T>
__device__ __forceinline__ T max_v(T x, T y) {
  return x < y ? y : x;
}

// A function's segment: the last consumed point (t0, v0), (-inf, 0) before
// the first, and the next one (t1, v1), (+inf, v_{m-1}) after the last.
template <typename T>
struct Segment {
  T t0, v0, t1, v1;
};

// detail::plf_segment_value at x on the tame path (SegmentValue<true> of
// the SIMD walk).
template <typename T>
__device__ __forceinline__ T segment_value(const Segment<T>& g, T x) {
  const T s = (x - g.t0) / (g.t1 - g.t0);
  const T lo = min_v(g.v0, g.v1);
  const T hi = max_v(g.v0, g.v1);
  const bool opposite = (lo <= T(0)) & (hi >= T(0));
  const T across = s * g.v1 + (T(1) - s) * g.v0;
  const T y = g.v0 + s * (g.v1 - g.v0);
  const T same = min_v(max_v(y, lo), hi);
  T r = opposite ? across : same;
  r = s == T(1) ? g.v1 : r;
  return g.t0 == -std::numeric_limits<T>::infinity() ? T(0) : r;
}

// ---- folds of a piece (w, fl, fr, gl, gr) on the tame path; Acc is the
// operation's accumulator (op_acc_t). Unchecked: tame and the whole line.

// h = f - g at the piece's ends and A = min(|hl|, |hr|), B = max(|hl|, |hr|)
// (detail::plf_ends without the sign test, which the folds do their own way).
template <typename T>
struct HEnds {
  T hl, hr, a, b;
};
template <typename T>
__device__ __forceinline__ HEnds<T> h_ends(T fl, T fr, T gl, T gr) {
  HEnds<T> e;
  e.hl = fl - gl;
  e.hr = fr - gr;
  const T x = fabs(e.hl);
  const T y = fabs(e.hr);
  e.a = min_v(x, y);
  e.b = max_v(x, y);
  return e;
}

template <typename T, bool Unchecked>
struct FoldL1 {
  using Acc = T;
  __device__ __forceinline__ Acc piece(Acc acc, T w, T fl, T fr, T gl, T gr) const {
    const HEnds<T> e = h_ends(fl, fr, gl, gr);
    const T hl = e.hl, hr = e.hr, a = e.a, b = e.b;
    const T s = a + b;
    const T dd = fabs(hl + hr);
    const T across = dd + (T(2) * a) * (a / s);
    const T term = w * ((dd < s ? across : s) * T(0.5));
    if constexpr (Unchecked) {
      return acc + term;
    } else {
      return (!(b == T(0)) & (w > T(0))) ? acc + term : acc;
    }
  }
};

template <typename T, bool Unchecked>
struct FoldL2 {
  using Acc = ScaledPowerSum<T>;
  __device__ __forceinline__ Acc piece(Acc acc, T w, T fl, T fr, T gl, T gr) const {
    const HEnds<T> e = h_ends(fl, fr, gl, gr);
    const T hl = e.hl, hr = e.hr, ea = e.a, eb = e.b;
    const bool opposite = (min_v(hl, hr) < T(0)) & (max_v(hl, hr) > T(0));
    const T rho = ea / eb;
    const T mid = opposite ? -rho : rho;
    const T factor = ((T(1) + mid) + rho * rho) / T(3);
    const T W = w * factor;
    // ScaledFoldLanes<Finite = true>: keep only w > 0 and B != 0 (B = 0 is
    // the 0 / 0 factor dropped here).
    const bool keep = (w > T(0)) & !(eb == T(0));
    const bool up = eb > acc.scale;
    T r = (up ? acc.scale : eb) / (up ? eb : acc.scale);
    r = r * r;
    const T nsum = up ? acc.sum * r + W : acc.sum + W * r;
    const T nscale = up ? eb : acc.scale;
    return keep ? Acc{nscale, nsum} : acc;
  }
};

template <typename T, bool Unchecked>
struct FoldLinf {
  using Acc = T;
  __device__ __forceinline__ Acc piece(Acc acc, T w, T fl, T fr, T gl, T gr) const {
    const T x = max_v(fabs(fl - gl), fabs(fr - gr));
    return ((w > T(0)) & (x > acc)) ? x : acc;
  }
};

template <typename T, bool Unchecked>
struct FoldInner {
  using Acc = double;
  __device__ __forceinline__ Acc piece(Acc acc, T w, T fl, T fr, T gl, T gr) const {
    const double fL = fl, fR = fr, gL = gl, gR = gr;
    const double s = 2.0 * (fL * gL + fR * gR) + (fL * gR + fR * gL);
    const double ww = w;
    if constexpr (Unchecked) {
      return acc + ww * s;
    } else {
      return (!(s == 0.0) & (ww > 0.0)) ? acc + ww * s : acc;
    }
  }
};

// The lane fold of a PLF operation (void: none, the caller keeps PlfPairWalk).
template <typename Op, bool Unchecked>
struct FoldOf {
  using type = void;
};
template <typename T, bool U>
struct FoldOf<PlfOperationL1Dist<T>, U> {
  using type = FoldL1<T, U>;
};
template <typename T, bool U>
struct FoldOf<PlfOperationL2Dist<T>, U> {
  using type = FoldL2<T, U>;
};
template <typename T, bool U>
struct FoldOf<PlfOperationLinfDist<T>, U> {
  using type = FoldLinf<T, U>;
};
template <typename T, bool U>
struct FoldOf<PlfOperationL2InnerProduct<T>, U> {
  using type = FoldInner<T, U>;
};
template <typename Op>
inline constexpr bool kHasLaneFold = !std::is_void_v<typename FoldOf<Op, false>::type>;

// detail::plf_fold_piece on the tame path.
template <bool Windowed, typename T, class Fold>
__device__ __forceinline__ typename Fold::Acc fold_piece(const Fold& fold, typename Fold::Acc acc,
                                                        T l, T r, T fl, T fr, T gl, T gr,
                                                        const Segment<T>& f, const Segment<T>& g,
                                                        T a, T b) {
  if constexpr (!Windowed) {
    return fold.piece(acc, r - l, fl, fr, gl, gr);
  } else {
    const T lo = max_v(l, a);
    const T hi = min_v(r, b);
    const bool cutL = lo > l;
    const bool cutR = hi < r;
    // At most two pieces of a pair overlap the window and are cut.
    if ((cutL | cutR) & (hi > lo)) {
      if (cutL) {
        fl = segment_value(f, lo);
        gl = segment_value(g, lo);
      }
      if (cutR) {
        fr = segment_value(f, hi);
        gr = segment_value(g, hi);
      }
    }
    return fold.piece(acc, hi - lo, fl, fr, gl, gr);
  }
}

// The next point of a function after `left` points remain at p (p the
// next unread one): the point itself, or the sentinel (+inf, last value).
template <typename T>
__device__ __forceinline__ void next_point(const SimplePoint<T, T>* p, std::uint32_t left,
                                           T lastValue, T& t, T& v) {
  if (left > 0) {
    const SimplePoint<T, T> q = *p;
    t = q.t;
    v = q.v;
  } else {
    t = std::numeric_limits<T>::infinity();
    v = lastValue;
  }
}

// Walks f[0..nf) against g[0..ng) (nf, ng >= 1) into acc (an earlier
// component's sum, or op.init()) and returns the accumulated value, not
// finalized: PlfPairWalk::accumulate's value bit for bit on the tame path.
template <bool Windowed, typename T, class Fold, class Op>
__device__ __forceinline__ typename Fold::Acc walk_pair(const Fold& fold, const Op& op,
                                                       typename Fold::Acc acc,
                                                       const SimplePoint<T, T>* f, std::uint32_t nf,
                                                       const SimplePoint<T, T>* g, std::uint32_t ng,
                                                       T a, T b) {
  const T inf = std::numeric_limits<T>::infinity();
  Segment<T> A, B;
  const SimplePoint<T, T> f0 = f[0];
  const SimplePoint<T, T> g0 = g[0];
  A.t0 = B.t0 = -inf;
  A.v0 = B.v0 = T(0);
  const bool swap0 = g0.t < f0.t;
  A.t1 = swap0 ? g0.t : f0.t;
  A.v1 = swap0 ? g0.v : f0.v;
  B.t1 = swap0 ? f0.t : g0.t;
  B.v1 = swap0 ? f0.v : g0.v;
  // The next unread point of A and B and how many remain after it.
  const SimplePoint<T, T>* ap = swap0 ? g + 1 : f + 1;
  const SimplePoint<T, T>* bp = swap0 ? f + 1 : g + 1;
  std::uint32_t aLeft = (swap0 ? ng : nf) - 1;
  std::uint32_t bLeft = (swap0 ? nf : ng) - 1;
  T t = A.t1;
  T av = T(0), bv = T(0);
  const std::uint32_t steps = nf + ng;
  for (std::uint32_t s = 0; s < steps; ++s) {
    const T tn = A.t1;
    const T other = segment_value(B, tn);
    const T own = A.t0 == -inf ? T(0) : A.v1;
    acc = fold_piece<Windowed>(fold, acc, t, tn, av, own, bv, other, A, B, a, b);
    av = A.v1;
    bv = other;
    t = tn;
    A.t0 = A.t1;
    A.v0 = A.v1;
    T nT, nV;
    next_point(ap, aLeft, A.v0, nT, nV);
    A.t1 = nT;
    A.v1 = nV;
    const bool more = aLeft > 0;
    ap += more ? 1 : 0;
    aLeft -= more ? 1u : 0u;
    // B's next point first: swap.
    if (B.t1 < A.t1) {
      const Segment<T> s0 = A;
      A = B;
      B = s0;
      const T v0 = av;
      av = bv;
      bv = v0;
      const SimplePoint<T, T>* p0 = ap;
      ap = bp;
      bp = p0;
      const std::uint32_t l0 = aLeft;
      aLeft = bLeft;
      bLeft = l0;
    }
  }
  // The unbounded last piece [t, +inf), both constant (the scalar code, as
  // the SIMD walk finishes its lanes): each function at its last value.
  const SimplePoint<T, T> sa{inf, av};
  const SimplePoint<T, T> sb{inf, bv};
  return mpcf::detail::plf_fold_piece<true>(acc, op, t, inf, av, av, bv, bv, &sa, 1u, 1u, &sb, 1u, 1u,
                                      a, b);
}

}  // namespace mpcf::cuda::lane
