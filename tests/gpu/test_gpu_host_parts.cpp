// The host-side parts of the CUDA backend, checked without a GPU (this test
// runs on every machine):
//  * the GPU walk (integrate_pair_shifted over the shifted layout with
//    sentinels) gives the hand-computed values of DESIGN §1, and bitwise
//    the value of core's integrate_pair on random input with equal times,
//    windows and unbounded tails, for every operation, both dtypes and a
//    strided (tiled) second function; so does its unchecked fold (whole
//    line, L1 and kernel), zero rectangles and unbounded tails included;
//  * the matrix writer stores blocks (whole, or in row / column slices, as
//    the GPU pipeline hands them over) at the positions the layouts define,
//    written out here independently, and rejects a non-zero entry outside
//    the computed triangle.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "mpcf/core/operations.hpp"
#include "mpcf/core/pcf_data.hpp"
#include "mpcf/core/walk.hpp"
#include "mpcf/core/result_writers.hpp"
#include "mpcf/cuda/sentinel_walk.hpp"

extern "C" {
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
}

using namespace mpcf;
using namespace mpcf::cuda;

namespace {

template <typename T>
using Pts = std::vector<SimplePoint<T, T>>;

// The shifted layout of `f` with point k at k * stride (other slots filled
// with NaN, which the walk must never read).
template <typename T>
Pts<T> shifted(const Pts<T>& f, std::uint32_t stride) {
  const std::uint32_t m = static_cast<std::uint32_t>(f.size());
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Pts<T> out(std::size_t(m + 1) * stride, SimplePoint<T, T>{nan, nan});
  for (std::uint32_t k = 0; k <= m; ++k) out[std::size_t(k) * stride] = shifted_point(f.data(), m, k);
  return out;
}

template <std::uint32_t Stride, bool Windowed, typename T, typename Op>
T gpu_walk(const Pts<T>& f, const Pts<T>& g, T a, T b, const Op& op) {
  const Pts<T> sf = shifted(f, 1);
  const Pts<T> sg = shifted(g, Stride);
  return integrate_pair_shifted<Stride, Windowed>(sf.data(), sg.data(),
                                                  static_cast<std::uint32_t>(f.size() + g.size()),
                                                  a, b, op);
}

// The walk with the unchecked fold (whole line, sums only).
template <typename T, typename Op>
T gpu_walk_unchecked(const Pts<T>& f, const Pts<T>& g, const Op& op) {
  const Pts<T> sf = shifted(f, 1);
  const Pts<T> sg = shifted(g, 16);
  const T inf = std::numeric_limits<T>::infinity();
  return integrate_pair_shifted<16, false, true>(
      sf.data(), sg.data(), static_cast<std::uint32_t>(f.size() + g.size()), -inf, inf, op);
}

template <typename T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

void test_known_values(void**) {
  const Pts<double> f1{{0, 3}, {1, 0}}, g1{{0, 1}, {2, 0}};
  const Pts<double> f2{{0, 10}, {2, 5}, {3, 0}}, g2{{0, 5}, {6, 0}};
  const double inf = std::numeric_limits<double>::infinity();
  assert_true((gpu_walk<1, false>(f1, g1, -inf, inf, OperationL1Dist<double>{}) == 3.0));
  assert_true((gpu_walk<16, false>(f2, g2, -inf, inf, OperationL1Dist<double>{}) == 25.0));
  const Pts<double> k1{{0, 4}, {3, 0}}, k2{{0, 2}, {3, 0}};
  const OperationL2InnerProduct<double> kernel;
  assert_true((gpu_walk<16, false>(k1, k1, -inf, inf, kernel) == 48.0));
  assert_true((gpu_walk<16, false>(k1, k2, -inf, inf, kernel) == 24.0));
  assert_true((gpu_walk<1, false>(k2, k2, -inf, inf, kernel) == 12.0));
  // Window [1, 2.5): |3 - 1| on [1, 1) is empty, |0 - 1| on [1, 2): 1.
  assert_true((gpu_walk<1, true>(f1, g1, 1.0, 2.5, OperationL1Dist<double>{}) == 1.0));
  // A non-zero tail on the unbounded right: +inf; a zero integrand there: finite.
  const Pts<float> h{{0, 1}}, z{{0, 1}, {5, 1}};
  const float finf = std::numeric_limits<float>::infinity();
  assert_true((gpu_walk<16, false>(h, Pts<float>{{0, 0}}, -finf, finf, OperationL1Dist<float>{}) ==
              finf));
  assert_true((gpu_walk<16, false>(h, z, -finf, finf, OperationL1Dist<float>{}) == 0.0f));
  assert_true((gpu_walk<1, false>(h, Pts<float>{{0, -2}}, -finf, finf, OperationL2InnerProduct<float>{}) ==
              -finf));
}

struct Rand {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
};

// Times on a coarse grid (many equal times between f and g), values with
// zeros and repeats, tails zero or not.
template <typename T>
Pts<T> random_pcf(Rand& r) {
  const int m = 1 + r.below(12);
  Pts<T> p;
  int t = r.below(6) - 3;
  for (int k = 0; k < m; ++k) {
    p.push_back({static_cast<T>(t) * T(0.5), static_cast<T>(r.below(7) - 3) * T(0.75)});
    t += 1 + r.below(3);
  }
  if (r.below(3) > 0) p.back().v = 0;
  return p;
}

template <typename T, typename Op>
void compare_random(const Op& op, const char* name) {
  Rand r{1234};
  const T inf = std::numeric_limits<T>::infinity();
  const T windows[][2] = {{-inf, inf}, {-1, 2}, {0.5, 0.5}, {-inf, 1.25}, {0, inf}, {2, 7.5}};
  int checked = 0;
  for (int it = 0; it < 3000; ++it) {
    const Pts<T> f = random_pcf<T>(r), g = random_pcf<T>(r);
    for (const auto& w : windows) {
      const bool whole = w[0] == -inf && w[1] == inf;
      const T want = whole ? integrate_pair<false>(f.data(), std::uint32_t(f.size()), g.data(),
                                                   std::uint32_t(g.size()), w[0], w[1], op)
                           : integrate_pair<true>(f.data(), std::uint32_t(f.size()), g.data(),
                                                  std::uint32_t(g.size()), w[0], w[1], op);
      const T got16 = whole ? gpu_walk<16, false>(f, g, w[0], w[1], op)
                            : gpu_walk<16, true>(f, g, w[0], w[1], op);
      const T got1 = whole ? gpu_walk<1, false>(f, g, w[0], w[1], op)
                           : gpu_walk<1, true>(f, g, w[0], w[1], op);
      // Swapped roles give the same bits (the kernels rely on it).
      const T swapped = whole ? gpu_walk<16, false>(g, f, w[0], w[1], op)
                              : gpu_walk<16, true>(g, f, w[0], w[1], op);
      T unchecked = want;
      if constexpr (UncheckedSumFold<Op>::value) {
        if (whole) unchecked = gpu_walk_unchecked(f, g, op);
      }
      if (!same_bits(want, got16) || !same_bits(want, got1) || !same_bits(want, swapped) ||
          !same_bits(want, unchecked)) {
        fail_msg("%s: pair %d, window [%g, %g): integrate_pair %.17g, GPU walk %.17g / %.17g, "
                 "swapped %.17g, unchecked fold %.17g",
                 name, it, double(w[0]), double(w[1]), double(want), double(got16), double(got1),
                 double(swapped), double(unchecked));
      }
      ++checked;
    }
  }
  assert_int_equal(checked, 3000 * 6);
}

void test_same_bits_as_integrate_pair(void**) {
  compare_random<float>(OperationL1Dist<float>{}, "L1 f32");
  compare_random<double>(OperationL1Dist<double>{}, "L1 f64");
  compare_random<float>(OperationLpDist<float>(2.5f), "Lp f32");
  compare_random<double>(OperationLpDist<double>(3.0), "Lp f64");
  compare_random<float>(OperationLinfDist<float>{}, "Linf f32");
  compare_random<double>(OperationLinfDist<double>{}, "Linf f64");
  compare_random<float>(OperationL2InnerProduct<float>{}, "kernel f32");
  compare_random<double>(OperationL2InnerProduct<double>{}, "kernel f64");
}

// ---- the matrix writer ----

// The expected output, from positions written out per layout.
std::vector<double> expected_symmetric(std::size_t n, SymmetricLayout layout, bool withDiagonal,
                                       double (*value)(std::size_t, std::size_t)) {
  std::vector<double> out;
  switch (layout) {
    case SymmetricLayout::Dense:
      out.assign(n * n, -1.0);
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          // The zero diagonal of a distance matrix comes from prepare().
          out[i * n + j] = i == j && !withDiagonal ? 0.0 : value(std::max(i, j), std::min(i, j));
        }
      }
      break;
    case SymmetricLayout::PackedLower:  // rows i of the lower triangle, one after another
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j < (withDiagonal ? i + 1 : i); ++j) out.push_back(value(i, j));
      }
      break;
    case SymmetricLayout::Condensed:  // SciPy: (0,1), (0,2), ..., (1,2), ...
      for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = a + 1; b < n; ++b) out.push_back(value(b, a));
      }
      break;
  }
  return out;
}

