// The per-target kernels of the SIMD PLF walk (see walk_plf_pairs_simd in
// simd_walk.hpp), included once per Highway target by
// core/src/simd_plf_walk.cpp (hwy/foreach_target.h). Internal: include only
// from there.
//
// A lane walks one pair of piecewise linear functions with the arithmetic of
// PlfPairWalk (plf_walk.hpp) and the operations of plf_operations.hpp,
// written lane by lane: the same +, -, *, / and compares in the same order
// (no fused multiply-add: the library is built with -ffp-contract=off), and
// every branch of the scalar code a select. A lane holds, for f and for g,
// the segment it is on: the last consumed point (fPT, fPV), a virtual
// (-inf, 0) before the first, and the next one (fT, fV), a sentinel
// (+inf, v_{m-1}) after the last; and the one-sided values fv = f(t+),
// gv = g(t+) at the left end t of the next piece. A step consumes the next
// point of one function (f when fT <= gT, as the scalar walk's merge) at
// tn; the piece [t, tn] takes the consumed function's left limit there (0 at
// its first point, the jump) and the other one's value at tn on its segment
// (detail::plf_segment_value's arithmetic: a virtual segment gives 0; on the
// sentinel's segment the interpolation gives v0 exactly, as
// plf_segment_value's last value does). Where f and g have a breakpoint at
// the same time the scalar walk takes one piece and the lanes take two: the
// first ends at the common time with the other function's interpolated
// value there, which is its left limit (s = 1 exactly), and the second has
// width 0, which no operation counts. Values that differ from the scalar
// walk's only in the sign of a zero (v0 + 0 * d for v0 = -0) leave every
// result's bits as they are: the operations take |f - g|, compare with 0,
// or add them to non-zero numbers.
#if defined(MPCF_CORE_SIMD_PLF_WALK_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPCF_CORE_SIMD_PLF_WALK_INL_HPP_
#undef MPCF_CORE_SIMD_PLF_WALK_INL_HPP_
#else
#define MPCF_CORE_SIMD_PLF_WALK_INL_HPP_
#endif

#include <hwy/highway.h>

#include "mpcf/core/plf_walk.hpp"
#include "mpcf/core/simd_walk-inl.hpp"  // GatherPoints, LanesFor, ScaledFoldLanes
#include "mpcf/core/simd_walk.hpp"

