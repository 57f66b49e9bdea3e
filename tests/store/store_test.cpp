// The daemon's SQLite store: migrations, verification state changes, one verdict per
// verification, pages recorded with the verdict, the outbox contract of pager/notifier.hpp.

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pager/dispatcher.hpp"
#include "policies/power.hpp"
#include "store/migrations.hpp"
#include "store/sqlite.hpp"
#include "store/store.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::test::TempDir;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  TempDir dir;
  UnixSeconds now = 1'800'000'000;
  std::unique_ptr<Store> store;
  Fixture() {
    auto opened = Store::open(dir.path / "reverify.db", [this] { return now; });
    REQUIRE(opened.ok());
    store = std::move(*opened);
  }
  void add_version(const std::string& model, const std::string& version,
                   const std::string& sha = "aa") {
    ModelVersionRow row;
    row.model = model;
    row.version = version;
    row.owner = "team-a";
    row.source = "local";
    row.location = "/reg/" + model + "/" + version + "/manifest.json";
    row.manifest_sha256 = sha;
    REQUIRE(store->upsert_model_version(row).ok());
  }
  std::int64_t queue(const std::string& model, const std::string& version) {
    auto id = store->enqueue(QueuedVerification{model, version});
    REQUIRE(id.ok());
    return *id;
  }
};

Verdict verdict_of(VerdictClass cls) {
  Verdict v;
  v.cls = cls;
  v.explanation = std::string("because ") + to_string(cls);
  return v;
}

PageToRecord page_for(const std::string& key, PageAction action, std::vector<std::string> senders) {
  PageToRecord page;
  page.event.dedup_key = key;
  page.event.action = action;
  page.event.model = "m";
  page.event.version = "1";
  page.event.summary = "s";
  page.senders = std::move(senders);
  return page;
}

}  // namespace

TEST_CASE("migrations are applied once, reopening keeps the data, read-only refuses writes") {
  TempDir dir;
  auto clock = [] { return UnixSeconds(1); };
  ModelVersionRow row;
  row.model = "m";
  row.version = "1";
  row.source = "s";
  row.location = "x";
  {
    auto store = Store::open(dir.path / "db", clock);
    REQUIRE(store.ok());
    CHECK((*store)->schema_version() >= 1);
    REQUIRE((*store)->upsert_model_version(row).ok());
  }
  auto again = Store::open(dir.path / "db", clock);
  REQUIRE(again.ok());
  auto rows = (*again)->model_versions();
  REQUIRE(rows.ok());
  CHECK(rows->size() == 1);
  auto read_only = Store::open(dir.path / "db", clock, true);
  REQUIRE(read_only.ok());
  CHECK((*read_only)->model_versions()->size() == 1);
  CHECK_FALSE((*read_only)->upsert_model_version(row).ok());
  CHECK_FALSE(Store::open(dir.path / "missing.db", clock, true).ok());
}

TEST_CASE("migration 6 widens the mode to subsample and keeps every row and reference") {
  TempDir dir;
  const auto path = dir.path / "db";
  {  // a store as migration 4 left it, with a verification and a page that names it
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    for (const auto& m : migrations()) {
      if (m.number <= 4)
        REQUIRE(sql::exec(db, m.sql).ok());
    }
    REQUIRE(sql::exec(db, R"sql(
PRAGMA user_version = 4;
INSERT INTO model_versions (model, version, source, location, first_seen_at, last_seen_at)
  VALUES ('m', '1', 's', 'x', 1, 1);
INSERT INTO verifications (model, version, state, class, mode, trigger, queued_at)
  VALUES ('m', '1', 'done', 'passed', 'steps', 'cli', 1);
INSERT INTO pages (verification_id, dedup_key, action, event_json, created_at)
  VALUES (1, 'k', 'resolve', '{}', 1);
)sql")
                .ok());
    sqlite3_close(db);
  }
  auto store = Store::open(path, [] { return UnixSeconds(2); });
  REQUIRE(store.ok());
  CHECK((*store)->schema_version() == migrations().back().number);  // 6 and every later one
  auto kept = (*store)->verification(1);
  REQUIRE(kept.ok());
  REQUIRE(kept->has_value());
  CHECK((*kept)->mode == RebuildMode::steps);
  auto id = (*store)->insert_running(
      QueuedVerification("m", "1", RebuildMode::subsample, VerificationTrigger::cli));
  REQUIRE(id.ok());
  CHECK((*store)->verification(*id)->value().mode == RebuildMode::subsample);
}

TEST_CASE("migration 8: a row described before it is described again by the next sync") {
  TempDir dir;
  const auto path = dir.path / "db";
  {  // a store as migration 7 left it, with a version whose manifest records a reference
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    for (const auto& m : migrations()) {
      if (m.number <= 7)
        REQUIRE(sql::exec(db, m.sql).ok());
    }
    REQUIRE(sql::exec(db, R"sql(
PRAGMA user_version = 7;
INSERT INTO model_versions (model, version, source, location, manifest_sha256, first_seen_at,
                            last_seen_at)
  VALUES ('m', '1', 's', 'x', 'sha', 1, 1);
)sql")
                .ok());
    sqlite3_close(db);
  }
  auto store = Store::open(path, [] { return UnixSeconds(2); });
  REQUIRE(store.ok());
  CHECK((*store)->schema_version() == migrations().back().number);
  const auto read = [&] {
    auto rows = (*store)->model_versions();
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 1);
    return rows->front();
  };
  CHECK_FALSE(read().subsample_fraction.has_value());  // not known before the next sync
  ModelVersionRow row;
  row.model = "m";
  row.version = "1";
  row.location = "x";
  row.manifest_sha256 = "sha";  // the same manifest: only the new columns make it written
  row.subsample_fraction = 0.25;
  row.subsample_duration_s = 1350;
  REQUIRE((*store)->sync_model_versions("s", {row}).ok());
  CHECK(read().subsample_fraction == std::optional<double>(0.25));
  CHECK(read().subsample_duration_s == std::optional<double>(1350));
  // Described once: an unchanged manifest is not written again (the periodic sync's fast path).
  row.subsample_fraction = 0.5;
  REQUIRE((*store)->sync_model_versions("s", {row}).ok());
  CHECK(read().subsample_fraction == std::optional<double>(0.25));
}

