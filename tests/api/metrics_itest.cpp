// /metrics, rendered from a real store with verdicts, pages and queued work, is accepted by
// `promtool check metrics` (Debian's prometheus package) and carries the documented series.

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include "api/snapshot.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
namespace fs = std::filesystem;

TEST_CASE("metrics pass promtool and carry every documented series") {
  const test::TempDir temp("reverify-metrics-");
  const fs::path& dir = temp.path;
  UnixSeconds now = 1'800'000'000;
  auto store = Store::open(dir / "db", [&] { return now; });
  REQUIRE(store.ok());
  auto& s = **store;
  for (const char* version : {"1", "2", "3"}) {
    ModelVersionRow row;
    row.model = "digits-mlp";
    row.version = version;
    row.location = "x";
    row.source = "local";
    REQUIRE(s.upsert_model_version(row).ok());
  }
  auto finish = [&](const std::string& version, VerdictClass cls, UnixSeconds took) {
    auto id = s.enqueue(QueuedVerification{"digits-mlp", version});
    REQUIRE(id.ok());
    REQUIRE(s.mark_running(*id, "w").ok());
    now += took;
    Verdict verdict;
    verdict.cls = cls;
    PageToRecord page;
    page.event.dedup_key = "reverify/digits-mlp/" + version;
    page.senders = {"sink"};
    REQUIRE(s.record_verdict(*id, verdict, {}, "", {page}).ok());
  };
  finish("1", VerdictClass::passed, 120);
  finish("2", VerdictClass::failed_input_drift, 4000);
  REQUIRE(s.enqueue(QueuedVerification{"digits-mlp", "3"}).ok());
  auto due = s.pending(10);
  REQUIRE(due.ok());
  REQUIRE(s.mark_sent((*due)[0].event.id, "sink").ok());
  REQUIRE(s.mark_attempt_failed((*due)[1].event.id, "sink", "HTTP 400", true).ok());

  auto model = build_read_model(s, nullptr, now, nullptr);
  REQUIRE(model.ok());
  const auto& text = (*model)->metrics_text;
  for (const char* expected :
       {"reverify_verifications_total{class=\"passed\"} 1",
        "reverify_verifications_total{class=\"failed:input-drift\"} 1",
        "reverify_verifications_total{class=\"error:job\"} 0",
        "reverify_verification_duration_seconds_bucket{le=\"300\"} 1",
        "reverify_verification_duration_seconds_bucket{le=\"+Inf\"} 2",
        "reverify_verification_duration_seconds_count 2", "reverify_queue_depth 1",
        "reverify_pages_sent_total{sender=\"sink\"} 1",
        "reverify_pages_failed_total{sender=\"sink\"} 1",
        "reverify_pages_pending{sender=\"sink\"} 0", "reverify_build_info{version=\"",
        "reverify_model_versions 3",
        "reverify_last_verified_timestamp_seconds{model=\"digits-mlp\",version=\"1\"} "
        "1800000120"}) {
    INFO(expected);
    CHECK(text.find(expected) != std::string::npos);
  }
  const auto file = temp.write("metrics.txt", text);
  const std::string command = "promtool check metrics < " + file.string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe))
    output += buffer;
  int status = pclose(pipe);
  INFO(output);
  CHECK(status == 0);
}
