#include "verify/calibration.hpp"

#include <algorithm>
#include <set>
#include <system_error>

#include "core/eval_columns.hpp"
#include "core/predictions.hpp"
#include "policies/number_text.hpp"
#include "policies/own_scores.hpp"
#include "policies/power.hpp"
#include "policies/verdict.hpp"
#include "verify/pipeline_rebuild.hpp"
#include "verify/preflight.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

// Removes a scratch folder when it goes out of scope, however the calibration ends.
struct ScratchRemover {
  fs::path path;
  ~ScratchRemover() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// One run's outputs as a SeedRun; its predictions are read into `keep`. With `scoring` (the
// scoring spec's inputs) the predictions are scored by reverify and its numbers replace the
// job's: the primary metric when scoring computes it, every scored segment's metrics; and, with
// the release's predictions, the share of records that changed side (parity_values).
Result<SeedRun> seed_run_of(const JobOutputs& out, std::optional<Predictions>& keep,
                            const ScoringInputs* scoring, const Predictions* release) {
  SeedRun run;
  run.primary = out.primary_value;
  run.segments = out.segments;
  if (!out.steps_values.empty())
    run.steps = out.steps_values;
  if (out.predictions) {
    auto read = read_predictions(*out.predictions);
    if (!read.ok())
      return read.error();
    keep = std::move(read).value();
    run.predictions = &*keep;
  }
  if (scoring && keep) {
    auto scores = scoring::score(*scoring, *keep);
    if (!scores.ok())
      return make_error(scores.error().code, "evaluation.scoring: " + scores.error().message);
    ReportedForm own = reported_form(*scores, out.primary_name);
    if (own.primary)
      run.primary = own.primary;
    for (auto& [segment, metrics] : own.segments)
      run.segments[segment] = std::move(metrics);
    if (release) {
      auto parity = scoring::parity(*scoring, *release, *keep);
      if (!parity.ok())
        return make_error(parity.error().code, "evaluation.scoring: " + parity.error().message);
      run.parity = parity_values(*parity);
    }
  }
  return run;
}

// Where a calibration starts looking for seeds: past the recorded seed overrides, else past 1..n
// (the convention of release.sh and earlier calibrations).
std::int64_t first_seed(const ToleranceSpec& spec, const std::string& primary) {
  if (!spec.seed_overrides.empty())
    return *std::max_element(spec.seed_overrides.begin(), spec.seed_overrides.end()) + 1;
  return static_cast<std::int64_t>(seed_run_count(spec, primary)) + 1;
}

// Seeds a calibration never uses: the overrides its runs used already (a run twice understates
// the spread) and every seed the release recorded (an override equal to one can reproduce the
// release bit for bit, which is no draw from the seed spread).
std::set<std::int64_t> taken_seeds(const Manifest& manifest, const ToleranceSpec& spec) {
  std::set<std::int64_t> taken(spec.seed_overrides.begin(), spec.seed_overrides.end());
  for (const auto& [name, seed] : manifest.seeds)
    taken.insert(seed);
  return taken;
}

std::int64_t free_seed(std::int64_t seed, const std::set<std::int64_t>& taken) {
  while (taken.count(seed))
    ++seed;
  return seed;
}

struct Session {
  const CalibrationRequest& request;
  PipelineDeps& deps;
  const PreflightReport& preflight;
  const Predictions* release = nullptr;
  const ScoringInputs* scoring = nullptr;  // evaluation.scoring's, read once
  CalibrationOutcome& outcome;

  // Whether the caller asked to stop before the next run; records why.
  bool interrupted() {
    if (!outcome.interrupted && request.interrupt) {
      if (auto why = request.interrupt()) {
        outcome.interrupted = true;
        outcome.stopped = "interrupted: " + *why;
      }
    }
    return outcome.interrupted;
  }

