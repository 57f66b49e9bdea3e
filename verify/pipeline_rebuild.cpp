#include "verify/pipeline_rebuild.hpp"

#include <system_error>

#include "core/code_mirrors.hpp"
#include "policies/verdict.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

// A runner error at a stage -> its verdict class. Before the job runs, anything but a lost
// runner is the environment's fault (provision); afterwards it is the job's.
VerdictClass class_for(const Error& error, bool job_started) {
  switch (error.code) {
    case ErrorCode::runner_lost:
      return VerdictClass::error_runner_lost;
    case ErrorCode::provision:
      return VerdictClass::error_provision;
    case ErrorCode::job:
    case ErrorCode::timeout:
      return VerdictClass::error_job;
    case ErrorCode::infra:
      return VerdictClass::error_infra;
    default:
      return job_started ? VerdictClass::error_job : VerdictClass::error_provision;
  }
}

}  // namespace

Verdict collect_failure_verdict(const Error& error) {
  if (error.code == ErrorCode::job) {
    Verdict verdict = verdict_for_error(
        VerdictClass::error_job,
        "the job exited 0 but its outputs break the rebuild contract: " + error.message);
    verdict.job_output_fault = error.message;
    return verdict;
  }
  // Reading what the job left failed on the verifier's side (its disk, its file system).
  const VerdictClass cls =
      error.code == ErrorCode::io ? VerdictClass::error_infra : class_for(error, true);
  return verdict_for_error(cls, "collecting outputs failed: " + error.message);
}

Verdict job_failure_verdict(const JobExit& exit) {
  // The runner contract's message (status, signal or timeout, and the last log lines).
  std::string text = job_exit_status(exit).error().message;
  if (exit.platform_fault)
    return verdict_for_error(VerdictClass::error_infra, std::move(text));
  const bool by_itself = !exit.timed_out && exit.exit_code > 0 && exit.exit_code < 128;
  if (exit.limit_hit) {
    text =
        "the recorded job failed to rerun (it ran into a bound the runner sets for every job): " +
        text;
  } else if (by_itself) {
    text =
        "the recorded job failed to rerun (it exited by itself, not killed for memory, time "
        "or by the runner): " +
        text;
  }
  Verdict verdict = verdict_for_error(VerdictClass::error_job, std::move(text));
  if (by_itself || exit.limit_hit)
    verdict.job_exit_status = exit.exit_code;
  return verdict;
}

fs::path outputs_dir(const VerificationRequest& request) {
  return request.work_root / request.verification_id / "outputs";
}

fs::path inputs_dir(const VerificationRequest& request) {
  return request.work_root / request.verification_id / "inputs";
}

Manifest mirrored_manifest(const VerificationRequest& request) {
  Manifest manifest = request.manifest;
  if (manifest.code.repo) {
    if (auto mirror = mirrored_url(*manifest.code.repo, request.code_mirrors))
      manifest.code.repo = *mirror;
  }
  return manifest;
}

RebuildSpec rebuild_spec(const VerificationRequest& request, const PreflightReport& preflight) {
  RebuildSpec spec;
  spec.rebuild_id = request.verification_id;
  spec.manifest = mirrored_manifest(request);
  spec.manifest_location = request.manifest_location;
  spec.mode = request.mode;
  spec.max_steps = request.max_steps;
  spec.seed_override = request.seed_override;
  spec.data_path = preflight.data_path;
  spec.eval_path = preflight.eval_path;
  // Preflight fetches the inputs at http(s) URIs into inputs_dir, and puts nothing else there.
  const auto fetched = [&](const std::optional<fs::path>& path) {
    const auto relative = path ? path->lexically_relative(inputs_dir(request)) : fs::path();
    return !relative.empty() && *relative.begin() != "..";
  };
  spec.data_fetched = fetched(spec.data_path);
  spec.eval_fetched = fetched(spec.eval_path);
  spec.work_dir = request.work_root / request.verification_id / "job";
  spec.timeout = request.timeout;
  spec.network = request.network;
  return spec;
}

RebuildAttempt execute_rebuild(const RebuildSpec& spec, PipelineDeps& deps,
                               const fs::path& collect_dir) {
  RebuildAttempt attempt;
  report_progress(deps, "provision", std::string(to_string(deps.runner.kind())) + " runner");
  {
    StageTimer timer(attempt.durations, "provision");
    Status prepared = deps.runner.prepare(spec);
    if (!prepared.ok()) {
      attempt.error = verdict_for_error(class_for(prepared.error(), false),
                                        "provision failed: " + prepared.error().message);
      return attempt;
    }
  }
  Result<JobHandle> job = deps.runner.start(spec);
  if (!job.ok()) {
    attempt.error = verdict_for_error(class_for(job.error(), false),
                                      "the job could not start: " + job.error().message);
    return attempt;
  }
  attempt.job = *job;
  if (deps.on_started)
    deps.on_started(*job);
  return finish_rebuild(*job, deps, collect_dir, std::move(attempt));
}

RebuildAttempt finish_rebuild(const JobHandle& job, PipelineDeps& deps, const fs::path& collect_dir,
                              RebuildAttempt attempt) {
  attempt.job = job;
  report_progress(deps, "run", "job " + job.ref);
  const StandingSink standing = [&](const JobStanding& now) {
    if (deps.standing)
      deps.standing(now);
    report_progress(deps, kQueueStage,
                    std::string(to_string(job.runner_kind)) + " job " + job.ref + " " + now.text());
  };
  Result<JobExit> exit = [&] {
    StageTimer timer(attempt.durations, "run");
    return deps.runner.wait_reporting(job, deps.logs ? deps.logs : LogSink([](std::string_view) {}),
                                      standing);
  }();
  if (!exit.ok()) {
    attempt.error = verdict_for_error(class_for(exit.error(), true),
                                      "waiting on the job failed: " + exit.error().message);
    deps.runner.cleanup(job);
    return attempt;
  }
  attempt.log_tail = exit->log_tail;
  if (exit->job_seconds)
    attempt.durations["job"] = *exit->job_seconds;
  if (exit->platform_fault) {
    attempt.platform_fault = exit->platform_fault->evidence;
    attempt.platform_fault["reason"] = exit->platform_fault->reason;
  }
  if (exit->timed_out || exit->exit_code != 0) {
    attempt.error = job_failure_verdict(*exit);
    deps.runner.cleanup(job);
    return attempt;
  }
  report_progress(deps, "collect", collect_dir.string());
  {
    StageTimer timer(attempt.durations, "collect");
    std::error_code ec;
    fs::remove_all(collect_dir, ec);
    fs::create_directories(collect_dir, ec);
    Result<JobOutputs> outputs = deps.runner.collect(job, collect_dir);
    if (outputs.ok()) {
      attempt.outputs = std::move(outputs).value();
      attempt.platform_fault = nullptr;  // the job succeeded whatever the platform did
    } else if (exit->platform_fault) {
      // A job that exited 0 on a full disk may have left its outputs cut short.
      attempt.error = verdict_for_error(
          VerdictClass::error_infra,
          exit->platform_fault->reason + "; collecting outputs failed: " + outputs.error().message);
    } else {
      attempt.error = collect_failure_verdict(outputs.error());
    }
  }
  deps.runner.cleanup(job);
  return attempt;
}

}  // namespace reverify
