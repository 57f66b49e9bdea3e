#pragma once
// Primary and segment metric checks: the rebuild's value inside the metric's band
// (policies/tolerance.hpp), with the band's power against the owner's declared shift.

#include <optional>
#include <span>
#include <string>

#include "policies/check.hpp"
#include "policies/tolerance.hpp"

namespace reverify {

struct MetricCheckSpec {
  std::string name;  // "primary:accuracy", "segment:digit=8:accuracy"
  CheckKind kind = CheckKind::primary;
  std::optional<double> observed;  // absent: the rebuild did not report it (a finding)
  std::optional<double> recorded;  // the released run's value, for "rebuilt - recorded"
  std::span<const double> seed_runs;
  MetricBandSpec band;           // alpha (per check), floor, examples
  std::optional<double> detect;  // tolerance.detect for this check
  bool higher_is_better = true;
  std::optional<double> fallback_tolerance;  // used only when uncalibrated, and said so
  std::string how_to_calibrate;
};

CheckResult check_metric(const MetricCheckSpec& spec);

}  // namespace reverify