TEST_CASE("reverify run's verification is written running, never queued, and claims its folder") {
  Fixture f;
  f.add_version("m", "1");
  auto id = f.store->insert_running(
      QueuedVerification("m", "1", RebuildMode::steps, VerificationTrigger::cli));
  REQUIRE(id.ok());
  auto row = f.store->verification(*id);
  REQUIRE(row.ok());
  REQUIRE(row->has_value());
  CHECK((*row)->state == VerificationState::running);
  CHECK((*row)->started_at == std::optional<UnixSeconds>(f.now));
  CHECK_FALSE((*row)->work_dir.has_value());
  // A daemon holding an older picture of it cannot start it: it was never queued.
  CHECK_FALSE(f.store->mark_running(*id, "/work/daemon").ok());
  REQUIRE(f.store->set_work_dir(*id, "/work/cli").ok());
  CHECK_FALSE(f.store->set_work_dir(*id, "/work/again").ok());  // claimed once
  CHECK(f.store->verification(*id)->value().work_dir == std::optional<std::string>("/work/cli"));
  CHECK_FALSE(f.store->insert_running(QueuedVerification("m", "unknown")).ok());
}

TEST_CASE("a verification goes queued -> running -> done with exactly one verdict") {
  Fixture f;
  f.add_version("m", "1");
  auto id = f.queue("m", "1");
  CHECK_FALSE(f.store->record_runner(id, RunnerKind::process, "ref").ok());  // not running yet
  REQUIRE(f.store->mark_running(id, "/work/v1").ok());
  CHECK_FALSE(f.store->mark_running(id, "/work/v1").ok());  // already running
  REQUIRE(f.store->record_runner(id, RunnerKind::process, "pid:42").ok());
  f.now += 90;
  auto pages = f.store->record_verdict(id, verdict_of(VerdictClass::passed), {{"k", 1}}, "tail",
                                       {page_for("reverify/m/1", PageAction::resolve, {"a"})});
  REQUIRE(pages.ok());
  CHECK(pages->size() == 1);
  auto second = f.store->record_verdict(id, verdict_of(VerdictClass::failed_out_of_tolerance), {},
                                        "", {page_for("reverify/m/1", PageAction::trigger, {"a"})});
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == ErrorCode::conflict);
  auto row = f.store->verification(id);
  REQUIRE(row.ok());
  REQUIRE(row->has_value());
  const auto& v = **row;
  CHECK(v.state == VerificationState::done);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(v.runner_ref == std::optional<std::string>("pid:42"));
  CHECK(v.log_tail == "tail");
  CHECK(v.evidence["k"] == 1);
  CHECK(v.finished_at.value() - v.started_at.value() == 90);
  // The refused second verdict left no page behind: one transaction or nothing.
  auto pending = f.store->pending(10);
  REQUIRE(pending.ok());
  CHECK(pending->size() == 1);
  auto stats = f.store->verification_stats();
  REQUIRE(stats.ok());
  CHECK(stats->by_class[VerdictClass::passed] == 1);
  CHECK(stats->duration_count == 1);
  CHECK(stats->duration_buckets[0] == 0);  // 90 s > 60 s
  CHECK(stats->duration_buckets[1] == 1);  // <= 300 s
}

TEST_CASE("a verification of an unknown model version is refused") {
  Fixture f;
  auto id = f.store->enqueue(QueuedVerification{"nope", "1"});
  REQUIRE_FALSE(id.ok());
  CHECK(id.error().code == ErrorCode::not_found);
}

TEST_CASE("an error verdict queues its retry in the same transaction") {
  Fixture f;
  f.add_version("m", "1");
  auto id = f.queue("m", "1");
  REQUIRE(f.store->mark_running(id, "w").ok());
  QueuedVerification retry{"m", "1", RebuildMode::full, VerificationTrigger::retry, 2};
  retry.not_before = f.now + 600;
  REQUIRE(
      f.store->record_verdict(id, verdict_of(VerdictClass::error_runner_lost), {}, "", {}, retry)
          .ok());
  auto unfinished = f.store->unfinished();
  REQUIRE(unfinished.ok());
  REQUIRE(unfinished->size() == 1);
  CHECK((*unfinished)[0].attempt == 2);
  CHECK((*unfinished)[0].trigger == VerificationTrigger::retry);
  CHECK((*unfinished)[0].not_before == f.now + 600);
}

