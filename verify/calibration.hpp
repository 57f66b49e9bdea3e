#pragma once
// Calibration (docs/design.md, "Verdict" -> tolerance): reruns of one model version that measure
// the spread later verdicts are judged against, stored as a ToleranceSpec. Blocking.
//
// - full mode: seed-only reruns, REVERIFY_SEED_OVERRIDE = first_seed, first_seed + 1, ...,
//   skipping the seeds the spec already used and every seed the release recorded (an override
//   equal to one can reproduce the release), each turned at once into its metrics and its
//   distribution statistics against the release's predictions. With evaluation.scoring the
//   metrics are reverify's own scores of each run's predictions, not the job's figures.
// - steps mode: same-seed reruns of the first max_steps steps (the release's own seeds: the
//   platform's nondeterminism), which replace the spec's steps_same_seed_runs.
// The new runs are appended to the version's current calibration (the manifest's tolerance with
// the stored calibration over it). With until_power, batches of reruns continue until every
// band with a declared tolerance.detect reaches it, or max_runs runs exist, or no number of runs
// would even with a spread at the low end of what the runs so far allow (95% lower confidence
// limit); each batch is what the projection with the spread measured so far needs (half as many
// again, at least 5, when it says no number would but the low end says some would: that spread is
// itself an estimate). Preflight runs once first: calibrating on drifted inputs would measure the
// wrong model. Before each run, `interrupt` may stop the calibration early (the daemon needs its
// slot, or is stopping): the runs so far are kept and the outcome says it was interrupted.
// Afterwards: the bands and their power (decide_verdict on the seed means), and the leave-one-out
// estimate (policies/calibration.hpp).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policies/calibration.hpp"
#include "verify/pipeline.hpp"

namespace reverify {

struct CalibrationRequest {
  VerificationRequest base;  // verification_id prefixes each run's id: <id>-seed<N>
  // Reruns to add (until_power: the first batch). 0 (full mode, without until_power): none; the
  // calibration as it stands is described and judged by leave-one-out again.
  int runs = 5;
  std::optional<std::int64_t> first_seed;  // default: one past the largest seed already used
  bool until_power = false;
  int max_runs = 100;                    // until_power: seed runs in all, at most
  std::map<std::string, double> detect;  // the config's tolerance.detect overrides
  // Asked before each run (on the calibrating thread): a reason stops the calibration there.
  std::function<std::optional<std::string>()> interrupt;
  // Full mode: called after each seed run is added, with the calibration as it stands (the
  // daemon stores it run by run).
  std::function<void(const ToleranceSpec& so_far)> on_run;
};

struct CalibrationOutcome {
  std::optional<ToleranceSpec> spec;              // the version's whole calibration after this one
  std::optional<Verdict> failure;                 // failed:input-drift or the failing run's error:*
  nlohmann::json runs = nlohmann::json::array();  // per new run: seed, primary, durations
  std::string log_tail;                           // of the last run
  std::size_t added = 0;
  std::vector<CheckResult> bands;  // each band and its power, with every run
  PowerSummary power;
  std::optional<LeaveOneOut> leave_one_out;  // full mode
  std::string stopped;                       // until_power or interrupted: why it stopped
  bool interrupted = false;                  // stopped early by request.interrupt
};

CalibrationOutcome run_calibration(const CalibrationRequest& request, PipelineDeps& deps);

// What describe_bands and leave_one_out need of the release besides its manifest: its
// predictions' shape and, with `scoring` (evaluation.scoring's inputs), reverify's scores of them
// and every parity scope's size. Empty without predictions; an error when they cannot be scored.
Result<ReleaseShape> release_shape(const Predictions* release, const ScoringInputs* scoring);

// Outputs of seed-only reruns -> their ToleranceSpec (`reverify capture --seed-runs`), with the
// distribution statistics against the release's predictions file when given. A run whose
// predictions equal the release's, or an earlier run's, value for value, is no draw from the seed
// spread: it is left out, and `left_out` says which (by its index in `runs`) and why. With
// `scoring` (evaluation.scoring's inputs) each run's predictions are scored by reverify and its
// numbers replace the job's (policies/own_scores.hpp). Error naming the run whose predictions
// cannot be read or scored.
struct SeedRunTolerance {
  ToleranceSpec spec;
  std::vector<std::pair<std::size_t, std::string>> left_out;
};
Result<SeedRunTolerance> tolerance_from_outputs(
    const std::vector<JobOutputs>& runs,
    const std::optional<std::filesystem::path>& release_predictions,
    const ScoringInputs* scoring = nullptr, double flip_threshold = 0.5);

// Outputs of same-seed reruns (`reverify capture --same-seed-runs`) -> steps_same_seed_runs and,
// for the runs that wrote predictions, same_seed_scores: each run's predictions hashed and scored
// the way a seed run's are (with `scoring`, reverify's own primary and segment metrics; else the
// job's). Error naming the run whose predictions cannot be read or scored.
Result<ToleranceSpec> same_seed_from_outputs(const std::vector<JobOutputs>& runs,
                                             const ScoringInputs* scoring = nullptr);

}  // namespace reverify
