#pragma once
// The runner section of reverify.yaml as a typed struct with defaults (the daemon's config loader
// maps YAML onto it; make_runner() in runner_factory.hpp builds a Runner from it).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "runners/job_sandbox.hpp"
#include "runners/kubernetes_config.hpp"
#include "runners/runner_kind.hpp"
#include "runners/slurm_config.hpp"

namespace reverify {

// The space a job needs (runners/space_watch.hpp): its own scratch folder and the scratch root
// are always watched; `paths` adds more (the daemon's state_dir). A file system with less than
// the minimum free, or read-only, refuses a job before it starts (error:infra).
struct SpaceWatchConfig {
  std::vector<std::filesystem::path> paths;
  std::uint64_t min_free_bytes = 64ULL * 1024 * 1024;
  std::uint64_t min_free_inodes = 1000;

  bool operator==(const SpaceWatchConfig&) const = default;
};

struct ProcessRunnerConfig {
  // PATH given to the job, and searched for an entrypoint's argv[0] without a '/' ("python3").
  // /usr/bin first: Debian's numpy belongs to /usr/bin/python3.
  std::string path_env = "/usr/bin:/bin";
  // Scratch folders live in scratch_root/<rebuild id> when RebuildSpec::work_dir is empty; that is
  // also where find_running() looks after a restart.
  std::filesystem::path scratch_root = "/var/lib/reverify/scratch";
  std::size_t log_cap_bytes = 1024 * 1024;  // log tail kept in JobExit::log_tail
  // job.log on disk (stdout + stderr): its first quarter and the latest output are kept, the cut
  // between them marked TRUNCATED (job_log.hpp). At least 64 KiB.
  std::uint64_t job_log_cap_bytes = 16 * 1024 * 1024;
  std::chrono::milliseconds kill_grace{10000};   // SIGTERM -> SIGKILL
  std::chrono::milliseconds poll_interval{100};  // how often wait() looks at the job and its log
  // Each job in cgroups of its own where the host allows it (runners/job_cgroup.hpp): all of its
  // processes found and killed at the end, its pids and memory bounded. false: only the
  // supervisor as the job's subreaper and rlimits (process_spawn.hpp).
  bool cgroups = true;
  std::uint64_t max_pids = 4096;  // tasks (threads included) in the job's pids cgroup; 0 = none
  std::uint64_t max_open_files = 65536;  // RLIMIT_NOFILE of the job; 0 = the daemon's own
  std::uint64_t memory_bytes = 0;        // the job's memory cgroup limit (no swap); 0 = none
  SpaceWatchConfig space;
  // How the job is kept from the verifier (job_sandbox.hpp); unused with trust_job_code.
  SandboxConfig sandbox;

  bool operator==(const ProcessRunnerConfig&) const = default;
};

struct DockerRunnerConfig {
  std::string socket = "/var/run/docker.sock";  // the Engine API's unix socket
  // HostConfig.NetworkMode of a container whose model declares network (models.<name>.network:
  // allow); every other container gets "none". "host" would show such a job the daemon's own
  // loopback API.
  std::string network_mode = "bridge";
  std::int64_t memory_bytes = 0;  // HostConfig.Memory; 0 = no limit
  std::int64_t nano_cpus = 0;     // HostConfig.NanoCpus (1e9 = one CPU); 0 = no limit
  std::int64_t max_pids = 4096;   // HostConfig.PidsLimit; 0 = no limit
  // HostConfig.Ulimits nofile (soft = hard); 0 = the engine's own. A container cannot go above
  // the engine's hard limit (it then fails to start), so the engine's is the default.
  std::int64_t max_open_files = 0;
  // HostConfig.ReadonlyRootfs: the job writes only its out folder and the tmpfs folders below.
  bool read_only_rootfs = true;
  std::vector<std::string> tmpfs = {"/tmp"};  // HostConfig.Tmpfs, each of tmpfs_bytes (memory)
  std::int64_t tmpfs_bytes = 1024LL * 1024 * 1024;
  // Container user "uid:gid"; empty = the daemon's own ids, so the out folder stays the daemon's.
  std::string user;
  // Host-side scratch (bind-mounted in/ and out/ folders): scratch_root/<rebuild id> when
  // RebuildSpec::work_dir is empty.
  std::filesystem::path scratch_root = "/var/lib/reverify/scratch";
  std::size_t log_cap_bytes = 1024 * 1024;
  std::chrono::seconds kill_grace{10};      // POST /containers/{id}/stop?t=
  std::chrono::seconds pull_timeout{1800};  // whole image pull
  // How long wait() keeps trying an engine that stopped answering before error:runner-lost.
  std::chrono::milliseconds reconnect_grace{30000};
  std::string min_api_version = "1.41";  // Docker 20.10; DeviceRequests needs >= 1.40
  SpaceWatchConfig space;

  bool operator==(const DockerRunnerConfig&) const = default;
};

// What keeps a job from the verifier, for every runner (docs/security.md).
struct JobIsolation {
  // runner.trust_job_code: false (the default) refuses to run a job where the runner cannot keep
  // it from the verifier's secrets, config, store and process (error:provision naming this key);
  // true runs jobs unisolated where it cannot (the process runner then runs them as the daemon's
  // user, seeing what it sees), and every verdict says so.
  bool trust_job_code = false;
  // The verifier's own files (config file, secret files, store), filled in by the config loader:
  // a runner never shows a job a host path that is, holds or lies inside one of them.
  std::vector<std::filesystem::path> verifier_paths;

  // A reload may move a secret file (verifier_paths follow it at the next start) but may not
  // change whether job code is trusted.
  bool operator==(const JobIsolation& other) const {
    return trust_job_code == other.trust_job_code;
  }
};

struct RunnerConfig {
  RunnerKind kind = RunnerKind::process;
  JobIsolation isolation;
  ProcessRunnerConfig process;
  DockerRunnerConfig docker;
  KubernetesConfig kubernetes;  // runners/kubernetes_config.hpp
  SlurmConfig slurm;            // runners/slurm_config.hpp

  // reverifyd compares the running runner with a reloaded one: a reload may not change it.
  bool operator==(const RunnerConfig&) const = default;
};

}  // namespace reverify
