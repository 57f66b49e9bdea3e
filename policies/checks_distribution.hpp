#pragma once
// Distribution checks (ks, psi, wasserstein, paired statistics) of a stats::Comparison against
// upper bounds: calibrated from seed-run pair values, or given explicitly (policy fallback, or a
// `reverify compare --tolerances` file).

#include <map>
#include <string>
#include <vector>

#include "policies/check.hpp"
#include "policies/stats.hpp"

namespace reverify {

struct DistributionBands {
  std::map<std::string, std::vector<double>> pairs;  // statistic -> values between seed-run pairs
  double alpha = 0.01;                               // per check
  std::map<std::string, double> fixed;               // statistic -> explicit upper bound
  std::string fixed_source = "policy fallback";      // named in explanations
  // Without any band, a statistic is `uncalibrated`; informational marks it as not deciding the
  // verdict (evidence.informational), e.g. when the policy allows fallbacks for some statistics.
  bool unbanded_informational = false;
  std::string how_to_calibrate;
};

// Number of statistics of `c` that have a calibrated band in `bands` (for the Bonferroni m).
std::size_t calibrated_distribution_checks(const stats::Comparison& c,
                                           const DistributionBands& bands);

std::vector<CheckResult> distribution_checks(const stats::Comparison& c,
                                             const DistributionBands& bands);

// Quantiles of both sides as JSON: {"original": {"p1": ..}, "rebuilt": {..}}.
nlohmann::json quantiles_json(const stats::Comparison& c);

}  // namespace reverify
