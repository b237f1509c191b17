// Numbers and dtypes in error messages: the shortest text that reads back to
// the same double ("0.1", "1e+300", "inf", "nan"), and the dtype's name.
#pragma once

#include <charconv>
#include <string>

namespace mpcf {

inline std::string number_text(double x) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

// "float32" or "float64": the name of the dtype T in every message.
template <typename T>
const char* dtype_name() {
  return sizeof(T) == 4 ? "float32" : "float64";
}

}  // namespace mpcf
