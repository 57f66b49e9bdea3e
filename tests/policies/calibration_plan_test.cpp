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
        "underpowered: accuracy cannot catch tolerance.detect; ~12 seed runs in all would");

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
