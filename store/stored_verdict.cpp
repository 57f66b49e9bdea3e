#include "store/stored_verdict.hpp"

#include <regex>

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

namespace {

std::vector<std::string> names_at(const sql::Statement& s, int column) {
  std::vector<std::string> names;
  auto list = json::parse(s.text(column), nullptr, false);
  if (list.is_array()) {
    for (const auto& name : list)
      if (name.is_string())
        names.push_back(name.get<std::string>());
  }
  return names;
}

std::int64_t count_of(std::size_t n) {
  return static_cast<std::int64_t>(n);
}

// "[29 passed, 1 failed, 0 uncalibrated; NOTE: ...]" -> "[NOTE: ...]", "(3 passed, 0 failed, 0
// uncalibrated)" -> "": the counts an earlier version wrote into an explanation.
std::string without_stale_counts(std::string text) {
  static const std::regex counts(R"(([\[(])\d+ passed, \d+ failed, \d+ uncalibrated(; )?)");
  text = std::regex_replace(text, counts, "$1");
  for (const char* empty : {" []", " ()", "[]", "()"}) {
    for (auto at = text.find(empty); at != std::string::npos; at = text.find(empty))
      text.erase(at, std::string_view(empty).size());
  }
  return text;
}

}  // namespace

std::optional<VerdictSummary> summary_from_json(const json& j) {
  if (!j.is_object())
    return std::nullopt;
  const auto cls = enum_at<VerdictClass>(j, "class");
  const auto headline = string_at(j, "headline");
  const auto counts = j.find("counts");
  if (!cls || !headline || counts == j.end() || !counts->is_object())
    return std::nullopt;
  VerdictSummary summary;
  summary.cls = *cls;
  summary.headline = *headline;
  const auto count = [&](const char* key) {
    return static_cast<std::size_t>(std::max(number_at(*counts, key).value_or(0.0), 0.0));
  };
  summary.counts.failed = count("failed");
  summary.counts.uncalibrated = count("uncalibrated");
  summary.counts.passed = count("passed");
  summary.counts.not_judged = count("not_judged");
  summary.counts.notes = count("notes");
  summary.counts.notes_outside = count("notes_outside");
  const auto names = [&](const char* key) {
    std::vector<std::string> out;
    if (auto list = j.find(key); list != j.end() && list->is_array()) {
      for (const auto& name : *list)
        if (name.is_string())
          out.push_back(name.get<std::string>());
    }
    return out;
  };
  summary.failing = names("failing");
  summary.underpowered = flag_at(j, "underpowered");
  if (auto runs = number_at(j, "runs_needed"))
    summary.runs_needed = static_cast<std::size_t>(*runs);
  summary.underpowered_checks = names("underpowered_checks");
  if (auto runs = number_at(j, "seed_runs"))
    summary.seed_runs = static_cast<std::size_t>(*runs);
  return summary;
}

void bind_summary(sql::Statement& s, int first, const VerdictSummary& summary) {
  const auto& c = summary.counts;
  s.bind(first, summary.headline)
      .bind(first + 1, count_of(c.failed))
      .bind(first + 2, count_of(c.uncalibrated))
      .bind(first + 3, count_of(c.passed))
      .bind(first + 4, count_of(c.not_judged))
      .bind(first + 5, count_of(c.notes))
      .bind(first + 6, count_of(c.notes_outside))
      .bind(first + 7, json(summary.failing).dump())
      .bind(first + 8, std::int64_t{summary.underpowered})
      .bind(first + 10, json(summary.underpowered_checks).dump());
  if (summary.runs_needed)
    s.bind(first + 9, count_of(*summary.runs_needed));
  else
    s.bind_null(first + 9);
  if (summary.seed_runs)
    s.bind(first + 11, count_of(*summary.seed_runs));
  else
    s.bind_null(first + 11);
}

std::optional<VerdictSummary> summary_at(const sql::Statement& s, int first, VerdictClass cls) {
  const auto headline = s.optional_text(first);
  if (!headline)
    return std::nullopt;
  VerdictSummary summary;
  summary.cls = cls;
  summary.headline = *headline;
  const auto count = [&](int column) {
    return static_cast<std::size_t>(std::max<std::int64_t>(s.int64(first + column), 0));
  };
  summary.counts.failed = count(1);
  summary.counts.uncalibrated = count(2);
  summary.counts.passed = count(3);
  summary.counts.not_judged = count(4);
  summary.counts.notes = count(5);
  summary.counts.notes_outside = count(6);
  summary.failing = names_at(s, first + 7);
  summary.underpowered = s.int64(first + 8) != 0;
  if (auto runs = s.optional_int64(first + 9))
    summary.runs_needed = static_cast<std::size_t>(*runs);
  summary.underpowered_checks = names_at(s, first + 10);
  if (auto runs = s.optional_int64(first + 11))
    summary.seed_runs = static_cast<std::size_t>(*runs);
  return summary;
}

Status fill_verdict_summaries(sqlite3* db) {
  // Read first, then write: an UPDATE while a SELECT of the same table steps is left undefined.
  std::vector<std::pair<std::int64_t, std::string>> verdicts;
  sql::Statement rows(db,
                      "SELECT id, verdict_json FROM verifications WHERE verdict_json IS NOT NULL");
  for (;;) {
    auto more = rows.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      break;
    verdicts.emplace_back(rows.int64(0), rows.text(1));
  }
  sql::Statement update(db, std::string("UPDATE verifications SET (") + kSummaryColumns +
                                ", explanation, verdict_json) = (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                                "?10, ?11, ?12, ?13, ?14, ?15) WHERE id = ?1");
  for (const auto& [id, text] : verdicts) {
    json j = json::parse(text, nullptr, false);
    auto verdict = verdict_from_json(j);
    if (!verdict) {
      return make_error(ErrorCode::parse, "verifications row " + std::to_string(id) +
                                              ": verdict_json is not a verdict");
    }
    verdict->explanation = without_stale_counts(verdict->explanation);
    j["explanation"] = verdict->explanation;
    update.bind(1, id);
    bind_summary(update, 2, verdict_summary(*verdict));
    update.bind(2 + kSummaryColumnCount, verdict->explanation)
        .bind(3 + kSummaryColumnCount, j.dump());
    if (auto st = update.run(); !st.ok())
      return st;
    update.reset();
  }
  return Status::success();
}

}  // namespace reverify
