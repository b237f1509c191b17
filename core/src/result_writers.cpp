#include "mpcf/core/result_writers.hpp"

#include "mpcf/core/errors.hpp"

namespace mpcf {

std::uint64_t checked_product(std::uint64_t a, std::uint64_t b, const char* what) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) {
    std::ostringstream os;
    os << what << " has " << a << " x " << b
       << " elements, more than a 64-bit size can count; use smaller collections";
    throw InvalidArgument(os.str());
  }
  return a * b;
}

namespace {
// n (n + 1) / 2 or n (n - 1) / 2 without overflow in the intermediate.
std::uint64_t triangle(std::uint64_t n, bool withDiagonal) {
  if (n == 0) return 0;
  const std::uint64_t other = withDiagonal ? n + 1 : n - 1;
  if (withDiagonal && other == 0) return checked_product(n, n, "the symmetric result");
  // One of n, other is even: halve it first.
  return n % 2 == 0 ? checked_product(n / 2, other, "the symmetric result")
                    : checked_product(n, other / 2, "the symmetric result");
}
}  // namespace

std::uint64_t symmetric_result_size(std::uint64_t n, SymmetricLayout layout, bool withDiagonal) {
  switch (layout) {
    case SymmetricLayout::Dense:
      return checked_product(n, n, "the n x n result");
    case SymmetricLayout::Condensed:
      return triangle(n, false);
    case SymmetricLayout::PackedLower:
      return triangle(n, withDiagonal);
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
