#include "policies/power.hpp"

#include <algorithm>

#include "policies/number_text.hpp"

namespace reverify {

bool is_underpowered(const std::optional<double>& shift, const std::optional<double>& target) {
  return target && (!shift || *shift > *target * (1 + 1e-9));
}

std::string band_text(const CheckBand& band) {
  return band.lower ? "[" + number_text(*band.lower) + ", " + number_text(band.upper) + "]"
                    : "≤ " + number_text(band.upper);
}

void describe_power(CheckResult& check, const std::optional<double>& shift,
                    const std::optional<double>& detect, std::size_t runs_now,
                    const std::function<std::optional<std::size_t>()>& runs_needed,
                    const std::optional<double>& attainable) {
  CheckPower power;
  power.shift = shift;
  power.detect = detect;
  const auto target = attainable ? attainable : detect;
  power.underpowered = is_underpowered(shift, target);
  if (power.underpowered)
    power.runs_needed = runs_needed();
  check.power = power;
  const std::string caught =
      shift ? "catches shifts of " + number_text(*shift) + " with 80% probability"
            : "catches no shift the metric can make";
  if (!detect) {
    check.explanation += "; it " + caught;
  } else if (!power.underpowered) {
    // A proportion moves in whole examples: the declared shift is met when the smallest whole-
    // example shift at least that large is caught.
    const bool rounded = attainable && *attainable > *detect * (1 + 1e-9);
    check.explanation +=
        "; it catches shifts of ≤ " + number_text(*detect) + " as tolerance.detect asks (" +
        (rounded ? "in whole examples the smallest such shift is " + number_text(*attainable) + "; "
                 : std::string()) +
        "caught with 80% probability from " + number_text(*shift) + ")";
  } else {
    check.explanation +=
        "; UNDERPOWERED: it " + caught + ", not the " + number_text(*detect) +
        " tolerance.detect asks; " +
        (power.runs_needed ? std::to_string(*power.runs_needed) + " seed runs in all would (" +
                                 std::to_string(runs_now) + " now)"
                           : std::string("no number of seed runs would (the "
                                         "spread itself is too wide at this α)"));
  }
}

PowerSummary summarize_power(const std::vector<CheckResult>& checks) {
  PowerSummary summary;
  for (const auto& c : checks) {
    if (c.informational || !c.power || !c.power->underpowered)
      continue;
    summary.underpowered.push_back(c.name);
    if (c.power->runs_needed) {
      summary.runs_needed = std::max(summary.runs_needed.value_or(0), *c.power->runs_needed);
    } else {
      summary.unreachable = true;
    }
  }
  return summary;
}

}  // namespace reverify
