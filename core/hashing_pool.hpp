#pragma once
// Parallel execution and progress accounting shared by the folder and safetensors hashers.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>

#include "core/hashing.hpp"

namespace reverify {

// The cores this process may use, read at run time: the CPUs of its affinity mask, fewer when its
// cgroup (v2 cpu.max) grants less CPU time than that, at least 1.
unsigned usable_cores();

// Runs task(i) for every i in [0, count) on up to `threads` threads (0 = usable_cores()), handing
// out indices in increasing order (callers put the largest work first so no core idles at the end).
// After a task fails no new index is handed out; the first failure is returned.
Status run_parallel(std::size_t count, unsigned threads,
                    const std::function<Status(std::size_t)>& task);

// Accumulates progress from worker threads and calls the user's callback, one call at a time.
class ProgressTracker {
 public:
  ProgressTracker(ProgressFn fn, std::uint64_t files_total, std::uint64_t bytes_total);
  void add_bytes(std::uint64_t bytes);
  void file_done();
  bool enabled() const { return static_cast<bool>(fn_); }

 private:
  ProgressFn fn_;
  std::mutex mutex_;
  HashProgress state_;
};

}  // namespace reverify
