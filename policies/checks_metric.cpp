#include "policies/checks_metric.hpp"

#include <cmath>

#include "policies/number_text.hpp"
#include "policies/tolerance.hpp"

namespace reverify {
namespace {

const char* direction(double delta, bool higher_is_better) {
  if (delta == 0)
    return "unchanged";
  return (delta > 0) == higher_is_better ? "improved" : "regressed";
}

void judge(CheckResult& check, double observed, double reference, double tolerance,
           bool higher_is_better, const std::string& band_origin) {
  const double delta = observed - reference;
  check.observed = observed;
  check.reference = reference;
  check.tolerance = tolerance;
  check.margin = tolerance - std::abs(delta);
  check.outcome = *check.margin >= 0 ? CheckOutcome::passed : CheckOutcome::failed;
  check.evidence["direction"] = direction(delta, higher_is_better);
  check.explanation = check.name + " " + number_text(observed) + " is " +
                      number_text(std::abs(delta)) + (delta >= 0 ? " above " : " below ") +
                      band_origin + " " + number_text(reference) +
                      (check.outcome == CheckOutcome::failed
                           ? std::string(" (") + direction(delta, higher_is_better) + "), "
                           : std::string(", ")) +
                      (check.outcome == CheckOutcome::passed ? "within" : "outside") +
                      " the band of ±" + number_text(tolerance);
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
  const auto band = metric_band(spec.seed_runs, spec.alpha, spec.floor);
  if (band) {
    judge(check, *spec.observed, band->mean, band->tolerance, spec.higher_is_better,
          "the seed mean");
    check.explanation +=
        " from " + std::to_string(band->n) + " seed runs (α=" + number_text(band->alpha) +
        " per check" + (band->floor_applied ? ", floor applied" : "") + "); it catches shifts of " +
        number_text(band->power.shift_units) +
        (band->power.shift_sigma ? " (" + number_text(*band->power.shift_sigma) + "σ)" : "") +
        " with 80% probability";
    check.evidence["mean"] = band->mean;
    check.evidence["sd"] = band->sd;
    check.evidence["alpha"] = band->alpha;
    check.evidence["t"] = band->t_quantile;
    check.evidence["floor_applied"] = band->floor_applied;
    check.evidence["power"] = {{"probability", 0.8}, {"shift_units", band->power.shift_units}};
    if (band->power.shift_sigma)
      check.evidence["power"]["shift_sigma"] = *band->power.shift_sigma;
    return check;
  }
  if (spec.fallback_tolerance && spec.recorded) {
    judge(check, *spec.observed, *spec.recorded, *spec.fallback_tolerance, spec.higher_is_better,
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
                      std::to_string(spec.seed_runs.size()) + " seed run(s) known, " +
                      std::to_string(kMinSeedRuns) + " needed; " + spec.how_to_calibrate;
  return check;
}

}  // namespace reverify
