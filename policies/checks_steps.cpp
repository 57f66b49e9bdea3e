#include "policies/checks_steps.hpp"

#include <algorithm>
#include <cmath>

#include "policies/check_power.hpp"
#include "policies/number_text.hpp"
#include "policies/tolerance.hpp"

namespace reverify {
namespace {

std::size_t compared_steps(const StepsCheckSpec& spec) {
  const std::size_t recorded = spec.recorded->values.size();
  if (!spec.requested)
    return recorded;
  return std::min(recorded, static_cast<std::size_t>(std::max<std::int64_t>(*spec.requested, 0)));
}

struct Deviation {
  double value = 0;
  std::size_t step = 0;
};

Deviation deviation(const std::vector<double>& curve, const std::vector<double>& recorded,
                    std::size_t n) {
  Deviation d;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = std::abs(curve[i] - recorded[i]);
    if (v > d.value)
      d = {v, i};
  }
  return d;
}

double noise_of(const std::vector<double>& recorded, std::size_t n) {
  double largest = 0;
  for (std::size_t i = 0; i < n; ++i)
    largest = std::max(largest, std::abs(recorded[i]));
  return kStepsNoise * std::max(largest, 1e-300);
}

// The steps band: exact (the noise) or the upper bound over the same-seed reruns' deviations.
struct StepsBand {
  std::optional<double> upper;
  std::optional<double> power_shift;
  std::string origin;  // "(exact: ...)" / "(from 3 same-seed reruns, ...)"
  std::string no_band_reason;
  std::size_t runs = 0;
  std::optional<std::size_t> runs_for_detect;  // same-seed reruns that would meet spec.detect
};

StepsBand steps_band(const StepsCheckSpec& spec, std::size_t n) {
  StepsBand band;
  const auto& recorded = spec.recorded->values;
  const double noise = noise_of(recorded, n);
  if (spec.exact) {
    band.upper = band.power_shift = noise;
    band.origin = "(level bitwise: exact, to float64 summation noise)";
    return band;
  }
  band.runs = spec.same_seed_runs.size();
  if (spec.same_seed_runs.size() < kMinSeedRuns) {
    band.no_band_reason = std::to_string(spec.same_seed_runs.size()) +
                          " same-seed rerun(s) recorded, " + std::to_string(kMinSeedRuns) +
                          " needed (`reverify calibrate " + spec.model_version +
                          " --mode steps --max-steps " + std::to_string(n) + " --seeds 3`)";
    return band;
  }
  std::vector<double> deviations;
  for (const auto& run : spec.same_seed_runs) {
    if (run.size() < n) {
      band.no_band_reason =
          "a same-seed rerun recorded only " + std::to_string(run.size()) + " of the " +
          std::to_string(n) + " steps compared (recalibrate with `reverify calibrate " +
          spec.model_version + " --mode steps --max-steps " + std::to_string(n) + "`)";
      return band;
    }
    deviations.push_back(std::max(deviation(run, recorded, n).value, noise));
  }
  const bool deterministic =
      std::all_of(deviations.begin(), deviations.end(), [&](double d) { return d <= noise; });
  if (deterministic) {
    band.upper = band.power_shift = std::max(noise, spec.floor);
    band.origin = "(exact: all " + std::to_string(deviations.size()) +
                  " same-seed reruns reproduced these steps, to float64 summation noise)";
    return band;
  }
  UpperBoundSpec bound_spec;
  bound_spec.alpha = spec.alpha;
  bound_spec.floor = spec.floor;
  const auto made = upper_bound(deviations, bound_spec);
  band.upper = made.bound->upper;
  band.power_shift = made.bound->power_shift;
  if (spec.detect && *band.power_shift > *spec.detect)
    band.runs_for_detect = upper_bound_runs_for(deviations, bound_spec, *spec.detect);
  band.origin = "(from " + std::to_string(deviations.size()) +
                " same-seed reruns, α=" + number_text(spec.alpha) + ")";
  return band;
}

}  // namespace

