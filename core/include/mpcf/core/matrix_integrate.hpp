// The CPU executor: CpuPairwiseIntegrationTask (pdist, l2_kernel) and
// CpuCrossIntegrationTask (cdist) run the BlockScheduler's blocks on a pool
// of threads that take blocks from a shared counter (dynamic load
// balancing). Each pair is computed by the same code whatever the thread
// count or block shape, so results are bitwise reproducible.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/core/walk.hpp"

namespace mpcf {

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

// Computes every block of `scheduler` with `threads` workers;
// rowFn(i, jFirst, jLast) computes and stores pairs (i, jFirst..jLast).
// Progress is reported, and cancellation checked, per row of a block.
template <typename RowFn>
void execute_blocks(const BlockScheduler& scheduler, TriangleSkipMode skip, int threads,
                    TaskControl& control, RowFn rowFn) {
  const auto& blocks = scheduler.blocks();
  std::uint64_t total = 0;
  for (const auto& b : blocks) total += computed_pairs(b, skip);
  control.set_total(total);
  std::atomic<std::size_t> next{0};
  const int used = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads),
                                                          std::max<std::size_t>(blocks.size(), 1)));
  run_on_threads(used, control, [&](int) {
    for (;;) {
      const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= blocks.size()) return;
      const BlockInfo& b = blocks[k];
      for (std::size_t i = b.rows.first; i <= b.rows.last; ++i) {
        control.throw_if_cancelled();
        std::size_t jEnd = b.cols.last;  // inclusive
        if (skip == TriangleSkipMode::LowerTriangle) jEnd = std::min(jEnd, i);
        if (skip == TriangleSkipMode::LowerTriangleSkipDiag) {
          if (i == 0 || i - 1 < b.cols.first) continue;
          jEnd = std::min(jEnd, i - 1);
        }
        if (jEnd < b.cols.first) continue;
        rowFn(i, b.cols.first, jEnd);
        control.add_done(jEnd - b.cols.first + 1);
      }
    }
  });
  control.throw_if_cancelled();
}

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

// pdist / l2_kernel of one collection: lower triangle, writer decides layout.
template <typename T, typename Op, typename Writer>
class CpuPairwiseIntegrationTask final : public Work {
 public:
  CpuPairwiseIntegrationTask(std::shared_ptr<const PcfCollection<T>> pcfs, Op op, Window<T> window,
                             Writer writer, TriangleSkipMode skip, CpuExecutionConfig cfg)
      : pcfs_(std::move(pcfs)), op_(op), window_(window), writer_(writer), skip_(skip), cfg_(cfg) {}

  void run(TaskControl& control) override {
    const auto& d = pcfs_->data();
    const std::size_t n = d.count();
    const BlockScheduler scheduler =
        make_cpu_scheduler(n, n, BlockMode::LowerTriangle, cfg_);
    writer_.prepare();
    detail::execute_blocks(
        scheduler, skip_, resolve_thread_count(cfg_.threads), control,
        [&](std::size_t i, std::size_t jFirst, std::size_t jLast) {
          detail::integrate_row(d, i, d, jFirst, jLast, window_, op_,
                                [&](std::size_t j, T v) { writer_.store(i, j, v); });
        });
  }

  void discard_output() noexcept override { writer_.poison(); }

 private:
  std::shared_ptr<const PcfCollection<T>> pcfs_;
  Op op_;
  Window<T> window_;
  Writer writer_;
  TriangleSkipMode skip_;
  CpuExecutionConfig cfg_;
};

// cdist of two collections: every (i, j), dense row-major.
template <typename T, typename Op>
class CpuCrossIntegrationTask final : public Work {
 public:
  CpuCrossIntegrationTask(std::shared_ptr<const PcfCollection<T>> x,
                          std::shared_ptr<const PcfCollection<T>> y, Op op, Window<T> window,
                          DenseResultWriter<T> writer, CpuExecutionConfig cfg)
      : x_(std::move(x)), y_(std::move(y)), op_(op), window_(window), writer_(writer), cfg_(cfg) {}

  void run(TaskControl& control) override {
    const auto& dx = x_->data();
    const auto& dy = y_->data();
    const BlockScheduler scheduler = make_cpu_scheduler(dx.count(), dy.count(), BlockMode::Full, cfg_);
    detail::execute_blocks(
        scheduler, TriangleSkipMode::None, resolve_thread_count(cfg_.threads), control,
        [&](std::size_t i, std::size_t jFirst, std::size_t jLast) {
          detail::integrate_row(dx, i, dy, jFirst, jLast, window_, op_,
                                [&](std::size_t j, T v) { writer_.store(i, j, v); });
        });
  }

  void discard_output() noexcept override { writer_.poison(); }

 private:
  std::shared_ptr<const PcfCollection<T>> x_;
  std::shared_ptr<const PcfCollection<T>> y_;
  Op op_;
  Window<T> window_;
  DenseResultWriter<T> writer_;
  CpuExecutionConfig cfg_;
};

}  // namespace mpcf
