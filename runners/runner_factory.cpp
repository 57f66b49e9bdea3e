#include "runners/runner_factory.hpp"

#include <stdexcept>

#include "runners/docker_runner.hpp"
#include "runners/kubernetes_runner.hpp"
#include "runners/process_runner.hpp"
#include "runners/slurm_runner.hpp"

namespace reverify {

Result<std::unique_ptr<Runner>> make_runner(const RunnerConfig& config) {
  switch (config.kind) {
    case RunnerKind::process:
      return std::unique_ptr<Runner>(
          std::make_unique<ProcessRunner>(config.process, config.isolation));
    case RunnerKind::docker:
      return std::unique_ptr<Runner>(
          std::make_unique<DockerRunner>(config.docker, config.isolation));
    case RunnerKind::kubernetes:
      return make_kubernetes_runner(config.kubernetes, config.isolation);
    case RunnerKind::slurm:
      return make_slurm_runner(config.slurm, config.isolation.trust_job_code);
  }
  throw std::logic_error("make_runner: a RunnerKind without a runner");
}

}  // namespace reverify
