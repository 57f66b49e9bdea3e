#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/redact.hpp"
#include "pager/alertmanager_sender.hpp"
#include "pager/file_sender.hpp"
#include "pager/pagerduty_sender.hpp"
#include "pager/sender_http.hpp"
#include "pager/senders.hpp"
#include "pager/slack_sender.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::test::TempDir;
namespace fs = std::filesystem;

namespace {

PageEvent failing_event() {
  PageEvent e;
  e.id = 3;
  e.dedup_key = "reverify/digits-mlp/2026.11.1";
  e.action = PageAction::trigger;
  e.model = "digits-mlp";
  e.version = "2026.11.1";
  e.owner = "team-vision";
  e.cls = VerdictClass::failed_out_of_tolerance;
  e.fault = PageFault::model;
  e.summary = "digits-mlp@2026.11.1 failed:out-of-tolerance — <accuracy> & more";
  e.explanation = "accuracy left its band";
  e.details = {{"explanation", "accuracy left its band"}, {"log_tail", "tail"}};
  e.links = {{"status page", "https://reverify.example/"}};
  e.created_at = "2026-11-29T08:00:00Z";
  return e;
}

SenderConfig config(SenderKind kind) {
  SenderConfig c;
  c.name = "s";
  c.kind = kind;
  return c;
}

// The file sink "sink" writing dir/pages.jsonl.
SenderConfig file_sink(const TempDir& dir) {
  SenderConfig sink = config(SenderKind::file);
  sink.name = "sink";
  sink.path = (dir.path / "pages.jsonl").string();
  return sink;
}

}  // namespace

TEST_CASE("PagerDuty trigger: Events v2 fields, severity by whose fault it is") {
  auto body = pagerduty_event(failing_event(), config(SenderKind::pagerduty), "R0UTINGKEY");
  CHECK(body["routing_key"] == "R0UTINGKEY");
  CHECK(body["event_action"] == "trigger");
  CHECK(body["dedup_key"] == "reverify/digits-mlp/2026.11.1");
  CHECK(body["payload"]["summary"] == failing_event().summary);
  CHECK(body["payload"]["source"] == "reverify");
  CHECK(body["payload"]["severity"] == "error");
  CHECK(body["payload"]["timestamp"] == "2026-11-29T08:00:00Z");
  CHECK(body["payload"]["custom_details"]["explanation"] == "accuracy left its band");
  CHECK(body["links"][0]["href"] == "https://reverify.example/");

  auto error_event = failing_event();
  error_event.cls = VerdictClass::error_provision;
  CHECK(pagerduty_event(error_event, config(SenderKind::pagerduty), "k")["payload"]["severity"] ==
        "warning");
}

TEST_CASE("PagerDuty resolve carries only the key fields") {
  auto event = failing_event();
  event.action = PageAction::resolve;
  auto body = pagerduty_event(event, config(SenderKind::pagerduty), "k");
  CHECK(body == nlohmann::json{{"routing_key", "k"},
                               {"event_action", "resolve"},
                               {"dedup_key", "reverify/digits-mlp/2026.11.1"}});
}

TEST_CASE("PagerDuty events stay under 512 KB, shedding the log tail first") {
  auto event = failing_event();
  event.details["log_tail"] = std::string(600 * 1024, 'x');
  event.details["failed_checks"] = nlohmann::json::array({{{"name", "primary:accuracy"}}});
  auto body = pagerduty_event(event, config(SenderKind::pagerduty), "k");
  CHECK(body.dump().size() < kPagerDutyMaxBytes);
  CHECK_FALSE(body["payload"]["custom_details"].contains("log_tail"));
  CHECK(body["payload"]["custom_details"]["truncated"] == true);
  CHECK(body["payload"]["custom_details"]["failed_checks"].size() == 1);
}

