// PagerDuty Events v2 and Slack senders against local receivers that check the payloads strictly
// and answer 202 / 200, 400, 429 or 500 on demand, driven through the Dispatcher and an outbox
// that follows the Outbox contract: retries happen exactly where they should, a page survives a
// receiver outage and arrives once, and no secret reaches a log line or a stored error.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "pager/dispatcher.hpp"
#include "pager/page_builder.hpp"
#include "pager/senders.hpp"
#include "tests/pager/http_receiver.hpp"
#include "tests/pager/memory_outbox.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::test::HttpReceiver;
using reverify::test::MemoryOutbox;
using reverify::test::ReceivedRequest;
using reverify::test::Reply;
using reverify::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kRoutingKey = "R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY42";  // 32 chars, like PagerDuty's

// Every rule of the Events API v2 schema we rely on; "" = valid.
std::string pagerduty_violation(const nlohmann::json& e) {
  static const std::set<std::string> kTop{"routing_key", "event_action", "dedup_key", "payload",
                                          "images",      "links",        "client",    "client_url"};
  static const std::set<std::string> kPayload{"summary",   "source", "severity", "timestamp",
                                              "component", "group",  "class",    "custom_details"};
  static const std::set<std::string> kSeverities{"critical", "error", "warning", "info"};
  if (!e.is_object())
    return "not an object";
  for (const auto& [key, value] : e.items()) {
    if (!kTop.contains(key))
      return "unknown field " + key;
  }
  if (!e.contains("routing_key") || !e["routing_key"].is_string() ||
      e["routing_key"].get<std::string>().size() != 32) {
    return "routing_key must be a 32-character string";
  }
  const std::string action = e.value("event_action", "");
  if (action != "trigger" && action != "acknowledge" && action != "resolve") {
    return "event_action must be trigger, acknowledge or resolve";
  }
  if (e.contains("dedup_key") &&
      (!e["dedup_key"].is_string() || e["dedup_key"].get<std::string>().size() > 255)) {
    return "dedup_key must be a string of at most 255 characters";
  }
  if (action != "trigger")
    return e.contains("dedup_key") ? "" : "dedup_key required";
  if (!e.contains("payload") || !e["payload"].is_object())
    return "payload required";
  const auto& p = e["payload"];
  for (const auto& [key, value] : p.items()) {
    if (!kPayload.contains(key))
      return "unknown payload field " + key;
  }
  if (!p.contains("summary") || !p["summary"].is_string() ||
      p["summary"].get<std::string>().empty() || p["summary"].get<std::string>().size() > 1024) {
    return "payload.summary must be 1..1024 characters";
  }
  if (!p.contains("source") || !p["source"].is_string() || p["source"].get<std::string>().empty()) {
    return "payload.source required";
  }
  if (!p.contains("severity") || !kSeverities.contains(p.value("severity", ""))) {
    return "payload.severity must be critical, error, warning or info";
  }
  if (p.contains("timestamp") &&
      !std::regex_match(p["timestamp"].get<std::string>(),
                        std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d))"))) {
    return "payload.timestamp must be ISO 8601";
  }
  if (p.contains("custom_details") && !p["custom_details"].is_object()) {
    return "payload.custom_details must be an object";
  }
  if (e.contains("links")) {
    for (const auto& link : e["links"]) {
      if (!link.contains("href") || !link["href"].is_string())
        return "links[].href required";
    }
  }
  return "";
}

// Block Kit rules for an incoming webhook message; "" = valid.
std::string slack_violation(const nlohmann::json& m) {
  if (!m.is_object() || !m.contains("text") || !m["text"].is_string())
    return "text required";
  if (!m.contains("blocks") || !m["blocks"].is_array() || m["blocks"].size() > 50) {
    return "blocks must be an array of at most 50";
  }
  for (const auto& b : m["blocks"]) {
    const std::string type = b.value("type", "");
    if (type == "header") {
      if (b["text"].value("type", "") != "plain_text" ||
          b["text"]["text"].get<std::string>().size() > 150) {
        return "header text must be plain_text of at most 150 characters";
      }
    } else if (type == "section") {
      if (b["text"]["text"].get<std::string>().size() > 3000)
        return "section text over 3000";
    } else if (type == "context") {
      if (!b["elements"].is_array() || b["elements"].size() > 10)
        return "context elements";
    } else {
      return "unexpected block type " + type;
    }
  }
  return "";
}

