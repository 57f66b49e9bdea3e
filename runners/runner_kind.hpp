#pragma once

#include "core/enum_names.hpp"

namespace reverify {

// Where a rebuild runs (docs/design.md, "Runners"): a clean local process, a Docker container, a
// Kubernetes Job, a Slurm batch job.
enum class RunnerKind { process, docker, kubernetes, slurm };
template <>
struct EnumNames<RunnerKind> {
  static constexpr EnumName<RunnerKind> table[] = {
      {RunnerKind::process, "process"},
      {RunnerKind::docker, "docker"},
      {RunnerKind::kubernetes, "kubernetes"},
      {RunnerKind::slurm, "slurm"},
  };
};

// Whether the runner writes the job's log itself as job.log in the job's work folder (process:
// the job's supervisor; slurm: sbatch --output); the others only stream it.
constexpr bool writes_job_log(RunnerKind kind) {
  return kind == RunnerKind::process || kind == RunnerKind::slurm;
}

}  // namespace reverify
