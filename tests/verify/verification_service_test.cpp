// VerificationService on a real SQLite store and a fake runner: every verdict records its pages
// or why it has none, a verification that fails before its rebuild starts gets a verdict at
// once instead of staying running, and a verification left running by a daemon that died is
// finished from the job its runner still has, or recorded as error:runner-lost.

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <fstream>

#include "tests/support/manifest_fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/verify/fake_runner.hpp"
#include "verify/verification_service.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

struct Harness {
  test::TempDir dir;
  UnixSeconds now = 1'800'000'000;
  std::unique_ptr<Store> store;
  test::FakeRunner runner;
  VerificationSettings settings;
  std::unique_ptr<VerificationService> service;
  std::string manifest = (dir.path / "registry/tiny/1/manifest.json").string();

  Harness() {
    auto opened = Store::open(dir.path / "reverify.db", [this] { return now; });
    REQUIRE(opened.ok());
    store = std::move(*opened);
    fs::create_directories(fs::path(manifest).parent_path());
    // The fake runner's job computes accuracy 0.96; a rerunnable release of it passes.
    std::string text = test::manifest_fixture_text("valid_minimal.json");
    text.replace(text.find("\"loss\""), 6, "\"accuracy\"");
    std::ofstream(manifest) << text;
    settings.work_root = dir.path / "work";
    service = std::make_unique<VerificationService>(*store, runner);
  }

  // One sender "out" of `kind`, routed for `owner`.
  void route(const std::string& owner, SenderKind kind) {
    SenderConfig sender;
    sender.name = "out";
    sender.kind = kind;
    sender.path = (dir.path / "pages.jsonl").string();
    sender.url_file = (dir.path / "slack.url").string();
    settings.pager.senders = {{"out", sender}};
    RouteConfig route;
    route.owner = owner;
    route.senders = {"out"};
    settings.pager.routes = {route};
  }

  // `reverify run` of the manifest, in full.
  Result<VerificationRow> run_now() {
    return service->run_now(manifest, RebuildMode::full, VerificationTrigger::cli, settings);
  }

  // The model version of the manifest, registered as a registry source would.
  void register_version() {
    ModelVersionRow version;
    version.model = "tiny";
    version.version = "1";
    version.owner = "team-x";
    version.source = "local";
    version.location = manifest;
    REQUIRE(store->upsert_model_version(version).ok());
  }

  // A verification a daemon started before it died: queued, then running in its work folder.
  VerificationRow left_running() {
    register_version();
    auto id = store->enqueue(
        QueuedVerification{"tiny", "1", RebuildMode::full, VerificationTrigger::schedule});
    REQUIRE(id.ok());
    REQUIRE(store->mark_running(*id, (settings.work_root / rebuild_id_for(*id)).string()).ok());
    auto row = store->verification(*id);
    REQUIRE(row.ok());
    REQUIRE(row->has_value());
    return **row;
  }

  std::int64_t pages_of(std::int64_t verification_id) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2((dir.path / "reverify.db").c_str(), &db, SQLITE_OPEN_READONLY,
                            nullptr) == SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM pages WHERE verification_id = ?1", -1, &stmt,
                       nullptr);
    sqlite3_bind_int64(stmt, 1, verification_id);
    REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
    const auto count = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return count;
  }

  void sql(const std::string& statement) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((dir.path / "reverify.db").c_str(), &db) == SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &error);
    INFO(statement << ": " << (error ? error : ""));
    sqlite3_free(error);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
  }
};

}  // namespace

// Found #2: after a reload to an empty config, a verdict was recorded with no page row and no
// reason; every other verdict has exactly one.
TEST_CASE("every verdict records its page or the reason it has none") {
  Harness h;
  SUBCASE("no routes at all") {
    auto row = h.run_now();
    REQUIRE(row.ok());
    CHECK(row->state == VerificationState::done);
    CHECK(h.pages_of(row->id) == 0);
    CHECK(row->evidence["no_page"] == "no pager route is configured (pager.routes is empty)");
  }
  SUBCASE("a route for another owner only") {
    h.route("team-other", SenderKind::file);
    auto row = h.run_now();
    REQUIRE(row.ok());
    CHECK(h.pages_of(row->id) == 0);
    CHECK(row->evidence["no_page"].get<std::string>().find("team-x") != std::string::npos);
  }
  SUBCASE("a route whose only sender takes no resolve") {
    h.route("*", SenderKind::slack);
    auto row = h.run_now();
    REQUIRE(row.ok());
    REQUIRE(row->cls == VerdictClass::passed);
    CHECK(h.pages_of(row->id) == 0);
    CHECK(row->evidence["no_page"] ==
          "the route for owner \"team-x\" has no sender that takes a "
          "resolve");
  }
  SUBCASE("a routed verdict has its page and no reason") {
    h.route("*", SenderKind::file);
    auto row = h.run_now();
    REQUIRE(row.ok());
    CHECK(h.pages_of(row->id) == 1);
    CHECK_FALSE(row->evidence.contains("no_page"));
  }
}

