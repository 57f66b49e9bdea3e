#pragma once
// A folder of the test's own under the system temp dir, removed with everything in it at the end.
// Header-only test support.

#include <unistd.h>

#include <filesystem>
#include <string>

namespace reverify::testing {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix)
      : path(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace reverify::testing
