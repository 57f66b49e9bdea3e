#pragma once
// Numbers in check explanations: 6 significant digits, so a sentence stays readable.

#include <cstdio>
#include <string>

namespace reverify {

inline std::string number_text(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

}  // namespace reverify
