// The per-target kernels of the SIMD PLF walk (see walk_plf_pairs_simd in
// simd_walk.hpp), included once per Highway target by
// core/src/simd_plf_walk.inc (hwy/foreach_target.h). Internal: include only
// from there.
//
// A lane walks one pair of piecewise linear functions with the arithmetic of
// PlfPairWalk (plf_walk.hpp) and the operations of plf_operations.hpp,
// written lane by lane: the same +, -, *, / and compares in the same order
// (no fused multiply-add: the library is built with -ffp-contract=off), and
// every branch of the scalar code a select. A lane holds, for each of its
// two functions, the segment it is on: the last consumed point (t0, v0), a
// virtual (-inf, 0) before the first, and the next one (t1, v1), a sentinel
// (+inf, v_{m-1}) after the last; and the functions' right limits at the
// left end t of the next piece. The functions are held as A, the one whose
// next point comes first, and B (see PlfLanes: every operation is
// symmetric in f and g). A step consumes A's next point at tn; the piece
// [t, tn] takes A's left limit there (0 at its first point, the jump) and
// B's value at tn on its segment (detail::plf_segment_value's arithmetic: a
// virtual segment gives 0; on the sentinel's segment the interpolation
// gives v0 exactly, as plf_segment_value's last value does). Where f and g
// have a breakpoint at the same time the scalar walk takes one piece and
// the lane two, the second of width 0, which no operation counts (see
// PlfStep). Values that differ from the scalar walk's only in the sign of a
// zero (v0 + 0 * d for v0 = -0) leave every result's bits as they are: the
// operations take |f - g|, compare with 0, or add them to non-zero numbers.
//
// Costs that shaped it (AMD Zen 5, AVX-512): compares into mask registers
// and mask logic are dear, so the sign tests use MIN/MAX and one compare
// each; the divisions (one to interpolate, one where h changes sign) cost
// about a tenth of a step; keeping A and B instead of f and g saves the
// selects of which segment to interpolate and which values to update.
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

#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || \
    HWY_TARGET == HWY_NEON
