// Partition of an nRows x nCols output into 2D blocks (seed: "Block
// decomposition"). LowerTriangle mode (pdist, l2_kernel, square matrices)
// drops the blocks that lie entirely above the diagonal; Full mode (cdist)
// keeps every block. Blocks are sorted by descending work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "mpcf/core/host_device.hpp"

namespace mpcf {

// An inclusive index range [first, last], as in the seed's notation.
struct Band {
  std::size_t first;
  std::size_t last;
  std::size_t size() const { return last - first + 1; }
  bool operator==(const Band& o) const { return first == o.first && last == o.last; }
};

// subdivide(3, 10) -> [0,2] [3,5] [6,8] [9,9]; subdivide(s, 0) -> {}.
std::vector<Band> subdivide(std::size_t blockSide, std::size_t n);

enum class BlockMode { LowerTriangle, Full };

// Which pairs of the plane are computed.
enum class TriangleSkipMode {
  None,                   // every (i, j)
  LowerTriangle,          // i >= j (kernels: diagonal included)
  LowerTriangleSkipDiag,  // i > j (distances)
};

// The one rule of which pairs are computed, given i - j. Every other test
// (host loops, kernels, writers, reductions) derives from it.
MPCF_HD bool pair_kept(std::int64_t iMinusJ, TriangleSkipMode skip) {
  switch (skip) {
    case TriangleSkipMode::LowerTriangle: return iMinusJ >= 0;
    case TriangleSkipMode::LowerTriangleSkipDiag: return iMinusJ > 0;
    case TriangleSkipMode::None:
    default: return true;
  }
}
MPCF_HD bool pair_kept(std::uint64_t i, std::uint64_t j, TriangleSkipMode skip) {
  return pair_kept(static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j), skip);
}
// Row i keeps exactly the columns j < kept_column_end(i, skip, nCols): every
// column (None), or those up to the diagonal, which is kept when
// pair_kept(i, i) holds.
MPCF_HD std::size_t kept_column_end(std::size_t i, TriangleSkipMode skip, std::size_t nCols) {
  if (skip == TriangleSkipMode::None) return nCols;
  const std::size_t end = pair_kept(std::int64_t(0), skip) ? i + 1 : i;
  return end < nCols ? end : nCols;
}

struct BlockInfo {
  Band rows;
  Band cols;
  std::size_t index = 0;  // position in the scheduler's sorted list
  std::size_t n_rows() const { return rows.size(); }
  std::size_t n_cols() const { return cols.size(); }
  std::uint64_t elements() const {
    return static_cast<std::uint64_t>(n_rows()) * static_cast<std::uint64_t>(n_cols());
  }
  // A block whose column range reaches the diagonal (only in LowerTriangle
  // mode, where row and column bands coincide).
  bool straddles_diagonal() const { return cols.last >= rows.first && cols.first <= rows.last; }
};

// floor(sqrt(x)), exact for every 64-bit x.
std::uint64_t integer_sqrt(std::uint64_t x);

// Number of (i, j) pairs of a block that the skip mode computes.
std::uint64_t computed_pairs(const BlockInfo& block, TriangleSkipMode mode);

class BlockScheduler {
 public:
  // The most bands either axis is cut into (the block side is raised to
  // ceil(n / kMaxBands) when the hints ask for smaller blocks).
  static constexpr std::uint64_t kMaxBands = 2048;

  struct Config {
    std::size_t nRows = 0;
    std::size_t nCols = 0;
    BlockMode mode = BlockMode::Full;
    std::uint64_t maxOutputElements = 0;  // output scalars the largest block may have
    std::uint64_t nSplitsHint = 1;        // how many blocks the budget is split into
    std::uint64_t minBlockSide = 0;       // occupancy floor (0: none)
  };

  explicit BlockScheduler(const Config& config);

  const Config& config() const { return config_; }
  std::size_t block_side() const { return blockSide_; }
  const std::vector<BlockInfo>& blocks() const { return blocks_; }
  std::size_t max_block_rows() const { return maxRows_; }
  std::size_t max_block_cols() const { return maxCols_; }
  std::uint64_t max_block_elements() const { return static_cast<std::uint64_t>(maxRows_) * maxCols_; }

 private:
  Config config_;
  std::size_t blockSide_ = 1;
  std::size_t maxRows_ = 0;
  std::size_t maxCols_ = 0;
  std::vector<BlockInfo> blocks_;
};

}  // namespace mpcf
