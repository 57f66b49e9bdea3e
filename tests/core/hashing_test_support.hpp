#pragma once
// Helpers for the hashing tests (files and temp folders come from tests/support/): a
// safetensors file builder that writes exactly the header and data it is given, and last_line.

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/support/files.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"

namespace reverify::test {

// 8-byte little-endian length, the header text as given, then the data section.
inline std::string safetensors_bytes(const std::string& header, const std::string& data,
                                     std::uint64_t declared_length = UINT64_MAX) {
  const std::uint64_t length = declared_length == UINT64_MAX ? header.size() : declared_length;
  std::string out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  return out + header + data;
}

inline std::string last_line(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n')
    trimmed.pop_back();
  const auto newline = trimmed.rfind('\n');
  return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

}  // namespace reverify::test
