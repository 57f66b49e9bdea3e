#pragma once
// The verdict engine: checks of a rebuild against its manifest and seed-run calibration, combined
// into DESIGN's verdict classes with a short human explanation. Pure: every input is data.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "core/predictions.hpp"
#include "policies/check.hpp"

namespace reverify {

struct VerdictPolicy {
  double false_page_rate = 0.01;  // alpha per verification, split over the calibrated checks
  // Uncalibrated checks get these bands instead of `uncalibrated`, and the verdict says so.
  bool allow_fallback = false;
  // distribution statistic or metric name -> band (upper bound for statistics, half-width for
  // metrics). Statistics without an entry stay informational when fallback is allowed.
  std::map<std::string, double> fallback_tolerance{{"psi", 0.1}};
  double flip_threshold = 0.5;  // 1-D scores: decision = score >= threshold
};

// What a rebuild produced (result.json + the files it named, already read and hashed).
struct RebuildObservation {
  bool steps_mode = false;                // REVERIFY_MODE=steps: only the steps check applies
  std::optional<std::int64_t> max_steps;  // steps mode: REVERIFY_MAX_STEPS
  std::optional<std::string> primary_name;
  std::optional<double> primary;  // absent -> finding
  SegmentMetrics segments;
  std::optional<std::vector<double>> steps;
  const Predictions* predictions = nullptr;  // rebuilt predictions, not owned
  std::optional<std::string> tensor_sha256;  // computed by reverify from the weights file
};

struct VerdictInputs {
  const Manifest& manifest;
  RebuildObservation rebuild;
  const Predictions* original_predictions = nullptr;  // the released model's, not owned
  // A stored calibration (reverify calibrate); its entries override the manifest's tolerance
  // key by key (metric, segment metric, distribution statistic, steps, floor).
  const ToleranceSpec* calibration = nullptr;
};

Verdict decide_verdict(const VerdictInputs& inputs, const VerdictPolicy& policy = {});

// Preflight mismatches (image, dataset, eval set, lockfile): failed:input-drift naming the first
// failed check. REQUIRES: at least one check failed.
Verdict verdict_for_input_drift(std::vector<CheckResult> input_checks);

// error:* verdicts (manifest invalid, provision, job, runner lost) with the system's message.
Verdict verdict_for_error(VerdictClass cls, std::string message);

// Calibration (reverify calibrate): k seed-only reruns -> the ToleranceSpec to store.
struct SeedRun {
  std::optional<double> primary;
  SegmentMetrics segments;
  std::optional<std::vector<double>> steps;
  const Predictions* predictions = nullptr;  // not owned
};
// seed_runs[primary_name], segment_seed_runs, distribution_pairs over all pairs i < j (i is the
// reference side of PSI), steps_pairs_max_abs over all pairs (first min-length steps).
ToleranceSpec calibrate_from_runs(const std::string& primary_name, const std::vector<SeedRun>& runs,
                                  double flip_threshold = 0.5);

// The manifest's tolerance overlaid with a stored calibration, key by key.
ToleranceSpec merged_tolerance(const Manifest& manifest, const ToleranceSpec* calibration);

}  // namespace reverify