TEST_CASE("a verdict's signed summary is written in the verdict's transaction, or neither is") {
  Fixture f;
  f.add_version("m", "1");
  const auto passed = f.queue("m", "1");
  REQUIRE(f.store->mark_running(passed, "w1").ok());
  const AttestationToRecord summary{"{\"payload\":\"e30=\"}", "key-1", "PASSED", "{}"};
  REQUIRE(f.store
              ->record_verdict(passed, verdict_of(VerdictClass::passed), {}, "", {}, std::nullopt,
                               summary)
              .ok());

  // A summary the database refuses (here: a result that is neither PASSED nor FAILED) takes its
  // verdict and pages down with it: the verification stays running, no page is left behind.
  const auto refused = f.queue("m", "1");
  REQUIRE(f.store->mark_running(refused, "w2").ok());
  auto bad =
      f.store->record_verdict(refused, verdict_of(VerdictClass::failed_out_of_tolerance), {}, "",
                              {page_for("reverify/m/1", PageAction::trigger, {"a"})}, std::nullopt,
                              AttestationToRecord{"{}", "key-1", "MAYBE", "{}"});
  REQUIRE_FALSE(bad.ok());
  auto still = f.store->verification(refused);
  REQUIRE(still.ok());
  CHECK((*still)->state == VerificationState::running);
  CHECK(f.store->pending(10)->empty());

  const auto failed = f.queue("m", "1");
  REQUIRE(f.store->mark_running(failed, "w3").ok());
  f.now += 60;
  REQUIRE(f.store
              ->record_verdict(failed, verdict_of(VerdictClass::failed_input_drift), {}, "", {},
                               std::nullopt,
                               AttestationToRecord{"env", "key-2", "FAILED", "{\"p\":1}"})
              .ok());
  auto rows = f.store->attestations({failed, refused, passed, 999});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].verification_id == passed);
  CHECK((*rows)[0].envelope_json == summary.envelope_json);
  CHECK((*rows)[0].result == "PASSED");
  CHECK((*rows)[0].cls == "passed");
  CHECK((*rows)[0].model == "m");
  CHECK((*rows)[1].verification_id == failed);
  CHECK((*rows)[1].key_id == "key-2");
  CHECK((*rows)[1].policy_json == "{\"p\":1}");
  CHECK((*rows)[1].created_at == f.now);
  CHECK(f.store->attestations({})->empty());

  // The latest decided verdict (passed or failed:*) is the one a summary is served for; error:*
  // and uncalibrated verdicts after it do not replace it.
  for (auto cls : {VerdictClass::error_job, VerdictClass::uncalibrated}) {
    const auto id = f.queue("m", "1");
    REQUIRE(f.store->mark_running(id, "w").ok());
    REQUIRE(f.store->record_verdict(id, verdict_of(cls), {}, "", {}).ok());
  }
  auto decided = f.store->latest_verdicts(VerdictFilter::decided);
  REQUIRE(decided.ok());
  REQUIRE(decided->size() == 1);
  CHECK((*decided)[0].id == failed);
}

// #26: a page is named at its receivers by "<store id>-<page id>"; a store made anew numbers its
// pages from 1 again, and a restored backup continues from the backup's: the store id, recorded
// with each page, keeps their keys apart.
TEST_CASE("each store has an id of its own, recorded with every page it hands the dispatcher") {
  Fixture f;
  f.add_version("m", "1");
  const std::string id = f.store->identity().id;
  CHECK(id.size() == 16);
  CHECK_FALSE(f.store->identity().restored_from.has_value());
  const auto page_of = [](Store& store) {
    auto due = store.pending(10);
    REQUIRE(due.ok());
    REQUIRE(due->size() == 1);
    return (*due)[0].event;
  };
  REQUIRE(f.store
              ->record_verdict(f.queue("m", "1"), verdict_of(VerdictClass::failed_input_drift), {},
                               "", {page_for("reverify/m/1", PageAction::trigger, {"pd"})})
              .ok());
  const PageEvent first = page_of(*f.store);
  CHECK(first.store_id == id);
  CHECK(page_key(first) == id + "-" + std::to_string(first.id));
  CHECK(to_json(first)["page_key"] == page_key(first));

  // Another store in another folder: its first page has the same id, under another key.
  TempDir other;
  auto fresh = Store::open(other.path / "reverify.db", [] { return UnixSeconds(1); });
  REQUIRE(fresh.ok());
  CHECK((*fresh)->identity().id != id);

  // A backup copy opened to write into (a restore) becomes a store of its own; the page it
  // holds keeps the key it was sent with, the next one gets the new id.
  REQUIRE(f.store->backup_to(other.path / "backup.db").ok());
  auto restored = Store::open(other.path / "backup.db", [&f] { return f.now; });
  REQUIRE(restored.ok());
  CHECK((*restored)->identity().id != id);
  CHECK((*restored)->identity().restored_from == id);
  CHECK(page_of(**restored).store_id == id);
  REQUIRE((*restored)->mark_sent(first.id, "pd").ok());
  auto next = (*restored)->enqueue(QueuedVerification{"m", "1"});
  REQUIRE(next.ok());
  REQUIRE((*restored)
              ->record_verdict(*next, verdict_of(VerdictClass::passed), {}, "",
                               {page_for("reverify/m/1", PageAction::resolve, {"pd"})})
              .ok());
  CHECK(page_of(**restored).store_id == (*restored)->identity().id);
}

