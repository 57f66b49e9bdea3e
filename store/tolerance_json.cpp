#include "store/tolerance_json.hpp"

namespace reverify {

nlohmann::json tolerance_to_json(const ToleranceSpec& spec) {
  return {{"seed_runs", spec.seed_runs},
          {"segment_seed_runs", spec.segment_seed_runs},
          {"distribution_pairs", spec.distribution_pairs},
          {"steps_pairs_max_abs", spec.steps_pairs_max_abs},
          {"floor", spec.floor}};
}

std::optional<ToleranceSpec> tolerance_from_json(const nlohmann::json& j) {
  if (!j.is_object())
    return std::nullopt;
  try {
    ToleranceSpec spec;
    if (j.contains("seed_runs"))
      j.at("seed_runs").get_to(spec.seed_runs);
    if (j.contains("segment_seed_runs"))
      j.at("segment_seed_runs").get_to(spec.segment_seed_runs);
    if (j.contains("distribution_pairs"))
      j.at("distribution_pairs").get_to(spec.distribution_pairs);
    if (j.contains("steps_pairs_max_abs")) {
      j.at("steps_pairs_max_abs").get_to(spec.steps_pairs_max_abs);
    }
    if (j.contains("floor"))
      j.at("floor").get_to(spec.floor);
    return spec;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace reverify
