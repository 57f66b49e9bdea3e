#pragma once
// The `process` runner (the embedded default, no infrastructure): a fresh scratch folder per
// rebuild, a git checkout of code.commit, the job run as its own process group with a cleared
// environment, below a supervisor that is its subreaper, in cgroups of its own where the host
// has them (job_cgroup.hpp: every process found and killed at the end and at a timeout, pids and
// memory bounded), with rlimits on open files and processes. The job runs in a bubblewrap
// sandbox (job_sandbox.hpp) that shows it only its checkout and inputs (read-only), its out
// folder and a private /tmp, in PID and network namespaces of its own: the supervisor starts
// bwrap, bwrap starts the job. Only with runner.trust_job_code does it run unisolated, as the
// daemon's user; a host where the sandbox cannot work refuses jobs otherwise (error:provision).
// The space it needs is checked before it starts and watched while it runs (space_watch.hpp).
// Scratch layout (scratch_dir() in job_contract.hpp):
//   src/ the checkout    in/ config.json, seeds.json    out/ $REVERIFY_OUT
//   job.log (stdout+stderr, capped: job_log.hpp)    job.json (pid, start time, deadline, log cap,
//   cgroups and limits, sandboxed)    exit_status (the supervisor's report)    job.tail
//   (reserved: the job's latest output when the disk refused job.log)    sandbox.json (bwrap's
//   status: the job's exit, when it ran)
// The job sees src/, in/ and out/ only; job.json is what find_running() reads after a daemon
// restart.

#include <mutex>
#include <optional>

#include "runners/process_spawn.hpp"
#include "runners/runner.hpp"
#include "runners/runner_config.hpp"
#include "runners/space_watch.hpp"

namespace reverify {

class ProcessRunner final : public Runner {
 public:
  explicit ProcessRunner(ProcessRunnerConfig config, JobIsolation isolation = {});

  RunnerKind kind() const override { return RunnerKind::process; }
  bool job_code_trusted() const override { return isolation_.trust_job_code; }
  // Checks the code out into a fresh scratch folder (see checkout_code() for the errors) and
  // resolves the entrypoint's argv[0] on the configured PATH; error:infra first when the space
  // the job needs is short or read-only; error:provision when the job must be sandboxed and this
  // host cannot (probe_sandbox(), tried once per runner).
  Status prepare(const RebuildSpec& spec) override;
  // Runs the job in the checkout prepare() made (error:provision when there is none, or when its
  // sandbox would show it one of the verifier's own files; a scratch folder a job already started
  // in is a conflict until prepare() makes it fresh again).
  Result<JobHandle> start(const RebuildSpec& spec) override;
  // At the timeout (and in cancel()) every process of the job gets SIGTERM, then SIGKILL after
  // kill_grace. A supervisor that ends without reporting the job's end is error:runner-lost; a
  // sandbox that could not be set up (the job never ran) is error:provision.
  Result<JobExit> wait(const JobHandle& job, const LogSink& logs) override;
  // dest must lie outside the scratch folder, which cleanup() deletes.
  Result<JobOutputs> collect(const JobHandle& job, const std::filesystem::path& dest) override;
  void cleanup(const JobHandle& job) override;
  void cancel(const JobHandle& job) override;
  // Looks in scratch_root/<rebuild id> (a link to RebuildSpec::work_dir when the caller chose the
  // folder): a job that was started there and not cleaned up yet,
  // running or already ended (wait() then returns its recorded exit status at once).
  Result<std::optional<JobHandle>> find_running(const std::string& rebuild_id) override;

 private:
  // The job's folder, the scratch root and config.space.paths.
  SpaceWatch space_for(const std::filesystem::path& work_dir) const;
  // probe_sandbox(), once: a host that cannot sandbox does not learn to between jobs.
  Status sandbox_ready();
  // Makes `request` start bwrap with the job inside (its scratch folder `dir`); bwrap's status
  // goes to status_fd.
  Status run_in_sandbox(const RebuildSpec& spec, const std::filesystem::path& dir,
                        SpawnRequest& request, int status_fd) const;

  ProcessRunnerConfig config_;
  JobIsolation isolation_;
  std::mutex probe_mutex_;  // guards probe_: prepare() runs on several worker threads
  std::optional<Status> probe_;
};

}  // namespace reverify