// Found #7: a `reverify run --config` whose store failed while it prepared left its row running
// with no verdict, so a manual trigger of that version got 409 until a daemon reconciled it.
TEST_CASE("a verification that fails before its rebuild starts gets its verdict at once") {
  Harness h;
  // A store failure on exactly the write that records the work folder.
  h.sql(
      "CREATE TRIGGER fail_work_dir BEFORE UPDATE OF work_dir ON verifications "
      "BEGIN SELECT RAISE(FAIL, 'injected store failure'); END");
  SUBCASE("reverify run: inserted running") {
    auto row = h.run_now();
    REQUIRE(row.ok());
    CHECK(row->state == VerificationState::done);
    CHECK(row->cls == VerdictClass::error_provision);
    CHECK(row->explanation.find("injected store failure") != std::string::npos);
  }
  SUBCASE("the daemon: queued") {
    h.register_version();
    auto id = h.store->enqueue(
        QueuedVerification{"tiny", "1", RebuildMode::full, VerificationTrigger::manual});
    REQUIRE(id.ok());
    auto row = h.service->execute(*id, h.settings);
    REQUIRE(row.ok());
    CHECK(row->state == VerificationState::done);
    CHECK(row->cls == VerdictClass::error_provision);
  }
  CHECK(h.runner.calls.empty());  // the rebuild never started
  auto unfinished = h.store->unfinished();
  REQUIRE(unfinished.ok());
  CHECK(unfinished->empty());
}

// After a restart: the job the runner still has under the row's rebuild id is waited on and
// collected (never started again); without one the verdict is error:runner-lost, naming why.
TEST_CASE("where a queued job stands is recorded with its running verification, and reported") {
  Harness h;
  h.runner.standings = {{JobQueueState::pending, "gpu", "Resources", ""},
                        {JobQueueState::running, "gpu", "", "node17"}};
  std::optional<JobStanding> while_running;
  h.runner.while_waiting = [&] {
    auto unfinished = h.store->unfinished();
    REQUIRE(unfinished.ok());
    REQUIRE(unfinished->size() == 1);
    while_running = unfinished->front().runner_standing;
  };
  std::vector<std::string> queue_lines;
  const auto progress = [&](std::string_view stage, std::string_view detail) {
    if (stage == kQueueStage)
      queue_lines.emplace_back(detail);
  };
  auto done = h.service->run_now(h.manifest, RebuildMode::full, VerificationTrigger::cli,
                                 h.settings, progress);
  REQUIRE(done.ok());
  CHECK(done->cls == VerdictClass::passed);
  REQUIRE(while_running.has_value());
  CHECK(*while_running == h.runner.standings.back());
  REQUIRE(done->runner_standing.has_value());  // kept after the verdict: where it ran
  CHECK(done->runner_standing->nodes == "node17");
  REQUIRE(queue_lines.size() == 2);
  CHECK(queue_lines[0].find("pending in partition gpu (Resources)") != std::string::npos);
  CHECK(queue_lines[1].find("running in partition gpu on node17") != std::string::npos);
}

