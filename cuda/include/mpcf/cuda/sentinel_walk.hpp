// The rectangle walk of the GPU kernels: the same rectangles and the same
// arithmetic as core's integrate_pair (walk.hpp), rearranged for a GPU.
//
//  * Functions are stored "shifted": point k holds (t_k, v_{k-1}), the time
//    of breakpoint k and the value just before it (v_{-1} = 0), and one
//    more point (+inf, v_{m-1}) follows the last breakpoint (the sentinel).
//    The rectangle that ends at the next breakpoint of either function then
//    takes its two values straight from the two next points: the walk keeps
//    no current values.
//  * Each step consumes exactly one point, of f when its next time is not
//    later than g's, else of g. A pair therefore takes exactly nf + ng
//    steps, known in advance: the loop has no end tests on either function,
//    and threads of a warp whose pairs have equal total lengths never
//    diverge. Once a function is exhausted its next time is the sentinel's
//    +inf, so the other one is consumed.
//  * Only the consumed side loads its next point (one load per step).
//
// Equal times are consumed one after the other; the second rectangle then
// has width 0, which every operation's fold ignores (width > 0 is required),
// also when clipped to a window. So the accumulated value is bitwise the one
// integrate_pair computes with the same compiler; the tests check this on
// the host. Plain C++ (no CUDA headers needed), so host tests can use it.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include <cmath>
#include <type_traits>

#include "mpcf/core/host_device.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/point.hpp"
#include "mpcf/core/walk.hpp"

