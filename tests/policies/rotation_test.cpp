#include <doctest/doctest.h>

#include <algorithm>

#include "policies/rotation.hpp"

using namespace reverify;
using namespace std::chrono;

namespace {

sys_seconds at(int y, unsigned mo, unsigned d, int h = 0) {
  return sys_days(year(y) / month(mo) / day(d)) + hours(h);
}

InventoryItem item(const std::string& model, int criticality = 0, double cost = 1) {
  InventoryItem i;
  i.model = model;
  i.version = "1";
  i.criticality = criticality;
  i.full_gpu_hours = cost;
  i.steps_gpu_hours = cost / 10;
  return i;
}

HistoryItem done(const std::string& model, sys_seconds when, bool steps = false) {
  return {model, "1", when, steps ? RebuildMode::steps : RebuildMode::full, true, false};
}

std::vector<std::string> order(const Plan& p) {
  std::vector<std::string> out;
  for (const auto& e : p.entries)
    out.push_back(e.model);
  return out;
}

Plan plan(const std::vector<InventoryItem>& inv, const std::vector<HistoryItem>& hist,
          const std::vector<ManualTrigger>& triggers, sys_seconds now,
          const RotationConfig& config = {}) {
  auto p = plan_cycle(inv, hist, triggers, now, config);
  REQUIRE(p.ok());
  return *p;
}

}  // namespace

TEST_CASE("monthly cycle bounds across year boundaries and leap February") {
  RotationConfig monthly;
  auto b = *cycle_bounds(at(2026, 12, 31, 23), monthly);
  CHECK(b.first == at(2026, 12, 1));
  CHECK(b.second == at(2027, 1, 1));
  b = *cycle_bounds(at(2028, 2, 29, 12), monthly);
  CHECK(b.first == at(2028, 2, 1));
  CHECK(b.second == at(2028, 3, 1));
  b = *cycle_bounds(at(2027, 1, 1), monthly);
  CHECK(b.first == at(2027, 1, 1));
}

TEST_CASE("cron cycle bounds: the last fire time to the next one") {
  RotationConfig weekly;
  weekly.cron = "0 3 * * mon";
  const auto b = *cycle_bounds(at(2026, 12, 31, 12), weekly);  // a Thursday
  CHECK(b.first == at(2026, 12, 28, 3));
  CHECK(b.second == at(2027, 1, 4, 3));
  weekly.cron = "0 3 * *";
  CHECK_FALSE(cycle_bounds(at(2026, 12, 31), weekly).ok());
}

TEST_CASE(
    "never verified first, then least recently verified, ties by criticality then release date") {
  auto a = item("a", 1), b = item("b", 5), c = item("c", 1), d = item("d", 1), e = item("e", 1);
  c.released_at = at(2026, 1, 1);
  d.released_at = at(2026, 6, 1);
  const auto now = at(2026, 11, 15);
  const auto p =
      plan({a, b, c, d, e}, {done("a", at(2026, 9, 1)), done("b", at(2026, 9, 1))}, {}, now);
  // c, d, e never verified: d (newer) before c (older) before e (no date); then b (critical) before
  // a.
  CHECK(order(p) == std::vector<std::string>{"d", "c", "e", "b", "a"});
  CHECK(p.entries[0].reason.find("never verified") != std::string::npos);
  CHECK(p.entries[3].reason.find("last verified 2026-09-01") != std::string::npos);
}

TEST_CASE(
    "items verified in this cycle are not planned; failed-to-run verifications do not count") {
  const auto now = at(2027, 1, 10);
  HistoryItem errored = done("b", at(2027, 1, 2));
  errored.completed = false;
  const auto p = plan({item("a"), item("b")}, {done("a", at(2027, 1, 2)), errored}, {}, now);
  CHECK(order(p) == std::vector<std::string>{"b"});
  // Verified in December: due again in January.
  const auto q = plan({item("a")}, {done("a", at(2026, 12, 31, 23))}, {}, now);
  CHECK(order(q) == std::vector<std::string>{"a"});
}

