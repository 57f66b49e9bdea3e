#pragma once
// Helpers for the hashing tests: the shared temporary folder, file writers, and a
// safetensors file builder that writes exactly the header and data it is given.

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace reverify::test {

using testing::TempDir;

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// 8-byte little-endian length, the header text as given, then the data section.
inline std::string safetensors_bytes(const std::string& header, const std::string& data,
                                     std::uint64_t declared_length = UINT64_MAX) {
  const std::uint64_t length = declared_length == UINT64_MAX ? header.size() : declared_length;
  std::string out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  return out + header + data;
}

}  // namespace reverify::test

#include <spawn.h>
#include <sys/wait.h>

#include <vector>

extern char** environ;

namespace reverify::test {

struct Ran {
  int exit_code = -1;
  std::string out, err;
};

// Runs argv (no shell) with stdout and stderr captured through files in `scratch`.
inline Ran run_program(const std::vector<std::string>& argv, const std::filesystem::path& scratch) {
  const auto out_path = scratch / ".stdout", err_path = scratch / ".stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw std::runtime_error("cannot start " + argv[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  Ran ran;
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ran.out = read_file(out_path);
  ran.err = read_file(err_path);
  std::filesystem::remove(out_path);
  std::filesystem::remove(err_path);
  return ran;
}

inline std::string env_or_throw(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr)
    throw std::runtime_error(std::string(name) + " is not set (run through ctest)");
  return value;
}

inline std::string last_line(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n')
    trimmed.pop_back();
  const auto newline = trimmed.rfind('\n');
  return newline == std::string::npos ? trimmed : trimmed.substr(newline + 1);
}

}  // namespace reverify::test
