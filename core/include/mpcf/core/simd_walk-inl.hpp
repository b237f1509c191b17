// The per-target kernels of the SIMD CPU walk, included once per Highway
// target by core/src/simd_walk.cpp (hwy/foreach_target.h); see there.
// Internal: include only from simd_walk.cpp.

// Per-target include guard (Highway's pattern).
#if defined(MPCF_CORE_SIMD_WALK_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPCF_CORE_SIMD_WALK_INL_HPP_
#undef MPCF_CORE_SIMD_WALK_INL_HPP_
#else
#define MPCF_CORE_SIMD_WALK_INL_HPP_
#endif

#include <hwy/highway.h>

#include "mpcf/core/simd_walk.hpp"

// Kernels for the SIMD targets of x86-64 (SSE4, AVX2, AVX-512) and aarch64
// (NEON) only (x86-64's static baseline target, HWY_SCALAR or HWY_EMU128, is
// the scalar walk's business).
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || \
    HWY_TARGET == HWY_NEON
HWY_BEFORE_NAMESPACE();
namespace mpcf {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#ifndef MPCF_SIMD_AVX3_BYTES
#define MPCF_SIMD_AVX3_BYTES 64
#endif
#if HWY_TARGET == HWY_AVX3
#define MPCF_SIMD_BYTES MPCF_SIMD_AVX3_BYTES
#else
#define MPCF_SIMD_BYTES HWY_MAX_BYTES
#endif

// Vectors of the walk: N lanes of T (times, values) and of T's signed
// integer (point indices), and N lanes of the accumulator's type.
template <typename T, std::size_t N>
using DT = hn::Simd<T, N, 0>;

#if HWY_ARCH_X86
// Lanes 0, 2 (Even) or 1, 3 (Odd) of each 128-bit block of a, then of b:
// [a0 a2 b0 b2] per block (one shufps: the only raw intrinsics here, for
// an in-block two-source shuffle Highway 1.0 does not name).
#define MPCF_SHUFFLE_BLOCKS(V, CALL)                                                  \
  HWY_INLINE V EvenOfBlocks(V a, V b) { return V{CALL(a.raw, b.raw, 0x88)}; }     \
  HWY_INLINE V OddOfBlocks(V a, V b) { return V{CALL(a.raw, b.raw, 0xDD)}; }
MPCF_SHUFFLE_BLOCKS(hn::Vec128<float>, _mm_shuffle_ps)
#if HWY_TARGET <= HWY_AVX2
MPCF_SHUFFLE_BLOCKS(hn::Vec256<float>, _mm256_shuffle_ps)
#endif
#if HWY_TARGET <= HWY_AVX3
MPCF_SHUFFLE_BLOCKS(hn::Vec512<float>, _mm512_shuffle_ps)
#endif
#undef MPCF_SHUFFLE_BLOCKS

// Points of a float32 batch are gathered as 64-bit (t, v) pairs (hardware
// gathers) and split into times and values; float64 points are loaded lane
// by lane, 16 bytes each, and unpacked (index in doubles: 2 per point). On
// AMD Zen 4, where a gathered element costs about 2.3 cycles, that load is
// 1.3x faster than two gathers of 8-byte elements; for 8-byte float32
// points the gathers are as fast (AVX2) or faster (AVX-512).
template <std::size_t N>
HWY_INLINE void GatherPoints(DT<float, N> d, const SimplePoint<float, float>* pts,
                             hn::Vec<DT<std::int32_t, N>> idx, hn::Vec<DT<float, N>>& t,
                             hn::Vec<DT<float, N>>& v) {
  const std::int64_t* base = reinterpret_cast<const std::int64_t*>(pts);
  if constexpr (N * 4 == HWY_MAX_BYTES || (N * 4 >= 16 && N * 4 == MPCF_SIMD_BYTES)) {
    // Full vectors: the indices interleaved with zeros per block are the
    // 64-bit indices of lanes {0, 1} and {2, 3} of each block; the two
    // gathers' (t, v) pairs, shuffled per block, give the lanes in order.
    const DT<std::int32_t, N> di;
    const hn::Repartition<std::int64_t, DT<std::int32_t, N>> d64;
    const auto zero = hn::Zero(di);
    const auto lo = hn::GatherIndex(d64, base, hn::BitCast(d64, hn::InterleaveLower(di, idx, zero)));
    const auto hi = hn::GatherIndex(d64, base, hn::BitCast(d64, hn::InterleaveUpper(di, idx, zero)));
    t = EvenOfBlocks(hn::BitCast(d, lo), hn::BitCast(d, hi));
    v = OddOfBlocks(hn::BitCast(d, lo), hn::BitCast(d, hi));
  } else {
    // Half vectors (float32 inner products: as many lanes as doubles).
    static_assert(N * 8 <= HWY_MAX_BYTES);
    const DT<std::int64_t, N> d64;
    const auto p = hn::GatherIndex(d64, base, hn::PromoteTo(d64, idx));
    const hn::Repartition<float, DT<std::int64_t, N>> d2;
    const auto f2 = hn::BitCast(d2, p);
    t = hn::LowerHalf(d, hn::ConcatEven(d2, f2, f2));
    v = hn::LowerHalf(d, hn::ConcatOdd(d2, f2, f2));
  }
}
#else  // Arm
// No gather instruction (NEON): a lane's point is one 8-byte load of
// (t, v); two points make a vector (t0 v0 t1 v1), and the even and odd
// lanes of two such vectors (UZP1, UZP2) are the times and the values.
template <std::size_t N>
HWY_INLINE void GatherPoints(DT<float, N> d, const SimplePoint<float, float>* pts,
                             hn::Vec<DT<std::int32_t, N>> idx, hn::Vec<DT<float, N>>& t,
                             hn::Vec<DT<float, N>>& v) {
  static_assert(N == 4 || N == 2, "full 128-bit vectors, or halves (float32 inner products)");
  HWY_ALIGN std::int32_t ix[N];
  hn::Store(idx, DT<std::int32_t, N>(), ix);
  const hn::Full128<float> d4;
  const hn::Full64<float> d2;
  auto two = [&](std::size_t l) {
    return hn::Combine(d4, hn::LoadU(d2, &pts[ix[l + 1]].t), hn::LoadU(d2, &pts[ix[l]].t));
  };
  if constexpr (N == 4) {
    const auto lo = two(0);
    const auto hi = two(2);
    t = hn::ConcatEven(d4, hi, lo);
    v = hn::ConcatOdd(d4, hi, lo);
  } else {
    const auto p = two(0);
    t = hn::LowerHalf(d, hn::ConcatEven(d4, p, p));
    v = hn::LowerHalf(d, hn::ConcatOdd(d4, p, p));
  }
}
#endif  // HWY_ARCH_X86
template <std::size_t N>
HWY_INLINE void GatherPoints(DT<double, N> d, const SimplePoint<double, double>* pts,
                             hn::Vec<DT<std::int64_t, N>> idx, hn::Vec<DT<double, N>>& t,
                             hn::Vec<DT<double, N>>& v) {
  const double* base = &pts[0].t;
  // Point by point: one 128-bit load of (t, v) per lane; even lanes'
  // points in a, odd lanes' in b, block by block; unpacking gives t and v.
  HWY_ALIGN std::int64_t ix[N];
  hn::Store(idx, hn::RebindToSigned<DT<double, N>>(), ix);
  const hn::Full128<double> d2;
  auto p = [&](std::size_t l) { return hn::LoadU(d2, base + ix[l]); };
  hn::Vec<DT<double, N>> a, b;
  if constexpr (N == 2) {
    a = p(0);
    b = p(1);
  } else if constexpr (N == 4) {
    a = hn::Combine(d, p(2), p(0));
    b = hn::Combine(d, p(3), p(1));
  } else {
    const hn::Simd<double, 4, 0> d4;
    a = hn::Combine(d, hn::Combine(d4, p(6), p(4)), hn::Combine(d4, p(2), p(0)));
    b = hn::Combine(d, hn::Combine(d4, p(7), p(5)), hn::Combine(d4, p(3), p(1)));
  }
  t = hn::InterleaveLower(d, a, b);
  v = hn::InterleaveUpper(d, a, b);
}
// Index units per point.
template <typename T>
constexpr int kIndexStep = sizeof(T) == 4 ? 1 : 2;

// min_value(tn, b) - max_value(t, a), as clipped_width<true> computes it.
template <class D, class V = hn::Vec<D>>
HWY_INLINE V ClippedWidth(D, V t, V tn, V a, V b) {
  const V r = hn::IfThenElse(hn::Lt(b, tn), b, tn);
  const V l = hn::IfThenElse(hn::Lt(t, a), a, t);
  return hn::Sub(r, l);
}

// ---- folds: one rectangle [t, tn) with values fV, gV into the lanes'
// accumulators; Extract hands out lane k's accumulator as the scalar
// operation holds it. ----

// L1 distance. Unchecked: acc + (tn - t) * |fV - gV| (see
// unchecked_fold_allowed); else fold_sum with the window.
template <typename T, std::size_t N, bool Unchecked>
struct FoldL1 {
  using D = DT<T, N>;
  using V = hn::Vec<D>;
  struct Acc {
    V s;
  };
  V a, b;
  FoldL1(const Window<T>& w, const OperationL1Dist<T>&) : a(hn::Set(D(), w.a)), b(hn::Set(D(), w.b)) {}
  HWY_INLINE Acc Init() const { return {hn::Zero(D())}; }
  HWY_INLINE Acc Fold(Acc acc, V t, V tn, V fv, V gv) const {
    const D d;
    const V x = hn::Abs(hn::Sub(fv, gv));
    if constexpr (Unchecked) {
      return {hn::Add(acc.s, hn::Mul(hn::Sub(tn, t), x))};
    } else {
      const V w = ClippedWidth(d, t, tn, a, b);
      const auto keep = hn::And(hn::Gt(w, hn::Zero(d)), hn::Ne(x, hn::Zero(d)));
      return {hn::IfThenElse(keep, hn::Add(acc.s, hn::Mul(w, x)), acc.s)};
    }
  }
  HWY_INLINE Acc Load(const T* in) const { return {hn::LoadU(D(), in)}; }
  HWY_INLINE void Extract(const Acc& acc, T* out) const { hn::StoreU(acc.s, D(), out); }
  // MonotoneFold: the lanes whose partial value is above their bound.
  static constexpr bool kMonotone = true;
  HWY_INLINE auto Above(const Acc& acc, V bound) const { return hn::Gt(acc.s, bound); }
};

// L-infinity distance: the largest |fV - gV| over rectangles of positive
// clipped width.
template <typename T, std::size_t N>
struct FoldLinf {
  using D = DT<T, N>;
  using V = hn::Vec<D>;
  struct Acc {
    V m;
  };
  V a, b;
  FoldLinf(const Window<T>& w, const OperationLinfDist<T>&) : a(hn::Set(D(), w.a)), b(hn::Set(D(), w.b)) {}
  HWY_INLINE Acc Init() const { return {hn::Zero(D())}; }
  HWY_INLINE Acc Fold(Acc acc, V t, V tn, V fv, V gv) const {
    const D d;
    const V x = hn::Abs(hn::Sub(fv, gv));
    const V w = ClippedWidth(d, t, tn, a, b);
    const auto keep = hn::And(hn::Gt(w, hn::Zero(d)), hn::Gt(x, acc.m));
    return {hn::IfThenElse(keep, x, acc.m)};
  }
  HWY_INLINE Acc Load(const T* in) const { return {hn::LoadU(D(), in)}; }
  HWY_INLINE void Extract(const Acc& acc, T* out) const { hn::StoreU(acc.m, D(), out); }
  static constexpr bool kMonotone = true;
  HWY_INLINE auto Above(const Acc& acc, V bound) const { return hn::Gt(acc.m, bound); }
};

// detail::scaled_fold lane by lane: a rectangle of width w and difference
// x into the scaled power sums (scale, sum); pow_of_ratio(r) gives r^p.
// Finite: w, x and the sums are finite (the PLF walk's tame path), so the
// tests for +inf are left out (x equal to the scale gives ratio 1 by the
// division itself).
template <bool Finite = false, class D, class V, class Pow>
HWY_INLINE void ScaledFoldLanes(D d, V& scale, V& sum, V w, V x, Pow pow_of_ratio) {
  using T = hn::TFromD<D>;
  const auto keep = hn::And(hn::Gt(w, hn::Zero(d)), hn::Ne(x, hn::Zero(d)));
  const auto up = hn::Gt(x, scale);
  // up ? scale / x : x / scale, one division of the same operands; x
  // equal to the scale gives ratio 1, also +inf against +inf (as
  // detail::scaled_fold: inf / inf would be NaN).
  V r = hn::Div(hn::IfThenElse(up, scale, x), hn::IfThenElse(up, x, scale));
  V sumScaled, term;
  if constexpr (Finite) {
    r = pow_of_ratio(r);
    sumScaled = hn::Mul(sum, r);
    term = hn::Mul(w, r);
  } else {
    const V inf = hn::Set(d, std::numeric_limits<T>::infinity());
    r = pow_of_ratio(hn::IfThenElse(hn::Eq(x, scale), hn::Set(d, T(1)), r));
    sumScaled = hn::IfThenElse(hn::Eq(sum, inf), inf, hn::Mul(sum, r));
    term = hn::IfThenElse(hn::Eq(w, inf), inf, hn::Mul(w, r));
  }
  const V nsum = hn::IfThenElse(up, hn::Add(sumScaled, w), hn::Add(sum, term));
  const V nscale = hn::IfThenElse(up, x, scale);
  scale = hn::IfThenElse(keep, nscale, scale);
  sum = hn::IfThenElse(keep, nsum, sum);
}

// Scaled power sums of N lanes from and to their scalar form.
template <class D, class V = hn::Vec<D>>
struct ScaledLanes {
  V scale;
  V sum;
};
template <class D>
HWY_INLINE ScaledLanes<D> LoadScaled(const ScaledPowerSum<hn::TFromD<D>>* in) {
  using T = hn::TFromD<D>;
  constexpr std::size_t N = hn::MaxLanes(D());
  HWY_ALIGN T s[N];
  HWY_ALIGN T u[N];
  for (std::size_t k = 0; k < N; ++k) {
    s[k] = in[k].scale;
    u[k] = in[k].sum;
  }
  return {hn::Load(D(), s), hn::Load(D(), u)};
}
template <class D, class V = hn::Vec<D>>
HWY_INLINE void ExtractScaled(V scale, V sum, ScaledPowerSum<hn::TFromD<D>>* out) {
  using T = hn::TFromD<D>;
  constexpr std::size_t N = hn::MaxLanes(D());
  HWY_ALIGN T s[N];
  HWY_ALIGN T u[N];
  hn::Store(scale, D(), s);
  hn::Store(sum, D(), u);
  for (std::size_t k = 0; k < N; ++k) out[k] = ScaledPowerSum<T>{s[k], u[k]};
}

// Lp distances as scaled power sums (detail::scaled_fold), lane by lane the
// same operations. Square: (ratio)^2 = r * r (p = 2); else pow(r, p) per
// lane with the C library's pow, as the scalar walk calls it.
template <typename T, std::size_t N, bool Square>
struct FoldScaled {
  using D = DT<T, N>;
  using V = hn::Vec<D>;
  using ScalarOp = std::conditional_t<Square, OperationL2Dist<T>, OperationLpDist<T>>;
  struct Acc {
    V scale;
    V sum;
  };
  V a, b;
  T p;
  FoldScaled(const Window<T>& w, const ScalarOp& op) : a(hn::Set(D(), w.a)), b(hn::Set(D(), w.b)) {
    if constexpr (Square) {
      p = T(2);
      (void)op;
    } else {
      p = op.p;
    }
  }
  HWY_INLINE Acc Init() const { return {hn::Zero(D()), hn::Zero(D())}; }
  HWY_INLINE Acc Fold(Acc acc, V t, V tn, V fv, V gv) const {
    const D d;
    const V x = hn::Abs(hn::Sub(fv, gv));
    const V w = ClippedWidth(d, t, tn, a, b);
    const T pp = p;
    ScaledFoldLanes(d, acc.scale, acc.sum, w, x, [pp](V r) {
      if constexpr (Square) {
        (void)pp;
        return hn::Mul(r, r);
      } else {
        HWY_ALIGN T lanes[N];
        hn::Store(r, D(), lanes);
        for (std::size_t k = 0; k < N; ++k) lanes[k] = detail::power(lanes[k], pp);
        return hn::Load(D(), lanes);
      }
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

// L2 inner product, accumulated in double (float32 data promoted lane by
// lane: the products are exact or correctly rounded in double, as in the
// scalar walk).
template <typename T, std::size_t N, bool Unchecked>
struct FoldInner {
  using D = DT<T, N>;
  using DD = DT<double, N>;
  using V = hn::Vec<D>;
  using VD = hn::Vec<DD>;
  struct Acc {
    VD s;
  };
  V a, b;
  FoldInner(const Window<T>& w, const OperationL2InnerProduct<T>&)
      : a(hn::Set(D(), w.a)), b(hn::Set(D(), w.b)) {}
  static HWY_INLINE VD Wide(V v) {
    if constexpr (sizeof(T) == 4) {
      return hn::PromoteTo(DD(), v);
    } else {
      return v;
    }
  }
  HWY_INLINE Acc Init() const { return {hn::Zero(DD())}; }
  HWY_INLINE Acc Fold(Acc acc, V t, V tn, V fv, V gv) const {
    const VD x = hn::Mul(Wide(fv), Wide(gv));
    if constexpr (Unchecked) {
      return {hn::Add(acc.s, hn::Mul(Wide(hn::Sub(tn, t)), x))};
    } else {
      // width > 0 tested in double: the promotion keeps the sign and zero.
      const VD w = Wide(ClippedWidth(D(), t, tn, a, b));
      const auto keep = hn::And(hn::Gt(w, hn::Zero(DD())), hn::Ne(x, hn::Zero(DD())));
      return {hn::IfThenElse(keep, hn::Add(acc.s, hn::Mul(w, x)), acc.s)};
    }
  }
  HWY_INLINE Acc Load(const double* in) const { return {hn::LoadU(DD(), in)}; }
  HWY_INLINE void Extract(const Acc& acc, double* out) const { hn::StoreU(acc.s, DD(), out); }
};

// K vectors of N lanes in lockstep over one group of K * N pairs: fi, gi
// the index of each lane's next point of f and g (in index units), steps the
// lane's step count. Leaves each lane's state after its last step in t, fv,
// gv and acc. Bounded (Fold::kMonotone): every 4 steps, once every lane's
// accumulator is above its bound (bounds, K * N), stops, leaves the
// accumulators alone in accOut and returns true.
template <int K, typename T, std::size_t N, bool Bounded = false, class Fold>
HWY_INLINE bool WalkGroup(const Fold& fold, const SimplePoint<T, T>* pts,
                          const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* fStart,
                          const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* gStart,
                          const hn::TFromD<hn::RebindToSigned<DT<T, N>>>* steps,
                          std::uint32_t minSteps, std::uint32_t maxSteps,
                          const typename Fold::Acc* init, T* tOut, T* fvOut, T* gvOut,
                          typename Fold::Acc* accOut, const T* bounds = nullptr) {
  using D = DT<T, N>;
  using DI = hn::RebindToSigned<D>;
  using TI = hn::TFromD<DI>;
  using V = hn::Vec<D>;
  using VI = hn::Vec<DI>;
  const D d;
  const DI di;
  V fT[K], fV[K], gT[K], gV[K], t[K];
  VI fi[K];
  typename Fold::Acc acc[K];
  // fi + gi = fStart + gStart + (steps so far) * kIndexStep in every lane
  // while all lanes walk, so g's index is not kept: sumStart holds
  // fStart + gStart.
  HWY_ALIGN TI sumStart[K * N];
  for (int k = 0; k < K; ++k) {
    fi[k] = hn::LoadU(di, fStart + k * N);
    const VI gi = hn::LoadU(di, gStart + k * N);
    hn::Store(hn::Add(fi[k], gi), di, sumStart + k * N);
    GatherPoints(d, pts, fi[k], fT[k], fV[k]);
    GatherPoints(d, pts, gi, gT[k], gV[k]);
    t[k] = hn::IfThenElse(hn::Lt(gT[k], fT[k]), gT[k], fT[k]);  // min_value(f0.t, g0.t)
    acc[k] = init ? init[k] : fold.Init();
  }
  V bound[K];
  if constexpr (Bounded) {
    for (int k = 0; k < K; ++k) bound[k] = hn::LoadU(d, bounds + k * N);
  }
  // Bounded: whether every lane is above its bound after step s (tested
  // after every 4th step); the accumulators then go out as they are.
  auto stop_after = [&](std::uint32_t step) {
    if constexpr (Bounded) {
      if ((step & 3u) != 3u) return false;
      for (int k = 0; k < K; ++k) {
        if (!hn::AllTrue(d, fold.Above(acc[k], bound[k]))) return false;
      }
      for (int k = 0; k < K; ++k) accOut[k] = acc[k];
      return true;
    } else {
      (void)step;
      return false;
    }
  };
  std::uint32_t s = 0;
  for (; s < minSteps; ++s) {
    const VI consumed = hn::Set(di, static_cast<TI>((s + 1) * kIndexStep<T>));
    for (int k = 0; k < K; ++k) {
      const auto takeF = hn::Le(fT[k], gT[k]);
      const V tn = hn::IfThenElse(takeF, fT[k], gT[k]);
      acc[k] = fold.Fold(acc[k], t[k], tn, fV[k], gV[k]);
      t[k] = tn;
      const auto mi = hn::RebindMask(di, takeF);
      VI minusStep = hn::VecFromMask(di, mi);  // -1 where f is consumed
      if constexpr (kIndexStep<T> == 2) minusStep = hn::Add(minusStep, minusStep);
      fi[k] = hn::Sub(fi[k], minusStep);
      const VI gi = hn::Sub(hn::Add(hn::Load(di, sumStart + k * N), consumed), fi[k]);
      V nT, nV;
      GatherPoints(d, pts, hn::IfThenElse(mi, fi[k], gi), nT, nV);
      fT[k] = hn::IfThenElse(takeF, nT, fT[k]);
      fV[k] = hn::IfThenElse(takeF, nV, fV[k]);
      gT[k] = hn::IfThenElse(takeF, gT[k], nT);
      gV[k] = hn::IfThenElse(takeF, gV[k], nV);
    }
    if (stop_after(s)) return true;
  }
  // Lanes with fewer steps stop: their rectangle becomes [t, t) (width 0:
  // every fold leaves the accumulator as it is) and nothing is consumed.
  if (s < maxSteps) {
    const VI stride = hn::Set(di, kIndexStep<T>);
    const VI consumed = hn::Set(di, static_cast<TI>(s * kIndexStep<T>));
    VI gi[K];
    for (int k = 0; k < K; ++k) {
      gi[k] = hn::Sub(hn::Add(hn::Load(di, sumStart + k * N), consumed), fi[k]);
    }
    for (; s < maxSteps; ++s) {
      const VI sv = hn::Set(di, static_cast<TI>(s));
      for (int k = 0; k < K; ++k) {
        const auto active = hn::RebindMask(d, hn::Lt(sv, hn::LoadU(di, steps + k * N)));
        const auto fFirst = hn::Le(fT[k], gT[k]);
        const auto takeF = hn::And(fFirst, active);
        const auto takeG = hn::AndNot(fFirst, active);
        const V tn = hn::IfThenElse(active, hn::IfThenElse(fFirst, fT[k], gT[k]), t[k]);
        acc[k] = fold.Fold(acc[k], t[k], tn, fV[k], gV[k]);
        t[k] = tn;
        const auto mf = hn::RebindMask(di, takeF);
        const auto mg = hn::RebindMask(di, takeG);
        fi[k] = hn::Add(fi[k], hn::IfThenElseZero(mf, stride));
        gi[k] = hn::Add(gi[k], hn::IfThenElseZero(mg, stride));
        V nT, nV;
        GatherPoints(d, pts, hn::IfThenElse(mf, fi[k], gi[k]), nT, nV);
        fT[k] = hn::IfThenElse(takeF, nT, fT[k]);
        fV[k] = hn::IfThenElse(takeF, nV, fV[k]);
        gT[k] = hn::IfThenElse(takeG, nT, gT[k]);
        gV[k] = hn::IfThenElse(takeG, nV, gV[k]);
      }
      if (stop_after(s)) return true;
    }
  }
  for (int k = 0; k < K; ++k) {
    hn::StoreU(t[k], d, tOut + k * N);
    hn::StoreU(fV[k], d, fvOut + k * N);
    hn::StoreU(gV[k], d, gvOut + k * N);
    accOut[k] = acc[k];
  }
  return false;
}

// The accumulator a fold extracts, per lane.
template <class Op>
using ScalarAcc = op_acc_t<Op>;

// Every pair of the batch, in groups of K * N (the last group padded with
// copies of its last pair, whose results are dropped). carry: see
// walk_pairs_simd. batch.bound (Fold::kMonotone, no carry): a group whose
// every lane passes its bound stops there and hands out the partial values.
template <int K, std::size_t N, typename T, class Op, class Fold>
void WalkBatch(const PairBatch<T>& batch, const Window<T>& w, const Op& op, const Fold& fold,
               ScalarAcc<Op>* carry) {
  using TI = hn::TFromD<hn::RebindToSigned<DT<T, N>>>;
  constexpr std::size_t G = K * N;
  HWY_ALIGN TI fs[G];
  HWY_ALIGN TI gs[G];
  HWY_ALIGN TI st[G];
  HWY_ALIGN T tl[G];
  HWY_ALIGN T fvl[G];
  HWY_ALIGN T gvl[G];
  HWY_ALIGN T bl[G];
  ScalarAcc<Op> accl[G];
  typename Fold::Acc init[K];
  typename Fold::Acc acc[K];
  const T inf = std::numeric_limits<T>::infinity();
  constexpr bool kCanStop = requires { Fold::kMonotone; };
  const bool bounded = kCanStop && batch.bound && !carry;
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
      if (bounded) bl[l] = batch.bound[k];
    }
    if (carry) {
      for (int k = 0; k < K; ++k) init[k] = fold.Load(accl + k * N);
    }
    bool stopped = false;
    if constexpr (kCanStop) {
      if (bounded) {
        stopped = WalkGroup<K, T, N, true>(fold, batch.points, fs, gs, st, minSteps, maxSteps,
                                           nullptr, tl, fvl, gvl, acc, bl);
      }
    }
    if (!bounded) {
      WalkGroup<K, T, N>(fold, batch.points, fs, gs, st, minSteps, maxSteps,
                         carry ? init : nullptr, tl, fvl, gvl, acc);
    }
    for (int k = 0; k < K; ++k) fold.Extract(acc[k], accl + k * N);
    if (stopped) {  // every lane above its bound: its partial value
      for (std::size_t l = 0; l < n; ++l) batch.out[first + l] = op.finalize(accl[l]);
      continue;
    }
    // The unbounded last rectangle [t, +inf) and the finalisation, as
    // integrate_pair does them (PairWalk::accumulate with a carry).
    for (std::size_t l = 0; l < n; ++l) {
      const auto a = op.fold(accl[l], detail::clipped_width<true>(tl[l], inf, w.a, w.b),
                             op.integrand(fvl[l], gvl[l]));
      if (carry) {
        carry[first + l] = a;
      } else {
        batch.out[first + l] = op.finalize(a);
      }
    }
  }
}

// Lanes per vector: the widest vector of the target for the accumulator's
// type (float32 inner products: as many float lanes as double lanes).
#ifndef MPCF_SIMD_CHAINS
#define MPCF_SIMD_CHAINS 4
#endif
template <typename A>
constexpr std::size_t LanesFor() {
  return MPCF_SIMD_BYTES / sizeof(A);
}
// Independent vectors walked in lockstep.
constexpr int kChains = MPCF_SIMD_CHAINS;

// The entry points of this target (plain functions: one per operation).
template <typename T>
void Walk(const PairBatch<T>& b, const Window<T>& w, const OperationL1Dist<T>& op, bool unchecked,
          T* carry) {
  constexpr std::size_t N = LanesFor<T>();
  if (unchecked) {
    WalkBatch<kChains, N>(b, w, op, FoldL1<T, N, true>(w, op), carry);
  } else {
    WalkBatch<kChains, N>(b, w, op, FoldL1<T, N, false>(w, op), carry);
  }
}
template <typename T>
void Walk(const PairBatch<T>& b, const Window<T>& w, const OperationLinfDist<T>& op, bool,
          T* carry) {
  WalkBatch<kChains, LanesFor<T>()>(b, w, op, FoldLinf<T, LanesFor<T>()>(w, op), carry);
}
template <typename T>
void Walk(const PairBatch<T>& b, const Window<T>& w, const OperationL2Dist<T>& op, bool,
          ScaledPowerSum<T>* carry) {
  WalkBatch<kChains, LanesFor<T>()>(b, w, op, FoldScaled<T, LanesFor<T>(), true>(w, op), carry);
}
template <typename T>
void Walk(const PairBatch<T>& b, const Window<T>& w, const OperationLpDist<T>& op, bool,
          ScaledPowerSum<T>* carry) {
  WalkBatch<kChains, LanesFor<T>()>(b, w, op, FoldScaled<T, LanesFor<T>(), false>(w, op), carry);
}
// Float32 inner products: as many float lanes as double lanes.
template <typename T>
void Walk(const PairBatch<T>& b, const Window<T>& w, const OperationL2InnerProduct<T>& op,
          bool unchecked, double* carry) {
  constexpr std::size_t N = LanesFor<double>();
  if (unchecked) {
    WalkBatch<kChains, N>(b, w, op, FoldInner<T, N, true>(w, op), carry);
  } else {
    WalkBatch<kChains, N>(b, w, op, FoldInner<T, N, false>(w, op), carry);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace mpcf
HWY_AFTER_NAMESPACE();
#endif  // x86-64 and aarch64 SIMD targets

#endif  // per-target include guard
