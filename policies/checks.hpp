#pragma once
// policies/checks: each kind of check a rebuild is judged by, as a pure function from what was
// observed and the band's inputs to a CheckResult (policies/verdict_model.hpp). The bands come
// from policies/bands.hpp, the power sentences from policies/power.hpp; the verdict engine
// (policies/verdict.hpp) decides which checks apply and how much alpha each gets.
//
// Metric checks (primary and segment metrics): the rebuild's value inside the metric's band, with
// the band's power against the owner's declared shift.
//
// Distribution checks (ks, psi, wasserstein, paired statistics) of a stats::Comparison between
// the released and the rebuilt predictions, against upper bounds (policies/bands.hpp):
// calibrated from the same statistic between the release and each seed run, or given
// explicitly (policy fallback, or a `reverify compare --tolerances` file).
//
// Steps check and weights check (docs/design.md, "Verdict").
//
// Steps: a same-seed comparison. The rebuild's first N step values (N = the steps requested, or
// every recorded step in a full rebuild) against the release's recorded curve: the largest
// absolute deviation, against a bound measured the same way on same-seed reruns (the release's
// own seeds; the platform's nondeterminism only). Deviations below the float64 reduction noise
// (kStepsNoise relative to the curve's largest value) count as zero; when every same-seed rerun
// reproduced the curve, the bound is that noise ("exact": the platform is deterministic), else
// the upper bound of policies/bands.hpp over the reruns' deviations. Level bitwise is exact
// without calibration. Different-seed runs never make a steps band: different seeds diverge from
// step 0. Fewer recorded steps than requested are compared and said so.
// Weights: tensor hash equality (bitwise level).
//
// Same-seed predictions ("same-seed:predictions"): a note, never deciding, for a full rebuild at
// level equivalent (at bitwise the weights hash decides already), against the same-seed reruns
// capture scored (tolerance.same_seed_scores). When every rerun reproduced the release's
// predictions bit for bit (their values' hashes equal the release's), a rebuild whose
// predictions differ fails it, naming how many records differ: something besides the seed moved.
// Otherwise the rebuild's primary metric against the range of the release's value and the
// reruns' (widened by float noise, kSameSeedNoise relative): outside it fails it, whether or not
// the seed band holds it. Not judged (with why) when the side it needs is missing.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "core/predictions.hpp"
#include "core/statistic.hpp"
#include "policies/bands.hpp"
#include "policies/stats.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

// ---- Metric checks ------------------------------------------------------------------------------

struct MetricCheckSpec {
  std::string name;  // "primary:accuracy", "segment:digit=8:accuracy"
  CheckKind kind = CheckKind::primary;
  std::optional<double> observed;  // absent: the rebuild did not report it (a finding)
  std::optional<double> recorded;  // the released run's value, for "rebuilt - recorded"
  std::span<const double> seed_runs;
  MetricBandSpec band;           // alpha (per check), floor, examples
  std::optional<double> detect;  // tolerance.detect for this check
  bool higher_is_better = true;
  std::optional<double> fallback_tolerance;  // used only when uncalibrated, and said so
  std::string how_to_calibrate;
};

CheckResult check_metric(const MetricCheckSpec& spec);

// ---- Distribution checks ------------------------------------------------------------------------

struct DistributionBands {
  // statistic -> its value between the release's predictions and each seed run's
  std::map<Statistic, std::vector<double>> seed_runs;
  double alpha = 0.01;                           // per check, one-sided
  std::map<Statistic, double> floor;             // statistic -> smallest bound
  std::map<Statistic, double> detect;            // statistic -> shift to catch (tolerance.detect)
  std::map<Statistic, double> fixed;             // statistic -> explicit upper bound
  std::string fixed_source = "policy fallback";  // named in explanations
  // Without any band a statistic is `uncalibrated`; `unbanded_informational` reports it as
  // informational instead (never deciding), e.g. when the policy allows fallbacks for some.
  bool unbanded_informational = false;
  // An operating threshold was declared (evaluation.scoring.thresholds): 1-D predictions outside
  // [0, 1] (regression outputs, logits) have a meaningful flip rate only at a declared one, so
  // without it the flip rate is not judged.
  bool threshold_declared = false;
  // The task is ranking (evaluation.scoring.task): its scores order documents within a query and
  // no record has a decision to flip, so the flip rate means nothing for it at any threshold. It
  // is left out, no row and no alpha, and the verdict says so in one line (kFlipRateLeftOut);
  // the ranking parity checks judge what a ranking changes.
  bool ranking = false;
  std::string how_to_calibrate;
};

