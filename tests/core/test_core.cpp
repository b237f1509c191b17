// Unit tests of the core building blocks, with the seed's examples.
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>
#include <stdexcept>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/matrix_integrate.hpp"
#include "mpcf/core/offset_data_manager.hpp"
#include "mpcf/core/operations.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/core/task.hpp"
#include "mpcf/core/walk.hpp"

using namespace mpcf;

static void expect_bands(const std::vector<Band>& got, std::vector<Band> want) {
  assert_int_equal(got.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    assert_int_equal(got[k].first, want[k].first);
    assert_int_equal(got[k].last, want[k].last);
  }
}

static void test_subdivide(void**) {
  expect_bands(subdivide(3, 10), {{0, 2}, {3, 5}, {6, 8}, {9, 9}});
  expect_bands(subdivide(4, 8), {{0, 3}, {4, 7}});
  expect_bands(subdivide(5, 3), {{0, 2}});
  expect_bands(subdivide(1, 3), {{0, 0}, {1, 1}, {2, 2}});
  assert_true(subdivide(3, 0).empty());
}

static BlockScheduler make(std::size_t r, std::size_t c, BlockMode mode, std::uint64_t maxOut,
                           std::uint64_t hint = 1, std::uint64_t minSide = 0) {
  BlockScheduler::Config cfg;
  cfg.nRows = r;
  cfg.nCols = c;
  cfg.mode = mode;
  cfg.maxOutputElements = maxOut;
  cfg.nSplitsHint = hint;
  cfg.minBlockSide = minSide;
  return BlockScheduler(cfg);
}

static void test_scheduler_lower_triangle_9x9(void**) {
  // maxOutputElements 9 -> side floor(sqrt(9)) = 3: 3x3 bands, 6 kept.
  const auto s = make(9, 9, BlockMode::LowerTriangle, 9);
  assert_int_equal(s.block_side(), 3);
  assert_int_equal(s.blocks().size(), 6);
  for (const auto& b : s.blocks()) assert_true(b.cols.first <= b.rows.last);  // none above
  // Diagonal blocks A, C, F and below-diagonal B, D, E.
  int diagonal = 0;
  for (const auto& b : s.blocks()) diagonal += (b.rows == b.cols) ? 1 : 0;
  assert_int_equal(diagonal, 3);
  // Pairs computed: 9*8/2 = 36 (skip diag), 45 (with diag).
  std::uint64_t skipDiag = 0, withDiag = 0;
  for (const auto& b : s.blocks()) {
    skipDiag += computed_pairs(b, TriangleSkipMode::LowerTriangleSkipDiag);
    withDiag += computed_pairs(b, TriangleSkipMode::LowerTriangle);
  }
  assert_int_equal(skipDiag, 36);
  assert_int_equal(withDiag, 45);
}

static void test_scheduler_full_and_sorting(void**) {
  // cdist 2 x 3 with side 2: A = 2x2, B = 2x1, sorted by descending work.
  const auto s = make(2, 3, BlockMode::Full, 4);
  assert_int_equal(s.blocks().size(), 2);
  assert_int_equal(s.blocks()[0].elements(), 4);
  assert_int_equal(s.blocks()[1].elements(), 2);
  assert_int_equal(s.blocks()[1].cols.first, 2);
  // 10 x 10 side 3: the 1-wide remainder blocks come last.
  const auto t = make(10, 10, BlockMode::Full, 9);
  assert_int_equal(t.blocks().size(), 16);
  for (std::size_t k = 1; k < t.blocks().size(); ++k) {
    assert_true(t.blocks()[k - 1].elements() >= t.blocks()[k].elements());
    assert_int_equal(t.blocks()[k].index, k);
  }
  assert_int_equal(t.blocks().back().elements(), 1);
  assert_int_equal(t.max_block_rows(), 3);
}

