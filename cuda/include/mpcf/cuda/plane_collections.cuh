// PlaneCollections<ElementT>: the function data of a pair plane's rows and
// columns (two CudaOffsetDataManagers: the same one for pdist and
// l2_kernel, X and Y for cdist) on the GPUs, for any BlockOp whose
// functions are CSR collections of ElementT:
//  * resident: each collection uploaded whole, once per GPU, either by each
//    GPU's init_device or, for all GPUs at once, by upload_resident (the
//    multi-GPU broadcast: each pinned chunk filled once and copied to every
//    GPU); one copy when rows and columns are the same collection;
//  * streamed: per storage slot, device arrays for the largest block's
//    subsets, filled per block by stage_block;
//  * device_bytes: what either takes on one GPU, for the planner.
// stage_block tells the BlockOp's layout kernel where a block's functions
// are (BlockSource). Nothing here is PCF-specific: PcfBlockOp composes it
// with its own layout and kernels, and a second BlockOp (piecewise linear
// functions, DESIGN §10) shares it the same way.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_offset_data_manager.cuh"

namespace mpcf::cuda {

template <typename ElementT>
class PlaneCollections {
 public:
  using Manager = CudaOffsetDataManager<ElementT>;
  static constexpr int kSlots = GpuContext::kComputeStreams;

  // One GPU's function data.
  struct GpuData {
    typename Manager::DeviceCollection rows;  // resident
    typename Manager::DeviceCollection cols;  // resident, unless colsFromRows
    bool colsFromRows = false;                // pdist/l2_kernel with resident data: one copy
    typename Manager::DeviceSubset rowSubset[kSlots];  // streamed, per slot
    typename Manager::DeviceSubset colSubset[kSlots];
  };

  // Where a block's functions are on the GPU: block row r is function
  // rowBase + r of (rowOffsets, rowElements), 32-bit offsets; the same for
  // columns.
  struct BlockSource {
    const std::uint32_t* rowOffsets = nullptr;
    const ElementT* rowElements = nullptr;
    std::uint32_t rowBase = 0;
    const std::uint32_t* colOffsets = nullptr;
    const ElementT* colElements = nullptr;
    std::uint32_t colBase = 0;
    // Rows and columns read from the same arrays.
    bool one_source() const noexcept {
      return rowOffsets == colOffsets && rowElements == colElements;
    }
  };

  PlaneCollections(std::shared_ptr<const Manager> rows, std::shared_ptr<const Manager> cols)
      : rows_(std::move(rows)), cols_(std::move(cols)) {}

  const Manager& rows() const noexcept { return *rows_; }
  const Manager& cols() const noexcept { return *cols_; }
  bool same_data() const noexcept { return rows_ == cols_; }

  // Upload each collection once per GPU instead of a subset per block.
  void set_resident(bool resident) noexcept { resident_ = resident; }
  bool resident() const noexcept { return resident_; }

  // Whole collections can be resident only when their points fit 32-bit
  // offsets.
  bool resident_possible() const {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
    return rows_->total_elements() <= kMax && cols_->total_elements() <= kMax;
  }

  // Device bytes per GPU of the function data for blocks of up to
  // maxRows x maxCols: the resident collections, or per slot the streamed
  // subsets.
  std::uint64_t device_bytes(std::size_t maxRows, std::size_t maxCols, bool resident,
                             int slots) const {
    std::uint64_t source = 0, perSlot = 0;
    if (resident) {
      source = rows_->device_bytes(rows_->count());
      if (!same_data()) source += cols_->device_bytes(cols_->count());
    } else {
      perSlot = rows_->device_bytes(maxRows) + cols_->device_bytes(maxCols);
    }
    return source + static_cast<std::uint64_t>(slots) * perSlot;
  }

