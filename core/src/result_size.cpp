#include "mpcf/core/result_size.hpp"

#include <unistd.h>

#include <cstdio>
#include <limits>

namespace mpcf {

namespace {

std::uint64_t physical_memory_bytes() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  const auto p = static_cast<std::uint64_t>(pages), s = static_cast<std::uint64_t>(page);
  return p > std::numeric_limits<std::uint64_t>::max() / s ? std::numeric_limits<std::uint64_t>::max()
                                                           : p * s;
#else
  return 0;
#endif
}

}  // namespace

ResultLimits result_limits(std::uint64_t bytes_per_function) {
  ResultLimits r;
  r.in_64_bits = std::numeric_limits<std::uint64_t>::max() / bytes_per_function;
  r.memory_bytes = physical_memory_bytes();
  r.in_memory = r.memory_bytes == 0 ? r.in_64_bits : r.memory_bytes / bytes_per_function;
  return r;
}

std::string bytes_text(std::uint64_t bytes) {
  if (bytes < 1000000000) return std::to_string(bytes) + " bytes";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}

}  // namespace mpcf
