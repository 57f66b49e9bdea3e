#include "policies/calibration_plan.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "policies/number_text.hpp"

namespace reverify {

std::vector<PlannedCalibration> plan_calibrations(
    const std::vector<CalibrationCandidate>& candidates, const Plan& plan,
    const std::optional<double>& gpu_budget_hours, const CalibrationPlanConfig& config) {
  std::vector<PlannedCalibration> planned;
  double left = gpu_budget_hours ? *gpu_budget_hours - plan.gpu_hours_planned : 0;
  for (const auto& c : candidates) {
    if (planned.size() >= config.per_cycle)
      break;
    if (!c.underpowered || c.calibrated_since_verdict || c.seed_runs >= config.max_runs)
      continue;
    // Projected runs in all, within the cap; unknown (no number would with the spread measured
    // so far, itself an estimate): one first batch more to measure it again.
    const std::size_t runs =
        std::min(c.runs_needed.value_or(c.seed_runs + config.first_batch), config.max_runs);
    const std::size_t to_add = runs > c.seed_runs ? runs - c.seed_runs : 0;
    const double cost = double(to_add) * c.gpu_hours_per_run;
    if (gpu_budget_hours && cost > left + 1e-9)
      continue;
    left -= cost;
    std::string reason =
        "underpowered: " +
        (c.underpowered_checks.empty() ? "a band" : joined(c.underpowered_checks)) +
        " cannot catch tolerance.detect; ";
    if (c.runs_needed && *c.runs_needed <= config.max_runs) {
      reason += "~" + std::to_string(*c.runs_needed) + " seed runs in all would (" +
                std::to_string(c.seed_runs) + " so far)";
    } else if (c.runs_needed) {
      reason += std::to_string(*c.runs_needed) + " seed runs in all would; capped at " +
                std::to_string(config.max_runs);
    } else {
      reason +=
          "with the spread measured so far no number of seed runs would: measuring it "
          "again (" +
          std::to_string(c.seed_runs) + " so far, at most " + std::to_string(config.max_runs) +
          " in all)";
    }
    if (gpu_budget_hours)
      reason += "; " + number_text(cost) + " of " + number_text(left + cost) + " GPU hours left";
    planned.push_back({c.model, c.version, config.max_runs, to_add, cost, std::move(reason)});
  }
  return planned;
}

}  // namespace reverify
