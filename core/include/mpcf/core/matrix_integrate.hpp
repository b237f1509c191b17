// What a computation over the pair plane is (PairRequest) and the CPU
// executor that runs one: the BlockScheduler's blocks on a pool of threads
// that take blocks from a shared counter (dynamic load balancing). Each
// thread computes a block into its own buffer and hands it to the request's
// BlockConsumer. A block is walked in SIMD lanes (simd_walk.hpp: its row and
// column functions copied into the shifted layout, its pairs walked many at
// a time, a band of 32 columns against every row of the block so that the
// band stays in the L1 cache), or, on a CPU without SSE4 or in a build
// without Highway, by the scalar walk (ObjectPair: four pairs of a row in
// lockstep). Piecewise linear functions take the same path with the PLF
// walk (walk_plf_pairs_simd, PlfPairWalk), and objects of several
// components walk their components in turn, each pair's accumulator carried
// across. Each pair's value is bitwise ObjectPair's (integrate_pair's,
// integrate_plf_pair's for single functions) whatever the instruction set,
// thread count or block shape, so results are reproducible.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/plf_walk.hpp"
#include "mpcf/core/simd_walk.hpp"
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
  // Functions per object (DESIGN §11): object i is the functions
  // i * components .. (i + 1) * components - 1, and a pair's value combines
  // its components in one accumulator (sum of the p-th powers, max for
  // p = inf, sum of the inner products).
  std::uint32_t components = 1;
  // Piecewise linear functions (DESIGN §10), else piecewise constant.
  bool linear = false;

  std::size_t row_objects() const { return static_cast<std::size_t>(x->count() / components); }
  std::size_t col_objects() const { return static_cast<std::size_t>(y->count() / components); }

  PairPlane plane() const {
    PairPlane p;
    p.nRows = row_objects();
    p.nCols = col_objects();
    p.skip = !symmetric ? TriangleSkipMode::None
                        : (op.is_kernel() ? TriangleSkipMode::LowerTriangle
                                          : TriangleSkipMode::LowerTriangleSkipDiag);
    return p;
  }
  BlockMode block_mode() const { return symmetric ? BlockMode::LowerTriangle : BlockMode::Full; }
  // The merge steps of the plane (DESIGN §6): the sum over its computed
  // pairs of m_i + m_j, the breakpoints of both objects (of all their
  // components). The backend rule (AUTO) and mpcf_task_info report it.
  double merge_steps() const {
    const double nx = static_cast<double>(row_objects()), ny = static_cast<double>(col_objects());
    const double bx = static_cast<double>(x->data().total_elements());
    const double by = static_cast<double>(y->data().total_elements());
    if (symmetric) return (op.is_kernel() ? nx + 1 : nx - 1) * bx;
    return ny * bx + nx * by;
  }
};

// How the CPU splits work. By default a block is at most 128 x 128 (a band
// of column functions stays in cache while the rows sweep over it) and at
// least 32 x 32, and there are about 16 blocks per thread, so that the
// threads, taking the blocks largest first, finish together.
struct CpuExecutionConfig {
  int threads = 0;                        // 0: hardware threads
  std::uint64_t maxBlockElements = 0;     // 0: automatic (see above)
  std::uint64_t splitHint = 0;            // 0: 1
  std::uint64_t minBlockSide = 0;
  std::optional<CpuSimd> simd;            // unset: cpu_simd_default()
};

int resolve_thread_count(int requested);

// The automatic block side: 16 blocks per thread, clamped to [32, 128].
inline std::uint64_t cpu_block_side(std::size_t nRows, std::size_t nCols, BlockMode mode,
                                    int threads) {
  const double pairs = static_cast<double>(nRows) * static_cast<double>(nCols) *
                       (mode == BlockMode::LowerTriangle ? 0.5 : 1.0);
  const double perBlock = pairs / (16.0 * static_cast<double>(threads < 1 ? 1 : threads));
  const double side = std::sqrt(perBlock);
  return side >= 128 ? 128 : side <= 32 ? 32 : static_cast<std::uint64_t>(side);
}

inline BlockScheduler make_cpu_scheduler(std::size_t nRows, std::size_t nCols, BlockMode mode,
                                         const CpuExecutionConfig& cfg) {
  BlockScheduler::Config c;
  c.nRows = nRows;
  c.nCols = nCols;
  c.mode = mode;
  if (cfg.maxBlockElements) {
    c.maxOutputElements = cfg.maxBlockElements;
  } else {
    const std::uint64_t side = cpu_block_side(nRows, nCols, mode, resolve_thread_count(cfg.threads));
    c.maxOutputElements = side * side;
  }
  c.nSplitsHint = cfg.splitHint ? cfg.splitHint : 1;
  c.minBlockSide = cfg.minBlockSide;
  return BlockScheduler(c);
}

