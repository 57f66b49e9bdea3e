#pragma once
// The slurm runner (docs/runners.md, "Slurm"): one batch job per rebuild, submitted with sbatch
// (slurm_cli.hpp), watched with scontrol until it ends, cancelled with scancel. The rebuild's
// folder on shared storage (slurm_config.hpp) holds the code checkout, the contract's inputs,
// the batch script (slurm_batch.hpp: it checks the GPUs it was handed before it runs the job with
// the contract's environment only), the job's log and its outputs. JobHandle::ref is the Slurm
// job id; job.json in the folder records it for find_running().
//
// Before submission prepare() refuses (error:provision) a rebuild whose recorded GPU count the
// partition cannot offer on one node (runner.slurm.gpu_models maps the recorded model to a GRES
// type or a node feature).
//
// How Slurm's end states read (wait()):
//   COMPLETED, FAILED            the job's exit status (a signal N as 128 + N)
//   TIMEOUT, DEADLINE            timed_out (Slurm's --time; reverify also cancels a job that runs
//                                past the model's timeout, counted from Slurm's start)
//   OUT_OF_MEMORY, or FAILED with slurmstepd's "Exceeded job memory limit" in the log
//                                limit_hit: the job's own --mem (error:job)
//   NODE_FAIL, PREEMPTED, BOOT_FAIL, a requeue, the allocation handing the job another number of
//   GPUs than asked for          platform_fault (error:infra, never the model's)
//   CANCELLED by anyone but reverify, REVOKED, a job Slurm forgot without an exit status
//                                error:runner-lost
//   pending longer than max_pending (the job is cancelled first), the entrypoint or the container
//   runtime missing on the node  error:provision
// While it waits, wait_reporting() tells where the job stands (pending in partition P with
// Slurm's reason, running on node N) each time that changes.
//
// Stateless beyond its config: any number of threads may use one SlurmRunner for different
// rebuilds. Every method blocks on Slurm's commands.

#include <memory>

#include "core/result.hpp"
#include "runners/runner.hpp"
#include "runners/slurm_cli.hpp"
#include "runners/slurm_config.hpp"

namespace reverify {

class SlurmRunner final : public Runner {
 public:
  explicit SlurmRunner(SlurmConfig config);

  RunnerKind kind() const override { return RunnerKind::slurm; }
  // Built only with runner.trust_job_code (make_slurm_runner): every job runs trusted.
  bool job_code_trusted() const override { return true; }
  // The GPU check against the partition, then a fresh folder under shared_root with the checkout
  // (process_checkout.hpp; none when the job runs in the manifest's image: slurm_batch.hpp's
  // runs_image()), the contract's inputs and the batch script. A job of the same rebuild
  // still queued or running is a conflict.
  Status prepare(const RebuildSpec& spec) override;
  // sbatch; error:provision with Slurm's message when it refuses the job.
  Result<JobHandle> start(const RebuildSpec& spec) override;
  Result<JobExit> wait(const JobHandle& job, const LogSink& logs) override;
  Result<JobExit> wait_reporting(const JobHandle& job, const LogSink& logs,
                                 const StandingSink& standing) override;
  Result<JobOutputs> collect(const JobHandle& job, const std::filesystem::path& dest) override;
  // scancel, then waits (up to cancel_wait) until squeue no longer lists the job.
  void cancel(const JobHandle& job) override;
  // cancel() and the rebuild's folder removed.
  void cleanup(const JobHandle& job) override;
  // The job recorded in <shared_root>/<rebuild id>/job.json (running or ended), else a queued or
  // running job whose name and comment carry the rebuild id (one submitted by a daemon that died
  // before it could record it).
  Result<std::optional<JobHandle>> find_running(const std::string& rebuild_id) override;

 private:
  Status check_gpus(const RebuildSpec& spec, const SlurmPlacement& placement,
                    const SlurmGpuRequest& gpus) const;

  SlurmConfig config_;
  SlurmCli cli_;
};

// Builds the runner; refused (invalid_argument, naming the keys) unless trust_job_code is true:
// the job runs on a cluster node as the daemon's user, which nothing here isolates from the
// daemon's files (docs/security.md).
Result<std::unique_ptr<Runner>> make_slurm_runner(const SlurmConfig& config, bool trust_job_code);

}  // namespace reverify
