#pragma once
// runners/: where a rebuild runs (this interface, and the process, docker, kubernetes and slurm
// runners). Includes core/ only; never policies/ or above: a runner starts jobs and reports
// exits, it never judges them.
//
// One interface over the places a rebuild can run (docs/design.md, "Runners" and "The rebuild
// contract"): prepare -> start -> wait (streaming logs) -> collect -> cleanup, plus find_running()
// so that a restarted daemon can reattach to a job by its rebuild id. Each runner finds a job by
// that id its own way: the docker and kubernetes runners by the label reverify.rebuild-id=<id> on
// the container or Job, the process runner by the job.json record in scratch_root/<id>, the slurm
// runner by the job.json in the rebuild's shared folder or else the job's name.
//
// Thread-safety: a Runner may be called from several worker threads for different rebuilds at
// once. All methods block (process waits, HTTP over libcurl): never call them on the event loop.
// Expected failures come back as Error values with codes provision / job / runner_lost / timeout /
// infra (the platform: a file system the job needs is full or read-only before it starts).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"
#include "core/rebuild_mode.hpp"
#include "core/result.hpp"
#include "runners/runner_kind.hpp"

namespace reverify {

inline constexpr const char* kRebuildIdLabel = "reverify.rebuild-id";

// Everything a runner needs to start one rebuild. Paths are on the daemon's machine.
struct RebuildSpec {
  std::string rebuild_id;  // [A-Za-z0-9._-]+, unique per rebuild
  Manifest manifest;
  std::string manifest_location;  // where the manifest was read from (relative URIs)
  RebuildMode mode = RebuildMode::full;
  std::int64_t max_steps = 0;                      // steps mode only
  std::optional<std::int64_t> seed_override;       // calibration runs only
  std::optional<std::filesystem::path> data_path;  // dataset snapshot (read-only to the job)
  std::optional<std::filesystem::path> eval_path;  // eval set (read-only to the job)
  // data_path / eval_path is the copy preflight fetched from an http(s) URI into the daemon's
  // scratch (verify/remote_inputs.hpp), not a path the operator placed: a runner that cannot show
  // the job that copy refuses before the job, naming the manifest field (job_inputs()).
  bool data_fetched = false;
  bool eval_fetched = false;
  std::filesystem::path work_dir;  // scratch for this rebuild, owned by the runner
  std::chrono::seconds timeout{3600};
  // The job may use the network (models.<name>.network: allow); off by default: an undeclared
  // network read is a hidden live input.
  bool network = false;
};

// A started job, enough to wait on it, collect from it and clean it up, including after a
// daemon restart (ref is what the runner stores: a pid+start time, container id, Job name).
struct JobHandle {
  std::string rebuild_id;
  RunnerKind runner_kind = RunnerKind::process;
  std::string ref;
  std::filesystem::path work_dir;
};

// The platform failing under a job (docs/design.md, verdict classes): a file system it needed full
// or read-only, the host's OOM killer. Never the job's fault, whatever its exit status:
// error:infra.
struct PlatformFault {
  std::string reason;       // one sentence: what failed, where, and what the kernel said
  nlohmann::json evidence;  // the same as data: {"kind": "disk_full", "path": ..., ...}
};

struct JobExit {
  JobExit() = default;
  // What every runner knows of an exit; the fault and the bound hit are set when it knows them.
  JobExit(int code, bool timed_out_, std::string tail, std::optional<double> seconds)
      : exit_code(code), timed_out(timed_out_), log_tail(std::move(tail)), job_seconds(seconds) {}