TEST_CASE("recover reattaches to the job the runner still has, or records runner-lost") {
  Harness h;
  const VerificationRow row = h.left_running();
  const std::string rebuild_id = rebuild_id_for(row.id);
  SUBCASE("the runner still has the job: it is finished, not started again") {
    RebuildSpec spec;
    spec.rebuild_id = rebuild_id;
    spec.work_dir = h.settings.work_root / rebuild_id / "job";
    h.runner.running = spec;
    auto done = h.service->recover(row, h.settings);
    REQUIRE(done.ok());
    CHECK(done->state == VerificationState::done);
    CHECK(done->cls == VerdictClass::passed);
    CHECK(done->evidence["resumed"].get<std::string>().find("reattached to process job job-" +
                                                            rebuild_id) != std::string::npos);
    CHECK(h.runner.calls == std::vector<std::string>{"find_running", "wait", "collect", "cleanup"});
  }
  SUBCASE("the runner has no job of that id: error:runner-lost") {
    RebuildSpec other;
    other.rebuild_id = rebuild_id_for(row.id + 1);
    h.runner.running = other;  // someone else's job is no reason to reattach
    auto done = h.service->recover(row, h.settings);
    REQUIRE(done.ok());
    CHECK(done->state == VerificationState::done);
    CHECK(done->cls == VerdictClass::error_runner_lost);
    CHECK(done->explanation.find("the process runner has no job labelled reverify.rebuild-id=" +
                                 rebuild_id) != std::string::npos);
    CHECK(h.runner.calls == std::vector<std::string>{"find_running"});
  }
  SUBCASE("the runner cannot be asked: error:runner-lost with the runner's error") {
    h.runner.find_error = make_error(ErrorCode::runner_lost, "engine socket refused");
    auto done = h.service->recover(row, h.settings);
    REQUIRE(done.ok());
    CHECK(done->cls == VerdictClass::error_runner_lost);
    CHECK(done->explanation.find("(engine socket refused)") != std::string::npos);
  }
  auto unfinished = h.store->unfinished();
  REQUIRE(unfinished.ok());
  CHECK(unfinished->empty());  // exactly one verdict, and nothing left running
}

}  // namespace reverify

