#include "policies/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "core/map_lookup.hpp"
#include "policies/bands.hpp"
#include "policies/number_text.hpp"
#include "policies/stats.hpp"

namespace reverify {
namespace {

// A verdict over a seed run's recorded values (the bands at the seed means, a held-out run): it
// judges what was recorded, and does not fail closed on what was not (policies/coverage.hpp).
VerdictInputs recorded_values(const Manifest& manifest, const RebuildObservation& observation,
                              const std::map<std::string, double>& detect) {
  VerdictInputs inputs{manifest, observation, nullptr, nullptr, detect};
  inputs.fail_closed = false;
  return inputs;
}

// values without the one at `index`, when the series has one value per run.
std::vector<double> without(const std::vector<double>& values, std::size_t index, std::size_t n) {
  if (values.size() != n)
    return values;
  std::vector<double> out;
  out.reserve(n - 1);
  for (std::size_t i = 0; i < n; ++i) {
    if (i != index)
      out.push_back(values[i]);
  }
  return out;
}

std::optional<double> at(const std::map<std::string, std::vector<double>>& m,
                         const std::string& key, std::size_t index, std::size_t n) {
  auto it = m.find(key);
  if (it == m.end() || it->second.size() != n)
    return std::nullopt;
  return it->second[index];
}

// The statistics against the release that `value` gives each statistic (a held-out run's, the
// seed runs' means); nullopt without ks, psi and wasserstein, unpaired without the paired three.
std::optional<stats::Comparison> comparison_of(
    const std::function<std::optional<double>(Statistic)>& value, const ReleaseShape& release) {
  const auto ks = value(Statistic::ks), psi = value(Statistic::psi),
             w1 = value(Statistic::wasserstein);
  if (!ks || !psi || !w1)
    return std::nullopt;
  stats::Comparison c;
  c.ks = *ks;
  c.psi = *psi;
  c.wasserstein = *w1;
  c.rows = release.rows;
  c.scores = release.scores;
  c.unit_interval = release.unit_interval;
  const auto max_abs = value(Statistic::max_abs_diff), mean_abs = value(Statistic::mean_abs_diff),
             flips = value(Statistic::flip_rate);
  if (max_abs && mean_abs && flips)
    c.paired = stats::Paired{*max_abs, *mean_abs, *flips};
  return c;
}

// The held-out run's statistics against the release, as recorded.
std::optional<stats::Comparison> recorded_comparison(const ToleranceSpec& t, std::size_t index,
                                                     std::size_t n, const ReleaseShape& release) {
  return comparison_of(
      [&](Statistic s) { return at(t.distribution_seed_runs, to_string(s), index, n); }, release);
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v)
    sum += x;
  return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
}

// The values one run (or the seed means) gives every check: its primary metric, its segment
// metrics, its statistics and parity values against the release.
struct RunValues {
  std::optional<double> primary;
  SegmentMetrics segments;
  std::optional<stats::Comparison> comparison;
  std::map<std::string, double> parity;
};

// The release's scores with a run's values where scoring a run's predictions gives one (the
// primary metric overall, every metric of every scored segment); counts and steps stay the
// release's, which are what a verdict reads of the release. A metric the run has no value for is
// left out on both sides (not judged, saying why): the seed runs do not all record it.
OwnScores scores_of_run(const scoring::Scores& release, const std::string& primary_name,
                        const RunValues& run) {
  OwnScores own{release, release, std::nullopt, std::nullopt};
  const auto set = [](scoring::MetricScore& before, scoring::MetricScore& after,
                      std::optional<double> value) {
    after.value = value;
    if (!value && before.judged()) {
      before.value.reset();
      before.not_judged = "the seed runs do not all record it, so no band is made for it";
      after.not_judged = before.not_judged;
    }
  };
  for (std::size_t m = 0; m < own.rebuild.overall.metrics.size(); ++m) {
    auto& after = own.rebuild.overall.metrics[m];
    if (after.name == primary_name)
      set(own.release.overall.metrics[m], after, run.primary);
  }
  for (std::size_t s = 0; s < own.rebuild.segments.size(); ++s) {
    const auto recorded = run.segments.find(own.rebuild.segments[s].segment);
    for (std::size_t m = 0; m < own.rebuild.segments[s].metrics.size(); ++m) {
      auto& after = own.rebuild.segments[s].metrics[m];
      set(own.release.segments[s].metrics[m], after,
          recorded == run.segments.end() ? std::nullopt : lookup(recorded->second, after.name));
    }
  }
  return own;
}

// A rebuild that produced `run`'s values, judged as run_verification judges one: reverify's own
// scores with a scoring spec (the job's figures equal to them, as a seed run's recorded ones
// are), else the job's numbers for the segment metrics the manifest records. `seed_override`:
// the run did not use the release's seeds, so the same-seed notes say nothing of it.
Verdict judge_as_rebuild(const Manifest& manifest, const RunValues& run,
                         const VerdictPolicy& policy, const ReleaseShape& release,
                         const std::map<std::string, double>& detect,
                         std::optional<std::int64_t> seed_override) {
  Manifest m = manifest;
  const auto& ev = manifest.evaluation;
  RebuildObservation rebuild;
  rebuild.primary_name = ev.primary.name;
  rebuild.primary = run.primary;
  rebuild.seed_override = seed_override;
  rebuild.comparison = run.comparison;
  if (!run.comparison)
    m.evaluation.predictions.reset();  // nothing recorded to judge predictions by
  if (!release.parity.empty())
    rebuild.parity = recorded_parity(release.parity, run.parity);
  std::optional<OwnScores> own;
  if (ev.scoring && release.scored) {
    own = scores_of_run(*release.scored, ev.primary.name, run);
    rebuild.segments = run.segments;
  } else {
    // The metrics the job reports are the ones it recorded at release: a segment metric with no
    // value for this run is no check of it.
    for (auto& [segment, metrics] : m.evaluation.segments) {
      const auto values = run.segments.find(segment);
      std::erase_if(metrics, [&](const auto& metric) {
        return values == run.segments.end() || !values->second.count(metric.first);
      });
      for (const auto& [metric, recorded] : metrics)
        rebuild.segments[segment][metric] = values->second.at(metric);
    }
    std::erase_if(m.evaluation.segments, [](const auto& s) { return s.second.empty(); });
  }
  VerdictInputs inputs = recorded_values(m, rebuild, detect);
  inputs.scores = own ? &*own : nullptr;
  return decide_verdict(inputs, policy);
}

// What a rebuild gets from a check no seed band makes, as the bands' table says it.
void describe_unbanded(CheckResult& check, const ToleranceSpec& tolerance) {
  if (check.kind == CheckKind::job) {
    check.explanation = check.name +
                        ": judged on a rebuild, not banded by seed runs: the job's own figures "
                        "against reverify's scoring of the same predictions (relative " +
                        number_text(kJobAgreement) + ")";
  } else if (check.kind == CheckKind::same_seed) {
    check.explanation = check.name +
                        ": a note on a rebuild of the release's own seeds, against "
                        "its " +
                        std::to_string(tolerance.same_seed_scores.size()) +
                        " same-seed rerun(s), not banded by seed runs";
  } else {
    return;
  }
  check.outcome = CheckOutcome::not_judged;
  check.observed.reset();
  check.reference.reset();
  check.band.reset();
  check.margin.reset();
  check.power.reset();
}

}  // namespace

