// Order-independent sums of doubles with a known bound ("pre-rounding",
// Demmel and Nguyen, "Fast reproducible floating-point summation", 2013).
//
// Every term x of one sum is split into three parts, each rounded to a fixed
// grid: q1 = fl(M1 + x) - M1 with M1 = 1.5 * 2^k1 is x rounded to a multiple
// of 2^(k1 - 52) (M1 + x stays in [2^k1, 2^(k1+1)) as long as |x| < 2^(k1-1),
// and the subtraction is exact); the remainder x - q1 (exact) is rounded the
// same way to a finer grid M2, and its remainder to M3. When N terms of
// magnitude at most B are summed, 2^k1 >= 4 N B and each finer level is
// 2^(52 - ceil(log2 N) - 1) times finer than the one above, every partial
// sum of each level is a multiple of that level's grid below 2^(k+1): it is
// exact in double. So each level's sum, and the final
// (S1 + S2) + S3, are the same bits whatever order the terms arrive in,
// however they are grouped (blocks, threads, GPUs), and the result is
// accurate to about N^4 * B * 2^-157 (terms smaller than the finest grid
// are rounded to it).
//
// Non-finite terms are not summed: they set flags (+inf, -inf, NaN), and a
// finite term beyond the grid's range sets kOutOfRange (a bound that did not
// hold: the caller reports an internal error).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "mpcf/core/host_device.hpp"

// The pre-rounding needs each + and * rounded on its own: no fused
// multiply-add may replace fl(M + fl(a * b)). GCC contracts nothing in ISO
// C++ mode (-std=c++20) and x86-64 has no FMA without -march; clang
// contracts within expressions by default, hence the pragma (it holds to the
// end of the translation unit); device code uses the _rn intrinsics.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

namespace mpcf {

struct ExactSum {
  static constexpr int kLevels = 3;
  static constexpr std::uint32_t kPosInf = 1, kNegInf = 2, kNaN = 4, kOutOfRange = 8;
};

// The grid of one sum: M1 = 1.5 * 2^k1 (levels 2 and 3 follow from the
// common ratio of the sums sharing N).
struct ExactSumGrid {
  double m1 = 1.5;
  // The grid for N terms of magnitude at most `bound` (finite, >= 0).
  // Returns false when 4 N bound exceeds the double range.
  static bool for_bound(double bound, std::uint64_t terms, ExactSumGrid& out) {
    const double need = 4.0 * static_cast<double>(terms == 0 ? 1 : terms) * bound;
    if (!(need < std::ldexp(1.0, 1022))) return false;
    int k = -1073;
    if (need > 0) {
      int e = 0;
      std::frexp(need, &e);  // need < 2^e
      k = e < -1073 ? -1073 : e;
    }
    out.m1 = std::ldexp(1.5, k);
    return true;
  }
};

// 2^-(52 - ceil(log2 N) - 1): the ratio between consecutive levels.
inline double exact_sum_level_ratio(std::uint64_t terms) {
  int bits = 0;
  while ((std::uint64_t(1) << bits) < (terms == 0 ? 1 : terms) && bits < 63) ++bits;
  return std::ldexp(1.0, -(52 - bits - 1));
}

MPCF_HD double exact_sum_round(double m, double x) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(__dadd_rn(m, x), m);
#else
  return (m + x) - m;
#endif
}

// a * b rounded on its own (the terms of a sum are computed with it).
MPCF_HD double exact_sum_mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// The grids of one sum, computed once: M1 = m1, M2 = m1 * ratio, M3 =
// M2 * ratio (exact: powers of two), and the largest |term| they take,
// 2^(k1 - 1) = M1 / 3 (exact).
struct ExactSumLevels {
  double m1, m2, m3, limit;
  MPCF_HD static ExactSumLevels of(double m1, double ratio) {
    ExactSumLevels l;
    l.m1 = m1;
    l.m2 = m1 * ratio;
    l.m3 = l.m2 * ratio;
    l.limit = m1 / 3.0;
    return l;
  }
};

// Adds term x to the three level sums acc[0..2], or sets its flag.
MPCF_HD void exact_sum_add(double x, const ExactSumLevels& g, double* acc, std::uint32_t& flags) {
#if defined(__CUDA_ARCH__)
  const bool finite = ::isfinite(x);
#else
  const bool finite = std::isfinite(x);
#endif
  if (!finite) {
    flags |= x != x ? ExactSum::kNaN : (x > 0 ? ExactSum::kPosInf : ExactSum::kNegInf);
    return;
  }
  if (x >= g.limit || -x >= g.limit) {
    flags |= ExactSum::kOutOfRange;
    return;
  }
  const double q1 = exact_sum_round(g.m1, x);
  const double r1 = x - q1;
  const double q2 = exact_sum_round(g.m2, r1);
  const double r2 = r1 - q2;
  const double q3 = exact_sum_round(g.m3, r2);
  acc[0] += q1;
  acc[1] += q2;
  acc[2] += q3;
}

// The value of a sum: NaN for a NaN term or both infinities, an infinity
// when only one sign of infinite terms came, else (S1 + S2) + S3.
MPCF_HD double exact_sum_value(const double* acc, std::uint32_t flags) {
  if ((flags & ExactSum::kNaN) || ((flags & ExactSum::kPosInf) && (flags & ExactSum::kNegInf))) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (flags & ExactSum::kPosInf) return std::numeric_limits<double>::infinity();
  if (flags & ExactSum::kNegInf) return -std::numeric_limits<double>::infinity();
  return (acc[0] + acc[1]) + acc[2];
}

}  // namespace mpcf
