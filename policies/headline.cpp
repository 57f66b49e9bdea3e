#include "policies/headline.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/text.hpp"
#include "policies/power.hpp"

namespace reverify {
namespace {

// What a kind means, in the order a reader needs it: what went in, the model's own numbers, then
// what it predicts.
int meaning_rank(CheckKind kind) {
  switch (kind) {
    case CheckKind::input:
      return 0;
    case CheckKind::primary:
      return 1;
    case CheckKind::segment:
      return 2;
    case CheckKind::job:
      return 3;
    case CheckKind::steps:
    case CheckKind::same_seed:
      return 4;
    case CheckKind::weights:
      return 5;
    case CheckKind::parity:
      return 6;
    case CheckKind::distribution:
      return 7;
  }
  return 8;
}

bool outside_band(const CheckResult& check) {
  return check.outcome == CheckOutcome::failed;
}

int group_rank(const Verdict& verdict, const CheckResult& check) {
  switch (reading_of(verdict, check)) {
    case CheckReading::failure:
      return 0;
    case CheckReading::uncalibrated:
      return 1;
    case CheckReading::note:
      return outside_band(check) ? 2 : 5;
    case CheckReading::passed:
      return 3;
    case CheckReading::not_judged:
      return 4;
  }
  return 6;
}

// Margin relative to the band's half-width: the more negative, the worse.
double relative_margin(const CheckResult& check) {
  if (check.margin && check.band && check.band->half_width() > 0)
    return *check.margin / check.band->half_width();
  return -std::numeric_limits<double>::infinity();  // no band to measure by: as bad as it gets
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

// The part of a check's name after its kind: "accuracy" of "primary:accuracy".
std::string subject(const std::string& name) {
  const auto colon = name.find(':');
  return colon == std::string::npos ? name : name.substr(colon + 1);
}

// "is 0.9412, outside its accepted band [0.948, 0.9742] (reference 0.9611)", "is 0.31, above its
// bound ≤ 0.12".
std::string value_against_band(const CheckResult& check) {
  if (!check.observed || !check.band)
    return "is outside its accepted band";
  std::string text = "is " + number(*check.observed) + ", ";
  if (!check.band->lower)
    return text + "above its bound " + band_text(*check.band);
  text += "outside its accepted band " + band_text(*check.band);
  if (check.reference)
    text += " (reference " + number(*check.reference) + ")";
  return text;
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A ranking parity check (its evidence says "unit": "queries" and k, policies/own_scores.hpp):
// "11 of 75 queries of market=us have another top-10 order than the release's (its share is
// 0.1467, above its bound ≤ 0.08)"; the tau distance says it looks past the top k. Queries,
// not records: a ranking's records are documents, and what changed is a query's list.
std::string ranking_parity_failure(const CheckResult& check) {
  const auto segment = check.name.find(":segment:");
  const std::string scope =
      segment == std::string::npos ? "the eval set" : check.name.substr(segment + 9);
  const std::string k = std::to_string(check.evidence.value("k", std::size_t{0}));
  const std::string of = std::to_string(check.evidence.value("of", std::size_t{0}));
  if (!check.evidence.contains("changed")) {
    return "the queries' whole rankings moved against the release (not only their top " + k +
           "): 1 - the mean Kendall tau-b over the " + of + " queries of " + scope + " " +
           value_against_band(check);
  }
  const bool order = check.name.rfind("parity:top-k-order", 0) == 0;
  return std::to_string(check.evidence.value("changed", std::size_t{0})) + " of " + of +
         " queries of " + scope + " have another top-" + k + (order ? " order" : " set") +
         " than the release's (its share " + value_against_band(check) + ")";
}

// The sentence (without its full stop) about the failure that leads.
std::string lead_failure(const CheckResult& check) {
  const std::string what = subject(check.name);
  if (check.not_computed) {
    // A check the release defines that this rebuild could not give (policies/coverage.hpp).
    const std::string reason = check.evidence.value("reason", std::string());
    return (what == "*"
                ? "the " + std::string(to_string(check.kind)) + " checks the release defines"
                : "the check " + check.name + ", which the release defines,") +
           " could not be computed" + (reason.empty() ? "" : ": " + reason);
  }
  switch (check.kind) {
    case CheckKind::input:
      return "an input moved since release (" + what + "), so nothing was rebuilt";
    case CheckKind::primary:
      if (!check.observed)
        return "the rebuild did not report its primary metric " + what + " as the release did";
      return "the rebuilt model's " + what + " " + value_against_band(check);
    case CheckKind::segment: {
      const auto colon = what.rfind(':');
      if (colon == std::string::npos || !check.observed)
        return "segment " + what + " is missing from the rebuild or outside its band";
      return "the rebuilt model's " + what.substr(colon + 1) + " on segment " +
             what.substr(0, colon) + " " + value_against_band(check);
    }
    case CheckKind::job:
      if (check.name == "job:evaluation-unchanged")
        return "the job's evaluation changed: same predictions, other numbers (the rebuild's "
               "predictions reproduce the ones its recorded numbers came from, bit for bit)";
      return "the job's own figures disagree with reverify's scoring of its predictions (" + what +
             ")";
    case CheckKind::steps:
      return "the rebuild's training curve (" + what + ") left its band: its deviation " +
             value_against_band(check);
    case CheckKind::weights:
      if (!check.evidence.contains("rebuilt"))
        return "the rebuild produced no weights to compare with the released ones";
      return "the rebuilt weights differ from the released ones" +
             (check.observed && check.evidence.contains("tensors")
                  ? " in " + plural(static_cast<std::size_t>(*check.observed), "tensor", "tensors")
                  : std::string()) +
             ", and level bitwise asks for identical tensors";
    case CheckKind::parity:
      if (check.evidence.value("unit", std::string()) == "queries")
        return ranking_parity_failure(check);
      return "records changed their decision against the release: " + what + " " +
             value_against_band(check);
    case CheckKind::same_seed:
      return "the rebuild differs from the release where its same-seed reruns did not (" + what +
             ")";
    case CheckKind::distribution:
      if (!check.observed)
        return "the rebuild's predictions could not be compared (" + what + ")";
      return "the rebuild's predictions moved: the " + what + " statistic " +
             value_against_band(check);
  }
  return check.name + " failed";
}

std::string capitalized(std::string text) {
  if (!text.empty() && text[0] >= 'a' && text[0] <= 'z')
    text[0] = static_cast<char>(text[0] - 'a' + 'A');
  return text;
}

// " Also failed: a, b and 3 more." for the failures after the first.
std::string also_failed(const std::vector<const CheckResult*>& failures) {
  if (failures.size() < 2)
    return "";
  constexpr std::size_t kNamed = 3;
  std::string text = " Also failed: ";
  for (std::size_t i = 1; i < failures.size() && i <= kNamed; ++i)
    text += (i > 1 ? ", " : "") + failures[i]->name;
  if (failures.size() - 1 > kNamed)
    text += " and " + std::to_string(failures.size() - 1 - kNamed) + " more";
  return text + ".";
}

// " A note, which decides nothing: steps:loss is outside its band." for notes outside their band.
std::string notes_outside(const Verdict& verdict, const std::vector<const CheckResult*>& order) {
  std::vector<const CheckResult*> notes;
  for (const auto* check : order) {
    if (reading_of(verdict, *check) == CheckReading::note && outside_band(*check))
      notes.push_back(check);
  }
  if (notes.empty())
    return "";
  return notes.size() == 1
             ? " A note, which decides nothing: " + notes[0]->name + " is outside its band."
             : " " + std::to_string(notes.size()) +
                   " notes, which decide nothing, are outside their bands (" + notes[0]->name +
                   ", ...).";
}

std::string error_headline(const Verdict& verdict) {
  switch (verdict.cls) {
    case VerdictClass::error_manifest_invalid:
      return "The manifest is not valid, so nothing could be verified (a fault of the release "
             "record, not of the model).";
    case VerdictClass::error_provision:
      return "The rebuild could not be set up (its image, code or data could not be fetched), "
             "so the model was not judged.";
    case VerdictClass::error_job:
      if (verdict.job_exit_status) {
        return "The recorded job failed to rerun (exit status " +
               std::to_string(*verdict.job_exit_status) +
               "): evidence about the build, not about the model's numbers.";
      }
      if (verdict.job_output_fault) {
        return "The job finished but wrote outputs the rebuild contract refuses (" +
               one_line(*verdict.job_output_fault, 240) + "), so the model was not judged.";
      }
      return "The job did not finish (killed or timed out), so the model was not judged.";
    case VerdictClass::error_runner_lost:
      return "The job's runner was lost before the job ended, so the model was not judged.";
    case VerdictClass::error_infra:
      return "The platform failed under the job (its disk, memory or host), not the model.";
    default:
      return "";
  }
}

// A passed verdict with a failed deciding check: its level (rerunnable) enforces none.
bool enforces_nothing(const Verdict& verdict) {
  return verdict.cls == VerdictClass::passed &&
         std::any_of(verdict.checks.begin(), verdict.checks.end(), [](const CheckResult& c) {
           return !c.informational && c.outcome == CheckOutcome::failed;
         });
}

}  // namespace

CheckReading reading_of(const Verdict& verdict, const CheckResult& check) {
  if (check.informational)
    return CheckReading::note;
  if (check.outcome == CheckOutcome::not_judged)
    return CheckReading::not_judged;
  if (enforces_nothing(verdict))
    return CheckReading::note;
  switch (check.outcome) {
    case CheckOutcome::failed:
      return CheckReading::failure;
    case CheckOutcome::uncalibrated:
      return CheckReading::uncalibrated;
    default:
      return CheckReading::passed;
  }
}

std::string reading_text(const Verdict& verdict, const CheckResult& check) {
  switch (reading_of(verdict, check)) {
    case CheckReading::failure:
      return "failed";
    case CheckReading::uncalibrated:
      return "uncalibrated";
    case CheckReading::note:
      return outside_band(check) ? "note: outside its band" : "note";
    case CheckReading::passed:
      return "passed";
    case CheckReading::not_judged:
      return "not judged";
  }
  return "";
}

std::vector<const CheckResult*> reading_order(const Verdict& verdict) {
  std::vector<const CheckResult*> order;
  for (const auto& check : verdict.checks)
    order.push_back(&check);
  std::stable_sort(order.begin(), order.end(), [&](const CheckResult* a, const CheckResult* b) {
    const int ga = group_rank(verdict, *a), gb = group_rank(verdict, *b);
    if (ga != gb)
      return ga < gb;
    if (ga != 0)
      return false;  // outside the failures: as the verdict lists them
    const int ka = meaning_rank(a->kind), kb = meaning_rank(b->kind);
    if (ka != kb)
      return ka < kb;
    return relative_margin(*a) < relative_margin(*b);
  });
  return order;
}

CheckCounts count_checks(const Verdict& verdict) {
  CheckCounts counts;
  for (const auto& check : verdict.checks) {
    switch (reading_of(verdict, check)) {
      case CheckReading::failure:
        ++counts.failed;
        break;
      case CheckReading::uncalibrated:
        ++counts.uncalibrated;
        break;
      case CheckReading::note:
        ++counts.notes;
        counts.notes_outside += outside_band(check);
        break;
      case CheckReading::passed:
        ++counts.passed;
        break;
      case CheckReading::not_judged:
        ++counts.not_judged;
        break;
    }
  }
  return counts;
}

std::string counts_text(const CheckCounts& counts) {
  std::vector<std::string> parts;
  if (counts.failed)
    parts.push_back(std::to_string(counts.failed) + " failed");
  if (counts.uncalibrated)
    parts.push_back(std::to_string(counts.uncalibrated) + " uncalibrated");
  if (counts.passed)
    parts.push_back(std::to_string(counts.passed) + " passed");
  if (counts.not_judged)
    parts.push_back(std::to_string(counts.not_judged) + " not judged");
  if (counts.notes) {
    parts.push_back(plural(counts.notes, "note", "notes") +
                    (counts.notes_outside
                         ? " (" + std::to_string(counts.notes_outside) + " outside " +
                               (counts.notes_outside == 1 ? "its band)" : "their bands)")
                         : std::string()));
  }
  if (parts.empty())
    return "no checks";
  std::string text;
  for (const auto& part : parts)
    text += (text.empty() ? "" : ", ") + part;
  return text;
}

std::string verdict_headline(const Verdict& verdict) {
  if (is_error(verdict.cls))
    return error_headline(verdict);
  const auto order = reading_order(verdict);
  const CheckCounts counts = count_checks(verdict);
  std::vector<const CheckResult*> failures;
  for (const auto* check : order) {
    if (reading_of(verdict, *check) == CheckReading::failure)
      failures.push_back(check);
  }
  if (!failures.empty()) {
    std::vector<std::string> inputs;
    for (const auto* check : failures) {
      if (check->kind == CheckKind::input)
        inputs.push_back(subject(check->name));
    }
    if (inputs.size() > 1) {
      std::vector<const CheckResult*> rest(failures.begin() + static_cast<long>(inputs.size()) - 1,
                                           failures.end());
      return "Inputs moved since release (" + joined(inputs) + "), so nothing was rebuilt." +
             also_failed(rest) + notes_outside(verdict, order);
    }
    return capitalized(lead_failure(*failures[0])) + "." + also_failed(failures) +
           notes_outside(verdict, order);
  }
  if (verdict.cls == VerdictClass::failed_input_drift)
    return "An input moved since release, so nothing was rebuilt.";
  if (counts.uncalibrated) {
    const CheckResult* first = nullptr;
    for (const auto* check : order) {
      if (reading_of(verdict, *check) == CheckReading::uncalibrated && !first)
        first = check;
    }
    return "Not judged yet: " + std::to_string(counts.uncalibrated) + " of " +
           std::to_string(counts.deciding()) +
           " deciding checks have no measured seed spread to judge by (" + first->name +
           (counts.uncalibrated > 1 ? ", ..." : "") + "); calibrating the version gives them one." +
           notes_outside(verdict, order);
  }
  if (verdict.cls == VerdictClass::passed && enforces_nothing(verdict)) {
    return "Rebuilt: this level reports its checks without enforcing them (" + counts_text(counts) +
           ").";
  }
  if (verdict.cls == VerdictClass::passed && counts.passed > 0) {
    return (counts.passed == 1 ? std::string("Verified: the one deciding check is inside its band.")
                               : "Verified: all " + std::to_string(counts.passed) +
                                     " deciding checks are inside their bands.") +
           notes_outside(verdict, order);
  }
  if (verdict.checks.empty())
    return verdict.cls == VerdictClass::passed ? "Passed with no checks to compare."
                                               : "No check could be compared.";
  return "Nothing decided the verdict: " + counts_text(counts) + "." +
         notes_outside(verdict, order);
}

VerdictSummary verdict_summary(const Verdict& verdict) {
  VerdictSummary summary;
  summary.cls = verdict.cls;
  summary.headline = verdict_headline(verdict);
  summary.counts = count_checks(verdict);
  for (const auto* check : reading_order(verdict)) {
    if (reading_of(verdict, *check) == CheckReading::failure)
      summary.failing.push_back(check->name);
  }
  summary.underpowered = !verdict.power.underpowered.empty();
  summary.runs_needed = verdict.power.runs_needed;
  summary.underpowered_checks = verdict.power.underpowered;
  for (const auto& check : verdict.checks) {
    if (check.seed_runs)
      summary.seed_runs = std::max(summary.seed_runs.value_or(0), *check.seed_runs);
  }
  return summary;
}

std::string summary_text(const VerdictSummary& summary) {
  const bool no_checks = summary.counts == CheckCounts{};
  return summary.headline + (no_checks ? "" : " Checks: " + counts_text(summary.counts) + ".");
}

std::string summary_text(const VerdictSummary& summary, std::size_t max_bytes) {
  const bool no_checks = summary.counts == CheckCounts{};
  const std::string counts = no_checks ? "" : " Checks: " + counts_text(summary.counts) + ".";
  const std::size_t room = max_bytes > counts.size() ? max_bytes - counts.size() : 0;
  return one_line(summary.headline, room) + counts;
}

nlohmann::json to_json(const VerdictSummary& summary) {
  const auto& c = summary.counts;
  const auto optional_count = [](const std::optional<std::size_t>& n) {
    return n ? nlohmann::json(*n) : nlohmann::json(nullptr);
  };
  return {{"class", to_string(summary.cls)},
          {"headline", summary.headline},
          {"counts",
           {{"failed", c.failed},
            {"uncalibrated", c.uncalibrated},
            {"passed", c.passed},
            {"not_judged", c.not_judged},
            {"notes", c.notes},
            {"notes_outside", c.notes_outside}}},
          {"counts_text", counts_text(c)},
          {"text", summary_text(summary)},
          {"failing", summary.failing},
          {"underpowered", summary.underpowered},
          {"runs_needed", optional_count(summary.runs_needed)},
          {"underpowered_checks", summary.underpowered_checks},
          {"seed_runs", optional_count(summary.seed_runs)}};
}

}  // namespace reverify
