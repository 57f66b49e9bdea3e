#include "policies/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/map_lookup.hpp"
#include "policies/calibration.hpp"
#include "policies/checks.hpp"
#include "policies/coverage.hpp"
#include "policies/number_text.hpp"
#include "policies/power.hpp"

namespace reverify {
namespace {

template <class Map>
void overlay(Map& into, const Map& from) {
  for (const auto& [key, value] : from)
    into[key] = value;
}

std::span<const double> runs_of(const std::map<std::string, std::vector<double>>& m,
                                const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? std::span<const double>{} : std::span<const double>(it->second);
}

std::span<const double> segment_runs(const ToleranceSpec& t, const std::string& segment,
                                     const std::string& metric) {
  auto it = t.segment_seed_runs.find(segment);
  return it == t.segment_seed_runs.end() ? std::span<const double>{} : runs_of(it->second, metric);
}

// A per-check setting (floor, detect) keyed by the check's full name, else by its short name.
std::optional<double> keyed(const std::map<std::string, double>& m, const std::string& check_name,
                            const std::string& short_name) {
  auto value = lookup(m, check_name);
  return value ? value : lookup(m, short_name);
}

// The entries of `m` keyed by "distribution:<statistic>" and, with `short_names`, by the
// statistic's name alone (the check's name wins), by statistic. Other keys are not about
// statistics.
template <class T>
std::map<Statistic, T> by_statistic(const std::map<std::string, T>& m, bool short_names) {
  std::map<Statistic, T> out;
  constexpr std::string_view kPrefix = "distribution:";
  for (const auto& [key, value] : m) {
    if (auto statistic = enum_from_string<Statistic>(key); statistic && short_names)
      out[*statistic] = value;
  }
  for (const auto& [key, value] : m) {
    if (key.rfind(kPrefix, 0) == 0) {
      if (auto statistic = enum_from_string<Statistic>(key.substr(kPrefix.size())))
        out[*statistic] = value;
    }
  }
  return out;
}

bool is_model_check(const CheckResult& c) {
  return c.kind != CheckKind::distribution;
}

// The failed check worst relative to its band: the one to name first.
const CheckResult* worst_failure(const std::vector<CheckResult>& checks, bool model_checks) {
  const CheckResult* worst = nullptr;
  double worst_ratio = 0;
  for (const auto& c : checks) {
    if (c.outcome != CheckOutcome::failed || !c.decides() || is_model_check(c) != model_checks)
      continue;
    if (c.kind == CheckKind::primary)
      return &c;  // a failed primary metric always leads
    double ratio = -std::numeric_limits<double>::infinity();
    if (c.margin && c.band && c.band->half_width() > 0)
      ratio = *c.margin / c.band->half_width();
    if (!worst || ratio < worst_ratio)
      worst = &c, worst_ratio = ratio;
  }
  return worst;
}

// Everything a verification checks, before the false-page rate is split.
struct Plan {
  std::optional<MetricCheckSpec> primary;
  std::vector<std::pair<std::string, MetricCheckSpec>> segments;  // segment name, its check
  std::vector<CheckResult> extra_segments;  // reported but not recorded: failed as they are
  // Scored metrics that scoring does not judge on the release (not judged) or on the rebuild
  // only (failed), each saying why.
  std::vector<CheckResult> unscored;
  std::optional<CheckResult> job_agreement;
  // The rebuild's parity statistics against the release, when scored (or recorded).
  std::optional<std::vector<ParityStatistic>> parity;
  const ToleranceSpec* parity_tolerance = nullptr;
  std::optional<stats::Comparison> comparison;
  DistributionBands distribution;
  std::optional<StepsCheckSpec> steps;
  bool predictions_missing = false;
  // Why a family of checks has no rows, or a defined check's release side gives no value
  // (policies/coverage.hpp).
  CoverageGaps gaps;

