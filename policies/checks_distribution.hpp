#pragma once
// Distribution checks (ks, psi, wasserstein, paired statistics) of a stats::Comparison between
// the released and the rebuilt predictions, against upper bounds (policies/tolerance.hpp):
// calibrated from the same statistic between the release and each seed run, or given
// explicitly (policy fallback, or a `reverify compare --tolerances` file).

#include <map>
#include <string>
#include <vector>

#include "policies/check.hpp"
#include "policies/stats.hpp"

namespace reverify {

struct DistributionBands {
  // statistic -> its value between the release's predictions and each seed run's
  std::map<std::string, std::vector<double>> seed_runs;
  double alpha = 0.01;                           // per check, one-sided
  std::map<std::string, double> floor;           // statistic -> smallest bound
  std::map<std::string, double> detect;          // statistic -> shift to catch (tolerance.detect)
  std::map<std::string, double> fixed;           // statistic -> explicit upper bound
  std::string fixed_source = "policy fallback";  // named in explanations
  // Without any band a statistic is `uncalibrated`; `unbanded_informational` reports it as
  // informational instead (never deciding), e.g. when the policy allows fallbacks for some.
  bool unbanded_informational = false;
  std::string how_to_calibrate;
};

// Number of statistics of `c` that have a calibrated bound in `bands` (the family's Bonferroni m).
std::size_t banded_distribution_checks(const stats::Comparison& c, const DistributionBands& bands);

std::vector<CheckResult> distribution_checks(const stats::Comparison& c,
                                             const DistributionBands& bands);

// Quantiles of both sides as JSON: {"original": {"p1": ..}, "rebuilt": {..}}.
nlohmann::json quantiles_json(const stats::Comparison& c);

}  // namespace reverify
