#include "policies/checks.hpp"

#include <algorithm>
#include <cmath>

#include "core/map_lookup.hpp"
#include "policies/number_text.hpp"
#include "policies/power.hpp"

namespace reverify {

// ---- Metric checks ------------------------------------------------------------------------------

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
      if (!band.examples) {
        return "counts in steps of " + number_text(band.grain.value_or(0)) +
               " (the smallest gap between its repeating values: the job gave no count)";
      }
      return "a proportion over " + std::to_string(*band.examples) + " examples" +
             (band.examples_inferred ? " (inferred from the values: the job gave no count)" : "");
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
  check.seed_runs = spec.seed_runs.size();
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
    describe_power(
        check, band->power_shift, spec.detect, band->n,
        [&] { return metric_runs_for(spec.seed_runs, spec.band, *spec.detect); }, detect);
    check.evidence["model"] = to_string(band->scale);
    if (band->examples)
      check.evidence["examples"] = *band->examples;
    if (band->examples_inferred)
      check.evidence["examples_inferred"] = true;
    if (band->grain && !band->examples)
      check.evidence["grain_from_repeats"] = *band->grain;
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
    check.fallback = "policy fallback";
    return check;
  }
  check.observed = spec.observed;
  check.reference = spec.recorded;
  if (made.cannot_judge && spec.kind == CheckKind::segment) {
    // More seed runs would not help, and a segment is not what the owner declared: reported,
    // never deciding (the primary metric stays uncalibrated instead: a verdict without it says
    // nothing).
    check.outcome = CheckOutcome::not_judged;
    check.informational = true;
    check.explanation =
        check.name + " " + number_text(*spec.observed) + ": not judged, " + made.no_band_reason;
    return check;
  }
  check.outcome = CheckOutcome::uncalibrated;
  check.explanation = check.name + " " + number_text(*spec.observed) + ": uncalibrated, " +
                      made.no_band_reason + "; " + spec.how_to_calibrate;
  return check;
}

// ---- Distribution checks ------------------------------------------------------------------------

namespace {

UpperBoundSpec spec_for(Statistic statistic, const stats::Comparison& c,
                        const DistributionBands& bands) {
  return statistic_bound_spec(statistic, c, bands.alpha,
                              lookup(bands.floor, statistic).value_or(0));
}

// The flip rate counts decisions (the argmax of several scores a row, or score >= threshold);
// single values outside [0, 1] at a threshold nobody declared decide nothing.
bool meaningful(Statistic statistic, const stats::Comparison& c, const DistributionBands& bands) {
  return statistic != Statistic::flip_rate || c.scores > c.rows || c.unit_interval ||
         bands.threshold_declared;
}

UpperBoundResult bound_for(Statistic statistic, const stats::Comparison& c,
                           const DistributionBands& bands) {
  auto it = bands.seed_runs.find(statistic);
  if (it == bands.seed_runs.end())
    return {std::nullopt, "no seed runs recorded for it"};
  return upper_bound(it->second, spec_for(statistic, c, bands));
}

void judge(CheckResult& check, double observed, double bound, const std::string& origin) {
  check.observed = observed;
  check.band = CheckBand{std::nullopt, bound};
  check.margin = bound - observed;
  check.outcome = *check.margin >= 0 ? CheckOutcome::passed : CheckOutcome::failed;
  check.explanation = check.name + " " + number_text(observed) +
                      (check.outcome == CheckOutcome::passed ? " is within" : " exceeds") +
                      " the bound " + band_text(*check.band) + " " + origin;
}

}  // namespace

bool left_out(Statistic statistic, bool ranking) {
  return ranking && statistic == Statistic::flip_rate;
}

UpperBoundSpec statistic_bound_spec(Statistic statistic, const stats::Comparison& c, double alpha,
                                    double floor) {
  UpperBoundSpec spec;
  spec.alpha = alpha;
  spec.floor = floor;
  if (statistic == Statistic::flip_rate && c.rows > 0) {
    spec.resolution = 1.0 / static_cast<double>(c.rows);
    spec.counts = true;
  } else if (statistic == Statistic::ks && c.scores > 0) {
    spec.resolution = 1.0 / static_cast<double>(c.scores);
    spec.counts = true;  // KS x scores counts values on the wrong side: lumpy when small
  }
  return spec;
}

