#pragma once
// Executes ONE verification end to end, for the daemon's scheduler and for `reverify run` alike:
//   queued row -> load the manifest -> running (work dir recorded) -> pipeline (runner reference
//   recorded the moment the job starts) -> the verdict's signed summary (passed, failed:*; when
//   attestation is configured) -> ONE transaction: verdict + its summary + its pages in the
//   outbox -> kick the dispatcher.
// and reconciles a verification that was running when its process died, the daemon or a
// `reverify run` (recover(); verify/state_dir.hpp says who calls it when): reattach to the job
// found by its rebuild id and finish it, or record error:runner-lost.
// Each verification ends with exactly one verdict: the store refuses a second one.
// Every verdict records its pages, or says in its evidence why it has none ("no_page": no route,
// no sender for that action). A verification that cannot start (the store failed while it was
// prepared) gets an error:provision verdict at once instead of staying queued or running.
//
// Blocking (SQLite, hashing, waiting on the job): call from a worker thread. Several executions
// may run at once on different verifications. Each call gets the settings it runs with from its
// caller (the config as it was when the verification started), so a reload never changes a
// verification half-way and the service holds no state of its own beyond the store, the runner
// and its rebuild-id prefix.
// Nothing here cancels a job: a daemon that stops leaves running jobs to their runner and
// reconciles them on its next start (recover()).
//
// It also runs the daemon's calibrations (calibrate()): seed-only reruns of one version until
// every declared tolerance.detect is met or max_runs (verify/calibration.hpp), stored as the
// version's newest calibration, run by run (interrupted until it ends, then with how it ended).
// A calibration is no verification: no row, no verdict, no page; a daemon that dies during one
// loses only the run in flight, and the next plan resumes from the runs stored.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "pager/pager_config.hpp"
#include "policies/verdict.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/calibration.hpp"
#include "verify/pipeline.hpp"

namespace reverify {

struct VerificationSettings {
  VerdictPolicy policy;
  PagerConfig pager;                     // routes pick the senders recorded with each page
  std::filesystem::path work_root;       // each verification works in <work_root>/<rebuild id>
  std::int64_t max_steps = 100;          // steps mode
  std::map<std::string, double> detect;  // tolerance.detect overrides (models.<name>.detect)
  // `reverify run --seed-override`: a fresh-seed rerun judged as a rebuild.
  std::optional<std::int64_t> seed_override;
  std::int64_t timeout_s = 3600;  // one rebuild
  bool network = false;           // the job may use the network (models.<name>.network)
  CodeMirrors code_mirrors;       // config code_mirrors (+ the CLI's --code-mirror)
  // error:* verdicts (except manifest-invalid, which only a new manifest fixes) queue a retry
  // after min(retry_initial_s * 2^(attempt - 1), retry_max_s), up to retry_max_attempts.
  std::int64_t retry_initial_s = 600;
  std::int64_t retry_max_s = 86'400;
  int retry_max_attempts = 1;     // 1 = no retry (the CLI); the daemon passes its schedule's
  AttestationConfig attestation;  // signed summaries of passed and failed:* verdicts, when on
};

// What the config says for one model's verifications (the daemon's schedule sets the retries).
VerificationSettings verification_settings(const Config& config, const std::string& model);

// The retry a verdict calls for, if any.
std::optional<QueuedVerification> retry_for(const VerificationRow& row, VerdictClass cls,
                                            const VerificationSettings& settings, UnixSeconds now);

// "verification-<id>": the rebuild id, the runner label and the scratch folder name, for a store
// that is kept (a restarted daemon finds its jobs by it).
inline constexpr const char* kRebuildIdPrefix = "verification-";
std::string rebuild_id_for(std::int64_t verification_id);

// One calibration the daemon planned (schedule.calibrations_per_cycle).
struct CalibrationJob {
  std::string model, version;
  int max_runs = 100;  // seed runs in all, at most (schedule.calibration_max_runs)
  // Asked before each run: a reason stops it there, keeping the runs so far (stored interrupted).
  std::function<std::optional<std::string>()> interrupt;
};

class VerificationService {
 public:
  using Progress = std::function<void(std::string_view stage, std::string_view detail)>;

  // pages_recorded is called (on the executing thread) after a verdict committed pages.
  // rebuild_id_prefix starts every rebuild id (<prefix><verification id>): a throwaway store
  // (`reverify run` without --config) numbers from 1 in every process, so it passes a prefix of
  // its own; rebuild ids must be unique among the runner's jobs (labels, scratch links, Job names).
  VerificationService(Store& store, Runner& runner, std::function<void()> pages_recorded = {},
                      std::string rebuild_id_prefix = kRebuildIdPrefix);

  // Runs a queued verification to its verdict. Errors only when the store fails or the row is
  // not queued; every outcome of the model or the runner is a verdict in the returned row.
  Result<VerificationRow> execute(std::int64_t verification_id,
                                  const VerificationSettings& settings,
                                  const Progress& progress = {});

  // What a foreground caller sees of the job besides the stages: its handle once it started,
  // and its log as it streams. Both optional.
  struct JobWatch {
    std::function<void(const JobHandle&)> started;
    LogSink logs;
  };

  // `reverify run`: upserts the model version from the manifest at `location`, writes the
  // verification as running (never queued, so a daemon sharing the store cannot start it too)
  // and executes it, in the foreground.
  Result<VerificationRow> run_now(const std::string& location, std::optional<RebuildMode> mode,
                                  VerificationTrigger trigger, const VerificationSettings& settings,
                                  const Progress& progress = {}, const JobWatch& watch = {});

  // After a restart, for a row left running: reattach to the job the runner still has under the
  // row's rebuild id and finish it, or record error:runner-lost when it has none.
  Result<VerificationRow> recover(const VerificationRow& row, const VerificationSettings& settings,
                                  const Progress& progress = {});

  // Full-mode seed-only reruns of job.model@job.version, --until-power, from its current
  // calibration (the manifest's tolerance, the stored calibration over it), stored after each
  // run it adds. Error when the version or its manifest cannot be read or the store fails; a
  // calibration stopped by input drift or a failed run is an outcome (failure).
  Result<CalibrationOutcome> calibrate(const CalibrationJob& job,
                                       const VerificationSettings& settings,
                                       const Progress& progress = {});

 private:
  struct Prepared;
  // execute() and run_now(): the row is queued, or was inserted running by run_now.
  Result<VerificationRow> run(std::int64_t verification_id, bool inserted_running,
                              const VerificationSettings& settings, const Progress& progress,
                              const JobWatch& watch = {});
  // The request for a rebuild of model@version under rebuild_id, with its manifest and stored
  // calibration loaded (or `early` set when the manifest cannot be used).
  Result<Prepared> prepare(const std::string& model, const std::string& version, RebuildMode mode,
                           const std::string& rebuild_id, const VerificationSettings& settings);
  Result<VerificationRow> finish(const VerificationRow& row, const Prepared& prepared,
                                 const VerificationOutcome& outcome);
  // The verdict of a verification that failed before its rebuild started; error only when even
  // that cannot be recorded.
  Result<VerificationRow> finish_unstarted(const VerificationRow& row,
                                           const VerificationSettings& settings,
                                           const Error& error);

  std::string rebuild_id(std::int64_t verification_id) const;
  // Records each standing of the verification's job with its row (shown while it runs).
  StandingSink standing_recorder(std::int64_t verification_id);

  Store& store_;
  Runner& runner_;
  std::function<void()> pages_recorded_;
  std::string rebuild_id_prefix_;
};

}  // namespace reverify