  // One rerun (a seed override, or the release's own seeds); its data, or the failure recorded.
  std::optional<ToleranceSpec> rerun(std::optional<std::int64_t> seed, const std::string& label) {
    VerificationRequest run = request.base;
    run.seed_override = seed;
    run.verification_id = request.base.verification_id + "-" + label;
    report_progress(deps, "calibrate",
                    label + (seed ? " (REVERIFY_SEED_OVERRIDE=" + std::to_string(*seed) + ")"
                                  : " (the release's own seeds)"));
    RebuildAttempt attempt = execute_rebuild(rebuild_spec(run, preflight), deps, outputs_dir(run));
    outcome.log_tail = attempt.log_tail;
    nlohmann::json summary = {{"run", label}, {"durations", attempt.durations}};
    if (seed)
      summary["seed"] = *seed;
    std::optional<ToleranceSpec> data;
    if (attempt.error) {
      outcome.failure = std::move(*attempt.error);
    } else {
      summary["primary"] = attempt.outputs->primary_value;
      std::optional<Predictions> predictions;
      auto seed_run = seed_run_of(*attempt.outputs, predictions, scoring, release);
      if (!seed_run.ok()) {
        outcome.failure = verdict_for_error(VerdictClass::error_job,
                                            label + ": predictions: " + seed_run.error().message);
      } else if (run.mode == RebuildMode::steps) {
        data = same_seed_tolerance({*seed_run});
      } else {
        data = seed_run_tolerance(request.base.manifest.evaluation.primary.name, {*seed_run},
                                  release, deps.policy.flip_threshold);
        data->seed_overrides.push_back(*seed);
      }
    }
    outcome.runs.push_back(summary);
    std::error_code ec;
    fs::remove_all(run.work_root / run.verification_id, ec);
    return data;
  }
};

}  // namespace

Result<ReleaseShape> release_shape(const Predictions* release, const ScoringInputs* scoring) {
  ReleaseShape shape;
  if (!release || release->values.empty())
    return shape;
  shape.rows = release->values.size() / release->cols;
  shape.scores = release->values.size();
  shape.unit_interval = std::all_of(release->values.begin(), release->values.end(),
                                    [](double v) { return v >= 0 && v <= 1; });
  if (scoring) {
    auto scored = scoring::score(*scoring, *release);
    if (!scored.ok())
      return scored.error();
    shape.scored = std::move(scored).value();
    if (auto self = scoring::parity(*scoring, *release, *release); self.ok())
      shape.parity = parity_statistics(*self);
  }
  return shape;
}

Result<SeedRunTolerance> tolerance_from_outputs(const std::vector<JobOutputs>& runs,
                                                const std::optional<fs::path>& release_predictions,
                                                const ScoringInputs* scoring,
                                                double flip_threshold) {
  if (runs.empty())
    return make_error(ErrorCode::invalid_argument, "calibration: no seed runs");
  std::optional<Predictions> release;
  if (release_predictions) {
    auto read = read_predictions(*release_predictions);
    if (!read.ok())
      return make_error(read.error().code, "the release's predictions: " + read.error().message);
    release = std::move(read).value();
  }
  SeedRunTolerance made;
  std::vector<std::pair<std::string, std::size_t>> seen;  // fingerprint, run index
  if (release)
    seen.emplace_back(values_sha256(*release), runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const JobOutputs& out = runs[i];
    if (out.primary_name != runs[0].primary_name) {
      return make_error(ErrorCode::invalid_argument,
                        "seed run " + std::to_string(i + 1) + ": primary metric \"" +
                            out.primary_name + "\", expected \"" + runs[0].primary_name + "\"");
    }
    std::optional<Predictions> predictions;
    auto run = seed_run_of(out, predictions, scoring, release ? &*release : nullptr);
    if (!run.ok()) {
      return make_error(run.error().code,
                        "seed run " + std::to_string(i + 1) + ": " + run.error().message);
    }
    if (predictions) {
      const std::string print = values_sha256(*predictions);
      auto copy =
          std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == print; });
      if (copy != seen.end()) {
        made.left_out.emplace_back(
            i, copy->second == runs.size()
                   ? "its predictions are the release's own, value for value (a seed that "
                     "reproduces the release is no draw from the seed spread)"
                   : "its predictions equal seed run " + std::to_string(copy->second + 1) +
                         "'s, value for value");
        continue;
      }
      seen.emplace_back(print, i);
    }
    made.spec = appended(std::move(made.spec),
                         seed_run_tolerance(runs[0].primary_name, {*run},
                                            release ? &*release : nullptr, flip_threshold));
  }
  return made;
}

Result<ToleranceSpec> same_seed_from_outputs(const std::vector<JobOutputs>& runs,
                                             const ScoringInputs* scoring) {
  std::vector<std::optional<Predictions>> kept(runs.size());
  std::vector<SeedRun> seed_runs;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto run = seed_run_of(runs[i], kept[i], scoring, nullptr);
    if (!run.ok()) {
      return make_error(run.error().code,
                        "same-seed run " + std::to_string(i + 1) + ": " + run.error().message);
    }
    seed_runs.push_back(std::move(run).value());
  }
  return same_seed_tolerance(seed_runs);
}