bool steps_banded(const StepsCheckSpec& spec) {
  return steps_band(spec, compared_steps(spec)).upper.has_value();
}

CheckResult check_steps(const StepsCheckSpec& spec) {
  CheckResult check;
  check.name = "steps:" + spec.recorded->metric;
  check.kind = CheckKind::steps;
  check.informational = spec.informational;
  const auto& recorded = spec.recorded->values;
  const std::size_t n = compared_steps(spec);
  check.evidence["steps_compared"] = n;
  check.evidence["steps_recorded"] = recorded.size();
  if (spec.requested)
    check.evidence["steps_requested"] = *spec.requested;
  std::string fewer;
  if (spec.requested && static_cast<std::size_t>(std::max<std::int64_t>(*spec.requested, 0)) > n) {
    fewer = " (the release recorded " + std::to_string(recorded.size()) + " step values, " +
            std::to_string(*spec.requested) + " were requested)";
  }
  if (!spec.rebuilt || spec.rebuilt->size() < n || n == 0) {
    check.outcome = CheckOutcome::failed;
    check.explanation = check.name + ": the rebuild reported " +
                        std::to_string(spec.rebuilt ? spec.rebuilt->size() : 0) +
                        " step values, expected " + std::to_string(std::max<std::size_t>(n, 1)) +
                        fewer;
    return check;
  }
  const auto d = deviation(*spec.rebuilt, recorded, n);
  const double noise = noise_of(recorded, n);
  const double observed = d.value <= noise ? 0 : d.value;
  check.observed = observed;
  check.reference = 0;
  check.evidence["worst_step"] = d.step;
  check.evidence["same_seed_reruns"] = spec.same_seed_runs.size();
  const std::string what =
      check.name + ": max |deviation| from the release's curve " + number_text(observed) +
      " over the first " + std::to_string(n) + " steps" + fewer +
      (observed > 0 ? " (worst at step " + std::to_string(d.step) + ")" : std::string());
  const auto band = steps_band(spec, n);
  if (!band.upper) {
    check.outcome = CheckOutcome::uncalibrated;
    check.explanation = what + ": uncalibrated, " + band.no_band_reason;
    return check;
  }
  check.band = CheckBand{std::nullopt, *band.upper};
  check.margin = *band.upper - observed;
  check.outcome = *check.margin >= 0 ? CheckOutcome::passed : CheckOutcome::failed;
  check.explanation = what + (check.outcome == CheckOutcome::passed ? ", within" : ", exceeds") +
                      " the same-seed bound " + band_text(*check.band) + " " + band.origin;
  describe_power(check, band.power_shift, spec.detect, band.runs_for_detect, band.runs);
  if (spec.informational)
    check.explanation += " (a note: a full rebuild is judged by its metrics and predictions)";
  return check;
}

CheckResult check_weights(const std::optional<std::string>& recorded,
                          const std::optional<std::string>& rebuilt) {
  CheckResult check;
  check.name = "weights:tensor_sha256";
  check.kind = CheckKind::weights;
  if (recorded)
    check.evidence["recorded"] = *recorded;
  if (rebuilt)
    check.evidence["rebuilt"] = *rebuilt;
  if (!recorded) {
    check.outcome = CheckOutcome::uncalibrated;
    check.explanation = "weights: the manifest records no weights.tensor_sha256 to compare with";
  } else if (!rebuilt) {
    check.outcome = CheckOutcome::failed;
    check.explanation = "weights: the rebuild produced no weights file to hash";
  } else {
    check.outcome = *recorded == *rebuilt ? CheckOutcome::passed : CheckOutcome::failed;
    check.explanation = check.outcome == CheckOutcome::passed
                            ? "weights: tensor hash identical (" + recorded->substr(0, 12) + "…)"
                            : "weights: tensor hash differs: rebuilt " + rebuilt->substr(0, 12) +
                                  "… vs recorded " + recorded->substr(0, 12) +
                                  "… (`reverify diff` names the tensors)";
  }
  return check;
}

}  // namespace reverify
