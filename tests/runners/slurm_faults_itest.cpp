// The slurm runner's lifecycle faults on the real cluster of the `slurm` fixture, each ending as
// the verdict docs/runners.md promises, with nothing left in squeue: the node set down mid-job
// and a job preempted by a higher-priority partition (platform faults: error:infra), a job
// cancelled from outside (error:runner-lost), Slurm's time limit and memory limit (the job's own
// bounds: error:job; the verdict's class is job_exit_status()'s code, as the pipeline draws it), a
// job pending with Slurm's reason (reported while it waits) and one pending
// past max_pending (error:provision, cancelled). These take the whole node, so the fixture runs
// them alone (RESOURCE_LOCK slurm_cluster in tests/runners/tests.cmake).
#include <future>

#include "slurm_test_support.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

// wait_reporting() on a thread of its own; what it reported and how it ended.
struct Waiting {
  std::mutex mutex;
  std::vector<JobStanding> standings;
  std::future<Result<JobExit>> exit;

  Waiting(Runner& runner, const JobHandle& job) {
    exit = std::async(std::launch::async, [this, &runner, job] {
      return runner.wait_reporting(job, {}, [this](const JobStanding& standing) {
        std::lock_guard lock(mutex);
        standings.push_back(standing);
      });
    });
  }
  // A report in this state (and with this reason, when one is given).
  std::optional<JobStanding> saw(JobQueueState state, const std::string& reason = "") {
    std::lock_guard lock(mutex);
    for (const auto& standing : standings) {
      if (standing.state == state && (reason.empty() || standing.reason == reason))
        return standing;
    }
    return std::nullopt;
  }
};

// Cancels the fixture's jobs when it goes out of scope.
struct JobsCancelled {
  const SlurmFixture& f;
  ~JobsCancelled() { cancel_jobs(f.name_prefix(), f.tmp.path); }
};

// Another job takes both CPUs of the node (for 300 s, or until it is cancelled) and runs; its id.
std::string node_taken(const SlurmFixture& f) {
  const std::string submitted =
      slurm_command({"sbatch", "--parsable", "--job-name=" + f.name_prefix() + "blocker",
                     "--cpus-per-task=2", "--mem=64M", "--output=/dev/null", "--wrap=sleep 300"},
                    f.tmp.path);
  const std::string id = submitted.substr(0, submitted.find_first_of(";\n"));
  REQUIRE(eventually([&] { return job_field(id, "JobState", f.tmp.path) == "RUNNING"; }));
  return id;
}

// The trainer printed its first line: the job runs python, not just its batch script.
bool trainer_started(const JobHandle& job) {
  return read_file(job.work_dir / "job.log").find("trainer-first-instruction") != std::string::npos;
}

// Starts `spec` and waits until its trainer runs.
JobHandle started_and_running(Runner& runner, const RebuildSpec& spec) {
  REQUIRE(runner.prepare(spec).ok());
  auto job = runner.start(spec);
  REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.error().message));
  REQUIRE_MESSAGE(eventually([&] { return trainer_started(*job); }), "the trainer never started");
  return *job;
}

// The error class the pipeline makes the verdict's (error:infra, error:job: job_exit_status()).
ErrorCode class_of(const JobExit& exit) {
  const auto status = job_exit_status(exit);
  REQUIRE_FALSE(status.ok());
  return status.error().code;
}

void expect_nothing_queued(const SlurmFixture& f) {
  CHECK(eventually([&] { return queued_jobs("rvtest-", f.tmp.path).empty(); }, 30));
}

}  // namespace

TEST_CASE("a node set down mid-job is a platform fault (error:infra), never the model's") {
  SlurmFixture f("slow", "sfn-");
  f.spec.manifest.environment->env["TRAINER_SLEEP_S"] = "300";
  SlurmRunner runner(f.config);
  const JobHandle job = started_and_running(runner, f.spec);
  slurm_command({"scontrol", "update", "nodename=" + f.cluster["SLURM_NODE"], "state=down",
                 "reason=reverify-test-node-down"},
                f.tmp.path);
  auto exit = runner.wait(job, {});
  // The node comes back by itself (ReturnToService=2: its slurmd still answers); resume it
  // should it not have yet.
  (void)run_program({"scontrol", "update", "nodename=" + f.cluster["SLURM_NODE"], "state=resume"},
                    f.tmp.path);
  REQUIRE_MESSAGE(exit.ok(), (exit.ok() ? "" : exit.error().message));
  REQUIRE(exit->platform_fault.has_value());
  CHECK(exit->platform_fault->evidence["kind"] == "node_failure");
  CHECK(exit->platform_fault->evidence["state"] == "NODE_FAIL");
  CHECK(class_of(*exit) == ErrorCode::infra);
  CHECK(job_exit_status(*exit).error().message.find("failed while it ran") != std::string::npos);
  runner.cleanup(job);
  expect_nothing_queued(f);
  CHECK(eventually([&] {
    return slurm_command({"sinfo", "--noheader", "--format=%T"}, f.tmp.path) == "idle\n";
  }));
}

