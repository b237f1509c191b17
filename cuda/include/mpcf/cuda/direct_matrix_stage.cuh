// DirectMatrixStage: the GpuBlockStage of the matrix writer when its
// result lies in host memory the caller page-locked for the library's GPUs
// (mpcf_cuda_register_host, registered_host.hpp). After a block's kernels
// a copy kernel (on a high-priority stream of its own, see
// direct_store_kernel) writes the block's kept pairs straight into the
// result, in the writer's layout, through the range's mapped
// device address: nothing is downloaded into the pinned ring and no host
// thread copies the result, so each byte crosses host memory once (the
// ring writes it into pinned memory, then host threads read it there and
// write it into the result). The pipeline then only waits for the block's
// stream (a stage download of no lines).
//
// The writer's layouts, as MatrixWriter stores a piece (result_writers.hpp):
//  * dense, not symmetric (cdist): block row r -> out[i, c0 ..);
//  * condensed (column-major blocks): block column c -> the run of
//    condensed row j below the diagonal;
//  * packed lower: block row r -> its kept columns, one run;
//  * dense symmetric: block row r -> out[i, c0 .. kept end), and block
//    column c -> out[j, kept rows] (the mirror; read with a stride on the
//    device, written contiguously to the host).
// Pairs the kernels skip are never read, so the block is not zeroed first.
// GpuStageFor<Matrix> chooses this stage for a MatrixWriter whose whole
// result lies in one registered range, else IdentityStage.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/cuda/cuda_context.cuh"
#include "mpcf/cuda/cuda_error.cuh"
#include "mpcf/cuda/cuda_resources.cuh"
#include "mpcf/cuda/gpu_block_stage.cuh"
#include "mpcf/cuda/identity_stage.cuh"
#include "mpcf/cuda/registered_host.hpp"