TEST_CASE("outbox: a resolve waits for its trigger; backoff doubles and is capped") {
  Fixture f;
  f.add_version("m", "1");
  RetryPolicy retry;
  retry.initial = std::chrono::seconds(30);
  retry.max_backoff = std::chrono::seconds(100);
  retry.max_attempts = 4;
  f.store->set_outbox_retry(retry);
  auto first = f.queue("m", "1");
  REQUIRE(f.store
              ->record_verdict(first, verdict_of(VerdictClass::failed_input_drift), {}, "",
                               {page_for("reverify/m/1", PageAction::trigger, {"pd", "chat"})})
              .ok());
  auto second = f.queue("m", "1");
  REQUIRE(f.store
              ->record_verdict(second, verdict_of(VerdictClass::passed), {}, "",
                               {page_for("reverify/m/1", PageAction::resolve, {"pd"})})
              .ok());
  auto due = f.store->pending(10);
  REQUIRE(due.ok());
  REQUIRE(due->size() == 2);  // the trigger for both senders; the resolve waits
  CHECK((*due)[0].event.action == PageAction::trigger);
  CHECK((*due)[1].event.action == PageAction::trigger);
  const auto trigger_id = (*due)[0].event.id;
  // pd fails transiently: 30 s, then 60 s, then capped at 100 s.
  REQUIRE(f.store->mark_attempt_failed(trigger_id, "pd", "HTTP 503", false).ok());
  REQUIRE(f.store->mark_sent(trigger_id, "chat").ok());
  CHECK(f.store->pending(10)->empty());  // pd not due yet, resolve still waits
  f.now += 30;
  REQUIRE(f.store->pending(10)->size() == 1);
  REQUIRE(f.store->mark_attempt_failed(trigger_id, "pd", "HTTP 503", false).ok());
  f.now += 59;
  CHECK(f.store->pending(10)->empty());
  f.now += 1;
  REQUIRE(f.store->mark_attempt_failed(trigger_id, "pd", "HTTP 503", false).ok());
  f.now += 99;
  CHECK(f.store->pending(10)->empty());
  f.now += 1;
  auto again = f.store->pending(10);
  REQUIRE(again->size() == 1);
  CHECK((*again)[0].attempts == 3);
  REQUIRE(f.store->mark_sent(trigger_id, "pd").ok());
  REQUIRE(f.store->mark_sent(trigger_id, "pd").ok());  // idempotent
  auto resolve = f.store->pending(10);
  REQUIRE(resolve->size() == 1);
  CHECK(resolve->front().event.action == PageAction::resolve);
  auto open = f.store->open_triggers("chat");
  REQUIRE(open.ok());
  CHECK(open->size() == 1);  // chat never gets the resolve: its trigger stays the newest sent
  REQUIRE(f.store->mark_attempt_failed(resolve->front().event.id, "pd", "HTTP 400", true).ok());
  CHECK(f.store->pending(10)->empty());
  auto counts = f.store->delivery_counts();
  REQUIRE(counts.ok());
  CHECK(counts->sent == 2);
  CHECK(counts->failed == 1);
  CHECK(counts->pending == 0);
}

// A receiver that counts copies, running `during` inside its send (what another process does
// meanwhile).
struct CountingReceiver final : Notifier {
  int copies = 0;
  std::function<void()> during;
  DeliveryResult deliver(const PageEvent&, int) override {
    if (during)
      during();
    ++copies;
    return DeliveryResult{true, false, "202", false};
  }
};

// A failed verdict of m@1 with its trigger page for the sender "hook".
void record_trigger_for_hook(Fixture& f) {
  f.add_version("m", "1");
  REQUIRE(f.store
              ->record_verdict(f.queue("m", "1"), verdict_of(VerdictClass::failed_input_drift), {},
                               "", {page_for("reverify/m/1", PageAction::trigger, {"hook"})})
              .ok());
}

TEST_CASE("outbox: two processes draining it send one pending row once, whoever claims it") {
  Fixture f;
  record_trigger_for_hook(f);
  // reverifyd's connection to the same file, beside the one of a `reverify run`.
  auto daemon_store = Store::open(f.dir.path / "reverify.db", [&f] { return f.now; });
  REQUIRE(daemon_store.ok());
  const auto quiet = [](LogLevel, const std::string&, const LogFields&) {};
  auto run_receiver = std::make_shared<CountingReceiver>();
  auto daemon_receiver = std::make_shared<CountingReceiver>();
  Dispatcher run(*f.store, {{"hook", run_receiver}}, quiet);
  Dispatcher daemon(**daemon_store, {{"hook", daemon_receiver}}, quiet);
  DrainStats daemon_pass;
  // The daemon drains while the run's send is in flight: the row is still pending.
  run_receiver->during = [&] { daemon_pass = daemon.drain_once(PageClock::now()).value(); };
  const DrainStats run_pass = run.drain_once(PageClock::now()).value();
  CHECK(run_pass.delivered == 1);
  CHECK(run_receiver->copies + daemon_receiver->copies == 1);
  CHECK(daemon_pass.delivered == 0);
  CHECK(f.store->delivery_counts().value().sent == 1);
}

TEST_CASE("outbox: a claim holds the row while its process lives, and not once it is gone") {
  Fixture f;
  record_trigger_for_hook(f);
  const auto page = f.store->pending(10).value().at(0).event.id;
  SUBCASE("two processes that both read it pending: one claim holds") {
    auto other = Store::open(f.dir.path / "reverify.db", [&f] { return f.now; });
    REQUIRE(other.ok());
    REQUIRE((*other)->pending(10)->size() == 1);
    CHECK(f.store->claim(page, "hook").value());
    CHECK_FALSE((*other)->claim(page, "hook").value());
  }
  SUBCASE("its claimer alive (this process): not due until the claim ends") {
    REQUIRE(f.store->claim(page, "hook").value());
    CHECK_FALSE(f.store->claim(page, "hook").value());
    CHECK(f.store->pending(10)->empty());
    f.now += kDeliveryClaim.count();
    CHECK(f.store->pending(10)->size() == 1);
  }
  SUBCASE("its claimer killed mid-send: due at once, taken by the next") {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      auto store = Store::open(f.dir.path / "reverify.db", [&f] { return f.now; });
      const auto claimed = store ? (*store)->claim(page, "hook") : Result<bool>(false);
      ::_exit(claimed && *claimed ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    REQUIRE(f.store->pending(10)->size() == 1);
    CHECK(f.store->claim(page, "hook").value());
    CHECK(f.store->pending(10)->empty());
  }
}

TEST_CASE("sync marks versions gone from their source as removed, and counts changes") {
  Fixture f;
  auto row = [](const std::string& version, const std::string& sha) {
    ModelVersionRow r;
    r.model = "m";
    r.version = version;
    r.location = "/x/" + version;
    r.manifest_sha256 = sha;
    return r;
  };
  auto changed = f.store->sync_model_versions("local", {row("1", "a"), row("2", "b")});
  REQUIRE(changed.ok());
  CHECK(*changed == 2);
  changed = f.store->sync_model_versions("local", {row("1", "a"), row("2", "c")});
  REQUIRE(changed.ok());
  CHECK(*changed == 1);
  changed = f.store->sync_model_versions("local", {row("2", "c")});
  REQUIRE(changed.ok());
  auto one = f.store->model_version("m", "1");
  REQUIRE(one.ok());
  CHECK((*one)->removed);
  CHECK_FALSE((*f.store->model_version("m", "2"))->removed);
  CHECK((*f.store->model_version("m", "2"))->source == "local");
}

TEST_CASE("a cycle is started once, with its queued verifications") {
  Fixture f;
  f.add_version("m", "1");
  f.add_version("m", "2");
  auto cycle = f.store->start_cycle(1000, {{"entries", 2}},
                                    {QueuedVerification{"m", "1"}, QueuedVerification{"m", "2"}});
  REQUIRE(cycle.ok());
  REQUIRE(cycle->size() == 2);
  CHECK((*f.store->verification((*cycle)[1]))->version == "2");
  auto again = f.store->start_cycle(1000, {}, {QueuedVerification{"m", "1"}});
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().code == ErrorCode::conflict);
  CHECK(f.store->unfinished()->size() == 2);
  CHECK(*f.store->last_cycle_period() == std::optional<UnixSeconds>(1000));
  // An unknown version rolls the whole cycle back.
  CHECK_FALSE(f.store->start_cycle(2000, {}, {QueuedVerification{"m", "9"}}).ok());
  CHECK(*f.store->last_cycle_period() == std::optional<UnixSeconds>(1000));
}

