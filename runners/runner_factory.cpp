#include "runners/runner_factory.hpp"

#include "runners/docker_runner.hpp"
#include "runners/kubernetes_runner.hpp"
#include "runners/process_runner.hpp"

namespace reverify {

Result<std::unique_ptr<Runner>> make_runner(const RunnerConfig& config) {
  if (config.kind == "process") {
    return std::unique_ptr<Runner>(std::make_unique<ProcessRunner>(config.process));
  }
  if (config.kind == "docker") {
    return std::unique_ptr<Runner>(std::make_unique<DockerRunner>(config.docker));
  }
  if (config.kind == "kubernetes")
    return make_kubernetes_runner(config.kubernetes);
  return make_error(
      ErrorCode::invalid_argument,
      "runner.kind: expected process, docker or kubernetes, got \"" + config.kind + "\"");
}

}  // namespace reverify
