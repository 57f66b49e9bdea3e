#pragma once
// What every test reads from CTest's environment (tests/CMakeLists.txt sets REVERIFY_SOURCE_DIR,
// REVERIFY_BUILD_DIR, REVERIFY_CLI, REVERIFY_SERVICES_DIR) and whole-file reads and writes: the
// one file reader and writer the tests share.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace reverify::test {

// The variable's value; throws (failing the test case) when it is unset.
inline std::string env_or_throw(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr)
    throw std::runtime_error(std::string(name) + " is not set (run through ctest)");
  return value;
}

// The source tree (fixtures, scripts) and the build tree (binaries).
inline std::filesystem::path source_dir() {
  return env_or_throw("REVERIFY_SOURCE_DIR");
}
inline std::filesystem::path build_dir() {
  return env_or_throw("REVERIFY_BUILD_DIR");
}

// The whole file, byte for byte; empty when it does not exist (yet) or cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Writes `bytes` as the whole file, creating its folders; throws when the write fails.
inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  if (path.has_parent_path())
    std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path.string());
}

}  // namespace reverify::test