ToleranceSpec seed_run_tolerance(const std::string& primary_name, const std::vector<SeedRun>& runs,
                                 const Predictions* release, double flip_threshold) {
  ToleranceSpec spec;
  for (const auto& run : runs) {
    if (run.primary)
      spec.seed_runs[primary_name].push_back(*run.primary);
    for (const auto& [segment, metrics] : run.segments)
      for (const auto& [metric, value] : metrics)
        spec.segment_seed_runs[segment][metric].push_back(value);
    for (const auto& [check, value] : run.parity)
      spec.parity_seed_runs[check].push_back(value);
    if (release && run.predictions && !release->values.empty() &&
        !run.predictions->values.empty()) {
      const auto& r = *run.predictions;
      const auto c = stats::compare(release->view(), r.view(), release->cols, r.cols,
                                    release->two_d && r.two_d, flip_threshold);
      for (const auto& [statistic, value] : stats::banded_statistics(c))
        spec.distribution_seed_runs[to_string(statistic)].push_back(value);
    }
  }
  return spec;
}

CopiedRuns copied_runs(const ToleranceSpec& spec, const std::string& primary_name) {
  CopiedRuns out;
  const std::size_t n = seed_run_count(spec, primary_name);
  std::vector<const std::vector<double>*> series;
  for (const auto& [statistic, values] : spec.distribution_seed_runs) {
    if (values.size() == n)
      series.push_back(&values);
  }
  if (series.empty())
    return out;
  auto value_at = [&](std::size_t run) {
    std::vector<double> v;
    for (const auto* s : series)
      v.push_back((*s)[run]);
    return v;
  };
  std::vector<std::vector<double>> seen;
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = value_at(i);
    if (std::all_of(v.begin(), v.end(), [](double x) { return x == 0; })) {
      out.of_release.push_back(i);
    } else if (std::find(seen.begin(), seen.end(), v) != seen.end()) {
      out.of_other_runs.push_back(i);
    } else {
      seen.push_back(v);
    }
  }
  return out;
}