static void test_scheduler_hints_and_floor(void**) {
  // 10,000 elements split 4 ways -> 2,500 -> side 50.
  assert_int_equal(make(1000, 1000, BlockMode::Full, 10000, 4).block_side(), 50);
  // The occupancy floor wins over a large split hint.
  assert_int_equal(make(1000, 1000, BlockMode::Full, 10000, 10000, 332).block_side(), 332);
  // Side is capped at the matrix dimension and never 0.
  assert_int_equal(make(7, 5, BlockMode::Full, 1000000).block_side(), 7);
  assert_int_equal(make(7, 5, BlockMode::Full, 0).block_side(), 1);
  assert_true(make(0, 0, BlockMode::LowerTriangle, 100).blocks().empty());
  // Large perfect square: exact integer sqrt.
  assert_int_equal(make(1u << 20, 1u << 20, BlockMode::Full, 4294967296ull).block_side(), 65536);
}

// The n x n block of the plane with value 10 i + j where `skip` keeps the
// pair and 0 elsewhere, row-major or column-major.
static std::vector<double> plane_block(std::size_t n, TriangleSkipMode skip, BlockOrder order) {
  std::vector<double> buf(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (!pair_kept(i, j, skip)) continue;
      buf[order == BlockOrder::RowMajor ? i * n + j : j * n + i] = 10.0 * i + j;
    }
  }
  return buf;
}

static void write_whole(MatrixWriter<double>& w, std::size_t n, TriangleSkipMode skip,
                        BlockOrder order) {
  PairPlane plane;
  plane.nRows = plane.nCols = n;
  plane.skip = skip;
  w.prepare(plane);
  BlockInfo b;
  b.rows = {0, n - 1};
  b.cols = {0, n - 1};
  const auto buf = plane_block(n, skip, order);
  w.consume(BlockPiece<double>{b, buf.data(), order});
  w.finish();
}

static void test_writers_layouts(void**) {
  const std::size_t n = 4;
  const auto skipDiag = TriangleSkipMode::LowerTriangleSkipDiag;
  const auto withDiag = TriangleSkipMode::LowerTriangle;
  std::vector<double> packed(6, -1), cond(6, -1), condCols(6, -1), dense(16, -1), kern(10, -1);
  auto wp = MatrixWriter<double>::symmetric(packed.data(), n, SymmetricLayout::PackedLower, false);
  auto wc = MatrixWriter<double>::symmetric(cond.data(), n, SymmetricLayout::Condensed, false);
  auto wcc = MatrixWriter<double>::symmetric(condCols.data(), n, SymmetricLayout::Condensed, false);
  auto wd = MatrixWriter<double>::symmetric(dense.data(), n, SymmetricLayout::Dense, false);
  auto wk = MatrixWriter<double>::symmetric(kern.data(), n, SymmetricLayout::PackedLower, true);
  write_whole(wp, n, skipDiag, BlockOrder::RowMajor);
  write_whole(wc, n, skipDiag, BlockOrder::RowMajor);
  write_whole(wcc, n, skipDiag, BlockOrder::ColumnMajor);
  write_whole(wd, n, skipDiag, BlockOrder::RowMajor);
  write_whole(wk, n, withDiag, BlockOrder::RowMajor);
  // Packed lower: (1,0) (2,0) (2,1) (3,0) (3,1) (3,2).
  assert_true((packed == std::vector<double>{10, 20, 21, 30, 31, 32}));
  // Condensed (SciPy): (0,1) (0,2) (0,3) (1,2) (1,3) (2,3).
  assert_true((cond == std::vector<double>{10, 20, 30, 21, 31, 32}));
  assert_true(condCols == cond);
  assert_true((kern == std::vector<double>{0, 10, 11, 20, 21, 22, 30, 31, 32, 33}));
  const std::vector<double> d{0, 10, 20, 30, 10, 0, 21, 31, 20, 21, 0, 32, 30, 31, 32, 0};
  assert_true(dense == d);
  assert_int_equal(wp.size(), 6);
  assert_int_equal(wk.size(), 10);
  assert_int_equal(wd.size(), 16);
  assert_true(wc.preferred_order() == BlockOrder::ColumnMajor);
  assert_true(wp.preferred_order() == BlockOrder::RowMajor);
  // A dense (cdist) writer: every pair.
  std::vector<double> full(6, -1);
  auto wf = MatrixWriter<double>::dense(full.data(), 2, 3);
  PairPlane plane;
  plane.nRows = 2;
  plane.nCols = 3;
  wf.prepare(plane);
  BlockInfo b;
  b.rows = {0, 1};
  b.cols = {1, 2};
  const std::vector<double> piece{1, 2, 11, 12};
  wf.consume(BlockPiece<double>{b, piece.data(), BlockOrder::RowMajor});
  b.cols = {0, 0};
  const std::vector<double> first{0, 10};
  wf.consume(BlockPiece<double>{b, first.data(), BlockOrder::RowMajor});
  assert_true((full == std::vector<double>{0, 1, 2, 10, 11, 12}));
  // The writer refuses a plane it was not made for.
  bool raised = false;
  try {
    plane.skip = TriangleSkipMode::LowerTriangle;
    wf.prepare(plane);
  } catch (const std::logic_error&) {
    raised = true;
  }
  assert_true(raised);
}

