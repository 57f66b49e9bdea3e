// The `pager:` section of reverify.yaml, read by the same Section reader as every other section:
// typed values, every error with its YAML path, all of them in one pass.

#include <doctest/doctest.h>

#include "settings/config.hpp"
#include "tests/support/minimal_config.hpp"
#include "tests/support/text_search.hpp"

using namespace reverify;

using reverify::test::has_line;
using reverify::test::kMinimalConfig;

namespace {

// What every config must name (state_dir, a source), so the errors below are the pager's alone.

Result<PagerConfig> parse(const std::string& yaml) {
  auto config = parse_config(kMinimalConfig + yaml, "/etc/reverify");
  if (!config.ok())
    return config.error();
  return config->pager;
}

std::string pager_error_of(const std::string& yaml) {
  auto config = parse(yaml);
  REQUIRE_FALSE(config.ok());
  return config.error().message;
}

const char* kGood = R"(
pager:
  public_url: https://reverify.example/
  senders:
    pd: {kind: pagerduty, routing_key_file: /etc/reverify/pd.key, severity: {error: info}}
    am: {kind: alertmanager, url: "http://127.0.0.1:9093", resend_interval: 2m, timeout: 5s}
    chat: {kind: slack, url_file: slack.url}
    hook: {kind: webhook, url: "https://hooks.example/reverify", token_file: hook.token}
    sink: {kind: file, path: pages.jsonl}
  routes:
    - {owner: team-vision, senders: [pd, chat], notify_on_pass: true}
    - {owner: "*", senders: [am, sink]}
  retry: {initial: 10s, max_backoff: 10m, max_attempts: 7}
)";

}  // namespace

TEST_CASE("a complete pager section parses into typed values with defaults") {
  auto config = parse(kGood);
  REQUIRE(config.ok());
  CHECK(config->public_url == "https://reverify.example");
  REQUIRE(config->senders.size() == 5);
  const auto& pd = config->senders.at("pd");
  CHECK(pd.kind == SenderKind::pagerduty);
  CHECK(pd.url == "https://events.pagerduty.com/v2/enqueue");
  CHECK(pd.routing_key_file == "/etc/reverify/pd.key");
  CHECK(pd.severity.failed == "error");
  CHECK(pd.severity.error == "info");
  const auto& am = config->senders.at("am");
  CHECK(am.resend_interval == std::chrono::seconds(120));
  CHECK(am.timeout == std::chrono::seconds(5));
  CHECK(config->senders.at("chat").url_file == "/etc/reverify/slack.url");
  CHECK(config->senders.at("sink").path == "/etc/reverify/pages.jsonl");
  REQUIRE(config->routes.size() == 2);
  CHECK(config->routes[0].owner == "team-vision");
  CHECK(config->routes[0].senders == std::vector<std::string>{"pd", "chat"});
  CHECK(config->routes[0].notify_on_pass);
  CHECK_FALSE(config->routes[1].notify_on_pass);
  CHECK(config->retry.initial == std::chrono::seconds(10));
  CHECK(config->retry.max_backoff == std::chrono::seconds(600));
  CHECK(config->retry.max_attempts == 7);
}

TEST_CASE("relative secret and sink paths resolve against the config folder") {
  auto config = parse(kGood);
  REQUIRE(config.ok());
  CHECK(config->senders.at("chat").url_file == "/etc/reverify/slack.url");
  CHECK(config->senders.at("hook").token_file == "/etc/reverify/hook.token");
  CHECK(config->senders.at("sink").path == "/etc/reverify/pages.jsonl");
  CHECK(config->senders.at("pd").routing_key_file == "/etc/reverify/pd.key");
}

TEST_CASE("a missing pager section is an empty config") {
  auto config = parse("sync_interval: 10m\n");
  REQUIRE(config.ok());
  CHECK(config->senders.empty());
  CHECK(config->routes.empty());
}

