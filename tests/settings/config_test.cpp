// reverify.yaml: defaults, every error naming its YAML path, secrets only from files, and the
// shipped templates load.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>

#include <sys/stat.h>

#include "core/unix_time.hpp"
#include "settings/config.hpp"
#include "tests/support/files.hpp"
#include "tests/support/minimal_config.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::test::TempDir;
namespace fs = std::filesystem;

using reverify::test::kMinimalConfig;

namespace {

// What every config must name: where state lives and where releases come from.

std::string error_of(const std::string& yaml, const fs::path& base = "/etc/reverify") {
  auto config = parse_config(yaml, base);
  REQUIRE_FALSE(config.ok());
  return config.error().message;
}

}  // namespace

TEST_CASE("a config names state_dir and a source; every other key has its documented default") {
  auto config = parse_config(kMinimalConfig, "/etc/reverify");
  REQUIRE(config.ok());
  CHECK(config->api.address == "127.0.0.1");
  CHECK(config->api.port == 8420);
  CHECK(config->api.token.empty());
  CHECK(config->api.default_max_age_s == 40 * 86400);
  CHECK(config->state_dir == "/var/lib/reverify");
  CHECK(config->db_path() == "/var/lib/reverify/reverify.db");
  CHECK(config->work_root() == "/var/lib/reverify/work");
  CHECK(config->schedule.per_cycle == 10);
  CHECK_FALSE(config->schedule.cron.has_value());
  CHECK(config->verdict.false_page_rate == doctest::Approx(0.01));
  CHECK(config->runner.kind == RunnerKind::process);
  CHECK(config->runner.process.scratch_root == "/var/lib/reverify/scratch");
  CHECK(config->sync_interval_s == 300);
}

TEST_CASE("values with units, relative paths and per-model policies") {
  auto config = parse_config(R"(
state_dir: state
sync_interval: 2m
schedule: {cron: "0 3 * * 1", per_cycle: 3, jitter: 1h, retry: {initial: 30s, max: 2h}}
models:
  default: {max_steps: 50}
  big: {large: true, criticality: 3}
sources:
  - {name: local, kind: directory, root: registry}
)",
                             "/srv/rv");
  REQUIRE(config.ok());
  CHECK(config->state_dir == "/srv/rv/state");
  CHECK(config->sync_interval_s == 120);
  CHECK(config->schedule.cron == std::optional<std::string>("0 3 * * 1"));
  CHECK(config->schedule.jitter_s == 3600);
  CHECK(config->schedule.retry_initial_s == 30);
  CHECK(config->schedule.retry_max_s == 7200);
  CHECK(config->model_policy("big").large == std::optional<bool>(true));
  CHECK(config->model_policy("big").max_steps == 50);  // inherited from models.default
  CHECK(config->model_policy("other").max_steps == 50);
  REQUIRE(config->sources.size() == 1);
  CHECK(config->sources[0].root == "/srv/rv/registry");
}

TEST_CASE("errors name the YAML path and what was expected, all of them at once") {
  auto message = error_of(R"(
api: {port: 70000}
schedule: {per_cycle: 0, cron: "61 * * * *"}
sources:
  - {name: "../x", kind: ftp}
verdict: {false_page_rate: 2}
runner: {kind: vm}
typo_key: 1
)");
  CHECK(message.find("api.port: must be 1..65535") != std::string::npos);
  CHECK(message.find("schedule.per_cycle: must be >= 1, got 0") != std::string::npos);
  CHECK(message.find("schedule.cron:") != std::string::npos);
  CHECK(message.find("sources[0].name: must match") != std::string::npos);
  CHECK(message.find("sources[0].kind: expected one of directory, http-index, got \"ftp\"") !=
        std::string::npos);
  CHECK(message.find("verdict.false_page_rate: must be in (0, 1)") != std::string::npos);
  CHECK(
      message.find("runner.kind: expected one of process, docker, kubernetes, slurm, got \"vm\"") !=
      std::string::npos);
  CHECK(message.find("typo_key: unknown key") != std::string::npos);
}

TEST_CASE("type errors and bad durations name their path") {
  CHECK(error_of("api: {port: eighty}").find("api.port: expected an integer, got \"eighty\"") !=
        std::string::npos);
  CHECK(error_of("sync_interval: 5 minutes").find("sync_interval:") != std::string::npos);
  CHECK(error_of("schedule: [1, 2]").find("schedule: must be a mapping") != std::string::npos);
  CHECK(error_of("key: [unclosed").find("not valid YAML") != std::string::npos);
}