std::size_t banded_distribution_checks(const stats::Comparison& c, const DistributionBands& bands) {
  std::size_t m = 0;
  for (const auto& [statistic, value] : stats::banded_statistics(c))
    m += !left_out(statistic, bands.ranking) && meaningful(statistic, c, bands) &&
         bound_for(statistic, c, bands).bound.has_value();
  return m;
}

std::vector<CheckResult> distribution_checks(const stats::Comparison& c,
                                             const DistributionBands& bands) {
  std::vector<CheckResult> out;
  for (const auto& [statistic, value] : stats::banded_statistics(c)) {
    if (left_out(statistic, bands.ranking))
      continue;
    CheckResult check;
    check.name = std::string("distribution:") + to_string(statistic);
    check.kind = CheckKind::distribution;
    check.reference = 0;  // identical predictions score 0 on every statistic
    if (!meaningful(statistic, c, bands)) {
      check.observed = value;
      check.outcome = CheckOutcome::not_judged;
      check.informational = true;
      check.explanation = check.name +
                          ": not judged: the predictions are single values outside [0, 1] "
                          "(regression outputs or logits) and no operating threshold is declared "
                          "(evaluation.scoring.thresholds), so no decision can flip";
      out.push_back(std::move(check));
      continue;
    }
    const auto made = bound_for(statistic, c, bands);
    if (const auto& bound = made.bound) {
      // A bound at or above the largest value the statistic can take (few seed runs, a wide
      // spread) passes every rebuild: shown at that value, said, and counted as catching nothing.
      const auto largest = stats::largest_possible(statistic, c);
      const bool cannot_fail = largest && bound->upper >= *largest;
      judge(check, value, cannot_fail ? *largest : bound->upper,
            "(" + std::to_string(bound->n) + " seed runs against the release, log-normal with " +
                "skew allowance, α=" + number_text(bound->alpha) +
                (bound->max_applied ? ", their maximum" : "") +
                (bound->count_applied ? ", whole-row allowance" : "") +
                (bound->floor_applied ? ", floor applied" : "") + ")");
      std::optional<double> power_shift = bound->power_shift;
      if (cannot_fail) {
        check.cannot_fail = true;
        check.evidence["bound_from_seed_runs"] = bound->upper;
        check.explanation += "; it cannot fail: the bound from " + std::to_string(bound->n) +
                             " seed runs is " + number_text(bound->upper) +
                             ", at or above the largest value the statistic can take; more seed "
                             "runs narrow it";
        power_shift.reset();
      }
      const auto detect = lookup(bands.detect, statistic);
      describe_power(check, power_shift, detect, bound->n, [&] {
        return upper_bound_runs_for(bands.seed_runs.at(statistic), spec_for(statistic, c, bands),
                                    *detect);
      });
      check.seed_runs = bound->n;
      check.evidence["typical"] = bound->typical;
      check.evidence["log_sd"] = bound->log_sd;
      check.evidence["skewness"] = bound->skewness;
      check.evidence["alpha"] = bound->alpha;
      check.evidence["max_applied"] = bound->max_applied;
      check.evidence["whole_row_allowance"] = bound->count_applied;
    } else if (auto fixed = lookup(bands.fixed, statistic)) {
      judge(check, value, *fixed, "(" + bands.fixed_source + ", not calibrated)");
      check.fallback = bands.fixed_source;
    } else {
      check.observed = value;
      check.outcome = CheckOutcome::uncalibrated;
      check.informational = bands.unbanded_informational;
      check.explanation = check.name + " " + number_text(value) + ": uncalibrated, " +
                          made.no_band_reason + (check.informational ? " (informational)" : "") +
                          "; " + bands.how_to_calibrate;
    }
    if (statistic == Statistic::ks)
      check.evidence["quantiles"] = quantiles_json(c);
    out.push_back(std::move(check));
  }
  return out;
}

nlohmann::json quantiles_json(const stats::Comparison& c) {
  nlohmann::json original = nlohmann::json::object(), rebuilt = nlohmann::json::object();
  for (std::size_t k = 0; k < stats::kQuantileLevels.size(); ++k) {
    const std::string key =
        "p" + std::to_string(static_cast<int>(stats::kQuantileLevels[k] * 100 + 0.5));
    original[key] = c.quantiles_original[k];
    rebuilt[key] = c.quantiles_rebuilt[k];
  }
  return {{"original", original}, {"rebuilt", rebuilt}};
}

