// k nearest neighbours as a block consumer (DESIGN §8): for each row i, the
// k columns j with the smallest d(f_i, g_j), ascending by (distance, j).
//
// Ties go to the smaller index, and the order is total (NaN, which finite
// input never produces, after +inf), so the k smallest of a row are one
// well-defined set: merging candidate lists in any order, from blocks of any
// shape, threads or GPUs, gives the same bits. On the symmetric plane
// (knn(X, k): pairs i > j only) each pair (i, j) is a candidate of row i and,
// as (j, i), of row j; the diagonal is never computed, so a function is never
// its own neighbour.
//
// Both ways (the plane of X against Y): every pair is also a candidate of
// its column, whose lists (cols, kCols) hold the nearest rows: the two knn
// of a tile below the diagonal of a split knn (mpcf.dask) from one pass.
//
// The caller's buffers (distances and int64 indices, row-major (rows, k))
// are the working storage: an empty slot has index -1. After a failure
// poison() leaves every distance NaN and every index -1.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/errors.hpp"

namespace mpcf {

// The rule on k, written once: 1 <= k <= the candidates of a row, which are
// the other objects of X without Y (count(X) - 1) and every object of Y with
// it. The C API checks it before a knn starts (mpcf_knn_start, and
// mpcf_knn_check for callers that split one knn into many); the consumer
// checks it again when the plane is known.
inline std::uint64_t knn_candidates(std::uint64_t xObjects, std::uint64_t yObjects, bool withY) {
  if (withY) return yObjects;
  return xObjects == 0 ? 0 : xObjects - 1;
}

// Throws InvalidArgument unless 1 <= k <= knn_candidates(...); `noun` says
// what the collections hold ("functions" or "objects").
inline void check_knn_k(std::uint64_t k, std::uint64_t xObjects, std::uint64_t yObjects, bool withY,
                        const char* noun) {
  if (k == 0) throw InvalidArgument("k = 0; k must be at least 1");
  const std::uint64_t candidates = knn_candidates(xObjects, yObjects, withY);
  if (k > candidates) {
    throw InvalidArgument("k = " + std::to_string(k) + " is more than the " +
                          std::to_string(candidates) +
                          (withY ? std::string(" ") + noun + " of Y"
                                 : std::string(" other ") + noun + " of X (count(X) - 1)") +
                          "; k must be at most that");
  }
}

template <typename T>
struct Neighbour {
  T distance;
  std::int64_t index;  // -1: empty
};

// The order of neighbours: by distance (NaN last), then by index; empty
// slots after everything.
template <typename T>
bool neighbour_less(const Neighbour<T>& a, const Neighbour<T>& b) {
  if (a.index < 0) return false;
  if (b.index < 0) return true;
  const bool an = std::isnan(a.distance), bn = std::isnan(b.distance);
  if (an != bn) return bn;
  if (!an && a.distance != b.distance) return a.distance < b.distance;
  return a.index < b.index;
}

template <typename T>
class KnnConsumer final : public BlockConsumer<T> {
 public:
  // distances and indices: rows * k elements each.
  KnnConsumer(T* distances, std::int64_t* indices, std::size_t rows, std::size_t k)
      : sides_{Side{distances, indices, rows, k}, Side{}}, locks_(2 * kLockStripes) {}
  // Both ways, on the plane of X (rows) against Y (columns): also the
  // kCols nearest rows of every column, into colDistances / colIndices
  // (cols * kCols elements each, indices of rows). Every pair is computed
  // once and is a candidate of its row and of its column.
  KnnConsumer(T* distances, std::int64_t* indices, std::size_t rows, std::size_t k,
              T* colDistances, std::int64_t* colIndices, std::size_t cols, std::size_t kCols)
      : sides_{Side{distances, indices, rows, k}, Side{colDistances, colIndices, cols, kCols}},
        bothWays_(true),
        locks_(2 * kLockStripes) {}

