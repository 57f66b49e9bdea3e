#pragma once
// The accepted range of one check, read from the check as to_json(CheckResult) writes it (what
// the store keeps): its own "band" {lower, upper} when it carries one; else, from its reference
// and tolerance, [reference - tolerance, reference + tolerance] for metrics (primary, segment)
// and [.., tolerance] for distances (distribution statistics, steps deviation), which have no
// lower edge. None for checks that compare hashes (input, weights) or have no tolerance yet
// (uncalibrated). Pure; shared by the signed summary and the status page's charts.

#include <optional>

#include <nlohmann/json.hpp>

#include "policies/check.hpp"

namespace reverify {

// CheckBand (policies/check.hpp): lower absent for an upper bound only.
std::optional<CheckBand> band_of(const nlohmann::json& check);

}  // namespace reverify