TEST_CASE("schedule.at_release: its own mode, delay and budget, each error with its path") {
  auto config = parse_config(kMinimalConfig +
                                 "schedule: {at_release: {enabled: true, mode: steps, "
                                 "delay: 15m, per_day: 3, gpu_budget_hours: 20}}\n",
                             "/etc/reverify");
  REQUIRE(config.ok());
  const AtReleaseConfig& release = config->schedule.at_release;
  CHECK(release.enabled);
  CHECK(release.mode == RebuildMode::steps);
  CHECK(release.delay_s == 900);
  CHECK(release.per_day == 3);
  CHECK(release.gpu_budget_hours == std::optional<double>(20));
  const AtReleaseConfig defaults =
      parse_config(kMinimalConfig, "/etc/reverify")->schedule.at_release;
  CHECK(defaults.enabled);
  CHECK(defaults.mode == RebuildMode::full);
  CHECK(defaults.delay_s == 0);
  CHECK(defaults.per_day == 5);
  CHECK_FALSE(defaults.gpu_budget_hours.has_value());

  const auto message = error_of(
      "schedule: {at_release: {enabled: maybe, mode: half, delay: 10, per_day: 0, "
      "gpu_budget_hours: -1, when: now}}");
  CHECK(message.find("schedule.at_release.enabled: expected true or false, got \"maybe\"") !=
        std::string::npos);
  CHECK(message.find("schedule.at_release.mode: expected one of full, steps") !=
        std::string::npos);  // and any mode RebuildMode adds
  CHECK(message.find("got \"half\"") != std::string::npos);
  CHECK(message.find("schedule.at_release.delay: a duration needs its unit") != std::string::npos);
  CHECK(message.find("schedule.at_release.per_day: must be >= 1, got 0") != std::string::npos);
  CHECK(message.find("schedule.at_release.gpu_budget_hours: must be >= 0, got -1") !=
        std::string::npos);
  CHECK(message.find("schedule.at_release.when: unknown key") != std::string::npos);
}

TEST_CASE("models.<name>.cadence: mode -> how often, at_release; a model's replaces the default") {
  auto config = parse_config(kMinimalConfig + R"(models:
  default: {cadence: {steps: 1mo, full: 3mo, at_release: full}}
  big: {cadence: {full: 90d, at_release: steps}}
  plain: {criticality: 1}
)",
                             "/etc/reverify");
  REQUIRE_MESSAGE(config.ok(), config.error().message);
  const auto& defaults = config->model_policy("anything");
  CHECK(defaults.cadence_s == std::map<RebuildMode, std::int64_t>{{RebuildMode::steps, 30 * 86400},
                                                                  {RebuildMode::full, 90 * 86400}});
  CHECK(defaults.at_release_mode == RebuildMode::full);
  const auto& big = config->model_policy("big");
  CHECK(big.cadence_s == std::map<RebuildMode, std::int64_t>{{RebuildMode::full, 90 * 86400}});
  CHECK(big.at_release_mode == RebuildMode::steps);
  CHECK(config->model_policy("plain").cadence_s == defaults.cadence_s);  // inherited
  CHECK(parse_config(kMinimalConfig, "/etc/reverify")->model_defaults.cadence_s.empty());

  const auto message = error_of(R"(models:
  a: {cadence: {fast: 1d}}
  b: {cadence: {steps: 30}}
  c: {cadence: {full: 0s, at_release: half}}
  d: {cadence: [steps, full]}
)");
  CHECK(message.find("models.a.cadence.fast: unknown mode: expected a map of mode (full, steps") !=
        std::string::npos);
  CHECK(message.find("models.b.cadence.steps: a duration needs its unit") != std::string::npos);
  CHECK(message.find("models.c.cadence.full: must be a duration longer than 0s") !=
        std::string::npos);
  CHECK(message.find("models.c.cadence.at_release: expected one of full, steps") !=
        std::string::npos);
  CHECK(message.find("models.d.cadence: must be a map of mode") != std::string::npos);
}

TEST_CASE("secrets come only from *_file keys, are read at load and trimmed") {
  TempDir dir;
  const std::string token(40, 'k');
  dir.write("api.token", token + "\n");
  auto config = parse_config(kMinimalConfig + "api: {token_file: api.token}", dir.path);
  REQUIRE(config.ok());
  CHECK(config->api.token == token);
  // Every token read is on the list the API redacts from its responses.
  CHECK(std::find(config->api.secrets.begin(), config->api.secrets.end(), token) !=
        config->api.secrets.end());
  auto inline_secret = error_of("api: {token: s3cret}", dir.path);
  CHECK(inline_secret.find("api.token: secrets are not accepted inline") != std::string::npos);
  CHECK(inline_secret.find("s3cret") == std::string::npos);  // never echoed
  CHECK(error_of("api: {token_file: missing.token}", dir.path).find("api.token_file: ") !=
        std::string::npos);
  CHECK(error_of("api: {token_file: missing.token}", dir.path).find("does not exist") !=
        std::string::npos);
}

