#include "policies/verdict_model.hpp"

namespace reverify {
namespace {

using nlohmann::json;

template <class T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

json to_json(const std::optional<CheckBand>& band) {
  if (!band)
    return nullptr;
  return {{"lower", optional_json(band->lower)}, {"upper", band->upper}};
}

json to_json(const std::optional<CheckPower>& power) {
  if (!power)
    return nullptr;
  return {{"shift", optional_json(power->shift)},
          {"probability", 0.8},
          {"detect", optional_json(power->detect)},
          {"underpowered", power->underpowered},
          {"runs_needed", optional_json(power->runs_needed)}};
}

const CheckResult* Verdict::primary() const {
  for (const auto& check : checks) {
    if (check.kind == CheckKind::primary && check.observed)
      return &check;
  }
  return nullptr;
}

json to_json(const CheckResult& check) {
  json evidence = check.evidence.is_object() ? check.evidence : json::object();
  if (check.seed_runs)
    evidence["seed_runs"] = *check.seed_runs;
  if (check.cannot_fail)
    evidence["cannot_fail"] = true;
  if (check.fallback)
    evidence["fallback"] = *check.fallback;
  return {{"name", check.name},
          {"kind", to_string(check.kind)},
          {"outcome", to_string(check.outcome)},
          {"informational", check.informational},
          {"observed", optional_json(check.observed)},
          {"reference", optional_json(check.reference)},
          {"band", to_json(check.band)},
          {"margin", optional_json(check.margin)},
          {"power", to_json(check.power)},
          {"explanation", check.explanation},
          {"evidence", evidence}};
}

json to_json(const Verdict& verdict) {
  json checks = json::array();
  for (const auto& c : verdict.checks)
    checks.push_back(to_json(c));
  return {{"class", to_string(verdict.cls)},
          {"explanation", verdict.explanation},
          {"underpowered", !verdict.power.underpowered.empty()},
          {"power",
           {{"underpowered_checks", verdict.power.underpowered},
            {"runs_needed", optional_json(verdict.power.runs_needed)},
            {"unreachable", verdict.power.unreachable}}},
          {"checks", checks},
          {"job_exit_status", optional_json(verdict.job_exit_status)},
          {"job_output_fault", optional_json(verdict.job_output_fault)},
          {"job_code_trusted", verdict.job_code_trusted}};
}

}  // namespace reverify