namespace mpcf::cuda {

enum class DirectLayout : int { Dense, DenseSymmetric, Condensed, PackedLower };

// The result as the copy kernel sees it (out: the device address of the
// caller's buffer on this GPU).
template <typename T>
struct DirectTarget {
  T* out;
  std::uint64_t n;      // rows
  std::uint64_t nCols;  // columns (dense)
  DirectLayout layout;
  bool withDiagonal;    // symmetric layouts: the diagonal is computed
};

// One run of the copy: count values from block[src + k * srcStride] to
// out[dst + k].
struct DirectRun {
  std::uint64_t dst;
  std::uint64_t src;
  std::uint64_t srcStride;
  std::uint64_t count;
};

// Run `line` of a block (rows r0.., nr; columns c0.., nc) in the target's
// layout; the block is column-major for the condensed layout, else
// row-major. Lines: nc for the condensed layout, nr + nc for dense
// symmetric (rows, then the mirror's columns), else nr. Which pairs are kept
// and where they go are core's rules (pair_kept, kept_column_end,
// condensed_index, packed_lower_index), as MatrixWriter applies them.
template <typename T>
__host__ __device__ inline DirectRun direct_run(const DirectTarget<T>& t, std::uint64_t r0,
                                                std::uint64_t nr, std::uint64_t c0,
                                                std::uint64_t nc, std::uint64_t line) {
  const TriangleSkipMode skip = t.layout == DirectLayout::Dense ? TriangleSkipMode::None
                                : t.withDiagonal ? TriangleSkipMode::LowerTriangle
                                                 : TriangleSkipMode::LowerTriangleSkipDiag;
  // The block rows of column j that are kept: [s, nr), from its first kept
  // row (in the mirror the first below the diagonal: the row pass writes
  // the diagonal).
  auto kept_rows_from = [&](std::uint64_t j, bool mirror) {
    const std::uint64_t first = !mirror && pair_kept(std::int64_t(0), skip) ? j : j + 1;
    return first <= r0 ? 0 : (first - r0 < nr ? first - r0 : nr);
  };
  // The kept columns of row i within the block: [c0, c0 + count).
  auto kept_count = [&](std::uint64_t i) -> std::uint64_t {
    const std::uint64_t end = kept_column_end(i, skip, c0 + nc);
    return end > c0 ? end - c0 : 0;
  };
  DirectRun run{0, 0, 1, 0};
  switch (t.layout) {
    case DirectLayout::Dense: {
      const std::uint64_t i = r0 + line;
      run = DirectRun{i * t.nCols + c0, line * nc, 1, nc};
      break;
    }
    case DirectLayout::Condensed: {
      const std::uint64_t j = c0 + line;
      const std::uint64_t s = kept_rows_from(j, false);
      run = DirectRun{condensed_index(t.n, r0 + s, j), line * nr + s, 1, nr - s};
      break;
    }
    case DirectLayout::PackedLower: {
      const std::uint64_t i = r0 + line;
      run = DirectRun{packed_lower_index(i, c0, t.withDiagonal), line * nc, 1, kept_count(i)};
      break;
    }
    case DirectLayout::DenseSymmetric: {
      if (line < nr) {
        const std::uint64_t i = r0 + line;
        run = DirectRun{i * t.n + c0, line * nc, 1, kept_count(i)};
      } else {
        const std::uint64_t c = line - nr;
        const std::uint64_t j = c0 + c;
        const std::uint64_t s = kept_rows_from(j, true);
        run = DirectRun{j * t.n + r0 + s, s * nc + c, nc, nr - s};
      }
      break;
    }
  }
  return run;
}

template <typename T>
std::uint64_t direct_lines(const DirectTarget<T>& t, std::uint64_t nr, std::uint64_t nc) {
  switch (t.layout) {
    case DirectLayout::Condensed: return nc;
    case DirectLayout::DenseSymmetric: return nr + nc;
    default: return nr;
  }
}

// The copy kernel: a few thread blocks (kDirectCopyBlocks of 1024 threads,
// grid-stride over the lines) on a high-priority stream, so that it runs
// beside the next block's kernels instead of after them, taking little of
// the GPU. Each warp writes whole 128-byte lines of host memory (a run's
// first and last line partly): writes that cover a line only partly cost
// the host a read of it; measured on 2x H200 with runs of 25 KB at
// arbitrary offsets, lines whole: 47-52 GB/s per GPU, element order from
// the run's start: 28-34 GB/s (the ring: 27-28). Beside a kernel that keeps
// every multiprocessor busy, 8 blocks on a high-priority stream added 4% to
// its time; 4,096 blocks on an ordinary stream 70%.
constexpr unsigned kDirectCopyBlocks = 8;
constexpr unsigned kDirectCopyThreads = 1024;

template <typename T>
__global__ void __launch_bounds__(kDirectCopyThreads)
    direct_store_kernel(const T* __restrict__ block, DirectTarget<T> t, std::uint64_t r0,
                        std::uint64_t nr, std::uint64_t c0, std::uint64_t nc, std::uint64_t lines) {
  constexpr std::uint64_t kLine = 128 / sizeof(T);  // values per 128-byte line
  for (std::uint64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const DirectRun run = direct_run(t, r0, nr, c0, nc, line);
    T* dst = t.out + run.dst;
    const T* src = block + run.src;
    // Values before dst's first line boundary; thread 0 starts that many
    // values before the boundary's line, so each warp's stores fill lines.
    const std::uint64_t head =
        (kLine - (reinterpret_cast<std::uintptr_t>(dst) / sizeof(T)) % kLine) % kLine;
    const std::int64_t shift = head ? static_cast<std::int64_t>(head) - static_cast<std::int64_t>(kLine) : 0;
    for (std::int64_t k = static_cast<std::int64_t>(threadIdx.x) + shift;
         k < static_cast<std::int64_t>(run.count); k += blockDim.x) {
      if (k >= 0) dst[k] = src[static_cast<std::uint64_t>(k) * run.srcStride];
    }
  }
}

template <typename T>
class DirectMatrixStage final : public GpuBlockStage<T> {
 public:
  using typename GpuBlockStage<T>::Download;
  using typename GpuBlockStage<T>::DeviceState;

  DirectMatrixStage(const typename MatrixWriter<T>::Target& target, BlockOrder order,
                    std::shared_ptr<RegisteredHostLease> lease)
      : target_(target), order_(order), lease_(std::move(lease)) {}

  BlockOrder order() const override { return order_; }
  bool needs_zeroed_block() const override { return false; }
  std::size_t max_line_bytes(const BlockScheduler&) const override { return 0; }

