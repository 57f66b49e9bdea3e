// The scheduler's decisions: inventory from the store's rows and config, start order of queued
// verifications, jittered plan entries, retries of error:* verdicts.

#include <doctest/doctest.h>

#include <set>

#include "verify/schedule.hpp"
#include "verify/verification_service.hpp"

using namespace reverify;

namespace {
VerificationRow queued(std::int64_t id, VerificationTrigger trigger, UnixSeconds not_before) {
  VerificationRow row;
  row.id = id;
  row.model = "m";
  row.version = std::to_string(id);
  row.trigger = trigger;
  row.not_before = not_before;
  return row;
}
}  // namespace

TEST_CASE("manual triggers start first, then queue order; nothing starts before it is due") {
  const auto schedule = VerificationTrigger::schedule, manual = VerificationTrigger::manual;
  std::vector<VerificationRow> rows = {queued(1, schedule, 100), queued(2, schedule, 50),
                                       queued(3, manual, 90), queued(4, manual, 200)};
  CHECK_FALSE(next_to_start(rows, 10).has_value());
  CHECK(next_to_start(rows, 60)->id == 2);
  CHECK(next_to_start(rows, 95)->id == 3);
  CHECK(next_to_start(rows, 250)->id == 3);
  rows.erase(rows.begin() + 2);
  CHECK(next_to_start(rows, 250)->id == 4);
  rows[0].state = VerificationState::running;
  rows.pop_back();
  CHECK(next_to_start(rows, 250)->id == 2);
}

TEST_CASE("inventory: invalid and removed versions are left out; cost and size from manifest") {
  Config config;
  config.schedule.large_gpu_hours = 8;
  config.schedule.steps_cost_fraction = 0.1;
  config.models["pinned"].criticality = 5;
  config.models["pinned"].large = false;
  std::vector<ModelVersionRow> rows(4);
  rows[0].model = "big";
  rows[0].version = "1";
  rows[0].gpus = 8;
  rows[0].duration_s = 3600;
  rows[0].released_at = 1000;
  rows[1].model = "pinned";
  rows[1].version = "1";
  rows[1].gpus = 8;
  rows[1].duration_s = 7200;
  rows[2].model = "broken";
  rows[2].version = "1";
  rows[2].manifest_error = "bad";
  rows[3].model = "gone";
  rows[3].version = "1";
  rows[3].removed = true;
  auto items = build_inventory(rows, config);
  REQUIRE(items.size() == 2);
  CHECK(items[0].large);
  CHECK(items[0].full_gpu_hours == doctest::Approx(8));
  CHECK(items[0].steps_gpu_hours == doctest::Approx(0.8));
  CHECK(items[0].released_at->time_since_epoch().count() == 1000);
  CHECK_FALSE(items[1].large);  // config says so, whatever it costs
  CHECK(items[1].criticality == 5);
}

TEST_CASE("calibration candidates: underpowered and still verifiable, oldest verdict first") {
  std::vector<InventoryItem> inventory(3);
  inventory[2].model = "a";
  inventory[2].version = "2";
  inventory[0].model = "a";
  inventory[0].version = "1";
  inventory[0].full_gpu_hours = 2;
  inventory[1].model = "b";
  inventory[1].version = "1";
  const auto brief = [](const std::string& model, const std::string& version,
                        UnixSeconds finished_at, bool underpowered) {
    VerdictBrief b;
    b.model = model;
    b.version = version;
    b.finished_at = finished_at;
    b.underpowered = underpowered;
    return b;
  };
  std::vector<VerdictBrief> latest = {brief("b", "1", 300, true), brief("a", "1", 200, true),
                                      brief("gone", "1", 100, true),
                                      brief("a", "2", 50, false)};  // powered enough
  latest[1].runs_needed = 57;
  latest[1].underpowered_checks = {"accuracy"};
  latest[1].seed_runs = 10;
  auto candidates = calibration_candidates(inventory, latest, {});
  REQUIRE(candidates.size() == 2);
  CHECK(candidates[0].model == "a");
  CHECK(candidates[0].runs_needed == std::optional<std::size_t>(57));
  CHECK(candidates[0].gpu_hours_per_run == doctest::Approx(2));
  CHECK(candidates[0].underpowered_checks == std::vector<std::string>{"accuracy"});
  CHECK(candidates[0].seed_runs == 10);
  CHECK_FALSE(candidates[0].calibrated_since_verdict);
  CHECK(candidates[1].model == "b");
  CHECK_FALSE(candidates[1].runs_needed.has_value());

  CyclePlan plan;
  plan.calibrations = plan_calibrations(candidates, plan, std::nullopt, {});
  auto json = plan_to_json(plan);
  REQUIRE(json["calibrations"].size() == 1);  // calibrations_per_cycle defaults to 1
  CHECK(json["calibrations"][0]["model"] == "a");
  CHECK(json["calibrations"][0]["runs_to_add"] == 47);
  CHECK(json["calibrations"][0]["gpu_hours"] == doctest::Approx(94));
  CHECK(json["calibrations"][0]["reason"] ==
        "underpowered: accuracy cannot catch tolerance.detect; ~57 seed runs in all would (10 so "
        "far)");

  // The newest stored calibration: a complete one after the verdict takes the version out until
  // its next verdict; one before the verdict, or an interrupted one, leaves it in; its seed runs
  // count when they are more than the verdict's.
  const auto stored = [](const std::string& model, UnixSeconds at, std::int64_t seeds,
                         CalibrationEnd end) {
    return CalibrationBrief{model, "1", seeds, at, end, "", {}};
  };
  auto after = calibration_candidates(inventory, latest,
                                      {stored("a", 200, 30, CalibrationEnd::complete),
                                       stored("b", 299, 12, CalibrationEnd::complete)});
  REQUIRE(after.size() == 2);
  CHECK(after[0].calibrated_since_verdict);  // stored in the verdict's second
  CHECK(after[0].seed_runs == 30);
  CHECK_FALSE(after[1].calibrated_since_verdict);  // stored before b's verdict
  CHECK(after[1].seed_runs == 12);
  auto interrupted = calibration_candidates(inventory, latest,
                                            {stored("a", 250, 22, CalibrationEnd::interrupted)});
  CHECK_FALSE(interrupted[0].calibrated_since_verdict);
  CHECK(interrupted[0].seed_runs == 22);
}

