#include "policies/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>

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

// The held-out run's statistics against the release, as recorded.
std::optional<stats::Comparison> recorded_comparison(const ToleranceSpec& t, std::size_t index,
                                                     std::size_t n, std::size_t rows,
                                                     std::size_t scores) {
  const auto& d = t.distribution_seed_runs;
  const auto ks = at(d, "ks", index, n), psi = at(d, "psi", index, n),
             w1 = at(d, "wasserstein", index, n);
  if (!ks || !psi || !w1)
    return std::nullopt;
  stats::Comparison c;
  c.ks = *ks;
  c.psi = *psi;
  c.wasserstein = *w1;
  c.rows = rows;
  c.scores = scores;
  const auto max_abs = at(d, "max_abs_diff", index, n), mean_abs = at(d, "mean_abs_diff", index, n),
             flips = at(d, "flip_rate", index, n);
  if (max_abs && mean_abs && flips)
    c.paired = stats::Paired{*max_abs, *mean_abs, *flips};
  return c;
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
                                        const VerdictPolicy& policy, std::size_t rows,
                                        std::size_t scores,
                                        const std::map<std::string, double>& detect,
                                        const std::vector<ParityStatistic>& parity_shape) {
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v)
      sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  Manifest m = manifest;
  m.tolerance = tolerance;
  const auto& ev = manifest.evaluation;
  RebuildObservation at_means;
  at_means.primary_name = ev.primary.name;
  auto primary = tolerance.seed_runs.find(ev.primary.name);
  at_means.primary = primary != tolerance.seed_runs.end() && !primary->second.empty()
                         ? mean(primary->second)
                         : ev.primary.value;
  for (const auto& [segment, metrics] : ev.segments) {
    for (const auto& [metric, recorded] : metrics) {
      auto runs = tolerance.segment_seed_runs.find(segment);
      const auto* values = runs != tolerance.segment_seed_runs.end() && runs->second.count(metric)
                               ? &runs->second.at(metric)
                               : nullptr;
      at_means.segments[segment][metric] = values && !values->empty() ? mean(*values) : recorded;
    }
  }
  const auto& d = tolerance.distribution_seed_runs;
  if (d.count("ks") && d.count("psi") && d.count("wasserstein")) {
    stats::Comparison c;
    c.ks = mean(d.at("ks"));
    c.psi = mean(d.at("psi"));
    c.wasserstein = mean(d.at("wasserstein"));
    c.rows = rows;
    c.scores = scores;
    if (d.count("max_abs_diff") && d.count("mean_abs_diff") && d.count("flip_rate")) {
      c.paired = stats::Paired{mean(d.at("max_abs_diff")), mean(d.at("mean_abs_diff")),
                               mean(d.at("flip_rate"))};
    }
    at_means.comparison = c;
  } else {
    m.evaluation.predictions.reset();
  }
  std::map<std::string, double> parity_means;
  for (const auto& [check, values] : tolerance.parity_seed_runs)
    parity_means[check] = mean(values);
  if (!parity_shape.empty())
    at_means.parity = recorded_parity(parity_shape, parity_means);
  // Over recorded seed-run values: only what was recorded is judged (not fail-closed).
  auto checks = decide_verdict(recorded_values(m, at_means, detect), policy).checks;
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
                          const VerdictPolicy& policy, std::size_t rows, std::size_t scores,
                          const std::map<std::string, double>& detect,
                          const std::vector<ParityStatistic>& parity_shape) {
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

    RebuildObservation rebuild;
    rebuild.primary_name = primary;
    rebuild.primary = at(tolerance.seed_runs, primary, i, n);
    // Only the segments the manifest records: a calibration with a scoring spec also holds the
    // scopes reverify scored, which a held-out run judged without scores would report as extra.
    for (const auto& [segment, metrics] : tolerance.segment_seed_runs)
      for (const auto& [metric, values] : metrics)
        if (values.size() == n && manifest.evaluation.segments.count(segment))
          rebuild.segments[segment][metric] = values[i];
    rebuild.comparison = recorded_comparison(tolerance, i, n, rows, scores);
    if (!parity_shape.empty()) {
      std::map<std::string, double> recorded;
      for (const auto& [check, values] : tolerance.parity_seed_runs)
        if (values.size() == n)
          recorded[check] = values[i];
      rebuild.parity = recorded_parity(parity_shape, recorded);
    }
    if (!rebuild.comparison)
      held.evaluation.predictions.reset();  // nothing recorded to judge predictions by
    LeaveOneOutRun run{i, decide_verdict(recorded_values(held, rebuild, detect), policy)};
    out.paged += is_failure(run.verdict.cls);
    out.runs.push_back(std::move(run));
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
  std::map<std::string, std::size_t> failed;
  for (const auto& run : loo.runs) {
    if (!is_failure(run.verdict.cls))
      continue;
    for (const auto& check : run.verdict.checks)
      if (check.decides() && check.outcome == CheckOutcome::failed)
        ++failed[check.name];
  }
  excess.blamed.assign(failed.begin(), failed.end());
  std::stable_sort(excess.blamed.begin(), excess.blamed.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return excess;
}

std::string excess_text(const LeaveOneOutExcess& excess, double false_page_rate) {
  std::string blamed;
  for (const auto& [name, runs] : excess.blamed)
    blamed += (blamed.empty() ? "" : ", ") + name + " (" + std::to_string(runs) + ")";
  return std::to_string(excess.paged) + " of " + std::to_string(excess.runs) +
         " seed runs paged where " + number_text(excess.expected) +
         " are expected at false_page_rate " + number_text(false_page_rate) +
         " (honest bands page this often in " + number_text(100 * excess.tail) +
         "% of calibrations): these bands are narrower than the runs' own spread" +
         (blamed.empty() ? "" : "; to blame: " + blamed);
}

std::string excess_warning(const LeaveOneOutExcess& excess, double false_page_rate,
                           const std::string& model_version, const std::string& scope) {
  return excess_text(excess, false_page_rate) + ". Add seed runs (" +
         suggested_command("calibrate " + model_version + " --seeds 10", scope) +
         "), give the job's metrics their example counts (a scoring spec, or "
         "\"segment_examples\" in result.json), or set tolerance.floor for the check";
}

std::optional<std::string> LeaveOneOutFinding::warning(const std::string& model_version,
                                                       const std::string& scope) const {
  if (!excess)
    return std::nullopt;
  return excess_warning(*excess, false_page_rate, model_version, scope);
}

LeaveOneOutFinding leave_one_out_finding(const LeaveOneOut& loo, double false_page_rate) {
  return {loo.runs.size(), loo.paged, false_page_rate, leave_one_out_excess(loo, false_page_rate)};
}

nlohmann::json to_json(const LeaveOneOutFinding& finding) {
  nlohmann::json excess = nullptr;
  if (finding.excess) {
    nlohmann::json blamed = nlohmann::json::array();
    for (const auto& [check, runs] : finding.excess->blamed)
      blamed.push_back({{"check", check}, {"runs", runs}});
    excess = {{"expected", finding.excess->expected},
              {"tail", finding.excess->tail},
              {"blamed", std::move(blamed)}};
  }
  return {{"runs", finding.runs},
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
  const auto& e = j["excess"];
  if (e.is_null())
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
    excess.blamed.emplace_back(b["check"].get<std::string>(), b["runs"].get<std::size_t>());
  }
  finding.excess = std::move(excess);
  return finding;
}

}  // namespace reverify
