// The per-target kernels of exact_sum_block (simd_exact_sum.hpp), included
// once per Highway target by core/src/simd_exact_sum.cpp
// (hwy/foreach_target.h). Internal: include only from there.

// Per-target include guard (Highway's pattern).
#if defined(MPCF_CORE_SIMD_EXACT_SUM_INL_HPP_) == defined(HWY_TARGET_TOGGLE)
#ifdef MPCF_CORE_SIMD_EXACT_SUM_INL_HPP_
#undef MPCF_CORE_SIMD_EXACT_SUM_INL_HPP_
#else
#define MPCF_CORE_SIMD_EXACT_SUM_INL_HPP_
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <hwy/highway.h>

#include "mpcf/core/simd_exact_sum.hpp"

// The x86 SIMD targets only, as for the walk (the static baseline target is
// the scalar path's business).
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
HWY_BEFORE_NAMESPACE();
namespace mpcf {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DD = hn::ScalableTag<double>;
using VD = hn::Vec<DD>;
static_assert(hn::MaxLanes(DD()) <= kExactSumReadSlack, "a vector reads past the slack");

// The grids of N sums (one per lane, or one broadcast).
struct LevelsV {
  VD m1, m2, m3, limit;
};

// exact_sum_add's flag for a term that is not finite or not below its limit.
HWY_INLINE std::uint32_t FlagOf(double x) {
  if (x != x) return ExactSum::kNaN;
  if (x == std::numeric_limits<double>::infinity()) return ExactSum::kPosInf;
  if (x == -std::numeric_limits<double>::infinity()) return ExactSum::kNegInf;
  return ExactSum::kOutOfRange;
}

// The terms x of the lanes rounded onto the three grids and added to the
// level sums: exact_sum_add's arithmetic, lane by lane (no fused
// multiply-add: the library is built with -ffp-contract=off). x must be
// finite and below the limit in every lane (0 in lanes left out).
HWY_INLINE void AddLanes(VD x, const LevelsV& g, VD& s1, VD& s2, VD& s3) {
  const VD q1 = hn::Sub(hn::Add(g.m1, x), g.m1);
  const VD r1 = hn::Sub(x, q1);
  const VD q2 = hn::Sub(hn::Add(g.m2, r1), g.m2);
  const VD r2 = hn::Sub(r1, q2);
  const VD q3 = hn::Sub(hn::Add(g.m3, r2), g.m3);
  s1 = hn::Add(s1, q1);
  s2 = hn::Add(s2, q2);
  s3 = hn::Add(s3, q3);
}

// The lanes whose term is not finite or not below the limit (NaN compares
// false): flag(lane, its flag) for each, and x with those lanes zeroed.
template <class Flag>
HWY_INLINE VD SetAsideBad(VD x, VD limit, Flag flag) {
  const DD d;
  const auto ok = hn::Lt(hn::Abs(x), limit);
  if (HWY_LIKELY(hn::AllTrue(d, ok))) return x;
  HWY_ALIGN double lanes[hn::MaxLanes(d)];
  hn::Store(x, d, lanes);
  for (std::size_t l = 0; l < hn::Lanes(d); ++l) {
    if (!(std::fabs(lanes[l]) < hn::GetLane(limit))) flag(l, FlagOf(lanes[l]));
  }
  return hn::IfThenElseZero(ok, x);
}

// SetAsideBad for per-lane limits, the lanes from `kept` on left out (0
// there, whatever their limit).
template <class Flag>
HWY_INLINE VD SetAsideBadLanes(VD x, VD limit, std::size_t kept, Flag flag) {
  const DD d;
  const auto ok = hn::Lt(hn::Abs(x), limit);
  if (HWY_LIKELY(hn::AllTrue(d, ok))) return x;
  HWY_ALIGN double lanes[hn::MaxLanes(d)];
  HWY_ALIGN double limits[hn::MaxLanes(d)];
  hn::Store(x, d, lanes);
  hn::Store(limit, d, limits);
  for (std::size_t l = 0; l < kept; ++l) {
    if (!(std::fabs(lanes[l]) < limits[l])) flag(l, FlagOf(lanes[l]));
  }
  return hn::IfThenElseZero(ok, x);
}

HWY_INLINE LevelsV Broadcast(const ExactSumLevels& g) {
  const DD d;
  return {hn::Set(d, g.m1), hn::Set(d, g.m2), hn::Set(d, g.m3), hn::Set(d, g.limit)};
}

// Row side: lanes along row rr of the block, one sum per (rr, c).
HWY_INLINE void BlockRows(const ExactSumBlock& b) {
  const DD d;
  const std::size_t N = hn::Lanes(d);
  const std::size_t L = ExactSum::kLevels;
  for (std::size_t rr = 0; rr < b.nr; ++rr) {
    const std::size_t count = b.rowCount[rr];
    if (count == 0) continue;
    const double* k = b.k + rr * b.ldk;
    for (std::size_t c = 0; c < b.r; ++c) {
      const LevelsV g = Broadcast(b.rowLevels[rr * b.rowLevelsStride + c]);
      const double* w = b.w + c * b.ldw;
      std::uint32_t& flags = b.rowFlags[rr * b.r + c];
      auto flag = [&](std::size_t, std::uint32_t f) { flags |= f; };
      VD s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
      std::size_t p = 0;
      for (; p + N <= count; p += N) {
        const VD x = SetAsideBad(hn::Mul(hn::LoadU(d, k + p), hn::LoadU(d, w + p)), g.limit, flag);
        AddLanes(x, g, s1, s2, s3);
      }
      if (p < count) {
        VD x = hn::IfThenElseZero(hn::FirstN(d, count - p),
                                  hn::Mul(hn::LoadU(d, k + p), hn::LoadU(d, w + p)));
        x = SetAsideBad(x, g.limit, flag);
        AddLanes(x, g, s1, s2, s3);
      }
      // The lanes' partial sums are sums of terms on the same grids: exact
      // in any order.
      double* out = b.rowSums + (rr * b.r + c) * L;
      out[0] += hn::GetLane(hn::SumOfLanes(d, s1));
      out[1] += hn::GetLane(hn::SumOfLanes(d, s2));
      out[2] += hn::GetLane(hn::SumOfLanes(d, s3));
    }
  }
}

// Column side: lanes across a band of N columns, one sum per (cc, c) and
// lane, down the rows of the block.
HWY_INLINE void BlockColumns(const ExactSumBlock& b) {
  const DD d;
  const std::size_t N = hn::Lanes(d);
  const std::size_t L = ExactSum::kLevels;
  const bool shared = b.colLevels.m1 == nullptr;
  HWY_ALIGN double lanes[3][hn::MaxLanes(d)];
  for (std::size_t cc0 = 0; cc0 < b.nc; cc0 += N) {
    const std::size_t band = std::min(N, b.nc - cc0);
    for (std::size_t c = 0; c < b.r; ++c) {
      LevelsV g;
      if (shared) {
        g = Broadcast(b.sharedLevels[c]);
      } else {
        const std::size_t at = c * b.colLevels.ld + cc0;
        g = {hn::LoadU(d, b.colLevels.m1 + at), hn::LoadU(d, b.colLevels.m2 + at),
             hn::LoadU(d, b.colLevels.m3 + at), hn::LoadU(d, b.colLevels.limit + at)};
      }
      std::uint32_t* flags = b.colFlags + cc0 * b.r + c;
      auto flag = [&](std::size_t l, std::uint32_t f) { flags[l * b.r] |= f; };
      VD s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d);
      for (std::size_t rr = 0; rr < b.nr; ++rr) {
        const std::size_t count = b.colCount[rr];
        if (count <= cc0) continue;
        VD x = hn::Mul(hn::LoadU(d, b.k + rr * b.ldk + cc0), hn::Set(d, b.u[rr * b.ldu + c]));
        const std::size_t kept = std::min(count - cc0, band);
        if (kept < N) x = hn::IfThenElseZero(hn::FirstN(d, kept), x);
        x = shared ? SetAsideBad(x, g.limit, flag) : SetAsideBadLanes(x, g.limit, kept, flag);
        AddLanes(x, g, s1, s2, s3);
      }
      hn::Store(s1, d, lanes[0]);
      hn::Store(s2, d, lanes[1]);
      hn::Store(s3, d, lanes[2]);
      for (std::size_t l = 0; l < band; ++l) {
        double* out = b.colSums + ((cc0 + l) * b.r + c) * L;
        out[0] += lanes[0][l];
        out[1] += lanes[1][l];
        out[2] += lanes[2][l];
      }
    }
  }
}

// The entry point of this target.
HWY_NOINLINE void Block(const ExactSumBlock& b) {
  BlockRows(b);
  if (b.colCount) BlockColumns(b);
}

}  // namespace HWY_NAMESPACE
}  // namespace mpcf
HWY_AFTER_NAMESPACE();
#endif  // x86 SIMD targets

#endif  // per-target include guard
