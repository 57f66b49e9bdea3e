#include "policies/checks_metric.hpp"

#include <cmath>

#include "policies/check_power.hpp"
#include "policies/number_text.hpp"

namespace reverify {
namespace {

const char* direction(double delta, bool higher_is_better) {
  if (delta == 0)
    return "unchanged";
  return (delta > 0) == higher_is_better ? "improved" : "regressed";
}

// "primary:accuracy 0.9012 is 0.0677 below the seed mean 0.9689 (regressed), outside the band
// [0.9540, 0.9821]"
void judge(CheckResult& check, double observed, double reference, const CheckBand& band,
           bool inside, double margin, bool higher_is_better, const std::string& origin) {
  const double delta = observed - reference;
  check.observed = observed;
  check.reference = reference;
  check.band = band;
  check.margin = margin;
  check.outcome = inside ? CheckOutcome::passed : CheckOutcome::failed;
  check.evidence["direction"] = direction(delta, higher_is_better);
  check.explanation =
      check.name + " " + number_text(observed) + " is " + number_text(std::abs(delta)) +
      (delta >= 0 ? " above " : " below ") + origin + " " + number_text(reference) +
      (inside ? std::string(", within")
              : std::string(" (") + direction(delta, higher_is_better) + "), outside") +
      " the band " + band_text(band);
}

std::string model_text(const MetricBand& band) {
  switch (band.scale) {
    case MetricScale::proportion:
      return "a proportion over " + std::to_string(*band.examples) + " examples";
    case MetricScale::unit:
      return "bounded in [0, 1], angular scale";
    case MetricScale::real:
      return "Student t";
  }
  return "";
}

}  // namespace

CheckResult check_metric(const MetricCheckSpec& spec) {
  CheckResult check;
  check.name = spec.name;
  check.kind = spec.kind;
  check.evidence["seed_runs"] = spec.seed_runs.size();
  if (spec.recorded)
    check.evidence["recorded"] = *spec.recorded;
  if (!spec.observed) {
    check.outcome = CheckOutcome::failed;
    check.explanation = check.name + ": the rebuild did not report this metric";
    if (spec.recorded)
      check.reference = *spec.recorded;
    return check;
  }
  if (spec.recorded)
    check.evidence["rebuilt_minus_recorded"] = *spec.observed - *spec.recorded;
  const auto made = metric_band(spec.seed_runs, spec.band);
  if (const auto& band = made.band) {
    judge(check, *spec.observed, band->center, CheckBand{band->lower, band->upper},
          band->contains(*spec.observed), band->margin(*spec.observed), spec.higher_is_better,
          "the seed mean");
    check.explanation += " (" + std::to_string(band->n) + " seed runs, " + model_text(*band) +
                         ", α=" + number_text(band->alpha) +
                         (band->discrete_applied ? ", whole-example allowance" : "") +
                         (band->floor_applied ? ", floor applied" : "") + ")";
    // A proportion shifts in whole examples: the declared shift is the smallest one it can make.
    const auto detect = spec.detect ? std::optional(band->attainable(*spec.detect)) : std::nullopt;
    std::optional<std::size_t> runs_needed;
    if (detect && (!band->power_shift || *band->power_shift > *detect * (1 + 1e-9)))
      runs_needed = metric_runs_for(spec.seed_runs, spec.band, *spec.detect);
    describe_power(check, band->power_shift, spec.detect, runs_needed, band->n, detect);
    check.evidence["model"] = to_string(band->scale);
    if (band->examples)
      check.evidence["examples"] = *band->examples;
    check.evidence["mean"] = band->center;
    check.evidence["sd"] = band->spread;
    check.evidence["predictive_sd"] = band->predictive_sd;
    check.evidence["alpha"] = band->alpha;
    check.evidence["floor_applied"] = band->floor_applied;
    check.evidence["whole_example_allowance"] = band->discrete_applied;
    return check;
  }
  if (spec.fallback_tolerance && spec.recorded) {
    const double tol = *spec.fallback_tolerance;
    const CheckBand band{*spec.recorded - tol, *spec.recorded + tol};
    const double margin = tol - std::abs(*spec.observed - *spec.recorded);
    judge(check, *spec.observed, *spec.recorded, band, margin >= 0, margin, spec.higher_is_better,
          "the recorded value");
    check.explanation +=
        " (policy fallback tolerance, not calibrated: " + spec.how_to_calibrate + ")";
    check.evidence["fallback"] = true;
    return check;
  }
  check.outcome = CheckOutcome::uncalibrated;
  check.observed = spec.observed;
  check.reference = spec.recorded;
  check.explanation = check.name + " " + number_text(*spec.observed) + ": uncalibrated, " +
                      made.no_band_reason + "; " + spec.how_to_calibrate;
  return check;
}

}  // namespace reverify
