// MatvecStage: the GpuBlockStage (gpu_block_stage.cuh) of the kernel
// mat-vec, reduced on the device, and GpuStageFor<ConsumerKind::Matvec>.
// It sees block values only, so every function type's BlockOp (PCF, a PLF
// one) uses it unchanged.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/exact_sum.hpp"
#include "mpcf/core/kernel_matvec.hpp"
#include "mpcf/cuda/block_reduce_kernels.cuh"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_resources.cuh"
#include "mpcf/cuda/gpu_block_stage.cuh"

namespace mpcf::cuda {

namespace detail {
// The column kernels give one thread a segment of a block column (a
// dependent chain of work): segments are short enough that a block has
// about kColumnThreads threads, and at least kMinSegmentRows long.
constexpr std::size_t kColumnThreads = 131072;
constexpr std::size_t kMinSegmentRows = 64;
inline std::size_t segment_rows(std::size_t nRows, std::size_t nCols) {
  const std::size_t wanted = std::max<std::size_t>(1, (kColumnThreads + nCols - 1) / std::max<std::size_t>(nCols, 1));
  return std::max(kMinSegmentRows, (nRows + wanted - 1) / wanted);
}
inline std::size_t segments(std::size_t nRows, std::size_t nCols) {
  const std::size_t rows = segment_rows(nRows, nCols);
  return (nRows + rows - 1) / rows;
}
}  // namespace detail

// Kernel mat-vec reduced on the device: every GPU keeps the exact level
// sums of every output and adds each block into them (atomics: exact sums
// do not depend on the order); they are merged into the consumer once, at
// the end. A block downloads nothing.
template <typename T>
class MatvecStage final : public GpuBlockStage<T> {
 public:
  using typename GpuBlockStage<T>::Download;
  using typename GpuBlockStage<T>::DeviceState;

  MatvecStage(MatvecConsumer<T>& consumer, PairPlane plane, std::size_t nVRows)
      : consumer_(consumer), plane_(plane), nVRows_(nVRows) {}

  BlockOrder order() const override { return BlockOrder::RowMajor; }
  bool needs_zeroed_block() const override { return false; }
  std::size_t max_line_bytes(const BlockScheduler&) const override { return 1; }

  struct State final : DeviceState {
    DeviceArray<T> V;
    DeviceArray<double> grids;
    DeviceArray<double> sums;
    DeviceArray<std::uint32_t> flags;
  };
  std::uint64_t device_bytes(std::size_t, std::size_t) const override {
    const std::uint64_t r = consumer_.r();
    return nVRows_ * r * sizeof(T) + consumer_.grids().size() * sizeof(double) +
           plane_.nRows * r * (ExactSum::kLevels * sizeof(double) + sizeof(std::uint32_t));
  }
  std::unique_ptr<DeviceState> init_device(GpuContext& ctx, const BlockScheduler&) override {
    auto st = std::make_unique<State>();
    const std::size_t r = consumer_.r();
    const cudaStream_t s = ctx.compute_stream();
    st->V = ctx.allocate<T>(nVRows_ * r);
    MPCF_CUDA_TRY(cudaMemcpyAsync(st->V.data(), consumer_.V(), st->V.bytes(),
                                  cudaMemcpyHostToDevice, s));
    const auto& grids = consumer_.grids();
    st->grids = ctx.allocate<double>(grids.size());
    MPCF_CUDA_TRY(cudaMemcpyAsync(st->grids.data(), grids.data(), st->grids.bytes(),
                                  cudaMemcpyHostToDevice, s));
    st->sums = ctx.allocate<double>(plane_.nRows * r * ExactSum::kLevels);
    st->flags = ctx.allocate<std::uint32_t>(plane_.nRows * r);
    MPCF_CUDA_TRY(cudaMemsetAsync(st->sums.data(), 0, st->sums.bytes(), s));
    MPCF_CUDA_TRY(cudaMemsetAsync(st->flags.data(), 0, st->flags.bytes(), s));
    MPCF_CUDA_TRY(cudaStreamSynchronize(s));
    return st;
  }

