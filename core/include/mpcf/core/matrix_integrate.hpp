// What a computation over the pair plane is (PairRequest) and the CPU
// executor that runs one: the BlockScheduler's blocks on a pool of threads
// that take blocks from a shared counter (dynamic load balancing). Each
// thread computes a block into its own buffer (four pairs of a row in
// lockstep) and hands it to the request's BlockConsumer. Each pair is
// computed by the same code whatever the thread count or block shape, so
// results are bitwise reproducible.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/core/walk.hpp"

namespace mpcf {

// The rows of x against the columns of y (cdist, knn(X, k, Y), ...), or,
// symmetric, the pairs of x with itself: i > j for distances, i >= j for
// the inner product (pdist, l2_kernel, knn(X, k), ...). The consumer
// receives every computed block.
template <typename T>
struct PairRequest {
  std::shared_ptr<const PcfCollection<T>> x;
  std::shared_ptr<const PcfCollection<T>> y;  // x itself when symmetric
  bool symmetric = false;
  OperationSpec op;
  Window<T> window = Window<T>::whole_line();
  std::shared_ptr<BlockConsumer<T>> consumer;

  PairPlane plane() const {
    PairPlane p;
    p.nRows = static_cast<std::size_t>(x->count());
    p.nCols = static_cast<std::size_t>(y->count());
    p.skip = !symmetric ? TriangleSkipMode::None
                        : (op.is_kernel() ? TriangleSkipMode::LowerTriangle
                                          : TriangleSkipMode::LowerTriangleSkipDiag);
    return p;
  }
  BlockMode block_mode() const { return symmetric ? BlockMode::LowerTriangle : BlockMode::Full; }
  // About the merge steps of the whole plane (sum over pairs of m_i + m_j).
  double merge_steps() const {
    const double nx = static_cast<double>(x->count()), ny = static_cast<double>(y->count());
    const double bx = static_cast<double>(x->data().total_elements());
    const double by = static_cast<double>(y->data().total_elements());
    if (symmetric) return (op.is_kernel() ? nx + 1 : nx - 1) * bx;
    return ny * bx + nx * by;
  }
};

// How the CPU splits work: block side 128 by default keeps a band of column
// functions in cache while the rows sweep over it.
struct CpuExecutionConfig {
  int threads = 0;                        // 0: hardware threads
  std::uint64_t maxBlockElements = 0;     // 0: 128 * 128
  std::uint64_t splitHint = 0;            // 0: 1
  std::uint64_t minBlockSide = 0;
};

int resolve_thread_count(int requested);

inline BlockScheduler make_cpu_scheduler(std::size_t nRows, std::size_t nCols, BlockMode mode,
                                         const CpuExecutionConfig& cfg) {
  BlockScheduler::Config c;
  c.nRows = nRows;
  c.nCols = nCols;
  c.mode = mode;
  c.maxOutputElements = cfg.maxBlockElements ? cfg.maxBlockElements : 128 * 128;
  c.nSplitsHint = cfg.splitHint ? cfg.splitHint : 1;
  c.minBlockSide = cfg.minBlockSide;
  return BlockScheduler(c);
}

namespace detail {

// Computes row i of x against columns [jFirst, jLast] of y, four pairs in
// lockstep, and hands each value to store(j, value).
template <typename T, typename Op, typename Store>
void integrate_row(const PcfDataManager<T>& x, std::size_t i, const PcfDataManager<T>& y,
                   std::size_t jFirst, std::size_t jLast, const Window<T>& w, const Op& op,
                   Store store) {
  constexpr int K = 4;
  const PcfPoint<T>* f = x.data_of(i);
  const auto nf = static_cast<std::uint32_t>(x.size_of(i));
  const bool whole = w.is_whole_line();
  std::size_t j = jFirst;
  for (; j + K <= jLast + 1; j += K) {
    const PcfPoint<T>* g[K];
    std::uint32_t ng[K];
    T out[K];
    for (int k = 0; k < K; ++k) {
      g[k] = y.data_of(j + k);
      ng[k] = static_cast<std::uint32_t>(y.size_of(j + k));
    }
    if (whole) {
      integrate_pairs_lockstep<K, false>(f, nf, g, ng, w.a, w.b, op, out);
    } else {
      integrate_pairs_lockstep<K, true>(f, nf, g, ng, w.a, w.b, op, out);
    }
    for (int k = 0; k < K; ++k) store(j + k, out[k]);
  }
  for (; j <= jLast; ++j) {
    store(j, integrate_pair(f, nf, y.data_of(j), static_cast<std::uint32_t>(y.size_of(j)), w, op));
  }
}

}  // namespace detail

// The CPU executor for one operation functor.
template <typename T, typename Op>
class CpuBlockTask final : public Work {
 public:
  CpuBlockTask(PairRequest<T> request, Op op, CpuExecutionConfig cfg)
      : request_(std::move(request)), op_(op), cfg_(cfg) {}

