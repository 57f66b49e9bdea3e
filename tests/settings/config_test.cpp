// reverify.yaml: defaults, every error naming its YAML path, secrets only from files, and the
// shipped templates load.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/unix_time.hpp"
#include "settings/config.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string error_of(const std::string& yaml, const fs::path& base = "/etc/reverify") {
  auto config = parse_config(yaml, base);
  REQUIRE_FALSE(config.ok());
  return config.error().message;
}

}  // namespace

TEST_CASE("an empty file gives the documented defaults") {
  auto config = parse_config("", "/etc/reverify");
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
  CHECK(config->runner.kind == "process");
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
  CHECK(message.find("sources[0].kind: expected directory or http-index, got \"ftp\"") !=
        std::string::npos);
  CHECK(message.find("verdict.false_page_rate: must be in (0, 1)") != std::string::npos);
  CHECK(message.find("runner.kind: expected process, docker or kubernetes, got \"vm\"") !=
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

TEST_CASE("secrets come only from *_file keys, are read at load and trimmed") {
  TempDir dir;
  dir.write("api.token", "s3cret-token\n");
  auto config = parse_config("api: {token_file: api.token}", dir.path);
  REQUIRE(config.ok());
  CHECK(config->api.token == "s3cret-token");
  // Every token read is on the list the API redacts from its responses.
  CHECK(std::find(config->api.secrets.begin(), config->api.secrets.end(), "s3cret-token") !=
        config->api.secrets.end());
  auto inline_secret = error_of("api: {token: s3cret}", dir.path);
  CHECK(inline_secret.find("api.token: secrets are not accepted inline") != std::string::npos);
  CHECK(inline_secret.find("s3cret") == std::string::npos);  // never echoed
  CHECK(
      error_of("api: {token_file: missing.token}", dir.path).find("api.token_file: cannot read") !=
      std::string::npos);
}

TEST_CASE("pager errors come from the pager section's parser with their path") {
  auto message = error_of("pager: {routes: [{owner: '*', senders: [nope]}]}");
  CHECK(message.find("pager.routes[0].senders[0]") != std::string::npos);
}

TEST_CASE("the shipped production template and demo config load") {
  const char* source = std::getenv("REVERIFY_SOURCE_DIR");
  REQUIRE(source != nullptr);
  // The production template names secret files that exist only on a server: check everything
  // else by pointing those keys at a temporary file.
  TempDir dir;
  auto secret = dir.write("secret", "x\n");
  std::ifstream in(fs::path(source) / "config/production.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(text.empty());
  for (const char* key :
       {"/etc/reverify/api.token", "/etc/reverify/registry.token", "/etc/reverify/pagerduty.key"}) {
    for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key)) {
      text.replace(pos, std::string(key).size(), secret.string());
    }
  }
  auto production = parse_config(text, dir.path);
  INFO((production.ok() ? "" : production.error().message));
  REQUIRE(production.ok());
  CHECK(production->sources.size() == 2);
  CHECK(production->runner.kind == "docker");
  auto demo = load_config(fs::path(source) / "config/demo.yaml");
  INFO((demo.ok() ? "" : demo.error().message));
  CHECK(demo.ok());
}

TEST_CASE("durations and times") {
  CHECK(*parse_duration_s("40d") == 40 * 86400);
  CHECK(*parse_duration_s("2w") == 14 * 86400);
  CHECK(*parse_duration_s("90") == 90);
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