TEST_CASE("Alertmanager alert: labels identify the model version, annotations explain") {
  const auto ends = std::chrono::system_clock::time_point{} + std::chrono::seconds(1'795'000'000);
  auto alert = alertmanager_alert(failing_event(), config(SenderKind::alertmanager), ends);
  CHECK(alert["labels"] == nlohmann::json{{"alertname", kAlertName},
                                          {"model", "digits-mlp"},
                                          {"version", "2026.11.1"},
                                          {"owner", "team-vision"},
                                          {"class", "failed:out-of-tolerance"},
                                          {"severity", "error"}});
  CHECK(alert["annotations"]["summary"] == failing_event().summary);
  CHECK(alert["annotations"]["description"] == "accuracy left its band");
  CHECK(alert["annotations"]["links"] == "status page: https://reverify.example/");
  CHECK(alert["startsAt"] == "2026-11-29T08:00:00Z");
  CHECK(alert["endsAt"] == "2026-11-18T11:06:40Z");
  CHECK(alert["generatorURL"] == "https://reverify.example/");
}

TEST_CASE("Slack message: header, escaped mrkdwn, links, within Block Kit limits") {
  auto message = slack_message(failing_event());
  REQUIRE(message["blocks"].size() == 3);
  CHECK(message["blocks"][0]["type"] == "header");
  CHECK(message["blocks"][0]["text"]["text"] ==
        "Rebuild failed: digits-mlp@2026.11.1 (failed:out-of-tolerance)");
  const std::string section = message["blocks"][1]["text"]["text"];
  CHECK(section.find("&lt;accuracy&gt; &amp; more") != std::string::npos);
  CHECK(section.find("*Whose problem:* the model's") != std::string::npos);
  CHECK(message["blocks"][2]["elements"][0]["text"] == "<https://reverify.example/|status page>");
  CHECK(message["text"].get<std::string>().starts_with("Rebuild failed: digits-mlp@2026.11.1"));

  auto long_event = failing_event();
  long_event.model = std::string(128, 'm');
  long_event.summary = std::string(5000, 's');
  auto long_message = slack_message(long_event);
  CHECK(long_message["blocks"][0]["text"]["text"].get<std::string>().size() <= kSlackHeaderMax);
  CHECK(long_message["blocks"][1]["text"]["text"].get<std::string>().size() <= kSlackSectionMax);
}

TEST_CASE("redaction removes every occurrence of every secret") {
  CHECK(redact("key=abc, again abc", {"abc", ""}) == "key=[redacted], again [redacted]");
  CHECK(redact("nothing", {"zzz"}) == "nothing");
  // A secret that is part of the replacement itself ends (it looped forever).
  CHECK(redact("a redacted d", {"d"}) == "a re[redacted]acte[redacted] [redacted]");
}

TEST_CASE(
    "answers are classified: 2xx delivered, 400/413/422 never retried, 429/5xx/network retried") {
  auto answer = [](long status) {
    HttpResponse r;
    r.status = status;
    r.body = "body";
    return classify_response(Result<HttpResponse>(r));
  };
  CHECK(answer(202).delivered);
  CHECK(answer(200).delivered);
  for (long bad_event : {400L, 413L, 422L}) {  // the event itself is bad: a resend cannot help
    CAPTURE(bad_event);
    CHECK(answer(bad_event).permanent_failure);
    CHECK_FALSE(answer(bad_event).delivered);
  }
  CHECK(answer(400).detail == "HTTP 400: body");
  CHECK(answer(413).detail == "HTTP 413: body");
  for (long transient : {408L, 429L, 500L, 502L, 503L, 404L}) {
    CHECK_FALSE(answer(transient).delivered);
    CHECK_FALSE(answer(transient).permanent_failure);
  }
  auto down = classify_response(Result<HttpResponse>(make_error(ErrorCode::network, "refused")));
  CHECK_FALSE(down.delivered);
  CHECK_FALSE(down.permanent_failure);
  CHECK_FALSE(down.unconfirmed);
  auto slow = classify_response(Result<HttpResponse>(make_error(ErrorCode::timeout, "no answer")));
  CHECK_FALSE(slow.delivered);
  CHECK_FALSE(slow.permanent_failure);
  CHECK(slow.unconfirmed);
}

TEST_CASE("later attempts wait longer for the answer, up to the cap") {
  using std::chrono::seconds;
  CHECK(answer_timeout_ms(seconds(3), 1) == 3'000);
  CHECK(answer_timeout_ms(seconds(3), 2) == 6'000);
  CHECK(answer_timeout_ms(seconds(3), 3) == 12'000);
  CHECK(answer_timeout_ms(seconds(3), 8) == 300'000);
  CHECK(answer_timeout_ms(seconds(3), 1000) == 300'000);
  CHECK(answer_timeout_ms(seconds(600), 1) == 600'000);  // a configured timeout above the cap
  CHECK(answer_timeout_ms(seconds(600), 5) == 600'000);
}

TEST_CASE("a sender whose secret file is missing is an error naming the key") {
  TempDir dir{"pager-test-"};
  SenderConfig pd = config(SenderKind::pagerduty);
  pd.name = "pd";
  pd.routing_key_file = (dir.path / "nope").string();
  auto notifier = make_notifier(pd);
  REQUIRE_FALSE(notifier.ok());
  CHECK(notifier.error().message.starts_with("pager.senders.pd.routing_key_file: "));
  CHECK(notifier.error().message.ends_with("does not exist"));
}

TEST_CASE("the file sink appends one JSON line per page, once even across restarts") {
  TempDir dir{"pager-test-"};
  const SenderConfig sink = file_sink(dir);
  auto event = failing_event();
  {
    FileNotifier notifier(sink);
    CHECK(notifier.deliver(event, 1).delivered);
    CHECK(notifier.deliver(event, 1).delivered);  // a re-delivery of the same row
  }
  FileNotifier restarted(sink);  // a new process after a crash before mark_sent
  CHECK(restarted.deliver(event, 1).delivered);
  auto resolve = event;
  resolve.id = 4;
  resolve.action = PageAction::resolve;
  CHECK(restarted.deliver(resolve, 1).delivered);

  std::ifstream in(sink.path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(nlohmann::json::parse(line));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["id"] == 3);
  CHECK(lines[0]["action"] == "trigger");
  CHECK(lines[0]["sender"] == "sink");
  CHECK(lines[0]["severity"] == "error");
  CHECK(lines[0]["summary"] == event.summary);
  CHECK(lines[1]["action"] == "resolve");
}

// #26: a store made anew after the old one was lost numbers its pages from 1 again; the store id
// in the page key keeps its page 3 apart from the old store's page 3.
TEST_CASE("the file sink tells the same page id of two stores apart by the page key") {
  TempDir dir{"pager-test-"};
  const SenderConfig sink = file_sink(dir);
  auto old_store = failing_event();
  old_store.store_id = "00aa00aa00aa00aa";
  auto new_store = old_store;
  new_store.store_id = "11bb11bb11bb11bb";
  FileNotifier notifier(sink);
  CHECK(notifier.deliver(old_store, 1).delivered);
  CHECK(notifier.deliver(new_store, 1).delivered);
  CHECK(notifier.deliver(new_store, 1).delivered);  // a re-delivery: not written again
  std::ifstream in(sink.path);
  std::vector<std::string> keys;
  for (std::string line; std::getline(in, line);)
    keys.push_back(nlohmann::json::parse(line)["page_key"]);
  CHECK(keys == std::vector<std::string>{"00aa00aa00aa00aa-3-20261129080000",
                                         "11bb11bb11bb11bb-3-20261129080000"});
}

// A store rolled back together with its state_dir (a machine snapshot put back) hands out page 3
// again, for another page: the time in the key keeps it apart from the page 3 sent before.
TEST_CASE("the same page id of one store, recorded at another time, has another page key") {
  auto sent_before = failing_event();
  sent_before.store_id = "00aa00aa00aa00aa";
  auto after_rollback = sent_before;
  after_rollback.created_at = "2026-11-29T09:30:00Z";
  CHECK(page_key(sent_before) == "00aa00aa00aa00aa-3-20261129080000");
  CHECK(page_key(after_rollback) == "00aa00aa00aa00aa-3-20261129093000");
  auto undated = sent_before;
  undated.created_at.clear();
  CHECK(page_key(undated) == "00aa00aa00aa00aa-3");
}

TEST_CASE("the file sink reports a path it cannot write as a transient failure") {
  SenderConfig sink = config(SenderKind::file);
  sink.path = "/nonexistent-dir/pages.jsonl";
  FileNotifier notifier(sink);
  auto result = notifier.deliver(failing_event(), 1);
  CHECK_FALSE(result.delivered);
  CHECK_FALSE(result.permanent_failure);
  CHECK(result.detail.find("cannot open") != std::string::npos);
}
