#include "runners/process_runner.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <thread>

#include "runners/job_contract.hpp"
#include "runners/job_log.hpp"
#include "runners/job_outputs.hpp"
#include "runners/process_checkout.hpp"
#include "runners/process_spawn.hpp"

namespace reverify {
namespace {

using Clock = std::chrono::system_clock;  // deadlines outlive the process: wall clock, in job.json

struct JobRecord {
  ProcessIdentity supervisor;  // its pid is also the process group id
  std::int64_t deadline_unix_ms = 0;
  std::uint64_t log_cap_bytes = 0;  // of job.log; 0 = not capped (recorded before the cap existed)
};

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

std::filesystem::path record_path(const std::filesystem::path& dir) {
  return dir / "job.json";
}

Status write_record(const std::filesystem::path& dir, const JobRecord& record) {
  const nlohmann::json doc = {{"pid", record.supervisor.pid},
                              {"start_ticks", record.supervisor.start_ticks},
                              {"deadline_unix_ms", record.deadline_unix_ms},
                              {"log_cap_bytes", record.log_cap_bytes}};
  const auto tmp = dir / "job.json.tmp";
  std::ofstream(tmp) << doc.dump() << '\n';
  std::error_code ec;
  std::filesystem::rename(tmp, record_path(dir), ec);
  if (ec)
    return make_error(ErrorCode::io, record_path(dir).string() + ": cannot write: " + ec.message());
  return {};
}

std::optional<JobRecord> read_record(const std::filesystem::path& dir) {
  std::ifstream in(record_path(dir));
  if (!in)
    return std::nullopt;
  const auto doc = nlohmann::json::parse(in, nullptr, false);
  if (!doc.is_object() || !doc.contains("pid") || !doc.contains("start_ticks"))
    return std::nullopt;
  JobRecord record;
  record.supervisor.pid = doc["pid"].get<pid_t>();
  record.supervisor.start_ticks = doc["start_ticks"].get<std::uint64_t>();
  record.deadline_unix_ms = doc.value("deadline_unix_ms", std::int64_t{0});
  record.log_cap_bytes = doc.value("log_cap_bytes", std::uint64_t{0});
  return record;
}

Result<JobRecord> require_record(const JobHandle& job) {
  auto record = read_record(job.work_dir);
  if (!record) {
    return make_error(
        ErrorCode::runner_lost,
        record_path(job.work_dir).string() + ": missing or unreadable; the job cannot be tracked");
  }
  return *record;
}

// nullopt while the supervisor runs; once it ended, its exit status as the shell shows it (N, or
// 128 + signal), or -1 when it is not this process's child (started before a restart). It is not
// reaped here: while it stays a zombie its pid (the process group id) cannot be reused, so the
// group can still be killed safely.
std::optional<int> supervisor_ended(const ProcessIdentity& supervisor) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(supervisor.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0) {
    if (info.si_pid != supervisor.pid)
      return std::nullopt;
    return info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
  }
  if (is_alive(supervisor))
    return std::nullopt;
  return -1;
}

void signal_group(const ProcessIdentity& supervisor, int sig) {
  if (supervisor.pid > 1)
    ::kill(-supervisor.pid, sig);
}

// Everything the job left in its group goes, then the supervisor is reaped (when it is ours).
void end_group(const ProcessIdentity& supervisor) {
  signal_group(supervisor, SIGKILL);
  reap_if_child(supervisor.pid);
}

// The job's working folder: run.workdir when relative (inside the checkout), else the checkout
// root (an absolute workdir names a folder of the original image, e.g. /src).
std::filesystem::path job_workdir(const RebuildSpec& spec, const std::filesystem::path& src) {
  const auto& workdir = spec.manifest.run.workdir;
  if (workdir && !workdir->empty() && std::filesystem::path(*workdir).is_relative())
    return src / *workdir;
  return src;
}

Result<std::filesystem::path> entrypoint_executable(const RebuildSpec& spec,
                                                    const std::string& path_env,
                                                    const std::filesystem::path& workdir) {
  auto exe = find_executable(spec.manifest.run.entrypoint[0], path_env, workdir);
  if (!exe)
    return make_error(ErrorCode::provision, "run.entrypoint[0]: " + exe.error().message);
  return exe;
}

}  // namespace