// Found #4 (a token "ok" redacted every "status": "ok"; any length was accepted) and #8 (a
// token_file that is a directory was reported as "is empty").
TEST_CASE(
    "the API token is refused below 32 bytes, above 1024, or with characters a header cannot "
    "hold") {
  TempDir dir;
  struct Case {
    std::string content;
    const char* error;  // nullptr: accepted
  };
  const Case cases[] = {
      {"", "is empty"},
      {"\n", "is empty"},
      {"ok", "holds 2 bytes; a secret needs at least 32"},
      {std::string(31, 'a'), "holds 31 bytes; a secret needs at least 32"},
      {std::string(31, 'a') + "\n", "holds 31 bytes"},
      {std::string(32, 'a'), nullptr},
      {std::string(32, 'a') + "\n", nullptr},
      {"  " + std::string(32, 'a') + " \r\n", nullptr},
      {std::string(1024, 'a'), nullptr},
      {std::string(1025, 'a'), "holds 1025 bytes; a bearer token may have at most 1024"},
      {std::string(31, 'a') + "\"", "byte 31 is not allowed"},
      {std::string(16, 'a') + " " + std::string(16, 'a'), "byte 16 is not allowed"},
      {std::string(30, 'a') + "==", nullptr},
      {std::string(30, 'a') + "=b", "'=' may only end a bearer token"},
      {"0123456789abcdefABCDEF-._~+/0123456789", nullptr},
  };
  for (const auto& c : cases) {
    CAPTURE(c.content);
    dir.write("api.token", c.content);
    auto config = parse_config(kMinimalConfig + "api: {token_file: api.token}", dir.path);
    if (c.error == nullptr) {
      CHECK(config.ok());
      continue;
    }
    REQUIRE_FALSE(config.ok());
    CHECK(config.error().message.find("api.token_file: ") == 0);
    CHECK(config.error().message.find(c.error) != std::string::npos);
  }
  std::filesystem::create_directories(dir.path / "token.d");
  auto directory = error_of("api: {token_file: token.d}", dir.path);
  CHECK(directory.find("is a directory") != std::string::npos);
  CHECK(directory.find("is empty") == std::string::npos);
  // Registry tokens are someone else's: any one-line form, but at least 16 bytes.
  dir.write("source.token", "short");
  CHECK(
      error_of("sources: [{name: s, kind: http-index, url: 'http://x', token_file: source.token}]",
               dir.path)
          .find("sources[0].token_file: ") != std::string::npos);
}

TEST_CASE("pager errors come from the pager section's parser with their path") {
  auto message = error_of("pager: {routes: [{owner: '*', senders: [nope]}]}");
  CHECK(message.find("pager.routes[0].senders[0]") != std::string::npos);
}

TEST_CASE("code_mirrors: local folders resolve against the config's folder, URLs stay as given") {
  auto config = parse_config(kMinimalConfig +
                                 "code_mirrors:\n"
                                 "  https://git.example/vision/: ../mirrors/vision/\n"
                                 "  https://git.example/x.git: /srv/x\n"
                                 "  https://git.example/: https://mirror.internal/\n"
                                 "  https://git.example/y.git: git@mirror.internal:y.git\n",
                             "/etc/reverify");
  INFO((config.ok() ? "" : config.error().message));
  REQUIRE(config.ok());
  CHECK(config->code_mirrors.size() == 4);
  CHECK(config->code_mirrors.at("https://git.example/vision/") == "/etc/mirrors/vision/");
  CHECK(config->code_mirrors.at("https://git.example/x.git") == "/srv/x");
  CHECK(config->code_mirrors.at("https://git.example/") == "https://mirror.internal/");
  CHECK(config->code_mirrors.at("https://git.example/y.git") == "git@mirror.internal:y.git");
  CHECK(parse_config(kMinimalConfig, "/etc/reverify")->code_mirrors.empty());
  CHECK(error_of("code_mirrors: {https://git.example/: ''}")
            .find("code_mirrors.https://git.example/") != std::string::npos);
  CHECK(error_of("code_mirrors: [a, b]").find("code_mirrors: must be a mapping") !=
        std::string::npos);
}

std::string source_file(const std::string& relative) {
  std::string text = test::read_file(test::source_dir() / relative);
  REQUIRE_FALSE(text.empty());
  return text;
}

