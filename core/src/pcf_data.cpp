#include "mpcf/core/pcf_data.hpp"

namespace mpcf {

void validate_offsets(const std::uint64_t* offsets, std::uint64_t n) {
  if (offsets[0] != 0) {
    std::ostringstream os;
    os << "offsets[0] is " << offsets[0] << "; it must be 0";
    throw InvalidArgument(os.str());
  }
  for (std::uint64_t i = 0; i < n; ++i) {
    if (offsets[i + 1] < offsets[i]) {
      std::ostringstream os;
      os << "offsets[" << i + 1 << "] = " << offsets[i + 1] << " is smaller than offsets[" << i
         << "] = " << offsets[i] << "; offsets must be non-decreasing";
      throw InvalidArgument(os.str());
    }
    if (offsets[i + 1] == offsets[i]) {
      std::ostringstream os;
      os << "PCF " << i << " has no breakpoints (m = 0, offsets[" << i << "] == offsets["
         << i + 1 << "] == " << offsets[i] << "); every PCF needs at least one";
      throw InvalidPcf(os.str(), ErrorLocation::at_function(i));
    }
    if (offsets[i + 1] - offsets[i] > 0xffffffffull) {
      std::ostringstream os;
      os << "PCF " << i << " has " << offsets[i + 1] - offsets[i]
         << " breakpoints; at most 4294967295 are supported per function";
      throw InvalidPcf(os.str(), ErrorLocation::at_function(i));
    }
  }
}

}  // namespace mpcf