ProcessRunner::ProcessRunner(ProcessRunnerConfig config) : config_(std::move(config)) {}

Status ProcessRunner::prepare(const RebuildSpec& spec) {
  auto dir = scratch_dir(spec.rebuild_id, spec.work_dir, config_.scratch_root);
  if (!dir)
    return dir.error();
  if (spec.manifest.run.entrypoint.empty()) {
    return make_error(ErrorCode::manifest_invalid,
                      "run.entrypoint: expected a non-empty argv array");
  }
  if (auto record = read_record(*dir); record && is_alive(record->supervisor)) {
    return make_error(ErrorCode::conflict, "rebuild " + spec.rebuild_id +
                                               " is already running (process group " +
                                               std::to_string(record->supervisor.pid) + ")");
  }
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  std::filesystem::create_directories(*dir, ec);
  if (ec)
    return make_error(ErrorCode::provision,
                      dir->string() + ": cannot create the scratch folder: " + ec.message());
  if (auto s = checkout_code(spec, *dir / "src", config_.path_env); !s)
    return s;
  auto exe = entrypoint_executable(spec, config_.path_env, job_workdir(spec, *dir / "src"));
  if (!exe)
    return exe.error();
  return {};
}

Result<JobHandle> ProcessRunner::start(const RebuildSpec& spec) {
  auto dir = scratch_dir(spec.rebuild_id, spec.work_dir, config_.scratch_root);
  if (!dir)
    return dir.error();
  std::error_code ec;
  if (!std::filesystem::exists(*dir / "src" / ".git", ec)) {
    return make_error(ErrorCode::provision, "rebuild " + spec.rebuild_id + ": " + dir->string() +
                                                " holds no checkout: prepare() must run first");
  }
  if (std::filesystem::exists(record_path(*dir), ec)) {
    return make_error(ErrorCode::conflict, "rebuild " + spec.rebuild_id +
                                               " was already started in " + dir->string() +
                                               "; prepare() again for a fresh scratch folder");
  }
  const auto workdir = job_workdir(spec, *dir / "src");
  const auto& argv = spec.manifest.run.entrypoint;
  auto exe = entrypoint_executable(spec, config_.path_env, workdir);
  if (!exe)
    return exe.error();
  if (auto s = write_contract_inputs(spec, *dir / "in"); !s)
    return s.error();
  std::filesystem::create_directories(*dir / "out", ec);
  if (ec)
    return make_error(ErrorCode::io, (*dir / "out").string() + ": cannot create: " + ec.message());

  ContractPaths paths{(*dir / "in" / "config.json").string(), (*dir / "in" / "seeds.json").string(),
                      (*dir / "out").string(), spec.data_path ? spec.data_path->string() : "",
                      spec.eval_path ? spec.eval_path->string() : ""};
  SpawnRequest request;
  request.env = contract_environment(spec, paths);
  request.env["PATH"] = config_.path_env;
  request.executable = *exe;
  request.args.assign(argv.begin() + 1, argv.end());
  request.working_dir = workdir;
  request.log_file = *dir / "job.log";
  request.status_file = *dir / "exit_status";
  request.log_cap_bytes = config_.job_log_cap_bytes;
  const std::int64_t deadline =
      now_unix_ms() + std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout).count();
  auto supervisor = spawn_supervised(request);
  if (!supervisor)
    return supervisor.error();
  if (auto s = write_record(*dir, JobRecord{*supervisor, deadline, request.log_cap_bytes}); !s) {
    end_group(*supervisor);
    return s.error();
  }
  // A scratch folder chosen by the caller is found again after a restart through a link at
  // scratch_root/<rebuild id>.
  const auto index = config_.scratch_root / spec.rebuild_id;
  if (*dir != index) {
    std::filesystem::create_directories(config_.scratch_root, ec);
    std::filesystem::remove(index, ec);
    std::filesystem::create_directory_symlink(std::filesystem::absolute(*dir), index, ec);
    if (ec) {
      end_group(*supervisor);
      return make_error(ErrorCode::io,
                        index.string() + ": cannot link the scratch folder: " + ec.message());
    }
  }
  return JobHandle{spec.rebuild_id, kind(),
                   std::to_string(supervisor->pid) + ":" + std::to_string(supervisor->start_ticks),
                   *dir};
}

