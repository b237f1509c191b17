// PcfBlockOp: the PCF policy of the generic GPU engine (the BlockOp concept,
// block_op.cuh). Its main members:
//
//   typename BlockOp::value_type               output scalar type
//   typename BlockOp::GpuStorage               per-GPU device data, movable
//   GpuStorage init_gpu_storage(GpuContext&, const BlockScheduler&)
//       allocates one GPU's arrays, sized for the scheduler's largest block
//       (and uploads the whole collection once when it is resident)
//   void exec_block(GpuStorage&, const BlockInfo&, value_type* gpuOutput,
//                   GpuContext&, int slot)
//       enqueues on the context's compute stream `slot` what the block needs
//       (its function data unless resident, its sorted layout, both in the
//       storage's slot `slot`) and the kernels writing the block into
//       gpuOutput (n_rows x n_cols, row-major or column-major, see
//       set_output_order), which the pipeline has zeroed. It does not wait for
//       the GPU: the pipeline orders and waits with events, and reuses a slot
//       only after its previous block has been downloaded.
//
// Per block, on the host: the block's rows and columns are sorted by length
// (longest first, ties by index) and the sorted layout's offsets computed
// (BlockLayoutPlan, block_layout_plan.hpp, with the PCF kernels' tile
// width); on the GPU: pcf_layout_kernel builds the layout and
// pcf_ring_kernel or pcf_tiled_kernel (PcfKernel) computes, one launch per
// class of tile sizes (tiles of similar size share a launch, so shared
// memory is reserved for what a launch needs; tiles too large for shared
// memory are read from global memory).
//
// Rows and columns have separate data managers: the same one for pdist and
// l2_kernel, X and Y for cdist.
//
// Only the PCF-specific part lives here (the layout and block kernels, their
// launch geometry and the kernel choice). The rest is shared with any other
// BlockOp (a PLF one, DESIGN §10) by composition: the host layout plan
// (block_layout_plan.hpp), the function data on the GPUs, resident or
// streamed (PlaneCollections, plane_collections.cuh, over
// CudaOffsetDataManager), and the pinned staging of the layout offsets
// (PinnedStagingRing, pinned_staging.cuh).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/errors.hpp"
#include "mpcf/core/walk.hpp"
#include "mpcf/cuda/bin_bounds.cuh"
#include "mpcf/cuda/block_layout_plan.hpp"
#include "mpcf/cuda/block_op.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_offset_data_manager.cuh"
#include "mpcf/cuda/cuda_pcf_kernel.cuh"
#include "mpcf/cuda/pinned_staging.cuh"
#include "mpcf/cuda/plane_collections.cuh"

namespace mpcf::cuda {

// Which block kernel computes the staged tiles: Auto is the faster one for
// the type (measured on an H200: SharedRows for float64, else Ring;
// SharedRowsSplit for float32 where it leaves room for 32 warps and the
// walks have no bounds, else TiledHalfWarp); tiles too large for shared
// memory, or leaving room for fewer than PcfRingGeometry::kMinGroups rings,
// always go to pcf_tiled_kernel.
// Tiled: a warp walks one row against two tiles where the pair fits (see
// cuda_pcf_kernel.cuh), the row read from global memory; SharedRows: the
// same with each warp's row staged in shared memory too (one load per
// step) where the buffers fit (PcfBlockOp::launch_shape); SharedRowsSplit:
// the rows staged likewise, walked with two predicated shared loads per
// step (one from the row, one from the tile); TiledHalfWarp: always one
// tile per half-warp, two rows per warp. All give the same bits.
enum class PcfKernel { Auto, Tiled, SharedRows, TiledHalfWarp, Ring, SharedRowsSplit };

template <typename T, typename Op>
class PcfBlockOp {
 public:
  using value_type = T;
  using DataManager = CudaPcfDataManager<T>;
  using Point = PcfPoint<T>;

  static constexpr int kSlots = GpuContext::kComputeStreams;

  // What one block in flight needs besides its function data: its sorted
  // layout and the layout's offsets. Consecutive blocks alternate between
  // kSlots slots, each with its own compute stream of the context, so a
  // block's kernels start while the previous block's finish.
  struct Slot {
    DeviceArray<std::uint32_t> meta;
    DeviceArray<Point> rowPoints;
    DeviceArray<Point> tiles;
    DeviceArray<std::uint32_t> fast;  // per sorted row, then per column slot (layout kernel)
    DeviceArray<std::uint32_t> redo;  // FloatFirst<Op>: TiledBlockArgs::redo
    // With bin bounds (enable_bin_bounds): the bins of the sorted rows and
    // column slots (bin-major), their norms, and the (row, tile) masks.
    DeviceArray<float> bins;
    DeviceArray<std::uint16_t> mask;
    BlockLayoutPlan plan;
  };
  struct GpuStorage {
    typename PlaneCollections<Point>::GpuData data;  // resident, or the slots' subsets
    Slot slots[kSlots];
    CudaEvent launched[kSlots];  // recorded after each slot's last block (exec_block)
    // The host staging of the layout offsets, `meta` per slot. Declared
    // after the slots: destroyed first, waiting for copies into them.
    PinnedStagingRing<std::uint32_t, kSlots> metaHost;
    std::size_t maxRows = 0;
    std::size_t maxTiles = 0;
    BinSpec binSpec;  // the op's at init_gpu_storage
    std::size_t sharedPerBlock = 0;  // opt-in limit
    std::size_t sharedPerSm = 0;
    std::uint64_t smCount = 1;
  };