// ---- Steps and weights checks -------------------------------------------------------------------

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
  // When the band is an upper bound over the reruns' deviations: its inputs, so that the reruns
  // that would meet spec.detect can be projected.
  std::vector<double> deviations;
  UpperBoundSpec bound_spec;
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
    band.no_band_reason =
        std::to_string(spec.same_seed_runs.size()) + " same-seed rerun(s) recorded, " +
        std::to_string(kMinSeedRuns) + " needed (" +
        suggested_command("calibrate " + spec.model_version + " --mode steps --max-steps " +
                              std::to_string(n) + " --seeds 3",
                          spec.command_scope) +
        ")";
    return band;
  }
  std::vector<double> deviations;
  for (const auto& run : spec.same_seed_runs) {
    if (run.size() < n) {
      band.no_band_reason = "a same-seed rerun recorded only " + std::to_string(run.size()) +
                            " of the " + std::to_string(n) + " steps compared (recalibrate with " +
                            suggested_command("calibrate " + spec.model_version +
                                                  " --mode steps --max-steps " + std::to_string(n),
                                              spec.command_scope) +
                            ")";
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
  band.bound_spec.alpha = spec.alpha;
  band.bound_spec.floor = spec.floor;
  const auto made = upper_bound(deviations, band.bound_spec);
  band.upper = made.bound->upper;
  band.power_shift = made.bound->power_shift;
  band.deviations = std::move(deviations);
  band.origin = "(from " + std::to_string(band.deviations.size()) +
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
  describe_power(check, band.power_shift, spec.detect, band.runs, [&] {
    return band.deviations.empty()
               ? std::nullopt
               : upper_bound_runs_for(band.deviations, band.bound_spec, *spec.detect);
  });
  if (spec.informational)
    check.explanation += " (a note: a full rebuild is judged by its metrics and predictions)";
  return check;
}

namespace {

// "8 of 8 tensors differ from the released weights: a, b, c and 5 more".
std::string differing_text(const TensorDifference* difference) {
  if (!difference)
    return "the tensors differ from the released weights";
  if (!difference->unavailable.empty())
    return "the tensors differ from the released weights (which ones is not known: " +
           difference->unavailable + ")";
  const auto& names = difference->differing;
  std::string text = std::to_string(names.size()) + " of " + std::to_string(difference->tensors) +
                     " tensors differ from the released weights";
  for (std::size_t i = 0; i < names.size() && i < kTensorsNamed; ++i)
    text += (i ? ", " : ": ") + names[i];
  if (names.size() > kTensorsNamed)
    text += " and " + std::to_string(names.size() - kTensorsNamed) + " more";
  return text;
}

}  // namespace

CheckResult check_weights(const std::optional<std::string>& recorded,
                          const std::optional<std::string>& rebuilt,
                          const TensorDifference* difference) {
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
                            : "weights: " + differing_text(difference) + "; tensor hash " +
                                  rebuilt->substr(0, 12) + "… vs recorded " +
                                  recorded->substr(0, 12) + "…";
    if (check.outcome == CheckOutcome::failed && difference && difference->unavailable.empty()) {
      check.observed = static_cast<double>(difference->differing.size());
      check.reference = 0;
      check.evidence["tensors"] = difference->tensors;
    }
  }
  return check;
}

