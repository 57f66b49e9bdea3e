#pragma once
// The sentences every banded check shares: its band as text, and its power (DESIGN property 2)
// against the owner's declared shift.

#include <cstddef>
#include <optional>
#include <string>

#include "policies/check.hpp"

namespace reverify {

// "[0.954, 0.9821]" for a two-sided band, "≤ 0.0123" for an upper bound (never "±").
std::string band_text(const CheckBand& band);

// Fills check.power and appends "; it catches shifts of 0.0166 with 80% probability", the
// "catches shifts of ≤ <detect>" sentence when tolerance.detect is met, or the UNDERPOWERED one
// (with the seed runs that would meet it) when it is not.
// `attainable`: the smallest shift the check's value can make that is at least `detect` (a
// proportion's whole examples); detect itself when absent.
void describe_power(CheckResult& check, const std::optional<double>& shift,
                    const std::optional<double>& detect,
                    const std::optional<std::size_t>& runs_needed, std::size_t runs_now,
                    const std::optional<double>& attainable = std::nullopt);

}  // namespace reverify