  using KernelOpType = typename KernelOpOf<Op>::type;

  // The kernels' tile width, which the host layout plan takes as a parameter.
  static constexpr std::uint32_t kTileCols = PcfTileGeometry::kTileCols;

  PcfBlockOp(std::shared_ptr<const DataManager> rows, std::shared_ptr<const DataManager> cols,
             Op op, Window<T> window, TriangleSkipMode skip)
      : inputs_(std::move(rows), std::move(cols)),
        op_(op),
        window_(window),
        skip_(skip),
        longestCol_(longest_function(inputs_.cols())) {}

  TriangleSkipMode skip_mode() const noexcept { return skip_; }
  std::size_t row_count() const noexcept { return inputs_.rows().count(); }
  std::size_t col_count() const noexcept { return inputs_.cols().count(); }
  const DataManager& rows() const noexcept { return inputs_.rows(); }
  const DataManager& cols() const noexcept { return inputs_.cols(); }
  bool same_data() const noexcept { return inputs_.same_data(); }

  // Upload each collection once per GPU instead of a subset per block.
  void set_resident(bool resident) noexcept { inputs_.set_resident(resident); }

  // Resident: sends the collections to every one of `devices` now, in one
  // pass over the host data (PlaneCollections::upload_resident), for
  // init_gpu_storage on those devices to take; without it, each GPU's
  // init_gpu_storage uploads on its own. Returns when the copies are
  // complete.
  void upload_resident(const std::vector<int>& devices) { inputs_.upload_resident(devices); }
  bool resident() const noexcept { return inputs_.resident(); }
  void set_output_order(BlockOrder order) noexcept { order_ = order; }
  BlockOrder output_order() const noexcept { return order_; }
  void set_kernel(PcfKernel kernel) noexcept { kernel_ = kernel; }
  PcfKernel kernel() const noexcept { return kernel_; }

  // Bin lower bounds (bin_bounds.hpp) for a consumer that gives bounds (a
  // kNN): the L1 distance only, where the span of the functions allows;
  // call before planning the GPU memory (gpu_storage_bytes counts them).
  // Returns whether they are on. One pass over the first and last
  // breakpoints of both collections.
  bool enable_bin_bounds() {
    bins_ = BinSpec{};
    if constexpr (std::is_same_v<KernelOpType, OperationL1Dist<T>>) {
      double lo = std::numeric_limits<double>::infinity();
      double hi = -lo;
      std::uint64_t points = 0, functions = 0;
      bool finite = true;
      // One pass when rows and columns are one collection (pdist, the
      // symmetric kNN).
      const DataManager* scanned[] = {&rows(), same_data() ? nullptr : &cols()};
      for (const DataManager* m : scanned) {
        if (m == nullptr) continue;
        const auto& h = m->host();
        for (std::size_t k = 0; k < h.count(); ++k) {
          const std::uint64_t len = h.size_of(k);
          points += len;
          if (len == 0) continue;
          const double first = static_cast<double>(h.data_of(k)[0].t);
          const double last = static_cast<double>(h.data_of(k)[len - 1].t);
          finite = finite && std::isfinite(first) && std::isfinite(last);
          lo = std::min(lo, first);
          hi = std::max(hi, last);
        }
        functions += h.count();
      }
      if (!finite || functions == 0) return false;
      lo = std::max(lo, static_cast<double>(window_.a));
      hi = std::min(hi, static_cast<double>(window_.b));
      bins_ = make_bin_spec<T>(lo, hi, double(points) / double(functions),
                               longest_function(rows()) + longestCol_ + 3);
    }
    return bins_.enabled();
  }
  const BinSpec& bin_spec() const noexcept { return bins_; }

  // Ring groups per thread block of `kernel` for a launch whose largest
  // tile takes tileBytes (0: pcf_tiled_kernel, staged or not); Auto: the
  // rings of a float64 launch that does not take shared rows.
  static std::uint32_t ring_groups(PcfKernel kernel, std::uint64_t tileBytes,
                                   std::uint64_t sharedPerBlock) {
    const PcfKernel k = kernel == PcfKernel::Auto
                            ? (sizeof(T) == 8 ? PcfKernel::Ring : PcfKernel::Tiled)
                            : kernel;
    if (k != PcfKernel::Ring || !SymmetricIntegrand<Op>::value) return 0;
    return PcfRingGeometry::groups_for(tileBytes, sharedPerBlock,
                                       PcfRingGeometry::ring_bytes<T>());
  }