TEST_CASE("releases: a waiting release is the first pick; one verified at release is skipped") {
  RotationConfig config;
  config.per_cycle = 2;
  auto waiting = item("waiting", /*criticality=*/0);
  waiting.awaiting_release = true;
  auto releasing = item("releasing", /*criticality=*/9);
  releasing.at_release = true;
  releasing.at_release_reason = "first seen 2026-11-03T00:00:00Z, at release (full)";
  // "critical" is never verified and more critical, "old" least recently verified: the waiting
  // release still goes first.
  const auto p = plan({item("critical", 5), item("old", 1), waiting, releasing},
                      {done("old", at(2026, 9, 1))}, {}, at(2026, 11, 4), config);
  CHECK(order(p) == std::vector<std::string>{"waiting", "critical"});
  CHECK(p.entries[0].reason.find("new release the at-release budget left waiting: first pick") ==
        0);
  REQUIRE(p.deferred.size() == 1);
  CHECK(p.deferred[0].model == "old");
  const auto skipped = std::find_if(p.skipped.begin(), p.skipped.end(),
                                    [](const Skipped& s) { return s.model == "releasing"; });
  REQUIRE(skipped != p.skipped.end());
  CHECK(skipped->why == SkipReason::at_release);
  CHECK(skipped->reason == releasing.at_release_reason);
  CHECK(std::string(to_string(SkipReason::at_release)) == "at-release");
}

TEST_CASE("per_cycle limit defers the rest with a reason") {
  RotationConfig config;
  config.per_cycle = 2;
  const auto p = plan({item("a"), item("b"), item("c")}, {}, {}, at(2026, 11, 1), config);
  CHECK(p.entries.size() == 2);
  REQUIRE(p.deferred.size() == 1);
  CHECK(p.deferred[0].model == "c");
  CHECK(p.deferred[0].reason.find("per_cycle") != std::string::npos);
}

TEST_CASE("GPU budget packing is first-fit in priority order") {
  RotationConfig config;
  config.gpu_budget_hours = 10;
  auto big = item("big", 9, 8), huge = item("huge", 8, 50), small = item("small", 7, 2),
       tiny = item("tiny", 6, 1);
  const auto p = plan({big, huge, small, tiny}, {}, {}, at(2026, 11, 1), config);
  CHECK(order(p) == std::vector<std::string>{"big", "small"});
  CHECK(p.gpu_hours_planned == doctest::Approx(10));
  REQUIRE(p.deferred.size() == 2);
  CHECK(p.deferred[0].model == "huge");
  CHECK(p.deferred[0].reason.find("needs 50 GPU-hours, 2 left of the 10 budget") !=
        std::string::npos);
  CHECK(p.deferred[1].model == "tiny");
}

TEST_CASE("manual triggers run first, always, and use up budget") {
  RotationConfig config;
  config.gpu_budget_hours = 5;
  config.per_cycle = 1;
  const auto now = at(2026, 11, 20);
  ManualTrigger t1{"late", "1", at(2026, 11, 19), std::nullopt, "cli:alice"};
  ManualTrigger t0{"early", "1", at(2026, 11, 18), RebuildMode::steps, "api"};
  ManualTrigger unknown{"ghost", "1", at(2026, 11, 18), std::nullopt, "api"};
  const auto p = plan({item("a", 0, 1), item("late", 0, 4), item("early", 0, 10)},
                      {done("late", at(2026, 11, 2))}, {t1, t0, unknown}, now, config);
  REQUIRE(p.entries.size() >= 2);
  CHECK(p.entries[0].model == "early");
  CHECK(p.entries[0].manual);
  CHECK(p.entries[0].mode == RebuildMode::steps);  // as requested
  CHECK(p.entries[0].reason.find("steps mode as requested") != std::string::npos);
  CHECK(p.entries[0].reason.find("manual trigger by api") != std::string::npos);
  CHECK(p.entries[1].model == "late");  // verified this cycle already, still runs: a human asked
  // 1 + 4 = 5 GPU-hours of manual work leaves nothing for "a".
  CHECK(p.entries.size() == 2);
  CHECK(std::any_of(p.deferred.begin(), p.deferred.end(),
                    [](const Deferred& d) { return d.model == "a"; }));
  CHECK(std::any_of(p.deferred.begin(), p.deferred.end(),
                    [](const Deferred& d) { return d.model == "ghost"; }));
}