// The value of a pair of objects of K components (K = 1: single functions),
// walked by Walk (PairWalk for piecewise constant functions, PlfPairWalk
// for piecewise linear ones): the components' walks share one accumulator,
// finalized once. For K = 1 the bits of integrate_pair / integrate_plf_pair.
template <typename T, typename Op, template <bool, typename, typename> class Walk>
struct ObjectPair {
  std::shared_ptr<const PcfCollection<T>> x, y;
  std::uint32_t K;
  Window<T> w;
  Op op;

  T operator()(std::size_t i, std::size_t j) const {
    return w.is_whole_line() ? value<false>(i, j) : value<true>(i, j);
  }

  // store(q, value of (i, jFirst + q)) for q < count. Single functions walk
  // four pairs of the row in lockstep (instruction-level parallelism, as
  // the scalar PCF walk does); the same bits as one pair at a time.
  template <typename Store>
  void row(std::size_t i, std::size_t jFirst, std::size_t count, Store store) const {
    if (w.is_whole_line()) {
      row_of<false>(i, jFirst, count, store);
    } else {
      row_of<true>(i, jFirst, count, store);
    }
  }

 private:
  template <bool Windowed, typename Store>
  void row_of(std::size_t i, std::size_t jFirst, std::size_t count, Store& store) const {
    std::size_t q = 0;
    if (K == 1) {
      constexpr int L = 4;
      const auto& dx = x->data();
      const auto& dy = y->data();
      const auto nf = static_cast<std::uint32_t>(dx.size_of(i));
      for (; q + L <= count; q += L) {
        Walk<Windowed, T, Op> walk[L];
        for (int k = 0; k < L; ++k) {
          const std::size_t j = jFirst + q + static_cast<std::size_t>(k);
          walk[k].init(dx.data_of(i), nf, dy.data_of(j), static_cast<std::uint32_t>(dy.size_of(j)),
                       op);
        }
        for (;;) {
          bool all = true;
          for (int k = 0; k < L; ++k) all &= walk[k].both_active();
          if (!all) break;
          for (int k = 0; k < L; ++k) walk[k].step(w.a, w.b, op);
        }
        for (int k = 0; k < L; ++k) store(q + static_cast<std::size_t>(k), walk[k].finish(w.a, w.b, op));
      }
    }
    for (; q < count; ++q) store(q, value<Windowed>(i, jFirst + q));
  }

  template <bool Windowed>
  T value(std::size_t i, std::size_t j) const {
    const auto& dx = x->data();
    const auto& dy = y->data();
    op_acc_t<Op> acc = op.init();
    for (std::uint32_t k = 0; k < K; ++k) {
      const std::size_t fi = i * K + k, gj = j * K + k;
      Walk<Windowed, T, Op> walk;
      walk.init(dx.data_of(fi), static_cast<std::uint32_t>(dx.size_of(fi)), dy.data_of(gj),
                static_cast<std::uint32_t>(dy.size_of(gj)), op);
      walk.continue_from(acc);
      acc = walk.accumulate(w.a, w.b, op);
    }
    return op.finalize(acc);
  }
};

template <typename T, typename Op>
using PcfObjectPair = ObjectPair<T, Op, PairWalk>;
template <typename T, typename Op>
using PlfObjectPair = ObjectPair<T, Op, PlfPairWalk>;
// The object pair of an operation's function type.
template <typename T, typename Op>
using ObjectPairOf =
    std::conditional_t<IsPlfOperation<Op>::value, PlfObjectPair<T, Op>, PcfObjectPair<T, Op>>;

// One thread's reusable buffers for the SIMD walk of a block.
template <typename T>
struct SimdBlockScratch {
  ShiftedPoints<T> points;
  std::vector<std::uint32_t> rowFirst, colFirst, colOrder, rowSize, colSize;
  std::vector<std::uint32_t> pairRow, pairCol, f, g, steps;
  std::vector<std::size_t> slot;
  std::vector<T> values;
  // The consumer's bounds for the block (BlockConsumer::pair_bounds), when
  // `bounded`, and each pair's (PairBatch::bound).
  bool bounded = false;
  std::vector<T> rowBound, colBound, bound;
};

