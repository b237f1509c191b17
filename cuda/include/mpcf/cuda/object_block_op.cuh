// ObjectBlockOp: the BlockOp (block_op.cuh) of the function types and
// shapes that PcfBlockOp does not take: piecewise linear functions
// (DESIGN §10, walked by PlfPairWalk, plf_walk.hpp) and objects of K
// functions (DESIGN §11, PCFs or PLFs). It is the proof of DESIGN §2: a new
// function type is a walk and a BlockOp; the scheduler, pipeline, stages
// and consumers are the ones PcfBlockOp runs with.
//
// The plane is in objects: block row r is object block.rows.first + r,
// whose components are functions (first + r) K .. (first + r) K + K - 1 of
// the row collection (likewise columns). A pair's components are walked one
// after the other into one accumulator (Walk::continue_from / accumulate,
// the same code as the CPU's ObjectPair), finalized once.
//
// The data movement is PcfBlockOp's, shared by composition: the function
// data on the GPUs, resident (with the multi-GPU broadcast) or streamed per
// block, is PlaneCollections (plane_collections.cuh), asked for the block's
// functions rather than its objects. The kernel reads the functions where
// PlaneCollections put them: no per-block layout, no host planning.
//
// Single PLFs and objects of PLFs whose collections are tame (every |t|, |v|
// within max / 4) take the lane walk for L1, L2, L-inf and the inner
// product: the same kernel and thread per pair, walked by lane::walk_pair
// (plf_lane_walk.cuh: one loop, no divergent branches; the CPU's bits).
//
// object_pair_kernel: a thread per pair; a thread block is 32 columns by
// kRows rows, so a warp walks one row function against 32 consecutive
// column functions and the kRows warps of a thread block share those
// columns in the L1 cache. Every pair is computed by the same sequence of
// operations whatever the block, the slot or the GPU, so the values are the
// same bits for every decomposition and device count.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/plf_walk.hpp"
#include "mpcf/core/simd_walk.hpp"  // plf_tame_walk_allowed
#include "mpcf/core/walk.hpp"
#include "mpcf/cuda/block_op.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_offset_data_manager.cuh"
#include "mpcf/cuda/plane_collections.cuh"
#include "mpcf/cuda/plf_lane_walk.cuh"