  // How the launch of the plan's tiles [q, end) runs: with rings
  // (pcf_ring_kernel, ringGroups > 0) or pcf_tiled_kernel with warpTiles
  // tiles per row group; sharedTiles: the bytes of staged tiles (0: read
  // from global memory); rowBufferPoints > 0: with the rows staged too
  // (SharedRows), a buffer of that many points per warp, in thread blocks
  // of `threads`. Tiled staging takes the launch's first (largest) pair of
  // tiles when it fits, else its largest tile with one tile per row group,
  // else nothing. Rows are staged (PcfKernel::SharedRows and
  // SharedRowsSplit, and Auto) when the pair is staged, the integrand is
  // symmetric and the buffers leave room for at least kMinSharedRowsWarps
  // warps per multiprocessor (Auto in float32: kMinSplitWarps, with split
  // loads, for walks without bounds: `pruned` launches keep half-warps);
  // else Auto takes rings in float64 where they fit and half-warps in
  // float32.
  struct LaunchShape {
    std::uint32_t ringGroups = 0;
    std::uint32_t warpTiles = 1;
    std::uint64_t sharedTiles = 0;
    std::uint32_t rowBufferPoints = 0;
    std::uint32_t threads = 0;  // SharedRows only
    bool splitLoads = false;    // shared rows walked with two loads per step
  };
  static constexpr std::uint32_t kMinSharedRowsWarps = 16;
  // Auto in float32 (walks without bounds): shared rows with split loads
  // where the buffers leave room for this many warps per multiprocessor,
  // else half-warps.
  static constexpr std::uint32_t kMinSplitWarps = 32;
  static LaunchShape launch_shape(PcfKernel kernel, const BlockLayoutPlan& p, std::uint32_t q,
                                  std::uint32_t end, std::uint64_t sharedPerBlock,
                                  std::uint64_t sharedPerSm, bool pruned = false) {
    const std::uint64_t first = tile_bytes(p, q, sizeof(Point));
    const std::uint64_t pair = first + (q + 1 < end ? tile_bytes(p, q + 1, sizeof(Point)) : 0);
    // Auto: float64 takes shared rows where they fit, else rings; float32
    // shared rows with split loads where they leave room for 32 warps and
    // the walks have no bounds, else half-warps (see the file comment of
    // cuda_pcf_kernel.cuh).
    const bool wide = sizeof(T) == 8;
    const PcfKernel k = kernel != PcfKernel::Auto ? kernel
                        : wide                    ? PcfKernel::SharedRows
                        : pruned                  ? PcfKernel::TiledHalfWarp
                                                  : PcfKernel::SharedRowsSplit;
    const bool split = k == PcfKernel::SharedRowsSplit;
    const std::uint32_t minWarps =
        split && kernel == PcfKernel::Auto ? kMinSplitWarps : kMinSharedRowsWarps;
    LaunchShape shape;
    if ((k == PcfKernel::SharedRows || split) && pair <= sharedPerBlock &&
        SymmetricIntegrand<KernelOpType>::value && p.nRows > 0) {
      // The longest row of the block (rows sorted longest first), with its
      // sentinel, in whole 16-byte units.
      const std::uint64_t points = (p.rowOffsets[1] - p.rowOffsets[0] + 1) & ~std::uint64_t(1);
      std::uint32_t bestWarps = 0, bestThreads = 0;
      for (const std::uint32_t threads : {256u, 512u, 1024u}) {
        const std::uint64_t smem = pair + (threads / 32) * points * sizeof(Point);
        if (smem > sharedPerBlock) break;
        const std::uint64_t blocks =
            std::min<std::uint64_t>(2048 / threads, shared_blocks_per_sm(smem, sharedPerSm));
        const std::uint32_t warps = static_cast<std::uint32_t>(blocks * threads / 32);
        if (warps > bestWarps) {
          bestWarps = warps;
          bestThreads = threads;
        }
      }
      if (bestWarps >= minWarps) {
        shape.splitLoads = split;
        shape.warpTiles = 2;
        shape.sharedTiles = pair;
        shape.rowBufferPoints = static_cast<std::uint32_t>(points);
        shape.threads = bestThreads;
        return shape;
      }
    }
    if (first <= sharedPerBlock &&
        (k == PcfKernel::Ring || (kernel == PcfKernel::Auto && wide))) {
      shape.ringGroups = ring_groups(PcfKernel::Ring, first, sharedPerBlock);
      if (shape.ringGroups > 0) {
        shape.sharedTiles = first;
        return shape;
      }
    }
    const bool halfWarp = k == PcfKernel::TiledHalfWarp || kernel == PcfKernel::Auto;
    if (!halfWarp && pair <= sharedPerBlock) {
      shape.warpTiles = 2;
      shape.sharedTiles = pair;
    } else if (first <= sharedPerBlock) {
      shape.sharedTiles = first;
    } else {
      shape.warpTiles = halfWarp ? 1 : 2;
    }
    return shape;
  }

  // Whole collections can be resident only when their points fit 32-bit
  // offsets.
  bool resident_possible() const { return inputs_.resident_possible(); }