namespace reverify {
namespace {

// The daemon's calibration of an underpowered version: it continues the stored calibration with
// fresh seeds, --until-power, and stores the result with how it ended.
TEST_CASE("calibrate continues the stored calibration and stores how it ended") {
  Harness h;
  h.register_version();
  ToleranceSpec stored;
  stored.seed_runs["accuracy"] = {0.952, 0.954, 0.956, 0.958, 0.95};
  REQUIRE(h.store->put_calibration("tiny", "1", stored, 5).ok());
  // A continuous metric, 0.950..0.958 by seed (sd about 0.003): 0.011 is out of reach of 12 runs.
  h.runner.primary = test::continuous_accuracy;
  h.settings.detect["accuracy"] = 0.011;
  CalibrationJob job{"tiny", "1", 12, {}};
  const auto newest = [&] {
    auto latest = h.store->latest_calibrations();
    REQUIRE(latest.ok());
    REQUIRE(latest->size() == 1);
    return latest->front();
  };

  SUBCASE("up to max_runs, with fresh seeds, stored run by run") {
    // What the store holds as each run computes: the runs before it, marked interrupted.
    std::vector<std::pair<std::int64_t, CalibrationEnd>> stored_during;
    h.runner.primary = [&](const RebuildSpec& spec) {
      stored_during.emplace_back(newest().seeds, newest().end);
      return test::continuous_accuracy(spec);
    };
    auto outcome = h.service->calibrate(job, h.settings);
    REQUIRE(outcome.ok());
    CHECK(outcome->added == 7);
    CHECK_FALSE(outcome->interrupted);
    REQUIRE(h.runner.started.size() == 7);
    CHECK(h.runner.started[0].seed_override == 6);  // past the stored 1..5
    CHECK(h.runner.started[0].rebuild_id == "calibration-tiny-1-1800000000-seed6");
    CHECK(h.runner.started[0].mode == RebuildMode::full);
    REQUIRE(stored_during.size() == 7);
    CHECK(stored_during[0] == std::pair(std::int64_t(5), CalibrationEnd::complete));  // put above
    for (std::size_t i = 1; i < 7; ++i)
      CHECK(stored_during[i] == std::pair(std::int64_t(5 + i), CalibrationEnd::interrupted));
    const CalibrationBrief brief = newest();
    CHECK(brief.seeds == 12);
    CHECK(brief.end == CalibrationEnd::complete);
    CHECK(brief.note.find("stopped at --max-runs 12") != std::string::npos);
    // Its leave-one-out, kept for `reverify plan`: the same finding the outcome holds.
    REQUIRE(outcome->leave_one_out.has_value());
    REQUIRE(brief.leave_one_out.has_value());
    CHECK(brief.leave_one_out->runs == outcome->leave_one_out->runs.size());
    CHECK(brief.leave_one_out->paged == outcome->leave_one_out->paged);
    CHECK(brief.leave_one_out->false_page_rate == h.settings.policy.false_page_rate);
    auto spec = h.store->calibration("tiny", "1");
    REQUIRE(spec.ok());
    REQUIRE(spec->has_value());
    CHECK((*spec)->seed_runs.at("accuracy").size() == 12);
    CHECK(h.store->verifications("", "", 10)->empty());  // no verification, no verdict, no page
  }
  SUBCASE("interrupted before a run: the runs so far are kept, marked interrupted") {
    int asked = 0;
    job.interrupt = [&asked]() -> std::optional<std::string> {
      return ++asked > 2 ? std::optional<std::string>("the slot is needed") : std::nullopt;
    };
    auto outcome = h.service->calibrate(job, h.settings);
    REQUIRE(outcome.ok());
    CHECK(outcome->interrupted);
    CHECK(outcome->added == 2);
    const CalibrationBrief brief = newest();
    CHECK(brief.seeds == 7);
    CHECK(brief.end == CalibrationEnd::interrupted);
    CHECK(brief.note == "interrupted: the slot is needed");
  }
  SUBCASE("a version whose bands already meet detect runs nothing and stores nothing") {
    h.settings.detect["accuracy"] = 0.5;
    auto outcome = h.service->calibrate(job, h.settings);
    REQUIRE(outcome.ok());
    CHECK(outcome->added == 0);
    CHECK(h.runner.started.empty());
    CHECK(outcome->stopped.find("every declared tolerance.detect is met with 5") !=
          std::string::npos);
    CHECK(newest().seeds == 5);
  }
  SUBCASE("a failed run stops it: an outcome, not an error") {
    h.runner.exit = JobExit{1, false, "oom\n", std::nullopt};
    auto outcome = h.service->calibrate(job, h.settings);
    REQUIRE(outcome.ok());
    REQUIRE(outcome->failure.has_value());
    CHECK(outcome->failure->cls == VerdictClass::error_job);
    CHECK(newest().seeds == 5);  // nothing added, nothing stored
  }
  SUBCASE("an unknown version is an error") {
    auto outcome = h.service->calibrate(CalibrationJob{"tiny", "9", 12, {}}, h.settings);
    REQUIRE_FALSE(outcome.ok());
    CHECK(outcome.error().message == "unknown model version tiny@9");
  }
}

// Found by the fresh-seed benchmark: two `reverify run` at once, each with a throwaway store,
// both numbered their verification 1 and shared the rebuild id "verification-1" (the process
// runner's scratch link collided: "cannot link the scratch folder: File exists").
TEST_CASE("rebuild ids carry the service's prefix: a throwaway store passes its own") {
  Harness h;
  REQUIRE(h.run_now().ok());
  REQUIRE(h.runner.started.size() == 1);
  CHECK(h.runner.started[0].rebuild_id == "verification-1");
  VerificationService own(*h.store, h.runner, {}, "run-42-7-");
  REQUIRE(own.run_now(h.manifest, RebuildMode::full, VerificationTrigger::cli, h.settings).ok());
  REQUIRE(h.runner.started.size() == 2);
  CHECK(h.runner.started[1].rebuild_id == "run-42-7-2");
}

TEST_CASE("a subsample trigger for a version without a subsample reference: a notice, no job") {
  Harness h;
  h.register_version();
  auto id = h.store->enqueue(
      QueuedVerification{"tiny", "1", RebuildMode::subsample, VerificationTrigger::manual});
  REQUIRE(id.ok());
  auto row = h.service->execute(*id, h.settings);
  REQUIRE(row.ok());
  CHECK(row->state == VerificationState::done);
  CHECK(row->mode == RebuildMode::subsample);
  CHECK(row->cls == VerdictClass::uncalibrated);
  CHECK(row->explanation.find("tiny@1 records no subsample reference") == 0);
  CHECK(h.runner.calls.empty());  // nothing to judge against: no rebuild started
}

}  // namespace
}  // namespace reverify
