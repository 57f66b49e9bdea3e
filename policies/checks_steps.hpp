#pragma once
// Steps check (first N training-step values, max absolute deviation) and weights check (tensor
// hash equality, `bitwise` level).

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "policies/check.hpp"

namespace reverify {

struct StepsCheckSpec {
  const StepValues* recorded = nullptr;          // the manifest's evaluation.steps
  const std::vector<double>* rebuilt = nullptr;  // absent: a finding
  std::optional<std::int64_t> max_steps;  // steps mode: expect min(max_steps, recorded) values
  bool exact = false;                     // bitwise: tolerance 0, no calibration needed
  std::span<const double> pairs_max_abs;  // calibration: max abs deviation between seed-run pairs
  double alpha = 0.01;
  std::string how_to_calibrate;
};

// REQUIRES: spec.recorded != nullptr.
CheckResult check_steps(const StepsCheckSpec& spec);

CheckResult check_weights(const std::optional<std::string>& recorded_tensor_sha256,
                          const std::optional<std::string>& rebuilt_tensor_sha256);

}  // namespace reverify
