// The layouts of a matrix result, their sizes and positions, and the one
// matrix writer (a BlockConsumer) that stores computed pieces into the
// caller's buffer, for the CPU executor and the GPU pipeline alike.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "mpcf/core/block_consumer.hpp"
#include "mpcf/core/block_scheduler.hpp"
#include "mpcf/core/host_device.hpp"
#include "mpcf/core/output_prefault.hpp"

namespace mpcf {

enum class SymmetricLayout {
  Dense,        // row-major n x n, mirrored
  Condensed,    // SciPy / R order of the upper triangle, no diagonal
  PackedLower,  // engine order: i(i-1)/2 + j (distances), i(i+1)/2 + j (kernels)
};

// a * b; InvalidArgument ("<what> has a x b elements, more than ...") when
// the product does not fit 64 bits.
std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const char* what);

// Number of output elements of an n x n symmetric result (InvalidArgument
// when it does not fit 64 bits).
std::uint64_t symmetric_result_size(std::uint64_t n, SymmetricLayout layout, bool withDiagonal);

// Position of the pair (i, j), i > j (i >= j withDiagonal), in the packed
// lower layout (host and device: the GPU's direct path writes by it too).
MPCF_HD std::uint64_t packed_lower_index(std::uint64_t i, std::uint64_t j, bool withDiagonal) {
  return (withDiagonal ? i * (i + 1) / 2 : i * (i - 1) / 2) + j;
}

// Position of the pair i > j in the condensed layout of n functions: row j
// of the upper triangle, n*j - j(j+1)/2 + (i - j - 1).
MPCF_HD std::uint64_t condensed_index(std::uint64_t n, std::uint64_t i, std::uint64_t j) {
  return n * j - j * (j + 1) / 2 + (i - j - 1);
}

namespace detail {
// Marks n output elements as "no result" after a failure.
template <typename T>
void fill_nan(T* out, std::uint64_t n) {
  for (std::uint64_t k = 0; k < n; ++k) out[k] = std::numeric_limits<T>::quiet_NaN();
}

[[noreturn]] void throw_skipped_nonzero(std::size_t i, std::size_t j, double value);
}  // namespace detail

// The matrix writer: stores pieces of the plane into the caller's buffer in
// its final layout, as contiguous runs copied with memcpy where the layout
// allows.
//
// A piece of a symmetric result maps to one contiguous run of the output
// per row (dense, packed lower: out[i, j0..j1]) or per column (condensed:
// the entries (i0..i1, j) of condensed row j), so the engine lays pieces out
// in preferred_order() and the writer copies runs instead of storing element
// by element. The entries a piece does not compute (above the diagonal, or
// the diagonal of a distance matrix) must be exactly 0; a non-zero one is an
// internal error (std::logic_error). Pieces never overlap, so consume() needs
// no locking. prepare() starts faulting the output's pages in on background
// threads (OutputPrefault), so that results written into fresh memory are
// not slowed down by its page faults; finish() and poison() wait for them.
template <typename T>
class MatrixWriter final : public BlockConsumer<T> {
 public:
  // n x n symmetric result computed on i > j (or i >= j withDiagonal).
  static MatrixWriter symmetric(T* out, std::size_t n, SymmetricLayout layout, bool withDiagonal) {
    if (layout == SymmetricLayout::Condensed && withDiagonal) {
      throw std::logic_error("MatrixWriter: the condensed layout has no diagonal");
    }
    MatrixWriter w;
    w.out_ = out;
    w.nRows_ = w.nCols_ = n;
    w.symmetric_ = true;
    w.layout_ = layout;
    w.withDiagonal_ = withDiagonal;
    return w;
  }
  // Dense row-major nRows x nCols result, every pair computed.
  static MatrixWriter dense(T* out, std::size_t nRows, std::size_t nCols) {
    MatrixWriter w;
    w.out_ = out;
    w.nRows_ = nRows;
    w.nCols_ = nCols;
    return w;
  }

  ConsumerKind kind() const noexcept override { return ConsumerKind::Matrix; }

  // Where and how the result is stored, for an engine that writes it
  // without this writer's consume() (the GPU's direct path into
  // page-locked memory, direct_matrix_stage.cuh).
  struct Target {
    T* out;
    std::size_t nRows;
    std::size_t nCols;
    bool symmetric;
    SymmetricLayout layout;  // symmetric results only
    bool withDiagonal;
  };
  Target target() const noexcept { return Target{out_, nRows_, nCols_, symmetric_, layout_, withDiagonal_}; }

  // Column-major for the condensed layout (runs along columns), else
  // row-major.
  BlockOrder preferred_order() const noexcept override {
    return symmetric_ && layout_ == SymmetricLayout::Condensed ? BlockOrder::ColumnMajor
                                                               : BlockOrder::RowMajor;
  }

  std::uint64_t size() const {
    return symmetric_ ? symmetric_result_size(nRows_, layout_, withDiagonal_)
                      : checked_product(nRows_, nCols_, "the result");
  }