  // Slots of the GPU storage (1 or kSlots; set before init_gpu_storage): with
  // one, blocks cannot overlap (the pipeline then uses one stream).
  void set_slots(int slots) noexcept { slots_ = std::clamp(slots, 1, kSlots); }
  int slots() const noexcept { return slots_; }

  // Device bytes per GPU for blocks of up to maxRows x maxCols: the resident
  // collections, and per slot the streamed subsets, the layout and its
  // offsets.
  std::uint64_t gpu_storage_bytes(std::size_t maxRows, std::size_t maxCols, bool resident,
                                  int slots) const {
    const std::uint64_t layout = (layout_row_points(rows(), maxRows) +
                                  layout_tile_points(cols(), maxCols, longestCol_, kTileCols)) *
                                 sizeof(Point);
    const std::uint64_t flags = maxRows + layout_tiles(maxCols, kTileCols) * kTileCols;
    const std::uint64_t redo = FloatFirst<Op>::value ? 1 : 0;
    const std::uint64_t perSlot =
        layout + (meta_count(maxRows, maxCols) + flags + redo) * sizeof(std::uint32_t) +
        bin_bytes(maxRows, layout_tiles(maxCols, kTileCols));
    return inputs_.device_bytes(maxRows, maxCols, resident, slots) +
           static_cast<std::uint64_t>(slots) * perSlot;
  }
  std::uint64_t gpu_storage_bytes(std::size_t maxRows, std::size_t maxCols) const {
    return gpu_storage_bytes(maxRows, maxCols, resident(), slots_);
  }

  // The block's layout offsets fit the kernels' 32-bit indices.
  bool indices_fit(std::size_t maxRows, std::size_t maxCols) const {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
    return maxRows < kMax && maxCols < kMax && layout_row_points(rows(), maxRows) <= kMax &&
           layout_tile_points(cols(), maxCols, longestCol_, kTileCols) <= kMax;
  }

  GpuStorage init_gpu_storage(GpuContext& ctx, const BlockScheduler& scheduler) const {
    constexpr std::size_t C = PcfTileGeometry::kTileCols;
    const std::size_t maxRows = scheduler.max_block_rows();
    const std::size_t maxCols = scheduler.max_block_cols();
    if (!indices_fit(maxRows, maxCols)) {
      throw InvalidArgument("a block of " + std::to_string(maxRows) + " x " +
                            std::to_string(maxCols) +
                            " functions holds too many breakpoints for 32-bit indices; lower "
                            "max_block_elements");
    }
    GpuStorage s;
    s.maxRows = maxRows;
    s.maxTiles = (maxCols + C - 1) / C;
    s.sharedPerBlock = ctx.info().sharedMemPerBlockOptin;
    s.sharedPerSm = ctx.info().sharedMemPerSm;
    s.smCount = static_cast<std::uint64_t>(std::max(1, ctx.info().smCount));
    s.data = inputs_.init_device(ctx, maxRows, maxCols, slots_);
    const std::size_t metaCount = meta_count(maxRows, maxCols);
    s.metaHost = PinnedStagingRing<std::uint32_t, kSlots>(metaCount, slots_);
    for (int k = 0; k < slots_; ++k) {
      Slot& slot = s.slots[k];
      slot.meta = ctx.allocate<std::uint32_t>(metaCount);
      slot.rowPoints =
          ctx.allocate<Point>(static_cast<std::size_t>(layout_row_points(rows(), maxRows)));
      slot.tiles = ctx.allocate<Point>(
          static_cast<std::size_t>(layout_tile_points(cols(), maxCols, longestCol_, kTileCols)));
      slot.fast = ctx.allocate<std::uint32_t>(maxRows + s.maxTiles * C);
      if constexpr (FloatFirst<Op>::value) slot.redo = ctx.allocate<std::uint32_t>(1);
      if (bins_.enabled()) {
        slot.bins = ctx.allocate<float>(bin_floats(maxRows, s.maxTiles));
        slot.mask = ctx.allocate<std::uint16_t>(maxRows * s.maxTiles);
      }
    }
    s.binSpec = bins_;
    allow_shared_memory(s.sharedPerBlock);
    return s;
  }

  // Enqueues the block on compute stream `slot` of the context, with the
  // storage's slot of that number (the caller alternates them and reuses a
  // slot only once its previous block's output has been downloaded).
  // bounds: the values the consumer does not need exactly (pair_bounds.hpp;
  // KnnStage's lists): for MonotoneFold operations the kernels stop those
  // pairs' walks early (not pcf_ring_kernel, which ignores them).
  void exec_block(GpuStorage& s, const BlockInfo& block, T* gpuOutput, GpuContext& ctx,
                  int slot = 0, const PairBounds<T>& bounds = {}) const {
    upload_block(s, block, ctx.compute_stream(slot), slot);
    launch_block(s, block, gpuOutput, ctx.compute_stream(slot), slot, bounds);
    s.launched[slot].record(ctx.compute_stream(slot));
  }

