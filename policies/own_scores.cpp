#include "policies/own_scores.hpp"

#include <algorithm>
#include <cmath>

#include "policies/number_text.hpp"

namespace reverify {
namespace {

bool same_number(double job, double own) {
  return std::abs(job - own) <= kJobAgreement * std::max(std::abs(job), std::abs(own));
}

struct Disagreement {
  std::string what;  // "primary accuracy", "segment digit=3 accuracy"
  double job = 0;
  double own = 0;
};

}  // namespace

ReportedForm reported_form(const scoring::Scores& scores, const std::string& primary_name) {
  ReportedForm out;
  if (const auto* m = scores.overall.find(primary_name); m && m->judged())
    out.primary = *m->value;
  for (const auto& scope : scores.segments) {
    for (const auto& m : scope.metrics) {
      if (m.judged())
        out.segments[scope.segment][m.name] = *m.value;
    }
  }
  return out;
}

std::vector<std::string> scope_metrics(const scoring::ScopeScores& release_scope,
                                       const Evaluation& evaluation) {
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (release_scope.find(name) && std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  };
  add(evaluation.primary.name);
  if (auto recorded = evaluation.segments.find(release_scope.segment);
      recorded != evaluation.segments.end()) {
    for (const auto& [metric, value] : recorded->second)
      add(metric);
  }
  return names;
}

std::string changed_side_text(const scoring::Parity& parity, const std::string& segment) {
  const scoring::ScopeParity* scope = segment.empty() ? &parity.overall : nullptr;
  for (const auto& s : parity.segments) {
    if (!scope && s.segment == segment)
      scope = &s;
  }
  if (!scope)
    return "";
  const std::string records = " of its " + std::to_string(scope->records) + " records";
  std::string text;
  for (const auto& c : scope->crossings) {
    text += (text.empty() ? "" : "; ") + std::to_string(c.changed) + records +
            " changed side at threshold " + number_text(c.threshold);
    if (c.became_wrong && c.became_correct) {
      text += " (" + std::to_string(*c.became_wrong) + " became wrong, " +
              std::to_string(*c.became_correct) + " became right)";
    }
  }
  if (scope->argmax_changed)
    text = std::to_string(*scope->argmax_changed) + records + " changed predicted class";
  return text;
}

CheckResult job_agreement_check(const std::optional<double>& job_primary,
                                const std::string& primary_name, const SegmentMetrics& job_segments,
                                const scoring::Scores& rebuild) {
  CheckResult check;
  check.name = "job:metric-agrees";
  check.kind = CheckKind::job;
  std::size_t compared = 0;
  std::vector<Disagreement> differ;
  auto compare = [&](std::string what, double job, const scoring::MetricScore* own) {
    if (!own || !own->judged())
      return;
    ++compared;
    if (!same_number(job, *own->value))
      differ.push_back({std::move(what), job, *own->value});
  };
  if (job_primary)
    compare("primary " + primary_name, *job_primary, rebuild.overall.find(primary_name));
  for (const auto& [segment, metrics] : job_segments) {
    auto scope = std::find_if(rebuild.segments.begin(), rebuild.segments.end(),
                              [&](const scoring::ScopeScores& s) { return s.segment == segment; });
    if (scope == rebuild.segments.end())
      continue;
    for (const auto& [metric, value] : metrics)
      compare("segment " + segment + " " + metric, value, scope->find(metric));
  }
  check.evidence["compared"] = compared;
  if (compared == 0) {
    check.outcome = CheckOutcome::not_judged;
    check.explanation =
        "job:metric-agrees: the job reports no metric that reverify's scoring computes, so its "
        "evaluation code cannot be cross-checked against its predictions";
    return check;
  }
  check.observed = static_cast<double>(differ.size());
  if (differ.empty()) {
    check.outcome = CheckOutcome::passed;
    check.explanation = "job:metric-agrees: the " + std::to_string(compared) +
                        " metric(s) the job reports equal reverify's scoring of its predictions";
    return check;
  }
  check.outcome = CheckOutcome::failed;
  const Disagreement& first = differ.front();
  check.explanation =
      "job:metric-agrees: the job's evaluation code and its predictions disagree: "
      "it reports " +
      first.what + " " + number_text(first.job) + ", its predictions score " +
      number_text(first.own) +
      (differ.size() > 1 ? " (and " + std::to_string(differ.size() - 1) + " more of " +
                               std::to_string(compared) + ")"
                         : std::string());
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : differ)
    list.push_back({{"metric", d.what}, {"job", d.job}, {"predictions", d.own}});
  check.evidence["disagreements"] = std::move(list);
  return check;
}

}  // namespace reverify