double pair_value(std::size_t i, std::size_t j) { return 1000.0 * i + j + 1; }

// The downloaded block as the GPU writes it: computed pairs, zeros elsewhere.
std::vector<double> block_buffer(const BlockInfo& b, BlockOrder order, bool symmetric,
                                 bool withDiagonal) {
  std::vector<double> buf(b.elements(), 0.0);
  for (std::size_t r = 0; r < b.n_rows(); ++r) {
    for (std::size_t c = 0; c < b.n_cols(); ++c) {
      const std::size_t i = b.rows.first + r, j = b.cols.first + c;
      const bool kept = !symmetric || (withDiagonal ? i >= j : i > j);
      if (!kept) continue;
      const std::size_t at = order == BlockOrder::RowMajor ? r * b.n_cols() + c : c * b.n_rows() + r;
      buf[at] = pair_value(i, j);
    }
  }
  return buf;
}

// Stores every block of a side-`side` decomposition, each in two slices
// along the order's major axis (as the pipeline does).
void store_all(MatrixWriter<double>& sink, std::size_t nRows, std::size_t nCols,
               std::size_t side, bool lowerOnly, bool symmetric, bool withDiagonal) {
  PairPlane plane;
  plane.nRows = nRows;
  plane.nCols = nCols;
  plane.skip = !symmetric ? TriangleSkipMode::None
                          : (withDiagonal ? TriangleSkipMode::LowerTriangle
                                          : TriangleSkipMode::LowerTriangleSkipDiag);
  sink.prepare(plane);
  const BlockOrder order = sink.preferred_order();
  for (const Band& rows : subdivide(side, nRows)) {
    for (const Band& cols : subdivide(side, nCols)) {
      if (lowerOnly && cols.first > rows.last) continue;
      const BlockInfo b{rows, cols, 0};
      const auto buf = block_buffer(b, order, symmetric, withDiagonal);
      const bool byColumns = order == BlockOrder::ColumnMajor;
      const Band& major = byColumns ? b.cols : b.rows;
      const std::size_t split = major.size() / 2;
      if (split == 0) {
        sink.consume(BlockPiece<double>{b, buf.data(), order});
        continue;
      }
      BlockInfo first = b, second = b;
      (byColumns ? first.cols : first.rows) = Band{major.first, major.first + split - 1};
      (byColumns ? second.cols : second.rows) = Band{major.first + split, major.last};
      const std::size_t line = byColumns ? b.n_rows() : b.n_cols();
      sink.consume(BlockPiece<double>{second, buf.data() + split * line, order});
      sink.consume(BlockPiece<double>{first, buf.data(), order});
    }
  }
  sink.finish();
}

