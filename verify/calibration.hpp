#pragma once
// Calibration (DESIGN.md, "Verdict" -> tolerance): k seed-only rebuilds of one model version,
// each with REVERIFY_SEED_OVERRIDE = first_seed + i, turned into the ToleranceSpec the daemon
// store keeps and later verdicts use. Preflight runs once first: calibrating on drifted inputs
// would measure the wrong model. Blocking.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/pipeline.hpp"

namespace reverify {

struct CalibrationRequest {
  VerificationRequest base;  // verification_id prefixes each run's id: <id>-seed<N>
  int runs = 5;
  std::int64_t first_seed = 1;
};

struct CalibrationOutcome {
  std::optional<ToleranceSpec> spec;  // set when every run succeeded
  std::optional<Verdict> failure;     // failed:input-drift or the first run's error:* otherwise
  nlohmann::json runs = nlohmann::json::array();  // per run: seed, primary, durations
  std::string log_tail;                           // of the last run
};

CalibrationOutcome run_calibration(const CalibrationRequest& request, PipelineDeps& deps);

// Outputs of seed-only reruns -> their ToleranceSpec (also used by `reverify capture
// --seed-runs`). Error naming the run whose predictions cannot be read.
Result<ToleranceSpec> tolerance_from_outputs(const std::vector<JobOutputs>& runs,
                                             double flip_threshold = 0.5);

// As JSON (the manifest's `tolerance` keys): tolerance_to_json in store/tolerance_json.hpp.

}  // namespace reverify
