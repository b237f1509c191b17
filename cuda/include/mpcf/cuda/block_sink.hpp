// BlockSink: stores downloaded GPU blocks into the caller's output buffer in
// its final layout, as contiguous runs copied with memcpy.
//
// A block of a symmetric result maps to one contiguous run of the output per
// block row (dense, packed lower: out[i, j0..j1]) or per block column
// (condensed: the entries (i0..i1, j) of condensed row j), so the GPU writes
// the block in the matching order (order()) and the host copies runs instead
// of storing element by element through index arithmetic. The entries a
// block does not compute (above the diagonal, or the diagonal of a distance
// matrix) must be exactly 0 in the downloaded block; a non-zero one is an
// internal error (std::logic_error), as in core's result writers.
//
// Plain C++ (no CUDA), so it is tested on the host.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/result_writers.hpp"

namespace mpcf::cuda {

// How a block lies in the buffer handed to BlockSink::store.
enum class BlockOrder { RowMajor, ColumnMajor };

template <typename T>
class BlockSink {
 public:
  // n x n symmetric result computed on i > j (or i >= j withDiagonal).
  static BlockSink symmetric(T* out, std::size_t n, SymmetricLayout layout, bool withDiagonal) {
    if (layout == SymmetricLayout::Condensed && withDiagonal) {
      throw std::logic_error("BlockSink: the condensed layout has no diagonal");
    }
    BlockSink s;
    s.out_ = out;
    s.nRows_ = s.nCols_ = n;
    s.symmetric_ = true;
    s.layout_ = layout;
    s.withDiagonal_ = withDiagonal;
    return s;
  }
  // Dense row-major nRows x nCols result, every pair computed.
  static BlockSink dense(T* out, std::size_t nRows, std::size_t nCols) {
    BlockSink s;
    s.out_ = out;
    s.nRows_ = nRows;
    s.nCols_ = nCols;
    return s;
  }

  // The order in which blocks should be laid out for store(): column-major
  // for the condensed layout (runs along columns), else row-major.
  BlockOrder order() const {
    return symmetric_ && layout_ == SymmetricLayout::Condensed ? BlockOrder::ColumnMajor
                                                               : BlockOrder::RowMajor;
  }

  // Stores `part`, a block or a slice of one that keeps its full extent
  // along the other axis (whole rows of a row-major block, whole columns of
  // a column-major block), laid out in order() starting at buf.
  void store(const BlockInfo& part, const T* buf) const {
    if (order() == BlockOrder::RowMajor) {
      store_rows(part, buf);
    } else {
      store_columns(part, buf);
    }
  }

 private:
  BlockSink() = default;

  bool kept(std::size_t i, std::size_t j) const {
    return !symmetric_ || (withDiagonal_ ? i >= j : i > j);
  }

  // Entries [from, to) of a run that the block does not compute must be 0.
  static void check_zero(const T* run, std::size_t from, std::size_t to, std::size_t fixed,
                         std::size_t base, bool alongRow) {
    for (std::size_t k = from; k < to; ++k) {
      if (run[k] != T(0)) {
        const std::size_t other = base + k;
        mpcf::detail::throw_skipped_nonzero(alongRow ? fixed : other, alongRow ? other : fixed,
                                      static_cast<double>(run[k]));
      }
    }
  }

  void store_rows(const BlockInfo& part, const T* buf) const {
    const std::size_t nc = part.n_cols();
    const std::size_t c0 = part.cols.first;
    for (std::size_t r = 0; r < part.n_rows(); ++r) {
      const std::size_t i = part.rows.first + r;
      const T* row = buf + r * nc;
      // Kept columns of this row: [c0, c0 + count).
      std::size_t count = nc;
      if (symmetric_) {
        const std::size_t limit = withDiagonal_ ? i + 1 : i;  // j < limit
        count = limit <= c0 ? 0 : std::min(nc, limit - c0);
        check_zero(row, count, nc, i, c0, true);
      }
      if (count == 0) continue;
      if (!symmetric_) {
        std::memcpy(out_ + i * nCols_ + c0, row, count * sizeof(T));
        continue;
      }
      switch (layout_) {
        case SymmetricLayout::Dense:
          std::memcpy(out_ + i * nCols_ + c0, row, count * sizeof(T));
          break;
        case SymmetricLayout::PackedLower:
          std::memcpy(out_ + packed_lower_index(i, c0, withDiagonal_), row, count * sizeof(T));
          break;
        case SymmetricLayout::Condensed:
          for (std::size_t c = 0; c < count; ++c) {
            out_[condensed_index(nRows_, i, c0 + c)] = row[c];
          }
          break;
      }
    }
    if (symmetric_ && layout_ == SymmetricLayout::Dense) mirror_rows(part, buf);
  }

  // The upper triangle of a dense symmetric result: out[j, i] = block(i, j),
  // transposed in small squares so that reads and writes stay in cache.
  void mirror_rows(const BlockInfo& part, const T* buf) const {
    constexpr std::size_t kSquare = 32;
    const std::size_t nc = part.n_cols();
    for (std::size_t r0 = 0; r0 < part.n_rows(); r0 += kSquare) {
      const std::size_t r1 = std::min(part.n_rows(), r0 + kSquare);
      for (std::size_t c = 0; c < nc; ++c) {
        const std::size_t j = part.cols.first + c;
        T* dst = out_ + j * nCols_;
        for (std::size_t r = r0; r < r1; ++r) {
          const std::size_t i = part.rows.first + r;
          if (i != j && kept(i, j)) dst[i] = buf[r * nc + c];
        }
      }
    }
  }

  void store_columns(const BlockInfo& part, const T* buf) const {
    const std::size_t nr = part.n_rows();
    const std::size_t r0 = part.rows.first;
    for (std::size_t c = 0; c < part.n_cols(); ++c) {
      const std::size_t j = part.cols.first + c;
      const T* col = buf + c * nr;
      // Kept rows of this column: [r0 + skip, r0 + nr).
      std::size_t skip = 0;
      if (symmetric_) {
        const std::size_t first = withDiagonal_ ? j : j + 1;  // i >= first
        skip = first <= r0 ? 0 : std::min(nr, first - r0);
        check_zero(col, 0, skip, j, r0, false);
      }
      if (skip == nr) continue;
      if (symmetric_ && layout_ == SymmetricLayout::Condensed) {
        std::memcpy(out_ + condensed_index(nRows_, r0 + skip, j), col + skip,
                    (nr - skip) * sizeof(T));
        continue;
      }
      for (std::size_t r = skip; r < nr; ++r) store_one(r0 + r, j, col[r]);
    }
  }

  void store_one(std::size_t i, std::size_t j, T v) const {
    if (!symmetric_) {
      out_[i * nCols_ + j] = v;
      return;
    }
    switch (layout_) {
      case SymmetricLayout::Dense:
        out_[i * nCols_ + j] = v;
        out_[j * nCols_ + i] = v;
        break;
      case SymmetricLayout::PackedLower:
        out_[packed_lower_index(i, j, withDiagonal_)] = v;
        break;
      case SymmetricLayout::Condensed:
        out_[condensed_index(nRows_, i, j)] = v;
        break;
    }
  }

  T* out_ = nullptr;
  std::size_t nRows_ = 0;
  std::size_t nCols_ = 0;
  bool symmetric_ = false;
  SymmetricLayout layout_ = SymmetricLayout::Dense;
  bool withDiagonal_ = false;
};

}  // namespace mpcf::cuda
