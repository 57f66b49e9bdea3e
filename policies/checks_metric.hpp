#pragma once
// Primary and segment metric checks: |observed - mean(seed runs)| <= tol (policies/tolerance.hpp).

#include <optional>
#include <span>
#include <string>

#include "policies/check.hpp"

namespace reverify {

struct MetricCheckSpec {
  std::string name;  // "primary:accuracy", "segment:digit=8:accuracy"
  CheckKind kind = CheckKind::primary;
  std::optional<double> observed;  // absent: the rebuild did not report it (a finding)
  std::optional<double> recorded;  // the released run's value, for "rebuilt - recorded"
  std::span<const double> seed_runs;
  double floor = 0;
  bool higher_is_better = true;
  double alpha = 0.01;                       // per check
  std::optional<double> fallback_tolerance;  // used only when uncalibrated, and said so
  std::string how_to_calibrate;
};

CheckResult check_metric(const MetricCheckSpec& spec);

}  // namespace reverify
