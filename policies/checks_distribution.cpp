#include "policies/checks_distribution.hpp"

#include "policies/check_power.hpp"
#include "policies/number_text.hpp"
#include "policies/tolerance.hpp"

namespace reverify {
namespace {

template <class T>
std::optional<T> lookup(const std::map<std::string, T>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? std::nullopt : std::optional<T>(it->second);
}

// The bound model of one statistic: its resolution (flip rate: one row; KS: one score), and
// whether it counts rows.
UpperBoundSpec spec_for(const std::string& name, const stats::Comparison& c,
                        const DistributionBands& bands) {
  UpperBoundSpec spec;
  spec.alpha = bands.alpha;
  spec.floor = lookup(bands.floor, name).value_or(0);
  if (name == "flip_rate" && c.rows > 0) {
    spec.resolution = 1.0 / static_cast<double>(c.rows);
    spec.counts = true;
  } else if (name == "ks" && c.scores > 0) {
    spec.resolution = 1.0 / static_cast<double>(c.scores);
    spec.counts = true;  // KS x scores counts values on the wrong side: lumpy when small
  }
  return spec;
}

UpperBoundResult bound_for(const std::string& name, const stats::Comparison& c,
                           const DistributionBands& bands) {
  auto it = bands.seed_runs.find(name);
  if (it == bands.seed_runs.end())
    return {std::nullopt, "no seed runs recorded for it"};
  return upper_bound(it->second, spec_for(name, c, bands));
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

std::size_t banded_distribution_checks(const stats::Comparison& c, const DistributionBands& bands) {
  std::size_t m = 0;
  for (const auto& [name, value] : stats::banded_statistics(c))
    m += bound_for(name, c, bands).bound.has_value();
  return m;
}

std::vector<CheckResult> distribution_checks(const stats::Comparison& c,
                                             const DistributionBands& bands) {
  std::vector<CheckResult> out;
  for (const auto& [name, value] : stats::banded_statistics(c)) {
    CheckResult check;
    check.name = std::string("distribution:") + name;
    check.kind = CheckKind::distribution;
    check.reference = 0;  // identical predictions score 0 on every statistic
    const auto made = bound_for(name, c, bands);
    if (const auto& bound = made.bound) {
      // A bound at or above the largest value the statistic can take (few seed runs, a wide
      // spread) passes every rebuild: shown at that value, said, and counted as catching nothing.
      const auto largest = stats::largest_possible(name, c);
      const bool cannot_fail = largest && bound->upper >= *largest;
      judge(check, value, cannot_fail ? *largest : bound->upper,
            "(" + std::to_string(bound->n) + " seed runs against the release, log-normal with " +
                "skew allowance, α=" + number_text(bound->alpha) +
                (bound->max_applied ? ", their maximum" : "") +
                (bound->count_applied ? ", whole-row allowance" : "") +
                (bound->floor_applied ? ", floor applied" : "") + ")");
      std::optional<double> power_shift = bound->power_shift;
      if (cannot_fail) {
        check.evidence["cannot_fail"] = true;
        check.evidence["bound_from_seed_runs"] = bound->upper;
        check.explanation += "; it cannot fail: the bound from " + std::to_string(bound->n) +
                             " seed runs is " + number_text(bound->upper) +
                             ", at or above the largest value the statistic can take; more seed "
                             "runs narrow it";
        power_shift.reset();
      }
      const auto detect = lookup(bands.detect, name);
      std::optional<std::size_t> runs_needed;
      if (detect && (!power_shift || *power_shift > *detect))
        runs_needed =
            upper_bound_runs_for(bands.seed_runs.at(name), spec_for(name, c, bands), *detect);
      describe_power(check, power_shift, detect, runs_needed, bound->n);
      check.evidence["seed_runs"] = bound->n;
      check.evidence["typical"] = bound->typical;
      check.evidence["log_sd"] = bound->log_sd;
      check.evidence["skewness"] = bound->skewness;
      check.evidence["alpha"] = bound->alpha;
      check.evidence["max_applied"] = bound->max_applied;
      check.evidence["whole_row_allowance"] = bound->count_applied;
    } else if (auto fixed = lookup(bands.fixed, name)) {
      judge(check, value, *fixed, "(" + bands.fixed_source + ", not calibrated)");
      check.evidence["fallback"] = bands.fixed_source;
    } else {
      check.observed = value;
      check.outcome = CheckOutcome::uncalibrated;
      check.informational = bands.unbanded_informational;
      check.explanation = check.name + " " + number_text(value) + ": uncalibrated, " +
                          made.no_band_reason + (check.informational ? " (informational)" : "") +
                          "; " + bands.how_to_calibrate;
    }
    if (name == std::string("ks"))
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

}  // namespace reverify