static void test_scatter_validation(void**) {
  // A 3x3 diagonal block of a distance matrix: entries with i <= j are skipped.
  std::vector<double> out(3, -1);
  auto w = MatrixWriter<double>::symmetric(out.data(), 3, SymmetricLayout::PackedLower, false);
  BlockInfo b;
  b.rows = {0, 2};
  b.cols = {0, 2};
  std::vector<double> buf{0, 0, 0, 1, 0, 0, 2, 3, 0};
  w.consume(BlockPiece<double>{b, buf.data(), BlockOrder::RowMajor});
  assert_true((out == std::vector<double>{1, 2, 3}));
  buf[1] = 5.0;  // a non-zero entry above the diagonal: a bug, must raise
  bool raised = false;
  try {
    w.consume(BlockPiece<double>{b, buf.data(), BlockOrder::RowMajor});
  } catch (const std::logic_error&) {
    raised = true;
  }
  assert_true(raised);
  buf[1] = 0.0;
  buf[4] = 1e-300;  // the diagonal must be exactly zero for distances
  raised = false;
  try {
    w.consume(BlockPiece<double>{b, buf.data(), BlockOrder::RowMajor});
  } catch (const std::logic_error&) {
    raised = true;
  }
  assert_true(raised);
  // Kernel (symmetric) writer accepts a diagonal value.
  std::vector<double> k(6, -1);
  auto wk = MatrixWriter<double>::symmetric(k.data(), 3, SymmetricLayout::PackedLower, true);
  wk.consume(BlockPiece<double>{b, buf.data(), BlockOrder::RowMajor});
  assert_true(k[2] == 1e-300);
  wk.poison();
  for (double x : k) assert_true(std::isnan(x));
}

struct Obj {
  std::vector<int> items;
};

static void test_offset_data_manager(void**) {
  std::vector<Obj> objs{{{1, 2, 3}}, {{4}}, {{5, 6}}, {{7, 8, 9, 10}}};
  OffsetDataManager<int> m;
  m.init(objs.begin(), objs.end(), [](const Obj& o) { return o.items.size(); },
         [](const Obj& o, std::size_t i) { return o.items[i] * 10; });
  assert_int_equal(m.count(), 4);
  assert_int_equal(m.total_elements(), 10);
  assert_int_equal(m.offset(2), 4);
  assert_int_equal(m.size_of(3), 4);
  assert_int_equal(m.data_of(2)[1], 60);
  assert_int_equal(m.subset_elements(1, 2), 3);
  assert_int_equal(m.max_subset_elements(2), 6);  // objects 2 and 3
  std::uint32_t off[3];
  int el[3];
  m.extract_subset(1, 2, off, el);
  assert_int_equal(off[0], 0);
  assert_int_equal(off[1], 1);
  assert_int_equal(off[2], 3);
  assert_int_equal(el[0], 40);
  assert_int_equal(el[2], 60);

  // A slice shares the storage: objects 1..3, offsets from 0, the same
  // element addresses; it outlives the manager it was taken from.
  auto whole = std::make_unique<OffsetDataManager<int>>(m);
  const OffsetDataManager<int> s = whole->slice(1, 3);
  assert_ptr_equal(s.data_of(0), m.data_of(1));
  whole.reset();
  assert_int_equal(s.count(), 3);
  assert_int_equal(s.total_elements(), 7);
  assert_int_equal(s.offset(0), 0);
  assert_int_equal(s.offset(1), 1);
  assert_int_equal(s.offset(3), 7);
  assert_int_equal(s.size_of(2), 4);
  assert_int_equal(s.elements().size(), 7);
  assert_int_equal(s.elements()[0], 40);
  assert_int_equal(s.data_of(2)[3], 100);
  assert_int_equal(s.max_subset_elements(2), 6);
  const OffsetDataManager<int> t = s.slice(1, 1);  // a slice of a slice: object 2
  assert_int_equal(t.count(), 1);
  assert_int_equal(t.elements()[1], 60);
  assert_int_equal(s.slice(3, 0).total_elements(), 0);
  bool threw = false;
  try {
    (void)s.slice(2, 2);
  } catch (const std::out_of_range&) {
    threw = true;
  }
  assert_true(threw);
}

