#include "core/hashing_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace reverify {
namespace {

// The CPU time per period cgroup v2 grants this process ("cpu.max": "QUOTA PERIOD" or
// "max PERIOD"), in cores, rounded up; nullopt when unlimited or unknown.
std::optional<unsigned> cgroup_cores() {
  std::ifstream membership("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(membership, line))
    if (line.rfind("0::", 0) == 0)
      path = line.substr(3);
  if (path.empty())
    return std::nullopt;
  std::ifstream limit("/sys/fs/cgroup" + path + "/cpu.max");
  std::string quota;
  double period = 0;
  if (!(limit >> quota >> period) || quota == "max" || period <= 0)
    return std::nullopt;
  const double cores = std::strtod(quota.c_str(), nullptr) / period;
  if (!(cores > 0))
    return std::nullopt;
  return static_cast<unsigned>(std::ceil(cores));
}

}  // namespace

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  unsigned cores = sched_getaffinity(0, sizeof set, &set) == 0
                       ? static_cast<unsigned>(CPU_COUNT(&set))
                       : std::thread::hardware_concurrency();
  if (const auto granted = cgroup_cores())
    cores = std::min(cores, *granted);
  return std::max(1u, cores);
}

Status run_parallel(std::size_t count, unsigned threads,
                    const std::function<Status(std::size_t)>& task) {
  if (threads == 0)
    threads = usable_cores();
  const auto workers = static_cast<unsigned>(std::min<std::size_t>(threads, count));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::optional<Error> first_error;
  auto work = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count)
        return;
      Status status = task(i);
      if (!status) {
        std::lock_guard lock(error_mutex);
        if (!first_error)
          first_error = status.error();
        failed.store(true, std::memory_order_relaxed);
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 1; w < workers; ++w)
      pool.emplace_back(work);
    work();  // the calling thread is one of the workers
  }
  if (first_error)
    return *first_error;
  return Status::success();
}

ProgressTracker::ProgressTracker(ProgressFn fn, std::uint64_t files_total,
                                 std::uint64_t bytes_total)
    : fn_(std::move(fn)) {
  state_.files_total = files_total;
  state_.bytes_total = bytes_total;
}

void ProgressTracker::add_bytes(std::uint64_t bytes) {
  if (!fn_)
    return;
  std::lock_guard lock(mutex_);
  state_.bytes_done += bytes;
  fn_(state_);
}

void ProgressTracker::file_done() {
  if (!fn_)
    return;
  std::lock_guard lock(mutex_);
  ++state_.files_done;
  fn_(state_);
}

}  // namespace reverify