TEST_CASE("large models: steps mode, a full rebuild every Nth verification") {
  RotationConfig config;
  config.full_every_n_cycles = 3;
  auto big = item("big", 0, 100);
  big.large = true;
  const auto now = at(2026, 11, 5);
  auto p = plan({big}, {}, {}, now, config);
  CHECK(p.entries[0].mode == RebuildMode::steps);
  CHECK(p.entries[0].gpu_hours == doctest::Approx(10));
  p = plan({big}, {done("big", at(2026, 9, 1), true), done("big", at(2026, 10, 1), true)}, {}, now,
           config);
  CHECK(p.entries[0].mode == RebuildMode::full);
  CHECK(p.entries[0].reason.find("full rebuild") != std::string::npos);
  p = plan({big}, {done("big", at(2026, 9, 1), true), done("big", at(2026, 10, 1), false)}, {}, now,
           config);
  CHECK(p.entries[0].mode == RebuildMode::steps);
}

TEST_CASE("large models: a subsample rebuild is scoped like steps, never the Nth full one") {
  RotationConfig config;
  config.full_every_n_cycles = 3;
  auto big = item("big", 0, 100);
  big.large = true;
  const auto now = at(2026, 11, 5);
  const auto subsample = [](sys_seconds when) {
    return HistoryItem{"big", "1", when, RebuildMode::subsample, true, false};
  };
  auto p = plan({big}, {subsample(at(2026, 9, 1)), subsample(at(2026, 10, 1))}, {}, now, config);
  CHECK(p.entries[0].mode == RebuildMode::full);
  p = plan({big}, {subsample(at(2026, 9, 1)), done("big", at(2026, 10, 1))}, {}, now, config);
  CHECK(p.entries[0].mode == RebuildMode::steps);
}

TEST_CASE("cadence: each mode due on its own period, the longest due one runs, costed per mode") {
  RotationConfig config;
  config.full_every_n_cycles = 2;    // replaced by the cadence for the models that set one
  const auto now = at(2026, 11, 5);  // the cycle is November
  auto big = item("big", 0, 100);    // full 100 GPU-hours, steps 10
  big.large = true;
  big.cadence_s = {{RebuildMode::steps, 30 * 86400}, {RebuildMode::full, 90 * 86400}};

  // Never verified: both modes due; full has the longer period.
  auto p = plan({big}, {}, {}, now, config);
  REQUIRE(p.entries.size() == 1);
  CHECK(p.entries[0].mode == RebuildMode::full);
  CHECK(p.entries[0].gpu_hours == doctest::Approx(100));
  CHECK(p.entries[0].reason.find("cadence: full every 90 d, never run") != std::string::npos);

  // Full in September (due again in December), steps in October (due 2026-11-30): steps runs,
  // although the large-model rule (full every 2nd) would have chosen full.
  const std::vector<HistoryItem> history = {done("big", at(2026, 9, 15)),
                                            done("big", at(2026, 10, 31), true)};
  p = plan({big}, history, {}, now, config);
  REQUIRE(p.entries.size() == 1);
  CHECK(p.entries[0].mode == RebuildMode::steps);
  CHECK(p.entries[0].gpu_hours == doctest::Approx(10));
  REQUIRE(p.cadence.size() == 1);
  const auto& modes = p.cadence[0].modes;
  REQUIRE(modes.size() == 2);
  CHECK(modes[0].mode == RebuildMode::full);
  CHECK(modes[0].next_due == at(2026, 12, 14));
  CHECK(modes[0].last_completed == at(2026, 9, 15));
  CHECK(modes[0].gpu_hours == doctest::Approx(100));
  CHECK(modes[1].mode == RebuildMode::steps);
  CHECK(modes[1].next_due == at(2026, 11, 30));
  CHECK(modes[1].gpu_hours == doctest::Approx(10));

  // Verified this cycle (in any mode): not again in it.
  p = plan({big}, {done("big", at(2026, 9, 30)), done("big", at(2026, 11, 1, 1), true)}, {},
           at(2026, 11, 20), config);
  CHECK(p.entries.empty());
  CHECK(p.skipped[0].why == SkipReason::verified_this_cycle);

  // Periods longer than the cycle: in October nothing is due before the cycle ends.
  auto slow = big;
  slow.cadence_s = {{RebuildMode::steps, 60 * 86400}, {RebuildMode::full, 90 * 86400}};
  const std::vector<HistoryItem> recent = {done("big", at(2026, 9, 15)),
                                           done("big", at(2026, 9, 20), true)};
  const auto quiet = plan({slow}, recent, {}, at(2026, 10, 10), config);
  CHECK(quiet.entries.empty());
  REQUIRE(quiet.skipped.size() == 1);
  CHECK(quiet.skipped[0].why == SkipReason::not_due);
  CHECK(quiet.skipped[0].reason.find("cadence: nothing due before 2026-11-01T00:00:00Z") == 0);
  CHECK(quiet.skipped[0].reason.find("steps every 60 d, last 2026-09-20T00:00:00Z, due "
                                     "2026-11-19T00:00:00Z") != std::string::npos);
  // A manual trigger without a mode runs the mode due first (steps, 11-19, before full's 12-14).
  const auto manual = plan({slow}, recent, {{"big", "1", at(2026, 10, 9), std::nullopt, "api"}},
                           at(2026, 10, 10), config);
  REQUIRE(manual.entries.size() == 1);
  CHECK(manual.entries[0].mode == RebuildMode::steps);
  // A failed-to-run verification does not count as done in its mode.
  HistoryItem errored = done("big", at(2026, 10, 20));
  errored.completed = false;
  const auto after_error = plan({big}, {done("big", at(2026, 6, 1)), errored}, {}, now, config);
  CHECK(after_error.entries[0].mode == RebuildMode::full);
  // A model without a cadence lists none.
  CHECK(plan({item("small")}, {}, {}, now, config).cadence.empty());
}

