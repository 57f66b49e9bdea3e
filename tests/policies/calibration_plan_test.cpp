// Which underpowered versions a cycle calibrates in the budget its verifications leave, and the
// reason `reverify plan` shows for each.

#include <doctest/doctest.h>

#include "policies/calibration_plan.hpp"

using namespace reverify;

namespace {

CalibrationCandidate candidate(const std::string& model, std::optional<std::size_t> runs_needed,
                               double gpu_hours_per_run = 0, bool underpowered = true) {
  CalibrationCandidate c;
  c.model = model;
  c.version = "1";
  c.underpowered = underpowered;
  c.underpowered_checks = {"accuracy"};
  c.runs_needed = runs_needed;
  c.gpu_hours_per_run = gpu_hours_per_run;
  return c;
}

std::vector<std::string> models(const std::vector<PlannedCalibration>& planned) {
  std::vector<std::string> out;
  for (const auto& p : planned)
    out.push_back(p.model);
  return out;
}

}  // namespace

TEST_CASE("only underpowered versions, in the order given, at most per_cycle") {
  CalibrationPlanConfig config;
  config.per_cycle = 2;
  const std::vector<CalibrationCandidate> candidates = {
      candidate("a", 12, 0, /*underpowered=*/false), candidate("b", 12), candidate("c", 30),
      candidate("d", 8)};
  auto planned = plan_calibrations(candidates, Plan{}, std::nullopt, config);
  CHECK(models(planned) == std::vector<std::string>{"b", "c"});
  CHECK(planned[0].max_runs == 100);
  CHECK(planned[0].reason ==
        "underpowered: accuracy cannot catch tolerance.detect; ~12 seed runs in all would (0 so "
        "far)");

  config.per_cycle = 0;
  CHECK(plan_calibrations(candidates, Plan{}, std::nullopt, config).empty());
}

TEST_CASE("the GPU budget the verifications left: what does not fit is skipped, smaller fits") {
  Plan plan;
  plan.gpu_hours_planned = 6;
  CalibrationPlanConfig config;
  config.per_cycle = 5;
  // 10 runs x 0.5 h = 5 h > the 4 h left; 6 runs x 0.5 h = 3 h fits; then 1 h is left.
  const std::vector<CalibrationCandidate> candidates = {
      candidate("big", 10, 0.5), candidate("small", 6, 0.5), candidate("after", 4, 0.5)};
  auto planned = plan_calibrations(candidates, plan, 10.0, config);
  CHECK(models(planned) == std::vector<std::string>{"small"});
  CHECK(planned[0].gpu_hours == doctest::Approx(3));
  CHECK(planned[0].reason.find("3 of 4 GPU hours left") != std::string::npos);

  plan.gpu_hours_planned = 10;  // no room at all
  CHECK(plan_calibrations(candidates, plan, 10.0, config).empty());
  // Without a budget every underpowered version fits (up to per_cycle).
  CHECK(plan_calibrations(candidates, plan, std::nullopt, config).size() == 3);
}

TEST_CASE("the cap bounds the runs, and an unreachable projection measures again") {
  auto planned =
      plan_calibrations({candidate("far", 300, 1), candidate("unknown", std::nullopt, 1)}, Plan{},
                        std::nullopt, CalibrationPlanConfig{5, 40, 5});
  REQUIRE(planned.size() == 2);
  CHECK(planned[0].gpu_hours == doctest::Approx(40));
  CHECK(planned[0].max_runs == 40);
  CHECK(planned[0].reason.find("300 seed runs in all would; capped at 40") != std::string::npos);
  CHECK(planned[1].gpu_hours == doctest::Approx(5));  // one first batch
  CHECK(planned[1].reason.find("no number of seed runs would") != std::string::npos);
}

TEST_CASE("only the runs to add are costed; a capped or freshly calibrated version is left out") {
  CalibrationPlanConfig config{5, 40, 5};
  auto held = candidate("held", 30, 0.5);
  held.seed_runs = 20;  // 10 more to reach the projection
  auto unknown = candidate("unknown", std::nullopt, 0.5);
  unknown.seed_runs = 38;  // one first batch more, within the cap: 2
  auto capped = candidate("capped", 300, 0.5);
  capped.seed_runs = 40;  // nothing can be added
  auto fresh = candidate("fresh", 30, 0.5);
  fresh.calibrated_since_verdict = true;  // its next verdict tells
  auto enough = candidate("enough", 12, 0.5);
  enough.seed_runs = 15;  // an interrupted calibration already holds the projection
  auto planned = plan_calibrations({held, unknown, capped, fresh, enough}, Plan{}, 100.0, config);
  CHECK(models(planned) == std::vector<std::string>{"held", "unknown", "enough"});
  CHECK(planned[0].runs_to_add == 10);
  CHECK(planned[0].gpu_hours == doctest::Approx(5));
  CHECK(planned[0].reason.find("~30 seed runs in all would (20 so far)") != std::string::npos);
  CHECK(planned[1].runs_to_add == 2);
  CHECK(planned[1].gpu_hours == doctest::Approx(1));
  CHECK(planned[1].reason.find("(38 so far, at most 40 in all)") != std::string::npos);
  CHECK(planned[2].runs_to_add == 0);
  CHECK(planned[2].gpu_hours == doctest::Approx(0));

  // A budget that holds the runs to add but not the runs in all.
  auto tight = plan_calibrations({held}, Plan{}, 5.0, config);
  REQUIRE(tight.size() == 1);
  CHECK(tight[0].reason.find("5 of 5 GPU hours left") != std::string::npos);
}