  // The two halves of exec_block (the benchmark times the kernel alone):
  // the block's data and sorted layout, then the computing kernels.
  void upload_block(GpuStorage& s, const BlockInfo& block, cudaStream_t stream,
                    int slotIndex = 0) const {
    constexpr std::uint32_t C = PcfTileGeometry::kTileCols;
    if (block.n_rows() > s.maxRows || (block.n_cols() + C - 1) / C > s.maxTiles) {
      throw std::logic_error("upload_block: block larger than the GPU storage");
    }
    if (slotIndex < 0 || slotIndex >= slots_) {
      throw std::logic_error("upload_block: no such slot in the GPU storage");
    }
    Slot& slot = s.slots[slotIndex];
    const PairSelection selection = select_pairs(block, skip_, same_data());
    plan_block_layout(rows(), cols(), block, selection, kTileCols, slot.plan);
    plan_launches(slot.plan, sizeof(Point), s.sharedPerBlock);
    const BlockLayoutPlan& p = slot.plan;
    // Blocks on the two streams overlap only when each is one launch (tiles
    // of one size): launches of different tile sizes running together
    // measured slower (m varying 10..1000: 0.285 -> 0.307 s, f64 n = 20000)
    // than one after the other.
    const int other = (slotIndex + 1) % slots_;
    if (other != slotIndex &&
        (p.launchEnds.size() > 1 || s.slots[other].plan.launchEnds.size() > 1)) {
      s.launched[other].make_wait(stream);
    }

    // The block's function data (streamed: its subsets go up now).
    const typename PlaneCollections<Point>::BlockSource src =
        inputs_.stage_block(s.data, block, slotIndex, stream);

    // The layout's offsets go up in one copy (the pinned buffer is reused
    // once the previous copy has left it).
    const LayoutMeta v = meta_view(slot.meta.data(), s.maxRows, s.maxTiles);
    pack_layout_meta(p, meta_view(s.metaHost.acquire(slotIndex), s.maxRows, s.maxTiles));
    s.metaHost.upload(slotIndex, slot.meta.data(), stream);

    LayoutArgs la{};
    la.srcOffsets = src.rowOffsets;
    la.rowBase = src.rowBase;
    la.colBase = src.colBase;
    la.rowOrder = v.rowOrder;
    la.rowOffsets = v.rowOffsets;
    la.colOrder = v.colOrder;
    la.colLength = v.colLength;
    la.tileOffsets = v.tileOffsets;
    la.nRows = p.nRows;
    la.nColSlots = p.nTiles * C;
    la.rowFast = slot.fast.data();
    la.colFast = slot.fast.data() + s.maxRows;
    la.valueBound = -1;
    if constexpr (UncheckedSumFold<Op>::value) {
      la.valueBound = static_cast<double>(UncheckedSumFold<Op>::max_abs_value());
    }
    la.timeBound = static_cast<double>(max_abs_time<T>());
    // A kernel of one warp per item (rows, then column slots) over the
    // block: one launch where rows and columns come from one array, else a
    // rows launch and a columns launch (none for an empty side).
    constexpr std::uint32_t kWarps = PcfTileGeometry::kLayoutThreads / 32;
    auto per_source = [&](auto launch) {
      auto run = [&](const LayoutArgs& a, const Point* from, std::uint32_t items) {
        if (items == 0) return;
        launch((items + kWarps - 1) / kWarps, a, from);
        MPCF_CUDA_CHECK_LAUNCH();
      };
      if (src.one_source()) {
        run(la, src.rowElements, la.nRows + la.nColSlots);
        return;
      }
      LayoutArgs rowsOnly = la;
      rowsOnly.nColSlots = 0;
      run(rowsOnly, src.rowElements, la.nRows);
      LayoutArgs colsOnly = la;
      colsOnly.srcOffsets = src.colOffsets;
      colsOnly.nRows = 0;
      run(colsOnly, src.colElements, la.nColSlots);
    };
    per_source([&](std::uint32_t grid, const LayoutArgs& a, const Point* from) {
      pcf_layout_kernel<T><<<grid, PcfTileGeometry::kLayoutThreads, 0, stream>>>(
          a, from, slot.rowPoints.data(), slot.tiles.data());
    });
    if (s.binSpec.enabled()) {
      // The bins of the same functions.
      const BinArgs b = bin_args(s, slot);
      per_source([&](std::uint32_t grid, const LayoutArgs& a, const Point* from) {
        pcf_bins_kernel<T><<<grid, PcfTileGeometry::kLayoutThreads, 0, stream>>>(a, from, b);
      });
    }
  }