  void run(TaskControl& control) override {
    const PairPlane plane = request_.plane();
    const BlockScheduler scheduler =
        make_cpu_scheduler(plane.nRows, plane.nCols, request_.block_mode(), cfg_);
    BlockConsumer<T>& consumer = *request_.consumer;
    consumer.prepare(plane);
    const auto& blocks = scheduler.blocks();
    std::uint64_t total = 0;
    for (const auto& b : blocks) total += computed_pairs(b, plane.skip);
    control.set_total(total);
    const BlockOrder order = consumer.preferred_order();
    const auto& dx = request_.x->data();
    const auto& dy = request_.y->data();
    const std::size_t capacity = static_cast<std::size_t>(scheduler.max_block_elements());
    std::atomic<std::size_t> next{0};
    const int used = static_cast<int>(std::min<std::size_t>(
        static_cast<std::size_t>(resolve_thread_count(cfg_.threads)), std::max<std::size_t>(blocks.size(), 1)));
    run_on_threads(used, control, [&](int) {
      std::vector<T> buf(capacity);
      for (;;) {
        const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
        if (k >= blocks.size()) return;
        const BlockInfo& b = blocks[k];
        const std::size_t nr = b.n_rows(), nc = b.n_cols();
        // (r, c) of the block in the consumer's order; skipped pairs hold 0.
        auto at = [&](std::size_t r, std::size_t c) -> T& {
          return order == BlockOrder::RowMajor ? buf[r * nc + c] : buf[c * nr + r];
        };
        for (std::size_t r = 0; r < nr; ++r) {
          control.throw_if_cancelled();
          const std::size_t i = b.rows.first + r;
          const std::size_t end = kept_column_end(i, plane.skip, b.cols.last + 1);
          const std::size_t count = end > b.cols.first ? end - b.cols.first : 0;
          for (std::size_t c = count; c < nc; ++c) at(r, c) = T(0);
          if (count == 0) continue;
          detail::integrate_row(dx, i, dy, b.cols.first, end - 1, request_.window, op_,
                                [&](std::size_t j, T v) { at(r, j - b.cols.first) = v; });
          control.add_done(count);
        }
        consumer.consume(BlockPiece<T>{b, buf.data(), order});
      }
    });
    control.throw_if_cancelled();
    consumer.finish();
  }

  void discard_output() noexcept override { request_.consumer->poison(); }

 private:
  PairRequest<T> request_;
  Op op_;
  CpuExecutionConfig cfg_;
};

// The CPU work of a request (the operation functor chosen here).
template <typename T>
std::unique_ptr<Work> make_cpu_work(PairRequest<T> request, const CpuExecutionConfig& cfg);

extern template std::unique_ptr<Work> make_cpu_work<float>(PairRequest<float>,
                                                           const CpuExecutionConfig&);
extern template std::unique_ptr<Work> make_cpu_work<double>(PairRequest<double>,
                                                            const CpuExecutionConfig&);

}  // namespace mpcf
