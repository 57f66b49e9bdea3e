#pragma once
// The verdict engine: checks of a rebuild (policies/checks.hpp) against its manifest and seed-run
// calibration, combined into docs/design.md's verdict classes (policies/verdict_model.hpp) with a
// short human explanation. Pure: every input is data.
//
// A full rebuild is judged by its primary metric, its segment metrics (reverify's own numbers
// where the manifest has a scoring spec: policies/own_scores.hpp) and its predictions
// (distribution statistics against the release); its step curve, when both sides have one, is a
// same-seed note that never decides (a rebuild runs the release's seeds, but at level
// equivalent only being unlike another seed's run fails it); with recorded same-seed scores
// (tolerance.same_seed_scores) a full rebuild below level bitwise also gets the
// "same-seed:predictions" note (policies/checks.hpp), which never decides. A steps rebuild is
// judged by its steps check alone. Level bitwise adds the weights check; level rerunnable
// reports every check and enforces none. The false-page rate is split over the families of
// deciding checks (policies/bands.hpp).
//
// Class precedence: a failed primary, segment, steps or weights check -> failed:out-of-tolerance;
// else a failed distribution check -> failed:distribution-shift; else an uncalibrated deciding
// check -> uncalibrated; else passed. A not-judged check never decides. Fail closed
// (policies/coverage.hpp): a deciding check the release defines that cannot be computed fails
// as "not computed" (a family of them is one row), and one the release's own side cannot give
// (its predictions unreadable, its own score undefined) makes the verdict error:manifest-invalid;
// Verdict::coverage counts them, so a verdict never passes with fewer. Headline: the failed
// primary metric when it failed, else the failed check worst relative to its band (margin /
// half-width), else the first uncalibrated check, else the primary (or steps) check.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "core/predictions.hpp"
#include "policies/bands.hpp"
#include "policies/checks.hpp"
#include "policies/own_scores.hpp"
#include "policies/stats.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

struct VerdictPolicy {
  double false_page_rate = 0.01;  // alpha per verification
  AlphaShares alpha_shares;       // how it is split over the families of checks
  // Uncalibrated checks get these bands instead of `uncalibrated`, and the verdict says so.
  bool allow_fallback = false;
  // distribution statistic or metric name -> band (upper bound for statistics, half-width for
  // metrics). Statistics without an entry stay informational when fallback is allowed.
  std::map<std::string, double> fallback_tolerance{{"psi", 0.1}};
  double flip_threshold = 0.5;  // 1-D scores: decision = score >= threshold
  // Appended to every command a verdict suggests, so that it runs as printed against the same
  // registry and state: "--config /etc/reverify/reverify.yaml" (settings/ sets it from the
  // config file's path; `reverify run` without one, its --registry or --manifest). "" = none.
  std::string command_scope;
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
  // The statistics against the release, when already known (leave-one-out estimates); otherwise
  // they are computed from `predictions` and the release's.
  std::optional<stats::Comparison> comparison;
  // The parity statistics against the release, when already known (a held-out seed run's
  // recorded parity_seed_runs values: policies/own_scores.hpp recorded_parity); judged when
  // `scores` brings no parity of its own.
  std::optional<std::vector<ParityStatistic>> parity;
  std::optional<std::string> tensor_sha256;  // computed by reverify from the weights file
  // Which tensors differ from the released weights, when the tensor hashes differ.
  std::optional<TensorDifference> tensors;
  // The job ran with this seed instead of the release's (a fresh-seed rerun, `--seed-override`):
  // the same-seed references (the steps curve's same-seed band, the same-seed reruns'
  // predictions) do not describe it, so their notes are not judged.
  std::optional<std::int64_t> seed_override;
};

struct VerdictInputs {
  const Manifest& manifest;
  RebuildObservation rebuild;
  const Predictions* original_predictions = nullptr;  // the released model's, not owned
  // A stored calibration (reverify calibrate); its entries override the manifest's tolerance
  // key by key (metric, segment metric, distribution statistic, steps, floor, detect).
  const ToleranceSpec* calibration = nullptr;
  // tolerance.detect overrides from the daemon's config for this model (models.<name>.detect).
  std::map<std::string, double> detect = {};
  // reverify's own scoring of the release's and the rebuild's predictions (evaluation.scoring):
  // its numbers replace the job's for the primary metric and the scored segments, and the job's
  // become the "job:metric-agrees" cross-check (policies/own_scores.hpp). Not owned. Null
  // original_predictions while the manifest names them means they could not be read: the checks
  // on them cannot be computed, and the verdict is error:manifest-invalid (verify/ stops such a
  // release in preflight, naming why).
  const OwnScores* scores = nullptr;
  // A rebuild's verdict fails closed (policies/coverage.hpp): every deciding check the release
  // defines is a deciding row. Calibration's verdicts over recorded seed-run values (the bands at
  // the seed means, leave-one-out) judge only what was recorded, and set this false.
  bool fail_closed = true;
};

Verdict decide_verdict(const VerdictInputs& inputs, const VerdictPolicy& policy = {});

// Preflight mismatches (image, dataset, eval set, lockfile): failed:input-drift naming the first
// failed check. REQUIRES: at least one check failed.
Verdict verdict_for_input_drift(std::vector<CheckResult> input_checks);

// error:* verdicts (manifest invalid, provision, job, runner lost) with the system's message.
Verdict verdict_for_error(VerdictClass cls, std::string message);

// The manifest's tolerance overlaid with a stored calibration, key by key (its seed_overrides
// list, when it has one, replaces the manifest's whole), then `detect`.
ToleranceSpec merged_tolerance(const Manifest& manifest, const ToleranceSpec* calibration,
                               const std::map<std::string, double>& detect = {});

}  // namespace reverify