TEST_CASE("calibrations round-trip and the newest wins; briefs pick the right verdicts") {
  Fixture f;
  f.add_version("m", "1");
  ToleranceSpec spec;
  spec.seed_runs["accuracy"] = {0.9, 0.91, 0.92};
  spec.floor["accuracy"] = 0.001;
  REQUIRE(f.store->put_calibration("m", "1", spec, 3).ok());
  spec.seed_runs["accuracy"] = {0.5, 0.6, 0.7, 0.8};
  REQUIRE(f.store->put_calibration("m", "1", spec, 4).ok());
  auto stored = f.store->calibration("m", "1");
  REQUIRE(stored.ok());
  REQUIRE(stored->has_value());
  CHECK((*stored)->seed_runs["accuracy"].size() == 4);
  CHECK((*stored)->floor["accuracy"] == doctest::Approx(0.001));
  CHECK_FALSE(f.store->calibration("m", "2")->has_value());

  for (auto cls :
       {VerdictClass::passed, VerdictClass::failed_out_of_tolerance, VerdictClass::error_job}) {
    auto id = f.queue("m", "1");
    REQUIRE(f.store->record_verdict(id, verdict_of(cls), {}, "", {}).ok());
  }
  auto latest = f.store->latest_verdicts(VerdictFilter::any);
  auto conclusive = f.store->latest_verdicts(VerdictFilter::conclusive);
  auto passed = f.store->latest_verdicts(VerdictFilter::passed);
  REQUIRE(latest->size() == 1);
  CHECK(latest->front().cls == VerdictClass::error_job);
  CHECK(conclusive->front().cls == VerdictClass::failed_out_of_tolerance);
  CHECK(passed->front().cls == VerdictClass::passed);
  CHECK(passed->front().manifest_sha256 == "aa");
  CHECK(f.store->history()->size() == 2);
}

TEST_CASE("per mode: the latest verdict of each mode; what has verifications; by trigger") {
  Fixture f;
  f.add_version("m", "1");
  f.add_version("m", "2");
  const auto record = [&](RebuildMode mode, VerdictClass cls,
                          VerificationTrigger trigger = VerificationTrigger::schedule) {
    QueuedVerification item{"m", "1", mode, trigger};
    item.not_before = f.now;
    auto id = f.store->enqueue(item);
    REQUIRE(id.ok());
    REQUIRE(f.store->record_verdict(*id, verdict_of(cls), {}, "", {}).ok());
    return *id;
  };
  const auto full_pass = record(RebuildMode::full, VerdictClass::passed);
  const auto steps_pass = record(RebuildMode::steps, VerdictClass::passed);
  const auto steps_failed = record(RebuildMode::steps, VerdictClass::failed_out_of_tolerance,
                                   VerificationTrigger::release);
  auto passed = f.store->latest_verdicts(VerdictFilter::passed, /*per_mode=*/true);
  REQUIRE(passed->size() == 2);
  std::map<RebuildMode, std::int64_t> ids;
  for (const auto& b : *passed)
    ids[b.mode] = b.id;
  CHECK(ids == std::map<RebuildMode, std::int64_t>{{RebuildMode::full, full_pass},
                                                   {RebuildMode::steps, steps_pass}});
  auto conclusive = f.store->latest_verdicts(VerdictFilter::conclusive, /*per_mode=*/true);
  REQUIRE(conclusive->size() == 2);
  CHECK(std::any_of(conclusive->begin(), conclusive->end(),
                    [&](const VerdictBrief& b) { return b.id == steps_failed; }));
  CHECK(f.store->latest_verdicts(VerdictFilter::passed)->size() == 1);  // per version as before

  CHECK(*f.store->versions_with_verifications() ==
        std::set<std::pair<std::string, std::string>>{{"m", "1"}});
  auto released = f.store->verifications_by_trigger(VerificationTrigger::release, f.now);
  REQUIRE(released->size() == 1);
  CHECK(released->front().id == steps_failed);
  CHECK(f.store->verifications_by_trigger(VerificationTrigger::release, f.now + 1)->empty());
}

