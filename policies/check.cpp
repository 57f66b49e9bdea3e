#include "policies/check.hpp"

namespace reverify {

const char* to_string(CheckKind kind) {
  switch (kind) {
    case CheckKind::input:
      return "input";
    case CheckKind::primary:
      return "primary";
    case CheckKind::segment:
      return "segment";
    case CheckKind::distribution:
      return "distribution";
    case CheckKind::steps:
      return "steps";
    case CheckKind::weights:
      return "weights";
  }
  return "unknown";
}

const char* to_string(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::passed:
      return "passed";
    case CheckOutcome::failed:
      return "failed";
    case CheckOutcome::uncalibrated:
      return "uncalibrated";
  }
  return "unknown";
}

}  // namespace reverify

namespace reverify {
namespace {

constexpr CheckKind kKinds[] = {CheckKind::input,        CheckKind::primary, CheckKind::segment,
                                CheckKind::distribution, CheckKind::steps,   CheckKind::weights};
constexpr CheckOutcome kOutcomes[] = {CheckOutcome::passed, CheckOutcome::failed,
                                      CheckOutcome::uncalibrated};

template <class Enum, std::size_t N>
std::optional<Enum> parse_enum(const nlohmann::json& j, const Enum (&all)[N]) {
  if (!j.is_string())
    return std::nullopt;
  for (Enum e : all)
    if (j.get<std::string>() == to_string(e))
      return e;
  return std::nullopt;
}

void put(nlohmann::json& j, const char* key, const std::optional<double>& v) {
  j[key] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

std::optional<CheckResult> check_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
    return std::nullopt;
  const auto kind = parse_enum(j.value("kind", nlohmann::json()), kKinds);
  const auto outcome = parse_enum(j.value("outcome", nlohmann::json()), kOutcomes);
  if (!kind || !outcome)
    return std::nullopt;
  CheckResult c;
  c.name = j["name"].get<std::string>();
  c.kind = *kind;
  c.outcome = *outcome;
  c.observed = number_at(j, "observed");
  c.reference = number_at(j, "reference");
  c.tolerance = number_at(j, "tolerance");
  c.margin = number_at(j, "margin");
  if (j.contains("explanation") && j["explanation"].is_string())
    c.explanation = j["explanation"].get<std::string>();
  if (j.contains("evidence") && j["evidence"].is_object())
    c.evidence = j["evidence"];
  return c;
}

}  // namespace

nlohmann::json to_json(const CheckResult& check) {
  nlohmann::json j = {{"name", check.name},
                      {"kind", to_string(check.kind)},
                      {"outcome", to_string(check.outcome)},
                      {"explanation", check.explanation},
                      {"evidence", check.evidence}};
  put(j, "observed", check.observed);
  put(j, "reference", check.reference);
  put(j, "tolerance", check.tolerance);
  put(j, "margin", check.margin);
  return j;
}

nlohmann::json to_json(const Verdict& verdict) {
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : verdict.checks)
    checks.push_back(to_json(c));
  return {
      {"class", to_string(verdict.cls)}, {"explanation", verdict.explanation}, {"checks", checks}};
}

std::optional<Verdict> verdict_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("class") || !j["class"].is_string())
    return std::nullopt;
  const auto cls = parse_verdict_class(j["class"].get<std::string>());
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
  return v;
}

}  // namespace reverify