  // The plane must be the one the writer was made for. Fills what no pair
  // writes (the zero diagonal of a dense distance matrix).
  void prepare(const PairPlane& plane) override {
    const TriangleSkipMode skip =
        !symmetric_ ? TriangleSkipMode::None
                    : (withDiagonal_ ? TriangleSkipMode::LowerTriangle
                                     : TriangleSkipMode::LowerTriangleSkipDiag);
    if (plane.nRows != nRows_ || plane.nCols != nCols_ || plane.skip != skip) {
      throw std::logic_error("MatrixWriter: the plane is not the one the writer was made for");
    }
    prefault_ = std::make_shared<OutputPrefault>();
    prefault_->start(out_, static_cast<std::size_t>(size()) * sizeof(T), prefault_threads());
    if (symmetric_ && !withDiagonal_ && layout_ == SymmetricLayout::Dense) {
      for (std::size_t i = 0; i < nRows_; ++i) out_[i * nCols_ + i] = T(0);
    }
  }

  // A piece that keeps its block's full extent along the other axis when it
  // is a slice: whole rows of a row-major block, whole columns of a
  // column-major one.
  void consume(const BlockPiece<T>& piece) override {
    const bool checkZeros = !piece.complete;
    if (piece.order == BlockOrder::RowMajor) {
      store_rows(piece.block, piece.values, checkZeros);
    } else {
      store_columns(piece.block, piece.values, checkZeros);
    }
  }

  void finish() override {
    if (prefault_) prefault_->wait();
  }

  // Marks the whole output as "no result" after a failure.
  void poison() noexcept override {
    if (prefault_) prefault_->stop();
    std::uint64_t n = 0;
    try {
      n = size();
    } catch (...) {
      return;  // a size that overflows was refused before anything was written
    }
    detail::fill_nan(out_, n);
  }

 private:
  MatrixWriter() = default;

  // Background threads that fault the output in: half the hardware
  // threads, at most 8 (the page faults of a large output take several
  // cores' time; a GPU computation leaves them idle).
  static int prefault_threads() {
    const unsigned hw = std::thread::hardware_concurrency();
    return static_cast<int>(std::clamp<unsigned>(hw / 2, 1, 8));
  }

  TriangleSkipMode skip_mode() const {
    if (!symmetric_) return TriangleSkipMode::None;
    return withDiagonal_ ? TriangleSkipMode::LowerTriangle : TriangleSkipMode::LowerTriangleSkipDiag;
  }

  // Entries [from, to) of a run that the piece does not compute must be 0
  // (unless the piece is complete).
  static void check_zero(const T* run, std::size_t from, std::size_t to, std::size_t fixed,
                         std::size_t base, bool alongRow, bool checkZeros) {
    if (!checkZeros) return;
    for (std::size_t k = from; k < to; ++k) {
      if (run[k] != T(0)) {
        const std::size_t other = base + k;
        detail::throw_skipped_nonzero(alongRow ? fixed : other, alongRow ? other : fixed,
                                      static_cast<double>(run[k]));
      }
    }
  }

  void store_rows(const BlockInfo& part, const T* buf, bool checkZeros) const {
    const std::size_t nc = part.n_cols();
    const std::size_t c0 = part.cols.first;
    for (std::size_t r = 0; r < part.n_rows(); ++r) {
      const std::size_t i = part.rows.first + r;
      const T* row = buf + r * nc;
      // Kept columns of this row: [c0, c0 + count).
      const std::size_t end = kept_column_end(i, skip_mode(), c0 + nc);
      const std::size_t count = end > c0 ? end - c0 : 0;
      check_zero(row, count, nc, i, c0, true, checkZeros);
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

  // The upper triangle of a dense symmetric result: out[j, i] = piece(i, j),
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
          if (i != j && pair_kept(i, j, skip_mode())) dst[i] = buf[r * nc + c];
        }
      }
    }
  }

  void store_columns(const BlockInfo& part, const T* buf, bool checkZeros) const {
    const std::size_t nr = part.n_rows();
    const std::size_t r0 = part.rows.first;
    for (std::size_t c = 0; c < part.n_cols(); ++c) {
      const std::size_t j = part.cols.first + c;
      const T* col = buf + c * nr;
      // Kept rows of this column: [r0 + skipped, r0 + nr), the first row
      // below the diagonal being the first i with pair_kept(i, j).
      std::size_t skipped = 0;
      if (symmetric_) {
        const std::size_t first = pair_kept(std::int64_t(0), skip_mode()) ? j : j + 1;
        skipped = first <= r0 ? 0 : std::min(nr, first - r0);
        check_zero(col, 0, skipped, j, r0, false, checkZeros);
      }
      if (skipped == nr) continue;
      if (symmetric_ && layout_ == SymmetricLayout::Condensed) {
        std::memcpy(out_ + condensed_index(nRows_, r0 + skipped, j), col + skipped,
                    (nr - skipped) * sizeof(T));
        continue;
      }
      for (std::size_t r = skipped; r < nr; ++r) store_one(r0 + r, j, col[r]);
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
  std::shared_ptr<OutputPrefault> prefault_;
};

}  // namespace mpcf