TEST_CASE("waves follow max_concurrent; invalid config is an error") {
  RotationConfig config;
  config.max_concurrent = 2;
  const auto p = plan({item("a"), item("b"), item("c")}, {}, {}, at(2026, 11, 1), config);
  CHECK(p.entries[0].wave == 0);
  CHECK(p.entries[1].wave == 0);
  CHECK(p.entries[2].wave == 1);
  config.max_concurrent = 0;
  CHECK_FALSE(plan_cycle({}, {}, {}, at(2026, 11, 1), config).ok());
}

TEST_CASE("subsample cost: the reference's own seconds, else its fraction of a full rebuild") {
  // 8 devices, a full rebuild of 96 GPU-hours; the subsample job recorded 3 hours.
  const auto recorded = subsample_cost(8, 96, 0.25, 3 * 3600.0);
  CHECK(recorded.basis == CostBasis::subsample_duration);
  CHECK(recorded.gpu_hours == doctest::Approx(24));
  const auto fraction = subsample_cost(8, 96, 0.25, std::nullopt);
  CHECK(fraction.basis == CostBasis::subsample_fraction);
  CHECK(fraction.gpu_hours == doctest::Approx(24 * 1.0));
  const auto cpu_only = subsample_cost(0, 0, 0.5, 120.0);
  CHECK(cpu_only.basis == CostBasis::subsample_duration);
  CHECK(cpu_only.gpu_hours == 0);
  // No reference: a full rebuild (the conservative side of a budget).
  const auto none = subsample_cost(8, 96, std::nullopt, std::nullopt);
  CHECK(none.basis == CostBasis::no_reference);
  CHECK(none.gpu_hours == doctest::Approx(96));
  CHECK(std::string(to_string(CostBasis::subsample_duration)) == "subsample.duration_s");

  InventoryItem big = item("big", 0, 96);
  big.subsample = subsample_cost(8, 96, 0.25, 2 * 3600.0);
  CHECK(big.gpu_hours(RebuildMode::subsample) == doctest::Approx(16));
  CHECK(big.cost_basis(RebuildMode::subsample) == CostBasis::subsample_duration);
  CHECK(big.gpu_hours(RebuildMode::steps) == doctest::Approx(9.6));
  CHECK(big.cost_basis(RebuildMode::steps) == CostBasis::steps_fraction);
  CHECK(big.gpu_hours(RebuildMode::full) == doctest::Approx(96));
  CHECK(big.cost_basis(RebuildMode::full) == CostBasis::full_run);
}

