#pragma once
// Which underpowered versions the current cycle calibrates (docs/design.md property 2):
// after the cycle's verifications are planned, versions whose latest conclusive verdict was judged
// against bands that cannot catch their declared tolerance.detect get seed-only reruns in the
// budget left over, at most `per_cycle` of them, each with the reason `reverify plan` shows.
// A version is left out when a complete calibration was stored after that verdict (its next
// verdict says whether the new bands are enough) or when its calibration already holds max_runs
// seed runs (more cannot be added; raising schedule.calibration_max_runs plans it again). An
// interrupted calibration is planned again and continues from the runs it kept.
// Pure: the verdicts and the plan come in, the decision with its reasons goes out.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "policies/rotation.hpp"

namespace reverify {

struct CalibrationCandidate {
  std::string model;
  std::string version;
  bool underpowered = false;  // of its latest conclusive verdict
  std::vector<std::string> underpowered_checks;
  std::optional<std::size_t> runs_needed;  // seed runs in all that would meet detect
  double gpu_hours_per_run = 0;            // one seed-only rerun: a full rebuild
  std::size_t seed_runs = 0;               // seed runs its calibration holds now
  bool calibrated_since_verdict = false;   // a complete calibration was stored after the verdict
};

struct CalibrationPlanConfig {
  std::size_t per_cycle = 1;    // calibrations planned per cycle at most; 0 = none
  std::size_t max_runs = 100;   // seed runs a calibration may hold in all (--max-runs)
  std::size_t first_batch = 5;  // runs assumed when no number is projected (calibrate's --seeds)
};

// Candidates in the order given (the caller passes them oldest verdict first); a version the plan
// already verifies this cycle is calibrated too (its calibration is what the next verdict uses).
// The estimated cost counts only the runs to add: the projected runs in all (one first batch
// more when no number is projected), within max_runs, less those the calibration holds. With a
// GPU budget, a calibration whose estimated cost does not fit what the plan left is skipped, and
// smaller later ones may still fit.
std::vector<PlannedCalibration> plan_calibrations(
    const std::vector<CalibrationCandidate>& candidates, const Plan& plan,
    const std::optional<double>& gpu_budget_hours, const CalibrationPlanConfig& config);

}  // namespace reverify