// A statistic that means nothing for the task and is left out: no row, no alpha, not a check the
// release defines. Only the flip rate of a ranking (DistributionBands::ranking). A verdict and
// `reverify compare` leave out the same statistics and say so in the same line (kFlipRateLeftOut).
bool left_out(Statistic statistic, bool ranking);

// The one line a ranking verdict's explanation (and `reverify compare`) carries for the flip rate
// it leaves out.
inline constexpr const char* kFlipRateLeftOut =
    "distribution:flip_rate left out: it counts records whose decision flips, a classifier's "
    "measure; a ranking decides nothing per record, and its top-k parity checks judge what moved";

// How a statistic's upper bound is modelled (policies/bands.hpp): its resolution (flip rate: one
// row of c; KS: one score) and whether it counts rows, at one-sided `alpha` with a floor.
UpperBoundSpec statistic_bound_spec(Statistic statistic, const stats::Comparison& c, double alpha,
                                    double floor = 0);

// Number of statistics of `c` that have a calibrated bound in `bands` (the family's Bonferroni m).
std::size_t banded_distribution_checks(const stats::Comparison& c, const DistributionBands& bands);

std::vector<CheckResult> distribution_checks(const stats::Comparison& c,
                                             const DistributionBands& bands);

// Quantiles of both sides as JSON: {"original": {"p1": ..}, "rebuilt": {..}}.
nlohmann::json quantiles_json(const stats::Comparison& c);

// ---- Steps and weights checks -------------------------------------------------------------------

// Float64 sums in a different order (SIMD width, thread count) move the last bits: a step value
// within this relative distance of the recorded one is the same value.
inline constexpr double kStepsNoise = 1e-12;

struct StepsCheckSpec {
  const StepValues* recorded = nullptr;          // the manifest's evaluation.steps
  const std::vector<double>* rebuilt = nullptr;  // absent: a finding
  std::optional<std::int64_t> requested;         // steps mode: REVERIFY_MAX_STEPS
  bool exact = false;                            // bitwise: no calibration needed
  std::span<const std::vector<double>> same_seed_runs;
  double alpha = 0.01;
  double floor = 0;
  std::optional<double> detect;
  bool informational = false;  // a full rebuild: a note, never a failure (docs/design.md)
  std::string model_version;   // MODEL@VERSION, for the command that records the reruns
  std::string command_scope;   // VerdictPolicy::command_scope, for the same command
};

// REQUIRES: spec.recorded != nullptr.
CheckResult check_steps(const StepsCheckSpec& spec);

// Whether check_steps would have a band (for the alpha split).
bool steps_banded(const StepsCheckSpec& spec);

// The tensors of the rebuilt weights that differ from the released ones (their bytes or dtype,
// or present in one file only), when the released weights could be read (`unavailable` says why
// not otherwise).
struct TensorDifference {
  std::vector<std::string> differing;
  std::size_t tensors = 0;  // in the two files together
  std::string unavailable;
};
// Tensors a failed weights check names in its explanation; the rest are counted (the
// verification page and `reverify run` list them all).
inline constexpr std::size_t kTensorsNamed = 3;

// A failed check's observed value is the number of tensors that differ (reference 0), when
// `difference` says.
CheckResult check_weights(const std::optional<std::string>& recorded_tensor_sha256,
                          const std::optional<std::string>& rebuilt_tensor_sha256,
                          const TensorDifference* difference = nullptr);

// ---- Same-seed predictions
// ------------------------------------------------------------------------

inline constexpr double kSameSeedNoise = 1e-9;  // relative: a sum in another order, not a change

struct SameSeedSpec {
  std::span<const SameSeedScore> runs;     // tolerance.same_seed_scores; not empty
  const Predictions* released = nullptr;   // the release's predictions, when read
  const Predictions* rebuilt = nullptr;    // the rebuild's, when it wrote them
  std::string primary_name;                // evaluation.primary's metric
  std::optional<double> released_primary;  // the release's value (reverify's, with a spec)
  std::optional<double> rebuilt_primary;   // the rebuild's
  bool primary_failed = false;             // the primary check itself failed (out of band)
  // The rebuild ran this seed, not the release's: not judged (the reruns do not describe it).
  std::optional<std::int64_t> seed_override;
};
CheckResult check_same_seed(const SameSeedSpec& spec);

}  // namespace reverify
