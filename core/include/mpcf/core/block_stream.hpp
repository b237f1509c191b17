// The block stream as a block consumer (DESIGN §8): a caller's callback
// receives every finished piece of the plane, row-major, one call at a time
// (from a worker thread of the engine); a non-zero return cancels the
// computation (it then ends with Cancelled).
//
// Each piece is a true rectangle of the result: on the symmetric plane
// (pdist, l2_kernel) the pieces come from the lower block triangle
// (rows.first >= cols.first), and a piece that reaches the diagonal holds
// the mirrored values above it too (and the computed, or for distances the
// zero, diagonal). Those pieces and their transposes cover the n x n matrix.
#pragma once

#include <algorithm>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/errors.hpp"

namespace mpcf {

template <typename T>
class StreamConsumer final : public BlockConsumer<T> {
 public:
  // block: the rows and columns; values: n_rows x n_cols, row-major, valid
  // during the call. Returns non-zero to cancel.
  using Callback = std::function<int(const BlockInfo& block, const T* values)>;

  explicit StreamConsumer(Callback callback) : callback_(std::move(callback)) {}

  ConsumerKind kind() const noexcept override { return ConsumerKind::Stream; }

  void prepare(const PairPlane& plane) override { plane_ = plane; }

  // Row-major pieces whose entries above the diagonal are computed already
  // go out as they are; the others are completed (mirrored, or transposed)
  // first, which needs the whole diagonal block in the piece.
  void consume(const BlockPiece<T>& piece) override {
    const BlockInfo& b = piece.block;
    const bool reachesDiagonal = plane_.symmetric() && !piece.complete && b.straddles_diagonal();
    const T* values = piece.values;
    // The completed piece is this call's own: the callback may start another
    // stream on this thread (a nested call then has its own copy), and the
    // values it sees must stay as they are until it returns. One allocation
    // per diagonal or column-major block, against a block of work.
    std::vector<T> copy;
    if (reachesDiagonal || piece.order != BlockOrder::RowMajor) {
      if (reachesDiagonal && !(b.rows == b.cols)) {
        throw std::logic_error("StreamConsumer: a piece reaching the diagonal is not a whole square block");
      }
      copy.resize(static_cast<std::size_t>(b.elements()));
      for (std::size_t r = 0; r < b.n_rows(); ++r) {
        for (std::size_t c = 0; c < b.n_cols(); ++c) {
          const std::size_t i = b.rows.first + r, j = b.cols.first + c;
          T v;
          if (!reachesDiagonal || pair_kept(i, j, plane_.skip)) {
            v = piece.at(r, c);
          } else if (i == j) {
            v = T(0);  // the diagonal of a distance matrix
          } else {
            v = piece.at(c, r);  // (j, i) of the same square block
          }
          copy[r * b.n_cols() + c] = v;
        }
      }
      values = copy.data();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) throw Cancelled();
    if (callback_(b, values) != 0) {
      stopped_ = true;
      throw Cancelled();
    }
  }

  void finish() override {}
  void poison() noexcept override {}

 private:
  Callback callback_;
  PairPlane plane_;
  std::mutex mutex_;
  bool stopped_ = false;
};

}  // namespace mpcf
