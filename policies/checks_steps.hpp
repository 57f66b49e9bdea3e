#pragma once
// Steps check and weights check (DESIGN, "Verdict").
//
// Steps: a same-seed comparison. The rebuild's first N step values (N = the steps requested, or
// every recorded step in a full rebuild) against the release's recorded curve: the largest
// absolute deviation, against a bound measured the same way on same-seed reruns (the release's
// own seeds; the platform's nondeterminism only). Deviations below the float64 reduction noise
// (kStepsNoise relative to the curve's largest value) count as zero; when every same-seed rerun
// reproduced the curve, the bound is that noise ("exact": the platform is deterministic), else
// the upper bound of policies/tolerance.hpp over the reruns' deviations. Level bitwise is exact
// without calibration. Different-seed runs never make a steps band: different seeds diverge from
// step 0. Fewer recorded steps than requested are compared and said so.
// Weights: tensor hash equality (bitwise level).

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "policies/check.hpp"

namespace reverify {

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
  bool informational = false;  // a full rebuild: a note, never a failure (DESIGN)
  std::string model_version;   // MODEL@VERSION, for the command that records the reruns
};

// REQUIRES: spec.recorded != nullptr.
CheckResult check_steps(const StepsCheckSpec& spec);

// Whether check_steps would have a band (for the alpha split).
bool steps_banded(const StepsCheckSpec& spec);

CheckResult check_weights(const std::optional<std::string>& recorded_tensor_sha256,
                          const std::optional<std::string>& rebuilt_tensor_sha256);

}  // namespace reverify
