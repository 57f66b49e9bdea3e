#include "core/hashing_pool.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>

namespace reverify {

Status run_parallel(std::size_t count, unsigned threads,
                    const std::function<Status(std::size_t)>& task) {
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
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
