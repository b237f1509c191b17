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
      : distances_(distances), indices_(indices), rows_(rows), k_(k), locks_(kLockStripes) {}

  ConsumerKind kind() const noexcept override { return ConsumerKind::Knn; }
  std::size_t k() const noexcept { return k_; }

  void prepare(const PairPlane& plane) override {
    if (plane.nRows != rows_) throw std::logic_error("KnnConsumer: the plane has other rows");
    check_knn_k(k_, plane.nRows, plane.nCols, !plane.symmetric(), "objects");
    symmetric_ = plane.symmetric();
    for (std::size_t e = 0; e < rows_ * k_; ++e) {
      distances_[e] = std::numeric_limits<T>::infinity();
      indices_[e] = -1;
    }
  }

  // Each kept pair of the piece is a candidate of its row (and, on the
  // symmetric plane, of its column's row).
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
      const Neighbour<T> last = kth(i);
      cand.clear();
      for (std::size_t c = 0; c < b.n_cols(); ++c) {
        const std::size_t j = b.cols.first + c;
        if (!pair_kept(i, j, skip_mode())) continue;
        const Neighbour<T> n{piece.at(r, c), static_cast<std::int64_t>(j)};
        if (neighbour_less(n, last)) cand.push_back(n);
      }
      merge_candidates(i, cand);
    }
    if (!symmetric_) return;
    for (std::size_t c = 0; c < b.n_cols(); ++c) {
      const std::size_t j = b.cols.first + c;
      const Neighbour<T> last = kth(j);
      cand.clear();
      for (std::size_t r = 0; r < b.n_rows(); ++r) {
        const std::size_t i = b.rows.first + r;
        if (!pair_kept(i, j, skip_mode())) continue;
        const Neighbour<T> n{piece.at(r, c), static_cast<std::int64_t>(i)};
        if (neighbour_less(n, last)) cand.push_back(n);
      }
      merge_candidates(j, cand);
    }
  }

  // The current k-th entry of row i (a snapshot; it only moves down).
  Neighbour<T> kth(std::size_t i) {
    std::lock_guard<std::mutex> lock(locks_[i % kLockStripes]);
    return {distances_[i * k_ + k_ - 1], indices_[i * k_ + k_ - 1]};
  }

  // Merges `count` candidates of row i, sorted by neighbour_less (empty
  // slots allowed at the end). Thread-safe.
  void merge_row(std::size_t i, const Neighbour<T>* sorted, std::size_t count) {
    std::lock_guard<std::mutex> lock(locks_[i % kLockStripes]);
    T* d = distances_ + i * k_;
    std::int64_t* x = indices_ + i * k_;
    // Most candidate lists of a long run hold nothing below the current k-th.
    if (count == 0 || !neighbour_less(sorted[0], Neighbour<T>{d[k_ - 1], x[k_ - 1]})) return;
    // Merge the current list (sorted, length k) and the candidates into the
    // k smallest; `merged` is per thread, reused.
    thread_local std::vector<Neighbour<T>> merged;
    merged.resize(k_);
    std::size_t a = 0, c = 0;
    for (std::size_t out = 0; out < k_; ++out) {
      const Neighbour<T> cur{d[a < k_ ? a : 0], a < k_ ? x[a] : -1};
      const Neighbour<T> next = c < count ? sorted[c] : Neighbour<T>{T(0), -1};
      if (c < count && neighbour_less(next, cur)) {
        merged[out] = next;
        ++c;
      } else {
        merged[out] = cur;
        ++a;
      }
    }
    for (std::size_t e = 0; e < k_; ++e) {
      d[e] = merged[e].distance;
      x[e] = merged[e].index;
    }
  }

  void finish() override {
    for (std::size_t e = 0; e < rows_ * k_; ++e) {
      if (indices_[e] < 0) {
        throw std::logic_error("KnnConsumer: row " + std::to_string(e / k_) +
                               " received fewer than k candidates");
      }
    }
  }

  void poison() noexcept override {
    for (std::size_t e = 0; e < rows_ * k_; ++e) {
      distances_[e] = std::numeric_limits<T>::quiet_NaN();
      indices_[e] = -1;
    }
  }

 private:
  static constexpr std::size_t kLockStripes = 1024;

  TriangleSkipMode skip_mode() const {
    return symmetric_ ? TriangleSkipMode::LowerTriangleSkipDiag : TriangleSkipMode::None;
  }

  // The k smallest of `cand`, sorted, merged into row i.
  void merge_candidates(std::size_t i, std::vector<Neighbour<T>>& cand) {
    if (cand.empty()) return;
    const std::size_t keep = std::min(k_, cand.size());
    if (keep < cand.size()) {
      std::nth_element(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(keep), cand.end(),
                       neighbour_less<T>);
    }
    std::sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(keep), neighbour_less<T>);
    merge_row(i, cand.data(), keep);
  }

  T* distances_;
  std::int64_t* indices_;
  std::size_t rows_;
  std::size_t k_;
  bool symmetric_ = false;
  std::vector<std::mutex> locks_;
};

}  // namespace mpcf
