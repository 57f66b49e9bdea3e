#include "runners/process_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "core/hashing_io.hpp"
#include "core/text.hpp"
#include "runners/job_cgroup.hpp"
#include "runners/job_contract.hpp"
#include "runners/job_log.hpp"
#include "runners/job_outputs.hpp"
#include "runners/job_processes.hpp"
#include "runners/job_sandbox.hpp"
#include "runners/log_tail.hpp"
#include "runners/process_checkout.hpp"
#include "runners/process_spawn.hpp"
#include "runners/space_watch.hpp"

namespace reverify {
namespace {

// A path as the job is given it: absolute and without "." or ".." (a sandbox shows only the
// folders it binds, so "<state_dir>/config/../out" would name a folder the job cannot see).
std::filesystem::path host_path(const std::filesystem::path& path) {
  return std::filesystem::absolute(path).lexically_normal();
}

using Clock = std::chrono::system_clock;  // deadlines outlive the process: wall clock, in job.json

// How long the runner keeps killing a job's processes before it gives up on one stuck in the
// kernel (its cgroup is then left for cleanup() to try again).
constexpr std::chrono::seconds kKillWait{5};

struct JobRecord {
  ProcessIdentity supervisor;  // its pid is also the process group id
  std::int64_t deadline_unix_ms = 0;
  std::uint64_t log_cap_bytes = 0;  // of job.log; 0 = not capped (recorded before the cap existed)
  JobCgroup cgroup;                 // empty on a host without cgroups
  std::uint64_t max_pids = 0;       // the limits its cgroup enforces (0 = none), for the verdict
  std::uint64_t memory_bytes = 0;
  std::uint64_t host_oom_kills = 0;  // /proc/vmstat oom_kill when the job started
  bool sandboxed = false;            // run by bubblewrap (job_sandbox.hpp)
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
                              {"log_cap_bytes", record.log_cap_bytes},
                              {"cgroups", record.cgroup.to_json()},
                              {"max_pids", record.max_pids},
                              {"memory_bytes", record.memory_bytes},
                              {"host_oom_kills", record.host_oom_kills},
                              {"sandboxed", record.sandboxed}};
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
  if (doc.contains("cgroups"))
    record.cgroup = JobCgroup::from_json(doc["cgroups"]);
  record.max_pids = doc.value("max_pids", std::uint64_t{0});
  record.memory_bytes = doc.value("memory_bytes", std::uint64_t{0});
  record.host_oom_kills = doc.value("host_oom_kills", std::uint64_t{0});
  record.sandboxed = doc.value("sandboxed", false);
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

JobProcesses processes_of(const JobRecord& record) {
  return JobProcesses(record.supervisor, record.cgroup, record.sandboxed);
}

// Everything the job left goes: its group, every member of its cgroups (an orphan whose
// supervisor was killed is still there), then the cgroups; the supervisor is reaped when it is
// ours.
void end_job(const JobRecord& record) {
  signal_group(record.supervisor, SIGKILL);
  if (processes_of(record).kill_all(kKillWait))
    record.cgroup.remove();
  reap_if_child(record.supervisor.pid);
}

// After the supervisor died without reporting (end_job() has killed its group and cgroups): what
// became of the job's processes, in words. In a sandbox the kernel ended them with its PID
// namespace; cgroups list every one. Without either, a setsid() descendant left the group and
// was reparented away: it is found by the job's own REVERIFY_OUT in its environment and killed,
// and the words say that a process that cleared its environment cannot be found here.
std::string end_orphaned(const JobRecord& record, const std::filesystem::path& work_dir) {
  if (record.sandboxed)
    return "the kernel ended every process of the job with its sandbox's PID namespace";
  if (!record.cgroup.empty()) {
    const auto left = processes_of(record).list();
    return left.empty() ? "every process in the job's cgroups was killed"
                        : std::to_string(left.size()) +
                              " process(es) in the job's cgroups could not be killed yet";
  }
  const std::string marker = "REVERIFY_OUT=" + (host_path(work_dir) / "out").string();
  const auto found = processes_with_environment(marker);
  for (pid_t pid : found)
    ::kill(pid, SIGKILL);
  std::vector<std::string> survivors;
  const auto until = std::chrono::steady_clock::now() + kKillWait;
  for (auto left = found; !left.empty(); left = processes_with_environment(marker)) {
    if (std::chrono::steady_clock::now() >= until) {
      for (pid_t pid : left)
        survivors.push_back(std::to_string(pid));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::string words = "its process group was killed, and " + std::to_string(found.size()) +
                      " process(es) outside it, found by the job's REVERIFY_OUT in their "
                      "environment";
  words += survivors.empty() ? ", were killed" : "; still running: pids " + joined(survivors);
  return words +
         ". Without cgroups or the sandbox a process that cleared its environment cannot be "
         "found";
}

// OOM kills since boot, of any process (/proc/vmstat oom_kill).
std::uint64_t host_oom_kills() {
  std::ifstream in("/proc/vmstat");
  std::string name;
  std::uint64_t value = 0;
  while (in >> name >> value) {
    if (name == "oom_kill")
      return value;
  }
  return 0;
}

// What the job's cgroups counted, in words: the bounds it hit (its own doing) and an OOM kill
// that was not its limit's (the platform's).
void read_cgroup_events(const JobRecord& record, JobExit& exit) {
  const CgroupEvents events = record.cgroup.events();
  std::vector<std::string> hits;
  if (record.max_pids > 0 && events.forks_refused > 0) {
    hits.push_back("the job hit its pids limit of " + std::to_string(record.max_pids) +
                   " (runner.process.max_pids): the kernel refused " +
                   std::to_string(events.forks_refused) + " of its forks");
  }
  const bool limit_oom = record.memory_bytes > 0 && events.memory_limit_ooms > 0;
  if (limit_oom && events.oom_kills > 0) {
    hits.push_back("the job hit its memory limit of " + std::to_string(record.memory_bytes) +
                   " bytes (runner.process.memory_bytes): the kernel's OOM killer ended " +
                   std::to_string(events.oom_kills) + " of its processes");
  }
  for (std::size_t i = 0; i < hits.size(); ++i)
    exit.limit_hit = (i ? *exit.limit_hit + "; " : std::string()) + hits[i];
  if (events.oom_kills > 0 && !limit_oom) {
    exit.platform_fault =
        PlatformFault{"the host ran out of memory, not the job's own limit (" +
                          (record.memory_bytes > 0 ? std::to_string(record.memory_bytes) + " bytes"
                                                   : std::string("none set")) +
                          "): the kernel's OOM killer ended " + std::to_string(events.oom_kills) +
                          " of the job's processes",
                      {{"kind", "host_oom"},
                       {"oom_kills", events.oom_kills},
                       {"memory_limit_bytes", record.memory_bytes},
                       {"cgroups", record.cgroup.to_json()}}};
  }
}

// Without a memory cgroup: a job killed by SIGKILL that nobody here sent, while the kernel's
// OOM killer ran, was most likely its victim.
void read_host_oom(const JobRecord& record, JobExit& exit) {
  const std::uint64_t now = host_oom_kills();
  if (exit.timed_out || exit.exit_code != 128 + SIGKILL || now <= record.host_oom_kills)
    return;
  exit.platform_fault = PlatformFault{
      "the host ran out of memory: the kernel's OOM killer ran " +
          std::to_string(now - record.host_oom_kills) +
          " time(s) while the job ran (/proc/vmstat oom_kill) and the job was killed by SIGKILL",
      {{"kind", "host_oom"}, {"oom_kills", now - record.host_oom_kills}}};
}

// The bounds the config asks for that nothing enforced for this job (cgroups off, or the host
// offers no such controller; RLIMIT_NPROC binds no root job), in words: said in the job's log
// tail, never dropped silently. "" when every bound asked for was enforced.
std::string unenforced_bounds(const ProcessRunnerConfig& config, const JobCgroup& cgroup) {
  std::vector<std::string> missing;
  if (config.memory_bytes > 0 && !cgroup.counts_memory())
    missing.push_back("runner.process.memory_bytes");
  if (config.max_pids > 0 && !cgroup.counts_pids() && ::geteuid() == 0)
    missing.push_back("runner.process.max_pids");
  if (missing.empty())
    return {};
  return "[reverify] not enforced for this job: " + joined(missing) + " (" +
         (config.cgroups ? JobCgroup::host_notes() : "runner.process.cgroups is false") + ")\n";
}

// What the supervisor killed after the job ended: distinct processes, each counted once. More
// than the pids limit allows at once is possible only when they went on forking while they were
// killed, and the note says so rather than suggest the limit did not hold.
std::string leftovers_note(std::uint64_t killed, std::uint64_t max_pids) {
  std::string note = "[reverify] when the job ended, " + std::to_string(killed) +
                     " process(es) it had started were still running; they were killed";
  if (max_pids > 0 && killed > max_pids) {
    note += " (more than its pids limit of " + std::to_string(max_pids) +
            " holds at once: they went on forking while they were killed)";
  }
  return note + "\n";
}

// The job's last output: job.log's end, or, when the disk refused the log, what its supervisor
// kept in memory and saved.
std::string job_output_tail(const JobHandle& job, const JobRecord& record,
                            const SupervisorReport& report, std::size_t tail_cap) {
  const auto log_file = job.work_dir / "job.log";
  if (!report.log_errno)
    return job_log_tail(log_file, record.log_cap_bytes, tail_cap);
  std::string saved(report.tail_bytes, '\0');
  std::ifstream(job.work_dir / "job.tail")
      .read(saved.data(), static_cast<std::streamsize>(saved.size()));
  LogTail tail(tail_cap);
  tail.append("[reverify] " + log_file.string() + " could not be written from byte " +
              std::to_string(report.log_bytes_before_error) + " on (" +
              describe_errno(*report.log_errno) +
              "); the job's latest output, kept in memory by its supervisor, follows\n");
  tail.append(saved);
  return tail.text();
}

// What the job's sandbox shows it: its checkout and contract inputs read-only, its out folder
// writable, its data and eval read-only (job_sandbox.hpp adds the system paths and the config's).
SandboxJob sandbox_job(const RebuildSpec& spec, const std::filesystem::path& dir,
                       const std::filesystem::path& workdir, const SpawnRequest& request) {
  SandboxJob job;
  job.binds = {{dir / "src", SandboxAccess::read_only},
               {dir / "in", SandboxAccess::read_only},
               {dir / "out", SandboxAccess::writable}};
  for (const auto& input : {spec.data_path, spec.eval_path}) {
    if (input)
      job.binds.push_back({host_path(*input), SandboxAccess::read_only});
  }
  job.workdir = workdir;
  job.network = spec.network;
  const auto& environment = spec.manifest.environment;
  job.gpus = environment && environment->accelerator && environment->accelerator->count > 0;
  job.command = {request.executable.string()};
  job.command.insert(job.command.end(), request.args.begin(), request.args.end());
  return job;
}

// When the daemon is root the job runs as the sandbox's job uid: its folders become that uid's
// (the checkout and inputs stay read-only to it through the sandbox's read-only binds).
Status give_to_job_user(const std::vector<std::filesystem::path>& folders,
                        const SandboxConfig& sandbox) {
  for (const auto& folder : folders) {
    std::error_code ec;
    auto chown = [&](const std::filesystem::path& path) {
      if (::lchown(path.c_str(), sandbox.job_uid, sandbox.job_gid) != 0)
        ec = std::error_code(errno, std::generic_category());
    };
    chown(folder);
    for (auto it = std::filesystem::recursive_directory_iterator(folder, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      chown(it->path());
    if (ec) {
      return make_error(ErrorCode::provision,
                        folder.string() + ": cannot give it to the job's uid " +
                            std::to_string(sandbox.job_uid) + ": " + ec.message());
    }
  }
  return {};
}

// bubblewrap's status file, kept open by the job's first process (--json-status-fd).
Result<UniqueFd> open_sandbox_status(const std::filesystem::path& dir) {
  const auto path = dir / "sandbox.json";
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640));
  if (fd.get() < 0)
    return make_error(ErrorCode::io, path.string() + ": cannot open: " + std::strerror(errno));
  return fd;
}

// The job as its supervisor starts it, outside any sandbox: the contract's environment and
// paths in the scratch folder `scratch` (absolute), its own log, status and tail files there.
SpawnRequest job_request(const RebuildSpec& spec, const std::filesystem::path& scratch,
                         const std::filesystem::path& workdir,
                         const std::filesystem::path& executable,
                         const ProcessRunnerConfig& config) {
  const auto input = [](const std::optional<std::filesystem::path>& path) {
    return path ? host_path(*path).string() : "";
  };
  ContractPaths paths{(scratch / "in" / "config.json").string(),
                      (scratch / "in" / "seeds.json").string(), (scratch / "out").string(),
                      input(spec.data_path), input(spec.eval_path)};
  SpawnRequest request;
  request.env = contract_environment(spec, paths);
  request.env["PATH"] = config.path_env;
  request.executable = host_path(executable);
  const auto& argv = spec.manifest.run.entrypoint;
  request.args.assign(argv.begin() + 1, argv.end());
  request.working_dir = host_path(workdir);
  request.log_file = scratch / "job.log";
  request.status_file = scratch / "exit_status";
  request.tail_file = scratch / "job.tail";
  request.log_cap_bytes = config.job_log_cap_bytes;
  request.max_open_files = config.max_open_files;
  request.max_processes = config.max_pids;
  return request;
}

// A scratch folder chosen by the caller is found again after a restart through a link at
// scratch_root/<rebuild id>.
Status link_from_scratch_root(const std::filesystem::path& dir,
                              const std::filesystem::path& scratch_root,
                              const std::string& rebuild_id) {
  const auto index = scratch_root / rebuild_id;
  if (dir == index)
    return {};
  std::error_code ec;
  std::filesystem::create_directories(scratch_root, ec);
  std::filesystem::remove(index, ec);
  std::filesystem::create_directory_symlink(std::filesystem::absolute(dir), index, ec);
  if (ec)
    return make_error(ErrorCode::io,
                      index.string() + ": cannot link the scratch folder: " + ec.message());
  return {};
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

ProcessRunner::ProcessRunner(ProcessRunnerConfig config, JobIsolation isolation)
    : config_(std::move(config)), isolation_(std::move(isolation)) {}

Status ProcessRunner::sandbox_ready() {
  std::lock_guard lock(probe_mutex_);
  if (!probe_)
    probe_ = probe_sandbox(config_.sandbox);
  return *probe_;
}

Status ProcessRunner::run_in_sandbox(const RebuildSpec& spec, const std::filesystem::path& dir,
                                     SpawnRequest& request, int status_fd) const {
  auto plan = plan_sandbox(config_.sandbox, sandbox_job(spec, dir, request.working_dir, request),
                           isolation_.verifier_paths);
  if (!plan)
    return plan.error();
  if (plan->as_root) {
    if (auto given = give_to_job_user({dir / "src", dir / "in", dir / "out"}, config_.sandbox);
        !given)
      return given;
  }
  plan->status_fd = status_fd;
  auto argv = sandbox_argv(*plan);
  request.executable = argv.front();
  request.args.assign(argv.begin() + 1, argv.end());
  request.inherited_fds = {status_fd};
  return {};
}

SpaceWatch ProcessRunner::space_for(const std::filesystem::path& work_dir) const {
  std::vector<std::filesystem::path> paths = {work_dir, config_.scratch_root};
  paths.insert(paths.end(), config_.space.paths.begin(), config_.space.paths.end());
  return SpaceWatch(paths, config_.space);
}

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
  if (auto space = space_for(*dir).check_before_start(); !space)
    return space;
  if (!isolation_.trust_job_code) {
    if (auto ready = sandbox_ready(); !ready)
      return ready;
  }
  std::error_code ec;
  std::filesystem::remove_all(*dir, ec);
  std::filesystem::create_directories(*dir, ec);
  if (ec)
    return make_error(ErrorCode::provision,
                      dir->string() + ": cannot create the scratch folder: " + ec.message());
  if (auto s = checkout_code(spec, *dir / "src", config_.path_env); !s)
    return s;
  if (auto inside = resolved_job_workdir(spec, *dir / "src"); !inside)
    return inside.error();
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
  if (auto space = space_for(*dir).check_before_start(); !space)
    return space.error();
  if (auto inside = resolved_job_workdir(spec, *dir / "src"); !inside)
    return inside.error();
  const auto workdir = job_workdir(spec, *dir / "src");
  auto exe = entrypoint_executable(spec, config_.path_env, workdir);
  if (!exe)
    return exe.error();
  if (auto s = write_contract_inputs(spec, *dir / "in"); !s)
    return s.error();
  std::filesystem::create_directories(*dir / "out", ec);
  if (ec)
    return make_error(ErrorCode::io, (*dir / "out").string() + ": cannot create: " + ec.message());

  const auto scratch = host_path(*dir);
  SpawnRequest request = job_request(spec, scratch, workdir, *exe, config_);
  JobRecord record;
  record.log_cap_bytes = config_.job_log_cap_bytes;
  record.host_oom_kills = host_oom_kills();
  record.sandboxed = !isolation_.trust_job_code;
  UniqueFd sandbox_status;  // the daemon's copy: closed once the job has its own
  if (record.sandboxed) {
    auto fd = open_sandbox_status(scratch);
    if (!fd)
      return fd.error();
    sandbox_status = std::move(*fd);
    if (auto s = run_in_sandbox(spec, scratch, request, sandbox_status.get()); !s)
      return s.error();
  }
  if (config_.cgroups) {
    auto cgroup = JobCgroup::create(spec.rebuild_id, {config_.max_pids, config_.memory_bytes});
    if (!cgroup)
      return cgroup.error();
    record.cgroup = std::move(*cgroup);
    record.max_pids = record.cgroup.counts_pids() ? config_.max_pids : 0;
    record.memory_bytes = record.cgroup.counts_memory() ? config_.memory_bytes : 0;
  }
  request.cgroup_v2 = record.cgroup.v2_dir();
  request.cgroups_v1 = record.cgroup.v1_dirs();
  record.deadline_unix_ms =
      now_unix_ms() + std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout).count();
  auto supervisor = spawn_supervised(request);
  if (!supervisor) {
    record.cgroup.remove();
    return supervisor.error();
  }
  record.supervisor = *supervisor;
  if (auto s = write_record(*dir, record); !s) {
    end_job(record);
    return s.error();
  }
  if (auto linked = link_from_scratch_root(*dir, config_.scratch_root, spec.rebuild_id); !linked) {
    end_job(record);
    return linked.error();
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
  const JobProcesses processes = processes_of(*record);
  SpaceWatch space = space_for(job.work_dir);
  LogFollower log(job.work_dir / "job.log", record->log_cap_bytes);
  JobExit exit;
  std::optional<std::int64_t> term_sent_ms;
  bool kill_sent = false;
  std::optional<int> supervisor_status;
  while (true) {
    log.drain(logs);
    space.sample();
    if ((supervisor_status = supervisor_ended(supervisor)))
      break;
    const std::int64_t now = now_unix_ms();
    if (!term_sent_ms && now >= record->deadline_unix_ms) {
      exit.timed_out = true;
      term_sent_ms = now;
      processes.signal(SIGTERM);
    } else if (term_sent_ms && !kill_sent && now >= *term_sent_ms + config_.kill_grace.count()) {
      kill_sent = true;
      processes.kill_all(kKillWait);
    }
    std::this_thread::sleep_for(config_.poll_interval);
  }
  space.sample();
  read_cgroup_events(*record, exit);
  end_job(*record);
  log.drain(logs);
  const SupervisorReport report = read_supervisor_report(job.work_dir / "exit_status");
  if (report.setup_errno) {
    return make_error(ErrorCode::provision,
                      "the job could not join its cgroup, so it was not run: " +
                          std::string(std::strerror(*report.setup_errno)));
  }
  if (!report.exit_status) {
    return make_error(
        ErrorCode::runner_lost,
        "the job's supervisor (pid " + std::to_string(supervisor.pid) + ") ended " +
            (*supervisor_status > 128 ? "by signal " + std::to_string(*supervisor_status - 128)
                                      : std::string("without a trace")) +
            " before it could report the job's end; " + end_orphaned(*record, job.work_dir));
  }
  exit.exit_code = *report.exit_status;
  exit.job_seconds = report.job_seconds;
  exit.log_tail = job_output_tail(job, *record, report, config_.log_cap_bytes);
  if (record->sandboxed && !exit.timed_out && exit.exit_code == 1 &&
      !sandbox_job_exit(job.work_dir / "sandbox.json")) {
    return make_error(ErrorCode::provision,
                      "the job's sandbox could not be set up, so the job never ran: " +
                          std::string(last_lines(exit.log_tail, 5)));
  }
  if (!record->sandboxed) {
    exit.log_tail +=
        "[reverify] runner.trust_job_code is true: this job ran unisolated, as the daemon's "
        "user, seeing what the daemon sees\n";
  }
  // In a sandbox the kernel ended the leftovers with the PID namespace; what the supervisor
  // reaped then includes bubblewrap's own init, so it counts nothing of the job's.
  if (report.leftovers_killed > 0 && !record->sandboxed)
    exit.log_tail += leftovers_note(report.leftovers_killed, record->max_pids);
  exit.log_tail += unenforced_bounds(config_, record->cgroup);
  if (!record->cgroup.counts_memory())
    read_host_oom(*record, exit);
  std::optional<LogWriteError> log_error;
  if (report.log_errno)
    log_error =
        LogWriteError{*report.log_errno, job.work_dir / "job.log", report.log_bytes_before_error};
  if (auto disk = space.fault(exit.log_tail, log_error))
    exit.platform_fault = std::move(disk);
  return exit;
}

Result<JobOutputs> ProcessRunner::collect(const JobHandle& job, const std::filesystem::path& dest) {
  return collect_outputs(job.work_dir / "out", dest);
}

void ProcessRunner::cancel(const JobHandle& job) {
  const auto record = read_record(job.work_dir);
  if (!record || !is_alive(record->supervisor))
    return;
  const JobProcesses processes = processes_of(*record);
  processes.signal(SIGTERM);
  const auto kill_at = std::chrono::steady_clock::now() + config_.kill_grace;
  while (!supervisor_ended(record->supervisor) && std::chrono::steady_clock::now() < kill_at) {
    std::this_thread::sleep_for(config_.poll_interval);
  }
  processes.kill_all(kKillWait);
}

void ProcessRunner::cleanup(const JobHandle& job) {
  if (const auto record = read_record(job.work_dir)) {
    cancel(job);
    end_job(*record);
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
