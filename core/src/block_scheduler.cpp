#include "mpcf/core/block_scheduler.hpp"

#include <algorithm>
#include <cmath>

namespace mpcf {

std::vector<Band> subdivide(std::size_t blockSide, std::size_t n) {
  std::vector<Band> bands;
  if (n == 0) return bands;
  if (blockSide == 0) blockSide = 1;
  const std::size_t full = n / blockSide;
  if (full == 0) {
    bands.push_back({0, n - 1});
    return bands;
  }
  for (std::size_t k = 0; k < full; ++k) bands.push_back({k * blockSide, (k + 1) * blockSide - 1});
  // The remainder becomes one more (shorter) band.
  if (full * blockSide < n) bands.push_back({full * blockSide, n - 1});
  return bands;
}

std::uint64_t computed_pairs(const BlockInfo& b, TriangleSkipMode mode) {
  if (mode == TriangleSkipMode::None) return b.elements();
  std::uint64_t count = 0;
  for (std::size_t i = b.rows.first; i <= b.rows.last; ++i) {
    // Columns [cols.first, end) of the block are kept in row i.
    const std::size_t end = kept_column_end(i, mode, b.cols.last + 1);
    if (end > b.cols.first) count += end - b.cols.first;
  }
  return count;
}

std::uint64_t integer_sqrt(std::uint64_t x) {
  // The root of a 64-bit value is below 2^32, so r * r never overflows.
  constexpr std::uint64_t kMax = 0xffffffffull;
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<long double>(x)));
  r = std::min(r, kMax);
  // Correct the rounding of sqrt for large values.
  while (r > 0 && r * r > x) --r;
  while (r < kMax && (r + 1) * (r + 1) <= x) ++r;
  return r;
}

BlockScheduler::BlockScheduler(const Config& config) : config_(config) {
  const std::size_t dim = std::max(config.nRows, config.nCols);
  const std::uint64_t hint = config.nSplitsHint ? config.nSplitsHint : 1;
  const std::uint64_t perBlock = config.maxOutputElements / hint;
  std::uint64_t side = integer_sqrt(perBlock);
  side = std::max<std::uint64_t>(side, config.minBlockSide);
  // At most kMaxBands bands per axis, whatever the hints: the block list
  // stays small (tiny blocks from a huge split hint would otherwise need
  // n^2 entries).
  side = std::max<std::uint64_t>(side, (dim + kMaxBands - 1) / kMaxBands);
  side = std::clamp<std::uint64_t>(side, 1, std::max<std::size_t>(dim, 1));
  blockSide_ = static_cast<std::size_t>(side);

  const auto rowBands = subdivide(blockSide_, config.nRows);
  const auto colBands = subdivide(blockSide_, config.nCols);
  for (const Band& r : rowBands) {
    for (const Band& c : colBands) {
      if (config.mode == BlockMode::LowerTriangle && c.first > r.last) continue;
      BlockInfo b;
      b.rows = r;
      b.cols = c;
      blocks_.push_back(b);
      maxRows_ = std::max(maxRows_, r.size());
      maxCols_ = std::max(maxCols_, c.size());
    }
  }
  std::stable_sort(blocks_.begin(), blocks_.end(), [](const BlockInfo& a, const BlockInfo& b) {
    return a.elements() > b.elements();
  });
  for (std::size_t k = 0; k < blocks_.size(); ++k) blocks_[k].index = k;
}

}  // namespace mpcf