  Download enqueue(DeviceState& base, const BlockInfo& block, T* deviceBlock, cudaStream_t stream,
                   int) override {
    State& st = static_cast<State&>(base);
    const auto nr = static_cast<std::uint32_t>(block.n_rows());
    const auto nc = static_cast<std::uint32_t>(block.n_cols());
    MatvecArgs<T> a{};
    a.kind = consumer_.spec().kind;
    a.scale = consumer_.spec().scale;
    a.V = st.V.data();
    a.r = static_cast<std::uint32_t>(consumer_.r());
    a.grids = st.grids.data();
    a.gridsPerRow = consumer_.grids_per_row();
    a.ratio = consumer_.ratio();
    a.rowBase = block.rows.first;
    a.colBase = block.cols.first;
    a.diagonalShift =
        static_cast<std::int64_t>(block.rows.first) - static_cast<std::int64_t>(block.cols.first);
    a.skip = plane_.skip;
    a.sums = st.sums.data();
    a.flags = st.flags.data();
    // One column of V per pass where r = 1 (fewer registers, more warps
    // resident: see kMatvecChunk).
    const bool one = a.r == 1;
    const unsigned rowGrid = detail::grid_for(std::uint64_t(nr) * 32, 256);
    if (one) {
      matvec_rows_kernel<T, 1><<<rowGrid, 256, 0, stream>>>(deviceBlock, nr, nc, a);
    } else {
      matvec_rows_kernel<T, kMatvecChunk><<<rowGrid, 256, 0, stream>>>(deviceBlock, nr, nc, a);
    }
    MPCF_CUDA_CHECK_LAUNCH();
    if (plane_.symmetric()) {
      const auto segs = static_cast<std::uint32_t>(detail::segments(nr, nc));
      const dim3 grid(detail::grid_for(nc, 256), segs);
      const auto segRows = static_cast<std::uint32_t>(detail::segment_rows(nr, nc));
      if (one) {
        matvec_cols_kernel<T, 1><<<grid, 256, 0, stream>>>(deviceBlock, nr, nc, a, segRows);
      } else {
        matvec_cols_kernel<T, kMatvecChunk><<<grid, 256, 0, stream>>>(deviceBlock, nr, nc, a, segRows);
      }
      MPCF_CUDA_CHECK_LAUNCH();
    }
    return Download{};
  }

  void consume(const BlockInfo&, std::size_t, std::size_t, const unsigned char*) override {
    throw std::logic_error("MatvecStage: blocks download nothing");
  }

  void finish_device(DeviceState& base, GpuContext& ctx) override {
    State& st = static_cast<State&>(base);
    const std::size_t r = consumer_.r();
    std::vector<double> sums(st.sums.size());
    std::vector<std::uint32_t> flags(st.flags.size());
    MPCF_CUDA_TRY(cudaMemcpyAsync(sums.data(), st.sums.data(), st.sums.bytes(),
                                  cudaMemcpyDeviceToHost, ctx.download_stream()));
    MPCF_CUDA_TRY(cudaMemcpyAsync(flags.data(), st.flags.data(), st.flags.bytes(),
                                  cudaMemcpyDeviceToHost, ctx.download_stream()));
    MPCF_CUDA_TRY(cudaStreamSynchronize(ctx.download_stream()));
    for (std::size_t i = 0; i < plane_.nRows; ++i) {
      consumer_.merge_partials(i, sums.data() + i * r * ExactSum::kLevels, flags.data() + i * r);
    }
  }

 private:
  MatvecConsumer<T>& consumer_;
  PairPlane plane_;
  std::size_t nVRows_;
};

// Kernel mat-vec: on the device (V has as many rows as the plane has
// columns).
template <>
struct GpuStageFor<ConsumerKind::Matvec> {
  template <typename T>
  using Consumer = MatvecConsumer<T>;
  template <typename T>
  static std::unique_ptr<GpuBlockStage<T>> make(Consumer<T>& matvec, const PairPlane& plane) {
    return std::make_unique<MatvecStage<T>>(matvec, plane, plane.nCols);
  }
};

}  // namespace mpcf::cuda
