#include "policies/own_scores.hpp"

#include <algorithm>
#include <cmath>

#include "policies/bands.hpp"
#include "policies/number_text.hpp"

namespace reverify {
namespace {

bool same_number(double job, double own) {
  return std::abs(job - own) <= kJobAgreement * std::max(std::abs(job), std::abs(own));
}

std::string parity_name(double threshold, const std::string& segment) {
  return "parity:threshold=" + number_text(threshold) +
         (segment.empty() ? std::string() : ":segment:" + segment);
}

// Calls f(name, scope, crossings) for every threshold of every scope with records.
template <class F>
void each_crossing(const scoring::Parity& parity, F f) {
  auto scope = [&](const scoring::ScopeParity& s) {
    if (s.records == 0)
      return;
    for (const auto& c : s.crossings)
      f(parity_name(c.threshold, s.segment), s, c);
  };
  scope(parity.overall);
  for (const auto& s : parity.segments)
    scope(s);
}

std::span<const double> seed_values(const ToleranceSpec& tol, const std::string& name) {
  auto it = tol.parity_seed_runs.find(name);
  return it == tol.parity_seed_runs.end() ? std::span<const double>{}
                                          : std::span<const double>(it->second);
}

// The crossings are a count of the scope's records: banded as a proportion over them (the
// primary metric's model, policies/bands.hpp), of which only the upper edge judges; the
// two-sided band at 2 alpha has alpha above it.
MetricBandSpec parity_band_spec(const scoring::ScopeParity& scope, double alpha) {
  MetricBandSpec spec;
  spec.alpha = std::min(2 * alpha, 0.5);
  spec.examples = static_cast<std::int64_t>(scope.records);
  return spec;
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

std::map<std::string, double> parity_values(const scoring::Parity& parity) {
  std::map<std::string, double> out;
  each_crossing(parity, [&](const std::string& name, const scoring::ScopeParity& scope,
                            const scoring::Crossings& c) {
    out[name] = static_cast<double>(c.changed) / static_cast<double>(scope.records);
  });
  return out;
}

std::size_t banded_parity_checks(const scoring::Parity& parity, const ToleranceSpec& tol) {
  std::size_t m = 0;
  each_crossing(parity, [&](const std::string& name, const scoring::ScopeParity& scope,
                            const scoring::Crossings&) {
    m += metric_band(seed_values(tol, name), parity_band_spec(scope, 0.01)).band.has_value();
  });
  return m;
}

std::vector<CheckResult> parity_checks(const scoring::Parity& parity, const ToleranceSpec& tol,
                                       double alpha, const std::string& how_to_calibrate) {
  std::vector<CheckResult> out;
  each_crossing(parity, [&](const std::string& name, const scoring::ScopeParity& scope,
                            const scoring::Crossings& c) {
    CheckResult check;
    check.name = name;
    check.kind = CheckKind::parity;
    check.reference = 0;  // the release against itself: nothing changes side
    const double records = static_cast<double>(scope.records);
    check.observed = static_cast<double>(c.changed) / records;
    const std::string where =
        scope.segment.empty() ? "of the eval set's " : "of segment " + scope.segment + "'s ";
    std::string changed = std::to_string(c.changed) + " " + where + std::to_string(scope.records) +
                          " records changed side against the release at threshold " +
                          number_text(c.threshold);
    if (c.became_wrong && c.became_correct) {
      changed += " (" + std::to_string(*c.became_wrong) + " became wrong, " +
                 std::to_string(*c.became_correct) + " became right)";
    }
    check.evidence["changed"] = c.changed;
    check.evidence["records"] = scope.records;
    const auto made = metric_band(seed_values(tol, name), parity_band_spec(scope, alpha));
    if (!made.band) {
      check.outcome = CheckOutcome::uncalibrated;
      check.informational = true;
      check.explanation = name + ": " + changed + "; uncalibrated, " + made.no_band_reason +
                          " (informational); " + how_to_calibrate;
      out.push_back(std::move(check));
      return;
    }
    const MetricBand& bound = *made.band;
    const auto allowed = static_cast<std::size_t>(std::floor(bound.upper * records + 1e-9));
    check.band = CheckBand{std::nullopt, bound.upper};
    check.margin = bound.upper - *check.observed;
    check.outcome = *check.margin >= 0 ? CheckOutcome::passed : CheckOutcome::failed;
    check.explanation = name + ": " + changed + "; the seed runs' own crossings allow " +
                        std::to_string(allowed) + " (" + std::to_string(bound.n) +
                        " seed runs, α=" + number_text(alpha) + ")";
    check.seed_runs = bound.n;
    check.power = CheckPower{bound.power_shift, std::nullopt, false, std::nullopt};
    check.evidence["allowed"] = allowed;
    check.evidence["mean"] = bound.center;
    check.evidence["alpha"] = alpha;
    check.evidence["whole_record_allowance"] = bound.discrete_applied;
    out.push_back(std::move(check));
  });
  return out;
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