  // The bin arrays of a slot (bin_bounds.cuh) as the kernels take them
  // (bin_args; the GPU tests read the bins through it too): rows' bins,
  // columns' bins, rows' norms, columns' norms, strides rounded up to whole
  // bound blocks.
  static std::uint64_t bin_row_stride(std::size_t maxRows) {
    constexpr std::uint64_t K = BinGeometry::kTile;
    return (maxRows + K - 1) / K * K;
  }
  static std::uint64_t bin_col_stride(std::size_t maxTiles) {
    constexpr std::uint64_t K = BinGeometry::kTile;
    return (maxTiles * kTileCols + K - 1) / K * K;
  }
  std::size_t bin_floats(std::size_t maxRows, std::size_t maxTiles) const {
    const std::uint64_t rs = bin_row_stride(maxRows), cs = bin_col_stride(maxTiles);
    return static_cast<std::size_t>((bins_.bins + 1) * (rs + cs));
  }
  std::uint64_t bin_bytes(std::size_t maxRows, std::size_t maxTiles) const {
    if (!bins_.enabled()) return 0;
    return bin_floats(maxRows, maxTiles) * sizeof(float) +
           std::uint64_t(maxRows) * maxTiles * sizeof(std::uint16_t);
  }
  static BinArgs bin_args(const GpuStorage& s, const Slot& slot) {
    BinArgs b{};
    b.spec = s.binSpec;
    b.rowStride = static_cast<std::uint32_t>(bin_row_stride(s.maxRows));
    b.colStride = static_cast<std::uint32_t>(bin_col_stride(s.maxTiles));
    float* base = const_cast<float*>(slot.bins.data());
    b.rowBins = base;
    b.colBins = b.rowBins + std::uint64_t(b.spec.bins) * b.rowStride;
    b.rowNorm = b.colBins + std::uint64_t(b.spec.bins) * b.colStride;
    b.colNorm = b.rowNorm + b.rowStride;
    b.mask = const_cast<std::uint16_t*>(slot.mask.data());
    b.maskStride = static_cast<std::uint32_t>(s.maxTiles);
    return b;
  }