TEST_CASE("a job preempted by a higher-priority partition is a platform fault") {
  SlurmFixture f("slow", "sfp-");
  f.spec.manifest.environment->env["TRAINER_SLEEP_S"] = "300";
  SlurmRunner runner(f.config);
  const JobHandle job = started_and_running(runner, f.spec);
  // Both CPUs of the node, in the partition whose PriorityTier preempts ours.
  const std::string urgent =
      slurm_command({"sbatch", "--parsable", "--partition=" + f.cluster["SLURM_URGENT_PARTITION"],
                     "--job-name=" + f.name_prefix() + "urgent", "--cpus-per-task=2", "--mem=64M",
                     "--output=/dev/null", "--wrap=sleep 2"},
                    f.tmp.path);
  auto exit = runner.wait(job, {});
  REQUIRE_MESSAGE(exit.ok(), (exit.ok() ? "" : exit.error().message));
  REQUIRE(exit->platform_fault.has_value());
  CHECK(exit->platform_fault->evidence["kind"] == "preempted");
  CHECK(class_of(*exit) == ErrorCode::infra);
  CHECK(exit->log_tail.find("DUE TO PREEMPTION") != std::string::npos);
  runner.cleanup(job);
  expect_nothing_queued(f);
}

TEST_CASE("a job cancelled outside reverify is error:runner-lost") {
  SlurmFixture f("slow", "sfc-");
  f.spec.manifest.environment->env["TRAINER_SLEEP_S"] = "300";
  SlurmRunner runner(f.config);
  const JobHandle job = started_and_running(runner, f.spec);
  slurm_command({"scancel", job.ref}, f.tmp.path);
  auto exit = runner.wait(job, {});
  REQUIRE_FALSE(exit.ok());
  CHECK(exit.error().code == ErrorCode::runner_lost);
  CHECK(exit.error().message.find("cancelled outside reverify") != std::string::npos);
  runner.cleanup(job);
  expect_nothing_queued(f);
}

TEST_CASE("Slurm's time limit ends the job as timed out: error:job") {
  SlurmFixture f("slow", "sft-");
  f.spec.manifest.environment->env["TRAINER_SLEEP_S"] = "300";
  // --time=1 (a minute, Slurm's smallest) under a model timeout of ten: Slurm's limit ends it.
  f.config.models[f.spec.manifest.model].time_limit = std::chrono::seconds(60);
  f.spec.timeout = std::chrono::seconds(600);
  SlurmRunner runner(f.config);
  const JobHandle job = started_and_running(runner, f.spec);
  CHECK(job_field(job.ref, "TimeLimit", f.tmp.path) == "00:01:00");
  auto exit = runner.wait(job, {});
  REQUIRE_MESSAGE(exit.ok(), (exit.ok() ? "" : exit.error().message));
  CHECK(exit->timed_out);
  CHECK_FALSE(exit->platform_fault.has_value());
  CHECK(exit->log_tail.find("at its time limit (TIMEOUT)") != std::string::npos);
  CHECK(class_of(*exit) == ErrorCode::job);
  REQUIRE(exit->job_seconds.has_value());
  CHECK(*exit->job_seconds >= 60);
  runner.cleanup(job);
  expect_nothing_queued(f);
}

TEST_CASE("a job over its --mem is ended by Slurm: its own memory bound, error:job") {
  SlurmFixture f("eat_memory", "sfo-");
  f.config.placement.memory = "200M";
  SlurmRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().message));
  expect_bound_hit(*outcome.exit, "the job hit its memory limit of 200M");
  CHECK(outcome.exit->exit_code != 0);
  CHECK(class_of(*outcome.exit) == ErrorCode::job);
  runner.cleanup(job);
  expect_nothing_queued(f);
}

TEST_CASE("a pending job reports its partition and Slurm's reason, then runs") {
  SlurmFixture f("ok", "sfq-");
  SlurmRunner runner(f.config);
  // The whole node taken, so our job waits for Resources.
  const std::string blocker_id = node_taken(f);
  REQUIRE(runner.prepare(f.spec).ok());
  auto job = runner.start(f.spec);
  REQUIRE(job.ok());
  Waiting waiting(runner, *job);
  // Should a check fail below, the jobs go first, so that the wait above ends.
  const JobsCancelled cancel_first{f};
  // Slurm gives the reason once its scheduler looked at the job ("None" until then).
  REQUIRE(eventually([&] { return waiting.saw(JobQueueState::pending, "Resources").has_value(); }));
  const JobStanding pending = *waiting.saw(JobQueueState::pending, "Resources");
  CHECK(pending.queue == f.cluster["SLURM_PARTITION"]);
  CHECK(pending.text() == "pending in partition debug (Resources)");
  slurm_command({"scancel", blocker_id}, f.tmp.path);
  auto exit = waiting.exit.get();
  REQUIRE(exit.ok());
  CHECK(exit->exit_code == 0);
  const auto running = waiting.saw(JobQueueState::running);
  REQUIRE(running.has_value());
  CHECK(running->text() == "running in partition debug on " + f.cluster["SLURM_NODE"]);
  runner.cleanup(*job);
  expect_nothing_queued(f);
}

TEST_CASE("a job pending past max_pending is cancelled: error:provision with Slurm's reason") {
  SlurmFixture f("ok", "sfw-");
  f.config.max_pending = std::chrono::seconds(3);
  SlurmRunner runner(f.config);
  // The whole node taken for longer than max_pending.
  const std::string blocker_id = node_taken(f);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  slurm_command({"scancel", blocker_id}, f.tmp.path);
  REQUIRE_FALSE(outcome.exit.ok());
  CHECK(outcome.exit.error().code == ErrorCode::provision);
  CHECK(outcome.exit.error().message.find("runner.slurm.max_pending") != std::string::npos);
  CHECK(outcome.exit.error().message.find("Reason=") != std::string::npos);
  runner.cleanup(job);
  expect_nothing_queued(f);
}