HWY_BEFORE_NAMESPACE();
namespace mpcf {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// detail::min_value / max_value lane by lane: y < x ? y : x and
// x < y ? y : x, for zeros of either sign and NaN alike. On x86 these are
// MINPD / MAXPD with the operands swapped (MINPD(a, b) = a < b ? a : b,
// MAXPD(a, b) = a > b ? a : b; hn::Min / hn::Max are those instructions on
// the x86 targets). Arm's FMIN / FMAX (and FMINNM / FMAXNM) order -0 below
// +0 and return NaN or the number for a NaN operand, so there they are
// written as the compare and select.
template <class V>
HWY_INLINE V MinValue(V x, V y) {
#if HWY_ARCH_X86
  return hn::Min(y, x);
#else
  return hn::IfThenElse(hn::Lt(y, x), y, x);
#endif
}
template <class V>
HWY_INLINE V MaxValue(V x, V y) {
#if HWY_ARCH_X86
  return hn::Max(y, x);
#else
  return hn::IfThenElse(hn::Lt(x, y), y, x);
#endif
}

// (x < 0 && y > 0) || (x > 0 && y < 0): the smaller is < 0 and the larger
// > 0 (x, y may be infinite, not NaN; the sign of a zero that hn::Min or
// hn::Max returns, which differs between x86 and Arm, compares the same).
template <class D, class V = hn::Vec<D>>
HWY_INLINE hn::Mask<D> StrictlyOpposite(D d, V x, V y) {
  return hn::And(hn::Lt(hn::Min(x, y), hn::Zero(d)), hn::Gt(hn::Max(x, y), hn::Zero(d)));
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
  // v0 <= 0 <= v1 or v1 <= 0 <= v0: the smaller is <= 0, the larger >= 0.
  // (Where lo or hi is a zero, whose sign hn::Min / hn::Max choose
  // differently on x86 and Arm, that holds and `same` is not taken.)
  const V lo = hn::Min(g.v0, g.v1);
  const V hi = hn::Max(g.v0, g.v1);
  const auto opposite = hn::And(hn::Le(lo, zero), hn::Ge(hi, zero));
  const V across = hn::Add(hn::Mul(s, g.v1), hn::Mul(hn::Sub(one, s), g.v0));
  const V y = hn::Add(g.v0, hn::Mul(s, hn::Sub(g.v1, g.v0)));
  // v1 > v0 ? min_value(y, v1) : max_value(y, v1). y lies on v0's side of
  // v1 (s >= 0 and rounding is monotone: y >= v0 when v1 > v0, y <= v0
  // when v1 < v0, y = v0 when they are equal and not zero), so clamping y
  // to [lo, hi] with max_value, then min_value, gives those bits: the
  // clamp at v0's end returns y itself.
  const V same = MinValue(MaxValue(y, lo), hi);
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
  const V x = hn::Abs(hl);
  const V y = hn::Abs(hr);
  Ends<D> e;
  e.a = MinValue(x, y);
  e.b = MaxValue(x, y);
  e.opposite = StrictlyOpposite(d, hl, hr);
  return e;
}

// ---- folds: Piece(acc, w, fl, fr, gl, gr) is the operation's piece on
// the lanes (w the width, clipped to the window); Extract hands out lane
// k's accumulator as the scalar operation holds it. ----

// PlfOperationL1Dist. Tame (see plf_tame_walk_allowed): no halving (|h| <=
// max / 2) and no infinite width or mean; Unchecked (tame, whole line):
// acc + w * mean|h| without the test either.
template <typename T, std::size_t N, bool Tame, bool Unchecked>
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
    if constexpr (Tame) {
      // h changes sign strictly inside the piece iff |hl + hr| < A + B:
      // |hl + hr| is B - A across a sign change and A + B otherwise, both
      // rounded as the scalar code rounds them; where a sign change has
      // B - A and A + B rounding to the same number (A below half an ulp of
      // B), the closed form (B - A) + 2 A (A / (A + B)) also rounds to it,
      // so taking A + B there changes no bit. (One add and compare instead
      // of plf_ends' four compares.)
      const V hl = hn::Sub(fl, gl);
      const V hr = hn::Sub(fr, gr);
      const V x = hn::Abs(hl);
      const V y = hn::Abs(hr);
      const V a = MinValue(x, y);
      const V b = MaxValue(x, y);
      const V s = hn::Add(a, b);
      const V dd = hn::Abs(hn::Add(hl, hr));
      const V across = hn::Add(dd, hn::Mul(hn::Mul(two, a), hn::Div(a, s)));
      const V term = hn::Mul(w, hn::Mul(hn::IfThenElse(hn::Lt(dd, s), across, s), half));
      if constexpr (Unchecked) return {hn::Add(acc.s, term)};
      const auto keep = hn::AndNot(hn::Eq(b, hn::Zero(d)), hn::Gt(w, hn::Zero(d)));
      return {hn::IfThenElse(keep, hn::Add(acc.s, term), acc.s)};
    } else {
      const Ends<D> e = EndsOf(d, hn::Sub(fl, gl), hn::Sub(fr, gr));
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
  HWY_INLINE Acc Load(const T* in) const { return {hn::LoadU(D(), in)}; }
  HWY_INLINE void Extract(const Acc& acc, T* out) const { hn::StoreU(acc.s, D(), out); }
};

// PlfOperationL2Dist: the rectangle of width w * G2 at height B into the
// scaled power sum.
template <typename T, std::size_t N, bool Tame, bool Unchecked>
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
    // detail::plf_mean_square_factor. Tame: B is finite, and B = 0 (a
    // 0 / 0 factor) is a piece the fold does not keep.
    V factor;
    if constexpr (Tame) {
      const V rho = hn::Div(e.a, e.b);
      const V mid = hn::IfThenElse(e.opposite, hn::Neg(rho), rho);
      factor = hn::Div(hn::Add(hn::Add(one, mid), hn::Mul(rho, rho)), hn::Set(d, T(3)));
    } else {
      const auto finite = hn::And(hn::Gt(e.b, hn::Zero(d)),
                                  hn::Lt(e.b, hn::Set(d, std::numeric_limits<T>::infinity())));
      const V rho = hn::Div(e.a, hn::IfThenElse(finite, e.b, one));
      const V mid = hn::IfThenElse(e.opposite, hn::Neg(rho), rho);
      factor = hn::IfThenElse(
          finite, hn::Div(hn::Add(hn::Add(one, mid), hn::Mul(rho, rho)), hn::Set(d, T(3))), one);
    }
    ScaledFoldLanes<Tame>(d, acc.scale, acc.sum, hn::Mul(w, factor), e.b,
                          [](V r) { return hn::Mul(r, r); });
    return acc;
  }
  HWY_INLINE Acc Load(const ScaledPowerSum<T>* in) const {
    const ScaledLanes<D> l = LoadScaled<D>(in);
    return {l.scale, l.sum};
  }
  HWY_INLINE void Extract(const Acc& acc, ScaledPowerSum<T>* out) const {
    ExtractScaled<D>(acc.scale, acc.sum, out);
  }
};