namespace mpcf::cuda {

// Point k of the shifted layout of a function of m points (k in [0, m]; k = m
// is the sentinel).
template <typename T>
MPCF_HD SimplePoint<T, T> shifted_point(const SimplePoint<T, T>* points, std::uint32_t m,
                                        std::uint32_t k) {
  return SimplePoint<T, T>{k < m ? points[k].t : std::numeric_limits<T>::infinity(),
                           k > 0 ? points[k - 1].v : T(0)};
}

namespace detail {

// A point as the walk holds it: aligned to its size, so that the GPU reads
// it with one 8- or 16-byte load (the layouts are aligned likewise).
template <typename T>
struct alignas(2 * sizeof(T)) AlignedPoint {
  T t;
  T v;
};

template <typename T>
MPCF_HD AlignedPoint<T> load_point(const SimplePoint<T, T>* p) {
  static_assert(sizeof(AlignedPoint<T>) == sizeof(SimplePoint<T, T>));
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const AlignedPoint<T>*>(p);
#else
  AlignedPoint<T> q;
  std::memcpy(&q, p, sizeof q);
  return q;
#endif
}

}  // namespace detail

// Operations whose fold is core's fold_sum (acc + width * x, skipped when
// width <= 0 or x == 0) and whose integrand stays finite for values up to
// max_abs_value(). Inside a whole-line walk of such an operation the width
// tn - t is finite and >= 0 when all times lie in [-max/4, max/4], and then
// the plain acc + width * x gives bitwise what fold_sum gives: a zero width
// or a zero integrand adds an exact zero to an accumulator that, starting at
// +0, is never -0. The GPU walk uses that form (two tests fewer per step)
// for pairs whose functions are within those bounds.
template <typename Op>
struct UncheckedSumFold : std::false_type {};
template <typename T>
struct UncheckedSumFold<OperationL1Dist<T>> : std::true_type {
  static T max_abs_value() { return std::numeric_limits<T>::max() / 4; }  // |f - g| finite
};
template <typename T>
struct UncheckedSumFold<OperationL2InnerProduct<T>> : std::true_type {
  // f * g is computed in double: finite for any float32 values, for float64
  // values up to sqrt(DBL_MAX) / 2.
  static T max_abs_value() {
    if constexpr (sizeof(T) == 4) {
      return std::numeric_limits<T>::max();
    } else {
      return std::sqrt(std::numeric_limits<T>::max()) / 2;
    }
  }
};
// Operations whose integrand(fv, gv) is bitwise integrand(gv, fv) (|x - y|
// and its powers, x * y): a walk may then hold its two current points in
// either order (pcf_ring_kernel).
template <typename Op>
struct SymmetricIntegrand : std::false_type {};
template <typename T>
struct SymmetricIntegrand<OperationL1Dist<T>> : std::true_type {};
template <typename T>
struct SymmetricIntegrand<OperationL2Dist<T>> : std::true_type {};
template <typename T>
struct SymmetricIntegrand<OperationLpDist<T>> : std::true_type {};
template <typename T>
struct SymmetricIntegrand<OperationLinfDist<T>> : std::true_type {};
template <typename T>
struct SymmetricIntegrand<OperationL2InnerProduct<T>> : std::true_type {};

// The float32 inner product accumulated in float32. The GPU kernels run it
// first (float arithmetic is much faster than double there) and compute a
// pair again with OperationL2InnerProduct<float> (accumulated in double)
// when its float result is not finite: an overflow of a product or of the
// sum, or a true infinity. A finite float result had no overflow anywhere
// (an overflowed term makes the sum +-inf or NaN for ever after), so every
// finite inner product is the float sum of the exact-or-rounded terms, and
// finite input never gives NaN. The second computation is a launch of its
// own (PcfBlockOp::launch_block), not a branch of the float kernel: a kernel
// holding both walks needs the double walk's registers throughout (44
// instead of 32 in pcf_tiled_kernel for sm_90), which cost the float32
// l2_kernel kernel a third of its resident warps and 17-23% of its speed.
template <typename T>
struct L2InnerProductFloatAcc {
  MPCF_HD T init() const { return T(0); }
  MPCF_HD T integrand(T fv, T gv) const { return fv * gv; }
  MPCF_HD T fold(T acc, T width, T x) const { return mpcf::detail::fold_sum(acc, width, x); }
  MPCF_HD T finalize(T acc) const { return acc; }
};

// The operation the GPU tries first for Op, when there is one
// (FloatFirst<Op>::value).
template <typename Op>
struct FloatFirst : std::false_type {};
template <>
struct FloatFirst<OperationL2InnerProduct<float>> : std::true_type {
  using type = L2InnerProductFloatAcc<float>;
};
template <typename T>
struct UncheckedSumFold<L2InnerProductFloatAcc<T>> : std::true_type {
  // Any finite value: an overflow makes the result non-finite, and the pair
  // is then computed again in double.
  static T max_abs_value() { return std::numeric_limits<T>::max(); }
};
template <typename T>
struct SymmetricIntegrand<L2InnerProductFloatAcc<T>> : std::true_type {};
// The operation the block kernels run for Op: its float attempt when it
// has one (FloatFirst), else Op itself.
template <typename Op, bool = FloatFirst<Op>::value>
struct KernelOpOf {
  using type = Op;
  static Op of(const Op& op) { return op; }
};
template <typename Op>
struct KernelOpOf<Op, true> {
  using type = typename FloatFirst<Op>::type;
  static type of(const Op&) { return type{}; }
};
// Operations whose non-finite results the kernels report (TiledBlockArgs::
// redo), for a second launch to compute them again with the exact operation.
template <typename Op>
struct FloatAttempt : std::false_type {};
template <typename T>
struct FloatAttempt<L2InnerProductFloatAcc<T>> : std::true_type {};

template <typename T>
MPCF_HD T max_abs_time() {
  return std::numeric_limits<T>::max() / 4;
}

// Steps per iteration of the walk's loop on the GPU: what gave nvcc 13's
// sm_90 code the fewest instructions per step (float: 15, double: 19.5,
// unchecked fold).
template <typename T>
constexpr int walk_unroll() {
  return sizeof(T) == 4 ? 4 : 2;
}

// One rectangle [t, tn) of the walk with the values fv, gv folded into acc:
// op.fold of the width clipped to the window, or, Unchecked (see
// UncheckedSumFold), the plain acc + width * integrand. Every GPU walk
// folds through this function, so all of them give the same bits.
template <bool Windowed, bool Unchecked, typename T, typename Op>
MPCF_HD op_acc_t<Op> fold_rectangle(op_acc_t<Op> acc, T t, T tn, T fv, T gv, T a, T b,
                                    const Op& op) {
  if constexpr (Unchecked) {
    static_assert(!Windowed && UncheckedSumFold<Op>::value);
    return acc + (tn - t) * op.integrand(fv, gv);
  } else {
    return op.fold(acc, mpcf::detail::clipped_width<Windowed>(t, tn, a, b), op.integrand(fv, gv));
  }
}

// The end of a walk: the unbounded last rectangle [t, +inf), clipped to the
// window, with the last values (held by the sentinels), then op.finalize.
template <typename T, typename Op>
MPCF_HD T finish_walk(op_acc_t<Op> acc, T t, T fv, T gv, T a, T b, const Op& op) {
  acc = op.fold(acc, mpcf::detail::clipped_width<true>(t, std::numeric_limits<T>::infinity(), a, b),
                op.integrand(fv, gv));
  return op.finalize(acc);
}

// f: nf + 1 shifted points, contiguous. g: ng + 1 shifted points, point k at
// g[k * GStride]. total = nf + ng (both >= 1). Returns op.finalize of the
// accumulated value, as integrate_pair<Windowed> on the unshifted points.
// Unchecked: fold the rectangles inside the walk as acc + width * x (see
// UncheckedSumFold: only for the whole line, those operations and functions
// within its bounds). (f is indexed and g advanced as a pointer: what gives nvcc's code for
// sm_90 the fewest instructions per step, with f in global and g in shared
// memory.)
template <std::uint32_t GStride, bool Windowed, bool Unchecked = false, typename T, typename Op>
MPCF_HD T integrate_pair_shifted(const SimplePoint<T, T>* f, const SimplePoint<T, T>* g,
                                 std::uint32_t total, T a, T b, const Op& op) {
  detail::AlignedPoint<T> fn = detail::load_point(f);
  detail::AlignedPoint<T> gn = detail::load_point(g);
  T t = mpcf::detail::min_value(fn.t, gn.t);
  auto acc = op.init();
  std::uint32_t i = 0;  // f: points consumed
#if defined(__CUDA_ARCH__)
#pragma unroll (walk_unroll<T>())
#endif
  for (std::uint32_t s = 0; s < total; ++s) {
    const bool takeF = fn.t <= gn.t;
    const T tn = takeF ? fn.t : gn.t;
    acc = fold_rectangle<Windowed, Unchecked>(acc, t, tn, fn.v, gn.v, a, b, op);
    t = tn;
    if (takeF) {
      ++i;
      fn = detail::load_point(f + i);
    } else {
      g += GStride;
      gn = detail::load_point(g);
    }
  }
  return finish_walk(acc, t, fn.v, gn.v, a, b, op);
}

}  // namespace mpcf::cuda
