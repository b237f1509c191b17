#include "mpcf/core/result_writers.hpp"

namespace mpcf {

std::uint64_t symmetric_result_size(std::uint64_t n, SymmetricLayout layout, bool withDiagonal) {
  switch (layout) {
    case SymmetricLayout::Dense:
      return n * n;
    case SymmetricLayout::Condensed:
      return n == 0 ? 0 : n * (n - 1) / 2;
    case SymmetricLayout::PackedLower:
      return withDiagonal ? n * (n + 1) / 2 : (n == 0 ? 0 : n * (n - 1) / 2);
  }
  return 0;
}

namespace detail {
void throw_skipped_nonzero(std::size_t i, std::size_t j, double value) {
  std::ostringstream os;
  os << "internal error: block entry (" << i << ", " << j
     << ") lies outside the computed triangle but holds " << value << " instead of 0";
  throw std::logic_error(os.str());
}
}  // namespace detail

}  // namespace mpcf