  ConsumerKind kind() const noexcept override { return ConsumerKind::Knn; }
  std::size_t k() const noexcept { return sides_[0].k; }
  // Both ways: the column side's k (0 otherwise).
  bool both_ways() const noexcept { return bothWays_; }
  std::size_t k_cols() const noexcept { return bothWays_ ? sides_[1].k : 0; }

  void prepare(const PairPlane& plane) override {
    if (plane.nRows != sides_[0].count) throw std::logic_error("KnnConsumer: the plane has other rows");
    check_knn_k(k(), plane.nRows, plane.nCols, !plane.symmetric(), "objects");
    symmetric_ = plane.symmetric();
    if (bothWays_) {
      if (symmetric_ || plane.nCols != sides_[1].count) {
        throw std::logic_error("KnnConsumer: both ways needs the plane of X against Y, of its columns");
      }
      check_knn_k(sides_[1].k, plane.nCols, plane.nRows, true, "objects");
    }
    for (const Side& s : sides_) {
      for (std::size_t e = 0; e < s.count * s.k; ++e) {
        s.distances[e] = std::numeric_limits<T>::infinity();
        s.indices[e] = -1;
      }
    }
  }

  // Each kept pair of the piece is a candidate of its row and, on the
  // symmetric plane, of its column's row (both ways: of its column).
  void consume(const BlockPiece<T>& piece) override {
    const BlockInfo& b = piece.block;
    std::vector<Neighbour<T>> cand;
    cand.reserve(std::max(b.n_rows(), b.n_cols()));
    // A candidate that does not come before the row's current k-th entry
    // can never enter its list (the k-th only moves down), so only those
    // that do are collected: the same lists, without sorting the many that
    // cannot count (most of them, once the lists fill).
    for (std::size_t r = 0; r < b.n_rows(); ++r) {
      const std::size_t i = b.rows.first + r;
      const Neighbour<T> last = kth(0, i);
      cand.clear();
      for (std::size_t c = 0; c < b.n_cols(); ++c) {
        const std::size_t j = b.cols.first + c;
        if (!pair_kept(i, j, skip_mode())) continue;
        const Neighbour<T> n{piece.at(r, c), static_cast<std::int64_t>(j)};
        if (neighbour_less(n, last)) cand.push_back(n);
      }
      merge_candidates(0, i, cand);
    }
    if (!symmetric_ && !bothWays_) return;
    const int side = bothWays_ ? 1 : 0;  // the symmetric plane's columns are rows
    for (std::size_t c = 0; c < b.n_cols(); ++c) {
      const std::size_t j = b.cols.first + c;
      const Neighbour<T> last = kth(side, j);
      cand.clear();
      for (std::size_t r = 0; r < b.n_rows(); ++r) {
        const std::size_t i = b.rows.first + r;
        if (!pair_kept(i, j, skip_mode())) continue;
        const Neighbour<T> n{piece.at(r, c), static_cast<std::int64_t>(i)};
        if (neighbour_less(n, last)) cand.push_back(n);
      }
      merge_candidates(side, j, cand);
    }
  }

  // The k-th distances of the block's rows and, where a pair is a candidate
  // of its column too (symmetric plane, both ways), of its columns: a pair
  // above both enters neither list (an empty list's +inf: no bound).
  bool pair_bounds(const BlockInfo& b, std::vector<T>& rows, std::vector<T>& cols) override {
    rows.resize(b.n_rows());
    for (std::size_t r = 0; r < b.n_rows(); ++r) rows[r] = kth(0, b.rows.first + r).distance;
    cols.clear();
    if (symmetric_ || bothWays_) {
      const int side = bothWays_ ? 1 : 0;
      cols.resize(b.n_cols());
      for (std::size_t c = 0; c < b.n_cols(); ++c) cols[c] = kth(side, b.cols.first + c).distance;
    }
    return true;
  }

  // The current k-th entry of row i of side 0 (rows) or 1 (columns, both
  // ways): a snapshot; it only moves down.
  Neighbour<T> kth(int side, std::size_t i) {
    const Side& s = sides_[side];
    std::lock_guard<std::mutex> lock(lock_of(side, i));
    return {s.distances[i * s.k + s.k - 1], s.indices[i * s.k + s.k - 1]};
  }

