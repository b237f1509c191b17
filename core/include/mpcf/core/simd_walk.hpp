// The CPU walk in SIMD lanes: many pairs at once, one pair per lane, each
// lane walking its pair exactly as integrate_pair does (the same rectangles
// in the same order, the same arithmetic), so every target gives the bits of
// the scalar walk. Plain C++ interface; the kernels (Google Highway, one
// copy per instruction set, chosen at run time from the CPU's features) live
// in simd_walk.cpp.
//
// Layout: the functions of a batch are "shifted" (as in the GPU walk): point
// k of a function of m breakpoints holds (t_k, v_{k-1}) (v_{-1} = 0) and a
// sentinel (+inf, v_{m-1}) follows point m - 1, so every step of a walk
// consumes exactly one point (of f when its next time is not later than g's)
// and a pair takes exactly m_f + m_g steps. Equal times are consumed one
// after the other; the rectangle between them has width 0, which every fold
// ignores, so the accumulated value is bitwise integrate_pair's.
#pragma once

#include <cstddef>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "mpcf/core/operations.hpp"
#include "mpcf/core/plf_operations.hpp"
#include "mpcf/core/point.hpp"
#include "mpcf/core/walk.hpp"

namespace mpcf {

// Instruction sets of the CPU walk: Scalar, the walk of walk.hpp
// (integrate_pairs_lockstep), and Highway targets, those of each
// architecture from the plainest (x86-64: SSE4, AVX2, AVX512; aarch64:
// NEON). A build has the sets of the architecture it is compiled for.
enum class CpuSimd : int { Scalar = 0, SSE4 = 1, AVX2 = 2, AVX512 = 3, NEON = 4 };

constexpr int kCpuSimdCount = 5;

// "scalar", "sse4", "avx2", "avx512", "neon".
const char* cpu_simd_name(CpuSimd s);

// Compiled into this build (Scalar always; the others when Highway was found
// at build time, those of the build's architecture).
bool cpu_simd_compiled(CpuSimd s);

// Compiled, and this CPU and OS run it (x86-64: CPUID and XGETBV; aarch64:
// the kernel's HWCAP).
bool cpu_simd_supported(CpuSimd s);

// The best supported instruction set.
CpuSimd cpu_simd_best();

// What computations use: the environment variable MPCF_CPU_SIMD (scalar,
// sse4, avx2, avx512 or neon; read at every call, for comparisons and
// diagnosis) capped at what this CPU runs among its architecture's sets,
// or cpu_simd_best() when it is unset, empty, "auto" or not one of those
// names. A set of another architecture than the build's (neon on x86-64,
// sse4 on aarch64) throws InvalidArgument naming the sets this build has.
CpuSimd cpu_simd_default();

// Functions in the shifted layout, one after the other.
template <typename T>
struct ShiftedPoints {
  std::vector<SimplePoint<T, T>> points;

