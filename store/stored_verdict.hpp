#pragma once
// Reads a verdict the store kept (to_json(Verdict), policies/verdict_model.hpp) back into the
// typed Verdict: the one place a stored verdict's JSON is read by key. Rows written by earlier
// versions are read too: a check that carried `tolerance` instead of `band` gets the band it
// meant ([reference - tolerance, reference + tolerance] for metrics, <= tolerance for
// distances), and a `power` object or an `underpowered` flag kept in a check's evidence counts as
// its power.

#include <optional>

#include <nlohmann/json.hpp>

#include "policies/verdict_model.hpp"

namespace reverify {

// nullopt when `j` is not a verdict (no known class, a check without a name, kind or outcome).
std::optional<Verdict> verdict_from_json(const nlohmann::json& j);

}  // namespace reverify
