#include "runners/job_processes.hpp"

#include <signal.h>

#include <charconv>
#include <filesystem>
#include <map>
#include <thread>

namespace reverify {
namespace {

// pid -> parent pid of every process, from /proc/<pid>/stat (field 4).
std::multimap<pid_t, pid_t> children_by_parent() {
  std::multimap<pid_t, pid_t> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (error != std::errc() || end != name.data() + name.size())
      continue;
    // A zombie is dead already: only its parent's reaping is left.
    const auto stat = read_proc_stat(pid);
    if (stat && stat->state != 'Z' && stat->state != 'X')
      children.emplace(stat->parent, pid);
  }
  return children;
}

}  // namespace

std::vector<pid_t> descendants_of(pid_t root) {
  const auto children = children_by_parent();
  std::vector<pid_t> found;
  std::vector<pid_t> parents = {root};
  while (!parents.empty()) {
    const pid_t parent = parents.back();
    parents.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      found.push_back(it->second);
      parents.push_back(it->second);
    }
  }
  return found;
}

std::vector<pid_t> JobProcesses::list() const {
  if (!cgroup_.empty())
    return cgroup_.members();
  return is_alive(supervisor_) ? descendants_of(supervisor_.pid) : std::vector<pid_t>();
}

void JobProcesses::signal(int sig) const {
  for (pid_t pid : list())
    ::kill(pid, sig);
}

bool JobProcesses::kill_all(std::chrono::milliseconds limit) const {
  const bool all_at_once = cgroup_.kill();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = list();
    if (left.empty())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    if (!all_at_once) {
      // One pass kills every process listed; a child forked meanwhile is in the next listing
      // (a pids limit bounds how many there can be). Without a cgroup, SIGSTOP first: a stopped
      // process forks no more while the rest of the tree is listed.
      if (cgroup_.empty()) {
        for (pid_t pid : left)
          ::kill(pid, SIGSTOP);
      }
      for (pid_t pid : cgroup_.empty() ? list() : left)
        ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace reverify
