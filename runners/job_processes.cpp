#include "runners/job_processes.hpp"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

namespace reverify {
namespace {

// Calls visit(pid, stat) for every live process under /proc. A zombie is dead already: only its
// parent's reaping is left.
template <class Visit>
void for_each_live_process(Visit visit) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    pid_t pid = 0;
    const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (error != std::errc() || end != name.data() + name.size())
      continue;
    const auto stat = read_proc_stat(pid);
    if (stat && stat->state != 'Z' && stat->state != 'X')
      visit(pid, *stat);
  }
}

// pid -> parent pid of every process, from /proc/<pid>/stat (field 4).
std::multimap<pid_t, pid_t> children_by_parent() {
  std::multimap<pid_t, pid_t> children;
  for_each_live_process(
      [&](pid_t pid, const ProcStat& stat) { children.emplace(stat.parent, pid); });
  return children;
}

// Every process below `root` in `children`, not `root` itself.
std::vector<pid_t> descendants_in(const std::multimap<pid_t, pid_t>& children, pid_t root) {
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

// bubblewrap's monitor (the supervisor's child) and the PID namespace's init below it.
std::vector<pid_t> sandbox_processes(const std::multimap<pid_t, pid_t>& children,
                                     pid_t supervisor) {
  std::vector<pid_t> found;
  const auto [first, last] = children.equal_range(supervisor);
  for (auto monitor = first; monitor != last; ++monitor) {
    found.push_back(monitor->second);
    const auto [init_first, init_last] = children.equal_range(monitor->second);
    for (auto init = init_first; init != init_last; ++init)
      found.push_back(init->second);
  }
  return found;
}

}  // namespace

std::vector<pid_t> descendants_of(pid_t root) {
  return descendants_in(children_by_parent(), root);
}

std::vector<pid_t> processes_with_environment(const std::string& entry) {
  std::vector<pid_t> found;
  for_each_live_process([&](pid_t pid, const ProcStat&) {
    std::ifstream environ("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
    for (std::string variable; std::getline(environ, variable, '\0');) {
      if (variable == entry) {
        found.push_back(pid);
        break;
      }
    }
  });
  return found;
}

std::vector<pid_t> JobProcesses::list() const {
  if (!cgroup_.empty())
    return cgroup_.members();
  return is_alive(supervisor_) ? descendants_of(supervisor_.pid) : std::vector<pid_t>();
}

void JobProcesses::signal(int sig) const {
  std::vector<pid_t> skipped;
  if (sandboxed_ && sig != SIGKILL && is_alive(supervisor_))
    skipped = sandbox_processes(children_by_parent(), supervisor_.pid);
  for (pid_t pid : list()) {
    if (std::find(skipped.begin(), skipped.end(), pid) == skipped.end())
      ::kill(pid, sig);
  }
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