#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
HWY_BEFORE_NAMESPACE();
namespace mpcf {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// detail::min_value / max_value lane by lane (y < x ? y : x; x < y ? y : x).
template <class V>
HWY_INLINE V MinValue(V x, V y) {
  return hn::IfThenElse(hn::Lt(y, x), y, x);
}
template <class V>
HWY_INLINE V MaxValue(V x, V y) {
  return hn::IfThenElse(hn::Lt(x, y), y, x);
}

// A function's segment in a lane: (t0, v0) the last consumed point (t0 =
// -inf before the first), (t1, v1) the next one.
template <class V>
struct Segment {
  V t0, v0, t1, v1;
};

// detail::plf_segment_value at x: 0 on the virtual segment before the first
// point, else detail::plf_interpolate(t0, v0, t1, v1, x). Tame (every time
// within max / 4): t1 - t0 is finite except on the sentinel's segment,
// where (x - t0) / inf = 0 as (x / 2 - t0 / 2) / inf is, so the halving
// (a multiplication by 1 elsewhere) is left out.
template <bool Tame, class D, class V = hn::Vec<D>>
HWY_INLINE V SegmentValue(D d, const Segment<V>& g, V x) {
  using T = hn::TFromD<D>;
  const V zero = hn::Zero(d);
  const V one = hn::Set(d, T(1));
  const V inf = hn::Set(d, std::numeric_limits<T>::infinity());
  V s;
  if constexpr (Tame) {
    s = hn::Div(hn::Sub(x, g.t0), hn::Sub(g.t1, g.t0));
  } else {
    const V c = hn::IfThenElse(hn::Eq(hn::Sub(g.t1, g.t0), inf), hn::Set(d, T(0.5)), one);
    const V t0c = hn::Mul(g.t0, c);
    s = hn::Div(hn::Sub(hn::Mul(x, c), t0c), hn::Sub(hn::Mul(g.t1, c), t0c));
  }
  const auto opposite = hn::Or(hn::And(hn::Le(g.v0, zero), hn::Ge(g.v1, zero)),
                               hn::And(hn::Ge(g.v0, zero), hn::Le(g.v1, zero)));
  const V across = hn::Add(hn::Mul(s, g.v1), hn::Mul(hn::Sub(one, s), g.v0));
  const V y = hn::Add(g.v0, hn::Mul(s, hn::Sub(g.v1, g.v0)));
  const V same = hn::IfThenElse(hn::Gt(g.v1, g.v0), MinValue(y, g.v1), MaxValue(y, g.v1));
  V r = hn::IfThenElse(opposite, across, same);
  r = hn::IfThenElse(hn::Eq(s, one), g.v1, r);
  return hn::IfThenElse(hn::Eq(g.t0, hn::Neg(inf)), zero, r);
}

// detail::plf_ends lane by lane.
template <class D, class V = hn::Vec<D>>
struct Ends {
  V a, b;
  hn::Mask<D> opposite;
};
template <class D, class V = hn::Vec<D>>
HWY_INLINE Ends<D> EndsOf(D d, V hl, V hr) {
  const V zero = hn::Zero(d);
  const V x = hn::Abs(hl);
  const V y = hn::Abs(hr);
  Ends<D> e;
  e.a = MinValue(x, y);
  e.b = MaxValue(x, y);
  e.opposite = hn::Or(hn::And(hn::Lt(hl, zero), hn::Gt(hr, zero)),
                      hn::And(hn::Gt(hl, zero), hn::Lt(hr, zero)));
  return e;
}

// ---- folds: Piece(acc, w, fl, fr, gl, gr) is the operation's piece on
// the lanes (w the width, clipped to the window); Extract hands out lane
// k's accumulator as the scalar operation holds it. ----

// PlfOperationL1Dist. Unchecked (tame, whole line): acc + w * mean|h|
// without the halving and the tests (see plf_tame_walk_allowed).
template <typename T, std::size_t N, bool Unchecked>
struct PlfFoldL1 {
  using D = DT<T, N>;
  using V = hn::Vec<D>;
  struct Acc {
    V s;
  };
  explicit PlfFoldL1(const PlfOperationL1Dist<T>&) {}
  HWY_INLINE Acc Init() const { return {hn::Zero(D())}; }
  HWY_INLINE Acc Piece(Acc acc, V w, V fl, V fr, V gl, V gr) const {
    const D d;
    const V half = hn::Set(d, T(0.5));
    const V two = hn::Set(d, T(2));
    const Ends<D> e = EndsOf(d, hn::Sub(fl, gl), hn::Sub(fr, gr));
    if constexpr (Unchecked) {
      const V s = hn::Add(e.a, e.b);
      const V across = hn::Add(hn::Sub(e.b, e.a), hn::Mul(hn::Mul(two, e.a), hn::Div(e.a, s)));
      const V m = hn::IfThenElse(e.opposite, across, s);
      return {hn::Add(acc.s, hn::Mul(w, hn::Mul(m, half)))};
    } else {
      const V one = hn::Set(d, T(1));
      const V inf = hn::Set(d, std::numeric_limits<T>::infinity());
      const auto big = hn::Gt(e.b, hn::Set(d, std::numeric_limits<T>::max() / T(2)));
      const V c = hn::IfThenElse(big, half, one);
      const V a = hn::Mul(e.a, c);
      const V b = hn::Mul(e.b, c);
      const V s = hn::Add(a, b);
      const V across = hn::Add(hn::Sub(b, a), hn::Mul(hn::Mul(two, a), hn::Div(a, s)));
      const V m = hn::IfThenElse(e.opposite, across, s);
      // m * (0.5 / c): 0.5 / 0.5 = 1 and 0.5 / 1 = 0.5 exactly.
      const V mean = hn::IfThenElse(hn::Eq(e.b, inf), inf, hn::Mul(m, hn::IfThenElse(big, one, half)));
      const V term = hn::IfThenElse(hn::Eq(w, inf), inf, hn::Mul(w, mean));
      const auto keep = hn::AndNot(hn::Eq(e.b, hn::Zero(d)), hn::Gt(w, hn::Zero(d)));
      return {hn::IfThenElse(keep, hn::Add(acc.s, term), acc.s)};
    }
  }
  HWY_INLINE void Extract(const Acc& acc, T* out) const { hn::StoreU(acc.s, D(), out); }
};

// PlfOperationL2Dist: the rectangle of width w * G2 at height B into the
// scaled power sum.
template <typename T, std::size_t N, bool Unchecked>
struct PlfFoldL2 {
  using D = DT<T, N>;
  using V = hn::Vec<D>;
  struct Acc {
    V scale;
    V sum;
  };
  explicit PlfFoldL2(const PlfOperationL2Dist<T>&) {}
  HWY_INLINE Acc Init() const { return {hn::Zero(D()), hn::Zero(D())}; }
  HWY_INLINE Acc Piece(Acc acc, V w, V fl, V fr, V gl, V gr) const {
    const D d;
    const V one = hn::Set(d, T(1));
    const Ends<D> e = EndsOf(d, hn::Sub(fl, gl), hn::Sub(fr, gr));
    // detail::plf_mean_square_factor
    const auto finite = hn::And(hn::Gt(e.b, hn::Zero(d)),
                                hn::Lt(e.b, hn::Set(d, std::numeric_limits<T>::infinity())));
    const V rho = hn::Div(e.a, hn::IfThenElse(finite, e.b, one));
    const V mid = hn::IfThenElse(e.opposite, hn::Neg(rho), rho);
    const V factor = hn::IfThenElse(
        finite, hn::Div(hn::Add(hn::Add(one, mid), hn::Mul(rho, rho)), hn::Set(d, T(3))), one);
    ScaledFoldLanes(d, acc.scale, acc.sum, hn::Mul(w, factor), e.b, [](V r) { return hn::Mul(r, r); });
    return acc;
  }
  HWY_INLINE void Extract(const Acc& acc, ScaledPowerSum<T>* out) const {
    HWY_ALIGN T s[N];
    HWY_ALIGN T u[N];
    hn::Store(acc.scale, D(), s);
    hn::Store(acc.sum, D(), u);
    for (std::size_t k = 0; k < N; ++k) out[k] = ScaledPowerSum<T>{s[k], u[k]};
  }
};

// PlfOperationLpDist: G (detail::plf_power_mean_factor) and the powers lane
// by lane with the scalar functions (pow, expm1, log1p of the C library, as
// the scalar walk calls them).
template <typename T, std::size_t N, bool Unchecked>
struct PlfFoldLp {
  using D = DT<T, N>;
  using V = hn::Vec<D>;
  struct Acc {
    V scale;
    V sum;
  };
  PlfOperationLpDist<T> op;
  explicit PlfFoldLp(const PlfOperationLpDist<T>& o) : op(o) {}
  HWY_INLINE Acc Init() const { return {hn::Zero(D()), hn::Zero(D())}; }
  HWY_INLINE Acc Piece(Acc acc, V w, V fl, V fr, V gl, V gr) const {
    const D d;
    const Ends<D> e = EndsOf(d, hn::Sub(fl, gl), hn::Sub(fr, gr));
    V g = hn::Set(d, T(1));
    if (!op.flat) {
      HWY_ALIGN T a[N];
      HWY_ALIGN T b[N];
      HWY_ALIGN T o[N];
      hn::Store(e.a, d, a);
      hn::Store(e.b, d, b);
      hn::Store(hn::VecFromMask(d, e.opposite), d, o);
      for (std::size_t k = 0; k < N; ++k) {
        detail::PlfEnds<T> ends;
        ends.a = a[k];
        ends.b = b[k];
        ends.opposite = o[k] != T(0);  // all bits set: NaN, != 0
        a[k] = detail::plf_power_mean_factor(ends, op.p1);
      }
      g = hn::Load(d, a);
    }
    const T pp = op.p;
    ScaledFoldLanes(d, acc.scale, acc.sum, hn::Mul(w, g), e.b, [pp](V r) {
      HWY_ALIGN T lanes[N];
      hn::Store(r, D(), lanes);
      for (std::size_t k = 0; k < N; ++k) lanes[k] = detail::power(lanes[k], pp);
      return hn::Load(D(), lanes);
    });
    return acc;
  }
  HWY_INLINE void Extract(const Acc& acc, ScaledPowerSum<T>* out) const {
    HWY_ALIGN T s[N];
    HWY_ALIGN T u[N];
    hn::Store(acc.scale, D(), s);
    hn::Store(acc.sum, D(), u);
    for (std::size_t k = 0; k < N; ++k) out[k] = ScaledPowerSum<T>{s[k], u[k]};
  }
};

// PlfOperationLinfDist: the largest |h| at the ends of pieces of positive
// width.
template <typename T, std::size_t N, bool Unchecked>
struct PlfFoldLinf {
  using D = DT<T, N>;
  using V = hn::Vec<D>;
  struct Acc {
    V m;
  };
  explicit PlfFoldLinf(const PlfOperationLinfDist<T>&) {}
  HWY_INLINE Acc Init() const { return {hn::Zero(D())}; }
  HWY_INLINE Acc Piece(Acc acc, V w, V fl, V fr, V gl, V gr) const {
    const D d;
    const V x = MaxValue(hn::Abs(hn::Sub(fl, gl)), hn::Abs(hn::Sub(fr, gr)));
    const auto keep = hn::And(hn::Gt(w, hn::Zero(d)), hn::Gt(x, acc.m));
    return {hn::IfThenElse(keep, x, acc.m)};
  }
  HWY_INLINE void Extract(const Acc& acc, T* out) const { hn::StoreU(acc.m, D(), out); }
};

// PlfOperationL2InnerProduct, in double (float32 values promoted lane by
// lane, as the scalar operation converts them). Unchecked (tame, whole
// line): acc + w S without the tests.
template <typename T, std::size_t N, bool Unchecked>
struct PlfFoldInner {
  using D = DT<T, N>;
  using DD = DT<double, N>;
  using V = hn::Vec<D>;
  using VD = hn::Vec<DD>;
  struct Acc {
    VD s;
  };
  explicit PlfFoldInner(const PlfOperationL2InnerProduct<T>&) {}
  static HWY_INLINE VD Wide(V v) {
    if constexpr (sizeof(T) == 4) {
      return hn::PromoteTo(DD(), v);
    } else {
      return v;
    }
  }
  HWY_INLINE Acc Init() const { return {hn::Zero(DD())}; }
  HWY_INLINE Acc Piece(Acc acc, V w, V fl, V fr, V gl, V gr) const {
    const DD dd;
    const VD fL = Wide(fl), fR = Wide(fr), gL = Wide(gl), gR = Wide(gr);
    const VD s = hn::Add(hn::Mul(hn::Set(dd, 2.0), hn::Add(hn::Mul(fL, gL), hn::Mul(fR, gR))),
                         hn::Add(hn::Mul(fL, gR), hn::Mul(fR, gL)));
    const VD ww = Wide(w);  // the promotion keeps the sign and zero
    if constexpr (Unchecked) {
      return {hn::Add(acc.s, hn::Mul(ww, s))};
    } else {
      // s != 0 as C++ has it, true for NaN (hn::Ne is an ordered compare on
      // AVX2 and AVX-512: false for NaN).
      const auto keep = hn::AndNot(hn::Eq(s, hn::Zero(dd)), hn::Gt(ww, hn::Zero(dd)));
      return {hn::IfThenElse(keep, hn::Add(acc.s, hn::Mul(ww, s)), acc.s)};
    }
  }
  HWY_INLINE void Extract(const Acc& acc, double* out) const { hn::StoreU(acc.s, DD(), out); }
};

// detail::plf_fold_piece on the lanes: the piece [l, r] with end values
// fl, fr, gl, gr; windowed, it is cut to [max(l, a), min(r, b)] and a cut
// end takes the functions' values there on their segments. (A piece of
// width <= 0 leaves every fold's accumulator as it is, so it needs no
// early exit; the cut values are computed only when a lane is cut.)
template <bool Windowed, bool Tame, class Fold, class D, class V = hn::Vec<D>>
HWY_INLINE typename Fold::Acc FoldPiece(D d, const Fold& fold, typename Fold::Acc acc, V l, V r,
                                        V fl, V fr, V gl, V gr, const Segment<V>& f,
                                        const Segment<V>& g, V a, V b) {
  if constexpr (!Windowed) {
    (void)f, (void)g, (void)a, (void)b;
    return fold.Piece(acc, hn::Sub(r, l), fl, fr, gl, gr);
  } else {
    const V lo = MaxValue(l, a);
    const V hi = MinValue(r, b);
    const auto cutL = hn::Gt(lo, l);
    const auto cutR = hn::Lt(hi, r);
    if (!hn::AllFalse(d, hn::Or(cutL, cutR))) {
      fl = hn::IfThenElse(cutL, SegmentValue<Tame>(d, f, lo), fl);
      gl = hn::IfThenElse(cutL, SegmentValue<Tame>(d, g, lo), gl);
      fr = hn::IfThenElse(cutR, SegmentValue<Tame>(d, f, hi), fr);
      gr = hn::IfThenElse(cutR, SegmentValue<Tame>(d, g, hi), gr);
    }
    return fold.Piece(acc, hn::Sub(hi, lo), fl, fr, gl, gr);
  }
}

// The state of K vectors of N lanes.
template <int K, class D>
struct PlfLanes {
  using V = hn::Vec<D>;
  using VI = hn::Vec<hn::RebindToSigned<D>>;
  V t[K], fv[K], gv[K];
  Segment<V> f[K], g[K];
  VI fi[K];
};

// One step of chain k; Tail: lanes outside `active` stop (their piece is
// [t, t], width 0, and nothing is consumed).
template <bool Tail, bool Windowed, bool Tame, int K, class D, class Fold>
HWY_INLINE void PlfStep(D d, const Fold& fold, const SimplePoint<hn::TFromD<D>, hn::TFromD<D>>* pts,
                        PlfLanes<K, D>& L, typename Fold::Acc& acc, int k,
                        hn::Vec<hn::RebindToSigned<D>>& gi, hn::Mask<D> active,
                        hn::Vec<D> a, hn::Vec<D> b) {
  using T = hn::TFromD<D>;
  using DI = hn::RebindToSigned<D>;
  using V = hn::Vec<D>;
  using VI = hn::Vec<DI>;
  const DI di;
  Segment<V>& f = L.f[k];
  Segment<V>& g = L.g[k];
  const auto fFirst = hn::Le(f.t1, g.t1);
  V tn = hn::IfThenElse(fFirst, f.t1, g.t1);
  if constexpr (Tail) tn = hn::IfThenElse(active, tn, L.t[k]);
  // The function not consumed: its value at tn on its segment. The consumed
  // one: its left limit at its point (0 at its first: the jump).
  Segment<V> o;
  o.t0 = hn::IfThenElse(fFirst, g.t0, f.t0);
  o.v0 = hn::IfThenElse(fFirst, g.v0, f.v0);
  o.t1 = hn::IfThenElse(fFirst, g.t1, f.t1);
  o.v1 = hn::IfThenElse(fFirst, g.v1, f.v1);
  const V other = SegmentValue<Tame>(d, o, tn);
  const V ninf = hn::Set(d, -std::numeric_limits<T>::infinity());
  const V own = hn::IfThenElse(hn::Eq(hn::IfThenElse(fFirst, f.t0, g.t0), ninf), hn::Zero(d),
                               hn::IfThenElse(fFirst, f.v1, g.v1));
  const V fr = hn::IfThenElse(fFirst, own, other);
  const V gr = hn::IfThenElse(fFirst, other, own);
  acc = FoldPiece<Windowed, Tame>(d, fold, acc, L.t[k], tn, L.fv[k], fr, L.gv[k], gr, f, g, a, b);
  // The right limits at tn: the consumed function's stored value, the
  // other's interpolated one.
  V nfv = hn::IfThenElse(fFirst, f.v1, fr);
  V ngv = hn::IfThenElse(fFirst, gr, g.v1);
  hn::Mask<D> takeF = fFirst;
  hn::Mask<D> takeG = hn::Not(fFirst);
  if constexpr (Tail) {
    nfv = hn::IfThenElse(active, nfv, L.fv[k]);
    ngv = hn::IfThenElse(active, ngv, L.gv[k]);
    takeF = hn::And(fFirst, active);
    takeG = hn::AndNot(fFirst, active);
  }
  L.fv[k] = nfv;
  L.gv[k] = ngv;
  L.t[k] = tn;
  // The consumed point becomes the segment's left end; the next one is
  // gathered.
  f.t0 = hn::IfThenElse(takeF, f.t1, f.t0);
  f.v0 = hn::IfThenElse(takeF, f.v1, f.v0);
  g.t0 = hn::IfThenElse(takeG, g.t1, g.t0);
  g.v0 = hn::IfThenElse(takeG, g.v1, g.v0);
  const auto mf = hn::RebindMask(di, takeF);
  const auto mg = hn::RebindMask(di, takeG);
  const VI stride = hn::Set(di, static_cast<hn::TFromD<DI>>(kIndexStep<T>));
  L.fi[k] = hn::Add(L.fi[k], hn::IfThenElseZero(mf, stride));
  gi = hn::Add(gi, hn::IfThenElseZero(mg, stride));
  V nT, nV;
  GatherPoints(d, pts, hn::IfThenElse(mf, L.fi[k], gi), nT, nV);
  f.t1 = hn::IfThenElse(takeF, nT, f.t1);
  f.v1 = hn::IfThenElse(takeF, nV, f.v1);
  g.t1 = hn::IfThenElse(takeG, nT, g.t1);
  g.v1 = hn::IfThenElse(takeG, nV, g.v1);
}

// K vectors of N lanes in lockstep over one group of K * N pairs (see
// WalkGroup of the PCF walk); leaves each lane's t, fv, gv, accumulator and
// the index of f's sentinel in the outputs.
template <int K, bool Windowed, bool Tame, typename T, std::size_t N, class Fold>
HWY_INLINE void PlfWalkGroup(const Fold& fold, const SimplePoint<T, T>* pts,
                             const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* fStart,
                             const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* gStart,
                             const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* steps,
                             std::uint32_t minSteps, std::uint32_t maxSteps, T wa, T wb, T* tOut,
                             T* fvOut, T* gvOut, hn::TFromD<hn::RebindToSigned<DT<T, N>>>* fiOut,
                             typename Fold::Acc* accOut) {
  using D = DT<T, N>;
  using DI = hn::RebindToSigned<D>;
  using TI = hn::TFromD<DI>;
  using V = hn::Vec<D>;
  using VI = hn::Vec<DI>;
  const D d;
  const DI di;
  const V a = hn::Set(d, wa);
  const V b = hn::Set(d, wb);
  const V ninf = hn::Set(d, -std::numeric_limits<T>::infinity());
  PlfLanes<K, D> L;
  typename Fold::Acc acc[K];
  // fi + gi = fStart + gStart + (steps so far) * kIndexStep while all lanes
  // walk, so g's index is derived from sumStart.
  HWY_ALIGN TI sumStart[K * N];
  for (int k = 0; k < K; ++k) {
    L.fi[k] = hn::LoadU(di, fStart + k * N);
    const VI gi = hn::LoadU(di, gStart + k * N);
    hn::Store(hn::Add(L.fi[k], gi), di, sumStart + k * N);
    GatherPoints(d, pts, L.fi[k], L.f[k].t1, L.f[k].v1);
    GatherPoints(d, pts, gi, L.g[k].t1, L.g[k].v1);
    L.f[k].t0 = ninf;
    L.g[k].t0 = ninf;
    L.f[k].v0 = hn::Zero(d);
    L.g[k].v0 = hn::Zero(d);
    L.t[k] = MinValue(L.f[k].t1, L.g[k].t1);
    L.fv[k] = hn::Zero(d);
    L.gv[k] = hn::Zero(d);
    acc[k] = fold.Init();
  }
  const auto all = hn::FirstN(d, N);
  std::uint32_t s = 0;
  for (; s < minSteps; ++s) {
    const VI consumed = hn::Set(di, static_cast<TI>(s * kIndexStep<T>));
    for (int k = 0; k < K; ++k) {
      VI gi = hn::Sub(hn::Add(hn::Load(di, sumStart + k * N), consumed), L.fi[k]);
      PlfStep<false, Windowed, Tame>(d, fold, pts, L, acc[k], k, gi, all, a, b);
    }
  }
  if (s < maxSteps) {
    const VI consumed = hn::Set(di, static_cast<TI>(s * kIndexStep<T>));
    VI gi[K];
    for (int k = 0; k < K; ++k) {
      gi[k] = hn::Sub(hn::Add(hn::Load(di, sumStart + k * N), consumed), L.fi[k]);
    }
    for (; s < maxSteps; ++s) {
      const VI sv = hn::Set(di, static_cast<TI>(s));
      for (int k = 0; k < K; ++k) {
        const auto active = hn::RebindMask(d, hn::Lt(sv, hn::LoadU(di, steps + k * N)));
        PlfStep<true, Windowed, Tame>(d, fold, pts, L, acc[k], k, gi[k], active, a, b);
      }
    }
  }
  for (int k = 0; k < K; ++k) {
    hn::StoreU(L.t[k], d, tOut + k * N);
    hn::StoreU(L.fv[k], d, fvOut + k * N);
    hn::StoreU(L.gv[k], d, gvOut + k * N);
    hn::StoreU(L.fi[k], di, fiOut + k * N);
    accOut[k] = acc[k];
  }
}

// Every pair of the batch, in groups of K * N (the last group padded with
// copies of its last pair, whose results are dropped).
template <int K, std::size_t N, bool Windowed, bool Tame, typename T, class Op, class Fold>
void PlfWalkBatch(const PairBatch<T>& batch, const Window<T>& w, const Op& op, const Fold& fold) {
  using TI = hn::TFromD<hn::RebindToSigned<DT<T, N>>>;
  constexpr std::size_t G = K * N;
  HWY_ALIGN TI fs[G];
  HWY_ALIGN TI gs[G];
  HWY_ALIGN TI st[G];
  HWY_ALIGN TI fiEnd[G];
  HWY_ALIGN T tl[G];
  HWY_ALIGN T fvl[G];
  HWY_ALIGN T gvl[G];
  ScalarAcc<Op> accl[G];
  typename Fold::Acc acc[K];
  const T inf = std::numeric_limits<T>::infinity();
  for (std::size_t first = 0; first < batch.count; first += G) {
    const std::size_t n = std::min(G, batch.count - first);
    std::uint32_t minSteps = ~0u, maxSteps = 0;
    for (std::size_t l = 0; l < G; ++l) {
      const std::size_t k = first + (l < n ? l : n - 1);
      fs[l] = static_cast<TI>(batch.f[k]) * kIndexStep<T>;
      gs[l] = static_cast<TI>(batch.g[k]) * kIndexStep<T>;
      st[l] = static_cast<TI>(batch.steps[k]);
      minSteps = std::min(minSteps, batch.steps[k]);
      maxSteps = std::max(maxSteps, batch.steps[k]);
    }
    PlfWalkGroup<K, Windowed, Tame, T, N>(fold, batch.points, fs, gs, st, minSteps, maxSteps, w.a,
                                          w.b, tl, fvl, gvl, fiEnd, acc);
    for (int k = 0; k < K; ++k) fold.Extract(acc[k], accl + k * N);
    // The unbounded last piece [t, +inf), both constant, and the
    // finalisation, with PlfPairWalk's code: each function's sentinel
    // holds its last value.
    for (std::size_t l = 0; l < n; ++l) {
      const std::size_t k = first + l;
      const TI gEnd = fs[l] + gs[l] + static_cast<TI>(batch.steps[k]) * kIndexStep<T> - fiEnd[l];
      const SimplePoint<T, T>* fSentinel = batch.points + fiEnd[l] / kIndexStep<T>;
      const SimplePoint<T, T>* gSentinel = batch.points + gEnd / kIndexStep<T>;
      const auto a = detail::plf_fold_piece<true>(accl[l], op, tl[l], inf, fvl[l], fvl[l], gvl[l],
                                                  gvl[l], fSentinel, 1u, 1u, gSentinel, 1u, 1u,
                                                  w.a, w.b);
      batch.out[k] = op.finalize(a);
    }
  }
}

// Vectors walked in lockstep by the PLF walk (a step is long enough to
// hide a gather's latency with fewer chains than the PCF walk's).
#ifndef MPCF_SIMD_PLF_CHAINS
#define MPCF_SIMD_PLF_CHAINS 2
#endif
constexpr int kPlfChains = MPCF_SIMD_PLF_CHAINS;

// The four paths of an operation: windowed or not, tame or not (the folds
// drop their tests on the tame whole line only).
template <template <typename, std::size_t, bool> class Fold, std::size_t N, typename T, class Op>
void PlfWalkPaths(const PairBatch<T>& b, const Window<T>& w, const Op& op, bool tame) {
  if (w.is_whole_line()) {
    if (tame) {
      PlfWalkBatch<kPlfChains, N, false, true>(b, w, op, Fold<T, N, true>(op));
    } else {
      PlfWalkBatch<kPlfChains, N, false, false>(b, w, op, Fold<T, N, false>(op));
    }
  } else if (tame) {
    PlfWalkBatch<kPlfChains, N, true, true>(b, w, op, Fold<T, N, false>(op));
  } else {
    PlfWalkBatch<kPlfChains, N, true, false>(b, w, op, Fold<T, N, false>(op));
  }
}

// The entry points of this target (one per operation).
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationL1Dist<T>& op, bool tame) {
  PlfWalkPaths<PlfFoldL1, LanesFor<T>()>(b, w, op, tame);
}
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationL2Dist<T>& op, bool tame) {
  PlfWalkPaths<PlfFoldL2, LanesFor<T>()>(b, w, op, tame);
}
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationLpDist<T>& op, bool tame) {
  PlfWalkPaths<PlfFoldLp, LanesFor<T>()>(b, w, op, tame);
}
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationLinfDist<T>& op,
             bool tame) {
  PlfWalkPaths<PlfFoldLinf, LanesFor<T>()>(b, w, op, tame);
}
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationL2InnerProduct<T>& op,
             bool tame) {
  PlfWalkPaths<PlfFoldInner, LanesFor<double>()>(b, w, op, tame);
}

}  // namespace HWY_NAMESPACE
}  // namespace mpcf
HWY_AFTER_NAMESPACE();
#endif  // x86 SIMD targets

#endif  // per-target include guard
