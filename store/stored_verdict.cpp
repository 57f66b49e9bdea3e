#include "store/stored_verdict.hpp"

#include "policies/power.hpp"

namespace reverify {
namespace {

using nlohmann::json;

std::optional<double> number_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

std::optional<std::string> string_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? std::optional(it->get<std::string>()) : std::nullopt;
}

bool flag_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

template <NamedEnum Enum>
std::optional<Enum> enum_at(const json& j, const char* key) {
  const auto text = string_at(j, key);
  return text ? enum_from_string<Enum>(*text) : std::nullopt;
}

std::optional<CheckBand> band_from(const json& check, CheckKind kind) {
  if (auto band = check.find("band"); band != check.end() && band->is_object()) {
    if (auto upper = number_at(*band, "upper"))
      return CheckBand{number_at(*band, "lower"), *upper};
    return std::nullopt;
  }
  const auto tolerance = number_at(check, "tolerance");  // rows from before bands were stored
  if (!tolerance)
    return std::nullopt;
  if (kind == CheckKind::primary || kind == CheckKind::segment) {
    const double reference = number_at(check, "reference").value_or(0.0);
    return CheckBand{reference - *tolerance, reference + *tolerance};
  }
  return CheckBand{std::nullopt, *tolerance};
}

std::optional<CheckPower> power_from(const json& check, const json& evidence) {
  const json* j = nullptr;
  if (auto top = check.find("power"); top != check.end() && top->is_object())
    j = &*top;
  else if (auto kept = evidence.find("power"); kept != evidence.end() && kept->is_object())
    j = &*kept;  // rows from when the power sat in the evidence
  if (!j) {
    if (!flag_at(evidence, "underpowered") && !flag_at(check, "underpowered"))
      return std::nullopt;
    CheckPower power;
    power.underpowered = true;
    return power;
  }
  CheckPower power;
  power.shift = number_at(*j, "shift");
  power.detect = number_at(*j, "detect");
  power.underpowered = flag_at(*j, "underpowered");
  if (auto runs = number_at(*j, "runs_needed"))
    power.runs_needed = static_cast<std::size_t>(*runs);
  return power;
}

std::optional<CheckResult> check_from_json(const json& j) {
  if (!j.is_object())
    return std::nullopt;
  const auto name = string_at(j, "name");
  const auto kind = enum_at<CheckKind>(j, "kind");
  const auto outcome = enum_at<CheckOutcome>(j, "outcome");
  if (!name || !kind || !outcome)
    return std::nullopt;
  CheckResult c;
  c.name = *name;
  c.kind = *kind;
  c.outcome = *outcome;
  c.informational = flag_at(j, "informational");
  c.observed = number_at(j, "observed");
  c.reference = number_at(j, "reference");
  c.band = band_from(j, c.kind);
  c.margin = number_at(j, "margin");
  c.explanation = string_at(j, "explanation").value_or("");
  if (auto evidence = j.find("evidence"); evidence != j.end() && evidence->is_object()) {
    c.evidence = *evidence;
    if (auto runs = number_at(c.evidence, "seed_runs"))
      c.seed_runs = static_cast<std::size_t>(*runs);
    c.cannot_fail = flag_at(c.evidence, "cannot_fail");
    c.not_computed = flag_at(c.evidence, "not_computed");
    if (auto source = string_at(c.evidence, "fallback")) {
      c.fallback = *source;
    } else if (flag_at(c.evidence, "fallback")) {
      c.fallback = "policy fallback";  // rows from when the flag was a boolean
    }
    for (const char* typed : {"seed_runs", "cannot_fail", "fallback", "not_computed"})
      c.evidence.erase(typed);
  }
  c.power = power_from(j, c.evidence);
  return c;
}

}  // namespace

std::optional<Verdict> verdict_from_json(const json& j) {
  if (!j.is_object())
    return std::nullopt;
  const auto cls = enum_at<VerdictClass>(j, "class");
  if (!cls)
    return std::nullopt;
  Verdict v;
  v.cls = *cls;
  v.explanation = string_at(j, "explanation").value_or("");
  if (auto checks = j.find("checks"); checks != j.end()) {
    if (!checks->is_array())
      return std::nullopt;
    for (const auto& c : *checks) {
      auto check = check_from_json(c);
      if (!check)
        return std::nullopt;
      v.checks.push_back(std::move(*check));
    }
  }
  v.power = summarize_power(v.checks);
  if (auto coverage = j.find("coverage"); coverage != j.end() && coverage->is_object()) {
    v.coverage.defined = static_cast<std::size_t>(number_at(*coverage, "defined").value_or(0));
    v.coverage.judged = static_cast<std::size_t>(number_at(*coverage, "judged").value_or(0));
    if (auto names = coverage->find("not_computed");
        names != coverage->end() && names->is_array()) {
      for (const auto& name : *names) {
        if (name.is_string())
          v.coverage.not_computed.push_back(name.get<std::string>());
      }
    }
  }
  if (auto status = number_at(j, "job_exit_status"))
    v.job_exit_status = static_cast<int>(*status);
  return v;
}

}  // namespace reverify