TEST_CASE("cadence with subsample: costed as subsample, and never run without a reference") {
  const auto now = at(2026, 11, 5);
  auto big = item("big", 0, 96);
  big.large = true;
  big.large_reason = "models.big.large is true";
  big.cadence_s = {{RebuildMode::subsample, 30 * 86400}, {RebuildMode::full, 90 * 86400}};
  big.subsample = subsample_cost(8, 96, 0.25, std::nullopt);
  // Full in September, due in December: subsample runs, costed at its fraction.
  const std::vector<HistoryItem> full_in_september = {done("big", at(2026, 9, 15))};
  auto p = plan({big}, full_in_september, {}, now);
  REQUIRE(p.entries.size() == 1);
  CHECK(p.entries[0].mode == RebuildMode::subsample);
  CHECK(p.entries[0].gpu_hours == doctest::Approx(24));
  CHECK(p.entries[0].cost_basis == CostBasis::subsample_fraction);
  CHECK(p.gpu_hours_planned == doctest::Approx(24));
  REQUIRE(p.cadence.size() == 1);
  CHECK(p.cadence[0].modes[1].mode == RebuildMode::subsample);
  CHECK(p.cadence[0].modes[1].cost_basis == CostBasis::subsample_fraction);
  CHECK(p.missing_subsample.empty());

  // Without a reference, subsample is the only due mode: skipped with that reason, no GPU spent.
  auto bare = big;
  bare.subsample = subsample_cost(8, 96, std::nullopt, std::nullopt);
  p = plan({bare}, full_in_september, {}, now);
  CHECK(p.entries.empty());
  REQUIRE(p.skipped.size() == 1);
  CHECK(p.skipped[0].why == SkipReason::no_subsample_reference);
  CHECK(p.skipped[0].reason.find("records no subsample reference") != std::string::npos);
  CHECK(p.gpu_hours_planned == 0);
  REQUIRE(p.missing_subsample.size() == 1);
  CHECK(p.missing_subsample[0].model == "big");
  CHECK(p.missing_subsample[0].why_large == "its cadence runs subsample every 30 d");
  CHECK(p.cadence[0].modes[1].cost_basis == CostBasis::no_reference);
  // A manual trigger without a mode runs the cadence's other mode, not the refused subsample.
  p = plan({bare}, full_in_september, {{"big", "1", at(2026, 11, 4), std::nullopt, "api"}}, now);
  REQUIRE(p.entries.size() == 1);
  CHECK(p.entries[0].mode == RebuildMode::full);

  // Another mode due as well: it runs, and the reason says subsample was not.
  auto stepped = bare;
  stepped.cadence_s = {{RebuildMode::subsample, 30 * 86400},
                       {RebuildMode::steps, 30 * 86400},
                       {RebuildMode::full, 90 * 86400}};
  p = plan({stepped}, full_in_september, {}, now);
  REQUIRE(p.entries.size() == 1);
  CHECK(p.entries[0].mode == RebuildMode::steps);
  CHECK(p.entries[0].reason.find("subsample (subsample every 30 d, never run) "
                                 "not run: the manifest records no subsample reference") !=
        std::string::npos);

  // A large model without a cadence is named too (the large-model rule runs steps and full).
  auto plain = item("plain", 0, 20);
  plain.large = true;
  plain.large_reason = "a full rebuild costs 20 GPU-hours, at least schedule.large_gpu_hours (8)";
  p = plan({plain, item("small")}, {}, {}, now);
  REQUIRE(p.missing_subsample.size() == 1);
  CHECK(p.missing_subsample[0].model == "plain");
  CHECK(p.missing_subsample[0].why_large == plain.large_reason);
  CHECK(p.entries.size() == 2);
}