// PlfOperationLpDist: for an integer p (op.n) G and the ratio's power by
// the same products as the scalar operation; otherwise G
// (detail::plf_power_mean_factor) and the powers lane by lane with the
// scalar functions (pow, expm1, log1p of the C library, as the scalar walk
// calls them).
template <typename T, std::size_t N, bool Tame, bool Unchecked>
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
  // detail::power_int lane by lane (n is the same in every lane).
  static HWY_INLINE V PowerInt(V x, int n) {
    V result = hn::Set(D(), T(1));
    for (;;) {
      if (n & 1) result = hn::Mul(result, x);
      n >>= 1;
      if (n == 0) return result;
      x = hn::Mul(x, x);
    }
  }
  HWY_INLINE Acc Piece(Acc acc, V w, V fl, V fr, V gl, V gr) const {
    const D d;
    const Ends<D> e = EndsOf(d, hn::Sub(fl, gl), hn::Sub(fr, gr));
    V g = hn::Set(d, T(1));
    if (op.n) {
      // detail::plf_power_mean_factor_int
      const V one = hn::Set(d, T(1));
      const V p1 = hn::Set(d, op.p1);
      const auto finite = hn::And(hn::Gt(e.b, hn::Zero(d)),
                                  hn::Lt(e.b, hn::Set(d, std::numeric_limits<T>::infinity())));
      const V rho = hn::IfThenElse(finite, hn::Div(e.a, e.b), one);
      const V across = hn::Div(hn::Add(one, PowerInt(rho, op.n + 1)), hn::Mul(p1, hn::Add(one, rho)));
      V h = one;
      for (int k = 0; k < op.n; ++k) h = hn::Add(hn::Mul(h, rho), one);
      g = hn::IfThenElse(e.opposite, across, hn::Div(h, p1));
      ScaledFoldLanes<Tame>(d, acc.scale, acc.sum, hn::Mul(w, g), e.b,
                            [this](V r) { return PowerInt(r, op.n); });
      return acc;
    }
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
    ScaledFoldLanes<Tame>(d, acc.scale, acc.sum, hn::Mul(w, g), e.b, [pp](V r) {
      HWY_ALIGN T lanes[N];
      hn::Store(r, D(), lanes);
      for (std::size_t k = 0; k < N; ++k) lanes[k] = detail::power(lanes[k], pp);
      return hn::Load(D(), lanes);
    });
    return acc;
  }
  HWY_INLINE Acc Load(const ScaledPowerSum<T>* in) const {
    const ScaledLanes<D> l = LoadScaled<D>(in);
    return {l.scale, l.sum};
  }
  HWY_INLINE void Extract(const Acc& acc, ScaledPowerSum<T>* out) const {
    ExtractScaled<D>(acc.scale, acc.sum, out);
  }
};

// PlfOperationLinfDist: the largest |h| at the ends of pieces of positive
// width.
template <typename T, std::size_t N, bool Tame, bool Unchecked>
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
  HWY_INLINE Acc Load(const T* in) const { return {hn::LoadU(D(), in)}; }
  HWY_INLINE void Extract(const Acc& acc, T* out) const { hn::StoreU(acc.m, D(), out); }
};

