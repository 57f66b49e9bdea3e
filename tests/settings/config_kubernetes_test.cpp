#include <doctest/doctest.h>

#include "settings/config.hpp"
#include "tests/support/minimal_config.hpp"

using namespace reverify;

using reverify::test::kMinimalConfig;

namespace {
// What every config must name besides the runner.
}  // namespace

TEST_CASE("runner.kubernetes maps onto KubernetesConfig") {
  const std::string yaml = R"(
runner:
  kind: kubernetes
  kubernetes:
    api_server: https://10.0.0.1:6443
    namespace: ml-verify
    token_file: /etc/reverify/k8s-token
    ca_file: /etc/reverify/k8s-ca.crt
    service_account: reverify-trainer
    image_pull_secret: regcred
    node_selector: {pool: gpu}
    memory: 64Gi
    run_as_user: 1000
    run_as_non_root: true
    input_volumes:
      - {claim: datasets, daemon_path: /mnt/datasets}
    outputs: {claim: reverify-out, daemon_path: /mnt/out, sub_dir: rebuilds}
    ttl_after_finished: 2h
    watch_timeout: 5m
    reconnect_grace: 90s
)";
  auto config = parse_config(kMinimalConfig + yaml, "/etc/reverify");
  REQUIRE_MESSAGE(config.ok(), (config.ok() ? "" : config.error().message));
  const KubernetesConfig& k = config->runner.kubernetes;
  CHECK(config->runner.kind == RunnerKind::kubernetes);
  CHECK(k.api_server == "https://10.0.0.1:6443");
  CHECK(k.namespace_name == "ml-verify");
  CHECK(k.token_file == "/etc/reverify/k8s-token");
  CHECK(k.ca_file == "/etc/reverify/k8s-ca.crt");
  CHECK(k.service_account == "reverify-trainer");
  CHECK(k.image_pull_secret == "regcred");
  CHECK(k.node_selector.at("pool") == "gpu");
  CHECK(k.resources.memory == "64Gi");
  CHECK_FALSE(k.resources.cpu.has_value());
  CHECK(k.run_as_user == 1000);
  CHECK(k.run_as_non_root);
  REQUIRE(k.input_volumes.size() == 1);
  CHECK(k.input_volumes[0].claim_name == "datasets");
  CHECK(k.input_volumes[0].daemon_path == "/mnt/datasets");
  CHECK(k.outputs.volume.claim_name == "reverify-out");
  CHECK(k.outputs.sub_dir == "rebuilds");
  CHECK(k.ttl_seconds_after_finished == 7200);
  CHECK(k.watch_timeout_s == 300);
  CHECK(k.reconnect_grace == std::chrono::seconds(90));
}

TEST_CASE("runner.kubernetes errors name the YAML path") {
  auto config = parse_config(kMinimalConfig + R"(
runner:
  kind: kubernetes
  kubernetes:
    namespce: typo
    input_volumes:
      - {claim: datasets, daemon_path: relative/path}
)",
                             "/etc/reverify");
  REQUIRE_FALSE(config.ok());
  CHECK(config.error().message.find("runner.kubernetes.namespce: unknown key") !=
        std::string::npos);
  CHECK(config.error().message.find("runner.kubernetes.input_volumes[0]") != std::string::npos);
}