// The block loop of the CPU executor: the scheduler's blocks taken by
// `threads` workers from a shared counter, each computed by
// compute(block, plane, order, control, buffer, scratch) into the worker's
// own buffer and handed to the request's consumer.
template <typename T, typename Compute>
void run_cpu_blocks(const PairRequest<T>& request, const CpuExecutionConfig& cfg,
                    TaskControl& control, Compute compute) {
  const PairPlane plane = request.plane();
  const BlockScheduler scheduler =
      make_cpu_scheduler(plane.nRows, plane.nCols, request.block_mode(), cfg);
  BlockConsumer<T>& consumer = *request.consumer;
  consumer.prepare(plane);
  const auto& blocks = scheduler.blocks();
  std::uint64_t total = 0;
  for (const auto& b : blocks) total += computed_pairs(b, plane.skip);
  control.set_total(total);
  const BlockOrder order = consumer.preferred_order();
  const std::size_t capacity = static_cast<std::size_t>(scheduler.max_block_elements());
  std::atomic<std::size_t> next{0};
  const int used = static_cast<int>(std::min<std::size_t>(
      static_cast<std::size_t>(resolve_thread_count(cfg.threads)), std::max<std::size_t>(blocks.size(), 1)));
  run_on_threads(used, control, [&](int) {
    std::vector<T> buf(capacity);
    SimdBlockScratch<T> scratch;
    for (;;) {
      const std::size_t k = next.fetch_add(1, std::memory_order_relaxed);
      if (k >= blocks.size()) return;
      const BlockInfo& b = blocks[k];
      compute(b, plane, order, control, buf.data(), scratch);
      consumer.consume(BlockPiece<T>{b, buf.data(), order});
    }
  });
  control.throw_if_cancelled();
  consumer.finish();
}

// (r, c) of a block in the consumer's order.
inline std::size_t block_slot(BlockOrder order, std::size_t r, std::size_t c, std::size_t nr,
                              std::size_t nc) {
  return order == BlockOrder::RowMajor ? r * nc + c : c * nr + r;
}

// The CPU executor for one operation functor, on piecewise constant or
// (IsPlfOperation<Op>) piecewise linear functions, single or objects of
// several components (DESIGN §11: a block's pairs are walked component by
// component, each pair's accumulator carried from one to the next and
// finalized after the last, as ObjectPair does it).
template <typename T, typename Op>
class CpuBlockTask final : public Work {
 public:
  CpuBlockTask(PairRequest<T> request, Op op, CpuExecutionConfig cfg)
      : request_(std::move(request)), op_(op), cfg_(cfg) {}

  void run(TaskControl& control) override {
    CpuSimd simd = cfg_.simd ? *cfg_.simd : cpu_simd_default();
    if (!cpu_simd_supported(simd) || !HasSimdWalk<Op>::value) simd = CpuSimd::Scalar;
    run_cpu_blocks(request_, cfg_, control,
                   [&](const BlockInfo& b, const PairPlane& plane, BlockOrder order,
                       TaskControl& c, T* buf, SimdBlockScratch<T>& scratch) {
                     // A block computed by SIMD lanes holds at most 2^30 shifted
                     // points (32-bit lane indices); a bigger one takes the
                     // scalar walk (which computes every value in full, so it
                     // asks the consumer for no bounds: KnnConsumer takes its
                     // lists' locks for them).
                     if (simd != CpuSimd::Scalar && block_points(b) <= kMaxBatchPoints) {
                       scratch.bounded = false;
                       if constexpr (MonotoneFold<Op>::value && !IsPlfOperation<Op>::value) {
                         if (request_.components == 1) {
                           scratch.bounded = request_.consumer->pair_bounds(b, scratch.rowBound,
                                                                            scratch.colBound);
                         }
                       }
                       compute_block_simd(b, plane, order, simd, c, scratch, buf);
                     } else {
                       compute_block_scalar(b, plane, order, c, buf);
                     }
                   });
  }

  void discard_output() noexcept override { request_.consumer->poison(); }

 private:
  // Shifted points of a block's row and column functions, all components
  // (sentinels included; a component's layout holds fewer).
  std::uint64_t block_points(const BlockInfo& b) const {
    const auto& dx = request_.x->data();
    const auto& dy = request_.y->data();
    const std::size_t K = request_.components;
    return dx.subset_elements(b.rows.first * K, b.n_rows() * K) + b.n_rows() * K +
           dy.subset_elements(b.cols.first * K, b.n_cols() * K) + b.n_cols() * K;
  }