namespace {

// What a calibration reads of the release before any run: its predictions, its scoring inputs
// and the shape its bands are judged with.
struct ReleaseFacts {
  std::optional<Predictions> predictions;
  std::optional<ScoringInputs> scoring;
  ReleaseShape shape;
};

// The release's facts, or the verdict that ends the calibration before any run (its inputs
// drifted, a remote input is refused, its predictions or scoring inputs cannot be read).
std::optional<Verdict> read_release_facts(const VerificationRequest& base,
                                          const PreflightReport& preflight, ReleaseFacts& facts) {
  const Manifest& manifest = base.manifest;
  if (preflight.drifted())
    return verdict_for_input_drift(preflight.checks);
  if (preflight.refusal)
    return *preflight.refusal;
  auto read_release = read_released_predictions(manifest, base.manifest_location, inputs_dir(base));
  if (!read_release.ok())
    return verdict_for_error(VerdictClass::error_manifest_invalid, read_release.error().message);
  facts.predictions = std::move(read_release).value();
  if (const auto& spec = manifest.evaluation.scoring; spec && facts.predictions) {
    auto inputs = read_scoring_inputs(*spec, {base.manifest_location, manifest.evaluation.set},
                                      facts.predictions->rows);
    if (!inputs.ok()) {
      return verdict_for_error(inputs.error().code == ErrorCode::input_drift
                                   ? VerdictClass::failed_input_drift
                                   : VerdictClass::error_manifest_invalid,
                               inputs.error().message);
    }
    facts.scoring = std::move(inputs).value();
  }
  auto shape = release_shape(facts.predictions ? &*facts.predictions : nullptr,
                             facts.scoring ? &*facts.scoring : nullptr);
  if (!shape.ok()) {
    return verdict_for_error(
        VerdictClass::error_manifest_invalid,
        "evaluation.scoring: the release's predictions: " + shape.error().message);
  }
  facts.shape = std::move(shape).value();
  return std::nullopt;
}

// Steps mode: request.runs same-seed reruns, whose step curves replace the calibration's.
void add_same_seed_runs(Session& session, ToleranceSpec& spec) {
  ToleranceSpec same_seed;
  CalibrationOutcome& outcome = session.outcome;
  for (int i = 0; i < session.request.runs && !outcome.failure && !session.interrupted(); ++i) {
    if (auto data = session.rerun(std::nullopt, "same-seed" + std::to_string(i + 1)))
      same_seed = appended(std::move(same_seed), *data);
  }
  outcome.added = same_seed.steps_same_seed_runs.size();
  if (outcome.added > 0)
    spec.steps_same_seed_runs = std::move(same_seed.steps_same_seed_runs);
}

// --until-power: how many more seed runs to add after `spec`'s, or nullopt with outcome.stopped
// saying why measuring more stops here.
std::optional<std::size_t> more_runs_for_power(Session& session, const ToleranceSpec& spec,
                                               const ReleaseShape& shape) {
  const CalibrationRequest& request = session.request;
  const Manifest& manifest = request.base.manifest;
  const VerdictPolicy& policy = session.deps.policy;
  CalibrationOutcome& outcome = session.outcome;
  const auto power = summarize_power(describe_bands(manifest, spec, policy, shape, request.detect));
  const std::size_t have = seed_run_count(spec, manifest.evaluation.primary.name);
  if (power.underpowered.empty()) {
    outcome.stopped =
        "every declared tolerance.detect is met with " + std::to_string(have) + " seed runs";
    return std::nullopt;
  }
  // No number of runs would with the spread as measured; that spread is itself an estimate.
  // Unless a spread at the low end of what `have` runs allow (95%) would be met, measuring
  // more cannot help: stop here rather than spend runs up to --max-runs.
  if (!power.runs_needed && have >= 2) {
    const double low_end = spread_lower_limit(have);
    const auto hopeful = summarize_power(
        describe_bands(manifest, with_spread_scaled(spec, low_end), policy, shape, request.detect));
    if (!hopeful.underpowered.empty() && !hopeful.runs_needed) {
      outcome.stopped = "no number of seed runs would meet tolerance.detect for " +
                        hopeful.underpowered[0] + ", even with a spread " +
                        number_text(100 * (1 - low_end)) +
                        "% below the one measured (the low end of what " + std::to_string(have) +
                        " seed runs allow, 95%): stopped at " + std::to_string(have) + " seed runs";
      return std::nullopt;
    }
  }
  if (have >= static_cast<std::size_t>(request.max_runs)) {
    outcome.stopped =
        "stopped at --max-runs " + std::to_string(request.max_runs) + "; " +
        (power.runs_needed
             ? std::to_string(*power.runs_needed) + " seed runs in all would meet tolerance.detect"
             : "with the spread as measured no number of seed runs would meet "
               "tolerance.detect for " +
                   power.underpowered[0]);
    return std::nullopt;
  }
  // The projection uses the spread measured so far; when it says no number of runs would do but a
  // smaller spread, still likely from so few runs, would: add half as many again (at least 5) and
  // look again, within --max-runs.
  const std::size_t target =
      std::min(power.runs_needed ? *power.runs_needed : have + std::max<std::size_t>(have / 2, 5),
               static_cast<std::size_t>(request.max_runs));
  const std::size_t batch = std::max<std::size_t>(target > have ? target - have : 1, 1);
  report_progress(
      session.deps, "calibrate",
      std::to_string(power.underpowered.size()) + " band(s) underpowered with " +
          std::to_string(have) + " seed runs: adding " + std::to_string(batch) +
          (power.runs_needed ? std::string()
                             : " (no number would at the spread measured so far, but a spread "
                               "that few runs cannot rule out would: measuring it again)"));
  return batch;
}

// Full or subsample mode: request.runs seed-override reruns on seeds not used yet, and with
// --until-power more until the declared tolerance.detect is met or more cannot help.
void add_seed_runs(Session& session, ToleranceSpec& spec, const ReleaseShape& shape) {
  const CalibrationRequest& request = session.request;
  const Manifest& manifest = request.base.manifest;
  CalibrationOutcome& outcome = session.outcome;
  const auto taken = taken_seeds(manifest, spec);
  std::int64_t seed =
      request.first_seed.value_or(first_seed(spec, manifest.evaluation.primary.name));
  std::size_t batch = static_cast<std::size_t>(std::max(request.runs, 0));
  for (;;) {
    for (std::size_t i = 0; i < batch && !outcome.failure && !session.interrupted(); ++i, ++seed) {
      seed = free_seed(seed, taken);
      if (auto data = session.rerun(seed, "seed" + std::to_string(seed))) {
        spec = appended(std::move(spec), *data);
        ++outcome.added;
        if (request.on_run)
          request.on_run(spec);
      }
    }
    if (outcome.failure || outcome.interrupted || !request.until_power)
      return;
    const auto more = more_runs_for_power(session, spec, shape);
    if (!more)
      return;
    batch = *more;
  }
}

}  // namespace

