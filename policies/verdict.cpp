#include "policies/verdict.hpp"

#include <algorithm>

#include "policies/checks_distribution.hpp"
#include "policies/checks_metric.hpp"
#include "policies/checks_steps.hpp"
#include "policies/number_text.hpp"
#include "policies/stats.hpp"
#include "policies/tolerance.hpp"

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

std::optional<double> lookup(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? std::nullopt : std::optional<double>(it->second);
}

bool decides(const CheckResult& c) {
  return !c.evidence.value("informational", false);
}

bool is_model_check(const CheckResult& c) {
  return c.kind != CheckKind::distribution;
}

// The check whose failure is worst relative to its band: the one to name first.
const CheckResult* worst_failure(const std::vector<CheckResult>& checks, bool model_checks) {
  const CheckResult* worst = nullptr;
  double worst_ratio = 0;
  for (const auto& c : checks) {
    if (c.outcome != CheckOutcome::failed || !decides(c) || is_model_check(c) != model_checks)
      continue;
    const double ratio =
        (c.margin && c.tolerance && *c.tolerance > 0) ? *c.margin / *c.tolerance : -1e300;
    if (!worst || ratio < worst_ratio)
      worst = &c, worst_ratio = ratio;
  }
  return worst;
}

// The Bonferroni m: metric and step bands plus the distribution statistics that have seed pairs.
struct CheckPlan {
  const Manifest& manifest;
  const RebuildObservation& rebuild;
  const ToleranceSpec& tolerance;
  std::optional<stats::Comparison> comparison;
  bool compare_steps = false;

  std::size_t calibrated_checks() const {
    std::size_t m = 0;
    if (rebuild.steps_mode) {
      return compare_steps && manifest.level != ReproLevel::bitwise &&
             tolerance.steps_pairs_max_abs.size() >= kMinSeedRuns;
    }
    m += runs_of(tolerance.seed_runs, manifest.evaluation.primary.name).size() >= kMinSeedRuns;
    for (const auto& [segment, metrics] : manifest.evaluation.segments)
      for (const auto& [metric, value] : metrics)
        m += segment_runs(tolerance, segment, metric).size() >= kMinSeedRuns;
    if (comparison) {
      DistributionBands bands;
      bands.pairs = tolerance.distribution_pairs;
      m += calibrated_distribution_checks(*comparison, bands);
    }
    m += compare_steps && manifest.level != ReproLevel::bitwise &&
         tolerance.steps_pairs_max_abs.size() >= kMinSeedRuns;
    return std::max<std::size_t>(m, 1);
  }
};

std::vector<CheckResult> metric_checks(const VerdictInputs& in, const ToleranceSpec& tol,
                                       const VerdictPolicy& policy, double alpha,
                                       const std::string& how_to) {
  const auto& ev = in.manifest.evaluation;
  const auto& rb = in.rebuild;
  std::vector<CheckResult> out;
  auto fallback = [&](const std::string& metric) {
    return policy.allow_fallback ? lookup(policy.fallback_tolerance, metric) : std::nullopt;
  };
  MetricCheckSpec primary;
  primary.name = "primary:" + ev.primary.name;
  primary.kind = CheckKind::primary;
  primary.observed = rb.primary;
  primary.recorded = ev.primary.value;
  primary.seed_runs = runs_of(tol.seed_runs, ev.primary.name);
  primary.floor = lookup(tol.floor, ev.primary.name).value_or(0);
  primary.higher_is_better = ev.primary.higher_is_better;
  primary.alpha = alpha;
  primary.fallback_tolerance = fallback(ev.primary.name);
  primary.how_to_calibrate = how_to;
  out.push_back(check_metric(primary));
  if (rb.primary_name && *rb.primary_name != ev.primary.name) {
    auto& check = out.back();
    check.outcome = CheckOutcome::failed;
    check.explanation = check.name + ": the rebuild reported primary metric \"" + *rb.primary_name +
                        "\", the manifest records \"" + ev.primary.name + "\"";
  }
  for (const auto& [segment, metrics] : ev.segments) {
    const auto observed_segment = rb.segments.find(segment);
    for (const auto& [metric, recorded] : metrics) {
      MetricCheckSpec spec;
      spec.name = "segment:" + segment + ":" + metric;
      spec.kind = CheckKind::segment;
      if (observed_segment != rb.segments.end())
        spec.observed = lookup(observed_segment->second, metric);
      spec.recorded = recorded;
      spec.seed_runs = segment_runs(tol, segment, metric);
      spec.floor = lookup(tol.floor, metric).value_or(0);
      spec.higher_is_better = metric == ev.primary.name ? ev.primary.higher_is_better : true;
      spec.alpha = alpha;
      spec.fallback_tolerance = fallback(metric);
      spec.how_to_calibrate = how_to;
      out.push_back(check_metric(spec));
      if (observed_segment == rb.segments.end())
        out.back().explanation = spec.name + ": segment missing from the rebuild";
    }
  }
  for (const auto& [segment, metrics] : rb.segments) {
    const auto recorded_segment = ev.segments.find(segment);
    for (const auto& [metric, value] : metrics) {
      if (recorded_segment != ev.segments.end() && recorded_segment->second.count(metric))
        continue;
      CheckResult extra;
      extra.name = "segment:" + segment + ":" + metric;
      extra.kind = CheckKind::segment;
      extra.outcome = CheckOutcome::failed;
      extra.observed = value;
      extra.explanation =
          extra.name + ": reported by the rebuild but not recorded in the manifest (extra segment)";
      out.push_back(std::move(extra));
    }
  }
  return out;
}

