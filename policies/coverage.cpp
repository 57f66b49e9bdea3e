#include "policies/coverage.hpp"

#include <algorithm>

namespace reverify {
namespace {

constexpr const char* kUnknownGap = "the rebuild's outputs give no value to judge";

// "a, b, c and 8 more"
std::string some_names(const std::vector<std::string>& names) {
  constexpr std::size_t kNamed = 3;
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < kNamed; ++i)
    text += (i ? ", " : "") + names[i];
  if (names.size() > kNamed)
    text += " and " + std::to_string(names.size() - kNamed) + " more";
  return text;
}

CheckResult* find_row(std::vector<CheckResult>& checks, const std::string& name) {
  auto it = std::find_if(checks.begin(), checks.end(),
                         [&](const CheckResult& c) { return c.name == name; });
  return it == checks.end() ? nullptr : &*it;
}

void mark_not_computed(CheckResult& row, const std::string& reason) {
  row.outcome = CheckOutcome::failed;
  row.informational = false;
  row.not_computed = true;
  row.band.reset();
  row.margin.reset();
  row.power.reset();
  row.evidence["reason"] = reason;
}

// The one row of a family none of whose checks could be computed.
CheckResult family_row(CheckKind kind, const std::vector<std::string>& names,
                       const std::string& reason) {
  CheckResult row;
  row.name = std::string(to_string(kind)) + ":*";
  row.kind = kind;
  mark_not_computed(row, reason);
  row.explanation = names.empty() ? row.name + ": " + reason
                                  : row.name + ": the " + std::to_string(names.size()) + " " +
                                        to_string(kind) + " check(s) the release defines (" +
                                        some_names(names) + ") cannot be computed: " + reason +
                                        "; each seed run gave them, so they fail";
  row.evidence["checks"] = names;
  return row;
}

// A defined check that has no row of its own while others of its family have one.
CheckResult missing_row(const std::string& name, CheckKind kind, const std::string& reason) {
  CheckResult row;
  row.name = name;
  row.kind = kind;
  mark_not_computed(row, reason);
  row.explanation = name + ": cannot be computed: " + reason +
                    "; the release defines it (each seed run gave a value), so it fails";
  return row;
}

// The reason a not-judged row gives, without its name in front.
std::string reason_of(const CheckResult& row) {
  const std::string prefix = row.name + ": ";
  return row.explanation.rfind(prefix, 0) == 0 ? row.explanation.substr(prefix.size())
                                               : row.explanation;
}

}  // namespace

std::vector<DefinedCheck> defined_checks(
    const Manifest& manifest, const ToleranceSpec& tolerance,
    const std::map<Statistic, std::vector<double>>& distribution, bool steps_mode,
    bool flip_rate_decides) {
  std::vector<DefinedCheck> out;
  if (manifest.level == ReproLevel::rerunnable)
    return out;
  const auto& ev = manifest.evaluation;
  if (steps_mode) {
    if (ev.steps)
      out.push_back({"steps:" + ev.steps->metric, CheckKind::steps});
    return out;
  }
  out.push_back({"primary:" + ev.primary.name, CheckKind::primary});
  for (const auto& [segment, metrics] : tolerance.segment_seed_runs) {
    const auto recorded = ev.segments.find(segment);
    for (const auto& [metric, runs] : metrics) {
      const bool judged = metric == ev.primary.name ||
                          (recorded != ev.segments.end() && recorded->second.count(metric));
      if (judged && !runs.empty())
        out.push_back({"segment:" + segment + ":" + metric, CheckKind::segment});
    }
  }
  for (const auto& [statistic, runs] : distribution) {
    if (runs.empty() || (statistic == Statistic::flip_rate && !flip_rate_decides))
      continue;
    out.push_back({std::string("distribution:") + to_string(statistic), CheckKind::distribution});
  }
  for (const auto& [name, runs] : tolerance.parity_seed_runs) {
    if (!runs.empty())
      out.push_back({name, CheckKind::parity});
  }
  if (manifest.level == ReproLevel::bitwise)
    out.push_back({"weights:tensor_sha256", CheckKind::weights});
  return out;
}

std::vector<std::string> apply_coverage(std::vector<CheckResult>& checks,
                                        const std::vector<DefinedCheck>& defined,
                                        const CoverageGaps& gaps, CheckCoverage& coverage) {
  std::vector<std::string> release_reasons;
  coverage = CheckCoverage{};
  coverage.defined = defined.size();
  std::map<CheckKind, std::vector<std::string>> by_family;
  for (const auto& check : defined)
    by_family[check.kind].push_back(check.name);
  for (const auto& [kind, gap] : gaps.families) {
    if (gap.always)
      by_family[kind];  // its row is added even with no check defined
  }
  for (const auto& [kind, names] : by_family) {
    const auto gap = gaps.families.find(kind);
    const bool rows = std::any_of(names.begin(), names.end(),
                                  [&](const auto& name) { return find_row(checks, name); });
    if (!rows && (gap != gaps.families.end() || !names.empty())) {
      const std::string reason = gap != gaps.families.end() ? gap->second.reason : kUnknownGap;
      if (gap != gaps.families.end() && gap->second.release_side) {
        release_reasons.push_back(some_names(names) + ": " + reason);
      } else {
        checks.push_back(family_row(kind, names, reason));
      }
      coverage.not_computed.insert(coverage.not_computed.end(), names.begin(), names.end());
      continue;
    }
    for (const auto& name : names) {
      CheckResult* row = find_row(checks, name);
      if (auto release = gaps.release_side.find(name); release != gaps.release_side.end()) {
        release_reasons.push_back(name + ": " + release->second);
        coverage.not_computed.push_back(name);
        continue;
      }
      if (row && row->outcome == CheckOutcome::not_judged && row->observed &&
          row->kind == CheckKind::segment) {
        --coverage.defined;  // computed, but its seed runs give no honest band: none defined
        continue;
      }
      if (!row && gap != gaps.families.end() && gap->second.release_side) {
        release_reasons.push_back(name + ": " + gap->second.reason);
        coverage.not_computed.push_back(name);
        continue;
      }
      if (!row) {
        checks.push_back(
            missing_row(name, kind, gap != gaps.families.end() ? gap->second.reason : kUnknownGap));
        row = &checks.back();
      } else if (row->outcome == CheckOutcome::not_judged) {
        const std::string reason = reason_of(*row);
        mark_not_computed(*row, reason);
        row->explanation = name + ": cannot be computed on this rebuild (" + reason +
                           "); the release defines it (each seed run gave a value), so it fails";
      } else if (row->informational && row->outcome == CheckOutcome::uncalibrated) {
        row->informational = false;  // a band the release defines and cannot give: not a pass
      }
      if (row->decides() && !row->not_computed)
        ++coverage.judged;
      else
        coverage.not_computed.push_back(name);
    }
  }
  return release_reasons;
}

std::string coverage_text(const CheckCoverage& coverage) {
  if (coverage.complete())
    return "";
  const std::size_t missing = coverage.defined - coverage.judged;
  return std::to_string(coverage.judged) + " of the " + std::to_string(coverage.defined) +
         " deciding checks the release defines were judged; " + std::to_string(missing) +
         " could not be computed (" + some_names(coverage.not_computed) + ")";
}

}  // namespace reverify
