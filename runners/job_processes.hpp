#pragma once
// The processes of one running job (process runner), signalled and killed as one: the members of
// its cgroups (job_cgroup.hpp), or, on a host without cgroups, every descendant of its supervisor.
// The supervisor is the job's child subreaper (process_spawn.hpp), so a process the job orphans —
// by setsid() and a double fork, say — is reparented to it, never to init: while the supervisor
// runs, its descendants are exactly the job's processes.

#include <sys/types.h>

#include <chrono>
#include <vector>

#include "runners/job_cgroup.hpp"
#include "runners/process_spawn.hpp"

namespace reverify {

// Every process below `root` in the process tree now (from /proc), not `root` itself.
std::vector<pid_t> descendants_of(pid_t root);

class JobProcesses {
 public:
  JobProcesses(ProcessIdentity supervisor, JobCgroup cgroup)
      : supervisor_(supervisor), cgroup_(std::move(cgroup)) {}

  // The job's processes now (never the supervisor).
  std::vector<pid_t> list() const;
  // Sends `sig` to each of them (SIGTERM at a timeout: setsid() does not take one out of reach).
  void signal(int sig) const;
  // SIGKILL until none is left, for up to `limit`; true when none is.
  bool kill_all(std::chrono::milliseconds limit) const;

 private:
  ProcessIdentity supervisor_;
  JobCgroup cgroup_;
};

}  // namespace reverify
