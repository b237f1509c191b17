// Whether the SIMD walks are compiled, and for which Google Highway targets:
// one place for simd_walk.cpp and simd_plf_walk.inc, which include it before
// any Highway header.
//
// Highway's headers only (hwy/foreach_target.h compiles the kernels once per
// target; the walks pick the target from their own CPU check, so libmpcf has
// no run-time dependency on libhwy). Without the headers, on another
// architecture or with MPCF_NO_HIGHWAY, only the scalar walk exists.
#pragma once

#if !defined(MPCF_NO_HIGHWAY) && (defined(__x86_64__) || defined(__aarch64__)) && \
    defined(__has_include)
#if __has_include(<hwy/highway.h>)
#define MPCF_HAVE_HIGHWAY 1
#endif
#endif
#ifndef MPCF_HAVE_HIGHWAY
#define MPCF_HAVE_HIGHWAY 0
#endif

#if MPCF_HAVE_HIGHWAY
// No HWY_DASSERT (it would call hwy::Abort, which lives in libhwy).
#define HWY_IS_DEBUG_BUILD 0
// x86-64: SSE4, AVX2 and AVX-512. SSE4 covers every x86-64 CPU of the last
// 15 years; SSSE3-only CPUs take the scalar walk. AVX3_DL adds nothing the
// walk uses.
// aarch64: NEON (every aarch64 CPU that runs Linux). The kernels give each
// vector a number of lanes fixed at compile time, which SVE's scalable
// vectors do not have, so the SVE targets (which GCC would compile; Clang
// with Highway 1.0 compiles none outside an SVE baseline) are left out.
// MPCF_SIMD_ONE_TARGET (sanitizer and fuzzer builds, core/CMakeLists.txt):
// AVX2 alone on x86-64, so those builds compile the kernels once instead of
// three times (the other sets are then reported as not compiled, and the
// tests that walk every set skip them); the default build compiles them all.
#if defined(MPCF_SIMD_ONE_TARGET)
#define MPCF_SIMD_MORE_DISABLED (HWY_SSE4 | HWY_AVX3)
#else
#define MPCF_SIMD_MORE_DISABLED 0
#endif
#define HWY_DISABLED_TARGETS                                                       \
  (HWY_SSSE3 | HWY_AVX3_DL | HWY_SVE | HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128 | \
   MPCF_SIMD_MORE_DISABLED)
#endif