// A receiver that first answers with the forced statuses, then validates and answers for real.
struct StrictReceiver {
  using Validator = std::function<std::string(const nlohmann::json&)>;
  StrictReceiver(Validator validate, unsigned ok_status, std::string ok_body,
                 std::uint16_t port = 0)
      : server(
            [this, validate, ok_status, ok_body](const ReceivedRequest& r) -> Reply {
              std::this_thread::sleep_for(answer_delay);  // a slow receiver, when set
              std::lock_guard lock(mutex);
              if (!forced.empty()) {
                Reply reply = forced.front();
                forced.pop_front();
                return reply;
              }
              const auto body = nlohmann::json::parse(r.body, nullptr, false);
              if (r.content_type != "application/json")
                return {400, "content type"};
              if (auto why = validate(body); !why.empty()) {
                violations.push_back(why);
                return {400, why};
              }
              accepted.push_back(body);
              accepted_changed.notify_all();
              return {ok_status, ok_body};
            },
            port) {}

  std::mutex mutex;
  std::chrono::milliseconds answer_delay{0};  // set before the first request
  std::deque<Reply> forced;
  std::vector<nlohmann::json> accepted;
  std::condition_variable accepted_changed;
  std::vector<std::string> violations;
  HttpReceiver server;

  // Waits, holding `lock` on return, until `count` bodies are accepted (a slow answer is recorded
  // after the sender has stopped waiting for it) or 30 s pass.
  bool wait_accepted(std::unique_lock<std::mutex>& lock, std::size_t count) {
    return accepted_changed.wait_for(lock, std::chrono::seconds(30),
                                     [&] { return accepted.size() >= count; });
  }
};

PageEvent failing_page(const std::string& version = "2026.11.1") {
  PageInput in;
  in.model = "digits-mlp";
  in.version = version;
  in.owner = "team-vision";
  in.verdict.cls = VerdictClass::failed_out_of_tolerance;
  CheckResult c;
  c.name = "primary:accuracy";
  c.outcome = CheckOutcome::failed;
  c.observed = 0.90;
  c.reference = 0.96;
  c.band = CheckBand{0.957, 0.963};
  c.margin = -0.057;
  in.verdict.checks = {c};
  in.log_tail = "step 100 loss 0.2";
  in.public_url = "https://reverify.example";
  in.verification_id = 9;
  in.created_at = "2026-11-29T08:00:00Z";
  return build_page(in);
}

PageEvent passing_page() {
  PageEvent e = failing_page();
  e.action = PageAction::resolve;
  e.cls = VerdictClass::passed;
  e.summary = "digits-mlp@2026.11.1 verified: 1/1 checks inside tolerance";
  return e;
}

// A sender as the `pager.senders` section would configure it.
SenderConfig sender(const std::string& name, SenderKind kind, const std::string& url = "") {
  SenderConfig config;
  config.name = name;
  config.kind = kind;
  config.url = url;
  return config;
}

SenderConfig pagerduty_sender(const std::string& url, const std::string& routing_key_file) {
  auto config = sender("pd", SenderKind::pagerduty, url);
  config.routing_key_file = routing_key_file;
  return config;
}

SenderConfig slack_sender(const std::string& url_file) {
  auto config = sender("chat", SenderKind::slack);
  config.url_file = url_file;
  return config;
}

SenderConfig webhook_sender(const std::string& url, const std::string& token_file) {
  auto config = sender("hook", SenderKind::webhook, url);
  config.token_file = token_file;
  return config;
}

