// reverify.yaml: defaults, every error naming its YAML path, secrets only from files, and the
// shipped templates load.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <sys/stat.h>

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
  auto read_text = [](const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::string text = read_text(fs::path(source) / "config/production.yaml");
  REQUIRE_FALSE(text.empty());
  for (const char* key :
       {"/etc/reverify/api.token", "/etc/reverify/registry.token", "/etc/reverify/pagerduty.key"}) {
    for (auto pos = text.find(key); pos != std::string::npos; pos = text.find(key)) {
      text.replace(pos, std::string(key).size(), secret.string());
    }
  }
  // The attestation key must be a real Ed25519 key, private to its owner.
  auto key = dir.write("attest.pem", Ed25519SigningKey::generate().private_pem());
  ::chmod(key.c_str(), 0600);
  const std::string key_path = "/etc/reverify/attest-ed25519.pem";
  text.replace(text.find(key_path), key_path.size(), key.string());
  auto production = parse_config(text, dir.path);
  INFO((production.ok() ? "" : production.error().message));
  REQUIRE(production.ok());
  CHECK(production->sources.size() == 2);
  CHECK(production->runner.kind == "docker");
  CHECK(production->attestation.enabled());
  std::string demo_text = read_text(fs::path(source) / "config/demo.yaml");
  const std::string demo_key = "../out/demo/attest/ed25519.pem";  // scripts/demo.sh writes it
  REQUIRE(demo_text.find(demo_key) != std::string::npos);
  demo_text.replace(demo_text.find(demo_key), demo_key.size(), key.string());
  auto demo = parse_config(demo_text, fs::path(source) / "config");
  INFO((demo.ok() ? "" : demo.error().message));
  REQUIRE(demo.ok());
  CHECK(demo->attestation.enabled());
}

TEST_CASE("attestation: the signing key from a private file, a URI naming the verifier") {
  TempDir dir;
  auto key = Ed25519SigningKey::generate();
  auto file = dir.write("attest.pem", key.private_pem());
  ::chmod(file.c_str(), 0600);
  auto config = parse_config(R"(
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
  CHECK_FALSE(parse_config("", dir.path)->attestation.enabled());
  CHECK(parse_config("", dir.path)->attestation.identity.resource_uri_template ==
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
