// The SIMD kernels of the PLF walk (walk_plf_pairs_simd in simd_walk.hpp;
// the kernels are in mpcf/core/simd_plf_walk-inl.hpp), compiled as
// simd_walk.cpp compiles the PCF walk's: Highway's headers only, one copy
// per target, the target chosen by the caller (cpu_simd_default).
#include "mpcf/core/simd_walk.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#if !defined(MPCF_NO_HIGHWAY) && defined(__x86_64__) && defined(__has_include)
#if __has_include(<hwy/highway.h>)
#define MPCF_HAVE_HIGHWAY 1
#endif
#endif
#ifndef MPCF_HAVE_HIGHWAY
#define MPCF_HAVE_HIGHWAY 0
#endif
#if MPCF_HAVE_HIGHWAY
// As in simd_walk.cpp (the same targets, no HWY_DASSERT).
#define HWY_IS_DEBUG_BUILD 0
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_AVX3_DL)
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "mpcf/core/simd_plf_walk-inl.hpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "mpcf/core/simd_plf_walk-inl.hpp"  // the static target
#endif  // MPCF_HAVE_HIGHWAY

namespace mpcf {

namespace {

// Whether the tame walk may continue these accumulators: a scaled power
// sum carried from an earlier component is +inf after an unbounded piece of
// non-zero difference, which the tame fold (finite sums, ScaledFoldLanes)
// does not handle; a sum (L1, inner product) or maximum takes +-inf as the
// tests would.
template <typename A>
bool tame_carry(const A*, std::size_t) {
  return true;
}
template <typename T>
bool tame_carry(const ScaledPowerSum<T>* carry, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    if (!(carry[k].sum < std::numeric_limits<T>::infinity())) return false;
  }
  return true;
}

}  // namespace

template <typename T, typename Op>
void walk_plf_pairs_simd(CpuSimd s, const PairBatch<T>& batch, const Window<T>& w, const Op& op,
                     bool tame, op_acc_t<Op>* carry) {
  if (batch.pointCount > kMaxBatchPoints) {
    throw std::logic_error("walk_plf_pairs_simd: the batch holds too many points");
  }
  if (tame && carry) tame = tame_carry(carry, batch.count);
#if MPCF_HAVE_HIGHWAY
  switch (s) {
#if HWY_TARGETS & HWY_AVX3
    case CpuSimd::AVX512: return N_AVX3::PlfWalk(batch, w, op, tame, carry);
#endif
#if HWY_TARGETS & HWY_AVX2
    case CpuSimd::AVX2: return N_AVX2::PlfWalk(batch, w, op, tame, carry);
#endif
#if HWY_TARGETS & HWY_SSE4
    case CpuSimd::SSE4: return N_SSE4::PlfWalk(batch, w, op, tame, carry);
#endif
    default: break;
  }
#else
  (void)batch;
  (void)w;
  (void)op;
  (void)tame;
  (void)carry;
#endif
  throw std::logic_error(std::string("walk_plf_pairs_simd: instruction set ") + cpu_simd_name(s) +
                         " is not compiled in");
}

#define MPCF_SIMD_PLF_WALK_DEFINE(T)                                                              \
  template void walk_plf_pairs_simd<T, PlfOperationL1Dist<T>>(                                     \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationL1Dist<T>&, bool,          \
      op_acc_t<PlfOperationL1Dist<T>>*);                                                           \
  template void walk_plf_pairs_simd<T, PlfOperationL2Dist<T>>(                                     \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationL2Dist<T>&, bool,          \
      op_acc_t<PlfOperationL2Dist<T>>*);                                                           \
  template void walk_plf_pairs_simd<T, PlfOperationLpDist<T>>(                                     \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationLpDist<T>&, bool,          \
      op_acc_t<PlfOperationLpDist<T>>*);                                                           \
  template void walk_plf_pairs_simd<T, PlfOperationLinfDist<T>>(                                   \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationLinfDist<T>&, bool,        \
      op_acc_t<PlfOperationLinfDist<T>>*);                                                         \
  template void walk_plf_pairs_simd<T, PlfOperationL2InnerProduct<T>>(                            \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationL2InnerProduct<T>&, bool,  \
      op_acc_t<PlfOperationL2InnerProduct<T>>*);
MPCF_SIMD_PLF_WALK_DEFINE(float)
MPCF_SIMD_PLF_WALK_DEFINE(double)
#undef MPCF_SIMD_PLF_WALK_DEFINE

}  // namespace mpcf