namespace mpcf::cuda {

struct ObjectKernelGeometry {
  static constexpr std::uint32_t kCols = 32;  // a warp: one row against 32 columns
  static constexpr std::uint32_t kRows = 8;   // warps per thread block
};

template <typename T>
struct ObjectBlockArgs {
  const std::uint32_t* rowOffsets;  // CSR of the row functions on the GPU
  const SimplePoint<T, T>* rowElements;
  std::uint32_t rowBase;            // function of block row 0's first component
  const std::uint32_t* colOffsets;
  const SimplePoint<T, T>* colElements;
  std::uint32_t colBase;
  std::uint32_t nRows;              // objects
  std::uint32_t nCols;
  std::uint32_t components;         // K
  bool allPairs;                    // every pair of the block is kept
  TriangleSkipMode skip;
  std::int64_t diagonalShift;       // rows.first - cols.first: global i - j = r - c + shift
  std::uint64_t outRowStride;       // out[r * outRowStride + c * outColStride]
  std::uint64_t outColStride;
  T a;
  T b;
  T* out;
};

// How object_pair_kernel walks one component pair into the accumulator:
// WalkComponents with a resumable walk (PairWalk, PlfPairWalk: the CPU's
// ObjectPair code), LaneComponents with lane::walk_pair (PLFs on the tame
// path; Fold: the operation's lane fold).
template <template <bool, typename, typename> class Walk>
struct WalkComponents {
  template <bool Windowed, typename T, typename Op>
  __device__ __forceinline__ op_acc_t<Op> accumulate(const Op& op, op_acc_t<Op> acc,
                                                     const SimplePoint<T, T>* f, std::uint32_t nf,
                                                     const SimplePoint<T, T>* g, std::uint32_t ng,
                                                     T a, T b) const {
    Walk<Windowed, T, Op> w;
    w.init(f, nf, g, ng, op);
    w.continue_from(acc);
    return w.accumulate(a, b, op);
  }
};
template <typename Fold>
struct LaneComponents {
  Fold fold;
  template <bool Windowed, typename T, typename Op>
  __device__ __forceinline__ op_acc_t<Op> accumulate(const Op& op, op_acc_t<Op> acc,
                                                     const SimplePoint<T, T>* f, std::uint32_t nf,
                                                     const SimplePoint<T, T>* g, std::uint32_t ng,
                                                     T a, T b) const {
    return lane::walk_pair<Windowed, T>(fold, op, acc, f, nf, g, ng, a, b);
  }
};

// The value of every kept pair of the block; skipped pairs are not written.
template <bool Windowed, typename T, typename Op, typename Components>
__global__ void __launch_bounds__(ObjectKernelGeometry::kCols * ObjectKernelGeometry::kRows)
    object_pair_kernel(const ObjectBlockArgs<T> args, const Op op, const Components walk) {
  const std::uint32_t c = blockIdx.x * ObjectKernelGeometry::kCols + threadIdx.x;
  if (c >= args.nCols) return;
  const std::uint32_t K = args.components;
  for (std::uint32_t r = blockIdx.y * ObjectKernelGeometry::kRows + threadIdx.y; r < args.nRows;
       r += gridDim.y * ObjectKernelGeometry::kRows) {
    if (!args.allPairs &&
        !pair_kept(static_cast<std::int64_t>(r) - static_cast<std::int64_t>(c) + args.diagonalShift,
                   args.skip)) {
      continue;
    }
    const std::uint32_t fi0 = args.rowBase + r * K;
    const std::uint32_t gj0 = args.colBase + c * K;
    op_acc_t<Op> acc = op.init();
    for (std::uint32_t k = 0; k < K; ++k) {
      const std::uint32_t fb = args.rowOffsets[fi0 + k];
      const std::uint32_t fe = args.rowOffsets[fi0 + k + 1];
      const std::uint32_t gb = args.colOffsets[gj0 + k];
      const std::uint32_t ge = args.colOffsets[gj0 + k + 1];
      acc = walk.template accumulate<Windowed, T>(op, acc, args.rowElements + fb, fe - fb,
                                                  args.colElements + gb, ge - gb, args.a, args.b);
    }
    args.out[r * args.outRowStride + c * args.outColStride] = op.finalize(acc);
  }
}

// Which GPU walk PLFs take: MPCF_CUDA_PLF_WALK=pair forces PlfPairWalk
// (WalkComponents) where the lane walk would run (to compare the two in
// one process); unset or "lane", the lane walk wherever it applies.
inline bool plf_lane_walk_enabled() {
  const char* v = std::getenv("MPCF_CUDA_PLF_WALK");
  return !(v && std::string(v) == "pair");
}

template <typename T, typename Op, template <bool, typename, typename> class Walk>
class ObjectBlockOp {
 public:
  using value_type = T;
  using DataManager = CudaPcfDataManager<T>;
  using Point = PcfPoint<T>;
  static constexpr int kSlots = GpuContext::kComputeStreams;

  struct GpuStorage {
    typename PlaneCollections<Point>::GpuData data;
    std::size_t maxRows = 0;  // objects
    std::size_t maxCols = 0;
  };

  ObjectBlockOp(std::shared_ptr<const DataManager> rows, std::shared_ptr<const DataManager> cols,
                Op op, Window<T> window, TriangleSkipMode skip, std::uint32_t components)
      : inputs_(std::move(rows), std::move(cols)),
        op_(op),
        window_(window),
        skip_(skip),
        K_(std::max<std::uint32_t>(1, components)) {
    if constexpr (kLaneCapable) {
      lane_ = plf_lane_walk_enabled() && tame();
    }
  }

  // Whether the pairs are walked by lane::walk_pair (LaneComponents).
  bool lane_walk() const noexcept { return lane_; }

