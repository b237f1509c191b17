// The host planning of the GPU block layout (cuda/include/mpcf/cuda/
// block_layout_plan.hpp), checked without a GPU (this test runs on every
// machine, CUDA build or not) on small hand-made collections, the expected
// values written out by hand:
//  * sort_by_length: longest first, ties by index;
//  * select_pairs: All, SortedTriangle, ByIndex;
//  * plan_block_layout: row order and offsets (one sentinel per row), the
//    column order padded to whole tiles, column lengths, tile offsets (each
//    tile as deep as its first, longest column plus a sentinel); the sorted
//    triangle's columns in the rows' order; the tile width a parameter;
//  * layout_row_points / layout_tile_points: the values, and that they bound
//    every block's layout;
//  * plan_launches: the factor-of-two classes of staged tiles, the unstaged
//    tiles in one launch;
//  * layout_meta_count / layout_meta_view / pack_layout_meta: where the
//    plan's arrays go in the packed buffer.
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/cuda/block_layout_plan.hpp"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
}

using namespace mpcf;
using namespace mpcf::cuda;

namespace {

using Manager = PcfDataManager<double>;

// A collection whose function k has sizes[k] points (the points' values do
// not matter to the plan).
Manager collection(const std::vector<std::uint64_t>& sizes) {
  std::vector<std::uint64_t> offsets{0};
  for (std::uint64_t s : sizes) offsets.push_back(offsets.back() + s);
  std::vector<PcfPoint<double>> points(offsets.back());
  for (std::size_t k = 0; k < points.size(); ++k) points[k] = {double(k), 1.0};
  Manager m;
  m.assign(std::move(offsets), std::move(points));
  return m;
}

void assert_u32(const std::vector<std::uint32_t>& got, const std::vector<std::uint32_t>& want,
                const char* what) {
  if (got != want) {
    std::printf("%s: got", what);
    for (auto x : got) std::printf(" %u", x);
    std::printf(", expected");
    for (auto x : want) std::printf(" %u", x);
    std::printf("\n");
    fail_msg("%s differs", what);
  }
}

// X: sizes 3 1 4 1 2; Y: sizes 2 6 1 3 3 1 9.
const std::vector<std::uint64_t> kX{3, 1, 4, 1, 2};
const std::vector<std::uint64_t> kY{2, 6, 1, 3, 3, 1, 9};

void test_sort_by_length_longest_first_ties_by_index(void**) {
  const Manager x = collection(kX);
  std::vector<std::uint32_t> order;
  sort_by_length(x, 0, 5, order);
  assert_u32(order, {2, 0, 4, 1, 3}, "all of X");
  sort_by_length(x, 1, 3, order);  // functions 1, 2, 3: sizes 1 4 1
  assert_u32(order, {1, 0, 2}, "X[1..3]");
  const Manager y = collection(kY);
  sort_by_length(y, 0, 6, order);  // sizes 2 6 1 3 3 1
  assert_u32(order, {1, 3, 4, 0, 2, 5}, "Y[0..5]");
  sort_by_length(y, 2, 0, order);
  assert_int_equal(order.size(), 0);
}

void test_select_pairs(void**) {
  using S = TriangleSkipMode;
  const BlockInfo diag{{0, 4}, {0, 4}, 0};
  const BlockInfo below{{3, 4}, {0, 2}, 0};
  const BlockInfo touching{{2, 4}, {0, 2}, 0};  // (2, 2) is its first row and last column
  assert_true(select_pairs(diag, S::None, true) == PairSelection::All);
  assert_true(select_pairs(diag, S::LowerTriangleSkipDiag, true) == PairSelection::SortedTriangle);
  assert_true(select_pairs(diag, S::LowerTriangle, true) == PairSelection::SortedTriangle);
  assert_true(select_pairs(diag, S::LowerTriangle, false) == PairSelection::ByIndex);
  assert_true(select_pairs(below, S::LowerTriangleSkipDiag, true) == PairSelection::All);
  assert_true(select_pairs(touching, S::LowerTriangleSkipDiag, true) == PairSelection::ByIndex);
  assert_true(select_pairs(touching, S::LowerTriangle, true) == PairSelection::All);
}

// X[1..3] against Y[0..5], every pair, tiles of 4 columns.
void test_plan_cross_block_tiles_padded(void**) {
  const Manager x = collection(kX), y = collection(kY);
  const BlockInfo block{{1, 3}, {0, 5}, 0};
  BlockLayoutPlan p;
  plan_block_layout(x, y, block, PairSelection::All, 4, p);
  assert_true(p.selection == PairSelection::All);
  assert_int_equal(p.tileCols, 4);
  assert_int_equal(p.nRows, 3);
  assert_int_equal(p.nCols, 6);
  assert_int_equal(p.nTiles, 2);
  // Rows: sizes 1 4 1 -> the 4 first; each row its points and a sentinel.
  assert_u32(p.rowOrder, {1, 0, 2}, "rowOrder");
  assert_u32(p.rowOffsets, {0, 5, 7, 9}, "rowOffsets");
  // Columns: sizes 2 6 1 3 3 1 -> 6 3 3 2 | 1 1, two padding slots.
  assert_u32(p.colOrder, {1, 3, 4, 0, 2, 5, 0, 0}, "colOrder");
  assert_u32(p.colLength, {6, 3, 3, 2, 1, 1, 0, 0}, "colLength");
  // Tile 0 is 4 x (6 + 1) points deep, tile 1 4 x (1 + 1).
  assert_u32(p.tileOffsets, {0, 28, 36}, "tileOffsets");
}

// X against itself on the diagonal block: the columns are the rows, in the
// rows' order.
void test_plan_sorted_triangle(void**) {
  const Manager x = collection(kX);
  const BlockInfo block{{0, 4}, {0, 4}, 0};
  BlockLayoutPlan p;
  const PairSelection sel = select_pairs(block, TriangleSkipMode::LowerTriangleSkipDiag, true);
  assert_true(sel == PairSelection::SortedTriangle);
  plan_block_layout(x, x, block, sel, 4, p);
  assert_true(p.selection == PairSelection::SortedTriangle);
  assert_int_equal(p.nTiles, 2);
  assert_u32(p.rowOrder, {2, 0, 4, 1, 3}, "rowOrder");
  assert_u32(p.rowOffsets, {0, 5, 9, 12, 14, 16}, "rowOffsets");
  assert_u32(p.colOrder, {2, 0, 4, 1, 3, 0, 0, 0}, "colOrder");
  assert_u32(p.colLength, {4, 3, 2, 1, 1, 0, 0, 0}, "colLength");
  assert_u32(p.tileOffsets, {0, 20, 28}, "tileOffsets");

  // The PCF kernels' width, 16: one tile, eleven padding slots.
  plan_block_layout(x, x, block, sel, 16, p);
  assert_int_equal(p.tileCols, 16);
  assert_int_equal(p.nTiles, 1);
  assert_u32(p.colOrder, {2, 0, 4, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "colOrder (16)");
  assert_u32(p.colLength, {4, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "colLength (16)");
  assert_u32(p.tileOffsets, {0, 80}, "tileOffsets (16)");

  // A plan reused for a smaller block keeps nothing of the larger one.
  plan_block_layout(x, x, BlockInfo{{3, 4}, {3, 4}, 0}, sel, 4, p);
  assert_u32(p.rowOrder, {1, 0}, "rowOrder (reused)");
  assert_u32(p.rowOffsets, {0, 3, 5}, "rowOffsets (reused)");
  assert_u32(p.colOrder, {1, 0, 0, 0}, "colOrder (reused)");
  assert_u32(p.colLength, {2, 1, 0, 0}, "colLength (reused)");
  assert_u32(p.tileOffsets, {0, 12}, "tileOffsets (reused)");
}

void test_layout_point_counts(void**) {
  const Manager x = collection(kX), y = collection(kY);
  assert_int_equal(longest_function(x), 4);
  assert_int_equal(longest_function(y), 9);
  assert_int_equal(longest_function(collection({})), 0);
  // Windows of 3 in X: 8 6 7; plus a sentinel per row.
  assert_int_equal(layout_row_points(x, 3), 11);
  assert_int_equal(layout_row_points(x, 5), 16);
  // Windows of 6 in Y: 16 23; plus one tile of the longest (4 x 9) and a
  // sentinel per slot of two tiles (4 x 2).
  assert_int_equal(layout_tile_points(y, 6, 9, 4), 23 + 36 + 8);
  assert_int_equal(layout_tile_points(y, 6, 9, 16), 23 + 144 + 16);
  assert_int_equal(layout_tiles(6, 4), 2);
  assert_int_equal(layout_tiles(8, 4), 2);
  assert_int_equal(layout_tiles(9, 4), 3);
  assert_int_equal(layout_tiles(0, 4), 0);
}

// Every block of up to maxRows x maxCols fits the counts the storage is
// sized with, for random lengths.
void test_layout_point_counts_bound_every_block(void**) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<std::uint64_t> len(1, 40);
  std::vector<std::uint64_t> sx(37), sy(53);
  for (auto& s : sx) s = len(rng);
  for (auto& s : sy) s = len(rng);
  const Manager x = collection(sx), y = collection(sy);
  const std::uint64_t longest = longest_function(y);
  BlockLayoutPlan p;
  for (std::uint32_t C : {4u, 16u}) {
    for (std::size_t side : {1, 5, 16, 17, 37}) {
      const std::uint64_t rowBound = layout_row_points(x, side);
      const std::uint64_t tileBound = layout_tile_points(y, side, longest, C);
      for (const Band& rows : subdivide(side, x.count())) {
        for (const Band& cols : subdivide(side, y.count())) {
          plan_block_layout(x, y, BlockInfo{rows, cols, 0}, PairSelection::All, C, p);
          assert_true(p.rowOffsets.back() <= rowBound);
          assert_true(p.tileOffsets.back() <= tileBound);
          assert_true(p.nTiles <= layout_tiles(side, C));
        }
      }
    }
  }
}

void test_plan_launches(void**) {
  BlockLayoutPlan p;
  p.nTiles = 4;
  p.tileOffsets = {0, 40, 61, 81, 89};  // 40 21 20 8 points: 320 168 160 64 bytes
  // All staged: 168 is more than half of 320 (one launch), 160 is not.
  plan_launches(p, 8, 1024);
  assert_u32(p.launchEnds, {2, 3, 4}, "launchEnds (1024)");
  // The first tile too large: a launch of its own (the unstaged ones).
  plan_launches(p, 8, 200);
  assert_u32(p.launchEnds, {1, 3, 4}, "launchEnds (200)");
  // None staged: one launch.
  plan_launches(p, 8, 16);
  assert_u32(p.launchEnds, {4}, "launchEnds (16)");
  assert_int_equal(tile_bytes(p, 1, 8), 168);
  p.nTiles = 0;
  p.tileOffsets = {0};
  plan_launches(p, 8, 1024);
  assert_int_equal(p.launchEnds.size(), 0);
}

void test_pack_layout_meta(void**) {
  const Manager x = collection(kX), y = collection(kY);
  BlockLayoutPlan p;
  plan_block_layout(x, y, BlockInfo{{1, 3}, {0, 5}, 0}, PairSelection::All, 4, p);
  constexpr std::uint32_t kUnset = 0xdeadbeefu;
  // Room for 4 rows and 3 tiles: 4 + 5 + 2 x 12 + 4 words.
  assert_int_equal(layout_meta_count(4, 3, 4), 37);
  std::vector<std::uint32_t> buf(37, kUnset);
  const LayoutMeta v = layout_meta_view(buf.data(), 4, 3, 4);
  assert_ptr_equal(v.rowOrder, buf.data());
  assert_ptr_equal(v.rowOffsets, buf.data() + 4);
  assert_ptr_equal(v.colOrder, buf.data() + 9);
  assert_ptr_equal(v.colLength, buf.data() + 21);
  assert_ptr_equal(v.tileOffsets, buf.data() + 33);
  pack_layout_meta(p, v);
  const std::uint32_t U = kUnset;
  assert_u32(buf,
             {1, 0, 2, U,                                // rowOrder
              0, 5, 7, 9, U,                             // rowOffsets
              1, 3, 4, 0, 2, 5, 0, 0, U, U, U, U,        // colOrder
              6, 3, 3, 2, 1, 1, 0, 0, U, U, U, U,        // colLength
              0, 28, 36, U},                             // tileOffsets
             "packed");
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sort_by_length_longest_first_ties_by_index),
      cmocka_unit_test(test_select_pairs),
      cmocka_unit_test(test_plan_cross_block_tiles_padded),
      cmocka_unit_test(test_plan_sorted_triangle),
      cmocka_unit_test(test_layout_point_counts),
      cmocka_unit_test(test_layout_point_counts_bound_every_block),
      cmocka_unit_test(test_plan_launches),
      cmocka_unit_test(test_pack_layout_meta),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