TEST_CASE("the shipped production template, as it stands, is exactly the built-in defaults") {
  auto production = parse_config(source_file("config/production.yaml"), "/etc/reverify");
  INFO((production.ok() ? "" : production.error().message));
  REQUIRE(production.ok());
  const Config defaults = *parse_config(kMinimalConfig, "/etc/reverify");
  const Config& p = *production;
  CHECK(p.state_dir == defaults.state_dir);
  CHECK(p.work_root() == defaults.work_root());
  CHECK(p.stop_timeout_s == defaults.stop_timeout_s);
  CHECK(p.sync_interval_s == defaults.sync_interval_s);
  CHECK(p.api.address == defaults.api.address);
  CHECK(p.api.port == defaults.api.port);
  CHECK(p.api.token == defaults.api.token);
  CHECK(p.api.max_header_bytes == defaults.api.max_header_bytes);
  CHECK(p.api.max_body_bytes == defaults.api.max_body_bytes);
  CHECK(p.api.request_timeout_ms == defaults.api.request_timeout_ms);
  CHECK(p.api.default_max_age_s == defaults.api.default_max_age_s);
  REQUIRE(p.sources.size() == 1);  // the one key without a default
  CHECK(p.sources[0].root == "/srv/models");
  CHECK(p.schedule.cron == defaults.schedule.cron);
  CHECK(p.schedule.per_cycle == defaults.schedule.per_cycle);
  CHECK(p.schedule.max_concurrent == defaults.schedule.max_concurrent);
  CHECK(p.schedule.gpu_budget_hours == defaults.schedule.gpu_budget_hours);
  CHECK(p.schedule.full_every_n_cycles == defaults.schedule.full_every_n_cycles);
  CHECK(p.schedule.large_gpu_hours == defaults.schedule.large_gpu_hours);
  CHECK(p.schedule.steps_cost_fraction == defaults.schedule.steps_cost_fraction);
  CHECK(p.schedule.calibrations_per_cycle == defaults.schedule.calibrations_per_cycle);
  CHECK(p.schedule.calibration_max_runs == defaults.schedule.calibration_max_runs);
  CHECK(p.schedule.jitter_s == defaults.schedule.jitter_s);
  CHECK(p.schedule.retry_initial_s == defaults.schedule.retry_initial_s);
  CHECK(p.schedule.retry_max_s == defaults.schedule.retry_max_s);
  CHECK(p.schedule.retry_max_attempts == defaults.schedule.retry_max_attempts);
  CHECK(p.schedule.at_release.enabled == defaults.schedule.at_release.enabled);
  CHECK(p.schedule.at_release.mode == defaults.schedule.at_release.mode);
  CHECK(p.schedule.at_release.delay_s == defaults.schedule.at_release.delay_s);
  CHECK(p.schedule.at_release.per_day == defaults.schedule.at_release.per_day);
  CHECK(p.schedule.at_release.gpu_budget_hours == defaults.schedule.at_release.gpu_budget_hours);
  CHECK(p.verdict.false_page_rate == defaults.verdict.false_page_rate);
  CHECK(p.verdict.allow_fallback == defaults.verdict.allow_fallback);
  CHECK(p.verdict.fallback_tolerance == defaults.verdict.fallback_tolerance);
  CHECK(p.verdict.flip_threshold == defaults.verdict.flip_threshold);
  CHECK(p.model_defaults.criticality == defaults.model_defaults.criticality);
  CHECK(p.model_defaults.large == defaults.model_defaults.large);
  CHECK(p.model_defaults.max_steps == defaults.model_defaults.max_steps);
  CHECK(p.model_defaults.timeout_s == defaults.model_defaults.timeout_s);
  CHECK(p.models.empty());
  CHECK(p.code_mirrors.empty());
  CHECK(p.runner.kind == defaults.runner.kind);
  CHECK(p.runner.isolation.trust_job_code == defaults.runner.isolation.trust_job_code);
  CHECK(p.runner.slurm == defaults.runner.slurm);
  CHECK(p.runner.process.path_env == defaults.runner.process.path_env);
  CHECK(p.runner.process.scratch_root == defaults.runner.process.scratch_root);
  CHECK(p.runner.process.log_cap_bytes == defaults.runner.process.log_cap_bytes);
  CHECK(p.runner.process.job_log_cap_bytes == defaults.runner.process.job_log_cap_bytes);
  CHECK(p.runner.process.kill_grace == defaults.runner.process.kill_grace);
  CHECK(p.runner.process.cgroups == defaults.runner.process.cgroups);
  CHECK(p.runner.process.max_pids == defaults.runner.process.max_pids);
  CHECK(p.runner.process.max_open_files == defaults.runner.process.max_open_files);
  CHECK(p.runner.process.memory_bytes == defaults.runner.process.memory_bytes);
  CHECK(p.runner.process.space == defaults.runner.process.space);
  CHECK(p.runner.process.space.paths == std::vector<std::filesystem::path>{p.state_dir});
  CHECK(p.runner.process.sandbox == defaults.runner.process.sandbox);
  CHECK(p.runner.isolation.trust_job_code == defaults.runner.isolation.trust_job_code);
  CHECK_FALSE(p.runner.isolation.trust_job_code);
  CHECK(p.model_defaults.network == defaults.model_defaults.network);
  CHECK(p.model_defaults.network == JobNetwork::none);
  const auto& d = defaults.runner.docker;
  CHECK(p.runner.docker.socket == d.socket);
  CHECK(p.runner.docker.network_mode == d.network_mode);
  CHECK(p.runner.docker.memory_bytes == d.memory_bytes);
  CHECK(p.runner.docker.nano_cpus == d.nano_cpus);
  CHECK(p.runner.docker.user == d.user);
  CHECK(p.runner.docker.scratch_root == d.scratch_root);
  CHECK(p.runner.docker.log_cap_bytes == d.log_cap_bytes);
  CHECK(p.runner.docker.kill_grace == d.kill_grace);
  CHECK(p.runner.docker.pull_timeout == d.pull_timeout);
  CHECK(p.runner.docker.max_pids == d.max_pids);
  CHECK(p.runner.docker.max_open_files == d.max_open_files);
  CHECK(p.runner.docker.read_only_rootfs == d.read_only_rootfs);
  CHECK(p.runner.docker.tmpfs == d.tmpfs);
  CHECK(p.runner.docker.tmpfs_bytes == d.tmpfs_bytes);
  CHECK(p.runner.docker.space == d.space);
  const auto& k = defaults.runner.kubernetes;
  CHECK(p.runner.kubernetes.api_server == k.api_server);
  CHECK(p.runner.kubernetes.namespace_name == k.namespace_name);
  CHECK(p.runner.kubernetes.token_file == k.token_file);
  CHECK(p.runner.kubernetes.ca_file == k.ca_file);
  CHECK(p.runner.kubernetes.in_cluster == k.in_cluster);
  CHECK(p.runner.kubernetes.service_account == k.service_account);
  CHECK(p.runner.kubernetes.image_pull_secret == k.image_pull_secret);
  CHECK(p.runner.kubernetes.node_selector == k.node_selector);
  CHECK(p.runner.kubernetes.resources.cpu == k.resources.cpu);
  CHECK(p.runner.kubernetes.resources.memory == k.resources.memory);
  CHECK(p.runner.kubernetes.run_as_user == k.run_as_user);
  CHECK(p.runner.kubernetes.run_as_non_root == k.run_as_non_root);
  CHECK(p.runner.kubernetes.fs_group == k.fs_group);
  CHECK(p.runner.kubernetes.input_volumes.empty());
  CHECK(p.runner.kubernetes.outputs.sub_dir == k.outputs.sub_dir);
  CHECK(p.runner.kubernetes.ttl_seconds_after_finished == k.ttl_seconds_after_finished);
  CHECK(p.runner.kubernetes.termination_grace_period_s == k.termination_grace_period_s);
  CHECK(p.runner.kubernetes.watch_timeout_s == k.watch_timeout_s);
  CHECK(p.runner.kubernetes.log_tail_lines == k.log_tail_lines);
  CHECK(p.runner.kubernetes.log_cap_bytes == k.log_cap_bytes);
  CHECK(p.runner.kubernetes.reconnect_grace == k.reconnect_grace);
  CHECK(p.runner.kubernetes.network_policy == k.network_policy);
  CHECK(p.pager.public_url == defaults.pager.public_url);
  CHECK(p.pager.senders.empty());
  CHECK(p.pager.routes.empty());
  CHECK(p.pager.retry.initial == defaults.pager.retry.initial);
  CHECK(p.pager.retry.max_backoff == defaults.pager.retry.max_backoff);
  CHECK(p.pager.retry.max_attempts == defaults.pager.retry.max_attempts);
  CHECK_FALSE(p.attestation.enabled());
  CHECK(p.attestation.identity.verifier_id == defaults.attestation.identity.verifier_id);
  CHECK(p.attestation.identity.resource_uri_template ==
        defaults.attestation.identity.resource_uri_template);
}

