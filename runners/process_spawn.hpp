#pragma once
// Starting a job as its own process group in a way that survives a daemon restart.
//
// The group leader is a small supervisor forked inside Boost.Process's child (before execve): it
// forks the job, ignores SIGTERM (which is meant for the job), copies the job's stdout and stderr
// from a pipe into job.log, capped on disk (job_log.hpp: head, TRUNCATED marker, latest output),
// and once the job ended writes its wait status to a file. So the exit status is known even when
// the daemon that started the job is gone and the job was reparented, and a restarted daemon finds
// the group again by the pid and start time recorded in the scratch folder.
//
// Nothing the job starts outlives it: the supervisor is the job's child subreaper
// (PR_SET_CHILD_SUBREAPER), so every process the job orphans — after setsid() and a double fork
// too — is reparented to it instead of init; it reaps them as they end, and once the job itself
// ended it SIGKILLs whatever is left below it before it reports the job's status. Before its
// first instruction the job joins its cgroups (job_cgroup.hpp), takes its rlimits (open files,
// processes) and an oom_score_adj of 1000 (the host's OOM killer takes the job before the daemon).

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace reverify {

// A process, told apart from a later process with a reused pid by its start time.
struct ProcessIdentity {
  pid_t pid = -1;
  std::uint64_t start_ticks = 0;  // /proc/<pid>/stat field 22
};

struct ProcStat {
  char state = '?';  // R, S, D, Z, ...
  pid_t parent = 0;
  std::uint64_t start_ticks = 0;
};
// From /proc/<pid>/stat; nullopt when no such process (a zombie still has one).
std::optional<ProcStat> read_proc_stat(pid_t pid);
// Running (not a zombie) and the same process as recorded.
bool is_alive(const ProcessIdentity& process);

struct SpawnRequest {
  std::filesystem::path executable;        // absolute
  std::vector<std::string> args;           // argv[1..]
  std::map<std::string, std::string> env;  // the whole environment
  std::filesystem::path working_dir;
  std::filesystem::path log_file;  // stdout and stderr, created afresh, capped (job_log.hpp)
  std::uint64_t log_cap_bytes = 16 * 1024 * 1024;  // >= kMinJobLogCapBytes
  // What the supervisor reports (SupervisorReport): "word number" lines. Space for it is
  // reserved before the job starts, so a full disk cannot take the job's status away.
  std::filesystem::path status_file;
  // Where the supervisor saves the job's latest output, kept in memory (kJobTailBytes), when
  // job.log could not be written; reserved before the job starts too.
  std::filesystem::path tail_file;
  // The job's cgroups (job_cgroup.hpp), "" / none when it has none: it is forked straight into
  // its v2 one (clone3 CLONE_INTO_CGROUP; it joins through cgroup.procs where the kernel cannot)
  // and its first process joins the v1 ones before execve; one it cannot join stops it there
  // (SupervisorReport::setup_errno).
  std::filesystem::path cgroup_v2;
  std::vector<std::filesystem::path> cgroups_v1;
  std::uint64_t max_open_files = 0;  // RLIMIT_NOFILE of the job; 0 = inherited
  std::uint64_t max_processes = 0;   // RLIMIT_NPROC (binds a non-root uid only); 0 = inherited
  // Descriptors of the caller that the job keeps across execve, at the same numbers (the
  // sandbox's status file); every other one is closed there.
  std::vector<int> inherited_fds;
};

// Starts the supervisor + job; returns the supervisor, whose pid is also the process group id.
// error infra when the status or tail file cannot be reserved (a full disk).
Result<ProcessIdentity> spawn_supervised(const SpawnRequest& request);

// What the supervisor wrote in the status file.
struct SupervisorReport {
  std::optional<int> exit_status;      // "exit N" -> N, "signal N" -> 128 + N: the job ended
  std::optional<double> job_seconds;   // "ms M": fork to exit, monotonic clock
  std::uint64_t leftovers_killed = 0;  // "leftovers N": distinct processes still running below
                                       // the supervisor once the job had ended, killed
  std::optional<int> log_errno;        // "log_error E": the first job.log write the kernel refused
  std::uint64_t log_bytes_before_error = 0;  // "log_written N": job.log's size at that write
  std::uint64_t tail_bytes = 0;              // "tail N": bytes saved in the tail file
  std::optional<int> setup_errno;  // "setup E": the job could not join a cgroup; it never ran
};
SupervisorReport read_supervisor_report(const std::filesystem::path& status_file);

// argv[0] without a '/' is looked up on path_env only (not the daemon's PATH); with one, it is
// relative to workdir. provision error naming what was searched when it is not an executable file.
Result<std::filesystem::path> find_executable(const std::string& argv0, const std::string& path_env,
                                              const std::filesystem::path& workdir);

// Reaps the supervisor when it is this process's child; no-op otherwise (after a restart).
void reap_if_child(pid_t pid);

}  // namespace reverify