// PlfOperationL2InnerProduct, in double (float32 values promoted lane by
// lane, as the scalar operation converts them). Unchecked (tame, whole
// line): acc + w S without the tests.
template <typename T, std::size_t N, bool Tame, bool Unchecked>
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
  HWY_INLINE Acc Load(const double* in) const { return {hn::LoadU(DD(), in)}; }
  HWY_INLINE void Extract(const Acc& acc, double* out) const { hn::StoreU(acc.s, DD(), out); }
};

// detail::plf_fold_piece on the lanes: the piece [l, r] with end values
// fl, fr, gl, gr; windowed, it is cut to [max(l, a), min(r, b)] and a cut
// end takes the functions' values there on their segments. (A piece of
// width <= 0 leaves every fold's accumulator as it is, so it needs no
// early exit; the values at the cut are computed only when a lane's piece
// overlaps the window and is cut.)
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
    // Only a piece that overlaps the window counts (hi > lo), so only one
    // that a window end cuts needs the values there: at most two pieces of
    // a pair, where every piece before or after the window is cut too.
    if (!hn::AllFalse(d, hn::And(hn::Or(cutL, cutR), hn::Gt(hi, lo)))) {
      fl = hn::IfThenElse(cutL, SegmentValue<Tame>(d, f, lo), fl);
      gl = hn::IfThenElse(cutL, SegmentValue<Tame>(d, g, lo), gl);
      fr = hn::IfThenElse(cutR, SegmentValue<Tame>(d, f, hi), fr);
      gr = hn::IfThenElse(cutR, SegmentValue<Tame>(d, g, hi), gr);
    }
    return fold.Piece(acc, hn::Sub(hi, lo), fl, fr, gl, gr);
  }
}

// The state of K vectors of N lanes. The operations are symmetric in f and
// g (|f - g|, f g: swapping them changes no bit, see PlfStep), so a lane
// keeps as A the function whose next point comes first (A's next time <=
// B's) and as B the other: a step consumes A's point, interpolates B, and
// the two swap where B's next point then comes first.
template <int K, class D>
struct PlfLanes {
  using V = hn::Vec<D>;
  using VI = hn::Vec<hn::RebindToSigned<D>>;
  V t[K], av[K], bv[K];  // the left end of the next piece, A(t+), B(t+)
  Segment<V> A[K], B[K];
  VI ai[K];  // index of A's next point; B's is the lane's sum of both minus it
};