TEST_CASE("a brief says whether its verdict was judged against underpowered bands") {
  Fixture f;
  f.add_version("m", "1");
  auto verdict = verdict_of(VerdictClass::passed);
  CheckResult primary;
  primary.name = "primary:accuracy";
  primary.power = CheckPower{0.03, 0.02, true, 23};
  verdict.checks.push_back(primary);
  verdict.power = summarize_power(verdict.checks);
  REQUIRE(f.store->record_verdict(f.queue("m", "1"), verdict, {}, "", {}).ok());
  auto passed = f.store->latest_verdicts(VerdictFilter::passed);
  REQUIRE(passed->size() == 1);
  CHECK(passed->front().underpowered);
  CHECK(passed->front().runs_needed == 23);
  CHECK_FALSE(passed->front().seed_runs.has_value());  // no check said how many
  REQUIRE(f.store->record_verdict(f.queue("m", "1"), verdict_of(VerdictClass::passed), {}, "", {})
              .ok());
  passed = f.store->latest_verdicts(VerdictFilter::passed);
  CHECK_FALSE(passed->front().underpowered);
  CHECK_FALSE(passed->front().runs_needed.has_value());
}

TEST_CASE("a state, class, mode or trigger the store does not know is an error naming the row") {
  Fixture f;
  f.add_version("m", "1");
  const auto id = f.queue("m", "1");
  REQUIRE(f.store->verification(id).ok());
  // What a newer reverify or a hand edit could leave behind (the schema checks state and mode).
  auto raw = [&](const std::string& sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((f.dir.path / "reverify.db").c_str(), &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  };
  raw("UPDATE verifications SET trigger = 'bogus' WHERE id = " + std::to_string(id));
  auto row = f.store->verification(id);
  REQUIRE_FALSE(row.ok());
  CHECK(row.error().message == "verifications row " + std::to_string(id) +
                                   ": unknown trigger \"bogus\" (expected one of schedule, manual, "
                                   "retry, cli, release)");
  CHECK_FALSE(f.store->unfinished().ok());  // never silently queued

  raw("UPDATE verifications SET trigger = 'manual' WHERE id = " + std::to_string(id));
  REQUIRE(f.store->record_verdict(id, verdict_of(VerdictClass::passed), {}, "", {}).ok());
  raw("UPDATE verifications SET class = 'failed:whatever' WHERE id = " + std::to_string(id));
  auto briefs = f.store->latest_verdicts(VerdictFilter::any);
  REQUIRE_FALSE(briefs.ok());
  CHECK(briefs.error().message.find("unknown class \"failed:whatever\"") != std::string::npos);
  CHECK_FALSE(f.store->verification_stats().ok());
}

// Found #5: after error:runner-lost or error:job, a manual trigger got 409 "already has a
// verification queued or running" for the retry's whole backoff (up to an hour) while nothing ran.
TEST_CASE("a manual trigger folds a queued retry or scheduled verification into itself") {
  Fixture f;
  f.add_version("m", "1");
  const auto failed = f.queue("m", "1");
  REQUIRE(f.store->mark_running(failed, "w").ok());
  QueuedVerification retry{"m", "1", RebuildMode::full, VerificationTrigger::retry, 2};
  retry.not_before = f.now + 3600;
  REQUIRE(
      f.store->record_verdict(failed, verdict_of(VerdictClass::error_job), {}, "", {}, retry).ok());
  auto waiting = f.store->unfinished();
  REQUIRE(waiting.ok());
  REQUIRE(waiting->size() == 1);
  const auto retry_id = (*waiting)[0].id;

  f.now += 10;
  QueuedVerification manual("m", "1", RebuildMode::steps, VerificationTrigger::manual);
  manual.not_before = f.now;
  auto folded = f.store->enqueue_unless_active(manual);
  REQUIRE(folded.ok());
  CHECK(*folded == retry_id);  // the same row, not a second one
  auto row = f.store->verification(retry_id)->value();
  CHECK(row.trigger == VerificationTrigger::manual);
  CHECK(row.not_before == f.now);  // due now
  CHECK(row.mode == RebuildMode::steps);
  CHECK(row.attempt == 2);
  CHECK(f.store->unfinished()->size() == 1);
  // Now a manual one is queued: a second trigger is refused, as is one while it runs.
  CHECK(f.store->enqueue_unless_active(manual).error().code == ErrorCode::conflict);
  REQUIRE(f.store->mark_running(retry_id, "w2").ok());
  CHECK(f.store->enqueue_unless_active(manual).error().code == ErrorCode::conflict);

  // A scheduled verification waiting for its jittered start is folded the same way.
  f.add_version("m", "2");
  QueuedVerification scheduled("m", "2", RebuildMode::full, VerificationTrigger::schedule);
  scheduled.not_before = f.now + 900;
  auto scheduled_id = f.store->enqueue(scheduled);
  REQUIRE(scheduled_id.ok());
  QueuedVerification manual2("m", "2", RebuildMode::full, VerificationTrigger::manual);
  manual2.not_before = f.now;
  auto folded2 = f.store->enqueue_unless_active(manual2);
  REQUIRE(folded2.ok());
  CHECK(*folded2 == *scheduled_id);
  CHECK(f.store->verification(*scheduled_id)->value().trigger == VerificationTrigger::manual);
}

TEST_CASE(
    "a manual trigger is queued unless one is queued or running, decided in its transaction") {
  Fixture f;
  f.add_version("m", "1");
  const QueuedVerification manual("m", "1", RebuildMode::full, VerificationTrigger::manual);
  auto first = f.store->enqueue_unless_active(manual);
  REQUIRE(first.ok());
  auto second = f.store->enqueue_unless_active(manual);
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == ErrorCode::conflict);
  CHECK(second.error().message == "m@1 already has a verification queued or running (" +
                                      std::to_string(*first) + ", queued)");
  REQUIRE(f.store->mark_running(*first, "/w").ok());
  CHECK_FALSE(f.store->enqueue_unless_active(manual).ok());  // running counts too
  REQUIRE(f.store->record_verdict(*first, verdict_of(VerdictClass::passed), {}, "", {}).ok());
  auto again = f.store->enqueue_unless_active(manual);
  REQUIRE(again.ok());
  CHECK(f.store->verification(*again)->value().trigger == VerificationTrigger::manual);
  CHECK(f.store->enqueue_unless_active(QueuedVerification("m", "2")).error().code ==
        ErrorCode::not_found);
}

