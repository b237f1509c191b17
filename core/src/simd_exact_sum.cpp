// exact_sum_block (simd_exact_sum.hpp): the scalar path, and the SIMD
// kernels (mpcf/core/simd_exact_sum-inl.hpp) compiled as simd_walk.cpp
// compiles the walk's: Highway's headers only, one copy per target, the
// target chosen by the caller.
#include "mpcf/core/simd_exact_sum.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

// Highway's targets and settings as for the walks (simd_highway.hpp). The
// kernels are x86-64's only (simd_exact_sum-inl.hpp): on aarch64 the NEON
// target compiles to nothing and exact_sum_block takes the scalar path.
#include "simd_highway.hpp"
#if MPCF_HAVE_HIGHWAY
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "mpcf/core/simd_exact_sum-inl.hpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "mpcf/core/simd_exact_sum-inl.hpp"  // the static target
#endif  // MPCF_HAVE_HIGHWAY

namespace mpcf {

namespace {

// Term by term with exact_sum_add.
void block_scalar(const ExactSumBlock& b) {
  const std::size_t L = ExactSum::kLevels;
  for (std::size_t rr = 0; rr < b.nr; ++rr) {
    const double* k = b.k + rr * b.ldk;
    for (std::size_t c = 0; c < b.r; ++c) {
      const ExactSumLevels& g = b.rowLevels[rr * b.rowLevelsStride + c];
      const double* w = b.w + c * b.ldw;
      double* out = b.rowSums + (rr * b.r + c) * L;
      std::uint32_t& flags = b.rowFlags[rr * b.r + c];
      for (std::size_t cc = 0; cc < b.rowCount[rr]; ++cc) {
        exact_sum_add(exact_sum_mul(k[cc], w[cc]), g, out, flags);
      }
    }
  }
  if (!b.colCount) return;
  for (std::size_t rr = 0; rr < b.nr; ++rr) {
    const double* k = b.k + rr * b.ldk;
    for (std::size_t cc = 0; cc < b.colCount[rr]; ++cc) {
      for (std::size_t c = 0; c < b.r; ++c) {
        ExactSumLevels g;
        if (b.colLevels.m1) {
          const std::size_t at = c * b.colLevels.ld + cc;
          g = {b.colLevels.m1[at], b.colLevels.m2[at], b.colLevels.m3[at], b.colLevels.limit[at]};
        } else {
          g = b.sharedLevels[c];
        }
        exact_sum_add(exact_sum_mul(k[cc], b.u[rr * b.ldu + c]), g,
                      b.colSums + (cc * b.r + c) * L, b.colFlags[cc * b.r + c]);
      }
    }
  }
}

}  // namespace

void exact_sum_block(CpuSimd s, const ExactSumBlock& b) {
#if MPCF_HAVE_HIGHWAY
  switch (s) {
#if HWY_TARGETS & HWY_AVX3
    case CpuSimd::AVX512: return N_AVX3::Block(b);
#endif
#if HWY_TARGETS & HWY_AVX2
    case CpuSimd::AVX2: return N_AVX2::Block(b);
#endif
#if HWY_TARGETS & HWY_SSE4
    case CpuSimd::SSE4: return N_SSE4::Block(b);
#endif
    default: break;
  }
#endif
  // The scalar path, and every set these kernels are not compiled for: the
  // walks' NEON on aarch64 (the exact sums have x86 kernels only), the sets
  // a sanitizer build leaves out; the same bits either way.
  (void)s;
  block_scalar(b);
}

}  // namespace mpcf
