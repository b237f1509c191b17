// Numbers in error messages: the shortest text that reads back to the same
// double ("0.1", "1e+300", "inf", "nan").
#pragma once

#include <charconv>
#include <string>

namespace mpcf {

inline std::string number_text(double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

}  // namespace mpcf