TEST_CASE("errors name the YAML path and what was expected") {
  CHECK(pager_error_of(R"(
pager:
  senders: {pd: {kind: pagerduty, routing_key_file: k}}
  routes:
    - {owner: a, senders: [pd]}
    - {owner: b, senders: [pd]}
    - {owner: c, senders: [pdx]}
)") == "pager.routes[2].senders[0]: unknown sender \"pdx\"");
  CHECK(pager_error_of("pager: {senders: {x: {kind: sms}}}") ==
        "pager.senders.x.kind: expected pagerduty, alertmanager, slack, webhook or file, got "
        "\"sms\"");
  CHECK(pager_error_of("pager: {senders: {pd: {kind: pagerduty}}}") ==
        "pager.senders.pd.routing_key_file: required for a pagerduty sender");
  CHECK(pager_error_of("pager: {senders: {am: {kind: alertmanager, url: x}}}") ==
        "pager.senders.am.url: expected an http:// or https:// URL, got \"x\"");
  CHECK(pager_error_of("pager: {senders: {f: {kind: file, path: p, colour: red}}}") ==
        "pager.senders.f.colour: unknown key (expected one of: kind, path, severity, timeout)");
  CHECK(
      pager_error_of(
          "pager: {senders: {pd: {kind: pagerduty, routing_key_file: k, severity: {failed: "
          "loud}}}}") ==
      "pager.senders.pd.severity.failed: expected critical, error, warning or info, got \"loud\"");
  CHECK(pager_error_of("pager: {retry: {initial: 1h, max_backoff: 1m}}") ==
        "pager.retry.max_backoff: must not be shorter than pager.retry.initial");
  CHECK(pager_error_of("pager: {retry: {max_attempts: 0}}") ==
        "pager.retry.max_attempts: must be >= 1, got 0");
  CHECK(pager_error_of(
            "pager: {senders: {f: {kind: file, path: p}}, routes: [{owner: a, senders: []}]}") ==
        "pager.routes[0].senders: expected a non-empty list of sender names");
  CHECK(pager_error_of(
            "pager: {senders: {f: {kind: file, path: p}}, routes: [{owner: a, senders: [f]}, "
            "{owner: a, senders: [f]}]}") ==
        "pager.routes[1].owner: \"a\" is already routed by pager.routes[0]");
  CHECK(pager_error_of(
            "pager: {senders: {f: {kind: file, path: p}}, routes: [{owner: ../x, senders: [f]}]}")
            .starts_with("pager.routes[0].owner: expected \"*\" or a name"));
  CHECK(pager_error_of(
            "pager: {senders: {am: {kind: alertmanager, url: 'http://a', resend_interval: 0s}}}") ==
        "pager.senders.am.resend_interval: must be longer than 0s, got \"0s\"");
}

TEST_CASE("secrets are accepted only through *_file keys") {
  CHECK(has_line(pager_error_of("pager: {senders: {pd: {kind: pagerduty, routing_key: R0123}}}"),
                 "pager.senders.pd.routing_key: secrets are read from files only; use "
                 "routing_key_file"));
  CHECK(pager_error_of("pager: {senders: {h: {kind: webhook, url: 'http://a', token: T}}}") ==
        "pager.senders.h.token: secrets are read from files only; use token_file");
  CHECK(has_line(
      pager_error_of(
          "pager: {senders: {s: {kind: slack, url: 'https://hooks.slack.com/services/T/B/X'}}}"),
      "pager.senders.s.url: a Slack webhook URL is a secret; put it in a file named by url_file"));
  // The secret itself never appears in the message.
  CHECK(pager_error_of("pager: {senders: {pd: {kind: pagerduty, routing_key: R0123}}}")
            .find("R0123") == std::string::npos);
}

TEST_CASE("every pager error is reported in the same pass as the rest of the file") {
  const auto message = pager_error_of(R"(
schedule: {per_cycle: 0}
pager:
  senders:
    x: {kind: sms}
    pd: {kind: pagerduty}
  routes:
    - {owner: a, senders: [nope]}
  retry: {max_attempts: 0}
  colour: red
)");
  CHECK(has_line(message, "schedule.per_cycle: must be >= 1, got 0"));
  CHECK(has_line(message,
                 "pager.senders.x.kind: expected pagerduty, alertmanager, slack, "
                 "webhook or file, got \"sms\""));
  CHECK(has_line(message, "pager.senders.pd.routing_key_file: required for a pagerduty sender"));
  CHECK(has_line(message, "pager.routes[0].senders[0]: unknown sender \"nope\""));
  CHECK(has_line(message, "pager.retry.max_attempts: must be >= 1, got 0"));
  CHECK(message.find("pager.colour: unknown key") != std::string::npos);
}

TEST_CASE("pager.operator_owner: the \"*\" route (else the first) unless set to a routed owner") {
  CHECK(parse(kGood)->operator_owner == "*");
  auto named = parse(std::string(kGood) + "  operator_owner: team-vision\n");
  REQUIRE(named.ok());
  CHECK(named->operator_owner == "team-vision");
  // Any owner is routed while a "*" route exists; without one, an unrouted name is refused.
  CHECK(parse(std::string(kGood) + "  operator_owner: platform-oncall\n").ok());
  const std::string no_default = R"(
pager:
  senders: {sink: {kind: file, path: pages.jsonl}}
  routes: [{owner: team-vision, senders: [sink]}]
)";
  CHECK(parse(no_default)->operator_owner == "team-vision");  // unset: the first route
  CHECK(has_line(pager_error_of(no_default + "  operator_owner: platform-oncall\n"),
                 "pager.operator_owner: no route takes \"platform-oncall\" (name one in "
                 "pager.routes, or add a \"*\" route)"));
  CHECK(has_line(pager_error_of(no_default + "  operator_owner: \"\"\n"),
                 "pager.operator_owner: must not be empty"));
}