TEST_CASE("plan entries are queued with jitter inside [start, start + jitter]") {
  CyclePlan plan;
  plan.cycle_start = std::chrono::sys_seconds{std::chrono::seconds{1000}};
  for (int i = 0; i < 50; ++i) {
    PlanEntry e;
    e.model = "m";
    e.version = std::to_string(i);
    e.mode = i % 2 == 0 ? RebuildMode::steps : RebuildMode::full;
    plan.entries.push_back(e);
  }
  std::mt19937_64 rng(7);
  auto queue = plan_entries_to_queue(plan, 2000, 600, rng);
  REQUIRE(queue.size() == 50);
  std::set<UnixSeconds> distinct;
  for (const auto& q : queue) {
    CHECK(q.not_before >= 2000);
    CHECK(q.not_before <= 2600);
    distinct.insert(q.not_before);
  }
  CHECK(distinct.size() > 10);  // spread, not all at once
  CHECK(queue[0].mode == RebuildMode::steps);
  CHECK(queue[1].mode == RebuildMode::full);
  auto json = plan_to_json(plan);
  CHECK(json["entries"].size() == 50);
}

TEST_CASE("error verdicts retry with capped, doubling backoff; failures and bad manifests do not") {
  VerificationSettings settings;
  settings.retry_initial_s = 600;
  settings.retry_max_s = 2000;
  settings.retry_max_attempts = 4;
  VerificationRow row;
  row.model = "m";
  row.version = "1";
  row.mode = RebuildMode::steps;
  row.attempt = 1;
  auto retry = retry_for(row, VerdictClass::error_job, settings, 100);
  REQUIRE(retry.has_value());
  CHECK(retry->not_before == 700);
  CHECK(retry->attempt == 2);
  CHECK(retry->trigger == VerificationTrigger::retry);
  CHECK(retry->mode == RebuildMode::steps);
  row.attempt = 2;
  CHECK(retry_for(row, VerdictClass::error_runner_lost, settings, 100)->not_before == 1300);
  row.attempt = 3;
  CHECK(retry_for(row, VerdictClass::error_provision, settings, 100)->not_before == 2100);
  row.attempt = 4;
  CHECK_FALSE(retry_for(row, VerdictClass::error_job, settings, 100).has_value());
  row.attempt = 1;
  CHECK_FALSE(retry_for(row, VerdictClass::failed_input_drift, settings, 100).has_value());
  CHECK_FALSE(retry_for(row, VerdictClass::error_manifest_invalid, settings, 100).has_value());
  CHECK_FALSE(retry_for(row, VerdictClass::passed, settings, 100).has_value());
}

TEST_CASE("the history keeps each verification's mode (the rotation reads subsample as scoped)") {
  std::vector<VerdictBrief> verdicts(3);
  verdicts[0].mode = RebuildMode::full;
  verdicts[1].mode = RebuildMode::steps;
  verdicts[2].mode = RebuildMode::subsample;
  const auto history = build_history(verdicts);
  REQUIRE(history.size() == 3);
  CHECK(history[0].mode == RebuildMode::full);
  CHECK(history[1].mode == RebuildMode::steps);
  CHECK(history[2].mode == RebuildMode::subsample);
}
