#pragma once
// A job's own cgroups (process runner): the job's first process joins them before its first
// instruction, so every process it ever starts — setsid() and double forks included — is inside,
// is found and killed at the end, and is bounded in pids and memory.
//
// What the host offers is detected at run time (/proc/self/mountinfo, /proc/self/cgroup), once:
// - cgroup v2 (the unified hierarchy, wherever it is mounted): membership and cgroup.kill, and
//   pids.max / memory.max when those controllers are enabled (or can be) below the daemon's cgroup;
// - cgroup v1 pids and memory hierarchies for the controllers v2 does not have (a hybrid host:
//   v1 controllers and a controller-less v2 at /sys/fs/cgroup/unified, as on this project's VMs).
// Each job gets reverify-<rebuild id>-<random> below the daemon's own cgroup of each hierarchy it
// uses (a service's own limits still contain it), recorded in job.json so that a restarted daemon
// finds and removes it. A host without any usable hierarchy (no cgroup file system, or no write
// access, as under the shipped unit's ProtectControlGroups=yes) gives an empty JobCgroup: the
// runner then relies on the supervisor being the job's subreaper and on rlimits alone.

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"

namespace reverify {

struct CgroupLimits {
  std::uint64_t max_pids = 0;  // pids.max (tasks, threads included); 0 = none
  std::uint64_t memory_bytes =
      0;  // memory limit, swap included where the kernel counts it; 0 = none
};

// One cgroup folder of a job, in the unified hierarchy (version 2) or a v1 controller's.
struct CgroupDir {
  std::filesystem::path path;
  int version = 2;
  bool pids = false;    // the job's pids are counted (and limited) here
  bool memory = false;  // the job's memory is counted (and limited) here
};

// What the kernel counted in a job's cgroups.
struct CgroupEvents {
  std::uint64_t forks_refused = 0;  // forks refused at pids.max (pids.events "max")
  // OOMs of the job's own limit: v2 memory.events "oom"; v1 keeps no such count, so its OOM
  // kills once the job's peak usage reached the limit. 0 without a limit.
  std::uint64_t memory_limit_ooms = 0;
  std::uint64_t oom_kills = 0;  // the job's processes the OOM killer ended, for any OOM
};

class JobCgroup {
 public:
  JobCgroup() = default;
  explicit JobCgroup(std::vector<CgroupDir> dirs) : dirs_(std::move(dirs)) {}

  // Creates the cgroups named `name` that the host offers (see above) and sets `limits` in them.
  // An empty JobCgroup when it offers none; an error (provision) naming the file when a cgroup
  // was made but its limit could not be set (nothing is left behind then).
  static Result<JobCgroup> create(const std::string& name, const CgroupLimits& limits);
  // Why the host offers no cgroup, or only some controllers ("" when v2 membership, pids and
  // memory are all there): said in the log tail of a job whose bounds were not all enforced
  // (process_runner.cpp) and by bench/process_start_bench.
  static std::string host_notes();

  bool empty() const { return dirs_.empty(); }
  const std::vector<CgroupDir>& dirs() const { return dirs_; }
  bool counts_pids() const;
  bool counts_memory() const;
  // The job's folder in the unified hierarchy ("" when none), and its v1 folders.
  std::filesystem::path v2_dir() const;
  std::vector<std::filesystem::path> v1_dirs() const;
  // Every process in the job's cgroups now.
  std::vector<pid_t> members() const;
  // SIGKILL to every member at once, forks in flight included, through v2's cgroup.kill; false
  // where there is none (v1 only, or a kernel before 5.14): the members are then killed one by
  // one (JobProcesses).
  bool kill() const;
  CgroupEvents events() const;
  // Removes the folders once empty (waits up to a second for the last exits); idempotent.
  void remove() const;

  nlohmann::json to_json() const;
  static JobCgroup from_json(const nlohmann::json& dirs);

 private:
  std::vector<CgroupDir> dirs_;  // the first one lists the members (v2 when there is one)
};

}  // namespace reverify
