#pragma once
// verify/: one verification end to end (preflight, rebuild through a runner, verdict, recorded
// with its pages and signed summary: verification_service.hpp), calibration and the cycle plan
// (schedule.hpp): what `reverify run/calibrate/plan` and reverifyd share. Includes every layer
// below it (core/ to store/); never api/ or daemon/.
//
// One verification end to end (docs/design.md, "Data flow"): preflight -> provision -> run ->
// collect
// -> hash the outputs ourselves -> verdict. Shared by reverifyd (through verification_service)
// and `reverify run` / `reverify calibrate`, so both reach the same verdict for the same inputs.
//
// Preflight (no runner is provisioned before it passes):
// - the dataset snapshot (kind "files") is re-hashed into its file manifest; a root that differs
//   from data.snapshot.sha256 is failed:input-drift. The changed files are NAMED by comparing with
//   the file manifest recorded at capture time, `snapshot.sha256` next to manifest.json (written
//   by `reverify capture`); that file is trusted only when its own root equals the recorded hash.
// - the eval set (a file: sha256; a folder: file-manifest root) against evaluation.set.sha256;
// - the lockfile against environment.lockfile.sha256 where readable (the code repo is a local
//   git repository: `git show <commit>:<path>`);
// - runner.prepare(): image digest resolvable, code checkout possible (error:provision).
// Runner errors map onto verdict classes: prepare/start -> error:provision, a failing job, a
// timeout or an invalid result.json -> error:job, runner_lost -> error:runner-lost, infra (the
// space the job needs short or read-only, the host's OOM killer: JobExit::platform_fault) ->
// error:infra.
//
// Everything here blocks (hashing, waiting on the job): call it from a worker thread.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/code_mirrors.hpp"
#include "core/manifest.hpp"
#include "core/predictions.hpp"
#include "policies/source_condition.hpp"
#include "policies/verdict.hpp"
#include "policies/verdict_model.hpp"
#include "runners/runner.hpp"

namespace reverify {

// The recorded file manifest of the dataset snapshot, beside manifest.json.
inline constexpr const char* kSnapshotFileManifestName = "snapshot.sha256";

struct VerificationRequest {
  std::string verification_id;  // also the rebuild id: [A-Za-z0-9._-]+, unique
  Manifest manifest;
  std::string manifest_location;  // path or URL the manifest was read from (relative URIs)
  RebuildMode mode = RebuildMode::full;
  std::int64_t max_steps = 0;                 // steps mode only
  std::optional<ToleranceSpec> calibration;   // a stored calibration; adds to manifest.tolerance
  std::optional<std::int64_t> seed_override;  // calibration reruns; `reverify run --seed-override`
  // tolerance.detect overrides from the config (models.<name>.detect), over the manifest's.
  std::map<std::string, double> detect;
  std::chrono::seconds timeout{3600};
  bool network = false;             // the job may use the network (RebuildSpec::network)
  std::filesystem::path work_root;  // scratch; this verification uses <work_root>/<id>/
  // Where to fetch code.repo from here (core/code_mirrors.hpp: URL prefix -> local folder or
  // another URL, longest prefix wins); used by the checkout and by the preflight's lockfile check.
  CodeMirrors code_mirrors;
};

// The progress stage that says where a job stands on a runner that queues jobs (slurm), each
// time that changes: "slurm job 12 pending in partition gpu (Resources)".
inline constexpr std::string_view kQueueStage = "queue";

struct PipelineDeps {
  Runner& runner;
  const VerdictPolicy& policy;
  // Stage names: "preflight", "provision", "run", "queue" (kQueueStage, only on runners that
  // queue jobs), "collect", "compare". Optional.
  std::function<void(std::string_view stage, std::string_view detail)> progress;
  // Called once the job started, before waiting on it: the daemon persists the runner reference
  // so that a restart can reattach. Optional.
  std::function<void(const JobHandle&)> on_started;
  // The job's log as it streams. Optional.
  LogSink logs;
  // Where the job stands, each time that changes (Runner::wait_reporting), before the queue
  // stage reports it: the service records it with the verification. Optional.
  StandingSink standing = {};
};

struct VerificationOutcome {
  Verdict verdict;
  std::string log_tail;
  std::optional<JobHandle> job;  // set once a job was started
  // Inputs checked and their hashes, moved inputs (file names), rebuilt output hashes, durations
  // per stage in seconds ("durations": {"preflight": 0.4, ...}).
  nlohmann::json evidence = nlohmann::json::object();
  // Why preflight failed it (failed:input-drift): inputs missing from their resolved location, or
  // changed. Zero when preflight passed (or a resumed job skipped it).
  InputDrift input_drift;
};

// The released weights file of `request` (verify/preflight.hpp released_weights, in its scratch).
std::optional<std::filesystem::path> released_weights(const VerificationRequest& request);

// The verdict on what a rebuild produced (`observation`; its predictions not owned) against the
// release's predictions `original` (null: not readable), with the request's calibration and
// detect, reverify's own scores where the manifest has evaluation.scoring, and `policy`'s split
// of the false-page rate. Every verification decides here, and so does `reverify compare
// --tolerances MANIFEST`: an owner's bounds are the daemon's. The only files it reads are a
// scoring spec's labels and segment keys.
Verdict judge_rebuild(const VerificationRequest& request, RebuildObservation observation,
                      const Predictions* original, const VerdictPolicy& policy);

// Blocking. Never throws for expected failures: they are verdicts (error:* / failed:*).
VerificationOutcome run_verification(const VerificationRequest& request, PipelineDeps& deps);

// After a daemon restart: continue a job found by Runner::find_running (wait -> collect ->
// verdict), skipping preflight and start.
VerificationOutcome resume_verification(const VerificationRequest& request, const JobHandle& job,
                                        PipelineDeps& deps);

}  // namespace reverify