std::string verdict_text(VerdictClass cls, const std::vector<CheckResult>& checks,
                         bool level_enforced) {
  std::size_t passed = 0, failed = 0, uncalibrated = 0;
  bool fallback = false;
  for (const auto& c : checks) {
    if (!decides(c))
      continue;
    passed += c.outcome == CheckOutcome::passed;
    failed += c.outcome == CheckOutcome::failed;
    uncalibrated += c.outcome == CheckOutcome::uncalibrated;
    fallback = fallback || c.evidence.contains("fallback");
  }
  const std::string counts = std::to_string(passed) + " passed, " + std::to_string(failed) +
                             " failed, " + std::to_string(uncalibrated) + " uncalibrated";
  const std::string fallback_note =
      fallback ? "; used policy fallback tolerances (not calibrated)" : "";
  if (!level_enforced)
    return "level rerunnable: the rebuild completed; checks are reported, not enforced (" + counts +
           ")";
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
        if (c.outcome == CheckOutcome::uncalibrated && decides(c) && !first)
          first = &c;
      break;
    default:
      for (const auto& c : checks)
        if (c.kind == CheckKind::primary || c.kind == CheckKind::steps)
          if (!first)
            first = &c;
  }
  return (first ? first->explanation + " [" : "[") + counts + fallback_note + "]";
}

}  // namespace

ToleranceSpec merged_tolerance(const Manifest& manifest, const ToleranceSpec* calibration) {
  ToleranceSpec out = manifest.tolerance.value_or(ToleranceSpec{});
  if (!calibration)
    return out;
  overlay(out.seed_runs, calibration->seed_runs);
  for (const auto& [segment, metrics] : calibration->segment_seed_runs)
    overlay(out.segment_seed_runs[segment], metrics);
  overlay(out.distribution_pairs, calibration->distribution_pairs);
  if (!calibration->steps_pairs_max_abs.empty())
    out.steps_pairs_max_abs = calibration->steps_pairs_max_abs;
  overlay(out.floor, calibration->floor);
  return out;
}

