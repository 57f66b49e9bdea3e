#pragma once
// Power (docs/design.md property 2), in one place: every band states the smallest shift it catches
// with 80% probability (its power shift, in metric units: policies/bands.hpp computes it, and the
// seed runs in all that would make it reach a target); an owner may declare the shift that must be
// caught (tolerance.detect); a band whose power shift is larger than that is UNDERPOWERED. This
// file holds that rule (is_underpowered), the sentence every banded check appends, and the
// verdict-level summary that the report, the page, the status page and the gate show.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "policies/verdict_model.hpp"

namespace reverify {

// Whether a band with this power shift fails the declared target. A target met to floating-point
// rounding (1e-9 relative) counts as met; no shift at all (the band catches nothing the metric
// can do) never meets one. No target: never underpowered.
bool is_underpowered(const std::optional<double>& shift, const std::optional<double>& target);

// "[0.954, 0.9821]" for a two-sided band, "≤ 0.0123" for an upper bound (never "±").
std::string band_text(const CheckBand& band);

// Fills check.power and appends the power sentence to check.explanation: "; it catches shifts of
// 0.0166 with 80% probability", the "catches shifts of ≤ <detect> as tolerance.detect asks"
// sentence when the target is met, or the UNDERPOWERED one with the seed runs that would meet it.
// `attainable`: the smallest shift the metric can make that is at least `detect` (a proportion
// moves in whole examples); detect itself when absent. `runs_needed` is asked only when the band
// is underpowered: the seed runs in all with which it would meet the target, or nullopt when no
// number up to kMaxProjectedRuns would.
void describe_power(CheckResult& check, const std::optional<double>& shift,
                    const std::optional<double>& detect, std::size_t runs_now,
                    const std::function<std::optional<std::size_t>()>& runs_needed,
                    const std::optional<double>& attainable = std::nullopt);

// The power summary of a verdict's deciding checks: which are underpowered, and the most seed
// runs any of them needs (unreachable when one cannot be met by more runs).
PowerSummary summarize_power(const std::vector<CheckResult>& checks);

}  // namespace reverify
