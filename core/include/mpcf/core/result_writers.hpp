// Result writers: put computed pair values into the caller's buffer in the
// requested layout. The CPU executor stores pairs one by one; the GPU
// pipeline scatters whole downloaded blocks, and that scatter checks that
// the entries the kernel skipped are zero (a non-zero one is a bug: throws
// std::logic_error). Blocks never overlap, so writers need no locking.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "mpcf/core/block_scheduler.hpp"

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
// lower layout.
inline std::uint64_t packed_lower_index(std::uint64_t i, std::uint64_t j, bool withDiagonal) {
  return (withDiagonal ? i * (i + 1) / 2 : i * (i - 1) / 2) + j;
}

// Position of the pair i > j in the condensed layout of n functions: row j
// of the upper triangle, n*j - j(j+1)/2 + (i - j - 1).
inline std::uint64_t condensed_index(std::uint64_t n, std::uint64_t i, std::uint64_t j) {
  return n * j - j * (j + 1) / 2 + (i - j - 1);
}

namespace detail {
// Marks n output elements as "no result" after a failure.
template <typename T>
void fill_nan(T* out, std::uint64_t n) {
  for (std::uint64_t k = 0; k < n; ++k) out[k] = std::numeric_limits<T>::quiet_NaN();
}

[[noreturn]] void throw_skipped_nonzero(std::size_t i, std::size_t j, double value);

// Scatters a downloaded block (row-major n_rows x n_cols) through store(),
// checking that skipped entries are exactly zero.
template <typename T, typename Writer>
void scatter_checked(Writer& w, const BlockInfo& block, const T* buf, TriangleSkipMode mode) {
  const std::size_t nc = block.n_cols();
  for (std::size_t r = 0; r < block.n_rows(); ++r) {
    const std::size_t i = block.rows.first + r;
    const T* row = buf + r * nc;
    for (std::size_t c = 0; c < nc; ++c) {
      const std::size_t j = block.cols.first + c;
      const bool computed = mode == TriangleSkipMode::None ||
                            (mode == TriangleSkipMode::LowerTriangle ? i >= j : i > j);
      if (computed) {
        w.store(i, j, row[c]);
      } else if (row[c] != T(0)) {
        throw_skipped_nonzero(i, j, static_cast<double>(row[c]));
      }
    }
  }
}
}  // namespace detail

// Symmetric n x n result computed on its lower triangle (i > j, or i >= j
// when WithDiagonal). DistanceMatrixResultWriter = without diagonal,
// SymmetricMatrixResultWriter = with.
template <typename T, bool WithDiagonal>
class SymmetricResultWriter {
 public:
  SymmetricResultWriter(T* out, std::size_t n, SymmetricLayout layout)
      : out_(out), n_(n), layout_(layout) {}

  std::uint64_t size() const { return symmetric_result_size(n_, layout_, WithDiagonal); }

  // Called once before computing: fills what no pair writes (the zero
  // diagonal of a dense distance matrix).
  void prepare() {
    if (!WithDiagonal && layout_ == SymmetricLayout::Dense) {
      for (std::size_t i = 0; i < n_; ++i) out_[i * n_ + i] = T(0);
    }
  }

  // (i, j) with i > j (or i >= j WithDiagonal).
  void store(std::size_t i, std::size_t j, T v) {
    switch (layout_) {
      case SymmetricLayout::Dense:
        out_[i * n_ + j] = v;
        out_[j * n_ + i] = v;
        break;
      case SymmetricLayout::PackedLower:
        out_[packed_lower_index(i, j, WithDiagonal)] = v;
        break;
      case SymmetricLayout::Condensed:
        out_[condensed_index(n_, i, j)] = v;
        break;
    }
  }

  void scatter_block(const BlockInfo& block, const T* buf) {
    detail::scatter_checked<T>(*this, block, buf,
                               WithDiagonal ? TriangleSkipMode::LowerTriangle
                                            : TriangleSkipMode::LowerTriangleSkipDiag);
  }

  // Marks the whole output as "no result" after a failure.
  void poison() { detail::fill_nan(out_, size()); }

 private:
  T* out_;
  std::size_t n_;
  SymmetricLayout layout_;
};

template <typename T>
using DistanceMatrixResultWriter = SymmetricResultWriter<T, false>;
template <typename T>
using SymmetricMatrixResultWriter = SymmetricResultWriter<T, true>;

// Dense row-major nRows x nCols result (cdist, any tensor rank).
template <typename T>
class DenseResultWriter {
 public:
  DenseResultWriter(T* out, std::size_t nRows, std::size_t nCols)
      : out_(out), nRows_(nRows), nCols_(nCols) {}
  std::uint64_t size() const { return static_cast<std::uint64_t>(nRows_) * nCols_; }
  void prepare() {}
  void store(std::size_t i, std::size_t j, T v) { out_[i * nCols_ + j] = v; }
  void scatter_block(const BlockInfo& block, const T* buf) {
    detail::scatter_checked<T>(*this, block, buf, TriangleSkipMode::None);
  }
  void poison() { detail::fill_nan(out_, size()); }

 private:
  T* out_;
  std::size_t nRows_;
  std::size_t nCols_;
};

}  // namespace mpcf
