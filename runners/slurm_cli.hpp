#pragma once
// Slurm's client commands as the slurm runner uses them: sbatch, scontrol, squeue and scancel,
// run with an argv (never a shell) through core/program_output.hpp, in an environment of PATH and
// SLURM_CONF only (runner.slurm.slurm_conf, else the daemon's): none of the daemon's variables
// reaches the cluster. Every call blocks until the command ends (Slurm's clients give up on an
// unreachable controller by themselves, after their MessageTimeout): call them off the daemon's
// loop. Errors carry the command's own stderr.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/program_output.hpp"
#include "core/result.hpp"
#include "runners/slurm_config.hpp"
#include "runners/slurm_records.hpp"

namespace reverify {

class SlurmCli {
 public:
  explicit SlurmCli(const SlurmConfig& config);

  // sbatch OPTIONS SCRIPT -> the job id (--parsable prints "<id>[;<cluster>]"). error:provision
  // with sbatch's message when Slurm refuses the job.
  Result<std::string> submit(const std::vector<std::string>& options,
                             const std::filesystem::path& script) const;
  // scontrol show job -o ID; nullopt when the controller no longer knows the job (it ended more
  // than MinJobAge ago). error:network when the controller does not answer.
  Result<std::optional<SlurmJob>> job(const std::string& id) const;
  // The ids of the jobs squeue lists (pending, running, completing...) with this name and comment.
  Result<std::vector<std::string>> active_jobs(const std::string& name,
                                               const std::string& comment) const;
  // scontrol show node -o / partition -o: every record.
  Result<std::vector<SlurmRecord>> nodes() const;
  Result<std::vector<SlurmRecord>> partitions() const;
  // scancel ID (a job that already ended is no error).
  Status cancel(const std::string& id) const;

 private:
  Result<CommandRun> run(const std::string& program, std::vector<std::string> args) const;
  Result<std::string> output(const std::string& program, std::vector<std::string> args,
                             ErrorCode code) const;

  std::filesystem::path bin_dir_;
  CommandOptions options_;
};

}  // namespace reverify