static void test_walk_known_values(void**) {
  using P = PcfPoint<double>;
  const P f[] = {{0, 3}, {1, 0}}, g[] = {{0, 1}, {2, 0}};
  const auto w = Window<double>::whole_line();
  assert_true(integrate_pair(f, 2, g, 2, w, OperationL1Dist<double>{}) == 3.0);
  const P f2[] = {{0, 10}, {2, 5}, {3, 0}}, g2[] = {{0, 5}, {6, 0}};
  assert_true(integrate_pair(f2, 3, g2, 2, w, OperationL1Dist<double>{}) == 25.0);
  assert_true(integrate_pair(f2, 3, g2, 2, w, OperationLinfDist<double>{}) == 5.0);
  const P a[] = {{0, 4}, {3, 0}};
  assert_true(integrate_pair(a, 2, a, 2, w, OperationL2InnerProduct<double>{}) == 48.0);
  // Infinite tail, exact.
  const P c1[] = {{0, 1}}, c2[] = {{0, -2}};
  assert_true(integrate_pair(c1, 1, c2, 1, w, OperationL2InnerProduct<double>{}) ==
              -std::numeric_limits<double>::infinity());
  assert_true(integrate_pair(c1, 1, c1, 1, w, OperationL1Dist<double>{}) == 0.0);
  // Window [0.5, 1.5): 2 * 0.5 + 1 * 0.5.
  assert_true(integrate_pair(f, 2, g, 2, Window<double>{0.5, 1.5}, OperationL1Dist<double>{}) == 1.5);
  // f32 path.
  const PcfPoint<float> ff[] = {{0, 3}, {1, 0}}, gf[] = {{0, 1}, {2, 0}};
  assert_true(integrate_pair(ff, 2, gf, 2, Window<float>::whole_line(), OperationL1Dist<float>{}) == 3.0f);
}

static void test_validation_messages(void**) {
  const std::uint64_t off[3] = {0, 2, 4};
  const double t[4] = {0, 1, 3, 3}, v[4] = {1, 1, 1, 1};
  try {
    PcfCollection<double> c(2, off, t, v, 1);
    fail_msg("%s", "no exception");
  } catch (const InvalidPcf& e) {
    assert_non_null(std::strstr(e.what(), "PCF 1, breakpoint 1"));
    assert_true(e.kind() == ErrorKind::InvalidPcf);
  }
}

// A work item that fails in one worker: the error propagates, others stop.
struct FailingWork : Work {
  bool discarded = false;
  void run(TaskControl& control) override {
    control.set_total(100);
    run_on_threads(4, control, [&](int w) {
      if (w == 2) throw InvalidArgument("worker 2 failed");
      while (!control.cancel_requested()) std::this_thread::yield();
      control.throw_if_cancelled();
    });
  }
  void discard_output() noexcept override { discarded = true; }
};

