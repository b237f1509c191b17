// The SIMD kernels of the CPU walk (see simd_walk.hpp) and the choice of
// instruction set at run time.
//
// Built with Google Highway when its headers are there (simd_highway.hpp:
// hwy/foreach_target.h includes the kernels, mpcf/core/simd_walk-inl.hpp,
// once per target, and this file picks the target from its own check of the
// CPU, so libmpcf has no run-time dependency on libhwy); without them only
// the scalar walk exists.
//
// One lane walks one pair. A group of K vectors of N lanes (K x N pairs) is
// walked in lockstep: each vector is a chain of dependent gathers, and K
// independent chains keep the gather units busy. A step of a lane:
//   takeF = fT <= gT; tn = takeF ? fT : gT
//   acc = fold(acc, [t, tn), fV, gV); t = tn
//   the consumed side's index advances and its next point is gathered.
// Lanes whose pair has fewer steps than the longest of the group stop (their
// step becomes an empty rectangle and no point is consumed). The last,
// unbounded rectangle and the finalisation run per lane in scalar code, the
// very code of integrate_pair. Every fold uses only +, -, *, / and compares
// (no fused multiply-add: the library is built with -ffp-contract=off), so
// each lane computes integrate_pair's bits.
#include "mpcf/core/simd_walk.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "mpcf/core/errors.hpp"
#include "simd_highway.hpp"