namespace {

// Records whose values differ between two predictions of the same shape.
std::size_t differing_records(const Predictions& a, const Predictions& b) {
  std::size_t differ = 0;
  for (std::size_t row = 0; row < a.rows; ++row) {
    const auto first = a.values.begin() + static_cast<std::ptrdiff_t>(row * a.cols);
    differ += !std::equal(first, first + static_cast<std::ptrdiff_t>(a.cols),
                          b.values.begin() + static_cast<std::ptrdiff_t>(row * b.cols));
  }
  return differ;
}

// Every same-seed rerun reproduced the release's predictions exactly: so must the rebuild.
void judge_exact_reproduction(const SameSeedSpec& spec, const std::string& released_sha,
                              CheckResult& check) {
  const std::size_t n = spec.runs.size();
  const std::string all = std::to_string(n) + " of " + std::to_string(n) +
                          " same-seed reruns reproduced the release's predictions exactly";
  if (!spec.rebuilt) {
    check.outcome = CheckOutcome::not_judged;
    check.explanation = check.name + ": " + all + "; the rebuild wrote no predictions to compare";
    return;
  }
  check.reference = 0;
  if (values_sha256(*spec.rebuilt) == released_sha) {
    check.observed = 0;
    check.outcome = CheckOutcome::passed;
    check.explanation = check.name + ": " + all + ", and so did this rebuild";
    return;
  }
  check.outcome = CheckOutcome::failed;
  const bool same_shape = spec.rebuilt->rows == spec.released->rows &&
                          spec.rebuilt->cols == spec.released->cols &&
                          spec.rebuilt->values.size() == spec.released->values.size();
  if (!same_shape) {
    check.explanation = check.name + ": " + all +
                        "; this rebuild's have another shape: something besides the seed moved";
    return;
  }
  const std::size_t differ = differing_records(*spec.released, *spec.rebuilt);
  check.observed = static_cast<double>(differ);
  check.evidence["differing_records"] = differ;
  check.explanation = check.name + ": " + all + "; this rebuild's differ in " +
                      std::to_string(differ) + " of " + std::to_string(spec.released->rows) +
                      " records: something besides the seed moved";
}

// The reruns differ from the release (or the release's predictions are unknown): the spread of
// the release's primary and theirs is the platform's nondeterminism, and the rebuild's primary
// must fall within it.
void judge_primary_range(const SameSeedSpec& spec, std::size_t reproduced, CheckResult& check) {
  const std::size_t n = spec.runs.size();
  const std::string reruns = std::to_string(n) + " same-seed rerun(s)";
  std::vector<double> values;
  for (const auto& run : spec.runs)
    if (run.primary)
      values.push_back(*run.primary);
  if (values.empty() || !spec.rebuilt_primary) {
    check.outcome = CheckOutcome::not_judged;
    check.explanation =
        check.name + ": " + std::to_string(reproduced) + " of " + reruns +
        " reproduced the release's predictions exactly, and " +
        (values.empty() ? "none recorded its primary metric " + spec.primary_name
                        : "the rebuild reported no primary metric " + spec.primary_name) +
        " to compare";
    return;
  }
  if (spec.released_primary)
    values.push_back(*spec.released_primary);
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  const double noise = kSameSeedNoise * std::max({1.0, std::abs(*lo), std::abs(*hi)});
  const double observed = *spec.rebuilt_primary;
  check.band = CheckBand{*lo - noise, *hi + noise};
  check.observed = observed;
  check.reference = spec.released_primary;
  check.margin = std::min(observed - check.band->lower.value(), check.band->upper - observed);
  const std::string range = "the range " + band_text(*check.band) + " of the release's and its " +
                            std::to_string(n) + " same-seed reruns' " + spec.primary_name;
  const std::string rebuilt = "the rebuild's " + spec.primary_name + " " + number_text(observed);
  if (*check.margin >= 0) {
    check.outcome = CheckOutcome::passed;
    check.explanation = check.name + ": " + rebuilt + " is within " + range + " (" +
                        std::to_string(reproduced) + " of " + std::to_string(n) +
                        " reproduced the release's predictions exactly)";
    return;
  }
  check.outcome = CheckOutcome::failed;
  check.explanation =
      check.name + ": " + rebuilt + " is outside " + range +
      (spec.primary_failed ? "; its primary check fails on its own"
                           : ", though inside the seed band: the platform's nondeterminism alone "
                             "does not explain it; something besides the seed moved");
}

}  // namespace

CheckResult check_same_seed(const SameSeedSpec& spec) {
  CheckResult check;
  check.name = "same-seed:predictions";
  check.kind = CheckKind::same_seed;
  check.informational = true;
  const std::size_t n = spec.runs.size();
  const std::string released_sha = spec.released ? values_sha256(*spec.released) : "";
  const auto reproduced = static_cast<std::size_t>(
      std::count_if(spec.runs.begin(), spec.runs.end(), [&](const SameSeedScore& run) {
        return !released_sha.empty() && run.predictions_sha256 == released_sha;
      }));
  check.evidence["same_seed_runs"] = n;
  check.evidence["reproduced_release"] = reproduced;
  if (spec.seed_override) {
    check.outcome = CheckOutcome::not_judged;
    check.explanation = check.name + ": not judged: this rebuild ran seed override " +
                        std::to_string(*spec.seed_override) + ", not the release's seeds, so the " +
                        "release's " + std::to_string(n) +
                        " same-seed rerun(s) say nothing of it (its seed band judges it)";
  } else if (reproduced == n) {
    judge_exact_reproduction(spec, released_sha, check);
  } else {
    judge_primary_range(spec, reproduced, check);
  }
  return check;
}

}  // namespace reverify
