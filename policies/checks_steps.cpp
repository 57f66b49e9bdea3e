#include "policies/checks_steps.hpp"

#include <algorithm>
#include <cmath>

#include "policies/number_text.hpp"
#include "policies/tolerance.hpp"

namespace reverify {

CheckResult check_steps(const StepsCheckSpec& spec) {
  CheckResult check;
  check.name = "steps:" + spec.recorded->metric;
  check.kind = CheckKind::steps;
  const auto& recorded = spec.recorded->values;
  std::size_t expected = recorded.size();
  if (spec.max_steps)
    expected =
        std::min(expected, static_cast<std::size_t>(std::max<std::int64_t>(*spec.max_steps, 0)));
  if (!spec.rebuilt || spec.rebuilt->size() < expected ||
      (expected == 0 && spec.rebuilt->empty())) {
    check.outcome = CheckOutcome::failed;
    check.explanation = check.name + ": the rebuild reported " +
                        std::to_string(spec.rebuilt ? spec.rebuilt->size() : 0) +
                        " step values, expected " +
                        std::to_string(std::max<std::size_t>(expected, 1));
    return check;
  }
  const std::size_t n = std::min(recorded.size(), spec.rebuilt->size());
  double deviation = 0;
  std::size_t worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::abs((*spec.rebuilt)[i] - recorded[i]);
    if (d > deviation)
      deviation = d, worst = i;
  }
  check.observed = deviation;
  check.reference = 0;
  check.evidence["steps_compared"] = n;
  check.evidence["worst_step"] = worst;
  std::string origin;
  if (spec.exact) {
    check.tolerance = 0;
    origin = "(bitwise: exact)";
  } else if (const auto band = upper_bound_band(spec.pairs_max_abs, spec.alpha)) {
    check.tolerance = band->tolerance;
    origin = "from " + std::to_string(band->n) + " seed-run pairs (α=" + number_text(band->alpha) +
             " per check)";
    check.evidence["pairs"] = band->n;
    check.evidence["alpha"] = band->alpha;
  } else {
    check.outcome = CheckOutcome::uncalibrated;
    check.explanation = check.name + ": max absolute deviation " + number_text(deviation) +
                        " over " + std::to_string(n) + " steps, uncalibrated; " +
                        spec.how_to_calibrate;
    return check;
  }
  check.margin = *check.tolerance - deviation;
  check.outcome = *check.margin >= 0 ? CheckOutcome::passed : CheckOutcome::failed;
  check.explanation = check.name + ": max absolute deviation " + number_text(deviation) +
                      " over the first " + std::to_string(n) + " steps (worst at step " +
                      std::to_string(worst) + ") " +
                      (check.outcome == CheckOutcome::passed ? "within" : "exceeds") +
                      " the bound " + number_text(*check.tolerance) + " " + origin;
  return check;
}

CheckResult check_weights(const std::optional<std::string>& recorded,
                          const std::optional<std::string>& rebuilt) {
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
                            : "weights: tensor hash differs: rebuilt " + rebuilt->substr(0, 12) +
                                  "… vs recorded " + recorded->substr(0, 12) +
                                  "… (`reverify diff` names the tensors)";
  }
  return check;
}

}  // namespace reverify