TEST_CASE("a calibration keeps what leave-one-out found, the checks to blame included") {
  Fixture f;
  f.add_version("m", "1");
  ToleranceSpec spec;
  spec.seed_runs["accuracy"] = {0.9, 0.91, 0.92};
  LeaveOneOutFinding finding;
  finding.runs = 24;
  finding.paged = 2;
  finding.false_page_rate = 0.01;
  finding.excess =
      LeaveOneOutExcess{24, 2, 0.24, 0.0239, {{"segment:radius=low:accuracy", 2, 0.0125}}};
  auto id = f.store->put_calibration("m", "1", spec, 24, CalibrationEnd::complete, "", finding);
  REQUIRE(id.ok());
  auto latest = f.store->latest_calibrations();
  REQUIRE(latest.ok());
  REQUIRE(latest->size() == 1);
  const auto& stored = latest->front().leave_one_out;
  REQUIRE(stored.has_value());
  CHECK(stored->runs == 24);
  CHECK(stored->paged == 2);
  CHECK(stored->false_page_rate == 0.01);
  REQUIRE(stored->excess.has_value());
  CHECK(stored->excess->expected == 0.24);
  CHECK(stored->excess->tail == 0.0239);
  CHECK(stored->excess->blamed ==
        std::vector<LeaveOneOutBlame>{{"segment:radius=low:accuracy", 2, 0.0125}});
  CHECK(stored->warning("m@1", "") == finding.warning("m@1", ""));
  CHECK(stored->warning("m@1", "")->find("2 of 24 seed runs paged") == 0);

  // Rewritten without an excess (the runs now agree with alpha), then as not measured.
  finding.paged = 0;
  finding.excess.reset();
  REQUIRE(f.store->update_calibration(*id, spec, 24, CalibrationEnd::complete, "", finding).ok());
  latest = f.store->latest_calibrations();
  REQUIRE(latest->front().leave_one_out.has_value());
  CHECK(latest->front().leave_one_out->paged == 0);
  CHECK_FALSE(latest->front().leave_one_out->excess.has_value());
  CHECK_FALSE(latest->front().leave_one_out->warning("m@1", "").has_value());
  REQUIRE(f.store->update_calibration(*id, spec, 24, CalibrationEnd::complete, "").ok());
  CHECK_FALSE(f.store->latest_calibrations()->front().leave_one_out.has_value());

  // A stored value that is not a finding is an error naming the row, not a silent "none".
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((f.dir.path / "reverify.db").c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "UPDATE calibrations SET leave_one_out_json = '{\"runs\": \"many\"}'",
                     nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto bad = f.store->latest_calibrations();
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "calibration " + std::to_string(*id) +
                                   ": stored leave_one_out_json is not a leave-one-out finding");
}

TEST_CASE("a subsample calibration is kept apart from the release's and read by its mode") {
  Fixture f;
  f.add_version("m", "1");
  ToleranceSpec release, subsample;
  release.seed_runs["accuracy"] = {0.9, 0.91, 0.92};
  subsample.seed_runs["accuracy"] = {0.7, 0.75, 0.8, 0.72};
  REQUIRE(f.store->put_calibration("m", "1", release, 3).ok());
  REQUIRE(f.store
              ->put_calibration("m", "1", subsample, 4, CalibrationEnd::complete, "", std::nullopt,
                                CalibratedReference::subsample)
              .ok());
  auto full = f.store->calibration("m", "1");
  auto sub = f.store->calibration("m", "1", CalibratedReference::subsample);
  REQUIRE(full.ok());
  REQUIRE(sub.ok());
  CHECK((*full)->seed_runs["accuracy"].size() == 3);  // the newer subsample one does not win
  CHECK((*sub)->seed_runs["accuracy"].size() == 4);
  auto latest = f.store->latest_calibrations();
  REQUIRE(latest.ok());
  REQUIRE(latest->size() == 1);  // the plan's warnings read the release's
  CHECK(latest->front().seeds == 3);
  CHECK_FALSE(f.store->calibration("m", "2", CalibratedReference::subsample)->has_value());
}