  void clear() { points.clear(); }
  // Appends f[0..m) (m >= 1) with its sentinel; returns the index of its
  // first point.
  std::size_t append(const SimplePoint<T, T>* f, std::size_t m);
  // Appends the piecewise linear function f[0..m) (m >= 1) unshifted, with
  // the sentinel (+inf, v_{m-1}) (see walk_plf_pairs_simd); returns the
  // index of its first point.
  std::size_t append_linear(const SimplePoint<T, T>* f, std::size_t m);
};

template <typename T>
std::size_t ShiftedPoints<T>::append(const SimplePoint<T, T>* f, std::size_t m) {
  const std::size_t first = points.size();
  points.resize(first + m + 1);
  SimplePoint<T, T>* out = points.data() + first;
  T before = T(0);
  for (std::size_t k = 0; k < m; ++k) {
    out[k] = SimplePoint<T, T>{f[k].t, before};
    before = f[k].v;
  }
  out[m] = SimplePoint<T, T>{std::numeric_limits<T>::infinity(), before};
  return first;
}

template <typename T>
std::size_t ShiftedPoints<T>::append_linear(const SimplePoint<T, T>* f, std::size_t m) {
  const std::size_t first = points.size();
  points.resize(first + m + 1);
  SimplePoint<T, T>* out = points.data() + first;
  for (std::size_t k = 0; k < m; ++k) out[k] = f[k];
  out[m] = SimplePoint<T, T>{std::numeric_limits<T>::infinity(), f[m - 1].v};
  return first;
}

// Pairs to walk: pair k is the function whose first shifted point is
// points[f[k]] against the one at points[g[k]], steps[k] = m_f + m_g; its
// value goes to out[k]. With `bound` (MonotoneFold operations, no carry):
// out[k] may instead be a partial value above bound[k] and at most the
// value (a group of lanes stops once every lane is above its bound).
template <typename T>
struct PairBatch {
  const SimplePoint<T, T>* points = nullptr;
  std::size_t pointCount = 0;
  const std::uint32_t* f = nullptr;
  const std::uint32_t* g = nullptr;
  const std::uint32_t* steps = nullptr;
  std::size_t count = 0;
  T* out = nullptr;
  const T* bound = nullptr;
};

// The most points a batch may hold (lane indices are 32-bit).
constexpr std::size_t kMaxBatchPoints = std::size_t(1) << 30;

// Whether the unchecked fold may be used (acc + width * integrand with no
// test, as on the GPU; see cuda/sentinel_walk.hpp's UncheckedSumFold): the
// whole line, an L1 distance or an inner product, and every time and value
// of the batch within max / 4 in magnitude (float32 inner products: any
// finite value; float64: values within sqrt(max) / 2). Then a zero width or
// a zero integrand adds an exact zero to an accumulator that is never -0,
// which is what the tests of the fold would have skipped: the same bits.
template <typename T, typename Op>
bool unchecked_fold_allowed(const Window<T>& w, const Op& op, T maxAbsTime, T maxAbsValue);

// Walks every pair of the batch with the instruction set `s` (not Scalar,
// and cpu_simd_supported(s)). `unchecked`: see unchecked_fold_allowed.
// out[k] is bitwise integrate_pair(f_k, g_k, w, op). With `carry` (objects
// of several components, DESIGN §11), pair k's walk starts from carry[k]
// instead of op.init() and leaves its accumulated value, not finalized, in
// carry[k] (out is not written): bitwise PairWalk's continue_from(carry[k])
// and accumulate.
template <typename T, typename Op>
void walk_pairs_simd(CpuSimd s, const PairBatch<T>& batch, const Window<T>& w, const Op& op,
                     bool unchecked, op_acc_t<Op>* carry = nullptr);

#define MPCF_SIMD_WALK_DECLARE(T)                                                                  \
  extern template void walk_pairs_simd<T, OperationL1Dist<T>>(                                     \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationL1Dist<T>&, bool,             \
      op_acc_t<OperationL1Dist<T>>*);                                                              \
  extern template void walk_pairs_simd<T, OperationL2Dist<T>>(                                     \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationL2Dist<T>&, bool,             \
      op_acc_t<OperationL2Dist<T>>*);                                                              \
  extern template void walk_pairs_simd<T, OperationLpDist<T>>(                                     \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationLpDist<T>&, bool,             \
      op_acc_t<OperationLpDist<T>>*);                                                              \
  extern template void walk_pairs_simd<T, OperationLinfDist<T>>(                                   \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationLinfDist<T>&, bool,           \
      op_acc_t<OperationLinfDist<T>>*);                                                            \
  extern template void walk_pairs_simd<T, OperationL2InnerProduct<T>>(                             \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const OperationL2InnerProduct<T>&, bool,     \
      op_acc_t<OperationL2InnerProduct<T>>*);
MPCF_SIMD_WALK_DECLARE(float)
MPCF_SIMD_WALK_DECLARE(double)
#undef MPCF_SIMD_WALK_DECLARE

// The PLF walk in SIMD lanes (DESIGN §10): every pair of the batch, whose
// functions were laid out by append_linear (each function's points as they
// are, then the sentinel (+inf, v_{m-1})), steps[k] = m_f + m_g. A lane holds
// its pair's current segment of f and of g (the last consumed point, a
// virtual (-inf, 0) before the first, and the next one); a step consumes the
// next point that comes first (of either function on a tie: every operation
// is symmetric in f and g) and hands the operation the piece up to it with
// the consumed function's left limit there and the other one interpolated
// by detail::plf_interpolate's arithmetic; equal times are consumed one
// after the other (the piece between them has width 0, which no operation
// counts). The unbounded last piece and the finalisation run per lane in
// the scalar code. So out[k] is bitwise integrate_plf_pair(f_k, g_k, w, op)
// on every instruction set.
// `tame`: plf_tame_walk_allowed (then the walk skips the halving of
// overflowing segments and, on the whole line, the tests of the L1 and
// inner-product folds; with `carry`, only where no carried scaled power sum
// is +inf). `carry`: as for walk_pairs_simd (PlfPairWalk's continue_from
// and accumulate).
template <typename T, typename Op>
void walk_plf_pairs_simd(CpuSimd s, const PairBatch<T>& batch, const Window<T>& w, const Op& op,
                         bool tame, op_acc_t<Op>* carry = nullptr);

#define MPCF_SIMD_PLF_WALK_DECLARE(T)                                                              \
  extern template void walk_plf_pairs_simd<T, PlfOperationL1Dist<T>>(                              \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationL1Dist<T>&, bool,          \
      op_acc_t<PlfOperationL1Dist<T>>*);                                                           \
  extern template void walk_plf_pairs_simd<T, PlfOperationL2Dist<T>>(                              \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationL2Dist<T>&, bool,          \
      op_acc_t<PlfOperationL2Dist<T>>*);                                                           \
  extern template void walk_plf_pairs_simd<T, PlfOperationLpDist<T>>(                              \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationLpDist<T>&, bool,          \
      op_acc_t<PlfOperationLpDist<T>>*);                                                           \
  extern template void walk_plf_pairs_simd<T, PlfOperationLinfDist<T>>(                            \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationLinfDist<T>&, bool,        \
      op_acc_t<PlfOperationLinfDist<T>>*);                                                         \
  extern template void walk_plf_pairs_simd<T, PlfOperationL2InnerProduct<T>>(                      \
      CpuSimd, const PairBatch<T>&, const Window<T>&, const PlfOperationL2InnerProduct<T>&, bool,  \
      op_acc_t<PlfOperationL2InnerProduct<T>>*);
MPCF_SIMD_PLF_WALK_DECLARE(float)
MPCF_SIMD_PLF_WALK_DECLARE(double)
#undef MPCF_SIMD_PLF_WALK_DECLARE

// Whether the PLF walk may take its tame path: every time and value of the
// batch within max / 4 in magnitude (float64 inner products: values within
// sqrt(max) / 4). Then no segment is wider than the largest finite value,
// no |f - g| exceeds half of it, every width is finite and, for the inner
// product, every piece's closed form is finite; so the halvings of
// plf_interpolate and plf_mean_abs multiply by 1, and on the whole line a
// piece of zero width or zero integrand adds an exact 0 to an accumulator
// that is never -0: the same bits without the tests.
template <typename T, typename Op>
bool plf_tame_walk_allowed(const Op&, T maxAbsTime, T maxAbsValue) {
  const T quarter = std::numeric_limits<T>::max() / 4;
  if (maxAbsTime > quarter || maxAbsValue > quarter) return false;
  if constexpr (std::is_same_v<Op, PlfOperationL2InnerProduct<T>> && sizeof(T) == 8) {
    return maxAbsValue <= std::sqrt(std::numeric_limits<T>::max()) / 4;
  }
  return true;
}

// Whether Op is an operation on piecewise linear functions (walked by
// PlfPairWalk / walk_plf_pairs_simd).
template <typename Op>
struct IsPlfOperation : std::false_type {};
template <typename T>
struct IsPlfOperation<PlfOperationL1Dist<T>> : std::true_type {};
template <typename T>
struct IsPlfOperation<PlfOperationL2Dist<T>> : std::true_type {};
template <typename T>
struct IsPlfOperation<PlfOperationLpDist<T>> : std::true_type {};
template <typename T>
struct IsPlfOperation<PlfOperationLinfDist<T>> : std::true_type {};
template <typename T>
struct IsPlfOperation<PlfOperationL2InnerProduct<T>> : std::true_type {};

// Whether an operation has SIMD kernels (every operation of operations.hpp
// and plf_operations.hpp does; anything else is walked by the scalar code).
template <typename Op>
struct HasSimdWalk : std::false_type {};
template <typename T>
struct HasSimdWalk<OperationL1Dist<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<OperationL2Dist<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<OperationLpDist<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<OperationLinfDist<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<OperationL2InnerProduct<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<PlfOperationL1Dist<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<PlfOperationL2Dist<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<PlfOperationLpDist<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<PlfOperationLinfDist<T>> : std::true_type {};
template <typename T>
struct HasSimdWalk<PlfOperationL2InnerProduct<T>> : std::true_type {};

template <typename T, typename Op>
bool unchecked_fold_allowed(const Window<T>& w, const Op&, T maxAbsTime, T maxAbsValue) {
  if (!w.is_whole_line()) return false;
  const T quarter = std::numeric_limits<T>::max() / 4;
  if constexpr (std::is_same_v<Op, OperationL1Dist<T>>) {
    return maxAbsTime <= quarter && maxAbsValue <= quarter;
  } else if constexpr (std::is_same_v<Op, OperationL2InnerProduct<T>>) {
    if (maxAbsTime > quarter) return false;
    if constexpr (sizeof(T) == 4) {
      return true;  // products of float32 values are finite in double
    } else {
      return maxAbsValue <= std::sqrt(std::numeric_limits<T>::max()) / 2;
    }
  } else {
    return false;
  }
}

}  // namespace mpcf
