#pragma once

#include "core/enum_names.hpp"

namespace reverify {

// Where a rebuild runs (docs/design.md, "Runners"): a clean local process, a Docker container, a
// Kubernetes Job.
enum class RunnerKind { process, docker, kubernetes };
template <>
struct EnumNames<RunnerKind> {
  static constexpr EnumName<RunnerKind> table[] = {
      {RunnerKind::process, "process"},
      {RunnerKind::docker, "docker"},
      {RunnerKind::kubernetes, "kubernetes"},
  };
};

}  // namespace reverify
