#pragma once
// ToleranceSpec <-> JSON for the calibrations table, with the key names of the manifest's
// `tolerance` section (seed_runs, segment_seed_runs, distribution_seed_runs, steps_same_seed_runs,
// floor, detect), so a stored calibration reads like the section it overrides.

#include <optional>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"

namespace reverify {

nlohmann::json tolerance_to_json(const ToleranceSpec& spec);
// nullopt when the document does not have that shape.
std::optional<ToleranceSpec> tolerance_from_json(const nlohmann::json& j);

}  // namespace reverify