  int exit_code = -1;
  bool timed_out = false;
  std::string log_tail;  // capped, with a visible TRUNCATED marker when cut; never empty when
                         // the job wrote anything, even to a full disk
  // The job's own run time, measured where it ran (process: the supervisor, fork to exit, to the
  // millisecond), when the runner knows it; wait()'s wall time includes its polling interval.
  std::optional<double> job_seconds;
  // What the runner saw of the platform failing while the job ran. It decides only for a job that
  // did not succeed (non-zero, timed out, or outputs it could not collect): error:infra.
  std::optional<PlatformFault> platform_fault;
  // The job ran into one of its own bounds (the runner's max_pids or memory_bytes): "the job hit
  // its memory limit of 1073741824 bytes (runner.process.memory_bytes) ...". Its own doing: a
  // failure with this is error:job, the job's fault.
  std::optional<std::string> limit_hit;
};

// The job's $REVERIFY_OUT/result.json, validated against the contract, with the output files it
// names resolved to local paths after collect().
struct JobOutputs {
  nlohmann::json result;  // the validated document
  std::string primary_name;
  double primary_value = 0;
  std::optional<std::int64_t> primary_examples;  // k: the primary is a proportion over k examples
  std::optional<bool> primary_higher_is_better;  // the direction, when the job states it
  std::map<std::string, std::map<std::string, double>> segments;
  std::map<std::string, std::int64_t> segment_examples;  // segment -> its k
  std::optional<std::string> steps_metric;
  std::vector<double> steps_values;
  std::optional<std::filesystem::path> predictions;  // local copy
  std::optional<std::filesystem::path> weights;      // local copy
  std::filesystem::path out_dir;                     // local folder holding the outputs
  // result.json "subsample" (docs/design.md, "The subsample rule"): which records the job trained
  // on, its keys file (a local copy) and what a key is, in words; absent when it reports none.
  std::optional<SubsampleDrawn> subsample;
  std::optional<std::filesystem::path> subsample_keys;
  std::optional<std::string> subsample_key;
};

using LogSink = std::function<void(std::string_view chunk)>;

// Where a started job stands on a runner that queues jobs (slurm) until it ends: waiting in the
// queue (with the scheduler's reason) or running (where). Shown by the status page and `reverify
// plan` while the verification runs.
enum class JobQueueState { pending, running };
template <>
struct EnumNames<JobQueueState> {
  static constexpr EnumName<JobQueueState> table[] = {
      {JobQueueState::pending, "pending"},
      {JobQueueState::running, "running"},
  };
};

struct JobStanding {
  JobQueueState state = JobQueueState::pending;
  std::string queue;   // slurm: the partition
  std::string reason;  // pending: why, in the scheduler's words (slurm: "Resources", "Priority")
  std::string nodes;   // running: where

  bool operator==(const JobStanding&) const = default;
  // {"state": "pending", "queue": "gpu", "reason": "Resources", "nodes": ""}
  nlohmann::json to_json() const;
  // nullopt for anything to_json() did not write.
  static std::optional<JobStanding> from_json(const nlohmann::json& doc);
  // "pending in partition gpu (Resources)", "running in partition gpu on node17"
  std::string text() const;
};

using StandingSink = std::function<void(const JobStanding&)>;

class Runner {
 public:
  virtual ~Runner() = default;
  virtual RunnerKind kind() const = 0;
  // Whether this runner's jobs run unisolated because the config trusts their code
  // (runner.trust_job_code, where the runner cannot otherwise keep a job from the verifier):
  // every verdict of such a job says so (Verdict::job_code_trusted).
  virtual bool job_code_trusted() const { return false; }

  // Checks that the runner can run this manifest at all and does the slow set-up once (image
  // pulled by digest, code checked out, GPUs available), without starting the job.
  // error:provision on failure.
  virtual Status prepare(const RebuildSpec& spec) = 0;
  // Starts the job. REQUIRES: a successful prepare() of the same spec just before (the pipeline
  // always calls both, in that order): start() repeats none of prepare()'s work (no second pull,
  // no second checkout) and fails with a clear error when what prepare() sets up is missing.
  virtual Result<JobHandle> start(const RebuildSpec& spec) = 0;
  // Blocks until the job ends or spec.timeout passes (then it is killed and timed_out is set).
  virtual Result<JobExit> wait(const JobHandle& job, const LogSink& logs) = 0;
  // wait(), telling `standing` where the job stands each time that changes. Only a runner that
  // queues jobs (slurm) has anything to tell: the others just wait.
  virtual Result<JobExit> wait_reporting(const JobHandle& job, const LogSink& logs,
                                         const StandingSink& standing) {
    (void)standing;
    return wait(job, logs);
  }
  // Copies outputs to dest and validates result.json (error:job when missing or invalid).
  virtual Result<JobOutputs> collect(const JobHandle& job, const std::filesystem::path& dest) = 0;
  // Removes every trace of the job (process group, container, Job object, scratch). Idempotent.
  virtual void cleanup(const JobHandle& job) = 0;
  // Stops a running job (SIGTERM, then SIGKILL after a grace period). Idempotent.
  virtual void cancel(const JobHandle& job) = 0;
  // After a restart: the job labelled with this rebuild id, if it still exists.
  virtual Result<std::optional<JobHandle>> find_running(const std::string& rebuild_id) = 0;
};

// error:job (code job) unless the job exited 0 within its time: the message says which, with the
// exit status or signal (and first the bound it hit, when it hit one), and ends with the last
// lines of the log. With a platform fault the code is infra and the message starts with it.
// Shared by every runner.
Status job_exit_status(const JobExit& exit);

// Validates a result.json document against the rebuild contract and resolves its file names
// inside out_dir (names must not escape it). Shared by every runner.
Result<JobOutputs> read_job_outputs(const std::filesystem::path& out_dir);

}  // namespace reverify