struct Harness {
  TempDir dir{"pager-itest-"};
  MemoryOutbox outbox{RetryPolicy{std::chrono::seconds(30), std::chrono::seconds(3600), 100}};
  std::vector<std::string> log;
  std::unique_ptr<Dispatcher> dispatcher;

  void senders(const std::vector<SenderConfig>& configs) {
    PagerConfig config;
    for (const auto& sender : configs)
      config.senders.emplace(sender.name, sender);
    auto notifiers = make_notifiers(config);
    REQUIRE(notifiers.ok());
    dispatcher = std::make_unique<Dispatcher>(
        outbox, *notifiers,
        [this](LogLevel, const std::string& l, const LogFields&) { log.push_back(l); });
  }
  std::string secret_file(const std::string& name, const std::string& content) {
    std::ofstream(dir.path / name) << content << "\n";
    return (dir.path / name).string();
  }
  DrainStats drain(std::int64_t at_s) {
    outbox.now = at_s;
    auto stats = dispatcher->drain_once(PageClock::time_point{} + std::chrono::seconds(at_s));
    REQUIRE(stats.ok());
    return *stats;
  }
};

}  // namespace

TEST_CASE("PagerDuty: a failure triggers and a pass resolves, both schema-valid, 202 accepted") {
  StrictReceiver pd(pagerduty_violation, 202,
                    R"({"status":"success","message":"Event processed"})");
  Harness h;
  h.senders({pagerduty_sender(pd.server.url("/v2/enqueue"), h.secret_file("pd.key", kRoutingKey))});
  h.outbox.record(failing_page(), {"pd"});
  h.outbox.record(passing_page(), {"pd"});
  CHECK(h.drain(0).delivered == 1);
  CHECK(h.drain(0).delivered == 1);  // the resolve waited for its trigger
  CHECK(h.drain(100).delivered == 0);
  CHECK(pd.violations.empty());
  REQUIRE(pd.accepted.size() == 2);
  CHECK(pd.accepted[0]["event_action"] == "trigger");
  CHECK(pd.accepted[0]["dedup_key"] == "reverify/digits-mlp/2026.11.1");
  CHECK(pd.accepted[0]["payload"]["severity"] == "error");
  CHECK(pd.accepted[0]["payload"]["custom_details"]["failed_checks"][0]["name"] ==
        "primary:accuracy");
  CHECK(pd.accepted[1]["event_action"] == "resolve");
  CHECK(pd.accepted[1]["dedup_key"] == "reverify/digits-mlp/2026.11.1");
  CHECK(pd.server.requests()[0].target == "/v2/enqueue");
}