#if MPCF_HAVE_HIGHWAY
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "mpcf/core/simd_walk-inl.hpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "mpcf/core/simd_walk-inl.hpp"  // the static target
#endif  // MPCF_HAVE_HIGHWAY

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace mpcf {

const char* cpu_simd_name(CpuSimd s) {
  switch (s) {
    case CpuSimd::SSE4: return "sse4";
    case CpuSimd::AVX2: return "avx2";
    case CpuSimd::AVX512: return "avx512";
    case CpuSimd::NEON: return "neon";
    case CpuSimd::Scalar:
    default: return "scalar";
  }
}

bool cpu_simd_compiled(CpuSimd s) {
  if (s == CpuSimd::Scalar) return true;
#if MPCF_HAVE_HIGHWAY
  switch (s) {
    case CpuSimd::SSE4: return (HWY_TARGETS & HWY_SSE4) != 0;
    case CpuSimd::AVX2: return (HWY_TARGETS & HWY_AVX2) != 0;
    case CpuSimd::AVX512: return (HWY_TARGETS & HWY_AVX3) != 0;
    case CpuSimd::NEON: return (HWY_TARGETS & HWY_NEON) != 0;
    default: return false;
  }
#else
  return false;
#endif
}

namespace {

// The architecture whose CPUs run an instruction set, and this build's.
enum class SimdArch { None, X86_64, Aarch64 };

SimdArch arch_of(CpuSimd s) {
  switch (s) {
    case CpuSimd::SSE4:
    case CpuSimd::AVX2:
    case CpuSimd::AVX512: return SimdArch::X86_64;
    case CpuSimd::NEON: return SimdArch::Aarch64;
    case CpuSimd::Scalar:
    default: return SimdArch::None;
  }
}

constexpr SimdArch kBuildArch =
#if defined(__x86_64__)
    SimdArch::X86_64;
#elif defined(__aarch64__)
    SimdArch::Aarch64;
#else
    SimdArch::None;
#endif

const char* arch_name(SimdArch a) {
  switch (a) {
    case SimdArch::X86_64: return "x86-64";
    case SimdArch::Aarch64: return "aarch64";
    case SimdArch::None:
    default: return "other";
  }
}

// What this CPU and its OS run. x86-64, from CPUID and XGETBV: the features
// of Highway's target strings (hwy/ops/set_macros-inl.h) and the OS saving
// the YMM / ZMM state. aarch64: Advanced SIMD (NEON) from the kernel's
// HWCAP (Highway's NEON target also names AES, which the walk does not use).
struct CpuFeatures {
  bool sse4 = false, avx2 = false, avx512 = false;
  bool neon = false;
};

CpuFeatures detect_features() {
  CpuFeatures c;
#if defined(__x86_64__)
  unsigned a = 0, b = 0, cx = 0, dx = 0;
  if (!__get_cpuid(1, &a, &b, &cx, &dx)) return c;
  const bool ssse3 = cx & (1u << 9), sse41 = cx & (1u << 19), sse42 = cx & (1u << 20);
  const bool pclmul = cx & (1u << 1), aes = cx & (1u << 25), fma = cx & (1u << 12);
  const bool osxsave = cx & (1u << 27), avx = cx & (1u << 28), f16c = cx & (1u << 29);
  const bool sse2 = dx & (1u << 26);
  c.sse4 = sse2 && ssse3 && sse41 && sse42 && pclmul && aes;
  unsigned long long xcr0 = 0;
  if (osxsave) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool osYmm = (xcr0 & 0x6) == 0x6;      // SSE and AVX state
  const bool osZmm = (xcr0 & 0xe6) == 0xe6;    // and opmask, ZMM0-15, ZMM16-31
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  if (__get_cpuid_max(0, nullptr) >= 7) __cpuid_count(7, 0, a7, b7, c7, d7);
  const bool avx2 = b7 & (1u << 5), bmi1 = b7 & (1u << 3), bmi2 = b7 & (1u << 8);
  const bool avx512f = b7 & (1u << 16), avx512dq = b7 & (1u << 17);
  const bool avx512bw = b7 & (1u << 30), avx512vl = b7 & (1u << 31);
  c.avx2 = c.sse4 && osYmm && avx && avx2 && bmi1 && bmi2 && fma && f16c;
  c.avx512 = c.avx2 && osZmm && avx512f && avx512vl && avx512dq && avx512bw;
#elif defined(__aarch64__) && defined(__linux__)
  c.neon = (getauxval(AT_HWCAP) & (1ul << 1)) != 0;  // HWCAP_ASIMD
#elif defined(__aarch64__)
  c.neon = true;  // every aarch64 system without Linux's HWCAP (macOS) has it
#endif
  return c;
}

const CpuFeatures& features() {
  static const CpuFeatures f = detect_features();
  return f;
}

}  // namespace

bool cpu_simd_supported(CpuSimd s) {
  if (!cpu_simd_compiled(s)) return false;
  switch (s) {
    case CpuSimd::Scalar: return true;
    case CpuSimd::SSE4: return features().sse4;
    case CpuSimd::AVX2: return features().avx2;
    case CpuSimd::AVX512: return features().avx512;
    case CpuSimd::NEON: return features().neon;
  }
  return false;
}

CpuSimd cpu_simd_best() {
  for (int s = kCpuSimdCount - 1; s > 0; --s) {
    if (cpu_simd_supported(static_cast<CpuSimd>(s))) return static_cast<CpuSimd>(s);
  }
  return CpuSimd::Scalar;
}

CpuSimd cpu_simd_default() {
  const CpuSimd best = cpu_simd_best();
  const char* env = std::getenv("MPCF_CPU_SIMD");
  if (env == nullptr) return best;
  for (int s = 0; s < kCpuSimdCount; ++s) {
    const auto asked = static_cast<CpuSimd>(s);
    if (std::strcmp(env, cpu_simd_name(asked)) != 0) continue;
    const SimdArch arch = arch_of(asked);
    if (arch != SimdArch::None && arch != kBuildArch) {
      std::string sets = "scalar";
      for (int c = 1; c < kCpuSimdCount; ++c) {
        if (arch_of(static_cast<CpuSimd>(c)) == kBuildArch) {
          sets += std::string(", ") + cpu_simd_name(static_cast<CpuSimd>(c));
        }
      }
      throw InvalidArgument(std::string("MPCF_CPU_SIMD=") + env + " names an instruction set of " +
                            arch_name(arch) + " CPUs, which this " + arch_name(kBuildArch) +
                            " build of libmpcf cannot run; its sets are " + sets +
                            " (unset or auto: the best this CPU runs)");
    }
    // Capped at what this CPU runs, among its architecture's sets (from the
    // plainest, in the enum's order).
    for (int c = s; c > 0; --c) {
      const auto set = static_cast<CpuSimd>(c);
      if (arch_of(set) == arch && cpu_simd_supported(set)) return set;
    }
    return CpuSimd::Scalar;
  }
  return best;
}

template <typename T, typename Op>
void walk_pairs_simd(CpuSimd s, const PairBatch<T>& batch, const Window<T>& w, const Op& op,
                     bool unchecked, op_acc_t<Op>* carry) {
  if (batch.pointCount > kMaxBatchPoints) {
    throw std::logic_error("walk_pairs_simd: the batch holds too many points");
  }
#if MPCF_HAVE_HIGHWAY
  switch (s) {
#if HWY_TARGETS & HWY_AVX3
    case CpuSimd::AVX512: return N_AVX3::Walk(batch, w, op, unchecked, carry);
#endif
#if HWY_TARGETS & HWY_AVX2
    case CpuSimd::AVX2: return N_AVX2::Walk(batch, w, op, unchecked, carry);
#endif
#if HWY_TARGETS & HWY_SSE4
    case CpuSimd::SSE4: return N_SSE4::Walk(batch, w, op, unchecked, carry);
#endif
#if HWY_TARGETS & HWY_NEON
    case CpuSimd::NEON: return N_NEON::Walk(batch, w, op, unchecked, carry);
#endif
    default: break;
  }
#else
  (void)batch;
  (void)w;
  (void)op;
  (void)unchecked;
  (void)carry;
#endif
  throw std::logic_error(std::string("walk_pairs_simd: instruction set ") + cpu_simd_name(s) +
                         " is not compiled in");
}

#define MPCF_SIMD_WALK_DEFINE(T)                                                                  \
  template void walk_pairs_simd<T, OperationL1Dist<T>>(                                            \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationL1Dist<T>&, bool,             \
      op_acc_t<OperationL1Dist<T>>*);                                                              \
  template void walk_pairs_simd<T, OperationL2Dist<T>>(                                            \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationL2Dist<T>&, bool,             \
      op_acc_t<OperationL2Dist<T>>*);                                                              \
  template void walk_pairs_simd<T, OperationLpDist<T>>(                                            \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationLpDist<T>&, bool,             \
      op_acc_t<OperationLpDist<T>>*);                                                              \
  template void walk_pairs_simd<T, OperationLinfDist<T>>(                                          \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationLinfDist<T>&, bool,           \
      op_acc_t<OperationLinfDist<T>>*);                                                            \
  template void walk_pairs_simd<T, OperationL2InnerProduct<T>>(                                   \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationL2InnerProduct<T>&, bool,     \
      op_acc_t<OperationL2InnerProduct<T>>*);
MPCF_SIMD_WALK_DEFINE(float)
MPCF_SIMD_WALK_DEFINE(double)
#undef MPCF_SIMD_WALK_DEFINE

}  // namespace mpcf