// One step of chain k: the piece [t, tn] up to A's next point, with A's
// left limit there (0 at its first point: the jump) and B's value there on
// its segment. sum: the lanes' index of A's plus B's next point after the
// step. Tail: lanes outside `active` stop (their piece is [t, t], width 0,
// and nothing changes).
//
// Swapping f and g changes no bit of any operation: f - g and g - f are
// exact negatives (so |h|, the ends and whether h changes sign are the
// same), and f g's closed form takes the same products and sums of two
// terms in another order. Where A's and B's next points have the same time
// either is consumed first: the first step's piece ends there with both
// functions' left limits (the other's interpolation there gives its next
// value, s = 1, or 0 on its virtual segment), the second has width 0, and
// after both each function holds its right limit (the first's
// interpolation at s = 0 gives its v0), as the scalar walk's single step.
template <bool Tail, bool Windowed, bool Tame, int K, class D, class Fold>
HWY_INLINE void PlfStep(D d, const Fold& fold, const SimplePoint<hn::TFromD<D>, hn::TFromD<D>>* pts,
                        PlfLanes<K, D>& L, typename Fold::Acc& acc, int k,
                        hn::Vec<hn::RebindToSigned<D>> sum, hn::Mask<D> active, hn::Vec<D> a,
                        hn::Vec<D> b) {
  using T = hn::TFromD<D>;
  using DI = hn::RebindToSigned<D>;
  using V = hn::Vec<D>;
  using VI = hn::Vec<DI>;
  const DI di;
  Segment<V>& A = L.A[k];
  Segment<V>& B = L.B[k];
  V tn = A.t1;
  if constexpr (Tail) tn = hn::IfThenElse(active, tn, L.t[k]);
  const V other = SegmentValue<Tame>(d, B, tn);
  const V own = hn::IfThenElse(hn::Eq(A.t0, hn::Set(d, -std::numeric_limits<T>::infinity())),
                               hn::Zero(d), A.v1);
  acc = FoldPiece<Windowed, Tame>(d, fold, acc, L.t[k], tn, L.av[k], own, L.bv[k], other, A, B, a, b);
  // Right limits at tn: A's stored value, B's interpolated one; A's point
  // becomes its segment's left end and its next point is gathered.
  const VI stride = hn::Set(di, static_cast<hn::TFromD<DI>>(kIndexStep<T>));
  V nT, nV;
  if constexpr (Tail) {
    const auto m = hn::RebindMask(di, active);
    L.av[k] = hn::IfThenElse(active, A.v1, L.av[k]);
    L.bv[k] = hn::IfThenElse(active, other, L.bv[k]);
    L.t[k] = tn;
    A.t0 = hn::IfThenElse(active, A.t1, A.t0);
    A.v0 = hn::IfThenElse(active, A.v1, A.v0);
    L.ai[k] = hn::Add(L.ai[k], hn::IfThenElseZero(m, stride));
    GatherPoints(d, pts, L.ai[k], nT, nV);
    A.t1 = hn::IfThenElse(active, nT, A.t1);
    A.v1 = hn::IfThenElse(active, nV, A.v1);
  } else {
    (void)active;
    L.av[k] = A.v1;
    L.bv[k] = other;
    L.t[k] = tn;
    A.t0 = A.t1;
    A.v0 = A.v1;
    L.ai[k] = hn::Add(L.ai[k], stride);
    GatherPoints(d, pts, L.ai[k], nT, nV);
    A.t1 = nT;
    A.v1 = nV;
  }
  // B's next point first: swap (B's index is the sum's rest).
  const auto swap = hn::Lt(B.t1, A.t1);
  const Segment<V> a0 = A;
  A.t0 = hn::IfThenElse(swap, B.t0, A.t0);
  A.v0 = hn::IfThenElse(swap, B.v0, A.v0);
  A.t1 = hn::IfThenElse(swap, B.t1, A.t1);
  A.v1 = hn::IfThenElse(swap, B.v1, A.v1);
  B.t0 = hn::IfThenElse(swap, a0.t0, B.t0);
  B.v0 = hn::IfThenElse(swap, a0.v0, B.v0);
  B.t1 = hn::IfThenElse(swap, a0.t1, B.t1);
  B.v1 = hn::IfThenElse(swap, a0.v1, B.v1);
  const V av0 = L.av[k];
  L.av[k] = hn::IfThenElse(swap, L.bv[k], av0);
  L.bv[k] = hn::IfThenElse(swap, av0, L.bv[k]);
  L.ai[k] = hn::IfThenElse(hn::RebindMask(di, swap), hn::Sub(sum, L.ai[k]), L.ai[k]);
}