  // (r, c) of the block in the consumer's order; skipped pairs hold 0.
  static std::size_t slot_of(BlockOrder order, std::size_t r, std::size_t c, std::size_t nr,
                             std::size_t nc) {
    return block_slot(order, r, c, nr, nc);
  }

  void compute_block_scalar(const BlockInfo& b, const PairPlane& plane, BlockOrder order,
                            TaskControl& control, T* buf) const {
    const std::size_t nr = b.n_rows(), nc = b.n_cols();
    const ObjectPairOf<T, Op> value{request_.x, request_.y, request_.components, request_.window,
                                    op_};
    for (std::size_t r = 0; r < nr; ++r) {
      control.throw_if_cancelled();
      const std::size_t i = b.rows.first + r;
      const std::size_t end = kept_column_end(i, plane.skip, b.cols.last + 1);
      const std::size_t count = end > b.cols.first ? end - b.cols.first : 0;
      for (std::size_t c = count; c < nc; ++c) buf[slot_of(order, r, c, nr, nc)] = T(0);
      if (count == 0) continue;
      value.row(i, b.cols.first, count,
                [&](std::size_t q, T v) { buf[slot_of(order, r, q, nr, nc)] = v; });
      control.add_done(count);
    }
  }

  void compute_block_simd(const BlockInfo& b, const PairPlane& plane, BlockOrder order,
                          CpuSimd simd, TaskControl& control, SimdBlockScratch<T>& s,
                          T* buf) const {
    constexpr bool kLinear = IsPlfOperation<Op>::value;
    control.throw_if_cancelled();
    const auto& dx = request_.x->data();
    const auto& dy = request_.y->data();
    const std::size_t K = request_.components;
    const std::size_t nr = b.n_rows(), nc = b.n_cols();
    const bool sameBands = request_.symmetric && b.rows == b.cols;
    auto objectPoints = [&](const PcfDataManager<T>& d, std::size_t o) {
      std::size_t m = 0;
      for (std::size_t k = 0; k < K; ++k) m += static_cast<std::size_t>(d.size_of(o * K + k));
      return m;
    };
    // Columns by length, so that the lanes of a group walk about as many
    // steps (a group runs as long as its longest pair).
    s.colOrder.resize(nc);
    std::iota(s.colOrder.begin(), s.colOrder.end(), 0u);
    std::stable_sort(s.colOrder.begin(), s.colOrder.end(), [&](std::uint32_t x, std::uint32_t y) {
      return objectPoints(dy, b.cols.first + x) < objectPoints(dy, b.cols.first + y);
    });
    // The kept pairs, a band of kBand columns against every row in turn.
    constexpr std::size_t kBand = 32;
    s.pairRow.clear();
    s.pairCol.clear();
    s.slot.clear();
    bool skipped = false;
    for (std::size_t c0 = 0; c0 < nc; c0 += kBand) {
      const std::size_t c1 = std::min(nc, c0 + kBand);
      for (std::size_t r = 0; r < nr; ++r) {
        const std::size_t end = kept_column_end(b.rows.first + r, plane.skip, b.cols.last + 1);
        for (std::size_t q = c0; q < c1; ++q) {
          const std::size_t c = s.colOrder[q];
          if (b.cols.first + c >= end) {
            skipped = true;
            continue;
          }
          s.pairRow.push_back(static_cast<std::uint32_t>(r));
          s.pairCol.push_back(static_cast<std::uint32_t>(c));
          s.slot.push_back(slot_of(order, r, c, nr, nc));
        }
      }
    }
    if (skipped) std::fill(buf, buf + nr * nc, T(0));
    const std::size_t count = s.slot.size();
    s.f.resize(count);
    s.g.resize(count);
    s.steps.resize(count);
    s.values.resize(count);
    // Objects: each pair's accumulator from one component to the next.
    std::vector<op_acc_t<Op>> carry(K > 1 ? count : 0, op_.init());
    s.rowFirst.resize(nr);
    s.colFirst.resize(nc);
    s.rowSize.resize(nr);
    s.colSize.resize(nc);
    for (std::size_t k = 0; k < K; ++k) {
      // Component k of the block's objects in the walk's layout, and their
      // largest |time| and |value| (for the unchecked fold / tame walk).
      s.points.clear();
      T maxTime = 0, maxValue = 0;
      auto add = [&](const PcfDataManager<T>& d, std::size_t o, std::uint32_t& size) {
        const std::size_t i = o * K + k;
        const PcfPoint<T>* p = d.data_of(i);
        const std::size_t m = static_cast<std::size_t>(d.size_of(i));
        for (std::size_t e = 0; e < m; ++e) {
          maxTime = detail::max_value(maxTime, detail::abs_value(p[e].t));
          maxValue = detail::max_value(maxValue, detail::abs_value(p[e].v));
        }
        size = static_cast<std::uint32_t>(m);
        if constexpr (kLinear) {
          return static_cast<std::uint32_t>(s.points.append_linear(p, m));
        } else {
          return static_cast<std::uint32_t>(s.points.append(p, m));
        }
      };
      for (std::size_t r = 0; r < nr; ++r) s.rowFirst[r] = add(dx, b.rows.first + r, s.rowSize[r]);
      for (std::size_t c = 0; c < nc; ++c) {
        if (sameBands) {
          s.colFirst[c] = s.rowFirst[c];
          s.colSize[c] = s.rowSize[c];
        } else {
          s.colFirst[c] = add(dy, b.cols.first + c, s.colSize[c]);
        }
      }
      for (std::size_t q = 0; q < count; ++q) {
        s.f[q] = s.rowFirst[s.pairRow[q]];
        s.g[q] = s.colFirst[s.pairCol[q]];
        s.steps[q] = s.rowSize[s.pairRow[q]] + s.colSize[s.pairCol[q]];
      }
      if (s.bounded) {  // each pair's bound: the larger of its row's and column's
        s.bound.resize(count);
        const T inf = std::numeric_limits<T>::infinity();
        for (std::size_t q = 0; q < count; ++q) {
          s.bound[q] = pair_bound_of(s.rowBound[s.pairRow[q]],
                                     s.colBound.empty() ? -inf : s.colBound[s.pairCol[q]]);
        }
      }
      bool unchecked = false;
      if constexpr (kLinear) {
        unchecked = plf_tame_walk_allowed<T>(op_, maxTime, maxValue);
      } else {
        unchecked = unchecked_fold_allowed(request_.window, op_, maxTime, maxValue);
      }
      // Pieces of the batch, so that cancellation and progress move within
      // a block.
      constexpr std::size_t kPiece = 2048;
      for (std::size_t first = 0; first < count; first += kPiece) {
        control.throw_if_cancelled();
        PairBatch<T> batch;
        batch.points = s.points.points.data();
        batch.pointCount = s.points.points.size();
        batch.count = std::min(kPiece, count - first);
        batch.f = s.f.data() + first;
        batch.g = s.g.data() + first;
        batch.steps = s.steps.data() + first;
        batch.out = s.values.data() + first;
        if (s.bounded) batch.bound = s.bound.data() + first;
        op_acc_t<Op>* c = K > 1 ? carry.data() + first : nullptr;
        if constexpr (kLinear) {
          walk_plf_pairs_simd(simd, batch, request_.window, op_, unchecked, c);
        } else {
          walk_pairs_simd(simd, batch, request_.window, op_, unchecked, c);
        }
        if (k + 1 == K) control.add_done(batch.count);
      }
    }
    if (K > 1) {
      for (std::size_t q = 0; q < count; ++q) s.values[q] = op_.finalize(carry[q]);
    }
    for (std::size_t q = 0; q < count; ++q) buf[s.slot[q]] = s.values[q];
  }

  PairRequest<T> request_;
  Op op_;
  CpuExecutionConfig cfg_;
};

// An operation spec's functor for the request's function type, handed to fn
// with a tag saying which walk it takes.
template <typename T, typename Fn>
decltype(auto) dispatch_function_operation(bool linear, const OperationSpec& spec, Fn&& fn) {
  if (linear) {
    return dispatch_plf_operation<T>(spec, [&](auto op) { return fn(op, std::true_type{}); });
  }
  return dispatch_operation<T>(spec, [&](auto op) { return fn(op, std::false_type{}); });
}

// The CPU work of a request (the operation functor chosen here).
template <typename T>
std::unique_ptr<Work> make_cpu_work(PairRequest<T> request, const CpuExecutionConfig& cfg);

extern template std::unique_ptr<Work> make_cpu_work<float>(PairRequest<float>,
                                                           const CpuExecutionConfig&);
extern template std::unique_ptr<Work> make_cpu_work<double>(PairRequest<double>,
                                                            const CpuExecutionConfig&);

}  // namespace mpcf
