#pragma once
// Finding what a test's jobs left running: every process whose environment holds an entry the
// test put in the job's environment (a job's descendants inherit it, whatever session or process
// group they moved to), found under /proc by the runners' own search
// (runners/job_processes.hpp). Needs root to read other users' environments.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "runners/job_processes.hpp"

namespace reverify::test {

using reverify::processes_with_environment;

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