  TriangleSkipMode skip_mode() const noexcept { return skip_; }
  std::size_t row_count() const noexcept { return inputs_.rows().count() / K_; }
  std::size_t col_count() const noexcept { return inputs_.cols().count() / K_; }
  std::uint32_t components() const noexcept { return K_; }

  void set_resident(bool resident) noexcept { inputs_.set_resident(resident); }
  bool resident() const noexcept { return inputs_.resident(); }
  void upload_resident(const std::vector<int>& devices) { inputs_.upload_resident(devices); }
  bool resident_possible() const { return inputs_.resident_possible(); }
  void set_output_order(BlockOrder order) noexcept { order_ = order; }
  BlockOrder output_order() const noexcept { return order_; }
  void set_slots(int slots) noexcept { slots_ = std::clamp(slots, 1, kSlots); }
  int slots() const noexcept { return slots_; }

  // Only the function data: the kernel needs nothing per block besides it.
  std::uint64_t gpu_storage_bytes(std::size_t maxRows, std::size_t maxCols, bool resident,
                                  int slots) const {
    return inputs_.device_bytes(maxRows * K_, maxCols * K_, resident, slots);
  }

  // The block's functions and their breakpoints fit 32-bit indices.
  bool indices_fit(std::size_t maxRows, std::size_t maxCols) const {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
    const std::uint64_t fr = std::uint64_t(maxRows) * K_, fc = std::uint64_t(maxCols) * K_;
    return fr < kMax && fc < kMax && inputs_.rows().count() < kMax &&
           inputs_.cols().count() < kMax && inputs_.rows().max_subset_elements(fr) <= kMax &&
           inputs_.cols().max_subset_elements(fc) <= kMax;
  }

  GpuStorage init_gpu_storage(GpuContext& ctx, const BlockScheduler& scheduler) const {
    const std::size_t maxRows = scheduler.max_block_rows();
    const std::size_t maxCols = scheduler.max_block_cols();
    if (!indices_fit(maxRows, maxCols)) {
      throw InvalidArgument("a block of " + std::to_string(maxRows) + " x " +
                            std::to_string(maxCols) +
                            " objects holds too many breakpoints for 32-bit indices; lower "
                            "max_block_elements");
    }
    GpuStorage s;
    s.maxRows = maxRows;
    s.maxCols = maxCols;
    s.data = inputs_.init_device(ctx, maxRows * K_, maxCols * K_, slots_);
    allow_cache();
    return s;
  }