ToleranceSpec without_runs(ToleranceSpec spec, const std::string& primary_name,
                           const std::vector<std::size_t>& indices) {
  const std::size_t n = seed_run_count(spec, primary_name);
  auto drop = [&](auto& values) {
    if (values.size() != n)
      return;
    std::remove_reference_t<decltype(values)> kept;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::find(indices.begin(), indices.end(), i) == indices.end())
        kept.push_back(values[i]);
    }
    values = std::move(kept);
  };
  for (auto& [metric, values] : spec.seed_runs)
    drop(values);
  for (auto& [segment, metrics] : spec.segment_seed_runs)
    for (auto& [metric, values] : metrics)
      drop(values);
  for (auto& [statistic, values] : spec.distribution_seed_runs)
    drop(values);
  for (auto& [check, values] : spec.parity_seed_runs)
    drop(values);
  return spec;
}

ToleranceSpec same_seed_tolerance(const std::vector<SeedRun>& runs) {
  ToleranceSpec spec;
  for (const auto& run : runs) {
    if (run.steps)
      spec.steps_same_seed_runs.push_back(*run.steps);
    if (run.predictions) {
      spec.same_seed_scores.push_back(
          SameSeedScore{values_sha256(*run.predictions), run.primary, run.segments});
    }
  }
  return spec;
}

ToleranceSpec appended(ToleranceSpec base, const ToleranceSpec& more) {
  auto append = [](std::vector<double>& into, const std::vector<double>& from) {
    into.insert(into.end(), from.begin(), from.end());
  };
  for (const auto& [metric, values] : more.seed_runs)
    append(base.seed_runs[metric], values);
  for (const auto& [segment, metrics] : more.segment_seed_runs)
    for (const auto& [metric, values] : metrics)
      append(base.segment_seed_runs[segment][metric], values);
  for (const auto& [stat, values] : more.distribution_seed_runs)
    append(base.distribution_seed_runs[stat], values);
  for (const auto& [check, values] : more.parity_seed_runs)
    append(base.parity_seed_runs[check], values);
  base.seed_overrides.insert(base.seed_overrides.end(), more.seed_overrides.begin(),
                             more.seed_overrides.end());
  base.steps_same_seed_runs.insert(base.steps_same_seed_runs.end(),
                                   more.steps_same_seed_runs.begin(),
                                   more.steps_same_seed_runs.end());
  for (const auto& [key, value] : more.floor)
    base.floor[key] = value;
  for (const auto& [key, value] : more.detect)
    base.detect[key] = value;
  return base;
}

std::size_t seed_run_count(const ToleranceSpec& spec, const std::string& primary_name) {
  auto it = spec.seed_runs.find(primary_name);
  return it == spec.seed_runs.end() ? 0 : it->second.size();
}