TEST_CASE("runner.trust_job_code, the process runner's sandbox, a model's network") {
  TempDir dir;
  dir.write("api.token", std::string(40, 'k') + "\n");
  auto c = parse_config(kMinimalConfig + R"(
api: {token_file: api.token}
runner:
  trust_job_code: true
  process:
    sandbox: {bwrap: /opt/bwrap, read_only: [/opt/conda], writable: [/srv/cache], devices: [/dev/fuse],
              tmp_bytes: 2097152, job_user: "1000:1001"}
models: {default: {network: none}, fetcher: {network: allow}}
)",
                        dir.path);
  REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error().message));
  CHECK(c->runner.isolation.trust_job_code);
  const auto& sandbox = c->runner.process.sandbox;
  CHECK(sandbox.bwrap == "/opt/bwrap");
  CHECK(sandbox.read_only == std::vector<std::filesystem::path>{"/opt/conda"});
  CHECK(sandbox.writable == std::vector<std::filesystem::path>{"/srv/cache"});
  CHECK(sandbox.devices == std::vector<std::filesystem::path>{"/dev/fuse"});
  CHECK(sandbox.tmp_bytes == 2097152);
  CHECK(sandbox.job_uid == 1000);
  CHECK(sandbox.job_gid == 1001);
  CHECK(c->model_policy("fetcher").network == JobNetwork::allow);
  CHECK(c->model_policy("other").network == JobNetwork::none);
  // The verifier's own files, never shown to a job: the store and every secret file.
  const auto& own = c->runner.isolation.verifier_paths;
  CHECK(std::count(own.begin(), own.end(), c->db_path()) == 1);
  CHECK(std::count(own.begin(), own.end(), dir.path / "api.token") == 1);

  const std::string bad = error_of(kMinimalConfig + R"(
runner: {process: {sandbox: {read_only: [relative/path], writable: ["/"], job_user: "0:0"}}}
models: {default: {network: sometimes}}
)");
  CHECK(bad.find("runner.process.sandbox.read_only: expected absolute host paths below /, got "
                 "\"relative/path\"") != std::string::npos);
  CHECK(bad.find("runner.process.sandbox.writable: expected absolute host paths below /, got "
                 "\"/\"") != std::string::npos);
  CHECK(bad.find("runner.process.sandbox.job_user: expected \"uid:gid\", both numbers above 0") !=
        std::string::npos);
  CHECK(bad.find("models.default.network") != std::string::npos);
}

