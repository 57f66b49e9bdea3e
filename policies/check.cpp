#include "policies/check.hpp"

#include <algorithm>

namespace reverify {

PowerSummary summarize_power(const std::vector<CheckResult>& checks) {
  PowerSummary summary;
  for (const auto& c : checks) {
    if (c.informational || !c.power || !c.power->underpowered)
      continue;
    summary.underpowered.push_back(c.name);
    if (c.power->runs_needed) {
      summary.runs_needed = std::max(summary.runs_needed.value_or(0), *c.power->runs_needed);
    } else {
      summary.unreachable = true;
    }
  }
  return summary;
}

}  // namespace reverify

namespace reverify {
namespace {

using nlohmann::json;

template <NamedEnum Enum>
std::optional<Enum> enum_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? enum_from_string<Enum>(it->get<std::string>())
                                          : std::nullopt;
}

template <class T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<double> number_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

json band_json(const std::optional<CheckBand>& band) {
  if (!band)
    return nullptr;
  return {{"lower", optional_json(band->lower)}, {"upper", band->upper}};
}

json power_json(const std::optional<CheckPower>& power) {
  if (!power)
    return nullptr;
  return {{"shift", optional_json(power->shift)},
          {"probability", 0.8},
          {"detect", optional_json(power->detect)},
          {"underpowered", power->underpowered},
          {"runs_needed", optional_json(power->runs_needed)}};
}

std::optional<CheckBand> band_from(const json& j) {
  if (!j.is_object() || !number_at(j, "upper"))
    return std::nullopt;
  return CheckBand{number_at(j, "lower"), *number_at(j, "upper")};
}

std::optional<CheckPower> power_from(const json& j) {
  if (!j.is_object())
    return std::nullopt;
  CheckPower power;
  power.shift = number_at(j, "shift");
  power.detect = number_at(j, "detect");
  power.underpowered = j.value("underpowered", false);
  if (auto runs = number_at(j, "runs_needed"))
    power.runs_needed = static_cast<std::size_t>(*runs);
  return power;
}

std::optional<CheckResult> check_from_json(const json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
    return std::nullopt;
  const auto kind = enum_at<CheckKind>(j, "kind");
  const auto outcome = enum_at<CheckOutcome>(j, "outcome");
  if (!kind || !outcome)
    return std::nullopt;
  CheckResult c;
  c.name = j["name"].get<std::string>();
  c.kind = *kind;
  c.outcome = *outcome;
  c.informational = j.value("informational", false);
  c.observed = number_at(j, "observed");
  c.reference = number_at(j, "reference");
  c.band = band_from(j.value("band", json()));
  c.margin = number_at(j, "margin");
  c.power = power_from(j.value("power", json()));
  if (j.contains("explanation") && j["explanation"].is_string())
    c.explanation = j["explanation"].get<std::string>();
  if (j.contains("evidence") && j["evidence"].is_object())
    c.evidence = j["evidence"];
  return c;
}

}  // namespace

json to_json(const CheckResult& check) {
  return {{"name", check.name},
          {"kind", to_string(check.kind)},
          {"outcome", to_string(check.outcome)},
          {"informational", check.informational},
          {"observed", optional_json(check.observed)},
          {"reference", optional_json(check.reference)},
          {"band", band_json(check.band)},
          {"margin", optional_json(check.margin)},
          {"power", power_json(check.power)},
          {"explanation", check.explanation},
          {"evidence", check.evidence}};
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
          {"job_exit_status", optional_json(verdict.job_exit_status)}};
}

std::optional<Verdict> verdict_from_json(const json& j) {
  if (!j.is_object() || !j.contains("class") || !j["class"].is_string())
    return std::nullopt;
  const auto cls = enum_from_string<VerdictClass>(j["class"].get<std::string>());
  if (!cls)
    return std::nullopt;
  Verdict v;
  v.cls = *cls;
  if (j.contains("explanation") && j["explanation"].is_string())
    v.explanation = j["explanation"].get<std::string>();
  if (j.contains("checks")) {
    if (!j["checks"].is_array())
      return std::nullopt;
    for (const auto& c : j["checks"]) {
      auto check = check_from_json(c);
      if (!check)
        return std::nullopt;
      v.checks.push_back(std::move(*check));
    }
  }
  v.power = summarize_power(v.checks);
  if (auto status = number_at(j, "job_exit_status"))
    v.job_exit_status = static_cast<int>(*status);
  return v;
}

}  // namespace reverify
