#pragma once
// Helpers shared by the runner integration tests: a manifest for the test trainer
// (fixtures/trainer.py), the trainer acting out the runner contract's scripts, and running one
// rebuild through a Runner end to end.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runners/runner.hpp"
#include "tests/runners/runner_contract.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"

namespace reverify::test {

// A manifest whose entrypoint is the test trainer, acting out `behaviour`.
inline Manifest trainer_manifest(const std::string& behaviour) {
  Manifest m;
  m.model = "runner-test";
  m.version = "1";
  m.owner = "team-test";
  m.code.commit = std::string(40, '0');
  m.environment = Environment{};
  m.environment->env = {{"TRAINER_BEHAVIOUR", behaviour}, {"PYTHONHASHSEED", "0"}};
  m.seeds = {{"numpy", 42}};
  m.config = nlohmann::json{{"lr", 0.1}};
  m.run.entrypoint = {"python3", "trainer.py"};
  m.run.source_date_epoch = 1793000000;
  m.evaluation.primary = {"accuracy", 0.96, true};
  return m;
}

// The contract's harness for runners that run the test trainer (process, docker).
class TrainerHarness : public ContractHarness {
 protected:
  TrainerHarness() {
    done_line = "trainer: done";
    failure_line = "failing on purpose";
  }
  // `spec` (a trainer_manifest) acting out `script`, as rebuild `id_prefix` + its behaviour.
  static RebuildSpec acting_out(RebuildSpec spec, JobScript script, const std::string& id_prefix) {
    auto& env = spec.manifest.environment->env;
    switch (script) {
      case JobScript::succeeds:
        env["TRAINER_BEHAVIOUR"] = "ok";
        break;
      case JobScript::exits_3:
        env["TRAINER_BEHAVIOUR"] = "exit3";
        break;
      case JobScript::runs_past_timeout:
        env["TRAINER_BEHAVIOUR"] = "sleep";
        spec.timeout = std::chrono::seconds(3);
        break;
      case JobScript::runs_a_while:
        env["TRAINER_BEHAVIOUR"] = "slow";
        env["TRAINER_SLEEP_S"] = "3";
        break;
    }
    spec.rebuild_id = id_prefix + env["TRAINER_BEHAVIOUR"];
    return spec;
  }
};

struct RunOutcome {
  Result<JobExit> exit = make_error(ErrorCode::job, "not run");
  std::string streamed;  // what the LogSink received
};

// prepare -> start -> wait, as the pipeline runs a rebuild.
inline RunOutcome start_and_wait(Runner& runner, const RebuildSpec& spec, JobHandle& handle) {
  RunOutcome outcome;
  const auto prepared = runner.prepare(spec);
  REQUIRE_MESSAGE(prepared.ok(), (prepared.ok() ? "" : prepared.error().to_string()));
  auto started = runner.start(spec);
  REQUIRE_MESSAGE(started.ok(), (started.ok() ? "" : started.error().to_string()));
  handle = *started;
  outcome.exit =
      runner.wait(handle, [&](std::string_view chunk) { outcome.streamed.append(chunk); });
  return outcome;
}

// A job that ran into one of its own bounds (pids, memory): its exit names the bound first, the
// error is the job's (code job, never infra), and the platform is not blamed.
inline void expect_bound_hit(const JobExit& exit, const std::string& words) {
  REQUIRE(exit.limit_hit.has_value());
  CHECK(exit.limit_hit->find(words) != std::string::npos);
  CHECK_FALSE(exit.platform_fault.has_value());
  const auto status = job_exit_status(exit);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::job);
  CHECK(status.error().message.find(words) != std::string::npos);
}

}  // namespace reverify::test