  void launch_block(const GpuStorage& s, const BlockInfo& block, T* gpuOutput,
                    cudaStream_t stream, int slotIndex = 0,
                    const PairBounds<T>& bounds = {}) const {
    using G = PcfTileGeometry;
    const Slot& slot = s.slots[slotIndex];
    const BlockLayoutPlan& p = slot.plan;
    if (p.nRows == 0 || p.nCols == 0) return;
    if (p.nRows != block.n_rows() || p.nCols != block.n_cols()) {
      throw std::logic_error("launch_block: the uploaded layout is of another block");
    }
    const LayoutMeta v =
        meta_view(const_cast<std::uint32_t*>(slot.meta.data()), s.maxRows, s.maxTiles);
    TiledBlockArgs<T> args{};
    args.rowPoints = slot.rowPoints.data();
    args.rowOffsets = v.rowOffsets;
    args.rowOrder = v.rowOrder;
    args.tiles = slot.tiles.data();
    args.tileOffsets = v.tileOffsets;
    args.colOrder = v.colOrder;
    args.colLength = v.colLength;
    args.rowFast = slot.fast.data();
    args.colFast = slot.fast.data() + s.maxRows;
    args.nRows = p.nRows;
    args.nCols = p.nCols;
    args.selection = p.selection;
    args.skip = skip_;
    args.diagonalShift =
        static_cast<std::int64_t>(block.rows.first) - static_cast<std::int64_t>(block.cols.first);
    if (order_ == BlockOrder::RowMajor) {
      args.outRowStride = p.nCols;
      args.outColStride = 1;
    } else {
      args.outRowStride = 1;
      args.outColStride = p.nRows;
    }
    args.a = window_.a;
    args.b = window_.b;
    args.out = gpuOutput;
    args.bounds = bounds;
    const bool wholeLine = window_.is_whole_line();
    constexpr bool kCanPrune = MonotoneFold<Op>::value && !FloatFirst<Op>::value;
    const bool prune = kCanPrune && bounds.any();
    // Bin bounds: pcf_bin_bound_kernel first rules out what it can (+inf in
    // the output) and leaves the (row, tile) masks for the binned walks.
    const bool binned = prune && s.binSpec.enabled();
    const std::uint32_t listBytes = binned ? G::kBinnedListBytes : 0;
    if (binned) {
      const BinArgs b = bin_args(s, slot);
      args.binMask = b.mask;
      args.binMaskStride = b.maskStride;
      const std::uint32_t colSlots = p.nTiles * G::kTileCols;
      const dim3 grid((colSlots + BinGeometry::kTile - 1) / BinGeometry::kTile,
                      (p.nRows + BinGeometry::kTile - 1) / BinGeometry::kTile);
      pcf_bin_bound_kernel<T><<<grid, BinGeometry::kThreads, 0, stream>>>(args, b, colSlots);
      MPCF_CUDA_CHECK_LAUNCH();
    }
    // A FloatFirst operation: its float attempt in the kernels below, then
    // a redo launch after each for the pairs it could not compute (see
    // L2InnerProductFloatAcc).
    using KernelOp = typename KernelOpOf<Op>::type;
    const KernelOp kernelOp = KernelOpOf<Op>::of(op_);
    if constexpr (FloatFirst<Op>::value) {
      args.redo = const_cast<std::uint32_t*>(slot.redo.data());
      MPCF_CUDA_TRY(cudaMemsetAsync(args.redo, 0, sizeof(std::uint32_t), stream));
    }

    std::uint32_t q = 0;
    for (const std::uint32_t end : p.launchEnds) {
      const LaunchShape shape =
          launch_shape(kernel_, p, q, end, s.sharedPerBlock - (binned ? listBytes + 16 : 0),
                       s.sharedPerSm, prune);
      const bool staged = shape.sharedTiles > 0;
      const bool sharedRows = shape.rowBufferPoints > 0;
      const std::uint32_t ringGroups = shape.ringGroups;
      const std::uint32_t threads = ringGroups   ? ringGroups * G::kTileCols
                                    : sharedRows ? shape.threads
                                    : staged     ? threads_for(shape.sharedTiles, s.sharedPerSm)
                                                 : 256;
      // Dynamic shared memory: the rings, then the launch's largest tiles,
      // then the warps' row buffers.
      const std::size_t used =
          static_cast<std::size_t>(shape.sharedTiles) +
          std::size_t(ringGroups) * PcfRingGeometry::ring_bytes<T>() +
          std::size_t(threads / 32) * shape.rowBufferPoints * sizeof(Point);
      // Binned: the row list after the rest (16-byte aligned).
      args.rowListOffset = static_cast<std::uint32_t>((used + 15) / 16 * 16);
      const std::size_t smem = binned ? args.rowListOffset + listBytes : used;
      args.tileBegin = q;
      args.tileCount = end - q;
      args.warpTiles = shape.warpTiles;
      args.rowBufferOffset = static_cast<std::uint32_t>(shape.sharedTiles);
      args.rowBufferPoints = shape.rowBufferPoints;
      // Up to kRowPasses rows per thread; fewer when the launch would
      // otherwise be only a few waves of thread blocks (the last wave of a
      // launch runs part-empty).
      const std::uint32_t groups = threads / (G::kTileCols * shape.warpTiles);
      const std::uint64_t units = (args.tileCount + shape.warpTiles - 1) / shape.warpTiles;
      std::uint64_t resident = 2048 / threads;
      if (staged) resident = std::min<std::uint64_t>(resident, shared_blocks_per_sm(smem, s.sharedPerSm));
      const std::uint64_t concurrent = std::max<std::uint64_t>(1, resident) * s.smCount;
      const std::uint64_t passes =
          std::clamp<std::uint64_t>(std::uint64_t(p.nRows) * units / (16 * concurrent * groups), 1,
                                    binned ? G::kBinnedRowPasses : G::kRowPasses);
      args.rowsPerBlock = groups * static_cast<std::uint32_t>(passes);
      const std::uint64_t chunks = (p.nRows + args.rowsPerBlock - 1) / args.rowsPerBlock;
      const std::uint64_t grid = chunks * units;
      if (grid > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
        throw InvalidArgument("a block of " + std::to_string(block.n_rows()) + " x " +
                              std::to_string(block.n_cols()) +
                              " pairs is too large for one kernel launch; lower max_block_elements");
      }
      auto launch = [&](auto kernel, const auto& op, std::size_t shared) {
        kernel<<<static_cast<unsigned>(grid), threads, shared, stream>>>(args, args.rowPoints, op);
        MPCF_CUDA_CHECK_LAUNCH();
      };
      const bool split = sharedRows && shape.splitLoads;
      if (ringGroups) {
        if constexpr (SymmetricIntegrand<KernelOp>::value) {
          if (wholeLine) launch(pcf_ring_kernel<false, T, KernelOp>, kernelOp, smem);
          else launch(pcf_ring_kernel<true, T, KernelOp>, kernelOp, smem);
        }
      } else if (prune) {
        if constexpr (kCanPrune) {
          // Bin bounds exist for the L1 distance only (enable_bin_bounds):
          // no binned kernels for the other operations.
          constexpr bool kBins = std::is_same_v<KernelOp, OperationL1Dist<T>>;
          if (binned) {
            launch_walks<true, kBins>(launch, kernelOp, smem, sharedRows, split, staged, wholeLine);
          } else {
            launch_walks<true, false>(launch, kernelOp, smem, sharedRows, split, staged, wholeLine);
          }
        }
      } else {
        launch_walks<false, false>(launch, kernelOp, smem, sharedRows, split, staged, wholeLine);
      }
      if constexpr (FloatFirst<Op>::value) {
        if (wholeLine) launch(pcf_tiled_kernel<false, false, T, Op, true>, op_, 0);
        else launch(pcf_tiled_kernel<false, true, T, Op, true>, op_, 0);
      }
      q = end;
    }
  }

 private:
  // pcf_tiled_kernel<Staged, !wholeLine, T, KOp, false, SharedRows, Prune,
  // Binned, Split> through launch_block's `launch`.
  template <bool Staged, bool SharedRows, bool Prune, bool Binned, bool Split, typename Launch,
            typename KOp>
  static void launch_tiled(Launch& launch, const KOp& kernelOp, std::size_t smem, bool wholeLine) {
    if (wholeLine) {
      launch(pcf_tiled_kernel<Staged, false, T, KOp, false, SharedRows, Prune, Binned, Split>,
             kernelOp, smem);
    } else {
      launch(pcf_tiled_kernel<Staged, true, T, KOp, false, SharedRows, Prune, Binned, Split>,
             kernelOp, smem);
    }
  }

