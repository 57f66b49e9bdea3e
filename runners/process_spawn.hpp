#pragma once
// Starting a job as its own process group in a way that survives a daemon restart.
//
// The group leader is a small supervisor forked inside Boost.Process's child (before execve): it
// forks the job, ignores SIGTERM (which is meant for the job), copies the job's stdout and stderr
// from a pipe into job.log, capped on disk (job_log.hpp: head, TRUNCATED marker, latest output),
// and once the job ended writes its wait status to a file. So the exit status is known even when
// the daemon that started the job is gone and the job was reparented, and a restarted daemon finds
// the group again by the pid and start time recorded in the scratch folder.

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
  // "exit N" or "signal N", then "ms M" (the job's run time, fork to exit, on the monotonic
  // clock), written by the supervisor
  std::filesystem::path status_file;
};

// Starts the supervisor + job; returns the supervisor, whose pid is also the process group id.
Result<ProcessIdentity> spawn_supervised(const SpawnRequest& request);

// The job's exit status from the status file: N for "exit N", 128 + N for "signal N".
std::optional<int> read_exit_status(const std::filesystem::path& status_file);
// The job's run time in seconds (millisecond resolution) from the status file, when written.
std::optional<double> read_job_seconds(const std::filesystem::path& status_file);

// argv[0] without a '/' is looked up on path_env only (not the daemon's PATH); with one, it is
// relative to workdir. provision error naming what was searched when it is not an executable file.
Result<std::filesystem::path> find_executable(const std::string& argv0, const std::string& path_env,
                                              const std::filesystem::path& workdir);

// Reaps the supervisor when it is this process's child; no-op otherwise (after a restart).
void reap_if_child(pid_t pid);

}  // namespace reverify
