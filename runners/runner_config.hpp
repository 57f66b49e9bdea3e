#pragma once
// The runner section of reverify.yaml as a typed struct with defaults (the daemon's config loader
// maps YAML onto it; make_runner() in runner_factory.hpp builds a Runner from it).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "runners/kubernetes_config.hpp"
#include "runners/runner_kind.hpp"

namespace reverify {

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

  bool operator==(const ProcessRunnerConfig&) const = default;
};

struct DockerRunnerConfig {
  std::string socket = "/var/run/docker.sock";  // the Engine API's unix socket
  std::string network_mode = "none";            // HostConfig.NetworkMode
  std::int64_t memory_bytes = 0;                // HostConfig.Memory; 0 = no limit
  std::int64_t nano_cpus = 0;                   // HostConfig.NanoCpus (1e9 = one CPU); 0 = no limit
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

  bool operator==(const DockerRunnerConfig&) const = default;
};

struct RunnerConfig {
  RunnerKind kind = RunnerKind::process;
  ProcessRunnerConfig process;
  DockerRunnerConfig docker;
  KubernetesConfig kubernetes;  // runners/kubernetes_config.hpp

  // reverifyd compares the running runner with a reloaded one: a reload may not change it.
  bool operator==(const RunnerConfig&) const = default;
};

}  // namespace reverify
