#include "policies/checks_distribution.hpp"

#include "policies/number_text.hpp"
#include "policies/tolerance.hpp"

namespace reverify {
namespace {

const std::vector<double>* pairs_for(const DistributionBands& bands, const std::string& name) {
  auto it = bands.pairs.find(name);
  return it != bands.pairs.end() && it->second.size() >= kMinSeedRuns ? &it->second : nullptr;
}

void judge(CheckResult& check, double observed, double bound, const std::string& origin) {
  check.observed = observed;
  check.tolerance = bound;
  check.margin = bound - observed;
  check.outcome = *check.margin >= 0 ? CheckOutcome::passed : CheckOutcome::failed;
  check.explanation = check.name + " " + number_text(observed) +
                      (check.outcome == CheckOutcome::passed ? " is within" : " exceeds") +
                      " the bound " + number_text(bound) + " " + origin;
}

}  // namespace

std::size_t calibrated_distribution_checks(const stats::Comparison& c,
                                           const DistributionBands& bands) {
  std::size_t m = 0;
  for (const auto& [name, value] : stats::banded_statistics(c))
    m += pairs_for(bands, name) != nullptr;
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
    if (const auto* pairs = pairs_for(bands, name)) {
      const auto band = upper_bound_band(*pairs, bands.alpha);
      judge(check, value, band->tolerance,
            "from " + std::to_string(band->n) + " seed-run pairs (α=" + number_text(band->alpha) +
                " per check" + (band->max_applied ? ", their maximum" : "") + ")");
      check.evidence["pairs"] = band->n;
      check.evidence["pairs_mean"] = band->mean;
      check.evidence["pairs_sd"] = band->sd;
      check.evidence["alpha"] = band->alpha;
      check.evidence["max_applied"] = band->max_applied;
    } else if (auto it = bands.fixed.find(name); it != bands.fixed.end()) {
      judge(check, value, it->second, "(" + bands.fixed_source + ", not calibrated)");
      check.evidence["fallback"] = bands.fixed_source;
    } else {
      check.observed = value;
      check.outcome = CheckOutcome::uncalibrated;
      check.explanation =
          check.name + " " + number_text(value) + ": uncalibrated, no seed-run pairs" +
          (bands.unbanded_informational ? " (informational)" : "") + "; " + bands.how_to_calibrate;
      if (bands.unbanded_informational)
        check.evidence["informational"] = true;
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