TEST_CASE("the newest calibration per version says how it ended; a brief, its seed runs") {
  Fixture f;
  f.add_version("m", "1");
  f.add_version("m", "2");
  ToleranceSpec spec;
  spec.seed_runs["accuracy"] = {0.9, 0.91, 0.92};
  REQUIRE(f.store->put_calibration("m", "1", spec, 3).ok());  // `reverify calibrate`'s default
  f.now = 2000;
  REQUIRE(f.store
              ->put_calibration("m", "1", spec, 7, CalibrationEnd::interrupted,
                                "interrupted: a verification needs the slot")
              .ok());
  REQUIRE(f.store->put_calibration("m", "2", spec, 40).ok());
  auto latest = f.store->latest_calibrations();
  REQUIRE(latest.ok());
  REQUIRE(latest->size() == 2);
  CHECK((*latest)[0].version == "1");
  CHECK((*latest)[0].seeds == 7);
  CHECK((*latest)[0].created_at == 2000);
  CHECK((*latest)[0].end == CalibrationEnd::interrupted);
  CHECK((*latest)[0].note == "interrupted: a verification needs the slot");
  CHECK((*latest)[1].end == CalibrationEnd::complete);
  CHECK((*latest)[1].note.empty());

  // A calibration stored run by run: the same row rewritten, its time too.
  auto id =
      f.store->put_calibration("m", "2", spec, 41, CalibrationEnd::interrupted, "in progress");
  REQUIRE(id.ok());
  f.now = 3000;
  spec.seed_runs["accuracy"].push_back(0.93);
  REQUIRE(f.store->update_calibration(*id, spec, 42, CalibrationEnd::complete, "done").ok());
  latest = f.store->latest_calibrations();
  CHECK((*latest)[1].seeds == 42);
  CHECK((*latest)[1].created_at == 3000);
  CHECK((*latest)[1].end == CalibrationEnd::complete);
  CHECK((*latest)[1].note == "done");
  CHECK((*f.store->calibration("m", "2"))->seed_runs.at("accuracy").size() == 4);
  auto unknown = f.store->update_calibration(*id + 100, spec, 1, CalibrationEnd::complete, "");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "calibration " + std::to_string(*id + 100) + " is not stored");

  // The seed runs a verdict's bands were measured from: the most any of its checks names.
  auto verdict = verdict_of(VerdictClass::passed);
  for (int n : {12, 40}) {
    CheckResult check;
    check.name = "check" + std::to_string(n);
    check.seed_runs = n;
    verdict.checks.push_back(check);
  }
  REQUIRE(f.store->record_verdict(f.queue("m", "1"), verdict, {}, "", {}).ok());
  auto briefs = f.store->latest_verdicts(VerdictFilter::conclusive);
  REQUIRE(briefs.ok());
  REQUIRE(briefs->size() == 1);
  CHECK(briefs->front().seed_runs == 40);

  // A word this version does not know is an error naming the row, not a default.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open((f.dir.path / "reverify.db").c_str(), &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db,
                     "PRAGMA ignore_check_constraints = ON; UPDATE calibrations SET ended = 'half'",
                     nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto bad = f.store->latest_calibrations();
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find(
            "unknown ended \"half\" (expected one of complete, interrupted)") != std::string::npos);
}

TEST_CASE("a verdict's summary is stored as typed columns; migration 11 fills old rows") {
  // A row recorded before the summary columns: its explanation carried counts made before the
  // input checks were added ("[1 passed, ...]" where the checks say 2 passed).
  Fixture f;
  f.add_version("m", "1");
  const auto id = f.queue("m", "1");
  Verdict v = verdict_of(VerdictClass::failed_out_of_tolerance);
  CheckResult input;
  input.name = "input:dataset";
  input.kind = CheckKind::input;
  input.outcome = CheckOutcome::passed;
  CheckResult primary;
  primary.name = "primary:accuracy";
  primary.kind = CheckKind::primary;
  primary.outcome = CheckOutcome::failed;
  primary.observed = 0.8;
  primary.reference = 0.95;
  primary.band = CheckBand{0.94, 0.96};
  primary.margin = -0.14;
  primary.explanation = "primary:accuracy 0.8 is 0.15 below the seed mean";
  CheckResult segment = primary;
  segment.name = "segment:a:accuracy";
  segment.kind = CheckKind::segment;
  segment.outcome = CheckOutcome::passed;
  segment.seed_runs = 40;
  v.checks = {input, primary, segment};
  v.explanation =
      "primary:accuracy 0.8 is 0.15 below the seed mean [1 passed, 1 failed, 0 "
      "uncalibrated; UNDERPOWERED: 1 band(s) cannot catch the shift]";
  REQUIRE(f.store->record_verdict(id, v, nlohmann::json::object(), "", {}).ok());
  const VerdictSummary summary = verdict_summary(v);
  auto row = f.store->verification(id);
  REQUIRE(row.ok());
  REQUIRE((*row)->summary.has_value());
  CHECK(*(*row)->summary == summary);
  CHECK((*row)->summary->counts.passed == 2);
  auto briefs = f.store->latest_verdicts(VerdictFilter::any);
  REQUIRE(briefs.ok());
  REQUIRE(briefs->size() == 1);
  CHECK(briefs->front().summary() == summary);
  CHECK(briefs->front().seed_runs == 40);

  // Back to the schema before migration 11: the columns gone, the version 10.
  f.store.reset();
  const auto path = f.dir.path / "reverify.db";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  for (const char* column :
       {"headline", "checks_failed", "checks_uncalibrated", "checks_passed", "checks_not_judged",
        "checks_notes", "checks_notes_outside", "failing_checks", "underpowered", "runs_needed",
        "underpowered_checks", "seed_runs"}) {
    const std::string sql = std::string("ALTER TABLE verifications DROP COLUMN ") + column;
    CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  // Migration 12's table and 13's column go too: the version says 10.
  CHECK(sqlite3_exec(db, "DROP TABLE source_conditions", nullptr, nullptr, nullptr) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "ALTER TABLE page_deliveries DROP COLUMN claimed_by", nullptr, nullptr,
                     nullptr) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "PRAGMA user_version = 10", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);

  auto reopened = Store::open(path, [&f] { return f.now; });
  REQUIRE(reopened.ok());
  auto migrated = (*reopened)->verification(id);
  REQUIRE(migrated.ok());
  REQUIRE((*migrated)->summary.has_value());
  CHECK(*(*migrated)->summary == summary);
  // The stale counts are gone from the explanation, column and verdict alike; the rest stays.
  CHECK((*migrated)->explanation ==
        "primary:accuracy 0.8 is 0.15 below the seed mean [UNDERPOWERED: 1 band(s) cannot catch "
        "the shift]");
  CHECK((*migrated)->verdict->explanation == (*migrated)->explanation);
}