std::vector<CheckResult> describe_bands(const Manifest& manifest, const ToleranceSpec& tolerance,
                                        const VerdictPolicy& policy, const ReleaseShape& release,
                                        const std::map<std::string, double>& detect) {
  Manifest m = manifest;
  m.tolerance = tolerance;
  const auto& ev = manifest.evaluation;
  RunValues means;
  auto primary = tolerance.seed_runs.find(ev.primary.name);
  means.primary = primary != tolerance.seed_runs.end() && !primary->second.empty()
                      ? mean_of(primary->second)
                      : ev.primary.value;
  for (const auto& [segment, metrics] : tolerance.segment_seed_runs)
    for (const auto& [metric, values] : metrics)
      if (!values.empty())
        means.segments[segment][metric] = mean_of(values);
  for (const auto& [segment, metrics] : ev.segments)  // recorded, where no seed run says
    for (const auto& [metric, recorded] : metrics)
      means.segments[segment].emplace(metric, recorded);
  means.comparison = comparison_of(
      [&](Statistic s) -> std::optional<double> {
        const auto runs = tolerance.distribution_seed_runs.find(to_string(s));
        if (runs == tolerance.distribution_seed_runs.end())
          return std::nullopt;
        return mean_of(runs->second);
      },
      release);
  for (const auto& [check, values] : tolerance.parity_seed_runs)
    means.parity[check] = mean_of(values);
  auto checks = judge_as_rebuild(m, means, policy, release, detect, std::nullopt).checks;
  for (auto& check : checks)
    describe_unbanded(check, tolerance);
  if (ev.steps && !tolerance.steps_same_seed_runs.empty()) {
    std::size_t steps = ev.steps->values.size();
    for (const auto& run : tolerance.steps_same_seed_runs)
      steps = std::min(steps, run.size());
    RebuildObservation steps_mode;
    steps_mode.steps_mode = true;
    steps_mode.max_steps = static_cast<std::int64_t>(steps);
    steps_mode.steps = ev.steps->values;
    for (auto& check : decide_verdict(recorded_values(m, steps_mode, detect), policy).checks)
      checks.push_back(std::move(check));
  }
  return checks;
}

LeaveOneOut leave_one_out(const Manifest& manifest, const ToleranceSpec& tolerance,
                          const VerdictPolicy& policy, const ReleaseShape& release,
                          const std::map<std::string, double>& detect) {
  LeaveOneOut out;
  const std::string& primary = manifest.evaluation.primary.name;
  const std::size_t n = seed_run_count(tolerance, primary);
  for (std::size_t i = 0; i < n; ++i) {
    Manifest held = manifest;
    ToleranceSpec others = tolerance;
    for (auto& [metric, values] : others.seed_runs)
      values = without(values, i, n);
    for (auto& [segment, metrics] : others.segment_seed_runs)
      for (auto& [metric, values] : metrics)
        values = without(values, i, n);
    for (auto& [stat, values] : others.distribution_seed_runs)
      values = without(values, i, n);
    for (auto& [check, values] : others.parity_seed_runs)
      values = without(values, i, n);
    held.tolerance = others;

    RunValues run;
    run.primary = at(tolerance.seed_runs, primary, i, n);
    for (const auto& [segment, metrics] : tolerance.segment_seed_runs)
      for (const auto& [metric, values] : metrics)
        if (values.size() == n)
          run.segments[segment][metric] = values[i];
    run.comparison = recorded_comparison(tolerance, i, n, release);
    for (const auto& [check, values] : tolerance.parity_seed_runs)
      if (values.size() == n)
        run.parity[check] = values[i];
    const auto& seeds = tolerance.seed_overrides;
    const std::int64_t seed = seeds.size() == n ? seeds[i] : static_cast<std::int64_t>(i + 1);
    LeaveOneOutRun judged{i, judge_as_rebuild(held, run, policy, release, detect, seed)};
    out.paged += is_failure(judged.verdict.cls);
    out.runs.push_back(std::move(judged));
  }
  return out;
}

double spread_lower_limit(std::size_t n, double confidence) {
  const double df = static_cast<double>(n) - 1;
  return std::sqrt(df / tolerance_math::chi_squared_quantile(df, confidence));
}

ToleranceSpec with_spread_scaled(ToleranceSpec spec, double factor) {
  const auto around_mean = [factor](std::vector<double>& values) {
    if (values.empty())
      return;
    double mean = 0;
    for (double v : values)
      mean += v / static_cast<double>(values.size());
    for (double& v : values)
      v = mean + factor * (v - mean);
  };
  for (auto& [metric, values] : spec.seed_runs)
    around_mean(values);
  for (auto& [segment, metrics] : spec.segment_seed_runs)
    for (auto& [metric, values] : metrics)
      around_mean(values);
  for (auto& [check, values] : spec.parity_seed_runs) {  // shares of a scope: like a metric
    around_mean(values);
    for (double& v : values)
      v = std::max(v, 0.0);
  }
  for (auto& [statistic, values] : spec.distribution_seed_runs) {
    std::vector<double> logs;
    for (double v : values)
      if (v > 0)
        logs.push_back(std::log(v));
    around_mean(logs);
    std::size_t next = 0;
    for (double& v : values)
      if (v > 0)
        v = std::exp(logs[next++]);
  }
  return spec;
}