static void test_task_error_propagation(void**) {
  auto work = std::make_unique<FailingWork>();
  FailingWork* raw = work.get();
  Task task(std::move(work));
  task.start();
  assert_true(task.wait_for(30.0));
  assert_true(task.state() == Task::State::Failed);
  try {
    std::rethrow_exception(task.error());
  } catch (const InvalidArgument& e) {
    assert_string_equal(e.what(), "worker 2 failed");
  }
  assert_true(raw->discarded);
}

// floor(sqrt(x)) over the whole 64-bit range (the scheduler once looped for
// ever on UINT64_MAX: (2^32)^2 wraps to 0).
static void test_integer_sqrt(void**) {
  assert_true(integer_sqrt(0) == 0);
  assert_true(integer_sqrt(1) == 1);
  assert_true(integer_sqrt(15) == 3);
  assert_true(integer_sqrt(16) == 4);
  assert_true(integer_sqrt(0xfffffffe00000001ull) == 0xffffffffull);      // (2^32 - 1)^2
  assert_true(integer_sqrt(0xfffffffe00000000ull) == 0xfffffffeull);      // one below it
  assert_true(integer_sqrt(std::numeric_limits<std::uint64_t>::max()) == 0xffffffffull);
  // Block hints at the limits give one block for a small problem.
  const auto s = make(5, 5, BlockMode::LowerTriangle, std::numeric_limits<std::uint64_t>::max());
  assert_int_equal(s.block_side(), 5);
  assert_int_equal(s.blocks().size(), 1);
  // A huge split hint cannot cut an axis into more than kMaxBands bands.
  const auto t = make(10000, 10000, BlockMode::Full, 100000000, std::numeric_limits<std::uint64_t>::max());
  assert_int_equal(t.block_side(), 5);  // ceil(10000 / 2048)
  assert_int_equal(t.blocks().size(), 2000u * 2000u);
}

// Result sizes that do not fit 64 bits are refused (n(n-1)/2 passes 2^64 at
// n = 6,074,001,001).
static void test_result_size_overflow(void**) {
  assert_true(symmetric_result_size(6074001000ull, SymmetricLayout::Condensed, false) ==
              18446744070963499500ull);
  bool threw = false;
  try {
    (void)symmetric_result_size(6074001001ull, SymmetricLayout::Condensed, false);
  } catch (const InvalidArgument& e) {
    threw = std::strstr(e.what(), "more than a 64-bit size can count") != nullptr;
  }
  assert_true(threw);
  assert_true(symmetric_result_size(4294967295ull, SymmetricLayout::Dense, false) ==
              18446744065119617025ull);
  threw = false;
  try {
    (void)symmetric_result_size(4294967296ull, SymmetricLayout::Dense, false);
  } catch (const InvalidArgument&) {
    threw = true;
  }
  assert_true(threw);
  threw = false;
  try {
    (void)symmetric_result_size(std::numeric_limits<std::uint64_t>::max(), SymmetricLayout::PackedLower, true);
  } catch (const InvalidArgument&) {
    threw = true;
  }
  assert_true(threw);
  assert_true(checked_product(1ull << 32, (1ull << 32) - 1, "x") == 18446744069414584320ull);
  threw = false;
  try {
    (void)checked_product(1ull << 32, 1ull << 32, "the cdist result");
  } catch (const InvalidArgument& e) {
    threw = std::strstr(e.what(), "the cdist result has 4294967296 x 4294967296") != nullptr;
  }
  assert_true(threw);
}

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_subdivide),
      cmocka_unit_test(test_integer_sqrt),
      cmocka_unit_test(test_result_size_overflow),
      cmocka_unit_test(test_scheduler_lower_triangle_9x9),
      cmocka_unit_test(test_scheduler_full_and_sorting),
      cmocka_unit_test(test_scheduler_hints_and_floor),
      cmocka_unit_test(test_writers_layouts),
      cmocka_unit_test(test_scatter_validation),
      cmocka_unit_test(test_offset_data_manager),
      cmocka_unit_test(test_walk_known_values),
      cmocka_unit_test(test_validation_messages),
      cmocka_unit_test(test_task_error_propagation),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
