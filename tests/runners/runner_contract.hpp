#pragma once
// The contract every Runner keeps (runners/runner.hpp), written once and run against each runner
// by its own integration test (process_runner_itest, docker_runner_itest,
// kubernetes_runner_itest), which supplies a ContractHarness: how to make a runner and a job that
// acts out each script. What is particular to one runner (environment, binds, group kills, API
// requests) stays in that runner's own test.

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "runners/runner.hpp"

namespace reverify::test {

// What the job does.
enum class JobScript {
  succeeds,           // writes a valid result.json (accuracy 0.9609), logs `done_line`, exits 0
  exits_3,            // logs `failure_line` and exits 3
  runs_past_timeout,  // sleeps beyond the spec's timeout
  runs_a_while,       // succeeds after a few seconds (long enough to restart the runner)
};

class ContractHarness {
 public:
  virtual ~ContractHarness() = default;
  // A new runner on the same services: making a second one is how a daemon restart looks.
  virtual std::unique_ptr<Runner> make_runner() = 0;
  // A spec whose job acts out `script`, under a rebuild id of its own.
  virtual RebuildSpec spec(JobScript script) = 0;
  // Where collect() may copy outputs.
  virtual std::filesystem::path collect_dir() = 0;
  // After cleanup: checks that what this runner leaves besides the job itself is gone too
  // (a scratch link, a container that exited, the outputs on a volume).
  virtual void expect_no_traces(const JobHandle& job) = 0;

  std::string done_line;     // in the log of a job that succeeds
  std::string failure_line;  // in the log of a job that exits 3
};

namespace contract_detail {

inline JobHandle started(Runner& runner, const RebuildSpec& spec) {
  const auto prepared = runner.prepare(spec);
  REQUIRE_MESSAGE(prepared.ok(), (prepared.ok() ? "" : prepared.error().to_string()));
  auto job = runner.start(spec);
  REQUIRE_MESSAGE(job.ok(), (job.ok() ? "" : job.error().to_string()));
  CHECK(job->rebuild_id == spec.rebuild_id);
  CHECK(job->runner_kind == runner.kind());
  return *job;
}

// cleanup() leaves no trace the runner could find again, and may be called twice.
inline void expect_cleaned_up(ContractHarness& h, Runner& runner, const JobHandle& job) {
  runner.cleanup(job);
  runner.cleanup(job);
  auto found = runner.find_running(job.rebuild_id);
  REQUIRE_MESSAGE(found.ok(), (found.ok() ? "" : found.error().to_string()));
  CHECK_FALSE(found->has_value());
  CHECK_FALSE(std::filesystem::exists(job.work_dir));
  h.expect_no_traces(job);
}

}  // namespace contract_detail

// Runs each case of the contract as a doctest SUBCASE; call it from one TEST_CASE per runner
// with a harness made inside that TEST_CASE (each subcase gets a fresh one).
inline void check_runner_contract(ContractHarness& h) {
  using namespace contract_detail;
  SUBCASE("prepare, start, wait (logs streamed), collect, cleanup: nothing is left") {
    auto runner = h.make_runner();
    const RebuildSpec spec = h.spec(JobScript::succeeds);
    const JobHandle job = started(*runner, spec);
    std::string streamed;
    auto exit = runner->wait(job, [&](std::string_view chunk) { streamed.append(chunk); });
    REQUIRE_MESSAGE(exit.ok(), (exit.ok() ? "" : exit.error().to_string()));
    CHECK(exit->exit_code == 0);
    CHECK_FALSE(exit->timed_out);
    CHECK(job_exit_status(*exit).ok());
    CHECK(streamed.find(h.done_line) != std::string::npos);
    CHECK(exit->log_tail.find(h.done_line) != std::string::npos);
    auto outputs = runner->collect(job, h.collect_dir());
    REQUIRE_MESSAGE(outputs.ok(), (outputs.ok() ? "" : outputs.error().to_string()));
    CHECK(outputs->primary_name == "accuracy");
    CHECK(outputs->primary_value == doctest::Approx(0.9609));
    CHECK(std::filesystem::exists(h.collect_dir() / "result.json"));
    expect_cleaned_up(h, *runner, job);
  }
  SUBCASE("a job that exits 3 is error:job with its status and the end of its log") {
    auto runner = h.make_runner();
    const JobHandle job = started(*runner, h.spec(JobScript::exits_3));
    auto exit = runner->wait(job, {});
    REQUIRE_MESSAGE(exit.ok(), (exit.ok() ? "" : exit.error().to_string()));
    CHECK(exit->exit_code == 3);
    CHECK_FALSE(exit->timed_out);
    const auto status = job_exit_status(*exit);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::job);
    CHECK(status.error().message.find("exited with status 3") != std::string::npos);
    CHECK(status.error().message.find(h.failure_line) != std::string::npos);
    expect_cleaned_up(h, *runner, job);
  }
  SUBCASE("a job past its timeout is stopped and reported as timed out") {
    auto runner = h.make_runner();
    const JobHandle job = started(*runner, h.spec(JobScript::runs_past_timeout));
    auto exit = runner->wait(job, {});
    REQUIRE_MESSAGE(exit.ok(), (exit.ok() ? "" : exit.error().to_string()));
    CHECK(exit->timed_out);
    const auto status = job_exit_status(*exit);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::job);
    CHECK(status.error().message.find("timeout") != std::string::npos);
    expect_cleaned_up(h, *runner, job);
  }
  SUBCASE("a runner destroyed mid-run is replaced by one that finds the job by label") {
    const RebuildSpec spec = h.spec(JobScript::runs_a_while);
    JobHandle first;
    {
      auto runner = h.make_runner();
      first = started(*runner, spec);
    }  // the daemon's runner goes away; the job does not
    auto again = h.make_runner();
    auto none = again->find_running(spec.rebuild_id + "-other");
    REQUIRE(none.ok());
    CHECK_FALSE(none->has_value());
    auto found = again->find_running(spec.rebuild_id);
    REQUIRE_MESSAGE(found.ok(), (found.ok() ? "" : found.error().to_string()));
    REQUIRE(found->has_value());
    const JobHandle job = **found;
    CHECK(job.rebuild_id == first.rebuild_id);
    CHECK(job.runner_kind == first.runner_kind);
    CHECK(job.ref == first.ref);
    CHECK(job.work_dir == first.work_dir);
    auto exit = again->wait(job, {});
    REQUIRE_MESSAGE(exit.ok(), (exit.ok() ? "" : exit.error().to_string()));
    CHECK(exit->exit_code == 0);
    CHECK(exit->log_tail.find(h.done_line) != std::string::npos);
    CHECK(again->collect(job, h.collect_dir()).ok());
    expect_cleaned_up(h, *again, job);
  }
}

}  // namespace reverify::test
