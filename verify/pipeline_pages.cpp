#include "verify/pipeline_pages.hpp"

namespace reverify {

std::vector<MovedInput> moved_inputs(const VerificationOutcome& outcome) {
  static constexpr std::pair<const char*, const char*> kInputs[] = {
      {"dataset", "dataset"},
      {"eval-set", "eval set"},
      {"reference-predictions", "released predictions"},
      {"lockfile", "lockfile"}};
  std::vector<MovedInput> moved;
  const nlohmann::json& inputs = outcome.evidence.value("inputs", nlohmann::json::object());
  for (const auto& [key, label] : kInputs) {
    if (!inputs.contains(key))
      continue;
    const nlohmann::json& input = inputs[key];
    std::string recorded = input.value("recorded", "");
    std::string observed = input.value("actual", "");
    if (recorded.empty() || recorded == observed)
      continue;
    MovedInput entry{label, recorded, observed, {}};
    if (input.contains("moved")) {
      for (const char* kind : {"changed", "added", "removed"}) {
        for (const auto& file : input["moved"].value(kind, nlohmann::json::array())) {
          entry.changed.push_back(file.get<std::string>() + " (" + kind + ")");
        }
      }
    }
    moved.push_back(std::move(entry));
  }
  return moved;
}

}  // namespace reverify
