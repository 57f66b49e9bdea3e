// Searches in the text a check, an error, a page or a command's output produced, shared by the
// tests (the unit and the integration tests of a folder each build one executable, in CI as a
// unity build: tests/CMakeLists.txt).
#pragma once

#include <string>

namespace reverify::test {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A whole line of `message` reads `line`.
inline bool has_line(const std::string& message, const std::string& line) {
  return ("\n" + message + "\n").find("\n" + line + "\n") != std::string::npos;
}

}  // namespace reverify::test