TEST_CASE("PagerDuty: 429 and 500 are retried with backoff, 400 never") {
  StrictReceiver pd(pagerduty_violation, 202, "{}");
  Harness h;
  h.senders({pagerduty_sender(pd.server.url("/v2/enqueue"), h.secret_file("pd.key", kRoutingKey))});
  pd.forced = {{429, R"({"status":"throttle"})"}, {500, "oops"}};
  const auto retried = h.outbox.record(failing_page(), {"pd"});
  CHECK(h.drain(0).retrying == 1);   // 429
  CHECK(h.drain(29).retrying == 0);  // backing off: no request
  CHECK(h.drain(30).retrying == 1);  // 500
  CHECK(h.drain(89).retrying == 0);
  CHECK(h.drain(90).delivered == 1);  // 202
  CHECK(pd.server.requests().size() == 3);
  CHECK(h.outbox.row(retried, "pd").state == "sent");

  pd.forced = {{400, R"({"status":"invalid event","errors":["bad"]})"}};
  const auto rejected = h.outbox.record(failing_page("2026.12.1"), {"pd"});
  CHECK(h.drain(100).failed == 1);
  for (std::int64_t t : {200, 10'000, 1'000'000})
    CHECK(h.drain(t).retrying == 0);
  CHECK(pd.server.requests().size() == 4);  // exactly one attempt for the 400
  CHECK(h.outbox.row(rejected, "pd").state == "failed");
  CHECK(h.log.back().find(R"(rejected for good: pagerduty pd)") != std::string::npos);
  CHECK(h.log.back().find(R"(HTTP 400: {"status":"invalid event","errors":["bad"]})") !=
        std::string::npos);

  // A body the receiver finds too large (413) or cannot process (422) is as bad as a 400.
  std::size_t requests = pd.server.requests().size();
  std::int64_t now = 1'000'100;
  for (const auto& [status, version] : {std::pair{413u, "2026.12.2"}, {422u, "2026.12.3"}}) {
    CAPTURE(status);
    pd.forced = {{status, "no"}};
    const auto page = h.outbox.record(failing_page(version), {"pd"});
    CHECK(h.drain(now).failed == 1);
    CHECK(h.drain(now + 10'000).retrying == 0);
    CHECK(pd.server.requests().size() == ++requests);  // one attempt, never retried
    CHECK(h.outbox.row(page, "pd").state == "failed");
    CHECK(h.log.back().find("HTTP " + std::to_string(status) + ": no") != std::string::npos);
    now += 20'000;
  }
}

TEST_CASE("Slack: blocks accepted; 429 and 500 retried, 400 never") {
  StrictReceiver slack(slack_violation, 200, "ok");
  Harness h;
  h.senders({slack_sender(
      h.secret_file("slack.url", slack.server.url("/services/T000/B000/SECRETPATH")))});
  slack.forced = {{429, "rate_limited"}, {500, "error"}};
  const auto page = h.outbox.record(failing_page(), {"chat"});
  CHECK(h.drain(0).retrying == 1);
  CHECK(h.drain(30).retrying == 1);
  CHECK(h.drain(90).delivered == 1);
  CHECK(slack.violations.empty());
  REQUIRE(slack.accepted.size() == 1);
  CHECK(slack.accepted[0]["blocks"][0]["text"]["text"] ==
        "Rebuild failed: digits-mlp@2026.11.1 (failed:out-of-tolerance)");
  CHECK(h.outbox.row(page, "chat").state == "sent");

  slack.forced = {{400, "invalid_payload"}};
  const auto rejected = h.outbox.record(failing_page("2"), {"chat"});
  CHECK(h.drain(100).failed == 1);
  CHECK(h.drain(100'000).retrying == 0);
  CHECK(h.outbox.row(rejected, "chat").state == "failed");
  CHECK(slack.server.requests().size() == 4);
}

TEST_CASE("a receiver down for a while, then up: the page arrives once") {
  std::uint16_t port = 0;
  {
    StrictReceiver probe(pagerduty_violation, 202, "{}");
    port = probe.server.port();
  }  // now nothing listens there
  Harness h;
  h.senders({pagerduty_sender("http://127.0.0.1:" + std::to_string(port) + "/v2/enqueue",
                              h.secret_file("pd.key", kRoutingKey))});
  const auto page = h.outbox.record(failing_page(), {"pd"});
  CHECK(h.drain(0).retrying == 1);
  CHECK(h.drain(30).retrying == 1);
  CHECK(h.outbox.row(page, "pd").last_error.find("pagerduty pd") != std::string::npos);

  StrictReceiver pd(pagerduty_violation, 202, "{}", port);  // back up on the same port
  CHECK(h.drain(89).delivered == 0);
  CHECK(h.drain(90).delivered == 1);
  for (std::int64_t t : {91, 1000, 100'000})
    CHECK(h.drain(t).delivered == 0);
  CHECK(pd.accepted.size() == 1);
  CHECK(pd.server.requests().size() == 1);
}

// Found #6: with a receiver answering in 4 s and a sender timeout of 3 s, PagerDuty got the page
// on every attempt and reverify marked the delivery failed. Here the receiver answers in 1.5 s
// and the timeout is 1 s.
TEST_CASE("a receiver slower than the sender's timeout: PagerDuty merges, Slack gets one post") {
  StrictReceiver pd(pagerduty_violation, 202, "{}");
  pd.answer_delay = std::chrono::milliseconds(1500);
  StrictReceiver slack(slack_violation, 200, "ok");
  slack.answer_delay = std::chrono::milliseconds(1500);
  Harness h;
  auto pd_sender =
      pagerduty_sender(pd.server.url("/v2/enqueue"), h.secret_file("pd.key", kRoutingKey));
  auto chat_sender =
      slack_sender(h.secret_file("slack.url", slack.server.url("/services/T000/B000/SECRETPATH")));
  pd_sender.timeout = chat_sender.timeout = std::chrono::seconds(1);
  h.senders({pd_sender, chat_sender});
  const auto page = h.outbox.record(failing_page(), {"pd", "chat"});
  const auto first = h.drain(0);
  CHECK(first.retrying == 1);   // pd: unconfirmed, and PagerDuty merges copies by dedup_key
  CHECK(first.delivered == 1);  // chat: unconfirmed, and Slack would post a copy: counted sent
  // The second attempt waits 2 s for the answer: the slow receiver answers within it.
  CHECK(h.drain(30).delivered == 1);
  for (std::int64_t t : {100, 10'000, 1'000'000}) {
    const auto later = h.drain(t);
    CHECK(later.delivered + later.retrying + later.failed == 0);
  }
  CHECK(h.outbox.row(page, "pd").state == "sent");
  CHECK(h.outbox.row(page, "chat").state == "sent");
  // PagerDuty got two copies with one dedup_key: one alert. Slack got one post.
  std::unique_lock lock(pd.mutex);
  REQUIRE(pd.wait_accepted(lock, 2));
  REQUIRE(pd.accepted.size() == 2);
  CHECK(pd.accepted[0]["dedup_key"] == pd.accepted[1]["dedup_key"]);
  CHECK(slack.server.requests().size() == 1);
  CHECK(std::count_if(h.log.begin(), h.log.end(), [](const std::string& line) {
          return line.find("to pd: attempt 1 unconfirmed") != std::string::npos;
        }) == 1);
}

TEST_CASE("secrets never reach a log line or a stored error") {
  // A hostile receiver that echoes the request body (with the routing key) in its 400 answer,
  // and a Slack webhook whose URL (a secret) is unreachable, so libcurl's error names it.
  HttpReceiver echo([](const ReceivedRequest& r) { return Reply{400, r.body}; });
  std::uint16_t closed_port = 0;
  {
    HttpReceiver probe([](const ReceivedRequest&) { return Reply{}; });
    closed_port = probe.port();
  }
  const std::string slack_url =
      "http://127.0.0.1:" + std::to_string(closed_port) + "/services/T0/B0/XOXSECRETPATH";
  Harness h;
  h.senders(
      {pagerduty_sender(echo.url("/v2/enqueue"), h.secret_file("pd.key", kRoutingKey)),
       slack_sender(h.secret_file("slack.url", slack_url)),
       webhook_sender(echo.url("/hook"), h.secret_file("hook.token", "T0KENVALUE-T0KENVALUE"))});
  const auto page = h.outbox.record(failing_page(), {"pd", "chat", "hook"});
  h.drain(0);
  REQUIRE(echo.requests().size() == 2);
  CHECK(echo.requests()[0].body.find(kRoutingKey) != std::string::npos);  // it was sent...
  CHECK(echo.requests()[1].authorization == "Bearer T0KENVALUE-T0KENVALUE");
  REQUIRE(h.log.size() == 3);
  for (const auto& line : h.log) {  // ...but never logged or stored
    CHECK(line.find(kRoutingKey) == std::string::npos);
    CHECK(line.find("XOXSECRETPATH") == std::string::npos);
    CHECK(line.find("T0KENVALUE-T0KENVALUE") == std::string::npos);
  }
  for (const char* sender : {"pd", "chat", "hook"}) {
    const auto& error = h.outbox.row(page, sender).last_error;
    CHECK_FALSE(error.empty());
    CHECK(error.find(kRoutingKey) == std::string::npos);
    CHECK(error.find("XOXSECRETPATH") == std::string::npos);
  }
  CHECK(h.outbox.row(page, "chat").state == "pending");  // unreachable: retried later
}