TEST_CASE("the production template names every key the loader knows") {
  // Every section, each with a key no version knows: the loader answers with the keys it does
  // know there ("api.zz: unknown key (expected one of: address, ...)"), and each of those must be
  // documented in the template (as an active line or in the comments of list-valued sections).
  const std::string probe = R"(zz: 1
api: {zz: 1}
sources:
  - {name: a, kind: directory, root: /tmp, zz: 1}
  - {name: b, kind: http-index, url: "http://x", zz: 1}
schedule: {zz: 1, retry: {zz: 1}, at_release: {zz: 1}}
verdict: {zz: 1}
models: {default: {zz: 1}, m: {zz: 1}}
runner:
  zz: 1
  process: {zz: 1, sandbox: {zz: 1}}
  docker: {zz: 1}
  space: {zz: 1}
  kubernetes:
    zz: 1
    outputs: {claim: c, daemon_path: /tmp, zz: 1}
    input_volumes: [{claim: c, daemon_path: /tmp, zz: 1}]
  slurm:
    zz: 1
    containers: {zz: 1}
    gpu_models: {g: {gres_type: t, zz: 1}}
    models: {m: {zz: 1}}
pager:
  zz: 1
  retry: {zz: 1}
  senders:
    pd: {kind: pagerduty, routing_key_file: k, zz: 1, severity: {zz: 1}}
    am: {kind: alertmanager, url: "http://x", zz: 1}
    sl: {kind: slack, url_file: u, zz: 1}
    wh: {kind: webhook, url: "http://x", zz: 1}
    fi: {kind: file, path: p, zz: 1}
  routes: [{owner: "*", senders: [fi], zz: 1}]
attestation: {zz: 1}
)";
  const std::string message = error_of(probe);
  const std::string production = source_file("config/production.yaml");
  const std::string marker = "unknown key (expected one of: ";
  std::size_t sections = 0;
  for (std::size_t at = message.find(marker); at != std::string::npos;
       at = message.find(marker, at + 1)) {
    ++sections;
    const std::size_t begin = at + marker.size();
    std::string list = message.substr(begin, message.find(')', begin) - begin);
    std::size_t start = 0;
    while (start < list.size()) {
      std::size_t comma = list.find(", ", start);
      const std::string key =
          list.substr(start, comma == std::string::npos ? comma : comma - start);
      const bool documented = std::regex_search(production, std::regex("\\b" + key + "\\b"));
      CHECK_MESSAGE(documented,
                    "config/production.yaml does not mention the key \"" << key << "\"");
      if (comma == std::string::npos)
        break;
      start = comma + 2;
    }
  }
  CHECK(sections >= 20);  // every section of the probe answered
}

TEST_CASE("the shipped demo config loads (with the key scripts/demo.sh writes)") {
  TempDir dir;
  auto key = dir.write("attest.pem", Ed25519SigningKey::generate().private_pem());
  ::chmod(key.c_str(), 0600);
  std::string demo_text = source_file("config/demo.yaml");
  const std::string demo_key = "../out/demo/attest/ed25519.pem";  // scripts/demo.sh writes it
  REQUIRE(demo_text.find(demo_key) != std::string::npos);
  demo_text.replace(demo_text.find(demo_key), demo_key.size(), key.string());
  auto demo = parse_config(demo_text, test::source_dir() / "config");
  INFO((demo.ok() ? "" : demo.error().message));
  REQUIRE(demo.ok());
  CHECK(demo->attestation.enabled());
  CHECK(demo->code_mirrors.size() == 1);
}

TEST_CASE("attestation: the signing key from a private file, a URI naming the verifier") {
  TempDir dir;
  auto key = Ed25519SigningKey::generate();
  auto file = dir.write("attest.pem", key.private_pem());
  ::chmod(file.c_str(), 0600);
  auto config = parse_config(kMinimalConfig + R"(
attestation:
  key_file: attest.pem
  verifier_id: https://reverify.example.com/verifier
  resource_uri: "https://models.example/{model}/{version}/"
)",
                             dir.path);
  REQUIRE_MESSAGE(config.ok(), config.error().message);
  REQUIRE(config->attestation.enabled());
  CHECK(config->attestation.key->key_id() == key.key_id());
  CHECK(config->attestation.key_file == dir.path / "attest.pem");
  CHECK(config->attestation.identity.verifier_id == "https://reverify.example.com/verifier");
  CHECK(resource_uri_for(config->attestation.identity.resource_uri_template, "m", "1") ==
        "https://models.example/m/1/");
  CHECK_FALSE(parse_config(kMinimalConfig, dir.path)->attestation.enabled());
  CHECK(parse_config(kMinimalConfig, dir.path)->attestation.identity.resource_uri_template ==
        "reverify:{model}@{version}");

  ::chmod(file.c_str(), 0640);
  CHECK(error_of("attestation: {key_file: attest.pem, verifier_id: 'https://v.example'}", dir.path)
            .find("attestation.key_file: " + file.string() + ": permissions 0640 are too open") ==
        0);
  ::chmod(file.c_str(), 0600);
  CHECK(error_of("attestation: {key_file: attest.pem}", dir.path)
            .find("attestation.verifier_id: required with key_file") != std::string::npos);
  CHECK(error_of("attestation: {verifier_id: 'https://v.example'}", dir.path)
            .find("attestation.key_file: required when verifier_id is set") != std::string::npos);
  CHECK(error_of("attestation: {key_file: attest.pem, verifier_id: 'HTTPS://v.example'}", dir.path)
            .find("attestation.verifier_id: the URI scheme must be lower case") !=
        std::string::npos);
  CHECK(error_of("attestation: {key_file: attest.pem, verifier_id: 'https://V.example'}", dir.path)
            .find("attestation.verifier_id: the URI's host must be lower case") !=
        std::string::npos);
  CHECK(
      error_of("attestation: {key_file: attest.pem, verifier_id: v, resource_uri: 'a b'}", dir.path)
          .find("attestation.verifier_id: must be a URI") != std::string::npos);
  CHECK(error_of("attestation: {key_file: missing.pem, verifier_id: 'https://v.example'}", dir.path)
            .find("attestation.key_file: " + (dir.path / "missing.pem").string() +
                  ": cannot open") != std::string::npos);
  CHECK(error_of("attestation: {key: inline}", dir.path).find("attestation.key: unknown key") !=
        std::string::npos);
}

