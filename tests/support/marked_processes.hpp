#pragma once
// Finding what a test's jobs left running: every process whose environment holds an entry the
// test put in the job's environment (a job's descendants inherit it, whatever session or process
// group they moved to), found under /proc. Needs root to read other users' environments.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace reverify::test {

// Pids of the live processes (not zombies) whose environment holds `entry` ("NAME=value").
inline std::vector<pid_t> processes_with_environment(const std::string& entry) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& dir : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = dir.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream stat(dir.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    if (paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] == 'Z')
      continue;
    std::ifstream environ(dir.path() / "environ", std::ios::binary);
    std::string env((std::istreambuf_iterator<char>(environ)), std::istreambuf_iterator<char>());
    for (std::size_t start = 0; start < env.size();) {
      const auto end = env.find('\0', start);
      if (env.compare(start, (end == std::string::npos ? env.size() : end) - start, entry) == 0) {
        found.push_back(static_cast<pid_t>(std::stol(name)));
        break;
      }
      if (end == std::string::npos)
        break;
      start = end + 1;
    }
  }
  return found;
}

// Whether every process with `entry` is gone within 5 s (a SIGKILL takes effect asynchronously).
inline bool none_left_with_environment(const std::string& entry) {
  for (int i = 0; i < 250; ++i) {
    if (processes_with_environment(entry).empty())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return processes_with_environment(entry).empty();
}

}  // namespace reverify::test