  std::unique_ptr<DeviceState> init_device(GpuContext&, const BlockScheduler&) override {
    // The range's address on this GPU (portable, mapped registration; the
    // pipeline's worker has made the context's device current).
    void* base = nullptr;
    MPCF_CUDA_TRY(cudaHostGetDevicePointer(&base, const_cast<void*>(lease_->base()), 0));
    int lowest = 0, highest = 0;
    MPCF_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    auto state = std::make_unique<State>(highest);
    const auto offset = reinterpret_cast<const unsigned char*>(target_.out) -
                        static_cast<const unsigned char*>(lease_->base());
    state->target.out = reinterpret_cast<T*>(static_cast<unsigned char*>(base) + offset);
    state->target.n = target_.nRows;
    state->target.nCols = target_.nCols;
    state->target.withDiagonal = target_.withDiagonal;
    if (!target_.symmetric) {
      state->target.layout = DirectLayout::Dense;
    } else if (target_.layout == SymmetricLayout::Condensed) {
      state->target.layout = DirectLayout::Condensed;
    } else if (target_.layout == SymmetricLayout::PackedLower) {
      state->target.layout = DirectLayout::PackedLower;
    } else {
      state->target.layout = DirectLayout::DenseSymmetric;
    }
    return state;
  }

  Download enqueue(DeviceState& state, const BlockInfo& block, T* deviceBlock, cudaStream_t stream,
                   int) override {
    auto& st = static_cast<State&>(state);
    const auto& t = st.target;
    const std::uint64_t nr = block.n_rows(), nc = block.n_cols();
    const std::uint64_t lines = direct_lines(t, nr, nc);
    const unsigned grid = static_cast<unsigned>(lines < kDirectCopyBlocks ? (lines ? lines : 1)
                                                                           : kDirectCopyBlocks);
    // After the block's kernels, on the copy stream; the block's stream
    // then waits for the copy (the pipeline's wait for the block covers it).
    st.computed.record(stream);
    st.computed.make_wait(st.copy.get());
    direct_store_kernel<T><<<grid, kDirectCopyThreads, 0, st.copy.get()>>>(
        deviceBlock, t, block.rows.first, nr, block.cols.first, nc, lines);
    MPCF_CUDA_CHECK_LAUNCH();
    st.copied.record(st.copy.get());
    st.copied.make_wait(stream);
    return Download{};  // nothing to download: the block is done with its stream
  }

  void consume(const BlockInfo&, std::size_t, std::size_t, const unsigned char*) override {}

 private:
  struct State final : DeviceState {
    explicit State(int priority) : copy(priority) {}
    // No copy outlives the computation (a failure between a copy's launch
    // and the block stream's wait for it would otherwise leave it running
    // while the task poisons the result).
    ~State() override { copy.synchronize_noexcept(); }
    DirectTarget<T> target{};
    CudaStream copy;     // high priority: the copies run beside the kernels
    CudaEvent computed;  // a block's kernels done (reused: recorded and waited
    CudaEvent copied;    // for in one enqueue; stream order keeps the rest)
  };
  typename MatrixWriter<T>::Target target_;
  BlockOrder order_;
  std::shared_ptr<RegisteredHostLease> lease_;
};

// The matrix writer (or any consumer of kind Matrix): straight into its
// result when that lies in registered host memory, else the block as
// computed through the pinned ring (IdentityStage).
template <>
struct GpuStageFor<ConsumerKind::Matrix> {
  template <typename T>
  using Consumer = BlockConsumer<T>;
  template <typename T>
  static std::unique_ptr<GpuBlockStage<T>> make(Consumer<T>& consumer, const PairPlane& plane) {
    if (auto* writer = dynamic_cast<MatrixWriter<T>*>(&consumer)) {
      const auto target = writer->target();
      const std::uint64_t bytes = writer->size() * sizeof(T);
      if (auto lease = lease_registered_host(target.out, bytes)) {
        return std::make_unique<DirectMatrixStage<T>>(target, consumer.preferred_order(),
                                                      std::move(lease));
      }
    }
    return std::make_unique<IdentityStage<T>>(consumer, plane, false);
  }
};

}  // namespace mpcf::cuda
