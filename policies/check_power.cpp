#include "policies/check_power.hpp"

#include "policies/number_text.hpp"

namespace reverify {

std::string band_text(const CheckBand& band) {
  return band.lower ? "[" + number_text(*band.lower) + ", " + number_text(band.upper) + "]"
                    : "≤ " + number_text(band.upper);
}

void describe_power(CheckResult& check, const std::optional<double>& shift,
                    const std::optional<double>& detect,
                    const std::optional<std::size_t>& runs_needed, std::size_t runs_now,
                    const std::optional<double>& attainable) {
  CheckPower power;
  power.shift = shift;
  power.detect = detect;
  const auto target = attainable ? attainable : detect;
  power.underpowered = target && (!shift || *shift > *target * (1 + 1e-9));
  if (power.underpowered)
    power.runs_needed = runs_needed;
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
    check.explanation += "; UNDERPOWERED: it " + caught + ", not the " + number_text(*detect) +
                         " tolerance.detect asks; " +
                         (runs_needed ? std::to_string(*runs_needed) + " seed runs in all would (" +
                                            std::to_string(runs_now) + " now)"
                                      : std::string("no number of seed runs would (the spread "
                                                    "itself is too wide at this α)"));
  }
}

}  // namespace reverify
