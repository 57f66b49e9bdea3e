#pragma once
// The runner half of a verification (provision -> start -> wait -> collect -> cleanup), shared by
// run_verification and calibration. Runner errors become error:* verdicts here, in one place.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/pipeline.hpp"
#include "verify/preflight.hpp"

namespace reverify {

inline void report_progress(PipelineDeps& deps, std::string_view stage, std::string_view detail) {
  if (deps.progress)
    deps.progress(stage, detail);
}

// Records how long a stage took, in seconds, into durations[stage] when it goes out of scope.
class StageTimer {
 public:
  StageTimer(nlohmann::json& durations, const char* stage) : durations_(durations), stage_(stage) {}
  ~StageTimer() {
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    durations_[stage_] = elapsed.count();
  }
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  nlohmann::json& durations_;
  const char* stage_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

struct RebuildAttempt {
  std::optional<JobHandle> job;
  std::string log_tail;
  std::optional<JobOutputs> outputs;  // the job succeeded and its outputs were collected
  std::optional<Verdict> error;  // error:provision / error:job / error:runner-lost / error:infra
  nlohmann::json durations = nlohmann::json::object();  // stage -> seconds
  // The runner's evidence behind an error:infra verdict (JobExit::platform_fault), for the
  // verdict's evidence as "platform_fault"; null otherwise.
  nlohmann::json platform_fault;
};

// The verdict of a job that did not exit 0 (REQUIRES: timed out or non-zero), worded by
// job_exit_status (runners/runner.hpp: status, signal or timeout, then the job's last log lines):
// - error:infra when the runner saw the platform fail under it (a full or read-only disk, the
//   host's OOM killer), whatever its status;
// - error:job otherwise. A status of 1-127 is the job exiting by itself, the recorded job failing
//   to rerun, and a job that hit its own pids or memory bound did it too: Verdict::job_exit_status
//   is set, and pages do not blame reverify.
Verdict job_failure_verdict(const JobExit& exit);

// The verdict of a job that exited 0 but whose outputs could not be collected:
// - error:job, the job's fault (Verdict::job_output_fault), when what it wrote breaks the
//   contract (runners/job_outputs.hpp: no or oversized or invalid result.json, a name escaping
//   $REVERIFY_OUT, a link or a special file, an output the verifier may not read);
// - error:infra when copying failed on the verifier's side (io: its disk full or read-only);
// - the runner's class otherwise (a lost runner).
Verdict collect_failure_verdict(const Error& error);

// The manifest with code.repo rewritten by request.code_mirrors (core/code_mirrors.hpp), when a
// mirror prefix matches.
Manifest mirrored_manifest(const VerificationRequest& request);

// The runner's view of a request; the job's data and eval paths come from preflight.
RebuildSpec rebuild_spec(const VerificationRequest& request, const PreflightReport& preflight);

// Where a verification keeps its collected outputs: <work_root>/<id>/outputs.
std::filesystem::path outputs_dir(const VerificationRequest& request);

// prepare -> start (deps.on_started) -> wait -> collect into collect_dir -> cleanup.
RebuildAttempt execute_rebuild(const RebuildSpec& spec, PipelineDeps& deps,
                               const std::filesystem::path& collect_dir);

// wait -> collect -> cleanup for a job that is already running (reattach after a restart).
RebuildAttempt finish_rebuild(const JobHandle& job, PipelineDeps& deps,
                              const std::filesystem::path& collect_dir,
                              RebuildAttempt attempt = {});

}  // namespace reverify