namespace {

double binomial_tail(std::size_t n, std::size_t at_least, double p) {
  // 1 - P(X < at_least), the pmf summed term by term (n is a calibration's run count: small).
  double below = 0;
  double term = std::pow(1 - p, static_cast<double>(n));  // P(X = 0)
  for (std::size_t k = 0; k < at_least && k <= n; ++k) {
    below += term;
    term *= static_cast<double>(n - k) / static_cast<double>(k + 1) * p / (1 - p);
  }
  return std::clamp(1 - below, 0.0, 1.0);
}

}  // namespace

namespace {

// `value` rounded up to 3 significant digits: a floor that holds it, written as people write one.
double rounded_up(double value) {
  if (value <= 0)
    return value;
  const double unit = std::pow(10.0, std::floor(std::log10(value)) - 2);
  return std::ceil(value / unit * (1 - 1e-12)) * unit;
}

// The tolerance.floor that would have held a failed held-out check: a metric's distance from its
// fold's seed mean (the band's centre, which a floor widens around), a statistic's value; none
// for a check no floor widens (parity, weights...).
std::optional<double> floor_to_hold(const CheckResult& check) {
  if (!check.observed || !check.band)
    return std::nullopt;
  switch (check.kind) {
    case CheckKind::primary:
    case CheckKind::segment:
      return check.reference
                 ? std::optional(rounded_up(std::abs(*check.observed - *check.reference)))
                 : std::nullopt;
    case CheckKind::distribution:
      return rounded_up(*check.observed);
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<LeaveOneOutExcess> leave_one_out_excess(const LeaveOneOut& loo,
                                                      double false_page_rate) {
  const std::size_t n = loo.runs.size();
  if (n == 0 || loo.paged == 0)
    return std::nullopt;
  LeaveOneOutExcess excess;
  excess.runs = n;
  excess.paged = loo.paged;
  excess.expected = false_page_rate * static_cast<double>(n);
  excess.tail = binomial_tail(n, loo.paged, false_page_rate);
  if (excess.tail >= kLeaveOneOutTail)
    return std::nullopt;
  std::map<std::string, LeaveOneOutBlame> failed;
  for (const auto& run : loo.runs) {
    if (!is_failure(run.verdict.cls))
      continue;
    for (const auto& check : run.verdict.checks) {
      if (!check.decides() || check.outcome != CheckOutcome::failed)
        continue;
      auto& blame = failed[check.name];
      blame.check = check.name;
      ++blame.runs;
      if (const auto floor = floor_to_hold(check))
        blame.floor = std::max(blame.floor.value_or(0.0), *floor);
    }
  }
  for (auto& [name, blame] : failed)
    excess.blamed.push_back(std::move(blame));
  std::stable_sort(excess.blamed.begin(), excess.blamed.end(),
                   [](const auto& a, const auto& b) { return a.runs > b.runs; });
  return excess;
}

std::string excess_text(const LeaveOneOutExcess& excess, double false_page_rate) {
  return std::to_string(excess.paged) + " of " + std::to_string(excess.runs) +
         " seed runs paged where " + number_text(excess.expected) +
         " are expected at false_page_rate " + number_text(false_page_rate) +
         " (honest bands page this often in " + number_text(100 * excess.tail) +
         "% of calibrations): these bands are narrower than the runs' own spread";
}

std::string blamed_text(const LeaveOneOutExcess& excess) {
  std::string text;
  for (const auto& blame : excess.blamed) {
    text += (text.empty() ? "" : ", ") + blame.check + " (" + std::to_string(blame.runs) +
            (blame.runs == 1 ? " run)" : " runs)");
  }
  return text;
}

std::string excess_action(const LeaveOneOutExcess& excess, const std::string& model_version,
                          const std::string& scope) {
  constexpr std::size_t kFloorsNamed = 3;
  std::string floors;
  std::size_t named = 0, more = 0;
  for (const auto& blame : excess.blamed) {
    if (!blame.floor)
      continue;
    if (named++ < kFloorsNamed)
      floors += (floors.empty() ? "" : ", ") + blame.check + "=" + number_text(*blame.floor);
    else
      ++more;
  }
  std::string text = "To clear it: ";
  if (!floors.empty()) {
    text += "set tolerance.floor where the spread is wider than the runs show (" + floors +
            (more ? " and " + std::to_string(more) + " more" : std::string()) +
            " holds every held-out run; `reverify capture --floor CHECK=VALUE` records it at "
            "release), or ";
  }
  return text + "measure the spread with more seed runs (" +
         suggested_command("calibrate " + model_version + " --seeds " +
                               std::to_string(std::max<std::size_t>(excess.runs, 10)),
                           scope) +
         "), then look at leave-one-out again";
}

std::string excess_warning(const LeaveOneOutExcess& excess, double false_page_rate,
                           const std::string& model_version, const std::string& scope) {
  const std::string blamed = blamed_text(excess);
  return excess_text(excess, false_page_rate) + (blamed.empty() ? "" : "; to blame: " + blamed) +
         ". " + excess_action(excess, model_version, scope);
}

std::optional<std::string> LeaveOneOutFinding::warning(const std::string& model_version,
                                                       const std::string& scope) const {
  if (!excess)
    return std::nullopt;
  return excess_text(*excess, false_page_rate) + ". " +
         excess_action(*excess, model_version, scope);
}

LeaveOneOutFinding leave_one_out_finding(const LeaveOneOut& loo, double false_page_rate) {
  return {loo.runs.size(), loo.paged, false_page_rate, leave_one_out_excess(loo, false_page_rate),
          false};
}

namespace {

// What the finding says leave-one-out judged: a held-out run as a verification judges a rebuild.
constexpr const char* kJudgedAs = "verification";

}  // namespace

nlohmann::json to_json(const LeaveOneOutFinding& finding) {
  nlohmann::json excess = nullptr;
  if (finding.excess) {
    nlohmann::json blamed = nlohmann::json::array();
    for (const auto& blame : finding.excess->blamed) {
      nlohmann::json entry = {{"check", blame.check}, {"runs", blame.runs}};
      if (blame.floor)
        entry["floor"] = *blame.floor;
      blamed.push_back(std::move(entry));
    }
    excess = {{"expected", finding.excess->expected},
              {"tail", finding.excess->tail},
              {"blamed", std::move(blamed)}};
  }
  return {{"judged_as", kJudgedAs},
          {"runs", finding.runs},
          {"paged", finding.paged},
          {"false_page_rate", finding.false_page_rate},
          {"excess", std::move(excess)},
          {"warning", finding.excess
                          ? nlohmann::json(excess_text(*finding.excess, finding.false_page_rate))
                          : nlohmann::json(nullptr)}};
}

std::optional<LeaveOneOutFinding> leave_one_out_finding_from_json(const nlohmann::json& j) {
  const auto count = [&j](const char* key) {
    return j.contains(key) && j[key].is_number_unsigned();
  };
  if (!j.is_object() || !count("runs") || !count("paged") || !j.contains("false_page_rate") ||
      !j["false_page_rate"].is_number() || !j.contains("excess"))
    return std::nullopt;
  LeaveOneOutFinding finding;
  finding.runs = j["runs"].get<std::size_t>();
  finding.paged = j["paged"].get<std::size_t>();
  finding.false_page_rate = j["false_page_rate"].get<double>();
  finding.stale = j.value("judged_as", std::string()) != kJudgedAs;
  const auto& e = j["excess"];
  if (e.is_null() || finding.stale)
    return finding;
  if (!e.is_object() || !e.contains("expected") || !e["expected"].is_number() ||
      !e.contains("tail") || !e["tail"].is_number() || !e.contains("blamed") ||
      !e["blamed"].is_array())
    return std::nullopt;
  LeaveOneOutExcess excess;
  excess.runs = finding.runs;
  excess.paged = finding.paged;
  excess.expected = e["expected"].get<double>();
  excess.tail = e["tail"].get<double>();
  for (const auto& b : e["blamed"]) {
    if (!b.is_object() || !b.contains("check") || !b["check"].is_string() || !b.contains("runs") ||
        !b["runs"].is_number_unsigned())
      return std::nullopt;
    LeaveOneOutBlame blame{b["check"].get<std::string>(), b["runs"].get<std::size_t>(),
                           std::nullopt};
    if (b.contains("floor") && b["floor"].is_number())
      blame.floor = b["floor"].get<double>();
    excess.blamed.push_back(std::move(blame));
  }
  finding.excess = std::move(excess);
  return finding;
}

}  // namespace reverify