  std::map<CheckFamily, std::size_t> banded() const {
    std::map<CheckFamily, std::size_t> m;
    if (primary && metric_band(primary->seed_runs, primary->band).band)
      m[CheckFamily::primary] = 1;
    for (const auto& [segment, s] : segments)
      m[CheckFamily::segments] += metric_band(s.seed_runs, s.band).band.has_value();
    if (comparison)
      m[CheckFamily::distribution] = banded_distribution_checks(*comparison, distribution);
    if (parity)
      m[CheckFamily::distribution] += banded_parity_checks(*parity, *parity_tolerance);
    if (steps && !steps->informational)
      m[CheckFamily::steps] = steps_banded(*steps);
    return m;
  }
};

MetricCheckSpec metric_spec(std::string name, CheckKind kind, const std::string& metric,
                            const ToleranceSpec& tol, const VerdictPolicy& policy,
                            const std::string& how_to) {
  MetricCheckSpec spec;
  spec.name = std::move(name);
  spec.kind = kind;
  spec.band.floor = keyed(tol.floor, spec.name, metric).value_or(0);
  spec.fallback_tolerance =
      policy.allow_fallback ? lookup(policy.fallback_tolerance, metric) : std::nullopt;
  spec.how_to_calibrate = how_to;
  return spec;
}

const scoring::ScopeScores* find_scope(const scoring::Scores& scores, const std::string& segment) {
  auto it = std::find_if(scores.segments.begin(), scores.segments.end(),
                         [&](const scoring::ScopeScores& s) { return s.segment == segment; });
  return it == scores.segments.end() ? nullptr : &*it;
}

// Replaces the job's figures in `spec` with reverify's scores of the same scope: observed (the
// rebuild's), recorded (the release's), the band's examples (the release's exact count, for a
// proportion; none otherwise) and the metric's direction. A metric scoring judges on neither or
// only on the release is a check of its own, returned instead.
std::optional<CheckResult> use_own_scores(MetricCheckSpec& spec,
                                          const scoring::ScopeScores& release,
                                          const scoring::ScopeScores* rebuild,
                                          const std::string& metric, CoverageGaps& gaps) {
  const scoring::MetricScore* before = release.find(metric);
  const scoring::MetricScore* after = rebuild ? rebuild->find(metric) : nullptr;
  CheckResult unscored;
  unscored.name = spec.name;
  unscored.kind = spec.kind;
  if (!before->judged()) {
    unscored.outcome = CheckOutcome::not_judged;
    unscored.explanation = spec.name + ": not judged: " + before->not_judged;
    gaps.release_side[spec.name] =
        "the release's predictions score no value for it (" + before->not_judged + ")";
    return unscored;
  }
  if (!after || !after->judged()) {
    unscored.outcome = CheckOutcome::failed;
    unscored.reference = before->value;
    unscored.explanation = spec.name + ": the release's predictions score " +
                           number_text(*before->value) + ", the rebuild's cannot be scored: " +
                           (after ? after->not_judged : std::string("scope missing"));
    return unscored;
  }
  spec.observed = after->value;
  spec.recorded = before->value;
  spec.band.recorded = before->value;
  spec.band.examples = before->count
                           ? std::optional<std::int64_t>(std::llround(before->count->denominator))
                           : std::nullopt;
  // a mean over queries: its band knows how far one query can move it (bands.hpp, lumpy)
  if (before->metric == ScoringMetric::ndcg_at_k || before->metric == ScoringMetric::mrr)
    spec.band.step = before->step;
  // a query's NDCG moves by fractions of a step when near-tied documents swap; its MRR by 1/2, 1/3
  spec.band.fractional_steps = before->metric == ScoringMetric::ndcg_at_k;
  spec.higher_is_better = higher_is_better(before->metric);
  return std::nullopt;
}

// Why the checks on predictions would have no rows (policies/coverage.hpp): the rebuild wrote
// none (its side), the release's cannot be read or scored (the release's side: the verdict is
// error:manifest-invalid when it defines such checks), or the two do not pair. The job's
// cross-check, which needs reverify's scores, then says why it is not judged.
void note_prediction_gaps(const VerdictInputs& in, Plan& plan) {
  const auto& ev = in.manifest.evaluation;
  const auto& rb = in.rebuild;
  FamilyGap gap;
  if (plan.predictions_missing) {
    gap = {false, "the rebuild wrote no predictions file", true};
  } else if (!rb.comparison && (!in.original_predictions || in.original_predictions->rows == 0)) {
    gap.release_side = true;
    gap.reason = !ev.predictions
                     ? "the release records no predictions (evaluation.predictions)"
                     : "the release's predictions (evaluation.predictions) cannot be read";
  } else if (!rb.comparison && (!rb.predictions || rb.predictions->rows == 0)) {
    gap.reason = "the rebuild's predictions hold no rows";
  } else if (plan.comparison && !plan.comparison->paired) {
    gap.reason = "the rebuild's predictions do not pair with the release's row by row";
    if (rb.predictions && in.original_predictions) {
      const auto shape = [](const Predictions& p) {
        return std::to_string(p.rows) + " x " + std::to_string(p.cols);
      };
      gap.reason +=
          " (" + shape(*rb.predictions) + " against " + shape(*in.original_predictions) + ")";
    }
  }
  if (!gap.reason.empty())
    plan.gaps.families[CheckKind::distribution] = gap;
  // Every segment the release records, or its scoring scores, is planned: a segment check with
  // seed runs and no row is one the release gives no value for, unless its scopes were to come
  // from scores the predictions could not give.
  FamilyGap segments = {
      true, "the release records no value for it (evaluation.segments, or its scoring)", false};
  if (ev.scoring && !in.scores && !gap.reason.empty())
    segments = {gap.release_side, gap.reason, false};
  plan.gaps.families[CheckKind::segment] = segments;
  if (!plan.parity) {
    FamilyGap parity = gap;
    parity.always = false;
    if (!ev.scoring) {
      parity = {true, "the release has no scoring spec (evaluation.scoring) to compute them",
                false};
    } else if (in.scores && !in.scores->parity) {
      parity = {false, in.scores->parity_error.value_or("reverify's parity of the two runs failed"),
                false};
    }
    if (!parity.reason.empty())
      plan.gaps.families[CheckKind::parity] = parity;
  }
  if (ev.scoring && !plan.job_agreement) {
    CheckResult job;
    job.name = "job:metric-agrees";
    job.kind = CheckKind::job;
    job.outcome = CheckOutcome::not_judged;
    job.explanation = job.name +
                      ": not judged: reverify could not score the rebuild's predictions" +
                      (gap.reason.empty() ? std::string() : " (" + gap.reason + ")");
    plan.job_agreement = std::move(job);
  }
}

// Whether the scoring spec declares the operating threshold the flip rate counts decisions at
// (binary: its thresholds, 0.5 when it lists none; regression: the thresholds it lists).
bool declares_threshold(const std::optional<ScoringSpec>& spec, double flip_threshold) {
  if (!spec)
    return false;
  std::vector<double> thresholds = spec->thresholds;
  if (thresholds.empty() && spec->task == ScoringTask::binary)
    thresholds.push_back(0.5);
  return std::find(thresholds.begin(), thresholds.end(), flip_threshold) != thresholds.end();
}

Plan plan_checks(const VerdictInputs& in, const ToleranceSpec& tol, const VerdictPolicy& policy,
                 const std::string& how_to) {
  const auto& ev = in.manifest.evaluation;
  const auto& rb = in.rebuild;
  Plan plan;
  if (!rb.steps_mode) {
    auto primary = metric_spec("primary:" + ev.primary.name, CheckKind::primary, ev.primary.name,
                               tol, policy, how_to);
    primary.observed = rb.primary;
    primary.recorded = ev.primary.value;
    primary.seed_runs = runs_of(tol.seed_runs, ev.primary.name);
    primary.band.examples = ev.primary.examples;
    primary.band.recorded = ev.primary.value;
    primary.detect = keyed(tol.detect, primary.name, ev.primary.name);
    primary.higher_is_better = ev.primary.higher_is_better;
    std::set<std::string> scored_scopes;
    if (in.scores) {
      const auto& own = *in.scores;
      if (own.release.overall.find(ev.primary.name)) {
        if (auto unscored = use_own_scores(primary, own.release.overall, &own.rebuild.overall,
                                           ev.primary.name, plan.gaps))
          plan.unscored.push_back(std::move(*unscored));
        // the direction the job or capture recorded stands (a conflict is capture's error)
        primary.higher_is_better = ev.primary.higher_is_better;
      }
      for (const auto& scope : own.release.segments) {
        scored_scopes.insert(scope.segment);
        for (const auto& metric : scope_metrics(scope, ev)) {
          auto spec = metric_spec("segment:" + scope.segment + ":" + metric, CheckKind::segment,
                                  metric, tol, policy, how_to);
          spec.seed_runs = segment_runs(tol, scope.segment, metric);
          spec.detect = lookup(tol.detect, spec.name);
          if (auto unscored = use_own_scores(spec, scope, find_scope(own.rebuild, scope.segment),
                                             metric, plan.gaps)) {
            plan.unscored.push_back(std::move(*unscored));
            continue;
          }
          if (const auto* scored = scope.find(ev.primary.name); scored && scored->name == metric)
            spec.higher_is_better = ev.primary.higher_is_better;
          plan.segments.emplace_back(scope.segment, std::move(spec));
        }
      }
      plan.job_agreement =
          job_agreement_check(rb.primary, ev.primary.name, rb.segments, own.rebuild);
      if (own.parity)
        plan.parity = parity_statistics(*own.parity);
    }
    if (!plan.parity && rb.parity)
      plan.parity = rb.parity;
    if (plan.parity)
      plan.parity_tolerance = &tol;
    if (plan.unscored.empty() || plan.unscored.front().kind != CheckKind::primary)
      plan.primary = primary;
    for (const auto& [segment, metrics] : ev.segments) {
      if (scored_scopes.count(segment))
        continue;
      const auto observed = rb.segments.find(segment);
      for (const auto& [metric, recorded] : metrics) {
        auto spec = metric_spec("segment:" + segment + ":" + metric, CheckKind::segment, metric,
                                tol, policy, how_to);
        if (observed != rb.segments.end())
          spec.observed = lookup(observed->second, metric);
        spec.recorded = recorded;
        spec.seed_runs = segment_runs(tol, segment, metric);
        spec.band.examples = lookup(ev.segment_examples, segment);
        spec.band.recorded = recorded;
        spec.detect = lookup(tol.detect, spec.name);
        spec.higher_is_better = metric == ev.primary.name ? ev.primary.higher_is_better : true;
        plan.segments.emplace_back(segment, std::move(spec));
      }
    }
    for (const auto& [segment, metrics] : rb.segments) {
      if (scored_scopes.count(segment))
        continue;  // reverify scores it: the job's figures are job:metric-agrees's
      const auto recorded = ev.segments.find(segment);
      for (const auto& [metric, value] : metrics) {
        if (recorded != ev.segments.end() && recorded->second.count(metric))
          continue;
        CheckResult extra;
        extra.name = "segment:" + segment + ":" + metric;
        extra.kind = CheckKind::segment;
        extra.outcome = CheckOutcome::failed;
        extra.observed = value;
        extra.explanation = extra.name +
                            ": reported by the rebuild but not recorded in the manifest (extra "
                            "segment)";
        plan.extra_segments.push_back(std::move(extra));
      }
    }
    plan.predictions_missing = ev.predictions && !rb.predictions && !rb.comparison;
    if (rb.comparison) {
      plan.comparison = rb.comparison;
    } else if (in.original_predictions && rb.predictions &&
               !in.original_predictions->values.empty() && !rb.predictions->values.empty()) {
      const auto& o = *in.original_predictions;
      const auto& r = *rb.predictions;
      plan.comparison = stats::compare(o.view(), r.view(), o.cols, r.cols, o.two_d && r.two_d,
                                       policy.flip_threshold);
    }
    plan.distribution.seed_runs = by_statistic(tol.distribution_seed_runs, true);
    plan.distribution.floor = by_statistic(tol.floor, true);
    plan.distribution.detect = by_statistic(tol.detect, false);
    if (policy.allow_fallback)
      plan.distribution.fixed = by_statistic(policy.fallback_tolerance, true);
    plan.distribution.unbanded_informational = policy.allow_fallback;
    plan.distribution.how_to_calibrate = how_to;
    plan.distribution.threshold_declared = declares_threshold(ev.scoring, policy.flip_threshold);
    plan.distribution.ranking = ev.scoring && ev.scoring->task == ScoringTask::ranking;
    if (in.fail_closed)
      note_prediction_gaps(in, plan);
  }
  if (ev.steps && (rb.steps_mode || (rb.steps && !rb.seed_override))) {
    StepsCheckSpec steps;
    steps.recorded = &*ev.steps;
    steps.rebuilt = rb.steps ? &*rb.steps : nullptr;
    if (rb.steps_mode)
      steps.requested = rb.max_steps;
    steps.exact = in.manifest.level == ReproLevel::bitwise;
    steps.same_seed_runs = tol.steps_same_seed_runs;
    const std::string name = "steps:" + ev.steps->metric;
    steps.floor = lookup(tol.floor, name).value_or(0);
    steps.detect = lookup(tol.detect, name);
    steps.informational = !rb.steps_mode;
    steps.alpha = policy.false_page_rate;  // a note's band; steps mode sets its share below
    steps.model_version = in.manifest.id();
    steps.command_scope = policy.command_scope;
    plan.steps = steps;
  }
  return plan;
}

// Without a scoring spec: the job's numbers held to the predictions they describe, when the
// rebuild's reproduce the release's or a same-seed rerun's (policies/own_scores.hpp).
std::optional<CheckResult> evaluation_unchanged(const VerdictInputs& in, const ToleranceSpec& tol) {
  const auto& rb = in.rebuild;
  if (in.manifest.evaluation.scoring || rb.steps_mode || !rb.predictions)
    return std::nullopt;
  EvaluationSpec spec;
  spec.rebuilt_sha256 = values_sha256(*rb.predictions);
  if (in.original_predictions)
    spec.released_sha256 = values_sha256(*in.original_predictions);
  spec.released_primary = in.manifest.evaluation.primary.value;
  spec.released_segments = &in.manifest.evaluation.segments;
  spec.same_seed = tol.same_seed_scores;
  spec.primary_name = in.manifest.evaluation.primary.name;
  spec.rebuilt_primary = rb.primary;
  spec.rebuilt_segments = &rb.segments;
  return check_evaluation_unchanged(spec);
}

std::string copies_text(const CopiedRuns& copies) {
  std::string text;
  if (!copies.of_release.empty()) {
    text += std::to_string(copies.of_release.size()) +
            " seed run(s) left out of the bands: their predictions are the release's own, bit "
            "for bit (a seed override that reproduces the release is no draw from the seed "
            "spread)";
  }
  if (!copies.of_other_runs.empty()) {
    text += (text.empty() ? "" : "; ") + std::to_string(copies.of_other_runs.size()) +
            " seed run(s) left out of the bands: copies of an earlier seed run";
  }
  return text;
}

// The verdict's full explanation: the sentence of the check that decided it, then in brackets
// what a reader of the checks alone would miss (a check left out for the task, fallback bands,
// runs left out, checks not judged or that cannot fail, a note outside its band, underpowered
// bands: `first_notes` are the first of them, the caller's). It counts nothing: the counts a
// person reads are count_checks' (policies/headline.hpp), made from the checks as stored, so that
// input checks the pipeline adds later are counted the same everywhere.
std::string verdict_text(VerdictClass cls, const std::vector<CheckResult>& checks,
                         const PowerSummary& power, bool level_enforced,
                         std::vector<std::string> first_notes) {
  bool fallback = false;
  std::vector<std::string> cannot_fail, not_judged;
  const CheckResult* note = nullptr;  // the first informational check outside its band
  for (const auto& c : checks) {
    if (c.outcome == CheckOutcome::not_judged) {
      not_judged.push_back(c.name);
      continue;
    }
    if (!c.decides()) {
      if (c.informational && c.outcome == CheckOutcome::failed && !note)
        note = &c;
      continue;
    }
    fallback = fallback || c.fallback.has_value();
    if (c.cannot_fail)
      cannot_fail.push_back(c.name);
  }
  std::vector<std::string> notes = std::move(first_notes);
  if (fallback)
    notes.push_back("used policy fallback tolerances (not calibrated)");
  if (!not_judged.empty()) {
    notes.push_back(std::to_string(not_judged.size()) + " not judged (" + not_judged[0] +
                    (not_judged.size() > 1 ? ", ..." : "") + "): each says why");
  }
  if (!cannot_fail.empty()) {
    notes.push_back(std::to_string(cannot_fail.size()) +
                    " cannot fail with these seed runs, their bound above the statistic's range (" +
                    cannot_fail[0] + (cannot_fail.size() > 1 ? ", ..." : "") + ")");
  }
  // A same-seed comparison outside its band never fails a rebuild alone (docs/design.md), but it is
  // the one sign of a change no hash sees: the headline says so instead of hiding it in the checks.
  if (note) {
    notes.push_back("NOTE: " + note->name +
                    (note->kind == CheckKind::steps
                         ? " is outside its same-seed band (informational: it never fails a "
                           "rebuild alone, but the release's own seeds did not reproduce its curve)"
                         : " is outside its band (informational: it never fails a rebuild alone)"));
  }
  if (!power.underpowered.empty()) {
    notes.push_back("UNDERPOWERED: " + std::to_string(power.underpowered.size()) +
                    " band(s) cannot catch the shift tolerance.detect asks (" +
                    power.underpowered[0] + (power.underpowered.size() > 1 ? ", ..." : "") + ")" +
                    (power.runs_needed
                         ? "; " + std::to_string(*power.runs_needed) + " seed runs in all would"
                         : std::string()) +
                    (power.unreachable ? "; for some no number of seed runs would" : ""));
  }
  std::string joined_notes;
  for (const auto& n : notes)
    joined_notes += (joined_notes.empty() ? "" : "; ") + n;
  if (!level_enforced) {
    return "level rerunnable: the rebuild completed; checks are reported, not enforced" +
           (joined_notes.empty() ? std::string() : " (" + joined_notes + ")");
  }
  const CheckResult* first = nullptr;
  switch (cls) {
    case VerdictClass::failed_out_of_tolerance:
      first = worst_failure(checks, true);
      break;
    case VerdictClass::failed_distribution_shift:
      first = worst_failure(checks, false);
      break;
    case VerdictClass::uncalibrated:
      for (const auto& c : checks)
        if (c.outcome == CheckOutcome::uncalibrated && c.decides() && !first)
          first = &c;
      break;
    default:
      for (const auto& c : checks)
        if ((c.kind == CheckKind::primary || c.kind == CheckKind::steps) && c.decides() && !first)
          first = &c;
  }
  std::string text = first ? first->explanation : std::string();
  if (!joined_notes.empty())
    text += (text.empty() ? "[" : " [") + joined_notes + "]";
  return text;
}

VerdictClass classify(const std::vector<CheckResult>& checks, bool enforced) {
  auto any = [&](auto pred) { return std::any_of(checks.begin(), checks.end(), pred); };
  if (!enforced)
    return VerdictClass::passed;
  if (any([](const CheckResult& c) {
        return c.outcome == CheckOutcome::failed && c.decides() && is_model_check(c);
      }))
    return VerdictClass::failed_out_of_tolerance;
  if (any([](const CheckResult& c) { return c.outcome == CheckOutcome::failed && c.decides(); }))
    return VerdictClass::failed_distribution_shift;
  if (!any([](const CheckResult& c) { return c.decides(); }) || any([](const CheckResult& c) {
        return c.outcome == CheckOutcome::uncalibrated && c.decides();
      }))
    return VerdictClass::uncalibrated;
  return VerdictClass::passed;
}

// The deciding checks the release defines (policies/coverage.hpp), from the planned tolerance.
std::vector<DefinedCheck> defined_by(const VerdictInputs& in, const ToleranceSpec& tol,
                                     const Plan& plan) {
  bool flip_rate_decides = !left_out(Statistic::flip_rate, plan.distribution.ranking);
  if (const auto& c = plan.comparison; c && flip_rate_decides) {
    flip_rate_decides =
        c->scores > c->rows || c->original_unit_interval || plan.distribution.threshold_declared;
  }
  return defined_checks(in.manifest, tol, plan.distribution.seed_runs, in.rebuild.steps_mode,
                        flip_rate_decides);
}

// The release's own side cannot give checks it defines: its record cannot be read whole.
Verdict unreadable_release(const CheckCoverage& coverage, const std::vector<std::string>& gaps) {
  std::string reasons;
  for (const auto& gap : gaps)
    reasons += (reasons.empty() ? "" : "; ") + gap;
  Verdict verdict =
      verdict_for_error(VerdictClass::error_manifest_invalid,
                        "the release's reference cannot be read whole, so " +
                            std::to_string(coverage.defined - coverage.judged) + " of the " +
                            std::to_string(coverage.defined) +
                            " deciding checks it defines cannot be computed: " + reasons);
  verdict.coverage = coverage;
  return verdict;
}

std::string coverage_note(const CheckCoverage& coverage) {
  const std::string text = coverage_text(coverage);
  return text.empty() ? text : "; NOT COMPLETE: " + text;
}

// What the explanation's notes start with: a check left out for the task, then the runs left out
// and the coverage.
std::vector<std::string> first_notes(const Plan& plan, const CopiedRuns& copies,
                                     const CheckCoverage& coverage) {
  std::vector<std::string> notes;
  if (plan.comparison && plan.distribution.ranking)
    notes.push_back(kFlipRateLeftOut);
  if (std::string runs = copies_text(copies) + coverage_note(coverage); !runs.empty())
    notes.push_back(std::move(runs));
  return notes;
}

}  // namespace

ToleranceSpec merged_tolerance(const Manifest& manifest, const ToleranceSpec* calibration,
                               const std::map<std::string, double>& detect) {
  ToleranceSpec out = manifest.tolerance.value_or(ToleranceSpec{});
  if (calibration) {
    overlay(out.seed_runs, calibration->seed_runs);
    for (const auto& [segment, metrics] : calibration->segment_seed_runs)
      overlay(out.segment_seed_runs[segment], metrics);
    overlay(out.distribution_seed_runs, calibration->distribution_seed_runs);
    overlay(out.parity_seed_runs, calibration->parity_seed_runs);
    if (!calibration->steps_same_seed_runs.empty())
      out.steps_same_seed_runs = calibration->steps_same_seed_runs;
    // The seeds its runs used: a later calibration continues past them. A stored calibration
    // holds the whole list (the manifest's and its own); one from before the list was kept has
    // none, and the manifest's stands.
    if (!calibration->seed_overrides.empty())
      out.seed_overrides = calibration->seed_overrides;
    overlay(out.floor, calibration->floor);
    overlay(out.detect, calibration->detect);
  }
  overlay(out.detect, detect);
  return out;
}

namespace {

// The primary and segment metric checks, a failed check of a scope reverify scored saying what
// changed side in it.
std::vector<CheckResult> metric_checks(const VerdictInputs& in, Plan& plan,
                                       const AlphaSplit& alpha) {
  std::vector<CheckResult> checks;
  if (plan.primary) {
    plan.primary->band.alpha = alpha.per_check(CheckFamily::primary);
    checks.push_back(check_metric(*plan.primary));
    const auto& rb = in.rebuild;
    if (rb.primary_name && *rb.primary_name != in.manifest.evaluation.primary.name) {
      auto& check = checks.back();
      check.outcome = CheckOutcome::failed;
      check.explanation = check.name + ": the rebuild reported primary metric \"" +
                          *rb.primary_name + "\", the manifest records \"" +
                          in.manifest.evaluation.primary.name + "\"";
    }
  }
  for (auto& [segment, spec] : plan.segments) {
    spec.band.alpha = alpha.per_check(CheckFamily::segments);
    checks.push_back(check_metric(spec));
    if (!spec.observed && !in.rebuild.segments.count(segment))
      checks.back().explanation = spec.name + ": segment missing from the rebuild";
  }
  // A failed check of a scope reverify scored says what changed side in it.
  if (in.scores && in.scores->parity) {
    for (auto& check : checks) {
      if (check.outcome != CheckOutcome::failed || !check.observed)
        continue;
      auto scope = std::find_if(plan.segments.begin(), plan.segments.end(),
                                [&](const auto& s) { return s.second.name == check.name; });
      const bool primary = check.kind == CheckKind::primary;
      if (!primary && scope == plan.segments.end())
        continue;
      const std::string changed =
          changed_side_text(*in.scores->parity, primary ? std::string() : scope->first);
      if (!changed.empty())
        check.explanation += "; " + changed;
    }
  }
  return checks;
}

// The same-seed reruns' predictions against the rebuild's, a note at level equivalent (and
// rerunnable, which enforces nothing); at bitwise the weights hash decides already. `checks`: the
// metric checks so far (whether the primary failed on its own).
std::optional<CheckResult> same_seed_note(const VerdictInputs& in, const ToleranceSpec& tol,
                                          const Plan& plan,
                                          const std::vector<CheckResult>& checks) {
  if (in.rebuild.steps_mode || tol.same_seed_scores.empty() ||
      in.manifest.level == ReproLevel::bitwise)
    return std::nullopt;
  SameSeedSpec same_seed;
  same_seed.seed_override = in.rebuild.seed_override;
  same_seed.runs = tol.same_seed_scores;
  same_seed.released = in.original_predictions;
  same_seed.rebuilt = in.rebuild.predictions;
  same_seed.primary_name = in.manifest.evaluation.primary.name;
  if (plan.primary) {
    same_seed.released_primary = plan.primary->recorded;
    same_seed.rebuilt_primary = plan.primary->observed;
    const auto primary = std::find_if(checks.begin(), checks.end(), [](const CheckResult& c) {
      return c.kind == CheckKind::primary;
    });
    same_seed.primary_failed = primary != checks.end() && primary->outcome == CheckOutcome::failed;
  }
  return check_same_seed(same_seed);
}

}  // namespace

Verdict decide_verdict(const VerdictInputs& in, const VerdictPolicy& policy) {
  ToleranceSpec tol = merged_tolerance(in.manifest, in.calibration, in.detect);
  const std::string& primary_name = in.manifest.evaluation.primary.name;
  const CopiedRuns copies = copied_runs(tol, primary_name);
  if (!copies.empty()) {
    std::vector<std::size_t> drop = copies.of_release;
    drop.insert(drop.end(), copies.of_other_runs.begin(), copies.of_other_runs.end());
    tol = without_runs(std::move(tol), primary_name, drop);
  }
  const std::string how_to = how_to_calibrate(in.manifest.id(), policy.command_scope);
  Plan plan = plan_checks(in, tol, policy, how_to);
  const AlphaSplit alpha(policy.false_page_rate, policy.alpha_shares, plan.banded());

  Verdict verdict;
  verdict.checks = metric_checks(in, plan, alpha);
  for (auto& extra : plan.extra_segments)
    verdict.checks.push_back(std::move(extra));
  for (auto& unscored : plan.unscored)
    verdict.checks.push_back(std::move(unscored));
  if (plan.job_agreement)
    verdict.checks.push_back(std::move(*plan.job_agreement));
  if (auto unchanged = evaluation_unchanged(in, tol))
    verdict.checks.push_back(std::move(*unchanged));
  if (plan.comparison) {
    plan.distribution.alpha = alpha.per_check(CheckFamily::distribution);
    for (auto& c : distribution_checks(*plan.comparison, plan.distribution))
      verdict.checks.push_back(std::move(c));
  }
  if (plan.parity) {
    for (auto& c :
         parity_checks(*plan.parity, tol, alpha.per_check(CheckFamily::distribution), how_to))
      verdict.checks.push_back(std::move(c));
  }
  if (auto same_seed = same_seed_note(in, tol, plan, verdict.checks))
    verdict.checks.push_back(std::move(*same_seed));
  if (plan.steps) {
    if (!plan.steps->informational)
      plan.steps->alpha = alpha.per_check(CheckFamily::steps);
    verdict.checks.push_back(check_steps(*plan.steps));
  }
  const bool bitwise = in.manifest.level == ReproLevel::bitwise;
  if (bitwise && !in.rebuild.steps_mode) {
    verdict.checks.push_back(check_weights(
        in.manifest.weights ? in.manifest.weights->tensor_sha256 : std::nullopt,
        in.rebuild.tensor_sha256, in.rebuild.tensors ? &*in.rebuild.tensors : nullptr));
  }

  if (in.fail_closed) {
    const auto release_gaps =
        apply_coverage(verdict.checks, defined_by(in, tol, plan), plan.gaps, verdict.coverage);
    if (!release_gaps.empty())
      return unreadable_release(verdict.coverage, release_gaps);
  }
  const bool enforced = in.manifest.level != ReproLevel::rerunnable;
  verdict.cls = classify(verdict.checks, enforced);
  verdict.power = summarize_power(verdict.checks);
  verdict.explanation = verdict.checks.empty()
                            ? "no check applies: the manifest records nothing to compare; " + how_to
                            : verdict_text(verdict.cls, verdict.checks, verdict.power, enforced,
                                           first_notes(plan, copies, verdict.coverage));
  return verdict;
}

Verdict verdict_for_input_drift(std::vector<CheckResult> input_checks) {
  Verdict verdict;
  verdict.cls = VerdictClass::failed_input_drift;
  std::size_t failed = 0;
  for (const auto& c : input_checks)
    failed += c.outcome == CheckOutcome::failed;
  auto first = std::find_if(input_checks.begin(), input_checks.end(),
                            [](const CheckResult& c) { return c.outcome == CheckOutcome::failed; });
  verdict.explanation =
      (first != input_checks.end() ? first->explanation : std::string("an input moved")) +
      (failed > 1 ? " (and " + std::to_string(failed - 1) + " more input(s) moved)" : "") +
      "; no rebuild was started";
  verdict.checks = std::move(input_checks);
  return verdict;
}

Verdict verdict_for_error(VerdictClass cls, std::string message) {
  Verdict verdict;
  verdict.cls = cls;
  verdict.explanation = std::move(message);
  return verdict;
}

}  // namespace reverify