  // Merges `count` candidates of row i, sorted by neighbour_less (empty
  // slots allowed at the end). Thread-safe. merge_col: of column j (both
  // ways).
  void merge_row(std::size_t i, const Neighbour<T>* sorted, std::size_t count) {
    merge_into(0, i, sorted, count);
  }
  void merge_col(std::size_t j, const Neighbour<T>* sorted, std::size_t count) {
    if (!bothWays_) throw std::logic_error("KnnConsumer: no column lists (not both ways)");
    merge_into(1, j, sorted, count);
  }

  void finish() override {
    for (int side = 0; side < 2; ++side) {
      const Side& s = sides_[side];
      for (std::size_t e = 0; e < s.count * s.k; ++e) {
        if (s.indices[e] < 0) {
          throw std::logic_error(std::string("KnnConsumer: ") + (side ? "column " : "row ") +
                                 std::to_string(e / s.k) + " received fewer than k candidates");
        }
      }
    }
  }

  void poison() noexcept override {
    for (const Side& s : sides_) {
      for (std::size_t e = 0; e < s.count * s.k; ++e) {
        s.distances[e] = std::numeric_limits<T>::quiet_NaN();
        s.indices[e] = -1;
      }
    }
  }

 private:
  static constexpr std::size_t kLockStripes = 1024;

  // One side's lists: count rows (or columns) of k entries.
  struct Side {
    T* distances = nullptr;
    std::int64_t* indices = nullptr;
    std::size_t count = 0;
    std::size_t k = 0;
  };

  TriangleSkipMode skip_mode() const {
    return symmetric_ ? TriangleSkipMode::LowerTriangleSkipDiag : TriangleSkipMode::None;
  }
  std::mutex& lock_of(int side, std::size_t i) {
    return locks_[static_cast<std::size_t>(side) * kLockStripes + i % kLockStripes];
  }

  void merge_into(int side, std::size_t i, const Neighbour<T>* sorted, std::size_t count) {
    const Side& s = sides_[side];
    const std::size_t k = s.k;
    std::lock_guard<std::mutex> lock(lock_of(side, i));
    T* d = s.distances + i * k;
    std::int64_t* x = s.indices + i * k;
    // Most candidate lists of a long run hold nothing below the current k-th.
    if (count == 0 || !neighbour_less(sorted[0], Neighbour<T>{d[k - 1], x[k - 1]})) return;
    // Merge the current list (sorted, length k) and the candidates into the
    // k smallest; `merged` is per thread, reused.
    thread_local std::vector<Neighbour<T>> merged;
    merged.resize(k);
    std::size_t a = 0, c = 0;
    for (std::size_t out = 0; out < k; ++out) {
      const Neighbour<T> cur{d[a < k ? a : 0], a < k ? x[a] : -1};
      const Neighbour<T> next = c < count ? sorted[c] : Neighbour<T>{T(0), -1};
      if (c < count && neighbour_less(next, cur)) {
        merged[out] = next;
        ++c;
      } else {
        merged[out] = cur;
        ++a;
      }
    }
    for (std::size_t e = 0; e < k; ++e) {
      d[e] = merged[e].distance;
      x[e] = merged[e].index;
    }
  }

  // The k smallest of `cand`, sorted, merged into row i of `side`.
  void merge_candidates(int side, std::size_t i, std::vector<Neighbour<T>>& cand) {
    if (cand.empty()) return;
    const std::size_t keep = std::min(sides_[side].k, cand.size());
    if (keep < cand.size()) {
      std::nth_element(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(keep), cand.end(),
                       neighbour_less<T>);
    }
    std::sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(keep), neighbour_less<T>);
    merge_into(side, i, cand.data(), keep);
  }

  Side sides_[2];
  bool bothWays_ = false;
  bool symmetric_ = false;
  std::vector<std::mutex> locks_;
};

}  // namespace mpcf