TEST_CASE("cadence: a manual run of one mode never consumes another mode's due cadence") {
  const auto now = at(2026, 11, 20);  // the cycle is November
  auto big = item("big", 0, 96);
  big.large = true;
  big.cadence_s = {{RebuildMode::subsample, 30 * 86400}, {RebuildMode::full, 90 * 86400}};
  big.subsample = subsample_cost(8, 96, 0.25, std::nullopt);
  // Full last in July (due 2026-10-10), then a manual subsample run on November 3.
  HistoryItem manual_subsample{"big", "1", at(2026, 11, 3), RebuildMode::subsample, true, true};
  const std::vector<HistoryItem> history = {done("big", at(2026, 7, 12)), manual_subsample};
  auto p = plan({big}, history, {}, now);
  REQUIRE(p.entries.size() == 1);  // not "verified in this cycle": full is due, and runs
  CHECK(p.entries[0].mode == RebuildMode::full);
  REQUIRE(p.cadence.size() == 1);
  CHECK(p.cadence[0].modes[0].mode == RebuildMode::full);
  CHECK(p.cadence[0].modes[0].due);
  // The manual subsample run counts for subsample's own cadence: not due again this cycle.
  CHECK(p.cadence[0].modes[1].mode == RebuildMode::subsample);
  CHECK_FALSE(p.cadence[0].modes[1].due);
  CHECK(p.cadence[0].modes[1].next_due == at(2026, 12, 3));

  // The same run queued by the schedule ends the version's cycle, as before.
  auto scheduled = manual_subsample;
  scheduled.manual = false;
  p = plan({big}, {done("big", at(2026, 7, 12)), scheduled}, {}, now);
  CHECK(p.entries.empty());
  REQUIRE(p.skipped.size() == 1);
  CHECK(p.skipped[0].why == SkipReason::verified_this_cycle);

  // Without a cadence a manual run still counts as the cycle's verification.
  auto small = item("small");
  p = plan({small}, {{"small", "1", at(2026, 11, 3), RebuildMode::full, true, true}}, {}, now);
  CHECK(p.entries.empty());
  CHECK(p.skipped[0].why == SkipReason::verified_this_cycle);
}

TEST_CASE("cadence: a mode never run has no next due date, and is due") {
  auto big = item("big", 0, 100);
  big.cadence_s = {{RebuildMode::steps, 30 * 86400}, {RebuildMode::full, 90 * 86400}};
  const auto p = plan({big}, {done("big", at(2026, 10, 1), true)}, {}, at(2026, 11, 5));
  REQUIRE(p.cadence.size() == 1);
  const auto& full = p.cadence[0].modes[0];
  CHECK(full.mode == RebuildMode::full);
  CHECK_FALSE(full.last_completed.has_value());
  CHECK_FALSE(full.next_due.has_value());  // "never run", not the cycle's start
  CHECK(full.due);
  CHECK(p.entries[0].mode == RebuildMode::full);
  CHECK(p.entries[0].reason.find("full every 90 d, never run") != std::string::npos);
}

TEST_CASE("cadence: a period shorter than the cycle runs once per cycle, and is warned about") {
  auto fast = item("fast", 0, 10);
  fast.cadence_s = {{RebuildMode::steps, 7 * 86400}, {RebuildMode::full, 30 * 86400}};
  auto twin = fast;
  twin.version = "2";
  // Steps ran on December 2 (a scheduled run ends the cycle; a manual one here, so the version
  // is looked at): due again December 9, inside the cycle, yet not before the next one.
  HistoryItem steps{"fast", "1", at(2026, 12, 2), RebuildMode::steps, true, true};
  const auto p = plan({fast, twin}, {steps, done("fast", at(2026, 12, 2))}, {}, at(2026, 12, 20));
  REQUIRE(p.cadence.size() == 2);
  const auto& modes = p.cadence[0].modes;
  CHECK(modes[1].mode == RebuildMode::steps);
  CHECK_FALSE(modes[1].due);
  CHECK(modes[1].next_due == at(2027, 1, 1));  // the next cycle's start, not 12-09
  // One warning per model and mode (two versions, one model), for steps only: 30 days in a
  // 31-day month is within kCadenceSlack.
  REQUIRE(p.cadence_warnings.size() == 1);
  CHECK(p.cadence_warnings[0].model == "fast");
  CHECK(p.cadence_warnings[0].mode == RebuildMode::steps);
  CHECK(p.cadence_warnings[0].text ==
        "fast's cadence runs steps every 7 d, but this cycle (2026-12-01T00:00:00Z to "
        "2027-01-01T00:00:00Z) lasts 31 d and runs each mode of a version at most once: it runs "
        "about every 31 d; shorten the cycle (schedule.cron) or lengthen the period to match");
  // A weekly cron cycle keeps a 7-day period.
  RotationConfig weekly;
  weekly.cron = "0 3 * * mon";
  CHECK(plan({fast}, {}, {}, at(2026, 12, 20), weekly).cadence_warnings.size() == 0);
}