CalibrationOutcome run_calibration(const CalibrationRequest& request, PipelineDeps& deps) {
  CalibrationOutcome outcome;
  const VerificationRequest& base = request.base;
  const Manifest& manifest = base.manifest;
  report_progress(deps, "preflight", manifest.id());
  // Remote inputs are fetched into the base's scratch, shared by its runs and removed at the end.
  const ScratchRemover scratch{base.work_root / base.verification_id};
  PreflightReport preflight =
      run_preflight(mirrored_manifest(base), base.manifest_location, inputs_dir(base));
  ReleaseFacts facts;
  if (auto failure = read_release_facts(base, preflight, facts)) {
    outcome.failure = std::move(failure);
    return outcome;
  }
  Session session{request,
                  deps,
                  preflight,
                  facts.predictions ? &*facts.predictions : nullptr,
                  facts.scoring ? &*facts.scoring : nullptr,
                  outcome};
  ToleranceSpec spec = merged_tolerance(manifest, base.calibration ? &*base.calibration : nullptr);
  if (base.mode == RebuildMode::steps)
    add_same_seed_runs(session, spec);
  else
    add_seed_runs(session, spec, facts.shape);
  // runs == 0 asks for the calibration as it stands, judged again (its bands, their power and
  // leave-one-out by the rules of this version), without a rerun.
  const bool as_it_stands = request.runs == 0 && !request.until_power;
  if (outcome.added == 0 &&
      !(as_it_stands && !outcome.failure && seed_run_count(spec, manifest.evaluation.primary.name)))
    return outcome;
  outcome.bands = describe_bands(manifest, spec, deps.policy, facts.shape, request.detect);
  outcome.power = summarize_power(outcome.bands);
  if (base.mode != RebuildMode::steps)  // seed-only reruns, of the full or subsample model
    outcome.leave_one_out = leave_one_out(manifest, spec, deps.policy, facts.shape, request.detect);
  outcome.spec = std::move(spec);
  return outcome;
}

}  // namespace reverify