void test_sink_symmetric_layouts(void**) {
  const std::size_t n = 13;
  for (SymmetricLayout layout :
       {SymmetricLayout::Dense, SymmetricLayout::PackedLower, SymmetricLayout::Condensed}) {
    for (bool withDiagonal : {false, true}) {
      if (layout == SymmetricLayout::Condensed && withDiagonal) continue;
      const std::vector<double> want = expected_symmetric(n, layout, withDiagonal, pair_value);
      for (std::size_t side : {1, 4, 5, 13}) {
        std::vector<double> out(want.size(), -1.0);
        auto sink = MatrixWriter<double>::symmetric(out.data(), n, layout, withDiagonal);
        assert_true(sink.preferred_order() == (layout == SymmetricLayout::Condensed
                                                   ? BlockOrder::ColumnMajor
                                                   : BlockOrder::RowMajor));
        store_all(sink, n, n, side, true, true, withDiagonal);
        for (std::size_t k = 0; k < want.size(); ++k) {
          if (out[k] != want[k]) {
            fail_msg("layout %d, diagonal %d, side %zu: entry %zu is %g, expected %g",
                     static_cast<int>(layout), withDiagonal, side, k, out[k], want[k]);
          }
        }
      }
    }
  }
}

void test_sink_dense_cross(void**) {
  const std::size_t nr = 7, nc = 11;
  std::vector<double> out(nr * nc, -1.0);
  auto sink = MatrixWriter<double>::dense(out.data(), nr, nc);
  assert_true(sink.preferred_order() == BlockOrder::RowMajor);
  store_all(sink, nr, nc, 3, false, false, false);
  for (std::size_t i = 0; i < nr; ++i) {
    for (std::size_t j = 0; j < nc; ++j) assert_true(out[i * nc + j] == pair_value(i, j));
  }
}

void test_sink_rejects_nonzero_skipped_entries(void**) {
  const std::size_t n = 6;
  for (SymmetricLayout layout : {SymmetricLayout::PackedLower, SymmetricLayout::Condensed}) {
    std::vector<double> out(n * n, 0.0);
    auto sink = MatrixWriter<double>::symmetric(out.data(), n, layout, false);
    const BlockInfo b{{0, 5}, {0, 5}, 0};
    auto buf = block_buffer(b, sink.preferred_order(), true, false);
    buf[2 * 6 + 2] = 0.5;  // the diagonal entry (2, 2) in either order
    try {
      sink.consume(BlockPiece<double>{b, buf.data(), sink.preferred_order()});
      fail_msg("a non-zero diagonal entry was accepted");
    } catch (const std::logic_error& e) {
      assert_non_null(std::strstr(e.what(), "(2, 2)"));
    }
  }
  try {
    std::vector<double> out(10);
    (void)MatrixWriter<double>::symmetric(out.data(), 5, SymmetricLayout::Condensed, true);
    fail_msg("a condensed kernel matrix was accepted");
  } catch (const std::logic_error&) {
  }
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_known_values),
      cmocka_unit_test(test_same_bits_as_integrate_pair),
      cmocka_unit_test(test_sink_symmetric_layouts),
      cmocka_unit_test(test_sink_dense_cross),
      cmocka_unit_test(test_sink_rejects_nonzero_skipped_entries),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
