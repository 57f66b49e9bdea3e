#include "store/tolerance_json.hpp"

namespace reverify {

nlohmann::json tolerance_to_json(const ToleranceSpec& spec) {
  return {{"seed_runs", spec.seed_runs},
          {"segment_seed_runs", spec.segment_seed_runs},
          {"seed_overrides", spec.seed_overrides},
          {"distribution_seed_runs", spec.distribution_seed_runs},
          {"parity_seed_runs", spec.parity_seed_runs},
          {"steps_same_seed_runs", spec.steps_same_seed_runs},
          {"floor", spec.floor},
          {"detect", spec.detect}};
}

std::optional<ToleranceSpec> tolerance_from_json(const nlohmann::json& j) {
  if (!j.is_object())
    return std::nullopt;
  try {
    ToleranceSpec spec;
    // Calibrations stored before distribution_seed_runs / steps_same_seed_runs existed hold
    // different-seed pair statistics under other keys: those are not read (no honest band).
    auto read = [&j](const char* key, auto& into) {
      if (j.contains(key))
        j.at(key).get_to(into);
    };
    read("seed_runs", spec.seed_runs);
    read("segment_seed_runs", spec.segment_seed_runs);
    read("seed_overrides", spec.seed_overrides);
    read("distribution_seed_runs", spec.distribution_seed_runs);
    read("parity_seed_runs", spec.parity_seed_runs);
    read("steps_same_seed_runs", spec.steps_same_seed_runs);
    read("floor", spec.floor);
    read("detect", spec.detect);
    return spec;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace reverify
