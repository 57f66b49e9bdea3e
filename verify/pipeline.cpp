#include "verify/pipeline.hpp"

#include <system_error>
#include <variant>

#include "core/eval_columns.hpp"
#include "core/hashing.hpp"
#include "core/predictions.hpp"
#include "core/uri.hpp"
#include "policies/subsample_draw.hpp"
#include "policies/verdict.hpp"
#include "verify/pipeline_rebuild.hpp"
#include "verify/preflight.hpp"

namespace reverify {

namespace fs = std::filesystem;

std::optional<fs::path> released_weights(const VerificationRequest& request) {
  return released_weights(request.manifest, request.manifest_location, inputs_dir(request));
}

namespace {

// Names the tensors whose bytes differ from the released weights (bitwise evidence).
TensorDifference differing_tensors(const VerificationRequest& request, const TensorHash& rebuilt) {
  TensorDifference difference;
  auto original_path = released_weights(request);
  if (!original_path) {
    difference.unavailable = "released weights not readable";
    return difference;
  }
  auto original = hash_safetensors(*original_path);
  if (!original.ok()) {
    difference.unavailable = original.error().message;
    return difference;
  }
  std::map<std::string, std::string> before, after;
  for (const auto& t : original->tensors)
    before[t.name] = t.dtype + "|" + t.sha256;
  for (const auto& t : rebuilt.tensors)
    after[t.name] = t.dtype + "|" + t.sha256;
  difference.tensors = before.size();
  for (const auto& [name, digest] : before) {
    auto it = after.find(name);
    if (it == after.end() || it->second != digest)
      difference.differing.push_back(name);
  }
  for (const auto& [name, digest] : after) {
    if (!before.count(name)) {
      difference.differing.push_back(name);
      ++difference.tensors;
    }
  }
  return difference;
}

// evaluation.scoring: the release's and the rebuild's predictions scored by reverify itself, or
// the verdict that says why they could not be (a frozen input that moved is input drift; a
// release that cannot be scored, a manifest fault; a rebuild that cannot, the job's).
std::variant<OwnScores, Verdict> score_both(const VerificationRequest& request,
                                            const Predictions& release,
                                            const Predictions& rebuilt) {
  const auto& ev = request.manifest.evaluation;
  auto inputs = read_scoring_inputs(*ev.scoring, {request.manifest_location, ev.set}, release.rows);
  if (!inputs.ok()) {
    return verdict_for_error(inputs.error().code == ErrorCode::input_drift
                                 ? VerdictClass::failed_input_drift
                                 : VerdictClass::error_manifest_invalid,
                             inputs.error().message);
  }
  auto before = scoring::score(*inputs, release);
  if (!before.ok()) {
    return verdict_for_error(
        VerdictClass::error_manifest_invalid,
        "evaluation.scoring: the release's predictions: " + before.error().message);
  }
  auto after = scoring::score(*inputs, rebuilt);
  if (!after.ok()) {
    return verdict_for_error(
        VerdictClass::error_job,
        "evaluation.scoring: the rebuilt predictions: " + after.error().message);
  }
  OwnScores own{std::move(before).value(), std::move(after).value(), std::nullopt, std::nullopt};
  if (auto parity = scoring::parity(*inputs, release, rebuilt); parity.ok())
    own.parity = std::move(parity).value();
  else
    own.parity_error =
        "reverify's parity of the rebuild against the release failed: " + parity.error().message;
  return own;
}

}  // namespace

Verdict judge_rebuild(const VerificationRequest& request, RebuildObservation observation,
                      const Predictions* original, const VerdictPolicy& policy) {
  VerdictInputs inputs{request.manifest, std::move(observation), original,
                       request.calibration ? &*request.calibration : nullptr, request.detect};
  std::optional<OwnScores> own;
  const Predictions* rebuilt = inputs.rebuild.predictions;
  if (request.manifest.evaluation.scoring && original && rebuilt) {
    auto scored = score_both(request, *original, *rebuilt);
    if (auto* failure = std::get_if<Verdict>(&scored))
      return std::move(*failure);
    own = std::move(std::get<OwnScores>(scored));
    inputs.scores = &*own;
  }
  return decide_verdict(inputs, policy);
}

namespace {

bool same_shape(const Predictions& a, const Predictions& b) {
  return a.rows == b.rows && a.cols == b.cols && a.two_d == b.two_d;
}

std::string shape_text(const Predictions& p) {
  return std::to_string(p.rows) + " rows" +
         (p.two_d ? " of " + std::to_string(p.cols) + " class scores" : std::string(" (1-D)"));
}

// Hashes and reads the rebuilt outputs ourselves, then asks the verdict engine. What was
// produced (hashes, differing tensors) goes into `produced`.
Verdict judge_outputs(const VerificationRequest& request, const JobOutputs& out, PipelineDeps& deps,
                      nlohmann::json& produced) {
  RebuildObservation observation;
  observation.steps_mode = request.mode == RebuildMode::steps;
  observation.seed_override = request.seed_override;
  if (observation.steps_mode)
    observation.max_steps = request.max_steps;
  observation.primary_name = out.primary_name;
  observation.primary = out.primary_value;
  observation.segments = out.segments;
  if (!out.steps_values.empty())
    observation.steps = out.steps_values;
  // A subsample rebuild trained on the release's records, by the rule, or its metrics are not
  // the reference's model's (policies/subsample_draw.hpp).
  std::optional<CheckResult> draw;
  if (request.mode == RebuildMode::subsample && request.manifest.subsample) {
    std::optional<std::string> keys;
    if (out.subsample_keys) {
      if (auto text = read_uri(out.subsample_keys->string()); text.ok())
        keys = std::move(text).value();
    }
    draw = subsample_draw_check(*request.manifest.subsample, out.subsample, keys);
    if (draw->outcome == CheckOutcome::failed)
      return verdict_for_subsample_draw(std::move(*draw));
  }

  std::optional<Predictions> rebuilt;
  if (out.predictions) {
    auto read = read_predictions(*out.predictions);
    if (!read.ok()) {
      return verdict_for_error(VerdictClass::error_job,
                               "rebuilt predictions: " + read.error().message);
    }
    rebuilt = std::move(read).value();
    observation.predictions = &*rebuilt;
    auto digest = sha256_file(*out.predictions);
    if (digest.ok())
      produced["predictions_sha256"] = *digest;
  }
  if (out.weights) {
    auto tensors = hash_safetensors(*out.weights);
    if (!tensors.ok()) {
      return verdict_for_error(VerdictClass::error_job,
                               "rebuilt weights: " + tensors.error().message);
    }
    observation.tensor_sha256 = tensors->root;
    produced["tensor_sha256"] = tensors->root;
    const auto& weights = request.manifest.weights;
    if (weights && weights->tensor_sha256 && *weights->tensor_sha256 != tensors->root) {
      observation.tensors = differing_tensors(request, *tensors);
      const auto& difference = *observation.tensors;
      produced["tensors_differing"] = difference.unavailable.empty()
                                          ? nlohmann::json(difference.differing)
                                          : nlohmann::json(difference.unavailable);
    }
  }
  // Read whole or not at all (preflight refused a release it could not read; a resumed
  // verification reads it here for the first time).
  auto original =
      read_released_predictions(request.manifest, request.manifest_location, inputs_dir(request));
  if (!original.ok())
    return verdict_for_error(VerdictClass::error_manifest_invalid, original.error().message);
  if (*original && rebuilt && !same_shape(**original, *rebuilt)) {
    return verdict_for_error(
        VerdictClass::error_job,
        "rebuilt predictions: " + shape_text(*rebuilt) + " against the release's " +
            shape_text(**original) +
            ": the contract asks for one row per eval record, in eval-set order, as the release "
            "wrote them, so no check on predictions could be computed");
  }
  Verdict verdict = judge_rebuild(request, std::move(observation),
                                  *original ? &**original : nullptr, deps.policy);
  if (draw)
    verdict.checks.insert(verdict.checks.begin(), std::move(*draw));
  return verdict;
}

VerificationOutcome compare(const VerificationRequest& request, RebuildAttempt attempt,
                            PipelineDeps& deps, nlohmann::json evidence) {
  VerificationOutcome outcome;
  outcome.job = attempt.job;
  outcome.log_tail = std::move(attempt.log_tail);
  evidence["durations"].update(attempt.durations);
  if (!attempt.platform_fault.is_null())
    evidence["platform_fault"] = std::move(attempt.platform_fault);
  if (attempt.error) {
    outcome.verdict = std::move(*attempt.error);
  } else {
    report_progress(deps, "compare", request.manifest.id());
    nlohmann::json produced = nlohmann::json::object();
    StageTimer timer(evidence["durations"], "compare");
    outcome.verdict = judge_outputs(request, *attempt.outputs, deps, produced);
    evidence["outputs"] = std::move(produced);
  }
  if (attempt.job && deps.runner.job_code_trusted()) {
    outcome.verdict.job_code_trusted = true;
    outcome.verdict.explanation +=
        " The job's code was trusted (runner.trust_job_code: true): it ran unisolated, where it "
        "could read the verifier's secrets and store, so it could have forged what it reported.";
  }
  outcome.evidence = std::move(evidence);
  return outcome;
}

// Input checks come first in every verdict, so a report shows what was verified before the job.
void prepend_inputs(Verdict& verdict, const std::vector<CheckResult>& inputs) {
  verdict.checks.insert(verdict.checks.begin(), inputs.begin(), inputs.end());
}

void remove_scratch(const VerificationRequest& request) {
  std::error_code ec;
  fs::remove_all(request.work_root / request.verification_id, ec);
}

}  // namespace

VerificationOutcome run_verification(const VerificationRequest& request, PipelineDeps& deps) {
  nlohmann::json evidence = {{"durations", nlohmann::json::object()}};
  if (request.seed_override)
    evidence["seed_override"] = *request.seed_override;  // a fresh-seed rerun, judged
  report_progress(deps, "preflight", request.manifest.id());
  PreflightReport preflight = [&] {
    StageTimer timer(evidence["durations"], "preflight");
    return run_preflight(mirrored_manifest(request), request.manifest_location,
                         inputs_dir(request));
  }();
  evidence["inputs"] = preflight.evidence;
  if (preflight.drifted() || preflight.refusal) {
    VerificationOutcome outcome;
    if (preflight.drifted()) {
      outcome.verdict = verdict_for_input_drift(preflight.checks);
      outcome.input_drift = preflight.drift();
    } else {
      outcome.verdict = std::move(*preflight.refusal);
      prepend_inputs(outcome.verdict, preflight.checks);
    }
    outcome.evidence = std::move(evidence);
    remove_scratch(request);
    return outcome;
  }
  RebuildAttempt attempt =
      execute_rebuild(rebuild_spec(request, preflight), deps, outputs_dir(request));
  VerificationOutcome outcome = compare(request, std::move(attempt), deps, std::move(evidence));
  prepend_inputs(outcome.verdict, preflight.checks);
  remove_scratch(request);
  return outcome;
}

VerificationOutcome resume_verification(const VerificationRequest& request, const JobHandle& job,
                                        PipelineDeps& deps) {
  nlohmann::json evidence = {
      {"durations", nlohmann::json::object()},
      {"resumed", "reattached to " + std::string(to_string(job.runner_kind)) + " job " + job.ref +
                      " after a restart; preflight ran before it"}};
  RebuildAttempt attempt = finish_rebuild(job, deps, outputs_dir(request));
  VerificationOutcome outcome = compare(request, std::move(attempt), deps, std::move(evidence));
  remove_scratch(request);
  return outcome;
}

}  // namespace reverify
