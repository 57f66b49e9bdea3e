// /metrics, rendered from a real store with verdicts, pages and queued work, and the daemon's own
// series after some events, is accepted by `promtool check metrics` (Debian's prometheus
// package) and carries the documented series: per listed version one state line and its
// timestamps (failed and never-verified versions included), every failed delivery attempt.

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include "api/daemon_metrics.hpp"
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
  for (const char* version : {"1", "2", "3", "4"}) {
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
  finish("4", VerdictClass::error_provision, 10);                  // only an error: state "error"
  REQUIRE(s.enqueue(QueuedVerification{"digits-mlp", "3"}).ok());  // never verified
  auto due = s.pending(10);
  REQUIRE(due.ok());
  // The pass's page: refused once (retried), then accepted; the failure's: rejected for good.
  REQUIRE(s.mark_attempt_failed((*due)[0].event.id, "sink", "HTTP 503", false).ok());
  REQUIRE(s.mark_sent((*due)[0].event.id, "sink").ok());
  REQUIRE(s.mark_attempt_failed((*due)[1].event.id, "sink", "HTTP 400", true).ok());

  auto model = build_read_model(s, nullptr, now, nullptr);
  REQUIRE(model.ok());
  const auto& text = (*model)->metrics_text;
  for (const char* expected :
       {"reverify_verifications_total{class=\"passed\"} 1",
        "reverify_verifications_total{class=\"failed:input-drift\"} 1",
        "reverify_verifications_total{class=\"error:job\"} 0",
        "reverify_verification_duration_seconds_bucket{le=\"300\"} 2",
        "reverify_verification_duration_seconds_bucket{le=\"+Inf\"} 3",
        "reverify_verification_duration_seconds_count 3",
        "reverify_queue_depth 1",
        "reverify_pages_sent_total{sender=\"sink\"} 1",
        "reverify_pages_failed_total{sender=\"sink\"} 1",
        "reverify_pages_pending{sender=\"sink\"} 1",
        "reverify_build_info{version=\"",
        "reverify_page_delivery_attempts_total{sender=\"sink\"} 3",
        "reverify_page_delivery_failures_total{sender=\"sink\"} 2",
        "reverify_model_versions 4",
        "reverify_gate_max_age_seconds 3456000",
        "reverify_last_verified_timestamp_seconds{model=\"digits-mlp\",version=\"1\"} "
        "1800000120",
        "reverify_versions{state=\"passed\"} 1",
        "reverify_versions{state=\"failed\"} 1",
        "reverify_versions{state=\"error\"} 1",
        "reverify_versions{state=\"never\"} 1",
        "reverify_versions{state=\"uncalibrated\"} 0",
        "reverify_version_state{model=\"digits-mlp\",version=\"1\",owner=\"\",state=\"passed\"} 1",
        "reverify_version_state{model=\"digits-mlp\",version=\"2\",owner=\"\",state=\"failed\"} 1",
        "reverify_version_state{model=\"digits-mlp\",version=\"3\",owner=\"\",state=\"never\"} 1",
        "reverify_version_state{model=\"digits-mlp\",version=\"4\",owner=\"\",state=\"error\"} 1",
        "reverify_version_last_conclusive_timestamp_seconds{model=\"digits-mlp\",version=\"2\"} "
        "1800004120",
        "reverify_version_last_conclusive_timestamp_seconds{model=\"digits-mlp\",version=\"3\"} 0",
        "reverify_version_first_seen_timestamp_seconds{model=\"digits-mlp\",version=\"3\"} "
        "1800000000",
        "reverify_version_newest_error{model=\"digits-mlp\",version=\"4\",class=\"error:"
        "provision\"} 1"}) {
    INFO(expected);
    CHECK(text.find(expected) != std::string::npos);
  }
  // A failed version has no pass: no last-verified line, but its state, its conclusive time and
  // when it was listed; a passed one has its pass and no first-seen line.
  CHECK(text.find("reverify_last_verified_timestamp_seconds{model=\"digits-mlp\",version=\"2\"}") ==
        std::string::npos);
  CHECK(text.find(
            "reverify_version_first_seen_timestamp_seconds{model=\"digits-mlp\",version=\"2\"}") !=
        std::string::npos);
  CHECK(text.find(
            "reverify_version_first_seen_timestamp_seconds{model=\"digits-mlp\",version=\"1\"}") ==
        std::string::npos);

  // The daemon's own series after a few events, appended as a scrape appends them.
  DaemonMetrics daemon(now);
  daemon.add_sources({"local", "s3"});
  daemon.registry_synced("local", true, now);
  daemon.registry_synced("s3", false, now);
  daemon.config_reloaded(ReloadOutcome::restart_required, now);
  daemon.calibration_started();
  daemon.calibration_ended(CalibrationOutcomeKind::interrupted);
  daemon.verification_finished(RunnerKind::process,
                               {{"preflight", 0.4}, {"run", 75.0}, {"job", 70.0}, {"unknown", 1.0}},
                               80.0);
  daemon.verification_finished(std::nullopt, {{"preflight", 0.2}}, 0.3);
  daemon.store_used(StoreUse::check, make_error(ErrorCode::io, "reverify.db was cut"), now);
  const std::string own = daemon.render();
  for (const char* expected :
       {"reverify_registry_syncs_total{source=\"local\",outcome=\"ok\"} 1",
        "reverify_registry_syncs_total{source=\"s3\",outcome=\"error\"} 1",
        "reverify_registry_sync_last_success_timestamp_seconds{source=\"s3\"} 0",
        "reverify_config_reloads_total{outcome=\"restart_required\"} 1",
        "reverify_config_last_reload_successful 0", "reverify_calibrations_started_total 1",
        "reverify_calibrations_finished_total{outcome=\"interrupted\"} 1",
        "reverify_stage_duration_seconds_bucket{stage=\"run\",runner=\"process\",le=\"60\"} 0",
        "reverify_stage_duration_seconds_bucket{stage=\"run\",runner=\"process\",le=\"300\"} 1",
        "reverify_stage_duration_seconds_count{stage=\"total\",runner=\"process\"} 1",
        "reverify_stage_duration_seconds_count{stage=\"preflight\",runner=\"none\"} 1",
        "reverify_loop_heartbeat_timestamp_seconds 1800004130", "reverify_store_ok 0",
        "reverify_store_errors_total{operation=\"check\"} 1",
        "reverify_store_errors_total{operation=\"read\"} 0"}) {
    INFO(expected);
    CHECK(own.find(expected) != std::string::npos);
  }
  CHECK(own.find("stage=\"unknown\"") == std::string::npos);  // only the known stages

  const auto file = temp.write("metrics.txt", text + own);
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