  // Resident: sends the collections to every one of `devices` now, in one
  // pass over the host data, for init_device on those devices to take;
  // without it, each GPU's init_device uploads on its own. Returns when the
  // copies are complete.
  void upload_resident(const std::vector<int>& devices) {
    if (!resident_ || devices.empty()) return;
    std::vector<Uploaded> all(devices.size());
    {
      auto rows = rows_->upload_whole(devices);
      for (std::size_t d = 0; d < devices.size(); ++d) all[d].rows = std::move(rows[d]);
    }
    if (!same_data()) {
      auto cols = cols_->upload_whole(devices);
      for (std::size_t d = 0; d < devices.size(); ++d) all[d].cols = std::move(cols[d]);
    }
    std::lock_guard<std::mutex> lock(uploaded_->mutex);
    for (std::size_t d = 0; d < devices.size(); ++d) {
      uploaded_->byDevice[devices[d]] = std::move(all[d]);
    }
  }

  // One GPU's data for blocks of up to maxRows x maxCols and `slots` slots:
  // resident, the collections (taken from upload_resident, else uploaded
  // now on the context's compute stream); streamed, the subsets' arrays.
  GpuData init_device(GpuContext& ctx, std::size_t maxRows, std::size_t maxCols, int slots) const {
    GpuData g;
    if (resident_) {
      g.colsFromRows = same_data();
      if (!take_uploaded(ctx.device(), g)) {
        const cudaStream_t stream = ctx.compute_stream();
        g.rows = rows_->upload_whole(ctx, stream);
        if (!same_data()) g.cols = cols_->upload_whole(ctx, stream);
      }
    } else {
      for (int k = 0; k < slots; ++k) {
        g.rowSubset[k] = rows_->allocate_subset(ctx, maxRows);
        g.colSubset[k] = cols_->allocate_subset(ctx, maxCols);
      }
    }
    return g;
  }

  // Where the block's functions are; streamed, enqueues on `stream` the
  // upload of its subsets into slot `slot` (kernels enqueued later on
  // `stream` see them).
  BlockSource stage_block(GpuData& g, const BlockInfo& block, int slot, cudaStream_t stream) const {
    BlockSource src;
    if (resident_) {
      const auto& cols = g.colsFromRows ? g.rows : g.cols;
      src.rowOffsets = g.rows.offsets.data();
      src.rowElements = g.rows.elements.data();
      src.rowBase = static_cast<std::uint32_t>(block.rows.first);
      src.colOffsets = cols.offsets.data();
      src.colElements = cols.elements.data();
      src.colBase = static_cast<std::uint32_t>(block.cols.first);
    } else {
      auto& rows = g.rowSubset[slot];
      auto& cols = g.colSubset[slot];
      rows_->upload_subset(rows, block.rows.first, block.n_rows(), stream);
      cols_->upload_subset(cols, block.cols.first, block.n_cols(), stream);
      src.rowOffsets = rows.offsets.data();
      src.rowElements = rows.elements.data();
      src.colOffsets = cols.offsets.data();
      src.colElements = cols.elements.data();
    }
    return src;
  }

 private:
  // Collections uploaded by upload_resident, per device, until a GPU's
  // init_device takes them.
  struct Uploaded {
    typename Manager::DeviceCollection rows;
    typename Manager::DeviceCollection cols;
  };
  struct UploadedByDevice {
    std::mutex mutex;
    std::map<int, Uploaded> byDevice;
  };

  bool take_uploaded(int device, GpuData& g) const {
    std::lock_guard<std::mutex> lock(uploaded_->mutex);
    auto it = uploaded_->byDevice.find(device);
    if (it == uploaded_->byDevice.end()) return false;
    g.rows = std::move(it->second.rows);
    g.cols = std::move(it->second.cols);
    uploaded_->byDevice.erase(it);
    return true;
  }

  std::shared_ptr<const Manager> rows_;
  std::shared_ptr<const Manager> cols_;
  bool resident_ = false;
  // Shared by copies (the task's op and the pipeline's).
  std::shared_ptr<UploadedByDevice> uploaded_ = std::make_shared<UploadedByDevice>();
};

}  // namespace mpcf::cuda
