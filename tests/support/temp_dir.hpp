#pragma once
// A fresh folder of the test's own under the system temp dir (mkdtemp, so tests running at the
// same time never share one), removed with everything in it when it goes out of scope.

#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace reverify::test {

struct TempDir {
  explicit TempDir(const std::string& prefix = "reverify-test-") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed for " + pattern);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `text` to `name` (folders created as needed) and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto file = path / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

  std::filesystem::path path;
};

}  // namespace reverify::test
