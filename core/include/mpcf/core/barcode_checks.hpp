// What the conversions of barcodes (tda.cpp: Betti curves, stable ranks,
// accumulated persistence; plf_tda.cpp: landscapes, silhouettes) and the
// pointwise operations share: whether a double fits the dtype, and the
// checks and messages of CSR barcodes and their bars ("barcode i, bar j
// (birth b, death d): ..."). The dtype's name is number_text.hpp's
// dtype_name. Internal to core.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace mpcf::detail {

// x is finite once rounded to T.
template <typename T>
bool representable(double x) {
  return std::isfinite(static_cast<T>(x));
}

// "barcode i, bar j (birth b, death d): " -- the start of every bar error.
std::string bar_prefix(std::uint64_t barcode, std::uint64_t bar, double birth, double death);

// Throws InvalidArgument: bar_prefix(...) + what.
[[noreturn]] void bad_bar(std::uint64_t barcode, std::uint64_t bar, double birth, double death,
                          const std::string& what);

// offsets[0] == 0, non-decreasing, offsets[n] not absurdly large; throws
// InvalidArgument naming the offending entry.
void validate_barcode_offsets(std::uint64_t n, const std::uint64_t* offsets);

}  // namespace mpcf::detail