  // launch_block's pcf_tiled_kernel launch of a shape (rows staged with or
  // without split loads, tiles staged or not), with pruned walks (Prune)
  // and bin bounds (Binned) or without. Shared rows exist for symmetric
  // integrands only (launch_shape).
  template <bool Prune, bool Binned, typename Launch, typename KOp>
  static void launch_walks(Launch& launch, const KOp& kernelOp, std::size_t smem, bool sharedRows,
                           bool split, bool staged, bool wholeLine) {
    if constexpr (SymmetricIntegrand<KOp>::value) {
      if (split) return launch_tiled<true, true, Prune, Binned, true>(launch, kernelOp, smem, wholeLine);
      if (sharedRows) return launch_tiled<true, true, Prune, Binned, false>(launch, kernelOp, smem, wholeLine);
    }
    if (staged) launch_tiled<true, false, Prune, Binned, false>(launch, kernelOp, smem, wholeLine);
    else launch_tiled<false, false, Prune, Binned, false>(launch, kernelOp, smem, wholeLine);
  }

  static std::size_t meta_count(std::size_t maxRows, std::size_t maxCols) {
    return layout_meta_count(maxRows, layout_tiles(maxCols, kTileCols), kTileCols);
  }
  static LayoutMeta meta_view(std::uint32_t* base, std::size_t maxRows, std::size_t maxTiles) {
    return layout_meta_view(base, maxRows, maxTiles, kTileCols);
  }

  // Thread blocks of `bytes` of dynamic shared memory that fit one
  // multiprocessor's shared memory (the runtime reserves 1 KiB per block).
  static std::uint64_t shared_blocks_per_sm(std::uint64_t bytes, std::uint64_t sharedPerSm) {
    return sharedPerSm / (bytes + 1024);
  }

  // Threads per thread block for staged tiles of `bytes`: enough resident
  // warps per multiprocessor when large tiles leave room for few blocks.
  // Not the most resident threads: 1,024 where two such blocks fit (three
  // of 512 hold 1,536 threads, two of 1,024 all 2,048; chosen by
  // cudaOccupancyMaxActiveBlocksPerMultiprocessor), with the tiles that
  // leave room for two blocks in a launch apart from those that leave room
  // for one, measured slower: float32 m uniform in 10..1000 65.3% -> 61.2%
  // of the issue limit, m = 512 0.3% slower (2x H200; RESULTS.md).
  static std::uint32_t threads_for(std::uint64_t bytes, std::size_t sharedPerSm) {
    const std::uint64_t perSm = shared_blocks_per_sm(bytes, sharedPerSm);
    if (perSm >= 6) return 256;
    if (perSm >= 3) return 512;
    return 1024;
  }

  // Lets the staged kernels use all the shared memory a block may have.
  template <bool SharedRows, bool Prune, bool Binned, bool Split, typename K>
  static void allow_tiled(int bytes) {
    MPCF_CUDA_TRY(cudaFuncSetAttribute(
        pcf_tiled_kernel<true, false, T, K, false, SharedRows, Prune, Binned, Split>,
        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    MPCF_CUDA_TRY(cudaFuncSetAttribute(
        pcf_tiled_kernel<true, true, T, K, false, SharedRows, Prune, Binned, Split>,
        cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  }
  // The staged kernels launch_walks<Prune, Binned> may launch.
  template <bool Prune, bool Binned, typename K>
  static void allow_walks(int bytes) {
    allow_tiled<false, Prune, Binned, false, K>(bytes);
    if constexpr (SymmetricIntegrand<K>::value) {
      allow_tiled<true, Prune, Binned, false, K>(bytes);
      allow_tiled<true, Prune, Binned, true, K>(bytes);
    }
  }
  void allow_shared_memory(std::size_t bytes) const {
    using K = typename KernelOpOf<Op>::type;
    const int b = static_cast<int>(bytes);
    allow_walks<false, false, K>(b);
    if constexpr (SymmetricIntegrand<K>::value) {
      MPCF_CUDA_TRY(cudaFuncSetAttribute(pcf_ring_kernel<false, T, K>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, b));
      MPCF_CUDA_TRY(cudaFuncSetAttribute(pcf_ring_kernel<true, T, K>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, b));
    }
    if constexpr (MonotoneFold<K>::value) {  // the pruned ones
      allow_walks<true, false, K>(b);
      if constexpr (std::is_same_v<K, OperationL1Dist<T>>) allow_walks<true, true, K>(b);  // binned
    }
  }

  PlaneCollections<Point> inputs_;
  Op op_;
  Window<T> window_;
  TriangleSkipMode skip_;
  std::uint64_t longestCol_;
  int slots_ = kSlots;
  BlockOrder order_ = BlockOrder::RowMajor;
  PcfKernel kernel_ = PcfKernel::Auto;
  BinSpec bins_;
};

}  // namespace mpcf::cuda