TEST_CASE("durations and times") {
  CHECK(*parse_duration_s("40d") == 40 * 86400);
  CHECK(*parse_duration_s("2w") == 14 * 86400);
  CHECK(*parse_duration_s("90s") == 90);
  CHECK(*parse_duration_s("3mo") == 90 * 86400);  // a cadence's month is 30 days
  CHECK(*parse_duration_s("1m") == 60);           // m stays minutes
  CHECK_FALSE(parse_duration_s("mo").ok());
  CHECK_FALSE(parse_duration_s("1.5mo").ok());
  // A bare number is refused with the accepted forms, never read as seconds.
  const auto bare = parse_duration_s("40");
  REQUIRE_FALSE(bare.ok());
  CHECK(bare.error().message.find("needs its unit") != std::string::npos);
  CHECK(bare.error().message.find("40d, 12h, 30m, 90s") != std::string::npos);
  CHECK_FALSE(parse_duration_s("-1d").ok());
  CHECK_FALSE(parse_duration_s("d").ok());
  CHECK_FALSE(parse_duration_s("99999999999999999999s").ok());
  CHECK_FALSE(parse_duration_s("10y").ok());
  CHECK(rfc3339(0) == "1970-01-01T00:00:00Z");
  CHECK(*parse_rfc3339("2026-11-02T03:00:00Z") == 1793588400);
  CHECK(rfc3339(1793588400) == "2026-11-02T03:00:00Z");
  CHECK(*parse_rfc3339("2026-11-02T05:00:00.25+02:00") == 1793588400);
  CHECK_FALSE(parse_rfc3339("2026-02-30T00:00:00Z").ok());
  CHECK_FALSE(parse_rfc3339("yesterday").ok());
}

// Found #2: an empty config file, or a directory passed as the config, was valid with all
// defaults (state_dir /var/lib/reverify, 0 sources) at start and on reload.
TEST_CASE(
    "an empty config, a directory, or one naming no state_dir (or, for reverifyd, no source) is "
    "refused") {
  for (const char* empty : {"", "\n", "# only a comment\n", "---\n"}) {
    CAPTURE(empty);
    CHECK(error_of(empty) ==
          "the config is empty (no settings at all): it must set at least "
          "state_dir and one source");
  }
  CHECK(error_of("sources: [{name: reg, kind: directory, root: registry}]") ==
        "state_dir: required: the folder of reverify.db, work/ and scratch/ (e.g. "
        "/var/lib/reverify)");
  CHECK(error_of("api: {port: 8421}").find("state_dir: required") != std::string::npos);

  // reverifyd also needs a source; `reverify run --config --registry DIR` does not.
  TempDir dir;
  for (const char* sourceless : {"state_dir: s\n", "state_dir: s\nsources: []\n"}) {
    const auto file = dir.write("sourceless.yaml", sourceless);
    CHECK(load_config(file).ok());
    auto daemon = load_daemon_config(file);
    REQUIRE_FALSE(daemon.ok());
    CHECK(daemon.error().message ==
          file.string() +
              ":\nsources: required: at least one registry source ({name, kind: "
              "directory | http-index, ...}); without one reverifyd has nothing to "
              "verify");
  }
  CHECK(load_daemon_config(dir.write("ok.yaml", kMinimalConfig)).ok());

  auto directory = load_config(dir.path);
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.error().message ==
        dir.path.string() + " is a directory, not a config file: name the YAML file");
  auto empty = load_config(dir.write("reverify.yaml", ""));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().message.find("the config is empty") != std::string::npos);
  auto missing = load_config(dir.path / "nope.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("cannot read config file") != std::string::npos);
}

