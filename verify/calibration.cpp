#include "verify/calibration.hpp"

#include <system_error>

#include "core/predictions.hpp"
#include "policies/verdict.hpp"
#include "verify/pipeline_rebuild.hpp"
#include "verify/preflight.hpp"

namespace reverify {

Result<ToleranceSpec> tolerance_from_outputs(const std::vector<JobOutputs>& runs,
                                             double flip_threshold) {
  if (runs.empty())
    return make_error(ErrorCode::invalid_argument, "calibration: no seed runs");
  // Predictions are read first and kept alive: SeedRun points at them.
  std::vector<std::optional<Predictions>> predictions(runs.size());
  std::vector<SeedRun> seed_runs(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const JobOutputs& out = runs[i];
    if (out.primary_name != runs[0].primary_name) {
      return make_error(ErrorCode::invalid_argument,
                        "seed run " + std::to_string(i + 1) + ": primary metric \"" +
                            out.primary_name + "\", expected \"" + runs[0].primary_name + "\"");
    }
    if (out.predictions) {
      auto read = read_predictions(*out.predictions);
      if (!read.ok()) {
        return make_error(read.error().code,
                          "seed run " + std::to_string(i + 1) + ": " + read.error().message);
      }
      predictions[i] = std::move(read).value();
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    seed_runs[i].primary = runs[i].primary_value;
    seed_runs[i].segments = runs[i].segments;
    if (!runs[i].steps_values.empty())
      seed_runs[i].steps = runs[i].steps_values;
    seed_runs[i].predictions = predictions[i] ? &*predictions[i] : nullptr;
  }
  return calibrate_from_runs(runs[0].primary_name, seed_runs, flip_threshold);
}

CalibrationOutcome run_calibration(const CalibrationRequest& request, PipelineDeps& deps) {
  CalibrationOutcome outcome;
  const VerificationRequest& base = request.base;
  report_progress(deps, "preflight", base.manifest.id());
  PreflightReport preflight = run_preflight(mirrored_manifest(base), base.manifest_location);
  if (preflight.drifted()) {
    outcome.failure = verdict_for_input_drift(preflight.checks);
    return outcome;
  }
  std::vector<JobOutputs> outputs;
  for (int i = 0; i < request.runs; ++i) {
    VerificationRequest run = base;
    run.seed_override = request.first_seed + i;
    run.verification_id = base.verification_id + "-seed" + std::to_string(*run.seed_override);
    report_progress(deps, "calibrate",
                    "seed run " + std::to_string(i + 1) + "/" + std::to_string(request.runs) +
                        " (REVERIFY_SEED_OVERRIDE=" + std::to_string(*run.seed_override) + ")");
    RebuildAttempt attempt = execute_rebuild(rebuild_spec(run, preflight), deps, outputs_dir(run));
    outcome.log_tail = attempt.log_tail;
    nlohmann::json summary = {{"seed", *run.seed_override}, {"durations", attempt.durations}};
    if (attempt.error) {
      outcome.failure = std::move(*attempt.error);
      outcome.runs.push_back(summary);
      return outcome;
    }
    summary["primary"] = attempt.outputs->primary_value;
    outcome.runs.push_back(summary);
    outputs.push_back(std::move(*attempt.outputs));
  }
  auto spec = tolerance_from_outputs(outputs, deps.policy.flip_threshold);
  std::error_code ec;
  for (int i = 0; i < request.runs; ++i) {
    std::filesystem::remove_all(
        base.work_root / (base.verification_id + "-seed" + std::to_string(request.first_seed + i)),
        ec);
  }
  if (!spec.ok()) {
    outcome.failure = verdict_for_error(VerdictClass::error_job, spec.error().message);
    return outcome;
  }
  outcome.spec = std::move(spec).value();
  return outcome;
}

}  // namespace reverify
