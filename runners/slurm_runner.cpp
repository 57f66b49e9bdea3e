#include "runners/slurm_runner.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "core/file_write.hpp"
#include "core/map_lookup.hpp"
#include "core/unix_time.hpp"
#include "runners/job_contract.hpp"
#include "runners/job_log.hpp"
#include "runners/job_outputs.hpp"
#include "runners/log_tail.hpp"
#include "runners/process_checkout.hpp"
#include "runners/slurm_batch.hpp"

namespace reverify {
namespace {

using Steady = std::chrono::steady_clock;

// What start() submitted, in job.json: what wait() and find_running() need after a restart.
struct JobRecord {
  std::string job_id;
  std::int64_t timeout_s = 0;  // the model's: reverify cancels the job past it (0 = Slurm's --time)
  std::int64_t submitted_unix = 0;  // the daemon's clock: max_pending counts from here
  std::string memory;               // --mem as submitted, for the verdict ("" = none)
};

std::filesystem::path record_path(const std::filesystem::path& dir) {
  return dir / "job.json";
}

Status write_record(const std::filesystem::path& dir, const JobRecord& record) {
  const nlohmann::json doc = {{"job_id", record.job_id},
                              {"timeout_s", record.timeout_s},
                              {"submitted_unix", record.submitted_unix},
                              {"memory", record.memory}};
  return write_file(record_path(dir), doc.dump() + '\n');
}

std::optional<JobRecord> read_record(const std::filesystem::path& dir) {
  std::ifstream in(record_path(dir));
  if (!in)
    return std::nullopt;
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  if (!doc.is_object() || !doc.contains("job_id") || !doc["job_id"].is_string())
    return std::nullopt;
  JobRecord record;
  record.job_id = doc["job_id"].get<std::string>();
  record.timeout_s = doc.value("timeout_s", std::int64_t{0});
  record.submitted_unix = doc.value("submitted_unix", std::int64_t{0});
  record.memory = doc.value("memory", std::string());
  return record;
}

// The batch script's `allocation` file (slurm_batch.hpp): key=value lines.
std::map<std::string, std::string> read_allocation(const std::filesystem::path& dir) {
  std::map<std::string, std::string> values;
  std::ifstream in(dir / "allocation");
  std::string line;
  while (std::getline(in, line)) {
    if (const auto eq = line.find('='); eq != std::string::npos)
      values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

std::optional<int> read_exit_status(const std::filesystem::path& dir) {
  std::ifstream in(dir / "exit_status");
  int status = 0;
  if (in >> status)
    return status;
  return std::nullopt;
}

std::string job_words(const std::string& id) {
  return "Slurm job " + id;
}

PlatformFault platform_fault(const std::string& kind, const std::string& reason,
                             const SlurmJob& job) {
  return PlatformFault{reason,
                       {{"kind", kind},
                        {"slurm_job", job.id},
                        {"state", to_string(job.state)},
                        {"reason", job.reason},
                        {"nodes", job.nodes},
                        {"partition", job.partition}}};
}

// slurmstepd's words when jobacct_gather's OverMemoryKill (or the cgroup plugin) ends a job that
// went over its --mem.
bool killed_for_memory(const SlurmJob& job, const std::string& log_tail) {
  return job.state == SlurmJobState::out_of_memory ||
         log_tail.find("Exceeded job memory limit") != std::string::npos ||
         log_tail.find("exceeded memory limit") != std::string::npos;
}

Error runner_lost(const std::string& message, const std::string& log_tail) {
  const std::string tail(last_lines(log_tail, 10));
  return make_error(ErrorCode::runner_lost,
                    message + (tail.empty() ? "" : "; last log lines:\n" + tail));
}

// Why the job ended as it did, for the platform's part (faults that are never the job's).
std::optional<PlatformFault> platform_part(const SlurmJob& job,
                                           const std::map<std::string, std::string>& allocation) {
  const std::string words = job_words(job.id);
  const std::string where = job.nodes.empty() ? "" : " on " + job.nodes;
  const auto said = [&allocation](const char* key) {
    return lookup(allocation, std::string(key)).value_or("?");
  };
  if (said("problem") == "gpu_count") {
    auto fault = platform_fault(
        "gpu_allocation",
        "the allocation of " + words + " handed the job " + said("devices") + " GPU device(s) on " +
            said("node") + " (CUDA_VISIBLE_DEVICES=" + said("cuda_visible_devices") +
            "), not the " + said("expected") +
            " recorded in environment.accelerator.count; the job was not started",
        job);
    fault.evidence["devices"] = said("devices");
    fault.evidence["expected"] = said("expected");
    return fault;
  }
  switch (job.state) {
    case SlurmJobState::node_fail:
      return platform_fault(
          "node_failure",
          "the node of " + words + " failed while it ran" + where + " (Reason=" + job.reason + ")",
          job);
    case SlurmJobState::preempted:
      return platform_fault("preempted", "Slurm preempted " + words + where, job);
    case SlurmJobState::boot_fail:
      return platform_fault("boot_failure", "the node of " + words + " failed to boot", job);
    case SlurmJobState::failed:
      if (allocation.empty()) {
        return platform_fault(
            "launch",
            words + " failed before its script ran" + where + " (Reason=" + job.reason +
                "): does the node see runner.slurm.shared_root at runner.slurm.node_root?",
            job);
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

struct EndedJob {
  const JobHandle& handle;
  const JobRecord& record;
  const SlurmJob& slurm;
  bool cancelled_at_deadline = false;
};

// A job Slurm says has ended, read into JobExit (or an error the job did not cause).
Result<JobExit> read_exit(const EndedJob& ended, std::size_t log_cap) {
  const SlurmJob& job = ended.slurm;
  const auto& dir = ended.handle.work_dir;
  const int code = job.exit_signal ? 128 + job.exit_signal : job.exit_status;
  JobExit exit(code, false, job_log_tail(dir / "job.log", 0, log_cap),
               job.start_end_seconds ? job.start_end_seconds : job.run_seconds);
  const auto allocation = read_allocation(dir);
  if (const auto problem = allocation.find("problem");
      problem != allocation.end() &&
      (problem->second == "entrypoint" || problem->second == "container_runtime" ||
       problem->second == "image")) {
    return make_error(ErrorCode::provision,
                      std::string(last_lines(exit.log_tail, 3)) + " (" + job_words(job.id) + ")");
  }
  exit.platform_fault = platform_part(job, allocation);
  switch (job.state) {
    case SlurmJobState::timeout:
    case SlurmJobState::deadline:
      exit.timed_out = true;
      exit.log_tail += "[reverify] Slurm ended " + job_words(job.id) + " at its time limit (" +
                       to_string(job.state) + ")\n";
      break;
    case SlurmJobState::cancelled:
      if (!ended.cancelled_at_deadline) {
        return runner_lost(
            job_words(job.id) + " was cancelled outside reverify (scancel or an administrator)",
            exit.log_tail);
      }
      exit.timed_out = true;
      break;
    case SlurmJobState::revoked:
      return runner_lost(job_words(job.id) + " was revoked (it runs on another cluster)",
                         exit.log_tail);
    default:
      break;
  }
  if (!exit.platform_fault && killed_for_memory(job, exit.log_tail)) {
    exit.limit_hit = "the job hit its memory limit of " +
                     (ended.record.memory.empty() ? std::string("the partition's default")
                                                  : ended.record.memory) +
                     " (sbatch --mem, runner.slurm.memory): Slurm ended it";
  }
  if (exit.exit_code == 0 && job.state != SlurmJobState::completed)
    exit.exit_code = -1;  // an end that is not COMPLETED never reads as success
  return exit;
}

// The controller stopped answering: how long ago, for reconnect_grace. (A flag and a time, not an
// optional time: GCC 12 at -O3 takes the optional's read for an uninitialised one.)
class Outage {
 public:
  bool lasted(std::chrono::milliseconds grace) {
    const auto now = Steady::now();
    if (!down_) {
      down_ = true;
      since_ = now;
    }
    return now - since_ >= grace;
  }
  void over() { down_ = false; }

 private:
  bool down_ = false;
  Steady::time_point since_{};
};

bool requeued(const SlurmJob& job) {
  return job.restarts > 0 || job.state == SlurmJobState::requeued ||
         job.state == SlurmJobState::requeue_hold || job.state == SlurmJobState::requeue_fed;
}

// Slurm requeued the job (--no-requeue asks it not to): it was cancelled, the platform's doing.
JobExit requeued_exit(const JobHandle& job, const SlurmJob& slurm, std::size_t log_cap) {
  JobExit exit(-1, false, job_log_tail(job.work_dir / "job.log", 0, log_cap), std::nullopt);
  exit.platform_fault = platform_fault(
      "requeued",
      "Slurm requeued " + job_words(slurm.id) + " (Restarts=" + std::to_string(slurm.restarts) +
          ", " + to_string(slurm.state) +
          "): a rebuild never runs twice in one folder, so reverify cancelled it",
      slurm);
  return exit;
}

// Slurm no longer knows the job (it ended more than MinJobAge ago): the exit status the batch
// script recorded, else the job is lost.
Result<JobExit> forgotten_job_exit(const JobHandle& job, const JobRecord& record,
                                   std::size_t log_cap) {
  const auto status = read_exit_status(job.work_dir);
  const auto tail = job_log_tail(job.work_dir / "job.log", 0, log_cap);
  if (!status) {
    return runner_lost("Slurm no longer knows " + job_words(record.job_id) +
                           " (it ended more than MinJobAge ago) and the job left no exit status "
                           "in " +
                           job.work_dir.string(),
                       tail);
  }
  return JobExit(*status, false, tail, std::nullopt);
}

JobStanding standing_of(const SlurmJob& job) {
  if (job.state == SlurmJobState::pending)
    return JobStanding{JobQueueState::pending, job.partition, job.reason, ""};
  return JobStanding{JobQueueState::running, job.partition, "", job.nodes};
}

}  // namespace

SlurmRunner::SlurmRunner(SlurmConfig config) : config_(std::move(config)), cli_(config_) {}

Status SlurmRunner::check_gpus(const RebuildSpec& spec, const SlurmPlacement& placement,
                               const SlurmGpuRequest& gpus) const {
  if (gpus.count == 0)
    return {};
  std::string partition = placement.partition;
  if (partition.empty()) {
    auto partitions = cli_.partitions();
    if (!partitions)
      return partitions.error();
    partition = default_partition(*partitions);
  }
  auto nodes = cli_.nodes();
  if (!nodes)
    return nodes.error();
  const auto most = most_gpus_on_one_node(*nodes, partition, gpus);
  if (most >= gpus.count)
    return {};
  std::string kind = "GPU(s)";
  if (!gpus.gres_type.empty())
    kind = "GPU(s) of GRES type " + gpus.gres_type;
  else if (!gpus.feature.empty())
    kind = "GPU(s) on nodes with feature " + gpus.feature;
  const std::string model = spec.manifest.environment->accelerator->model;
  return make_error(ErrorCode::provision,
                    "partition " + (partition.empty() ? "(none is the default)" : partition) +
                        " cannot offer the recorded " + std::to_string(gpus.count) + " " + kind +
                        (model.empty() ? "" : " (" + model + ")") +
                        " on one node: its nodes have at most " + std::to_string(most) +
                        "; the job was not submitted");
}

Status SlurmRunner::prepare(const RebuildSpec& spec) {
  auto dir = scratch_dir(spec.rebuild_id, {}, config_.shared_root);
  if (!dir)
    return dir.error();
  auto batch = build_slurm_batch(spec, config_, *dir);
  if (!batch)
    return batch.error();
  auto live = cli_.active_jobs(slurm_job_name(config_, spec.rebuild_id),
                               slurm_job_comment(spec.rebuild_id));
  if (!live)
    return make_error(ErrorCode::provision, live.error().message);
  if (!live->empty()) {
    return make_error(ErrorCode::conflict, "rebuild " + spec.rebuild_id + " is already " +
                                               job_words(live->front()) + " (queued or running)");
  }
  if (auto gpus = check_gpus(spec, batch->placement, batch->gpus); !gpus)
    return gpus;
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  std::filesystem::create_directories(*dir / "out", ec);
  if (ec) {
    return make_error(ErrorCode::provision, dir->string() +
                                                ": cannot create the rebuild's folder "
                                                "(runner.slurm.shared_root): " +
                                                ec.message());
  }
  if (!runs_image(spec, config_)) {
    const char* path = std::getenv("PATH");
    if (auto s = checkout_code(spec, *dir / "src", path ? path : "/usr/bin:/bin"); !s)
      return s;
    const auto workdir = resolved_job_workdir(spec, *dir / "src");
    if (!workdir)
      return workdir.error();
    if (!std::filesystem::is_directory(*workdir, ec)) {
      return make_error(ErrorCode::provision,
                        "run.workdir: " + job_workdir(spec, *dir / "src").string() +
                            " is not a folder of the checkout");
    }
  }
  if (auto s = write_contract_inputs(spec, *dir / "in"); !s)
    return make_error(ErrorCode::provision, s.error().message);
  return write_file(*dir / "job.sh", batch->script);
}

Result<JobHandle> SlurmRunner::start(const RebuildSpec& spec) {
  auto dir = scratch_dir(spec.rebuild_id, {}, config_.shared_root);
  if (!dir)
    return dir.error();
  std::error_code ec;
  if (!std::filesystem::exists(*dir / "job.sh", ec) ||
      (!runs_image(spec, config_) && !std::filesystem::exists(*dir / "src" / ".git", ec))) {
    return make_error(ErrorCode::provision, "rebuild " + spec.rebuild_id + ": " + dir->string() +
                                                " holds no batch script or checkout: prepare() "
                                                "must run first");
  }
  if (std::filesystem::exists(record_path(*dir), ec)) {
    return make_error(ErrorCode::conflict, "rebuild " + spec.rebuild_id +
                                               " was already submitted from " + dir->string() +
                                               "; prepare() again for a fresh folder");
  }
  auto batch = build_slurm_batch(spec, config_, *dir);
  if (!batch)
    return batch.error();
  const auto submitted_at = system_now();
  auto id = cli_.submit(batch->options, *dir / "job.sh");
  if (!id)
    return id.error();
  JobRecord record{*id, spec.timeout.count(), submitted_at, batch->placement.memory};
  if (auto s = write_record(*dir, record); !s) {
    (void)cli_.cancel(*id);
    return s.error();
  }
  return JobHandle{spec.rebuild_id, kind(), *id, *dir};
}

Result<JobExit> SlurmRunner::wait(const JobHandle& job, const LogSink& logs) {
  return wait_reporting(job, logs, {});
}

Result<JobExit> SlurmRunner::wait_reporting(const JobHandle& job, const LogSink& logs,
                                            const StandingSink& standing) {
  const auto record = read_record(job.work_dir);
  if (!record) {
    return make_error(ErrorCode::runner_lost, record_path(job.work_dir).string() +
                                                  ": missing or unreadable; the job cannot be "
                                                  "tracked");
  }
  LogFollower log(job.work_dir / "job.log", 0);
  std::optional<JobStanding> shown;
  Outage outage;
  bool cancelled_at_deadline = false;
  for (;; std::this_thread::sleep_for(config_.poll_interval)) {
    log.drain(logs);
    auto now = cli_.job(record->job_id);
    if (!now) {
      if (outage.lasted(config_.reconnect_grace)) {
        return make_error(ErrorCode::runner_lost, "lost the Slurm controller while waiting for " +
                                                      job_words(record->job_id) + ": " +
                                                      now.error().message);
      }
      continue;
    }
    outage.over();
    if (!*now) {
      log.drain(logs);
      return forgotten_job_exit(job, *record, config_.log_cap_bytes);
    }
    const SlurmJob& slurm = **now;
    if (!slurm.active()) {
      log.drain(logs);
      // A job that ran between two looks still says where it ran.
      if (standing && !slurm.nodes.empty() && (!shown || shown->state != JobQueueState::running))
        standing(JobStanding{JobQueueState::running, slurm.partition, "", slurm.nodes});
      return read_exit({job, *record, slurm, cancelled_at_deadline}, config_.log_cap_bytes);
    }
    if (requeued(slurm)) {
      cancel(job);
      return requeued_exit(job, slurm, config_.log_cap_bytes);
    }
    if (standing) {
      const JobStanding here = standing_of(slurm);
      if (!shown || *shown != here) {
        standing(here);
        shown = here;
      }
    }
    if (slurm.state == SlurmJobState::pending &&
        system_now() - record->submitted_unix >= config_.max_pending.count()) {
      cancel(job);
      return make_error(ErrorCode::provision,
                        job_words(slurm.id) + " stayed pending in partition " + slurm.partition +
                            " for longer than runner.slurm.max_pending (" +
                            duration_text(config_.max_pending.count()) +
                            "; Reason=" + slurm.reason + "); reverify cancelled it");
    }
    if (!cancelled_at_deadline && record->timeout_s > 0 && slurm.run_seconds &&
        *slurm.run_seconds >= record->timeout_s) {
      cancelled_at_deadline = cli_.cancel(slurm.id).ok();
    }
  }
}

Result<JobOutputs> SlurmRunner::collect(const JobHandle& job, const std::filesystem::path& dest) {
  return collect_outputs(job.work_dir / "out", dest);
}

void SlurmRunner::cancel(const JobHandle& job) {
  if (job.ref.empty())
    return;
  (void)cli_.cancel(job.ref);
  const auto give_up = Steady::now() + config_.cancel_wait;
  while (Steady::now() < give_up) {
    auto now = cli_.job(job.ref);
    if (now && (!*now || !(*now)->active()))
      return;
    std::this_thread::sleep_for(
        std::min<std::chrono::milliseconds>(config_.poll_interval, std::chrono::seconds(1)));
  }
}

void SlurmRunner::cleanup(const JobHandle& job) {
  cancel(job);
  std::error_code ec;
  std::filesystem::remove_all(job.work_dir, ec);
}

Result<std::optional<JobHandle>> SlurmRunner::find_running(const std::string& rebuild_id) {
  auto dir = scratch_dir(rebuild_id, {}, config_.shared_root);
  if (!dir)
    return dir.error();
  if (const auto record = read_record(*dir))
    return std::optional<JobHandle>(JobHandle{rebuild_id, kind(), record->job_id, *dir});
  auto live = cli_.active_jobs(slurm_job_name(config_, rebuild_id), slurm_job_comment(rebuild_id));
  if (!live)
    return live.error();
  if (live->empty())
    return std::optional<JobHandle>();
  // Submitted, but the daemon died before it wrote job.json: record it now, timing it from here.
  const JobRecord record{live->front(), 0, system_now(), ""};
  if (auto s = write_record(*dir, record); !s)
    return s.error();
  return std::optional<JobHandle>(JobHandle{rebuild_id, kind(), record.job_id, *dir});
}

Result<std::unique_ptr<Runner>> make_slurm_runner(const SlurmConfig& config, bool trust_job_code) {
  if (!trust_job_code) {
    return make_error(
        ErrorCode::invalid_argument,
        "runner.kind: slurm runs the rebuild's code on a cluster node as reverify's own user, "
        "and nothing there keeps it from the files that user can read (the daemon's config, "
        "secrets, state_dir and store on a node that mounts them); set runner.trust_job_code: "
        "true to accept that (docs/security.md)");
  }
  if (!config.shared_root.is_absolute()) {
    return make_error(ErrorCode::invalid_argument,
                      "runner.slurm.shared_root: must be an absolute path, got \"" +
                          config.shared_root.string() + "\"");
  }
  return std::unique_ptr<Runner>(std::make_unique<SlurmRunner>(config));
}

}  // namespace reverify