// Found #3: duplicate YAML keys were accepted, the first value winning (`state_dir: state` then
// `state_dir: other` meant `state`).
TEST_CASE("a key given twice in any mapping is an error naming both lines") {
  CHECK(error_of(kMinimalConfig + "state_dir: other\n") ==
        "state_dir: duplicate key (line 3, first at line 1): a key may appear once per mapping");
  CHECK(error_of(kMinimalConfig + "api: {port: 1, port: 2}\n") ==
        "api.port: duplicate key (line 3, first at line 3): a key may appear once per mapping");
  const auto nested = error_of(R"(state_dir: s
sources:
  - name: a
    kind: directory
    root: r
    name: b
pager:
  routes: []
  routes: []
)");
  CHECK(nested ==
        "sources[0].name: duplicate key (line 6, first at line 3): a key may appear "
        "once per mapping\n"
        "pager.routes: duplicate key (line 9, first at line 8): a key may appear once "
        "per mapping");
  // An alias used many times is counted every time, so an alias bomb stops at the limit.
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'h'; ++level) {
    const char previous = static_cast<char>(level - 1);
    bomb += std::string(1, level) + ": &" + level + " [";
    for (int i = 0; i < 10; ++i)
      bomb += std::string(i ? ", *" : "*") + previous;
    bomb += "]\n";
  }
  CHECK(error_of(bomb).find("the document has more than 1000000 nodes") != std::string::npos);
}

TEST_CASE("a reload may not change state_dir, work_dir, the listen address or the runner") {
  const Config running = *parse_config(kMinimalConfig, "/etc/reverify");
  auto changes = [&](const std::string& yaml) {
    auto next = parse_config(yaml, "/etc/reverify");
    REQUIRE_MESSAGE(next.ok(), (next.ok() ? "" : next.error().message));
    return restart_only_changes(running, *next);
  };
  using Keys = std::vector<std::string>;
  CHECK(changes(kMinimalConfig).empty());
  CHECK(changes(kMinimalConfig + "schedule: {per_cycle: 3}\nsync_interval: 1m\n").empty());
  // The work and scratch folders live under state_dir unless set: they move with it.
  CHECK(changes("state_dir: /srv/other\nsources: [{name: reg, kind: directory, root: registry}]") ==
        Keys{"state_dir", "work_dir", "runner"});
  CHECK(changes(kMinimalConfig + "work_dir: /scratch\n") == Keys{"work_dir"});
  CHECK(changes(kMinimalConfig + "api: {address: 0.0.0.0, port: 9000}\n") ==
        Keys{"api.address", "api.port"});
  CHECK(changes(kMinimalConfig + "runner: {kind: docker}\n") == Keys{"runner"});
  CHECK(changes(kMinimalConfig + "runner: {process: {path_env: /opt/bin}}\n") == Keys{"runner"});
}

TEST_CASE("a reload names the settings it changes, by YAML path, never by value") {
  const Config running = *parse_config(
      kMinimalConfig + "schedule: {per_cycle: 3}\nsync_interval: 1m\n", "/etc/reverify");
  auto changed = [&](const std::string& yaml) {
    auto next = parse_config(yaml, "/etc/reverify");
    REQUIRE_MESSAGE(next.ok(), (next.ok() ? "" : next.error().message));
    return changed_settings(running, *next);
  };
  using Keys = std::vector<std::string>;
  // The same settings, written in another order and style: nothing changed.
  CHECK(changed("sync_interval: 1m\nschedule:\n  per_cycle: 3\n" + kMinimalConfig).empty());
  // Changed, set and removed, in path order; a list entry by its index.
  CHECK(changed(kMinimalConfig + "schedule: {per_cycle: 4, jitter: 5m}\n") ==
        Keys{"schedule.jitter", "schedule.per_cycle", "sync_interval"});
  CHECK(changed("state_dir: /var/lib/reverify\nsources: [{name: reg, kind: directory, root: "
                "other}]\nschedule: {per_cycle: 3}\nsync_interval: 1m\n") ==
        Keys{"sources[0].root"});
}

TEST_CASE("pager.public_url unset: the daemon's own api address, marked as the default") {
  auto loopback =
      parse_config(kMinimalConfig + "api: {address: 127.0.0.1, port: 9000}\n", "/etc/r");
  REQUIRE(loopback.ok());
  CHECK(loopback->pager.public_url == "http://127.0.0.1:9000");
  CHECK(loopback->pager.public_url_is_default);
  auto v6 = parse_config(kMinimalConfig + "api: {address: '::1', port: 9000}\n", "/etc/r");
  REQUIRE(v6.ok());
  CHECK(v6->pager.public_url == "http://[::1]:9000");
  auto every = parse_config(kMinimalConfig + "api: {address: 0.0.0.0, port: 9000}\n", "/etc/r");
  REQUIRE(every.ok());
  CHECK(every->pager.public_url.find("0.0.0.0") == std::string::npos);  // the host's name
  CHECK(every->pager.public_url.ends_with(":9000"));
  auto set =
      parse_config(kMinimalConfig + "pager: {public_url: 'https://reverify.example'}\n", "/etc/r");
  REQUIRE(set.ok());
  CHECK(set->pager.public_url == "https://reverify.example");
  CHECK_FALSE(set->pager.public_url_is_default);
}

TEST_CASE("a config file read from disk makes every suggested command name it") {
  TempDir dir;
  const fs::path path = dir.path / "my config.yaml";
  test::write_file(path, kMinimalConfig);
  auto reading = read_config_file(path);
  REQUIRE(reading.errors.empty());
  const std::string scope = "--config '" + path.string() + "'";
  CHECK(reading.config.verdict.command_scope == scope);
  CHECK(reading.config.api.command_scope == scope);
}