Verdict decide_verdict(const VerdictInputs& in, const VerdictPolicy& policy) {
  const ToleranceSpec tol = merged_tolerance(in.manifest, in.calibration);
  const auto& ev = in.manifest.evaluation;
  const auto& rb = in.rebuild;
  const bool bitwise = in.manifest.level == ReproLevel::bitwise;
  const std::string how_to = how_to_calibrate(in.manifest.id());

  CheckPlan plan{in.manifest, rb, tol, std::nullopt, false};
  plan.compare_steps = ev.steps.has_value() && (rb.steps_mode || rb.steps.has_value());
  if (!rb.steps_mode && in.original_predictions && rb.predictions &&
      !in.original_predictions->values.empty() && !rb.predictions->values.empty()) {
    const auto& o = *in.original_predictions;
    const auto& r = *rb.predictions;
    plan.comparison = stats::compare(o.view(), r.view(), o.cols, r.cols, o.two_d && r.two_d,
                                     policy.flip_threshold);
  }
  const double alpha = policy.false_page_rate / static_cast<double>(plan.calibrated_checks());

  Verdict verdict;
  if (!rb.steps_mode) {
    verdict.checks = metric_checks(in, tol, policy, alpha, how_to);
    if (ev.predictions && !rb.predictions) {
      CheckResult missing;
      missing.name = "distribution:predictions";
      missing.kind = CheckKind::distribution;
      missing.outcome = CheckOutcome::failed;
      missing.explanation = "distribution: the rebuild wrote no predictions file";
      verdict.checks.push_back(std::move(missing));
    }
    if (plan.comparison) {
      DistributionBands bands;
      bands.pairs = tol.distribution_pairs;
      bands.alpha = alpha;
      if (policy.allow_fallback)
        bands.fixed = policy.fallback_tolerance;
      bands.unbanded_informational = policy.allow_fallback;
      bands.how_to_calibrate = how_to;
      for (auto& c : distribution_checks(*plan.comparison, bands))
        verdict.checks.push_back(std::move(c));
    }
  }
  if (plan.compare_steps) {
    StepsCheckSpec steps;
    steps.recorded = &*ev.steps;
    steps.rebuilt = rb.steps ? &*rb.steps : nullptr;
    if (rb.steps_mode)
      steps.max_steps = rb.max_steps;
    steps.exact = bitwise;
    steps.pairs_max_abs = tol.steps_pairs_max_abs;
    steps.alpha = alpha;
    steps.how_to_calibrate = how_to;
    verdict.checks.push_back(check_steps(steps));
  }
  if (bitwise && !rb.steps_mode) {
    verdict.checks.push_back(check_weights(
        in.manifest.weights ? in.manifest.weights->tensor_sha256 : std::nullopt, rb.tensor_sha256));
  }

  const bool enforced = in.manifest.level != ReproLevel::rerunnable;
  auto any = [&](auto pred) {
    return std::any_of(verdict.checks.begin(), verdict.checks.end(), pred);
  };
  if (!enforced) {
    verdict.cls = VerdictClass::passed;
  } else if (any([](const CheckResult& c) {
               return c.outcome == CheckOutcome::failed && is_model_check(c);
             })) {
    verdict.cls = VerdictClass::failed_out_of_tolerance;
  } else if (any([](const CheckResult& c) {
               return c.outcome == CheckOutcome::failed && decides(c);
             })) {
    verdict.cls = VerdictClass::failed_distribution_shift;
  } else if (verdict.checks.empty() || any([](const CheckResult& c) {
               return c.outcome == CheckOutcome::uncalibrated && decides(c);
             })) {
    verdict.cls = VerdictClass::uncalibrated;
  } else {
    verdict.cls = VerdictClass::passed;
  }
  verdict.explanation = verdict.checks.empty()
                            ? "no check applies: the manifest records nothing to compare; " + how_to
                            : verdict_text(verdict.cls, verdict.checks, enforced);
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

ToleranceSpec calibrate_from_runs(const std::string& primary_name, const std::vector<SeedRun>& runs,
                                  double flip_threshold) {
  ToleranceSpec spec;
  for (const auto& run : runs) {
    if (run.primary)
      spec.seed_runs[primary_name].push_back(*run.primary);
    for (const auto& [segment, metrics] : run.segments)
      for (const auto& [metric, value] : metrics)
        spec.segment_seed_runs[segment][metric].push_back(value);
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (std::size_t j = i + 1; j < runs.size(); ++j) {
      const auto *a = runs[i].predictions, *b = runs[j].predictions;
      if (a && b && !a->values.empty() && !b->values.empty()) {
        const auto c = stats::compare(a->view(), b->view(), a->cols, b->cols, a->two_d && b->two_d,
                                      flip_threshold);
        for (const auto& [name, value] : stats::banded_statistics(c))
          spec.distribution_pairs[name].push_back(value);
      }
      if (runs[i].steps && runs[j].steps) {
        const auto &x = *runs[i].steps, &y = *runs[j].steps;
        double deviation = 0;
        for (std::size_t k = 0; k < std::min(x.size(), y.size()); ++k)
          deviation = std::max(deviation, std::abs(x[k] - y[k]));
        spec.steps_pairs_max_abs.push_back(deviation);
      }
    }
  }
  return spec;
}

}  // namespace reverify
