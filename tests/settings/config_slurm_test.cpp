// runner.slurm of reverify.yaml (settings/slurm_section.hpp) and runner.trust_job_code.
#include <doctest/doctest.h>

#include "runners/runner_factory.hpp"
#include "settings/config.hpp"
#include "tests/support/minimal_config.hpp"

using namespace reverify;

using reverify::test::kMinimalConfig;

namespace {
// What every config must name besides the runner.
}  // namespace

TEST_CASE("runner.slurm maps onto SlurmConfig, models override the placement key by key") {
  const std::string yaml = R"(
runner:
  kind: slurm
  trust_job_code: true
  slurm:
    slurm_conf: /etc/slurm/slurm.conf
    bin_dir: /opt/slurm/bin
    shared_root: /shared/reverify
    node_root: /mnt/shared/reverify
    path_env: /opt/conda/bin:/usr/bin:/bin
    partition: gpu
    account: ml-platform
    qos: verify
    cpus: 8
    memory: 64G
    gpu_models:
      "NVIDIA H100 80GB HBM3": {gres_type: h100}
      "NVIDIA L4": {feature: l4}
    models:
      big-llm: {partition: long, time_limit: 48h, memory: 512G}
    containers: {runtime: apptainer, command: [/opt/apptainer/bin/apptainer], args: [--writable-tmpfs]}
    job_name_prefix: rv-
    max_pending: 6h
    poll_interval: 5s
    cancel_wait: 3m
    reconnect_grace: 2m
)";
  auto config = parse_config(kMinimalConfig + yaml, "/etc/reverify");
  REQUIRE_MESSAGE(config.ok(), (config.ok() ? "" : config.error().message));
  CHECK(config->runner.kind == RunnerKind::slurm);
  CHECK(config->runner.isolation.trust_job_code);
  const SlurmConfig& s = config->runner.slurm;
  CHECK(s.slurm_conf == "/etc/slurm/slurm.conf");
  CHECK(s.bin_dir == "/opt/slurm/bin");
  CHECK(s.shared_root == "/shared/reverify");
  CHECK(s.node_root == "/mnt/shared/reverify");
  CHECK(s.path_env == "/opt/conda/bin:/usr/bin:/bin");
  CHECK(s.gpu_models.at("NVIDIA H100 80GB HBM3").gres_type == "h100");
  CHECK(s.gpu_models.at("NVIDIA L4").feature == "l4");
  CHECK(s.job_name_prefix == "rv-");
  CHECK(s.containers.runtime == SlurmContainerRuntime::apptainer);
  CHECK(s.containers.command == std::vector<std::string>{"/opt/apptainer/bin/apptainer"});
  CHECK(s.containers.args == std::vector<std::string>{"--writable-tmpfs"});
  CHECK(s.max_pending == std::chrono::hours(6));
  CHECK(s.poll_interval == std::chrono::seconds(5));
  CHECK(s.cancel_wait == std::chrono::minutes(3));
  CHECK(s.reconnect_grace == std::chrono::minutes(2));
  const SlurmPlacement big = s.placement_for("big-llm");
  CHECK(big.partition == "long");
  CHECK(big.account == "ml-platform");
  CHECK(big.qos == "verify");
  CHECK(big.cpus == 8);
  CHECK(big.memory == "512G");
  CHECK(big.time_limit == std::chrono::hours(48));
  const SlurmPlacement other = s.placement_for("digits-mlp");
  CHECK(other.partition == "gpu");
  CHECK(other.memory == "64G");
  CHECK_FALSE(other.time_limit.has_value());
}

TEST_CASE("runner.slurm defaults: shared_root under state_dir, trust_job_code off") {
  auto config = parse_config(
      kMinimalConfig + "runner:\n  kind: slurm\n  slurm: {shared_root: rb}\n", "/etc/reverify");
  REQUIRE(config.ok());
  CHECK(config->runner.slurm.shared_root == "/var/lib/reverify/rb");
  CHECK_FALSE(config->runner.isolation.trust_job_code);
  auto defaults = parse_config(kMinimalConfig, "/etc/reverify");
  REQUIRE(defaults.ok());
  CHECK(defaults->runner.slurm.shared_root == "/var/lib/reverify/slurm");
}

TEST_CASE("the slurm runner is not built unless the config trusts the job's code") {
  auto config = parse_config(kMinimalConfig + "runner: {kind: slurm}\n", "/etc/reverify");
  REQUIRE(config.ok());
  auto refused = make_runner(config->runner);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("runner.trust_job_code: true") != std::string::npos);
  config->runner.isolation.trust_job_code = true;
  auto built = make_runner(config->runner);
  REQUIRE(built.ok());
  CHECK((*built)->kind() == RunnerKind::slurm);
}

TEST_CASE("runner.slurm errors name the YAML path") {
  auto config = parse_config(kMinimalConfig + R"(
runner:
  kind: slurm
  slurm:
    partiton: typo
    memory: lots
    qos: "two words"
    cpus: 0
    node_root: relative
    gpu_models:
      "NVIDIA H100": {gres_type: h100, feature: h100}
      "NVIDIA L4": {}
    models:
      big: {time_limit: 0s, colour: red}
    containers: {runtime: docker}
)",
                             "/etc/reverify");
  REQUIRE_FALSE(config.ok());
  const std::string& m = config.error().message;
  CHECK(m.find("runner.slurm.partiton: unknown key") != std::string::npos);
  CHECK(m.find("runner.slurm.memory: expected a size for sbatch --mem") != std::string::npos);
  CHECK(m.find("runner.slurm.qos: expected one word") != std::string::npos);
  CHECK(m.find("runner.slurm.cpus: must be >= 1") != std::string::npos);
  CHECK(m.find("runner.slurm.node_root: must be an absolute path") != std::string::npos);
  CHECK(m.find("runner.slurm.gpu_models.\"NVIDIA H100\": needs exactly one of") !=
        std::string::npos);
  CHECK(m.find("runner.slurm.gpu_models.\"NVIDIA L4\": needs exactly one of") != std::string::npos);
  CHECK(m.find("runner.slurm.models.big.time_limit: must be longer than 0s") != std::string::npos);
  CHECK(m.find("runner.slurm.models.big.colour: unknown key") != std::string::npos);
  CHECK(m.find("runner.slurm.containers.runtime: expected one of none, podman, apptainer") !=
        std::string::npos);
}
