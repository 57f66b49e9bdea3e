#pragma once
// The batch job of one rebuild (no I/O): sbatch's options and the script the job runs.
//
// A rebuild's folder, <shared_root>/<rebuild id> (the nodes see it under node_root):
//   src/ the checkout   in/ config.json, seeds.json   out/ $REVERIFY_OUT   job.sh the script
//   job.log stdout + stderr (sbatch --output)   job.json what the daemon submitted (job id)
//   allocation what the job found in its allocation   exit_status the job's exit status
//
// The script (POSIX sh), in order:
//  1. writes `allocation`: the node, how many GPU devices the allocation hands the job (the
//     entries of CUDA_VISIBLE_DEVICES, which Slurm's GPU GRES sets), and a `problem=` line when
//     something is wrong, then stops with exit status 86 without running the job:
//       problem=gpu_count          fewer or more devices than environment.accelerator.count
//       problem=entrypoint         run.entrypoint[0] is not found on the node (PATH =
//                                  runner.slurm.path_env)
//       problem=container_runtime  runner.slurm.containers' command is not found on the node
//       problem=image              the runtime could not pull environment.image on the node
//  2. runs the job with the rebuild contract's variables and nothing else of Slurm's or the
//     node's environment, either
//     - from the checkout (src/): run.entrypoint in run.workdir with `env -i`, PATH from the
//       config and CUDA_VISIBLE_DEVICES as the allocation set it ("" for a CPU rebuild, so a
//       node's GPUs stay hidden from it); or
//     - when the manifest names its image and runner.slurm.containers.runtime is podman or
//       apptainer (runs_image()): that image, pulled by digest first (podman pull into its
//       storage; apptainer pull into image.sif in the rebuild's folder), then run (podman run
//       --pull=never --network=none --entrypoint=[argv0], GPUs as CDI devices
//       nvidia.com/gpu=<index> of the job's GPUs; apptainer exec --containall --cleanenv
//       --no-home image.sif argv, GPUs through --nv and CUDA_VISIBLE_DEVICES), in/, out/, the
//       data and the eval set bound at the same paths (in/, data and eval read-only),
//       run.workdir when it is absolute;
//  3. writes its exit status to `exit_status` (read when Slurm has forgotten the job).

#include <filesystem>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "runners/runner.hpp"
#include "runners/slurm_config.hpp"
#include "runners/slurm_records.hpp"

namespace reverify {

// The script's exit status when it refused to start the job (the `problem=` line says why).
inline constexpr int kSlurmPreflightExit = 86;

struct SlurmBatch {
  std::vector<std::string> options;  // sbatch's arguments, before the script's path
  std::string script;                // job.sh
  SlurmPlacement placement;          // the model's, as submitted
  SlurmGpuRequest gpus;              // count 0 = none asked for
};

// error:provision for a recorded GPU model runner.slurm.gpu_models does not map, or a folder a
// container cannot bind (its path holds ':' or ','); manifest_invalid for an empty
// run.entrypoint or an environment variable name holding '='.
Result<SlurmBatch> build_slurm_batch(const RebuildSpec& spec, const SlurmConfig& config,
                                     const std::filesystem::path& daemon_dir);

// Whether the job runs in the manifest's image (a container runtime configured and an image
// recorded) rather than in a checkout of its code.
bool runs_image(const RebuildSpec& spec, const SlurmConfig& config);

// The job's name: runner.slurm.job_name_prefix + the rebuild id (squeue --name finds it).
std::string slurm_job_name(const SlurmConfig& config, const std::string& rebuild_id);
// The job's comment: reverify.rebuild-id=<id>.
std::string slurm_job_comment(const std::string& rebuild_id);

}  // namespace reverify
