#pragma once
// Configuration of the slurm runner (runner.slurm in reverify.yaml; docs/runners.md, "Slurm").
//
// Storage model: the daemon writes each rebuild's folder (the code checkout, the contract's input
// files, the batch script) under shared_root, and reads the job's log and outputs back from there;
// the cluster's nodes see the same folder at node_root. The dataset and the eval set are passed by
// the path the daemon verified them at (translated the same way when they lie under shared_root),
// so they too must be readable on the nodes.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.hpp"

namespace reverify {

// What runs a rebuild whose manifest names its image (environment.image, by digest) on the node:
// none = a clean checkout of code.repo, as for a manifest without one; podman or apptainer = that
// image, pulled by digest by the container runtime the cluster offers.
enum class SlurmContainerRuntime { none, podman, apptainer };
template <>
struct EnumNames<SlurmContainerRuntime> {
  static constexpr EnumName<SlurmContainerRuntime> table[] = {
      {SlurmContainerRuntime::none, "none"},
      {SlurmContainerRuntime::podman, "podman"},
      {SlurmContainerRuntime::apptainer, "apptainer"},
  };
};

struct SlurmContainers {
  SlurmContainerRuntime runtime = SlurmContainerRuntime::none;
  // The runtime's argv before its run/exec word; empty = {"podman"} or {"apptainer"}. Global
  // options go here (podman --runtime, --cgroup-manager, --root).
  std::vector<std::string> command = {};
  // Added after run/exec, before reverify's own options (e.g. --userns=keep-id for rootless
  // podman, --ulimit where the node's limits are below podman's defaults).
  std::vector<std::string> args = {};
  // Added after pull (e.g. --tls-verify=false for a registry on plain HTTP; apptainer --nohttps).
  std::vector<std::string> pull_args = {};

  bool operator==(const SlurmContainers&) const = default;
};

// Where and how a rebuild's job is placed; runner.slurm gives the defaults, runner.slurm.models.
// <model> overrides them key by key for one model. Empty = Slurm's own default (the cluster's
// default partition, the user's default account and QOS).
struct SlurmPlacement {
  std::string partition;  // --partition
  std::string account;    // --account
  std::string qos;        // --qos
  std::optional<std::int64_t>
      cpus;            // --cpus-per-task; absent = from the manifest's threads, else 1
  std::string memory;  // --mem, e.g. "16G"; "" = the partition's default
  // --time; absent = the model's timeout (models.<name>.timeout), rounded up to whole minutes.
  // reverify cancels a job that runs past the model's timeout either way.
  std::optional<std::chrono::seconds> time_limit;

  bool operator==(const SlurmPlacement&) const = default;
};

// How a manifest's environment.accelerator.model is asked of Slurm: a GRES type (--gres=gpu:
// <type>:<count>) or a node feature (--constraint=<feature>, with --gres=gpu:<count>).
struct SlurmGpuModel {
  std::string gres_type;
  std::string feature;

  bool operator==(const SlurmGpuModel&) const = default;
};

struct SlurmConfig {
  // SLURM_CONF for the Slurm commands; "" = theirs (/etc/slurm/slurm.conf or the daemon's
  // environment).
  std::filesystem::path slurm_conf;
  // Where sbatch, squeue, scontrol and scancel are; "" = the daemon's PATH.
  std::filesystem::path bin_dir;
  // The rebuild folders, <shared_root>/<rebuild id>, as the daemon sees them, and the same folder
  // as the nodes see it ("" = the same path).
  std::filesystem::path shared_root = "/var/lib/reverify/slurm";
  std::filesystem::path node_root;
  // PATH given to the job on the node (argv[0] without a '/' is looked up there).
  std::string path_env = "/usr/bin:/bin";
  SlurmPlacement placement;
  std::map<std::string, SlurmPlacement> models;  // per model, over `placement`
  // environment.accelerator.model -> how it is asked for. A recorded model without an entry is
  // refused before submission; a manifest with a count but no model asks for any GPU.
  std::map<std::string, SlurmGpuModel> gpu_models;
  SlurmContainers containers;
  std::string job_name_prefix = "reverify-";  // the job's name is <prefix><rebuild id>
  // How long a job may stay pending before reverify cancels it (error:provision, with Slurm's
  // last reason): a partition that never frees up must not hold a verification forever. The
  // model's timeout counts from the job's start (Slurm's StartTime) and is its --time.
  std::chrono::seconds max_pending{std::chrono::hours(24)};
  std::chrono::milliseconds poll_interval{2000};  // squeue/scontrol while waiting
  std::size_t log_cap_bytes = 1024 * 1024;        // log tail kept in JobExit::log_tail
  // After scancel: how long cancel() and cleanup() wait for the job to leave squeue.
  std::chrono::seconds cancel_wait{120};
  // How long wait() keeps retrying a controller that stopped answering before error:runner-lost.
  std::chrono::milliseconds reconnect_grace{60000};

  bool operator==(const SlurmConfig&) const = default;

  // `placement` with models.<model> applied over it.
  SlurmPlacement placement_for(const std::string& model) const;
  // The folder the nodes see for a daemon-side path under shared_root (others unchanged).
  std::filesystem::path node_path(const std::filesystem::path& daemon_path) const;
};

}  // namespace reverify
