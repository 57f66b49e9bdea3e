#include "policies/own_scores.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/map_lookup.hpp"
#include "policies/bands.hpp"
#include "policies/number_text.hpp"
#include "policies/power.hpp"

namespace reverify {
namespace {

bool same_number(double job, double own) {
  return std::abs(job - own) <= kJobAgreement * std::max(std::abs(job), std::abs(own));
}

std::string scope_suffix(const std::string& segment) {
  return segment.empty() ? std::string() : ":segment:" + segment;
}

// "of the eval set's 200 records", "of segment group=a's 100 records", "... 80 queries"
std::string of_scope(const std::string& segment, std::size_t count, const std::string& unit) {
  return (segment.empty() ? "of the eval set's " : "of segment " + segment + "'s ") +
         std::to_string(count) + " " + unit;
}

std::string right_and_wrong(std::size_t wrong, std::size_t right) {
  return " (" + std::to_string(wrong) + " became wrong, " + std::to_string(right) +
         " became right)";
}

// "10 to class 8, 2 to class 5": where a class's changed records went, most first.
std::string moved_text(const scoring::ClassShift& row) {
  std::vector<std::pair<std::size_t, std::size_t>> moved(row.moved_to.begin(), row.moved_to.end());
  std::stable_sort(moved.begin(), moved.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (const auto& [cls, n] : moved)
    text += (text.empty() ? "" : ", ") + std::to_string(n) + " to class " + std::to_string(cls);
  return text;
}

// The per-class checks of one confusion matrix (overall scope only: per segment they would
// multiply the checks by the classes, and segments by true class are these checks already).
void class_statistics(const std::vector<scoring::ClassShift>& classes, const std::string& prefix,
                      const std::string& at, std::vector<ParityStatistic>& out) {
  for (const auto& row : classes) {
    if (row.members == 0)
      continue;
    ParityStatistic stat;
    stat.name = prefix + "class=" + std::to_string(row.cls);
    stat.count = row.changed;
    stat.of = row.members;
    stat.what = std::to_string(row.changed) + " of class " + std::to_string(row.cls) + "'s " +
                std::to_string(row.members) +
                " records changed predicted class against the release" + at;
    if (row.changed > 0) {
      stat.what += ": " + moved_text(row) + right_and_wrong(row.became_wrong, row.became_correct);
    }
    stat.value = static_cast<double>(row.changed) / static_cast<double>(row.members);
    out.push_back(std::move(stat));
  }
}

// Whether the segment's records are exactly one true class's members (a segment keyed by the
// label): its changes are that class's check's, and a second check would only split alpha.
bool is_one_class(const scoring::ScopeParity& segment, const scoring::ScopeParity& overall) {
  for (std::size_t c = 0; c < segment.classes.size() && c < overall.classes.size(); ++c) {
    if (segment.classes[c].members > 0)
      return segment.classes[c].members == segment.records &&
             overall.classes[c].members == segment.records;
  }
  return false;
}

void scope_statistics(const scoring::ScopeParity& s, const scoring::ScopeParity& overall,
                      std::vector<ParityStatistic>& out) {
  if (s.records == 0)
    return;
  const std::string suffix = scope_suffix(s.segment);
  auto proportion = [&](std::string name, std::size_t count, std::size_t of,
                        std::string what) -> ParityStatistic& {
    ParityStatistic stat;
    stat.name = std::move(name);
    stat.count = count;
    stat.of = of;
    stat.value = static_cast<double>(count) / static_cast<double>(of);
    stat.what = std::move(what);
    return out.emplace_back(std::move(stat));
  };
  for (const auto& c : s.crossings) {
    const std::string at = " at threshold " + number_text(c.threshold);
    std::string what = std::to_string(c.changed) + " " + of_scope(s.segment, s.records, "records") +
                       " changed side against the release" + at;
    if (c.became_wrong && c.became_correct)
      what += right_and_wrong(*c.became_wrong, *c.became_correct);
    const std::string name = "parity:threshold=" + number_text(c.threshold);
    proportion(name + suffix, c.changed, s.records, std::move(what));
    if (s.segment.empty())
      class_statistics(c.classes, name + ":", at, out);
  }
  if (s.argmax_changed && (s.segment.empty() || !is_one_class(s, overall))) {
    std::size_t wrong = 0, right = 0;
    for (const auto& row : s.classes) {
      wrong += row.became_wrong;
      right += row.became_correct;
    }
    proportion("parity:argmax" + suffix, *s.argmax_changed, s.records,
               std::to_string(*s.argmax_changed) + " " + of_scope(s.segment, s.records, "records") +
                   " changed predicted class against the release" + right_and_wrong(wrong, right));
    if (s.segment.empty())
      class_statistics(s.classes, "parity:", "", out);
  }
  if (const auto& r = s.ranking; r && r->queries > 0) {
    const std::string queries = of_scope(s.segment, r->queries, "queries");
    const std::string top = "top-" + std::to_string(r->k);
    proportion("parity:top-k-set" + suffix, r->top_k_changed, r->queries,
               std::to_string(r->top_k_changed) + " " + queries + " have another " + top +
                   " set than the release's")
        .top_k = r->k;
    proportion("parity:top-k-order" + suffix, r->top_k_order_changed, r->queries,
               std::to_string(r->top_k_order_changed) + " " + queries + " have another " + top +
                   " order than the release's")
        .top_k = r->k;
    if (r->mean_tau) {
      ParityStatistic stat;
      stat.name = "parity:tau-distance" + suffix;
      stat.top_k = r->k;
      stat.value = 1 - *r->mean_tau;
      stat.of = r->tau_queries;
      // one swapped pair in the largest query: tau-b moves by about 2 / its pairs
      const auto n = static_cast<double>(r->largest_tau_query);
      stat.resolution = 4 / (n * (n - 1)) / static_cast<double>(r->tau_queries);
      stat.what = "the mean Kendall tau-b against the release's scores is " +
                  number_text(*r->mean_tau) + " (1 - tau = " + number_text(stat.value) +
                  ") over the " + std::to_string(r->tau_queries) + " queries " +
                  (s.segment.empty() ? "of the eval set" : "of segment " + s.segment) +
                  " where it is defined";
      out.push_back(std::move(stat));
    }
  }
}

std::span<const double> seed_values(const ToleranceSpec& tol, const std::string& name) {
  auto it = tol.parity_seed_runs.find(name);
  return it == tol.parity_seed_runs.end() ? std::span<const double>{}
                                          : std::span<const double>(it->second);
}

// A check's bound from the seed runs' own values, at one-sided `alpha`, in one shape for both
// models: a count (records, members, queries) as a proportion over the scope (the primary
// metric's model, policies/bands.hpp), of which only the upper edge judges, the two-sided band
// at 2 alpha having alpha above it; the tau distance as a distance's upper bound, with its
// resolution (seed runs that all reproduce the order give 0, which a log scale cannot take).
struct ParityBound {
  std::optional<double> upper;
  std::string no_band_reason;
  std::size_t n = 0;
  std::optional<double> power_shift;
  // The smallest shift the statistic can make that is at least `detect` (a count moves in whole
  // records), and the seed runs in all with which the bound would catch it.
  std::function<double(double detect)> attainable;
  std::function<std::optional<std::size_t>(double detect)> runs_for;
  nlohmann::json evidence = nlohmann::json::object();
};

// What both band models give a parity check: the upper edge, the runs, the power.
template <class Band>
ParityBound parity_bound_of(const std::optional<Band>& band, const std::string& no_band_reason) {
  ParityBound out;
  if (!band) {
    out.no_band_reason = no_band_reason;
    return out;
  }
  out.upper = band->upper;
  out.n = band->n;
  out.power_shift = band->power_shift;
  return out;
}

ParityBound parity_bound(const ParityStatistic& stat, std::span<const double> seeds, double alpha) {
  if (stat.count) {
    MetricBandSpec spec;
    spec.alpha = std::min(2 * alpha, 0.5);
    spec.examples = static_cast<std::int64_t>(stat.of);
    const auto made = metric_band(seeds, spec);
    ParityBound out = parity_bound_of(made.band, made.no_band_reason);
    if (made.band) {
      out.evidence["mean"] = made.band->center;
      out.evidence["whole_record_allowance"] = made.band->discrete_applied;
      out.attainable = [band = *made.band](double detect) { return band.attainable(detect); };
      out.runs_for = [seeds, spec](double detect) { return metric_runs_for(seeds, spec, detect); };
    }
    return out;
  }
  UpperBoundSpec spec;
  spec.alpha = alpha;
  spec.resolution = stat.resolution;
  const auto made = upper_bound(seeds, spec);
  ParityBound out = parity_bound_of(made.bound, made.no_band_reason);
  if (made.bound) {
    out.evidence["typical"] = made.bound->typical;
    out.attainable = [](double detect) { return detect; };
    out.runs_for = [seeds, spec](double detect) {
      return upper_bound_runs_for(seeds, spec, detect);
    };
  }
  return out;
}

struct Disagreement {
  std::string what;  // "primary accuracy", "segment digit=3 accuracy"
  double job = 0;
  double own = 0;
};

// " (and 2 more of 5)" after the first disagreement named, "" when it is the only one.
std::string more_of(const std::vector<Disagreement>& differ, std::size_t compared) {
  return differ.size() > 1 ? " (and " + std::to_string(differ.size() - 1) + " more of " +
                                 std::to_string(compared) + ")"
                           : std::string();
}

// Every disagreement for a check's evidence: {"metric", "job", <own_key>}.
void put_disagreements(CheckResult& check, const std::vector<Disagreement>& differ,
                       const char* own_key) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : differ)
    list.push_back({{"metric", d.what}, {"job", d.job}, {own_key, d.own}});
  check.evidence["disagreements"] = std::move(list);
}

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
    const auto* scored = release_scope.find(name);
    if (scored && std::find(names.begin(), names.end(), scored->name) == names.end())
      names.push_back(scored->name);
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

std::vector<ParityStatistic> parity_statistics(const scoring::Parity& parity) {
  std::vector<ParityStatistic> out;
  scope_statistics(parity.overall, parity.overall, out);
  for (const auto& s : parity.segments)
    scope_statistics(s, parity.overall, out);
  return out;
}

std::map<std::string, double> parity_values(const scoring::Parity& parity) {
  std::map<std::string, double> out;
  for (const auto& stat : parity_statistics(parity))
    out[stat.name] = stat.value;
  return out;
}

std::vector<ParityStatistic> recorded_parity(const std::vector<ParityStatistic>& shape,
                                             const std::map<std::string, double>& values) {
  std::vector<ParityStatistic> out;
  for (const auto& scope : shape) {
    auto value = values.find(scope.name);
    if (value == values.end())
      continue;
    ParityStatistic stat = scope;
    stat.value = value->second;
    if (stat.count) {
      stat.count = static_cast<std::size_t>(
          std::llround(std::max(value->second, 0.0) * static_cast<double>(stat.of)));
      stat.what = std::to_string(*stat.count) + " of its " + std::to_string(stat.of) +
                  (stat.top_k ? " queries" : "") + " changed against the release (as recorded)";
    } else {
      stat.what = "1 - tau = " + number_text(stat.value) + " over " + std::to_string(stat.of) +
                  " queries (as recorded)";
    }
    out.push_back(std::move(stat));
  }
  return out;
}

std::size_t banded_parity_checks(const std::vector<ParityStatistic>& statistics,
                                 const ToleranceSpec& tol) {
  std::size_t m = 0;
  for (const auto& stat : statistics)
    m += parity_bound(stat, seed_values(tol, stat.name), 0.01).upper.has_value();
  return m;
}

std::vector<CheckResult> parity_checks(const std::vector<ParityStatistic>& statistics,
                                       const ToleranceSpec& tol, double alpha,
                                       const std::string& how_to_calibrate) {
  std::vector<CheckResult> out;
  for (const auto& stat : statistics) {
    CheckResult check;
    check.name = stat.name;
    check.kind = CheckKind::parity;
    check.reference = 0;  // the release against itself: nothing changes
    check.observed = stat.value;
    if (stat.count)
      check.evidence["changed"] = *stat.count;
    check.evidence["of"] = stat.of;
    if (stat.top_k) {
      check.evidence["unit"] = "queries";
      check.evidence["k"] = stat.top_k;
    }
    const auto bound = parity_bound(stat, seed_values(tol, stat.name), alpha);
    if (!bound.upper) {
      check.outcome = CheckOutcome::uncalibrated;
      check.informational = true;
      check.explanation = stat.name + ": " + stat.what + "; uncalibrated, " + bound.no_band_reason +
                          " (informational); " + how_to_calibrate;
      out.push_back(std::move(check));
      continue;
    }
    check.band = CheckBand{std::nullopt, *bound.upper};
    check.margin = *bound.upper - stat.value;
    check.outcome = *check.margin >= 0 ? CheckOutcome::passed : CheckOutcome::failed;
    std::string allowed;
    if (stat.count) {
      const auto whole =
          static_cast<std::size_t>(std::floor(*bound.upper * static_cast<double>(stat.of) + 1e-9));
      check.evidence["allowed"] = whole;
      allowed = "the seed runs' own changes allow " + std::to_string(whole);
    } else {
      allowed = "the seed runs' own allow 1 - tau <= " + number_text(*bound.upper);
    }
    check.explanation = stat.name + ": " + stat.what + "; " + allowed + " (" +
                        std::to_string(bound.n) + " seed runs, α=" + number_text(alpha) + ")";
    check.seed_runs = bound.n;
    const auto detect = lookup(tol.detect, stat.name);
    describe_power(
        check, bound.power_shift, detect, bound.n, [&] { return bound.runs_for(*detect); },
        detect ? std::optional(bound.attainable(*detect)) : std::nullopt);
    check.evidence.update(bound.evidence);
    check.evidence["alpha"] = alpha;
    out.push_back(std::move(check));
  }
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
      number_text(first.own) + more_of(differ, compared);
  put_disagreements(check, differ, "predictions");
  return check;
}

std::optional<CheckResult> check_evaluation_unchanged(const EvaluationSpec& spec) {
  if (spec.rebuilt_sha256.empty())
    return std::nullopt;
  std::optional<EvaluationReference> reference;
  if (spec.rebuilt_sha256 == spec.released_sha256) {
    reference = EvaluationReference{"the release", spec.released_primary, spec.released_segments};
  } else {
    for (std::size_t i = 0; i < spec.same_seed.size() && !reference; ++i) {
      const auto& run = spec.same_seed[i];
      if (run.predictions_sha256 == spec.rebuilt_sha256)
        reference = EvaluationReference{"same-seed rerun " + std::to_string(i + 1), run.primary,
                                        &run.segments};
    }
  }
  if (!reference)
    return std::nullopt;
  CheckResult check;
  check.name = "job:evaluation-unchanged";
  check.kind = CheckKind::job;
  std::size_t compared = 0;
  std::vector<Disagreement> differ;
  auto compare = [&](std::string what, const std::optional<double>& job,
                     const std::optional<double>& recorded) {
    if (!job || !recorded)
      return;
    ++compared;
    if (!same_number(*job, *recorded))
      differ.push_back({std::move(what), *job, *recorded});
  };
  compare("primary " + spec.primary_name, spec.rebuilt_primary, reference->primary);
  if (spec.rebuilt_segments && reference->segments) {
    for (const auto& [segment, metrics] : *reference->segments) {
      const auto reported = spec.rebuilt_segments->find(segment);
      if (reported == spec.rebuilt_segments->end())
        continue;
      for (const auto& [metric, value] : metrics)
        compare("segment " + segment + " " + metric, lookup(reported->second, metric), value);
    }
  }
  check.evidence["predictions_equal"] = reference->what;
  check.evidence["compared"] = compared;
  const std::string same = "the rebuild's predictions are " + reference->what + "'s, bit for bit";
  if (differ.empty()) {
    check.outcome = compared ? CheckOutcome::passed : CheckOutcome::not_judged;
    check.observed = compared ? std::optional<double>(0) : std::nullopt;
    check.explanation =
        "job:evaluation-unchanged: " + same +
        (compared ? ", and the job reports the same " + std::to_string(compared) + " number(s)"
                  : ", and the job reports none of the numbers recorded for them");
    return check;
  }
  check.outcome = CheckOutcome::failed;
  check.observed = static_cast<double>(differ.size());
  check.reference = 0;
  const Disagreement& first = differ.front();
  check.explanation =
      "job:evaluation-unchanged: the job's evaluation changed: same predictions, other numbers: " +
      same + ", yet the job reports " + first.what + " " + number_text(first.job) + " where " +
      number_text(first.own) + " was recorded for them" + more_of(differ, compared);
  put_disagreements(check, differ, "recorded");
  return check;
}

}  // namespace reverify