// K vectors of N lanes in lockstep over one group of K * N pairs (see
// WalkGroup of the PCF walk); leaves each lane's t, A(t+), B(t+),
// accumulator and the index of A's sentinel in the outputs.
template <int K, bool Windowed, bool Tame, typename T, std::size_t N, class Fold>
HWY_INLINE void PlfWalkGroup(const Fold& fold, const SimplePoint<T, T>* pts,
                             const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* fStart,
                             const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* gStart,
                             const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* steps,
                             std::uint32_t minSteps, std::uint32_t maxSteps, T wa, T wb,
                             const typename Fold::Acc* init, T* tOut, T* avOut, T* bvOut,
                             hn::TFromD<hn::RebindToSigned<DT<T, N>>>* aiOut,
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
  // A's plus B's index = fStart + gStart + (steps so far) * kIndexStep in
  // every lane while all lanes walk.
  HWY_ALIGN TI sumStart[K * N];
  for (int k = 0; k < K; ++k) {
    const VI fi = hn::LoadU(di, fStart + k * N);
    const VI gi = hn::LoadU(di, gStart + k * N);
    hn::Store(hn::Add(fi, gi), di, sumStart + k * N);
    Segment<V> f, g;
    GatherPoints(d, pts, fi, f.t1, f.v1);
    GatherPoints(d, pts, gi, g.t1, g.v1);
    f.t0 = g.t0 = ninf;
    f.v0 = g.v0 = hn::Zero(d);
    const auto swap = hn::Lt(g.t1, f.t1);
    L.A[k] = f;
    L.B[k] = g;
    L.A[k].t1 = hn::IfThenElse(swap, g.t1, f.t1);
    L.A[k].v1 = hn::IfThenElse(swap, g.v1, f.v1);
    L.B[k].t1 = hn::IfThenElse(swap, f.t1, g.t1);
    L.B[k].v1 = hn::IfThenElse(swap, f.v1, g.v1);
    L.ai[k] = hn::IfThenElse(hn::RebindMask(di, swap), gi, fi);
    L.t[k] = L.A[k].t1;  // min_value(f0.t, g0.t)
    L.av[k] = hn::Zero(d);
    L.bv[k] = hn::Zero(d);
    acc[k] = init ? init[k] : fold.Init();
  }
  const auto all = hn::FirstN(d, N);
  std::uint32_t s = 0;
  for (; s < minSteps; ++s) {
    const VI consumed = hn::Set(di, static_cast<TI>((s + 1) * kIndexStep<T>));
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k) {
      const VI sum = hn::Add(hn::Load(di, sumStart + k * N), consumed);
      PlfStep<false, Windowed, Tame>(d, fold, pts, L, acc[k], k, sum, all, a, b);
    }
  }
  for (; s < maxSteps; ++s) {
    const VI sv = hn::Set(di, static_cast<TI>(s));
    // Unrolled too: a loop over chains with a variable index would keep
    // every chain's state in memory for the main loop as well (float32 L1
    // 1.25x slower on AVX-512).
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k) {
      const VI st = hn::LoadU(di, steps + k * N);
      const auto live = hn::Lt(sv, st);
      // A lane that has stopped consumed all its steps' points.
      VI done = hn::IfThenElse(live, hn::Add(sv, hn::Set(di, TI(1))), st);
      if constexpr (kIndexStep<T> == 2) done = hn::Add(done, done);
      const VI sum = hn::Add(hn::Load(di, sumStart + k * N), done);
      PlfStep<true, Windowed, Tame>(d, fold, pts, L, acc[k], k, sum, hn::RebindMask(d, live), a, b);
    }
  }
  for (int k = 0; k < K; ++k) {
    hn::StoreU(L.t[k], d, tOut + k * N);
    hn::StoreU(L.av[k], d, avOut + k * N);
    hn::StoreU(L.bv[k], d, bvOut + k * N);
    hn::StoreU(L.ai[k], di, aiOut + k * N);
    accOut[k] = acc[k];
  }
}

// Every pair of the batch, in groups of K * N (the last group padded with
// copies of its last pair, whose results are dropped). carry: see
// walk_plf_pairs_simd.
template <int K, std::size_t N, bool Windowed, bool Tame, typename T, class Op, class Fold>
void PlfWalkBatch(const PairBatch<T>& batch, const Window<T>& w, const Op& op, const Fold& fold,
                  ScalarAcc<Op>* carry) {
  using TI = hn::TFromD<hn::RebindToSigned<DT<T, N>>>;
  constexpr std::size_t G = K * N;
  HWY_ALIGN TI fs[G];
  HWY_ALIGN TI gs[G];
  HWY_ALIGN TI st[G];
  HWY_ALIGN TI aiEnd[G];
  HWY_ALIGN T tl[G];
  HWY_ALIGN T fvl[G];
  HWY_ALIGN T gvl[G];
  ScalarAcc<Op> accl[G];
  typename Fold::Acc init[K];
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
      if (carry) accl[l] = carry[k];
    }
    if (carry) {
      for (int k = 0; k < K; ++k) init[k] = fold.Load(accl + k * N);
    }
    PlfWalkGroup<K, Windowed, Tame, T, N>(fold, batch.points, fs, gs, st, minSteps, maxSteps, w.a,
                                          w.b, carry ? init : nullptr, tl, fvl, gvl, aiEnd, acc);
    for (int k = 0; k < K; ++k) fold.Extract(acc[k], accl + k * N);
    // The unbounded last piece [t, +inf), both constant, and the
    // finalisation, with PlfPairWalk's code (A and B in the roles of f and
    // g: no bit changes): each function's sentinel holds its last value.
    for (std::size_t l = 0; l < n; ++l) {
      const std::size_t k = first + l;
      const TI bEnd = fs[l] + gs[l] + static_cast<TI>(batch.steps[k]) * kIndexStep<T> - aiEnd[l];
      const SimplePoint<T, T>* aSentinel = batch.points + aiEnd[l] / kIndexStep<T>;
      const SimplePoint<T, T>* bSentinel = batch.points + bEnd / kIndexStep<T>;
      const auto a = detail::plf_fold_piece<true>(accl[l], op, tl[l], inf, fvl[l], fvl[l], gvl[l],
                                                  gvl[l], aSentinel, 1u, 1u, bSentinel, 1u, 1u,
                                                  w.a, w.b);
      if (carry) {
        carry[k] = a;
      } else {
        batch.out[k] = op.finalize(a);
      }
    }
  }
}