  void exec_block(GpuStorage& s, const BlockInfo& block, T* gpuOutput, GpuContext& ctx,
                  int slot = 0) const {
    if (block.n_rows() > s.maxRows || block.n_cols() > s.maxCols) {
      throw std::logic_error("exec_block: block larger than the GPU storage");
    }
    if (slot < 0 || slot >= slots_) {
      throw std::logic_error("exec_block: no such slot in the GPU storage");
    }
    const cudaStream_t stream = ctx.compute_stream(slot);
    // The block's functions: objects [first, last] are functions
    // [first K, (last + 1) K - 1].
    BlockInfo functions = block;
    functions.rows = Band{block.rows.first * K_, (block.rows.last + 1) * K_ - 1};
    functions.cols = Band{block.cols.first * K_, (block.cols.last + 1) * K_ - 1};
    const auto src = inputs_.stage_block(s.data, functions, slot, stream);

    ObjectBlockArgs<T> args{};
    args.rowOffsets = src.rowOffsets;
    args.rowElements = src.rowElements;
    args.rowBase = src.rowBase;
    args.colOffsets = src.colOffsets;
    args.colElements = src.colElements;
    args.colBase = src.colBase;
    args.nRows = static_cast<std::uint32_t>(block.n_rows());
    args.nCols = static_cast<std::uint32_t>(block.n_cols());
    args.components = K_;
    args.allPairs = pair_kept(static_cast<std::int64_t>(block.rows.first) -
                                  static_cast<std::int64_t>(block.cols.last),
                              skip_);
    args.skip = skip_;
    args.diagonalShift =
        static_cast<std::int64_t>(block.rows.first) - static_cast<std::int64_t>(block.cols.first);
    if (order_ == BlockOrder::RowMajor) {
      args.outRowStride = args.nCols;
      args.outColStride = 1;
    } else {
      args.outRowStride = 1;
      args.outColStride = args.nRows;
    }
    args.a = window_.a;
    args.b = window_.b;
    args.out = gpuOutput;
    if (args.nRows == 0 || args.nCols == 0) return;
    using G = ObjectKernelGeometry;
    const dim3 threads(G::kCols, G::kRows);
    const std::uint64_t gx = (std::uint64_t(args.nCols) + G::kCols - 1) / G::kCols;
    // Rows beyond gridDim.y * kRows are taken by the same threads in turn.
    const std::uint64_t gy = std::min<std::uint64_t>(
        (std::uint64_t(args.nRows) + G::kRows - 1) / G::kRows, 65535);
    const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy));
    if constexpr (kLaneCapable) {
      if (lane_) {
        if (window_.is_whole_line()) {
          launch<false>(LaneComponents<LaneFold<true>>{}, grid, threads, stream, args);
        } else {
          launch<true>(LaneComponents<LaneFold<false>>{}, grid, threads, stream, args);
        }
        return;
      }
    }
    if (window_.is_whole_line()) {
      launch<false>(WalkComponents<Walk>{}, grid, threads, stream, args);
    } else {
      launch<true>(WalkComponents<Walk>{}, grid, threads, stream, args);
    }
  }

 private:
  // The kernel uses no shared memory: all of it may serve as L1 cache for
  // the column functions a thread block shares.
  void allow_cache() const {
    if constexpr (kLaneCapable) {
      allow_cache_of<false, LaneComponents<LaneFold<true>>>();
      allow_cache_of<true, LaneComponents<LaneFold<false>>>();
    }
    allow_cache_of<false, WalkComponents<Walk>>();
    allow_cache_of<true, WalkComponents<Walk>>();
  }
  template <bool Windowed, typename Components>
  static void allow_cache_of() {
    MPCF_CUDA_TRY(cudaFuncSetAttribute(object_pair_kernel<Windowed, T, Op, Components>,
                                       cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  }

  template <bool Windowed, typename Components>
  void launch(Components walk, dim3 grid, dim3 threads, cudaStream_t stream,
              const ObjectBlockArgs<T>& args) const {
    object_pair_kernel<Windowed, T, Op, Components><<<grid, threads, 0, stream>>>(args, op_, walk);
    MPCF_CUDA_CHECK_LAUNCH();
  }

  // PLFs with a lane fold for Op.
  static constexpr bool kLaneCapable =
      std::is_same_v<Walk<false, T, Op>, PlfPairWalk<false, T, Op>> && lane::kHasLaneFold<Op>;
  template <bool Unchecked>
  using LaneFold = typename lane::FoldOf<Op, Unchecked>::type;

  // Every |t| and |v| of both collections within the tame path's bounds
  // (one pass over the host data; the same answer for every block, slot
  // and GPU, so the values do not depend on the decomposition).
  bool tame() const {
    T maxT = T(0), maxV = T(0);
    auto scan = [&](const DataManager& m) {
      for (const Point& p : m.host().elements()) {
        const T at = p.t < T(0) ? -p.t : p.t;
        const T avl = p.v < T(0) ? -p.v : p.v;
        maxT = at > maxT ? at : maxT;
        maxV = avl > maxV ? avl : maxV;
      }
    };
    scan(inputs_.rows());
    if (!inputs_.same_data()) scan(inputs_.cols());
    return plf_tame_walk_allowed<T>(op_, maxT, maxV);
  }

  PlaneCollections<Point> inputs_;
  Op op_;
  Window<T> window_;
  TriangleSkipMode skip_;
  std::uint32_t K_;
  int slots_ = kSlots;
  BlockOrder order_ = BlockOrder::RowMajor;
  bool lane_ = false;
};

}  // namespace mpcf::cuda
