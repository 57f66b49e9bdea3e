#pragma once
// The processes of one running job (process runner), signalled and killed as one: the members of
// its cgroups (job_cgroup.hpp), or, on a host without cgroups, every descendant of its supervisor.
// The supervisor is the job's child subreaper (process_spawn.hpp), so a process the job orphans —
// by setsid() and a double fork, say — is reparented to it, never to init: while the supervisor
// runs, its descendants are exactly the job's processes. In a sandbox (job_sandbox.hpp) the first
// two of them are bubblewrap's: its monitor and the PID namespace's init, which forward no
// signal; a SIGTERM meant for the job skips them.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "runners/job_cgroup.hpp"
#include "runners/process_spawn.hpp"

namespace reverify {

// Every process below `root` in the process tree now (from /proc), not `root` itself.
std::vector<pid_t> descendants_of(pid_t root);

// The live processes (not zombies) whose environment holds `entry` ("NAME=value"), from
// /proc/<pid>/environ: those of this uid, or every one for root. A job's descendants inherit its
// environment whatever session or process group they move to, unless they clear it.
std::vector<pid_t> processes_with_environment(const std::string& entry);

class JobProcesses {
 public:
  JobProcesses(ProcessIdentity supervisor, JobCgroup cgroup, bool sandboxed)
      : supervisor_(supervisor), cgroup_(std::move(cgroup)), sandboxed_(sandboxed) {}

  // The job's processes now (never the supervisor).
  std::vector<pid_t> list() const;
  // Sends `sig` to each of them (SIGTERM at a timeout: setsid() does not take one out of reach),
  // bubblewrap's two processes excepted unless it is SIGKILL.
  void signal(int sig) const;
  // SIGKILL until none is left, for up to `limit`; true when none is.
  bool kill_all(std::chrono::milliseconds limit) const;

 private:
  ProcessIdentity supervisor_;
  JobCgroup cgroup_;
  bool sandboxed_ = false;
};

}  // namespace reverify
