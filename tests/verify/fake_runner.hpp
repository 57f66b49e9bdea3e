#pragma once
// A Runner that records what the pipeline asked of it and returns scripted results. Its collect()
// writes real output files (predictions .npy) so the pipeline's own hashing and reading run. A
// job "left running by a previous daemon" (`running`) is what find_running() finds after a
// restart.

#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/predictions.hpp"
#include "runners/runner.hpp"

namespace reverify::test {

class FakeRunner final : public Runner {
 public:
  std::vector<std::string> calls;    // "prepare", "start", "find_running", "wait", "collect", ...
  std::vector<RebuildSpec> started;  // specs given to start(), or of the job find_running() found
  Status prepare_status;             // returned by prepare()
  std::optional<Error> start_error;  // start() fails with it
  std::optional<Error> wait_error;   // wait() fails with it
  JobExit exit{0, false, "trained\n", 1.25};  // wait() returns it
  std::optional<Error> collect_error;         // collect() fails with it
  std::optional<RebuildSpec> running;         // a job a previous daemon started, still running
  std::optional<Error> find_error;            // find_running() fails with it
  // The primary value the job "computed", from the spec (seed override for calibration).
  std::function<double(const RebuildSpec&)> primary = [](const RebuildSpec&) { return 0.96; };
  std::vector<double> predictions{0.1, 0.9, 0.8, 0.2};
  std::vector<double> steps;  // "loss" step values, when not empty
  bool trusted = false;       // job_code_trusted()
  // Where the job "stands", reported in this order by wait_reporting() before it waits; then
  // while_waiting runs (a test looks at the store while the job is still running).
  std::vector<JobStanding> standings;
  std::function<void()> while_waiting;

  RunnerKind kind() const override { return RunnerKind::process; }
  bool job_code_trusted() const override { return trusted; }
  Status prepare(const RebuildSpec&) override {
    calls.push_back("prepare");
    return prepare_status;
  }
  Result<JobHandle> start(const RebuildSpec& spec) override {
    calls.push_back("start");
    started.push_back(spec);
    if (start_error)
      return *start_error;
    return handle_for(spec);
  }
  Result<JobExit> wait(const JobHandle&, const LogSink& logs) override {
    calls.push_back("wait");
    if (wait_error)
      return *wait_error;
    logs(exit.log_tail);
    return exit;
  }
  Result<JobExit> wait_reporting(const JobHandle& job, const LogSink& logs,
                                 const StandingSink& standing) override {
    for (const auto& now : standings)
      standing(now);
    if (while_waiting)
      while_waiting();
    return wait(job, logs);
  }
  Result<JobOutputs> collect(const JobHandle&, const std::filesystem::path& dest) override {
    calls.push_back("collect");
    if (collect_error)
      return *collect_error;
    JobOutputs out;
    out.primary_name = "accuracy";
    out.primary_value = primary(started.back());
    out.out_dir = dest;
    if (!steps.empty()) {
      out.steps_metric = "loss";
      out.steps_values = steps;
    }
    Predictions p;
    p.rows = predictions.size();
    p.values = predictions;
    out.predictions = dest / "predictions.npy";
    if (Status s = write_npy(*out.predictions, p); !s.ok())
      return s.error();
    return out;
  }
  void cleanup(const JobHandle&) override { calls.push_back("cleanup"); }
  void cancel(const JobHandle&) override { calls.push_back("cancel"); }
  Result<std::optional<JobHandle>> find_running(const std::string& rebuild_id) override {
    calls.push_back("find_running");
    if (find_error)
      return *find_error;
    if (!running || running->rebuild_id != rebuild_id)
      return std::optional<JobHandle>{};
    started.push_back(*running);
    return std::optional<JobHandle>{handle_for(*running)};
  }

 private:
  static JobHandle handle_for(const RebuildSpec& spec) {
    return JobHandle{spec.rebuild_id, RunnerKind::process, "job-" + spec.rebuild_id, spec.work_dir};
  }
};

// A continuous metric, 0.950..0.958 by seed (sd about 0.003). The millionths keep every value
// distinct: values that repeat would make it a discrete metric on a 0.002 grain.
inline double continuous_accuracy(const RebuildSpec& spec) {
  const auto seed = spec.seed_override.value_or(0);
  return 0.95 + 0.002 * static_cast<double>(seed % 5) + 1e-6 * static_cast<double>(seed);
}

}  // namespace reverify::test