// Vectors walked in lockstep by the PLF walk (4: on AVX2, 1.1-1.4x faster
// than 2; on AVX-512 as fast or faster).
#ifndef MPCF_SIMD_PLF_CHAINS
#define MPCF_SIMD_PLF_CHAINS 4
#endif
constexpr int kPlfChains = MPCF_SIMD_PLF_CHAINS;
// The general path (values or times beyond max / 4: rare) in one chain, which
// keeps its code, and the build's time and memory, small.
constexpr int kPlfGeneralChains = 1;

// The four paths of an operation: windowed or not, tame or not (the folds
// drop their halvings when tame and their tests on the tame whole line).
template <template <typename, std::size_t, bool, bool> class Fold, std::size_t N, typename T,
          class Op>
void PlfWalkPaths(const PairBatch<T>& b, const Window<T>& w, const Op& op, bool tame,
                  ScalarAcc<Op>* carry) {
  if (w.is_whole_line()) {
    if (tame) {
      PlfWalkBatch<kPlfChains, N, false, true>(b, w, op, Fold<T, N, true, true>(op), carry);
    } else {
      PlfWalkBatch<kPlfGeneralChains, N, false, false>(b, w, op, Fold<T, N, false, false>(op),
                                                       carry);
    }
  } else if (tame) {
    PlfWalkBatch<kPlfChains, N, true, true>(b, w, op, Fold<T, N, true, false>(op), carry);
  } else {
    PlfWalkBatch<kPlfGeneralChains, N, true, false>(b, w, op, Fold<T, N, false, false>(op), carry);
  }
}

// The entry points of this target (one per operation).
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationL1Dist<T>& op, bool tame,
             ScalarAcc<PlfOperationL1Dist<T>>* carry) {
  PlfWalkPaths<PlfFoldL1, LanesFor<T>()>(b, w, op, tame, carry);
}
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationL2Dist<T>& op, bool tame,
             ScalarAcc<PlfOperationL2Dist<T>>* carry) {
  PlfWalkPaths<PlfFoldL2, LanesFor<T>()>(b, w, op, tame, carry);
}
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationLpDist<T>& op, bool tame,
             ScalarAcc<PlfOperationLpDist<T>>* carry) {
  PlfWalkPaths<PlfFoldLp, LanesFor<T>()>(b, w, op, tame, carry);
}
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationLinfDist<T>& op,
             bool tame,
             ScalarAcc<PlfOperationLinfDist<T>>* carry) {
  PlfWalkPaths<PlfFoldLinf, LanesFor<T>()>(b, w, op, tame, carry);
}
template <typename T>
void PlfWalk(const PairBatch<T>& b, const Window<T>& w, const PlfOperationL2InnerProduct<T>& op,
             bool tame,
             ScalarAcc<PlfOperationL2InnerProduct<T>>* carry) {
  PlfWalkPaths<PlfFoldInner, LanesFor<double>()>(b, w, op, tame, carry);
}

}  // namespace HWY_NAMESPACE
}  // namespace mpcf
HWY_AFTER_NAMESPACE();
#endif  // x86-64 and aarch64 SIMD targets

#endif  // per-target include guard