Result<JobExit> ProcessRunner::wait(const JobHandle& job, const LogSink& logs) {
  auto record = require_record(job);
  if (!record)
    return record.error();
  const auto& supervisor = record->supervisor;
  const auto log_file = job.work_dir / "job.log";
  LogFollower log(log_file, record->log_cap_bytes);
  JobExit exit;
  std::optional<std::int64_t> term_sent_ms;
  bool kill_sent = false;
  std::optional<int> supervisor_status;
  while (true) {
    log.drain(logs);
    if ((supervisor_status = supervisor_ended(supervisor)))
      break;
    const std::int64_t now = now_unix_ms();
    if (!term_sent_ms && now >= record->deadline_unix_ms) {
      exit.timed_out = true;
      term_sent_ms = now;
      signal_group(supervisor, SIGTERM);
    } else if (term_sent_ms && !kill_sent && now >= *term_sent_ms + config_.kill_grace.count()) {
      kill_sent = true;
      signal_group(supervisor, SIGKILL);
    }
    std::this_thread::sleep_for(config_.poll_interval);
  }
  end_group(supervisor);
  log.drain(logs);
  // The supervisor's own status stands in when SIGKILL took it down with the job.
  exit.exit_code = read_exit_status(job.work_dir / "exit_status").value_or(*supervisor_status);
  exit.job_seconds = read_job_seconds(job.work_dir / "exit_status");
  exit.log_tail = job_log_tail(log_file, record->log_cap_bytes, config_.log_cap_bytes);
  return exit;
}

Result<JobOutputs> ProcessRunner::collect(const JobHandle& job, const std::filesystem::path& dest) {
  return collect_outputs(job.work_dir / "out", dest);
}

void ProcessRunner::cancel(const JobHandle& job) {
  const auto record = read_record(job.work_dir);
  if (!record || !is_alive(record->supervisor))
    return;
  signal_group(record->supervisor, SIGTERM);
  const auto kill_at = std::chrono::steady_clock::now() + config_.kill_grace;
  while (!supervisor_ended(record->supervisor) && std::chrono::steady_clock::now() < kill_at) {
    std::this_thread::sleep_for(config_.poll_interval);
  }
  signal_group(record->supervisor, SIGKILL);
}

void ProcessRunner::cleanup(const JobHandle& job) {
  if (const auto record = read_record(job.work_dir)) {
    cancel(job);
    end_group(record->supervisor);
  }
  std::error_code ec;
  std::filesystem::remove_all(job.work_dir, ec);
  const auto index = config_.scratch_root / job.rebuild_id;
  if (std::filesystem::is_symlink(index, ec))
    std::filesystem::remove(index, ec);
}

Result<std::optional<JobHandle>> ProcessRunner::find_running(const std::string& rebuild_id) {
  auto dir = scratch_dir(rebuild_id, {}, config_.scratch_root);
  if (!dir)
    return dir.error();
  std::error_code ec;
  const auto work_dir =
      std::filesystem::is_symlink(*dir, ec) ? std::filesystem::read_symlink(*dir, ec) : *dir;
  const auto record = read_record(work_dir);
  if (!record)
    return std::optional<JobHandle>();
  return std::optional<JobHandle>(JobHandle{
      rebuild_id, kind(),
      std::to_string(record->supervisor.pid) + ":" + std::to_string(record->supervisor.start_ticks),
      work_dir});
}

}  // namespace reverify
