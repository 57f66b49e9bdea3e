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

}  // namespace reverify
