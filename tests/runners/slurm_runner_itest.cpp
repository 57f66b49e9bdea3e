// The slurm runner against the real one-node cluster of the `slurm` CTest fixture
// (tests/services/slurm_up.sh: slurmctld, slurmd and munged from Debian, two fake GPUs of GRES
// type vgpu): the runner contract (runner_contract.hpp), then the GPU count as recorded (asked
// for, seen by the job, refused before submission when the partition cannot offer it, a platform
// fault when the allocation hands over another number), the job's environment, and where a
// pending job stands. The lifecycle faults (node down, preemption, outside cancel, time and
// memory limits) are in slurm_faults_itest.cpp. Every case ends with nothing of its own left in
// squeue.
#include <set>

#include "slurm_test_support.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

// Each subcase gets a fresh fixture (and so fresh rebuild ids: doctest reruns the test case).
class SlurmHarness final : public TrainerHarness {
 public:
  std::unique_ptr<Runner> make_runner() override {
    return std::make_unique<SlurmRunner>(fixture_.config);
  }
  RebuildSpec spec(JobScript script) override {
    return acting_out(fixture_.spec, script, "slc-" + std::to_string(++made_) + "-");
  }
  std::filesystem::path collect_dir() override { return fixture_.tmp.path / "collected"; }
  void expect_no_traces(const JobHandle& job) override {
    CHECK(queued_jobs(slurm_job_name(fixture_.config, job.rebuild_id), fixture_.tmp.path).empty());
  }

 private:
  SlurmFixture fixture_{"ok", "slc-"};
  int made_ = 0;
};

// What the trainer saw of its environment (it writes env.json into its out folder).
nlohmann::json job_env(const JobHandle& job) {
  return nlohmann::json::parse(read_file(job.work_dir / "out" / "env.json"));
}

}  // namespace

TEST_CASE("the runner contract, on the slurm runner") {
  SlurmHarness harness;
  check_runner_contract(harness);
}

TEST_CASE("a rebuild asks Slurm for the recorded GPU count and its job sees that many devices") {
  SlurmFixture f("ok", "slg-");
  SlurmRunner runner(f.config);
  for (const std::int64_t count : {2, 1}) {
    CAPTURE(count);
    RebuildSpec spec = f.with_gpus(count);
    spec.rebuild_id += "-" + std::to_string(count);
    JobHandle job;
    auto outcome = start_and_wait(runner, spec, job);
    REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().message));
    CHECK(outcome.exit->exit_code == 0);
    CHECK(job_field(job.ref, "TresPerNode", f.tmp.path) ==
          "gres:gpu:" + f.cluster["SLURM_GPU_TYPE"] + ":" + std::to_string(count));
    const auto env = job_env(job);
    CHECK(env.value("CUDA_VISIBLE_DEVICES", "") == (count == 2 ? "0,1" : "0"));
    const auto allocation = read_file(job.work_dir / "allocation");
    CHECK(allocation.find("devices=" + std::to_string(count) + "\n") != std::string::npos);
    runner.cleanup(job);
  }
  CHECK(queued_jobs("rvtest-slg-", f.tmp.path).empty());
}

TEST_CASE("the job's environment is the contract's, PATH and its GPUs, nothing of Slurm's") {
  SlurmFixture f("ok", "sle-");
  f.spec.mode = RebuildMode::steps;
  f.spec.max_steps = 4;
  SlurmRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  CHECK(outcome.exit->exit_code == 0);
  REQUIRE(outcome.exit->job_seconds.has_value());
  CHECK(*outcome.exit->job_seconds >= 0);
  const auto env = job_env(job);
  std::set<std::string> names;
  for (const auto& item : env.items())
    names.insert(item.key());
  const std::set<std::string> expected = {"CUDA_VISIBLE_DEVICES", "PATH",
                                          "PYTHONHASHSEED",       "REVERIFY_CONFIG",
                                          "REVERIFY_MAX_STEPS",   "REVERIFY_MODE",
                                          "REVERIFY_OUT",         "REVERIFY_SEEDS",
                                          "SOURCE_DATE_EPOCH",    "TRAINER_BEHAVIOUR"};
  // python3 itself may add LC_CTYPE when it coerces the C locale.
  names.erase("LC_CTYPE");
  CHECK(names == expected);
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "");  // a CPU rebuild sees no GPU of the node
  CHECK(env["REVERIFY_OUT"] == (job.work_dir / "out").string());
  CHECK(env["REVERIFY_MAX_STEPS"] == "4");
  auto outputs = runner.collect(job, f.tmp.path / "collected");
  REQUIRE(outputs.ok());
  CHECK(outputs->steps_values.size() == 4);
  runner.cleanup(job);
  CHECK(queued_jobs("rvtest-sle-", f.tmp.path).empty());
}

TEST_CASE("a GPU count the partition cannot offer is refused before anything is submitted") {
  SlurmFixture f("ok", "slr-");
  SlurmRunner runner(f.config);
  const auto refused = [&](const RebuildSpec& spec, const std::string& words) {
    const auto prepared = runner.prepare(spec);
    REQUIRE_FALSE(prepared.ok());
    CHECK(prepared.error().code == ErrorCode::provision);
    CHECK_MESSAGE(prepared.error().message.find(words) != std::string::npos,
                  prepared.error().message);
    CHECK_FALSE(std::filesystem::exists(f.config.shared_root / spec.rebuild_id / "job.json"));
  };
  refused(f.with_gpus(3), "cannot offer the recorded 3 GPU(s) of GRES type vgpu");
  refused(f.with_gpus(1, "NVIDIA H100 80GB HBM3"), "runner.slurm.gpu_models has no entry");
  SlurmConfig elsewhere = f.config;
  elsewhere.gpu_models["Test vGPU"] = SlurmGpuModel{"", "no-such-feature"};
  SlurmRunner feature_runner(elsewhere);
  const auto prepared = feature_runner.prepare(f.with_gpus(1));
  REQUIRE_FALSE(prepared.ok());
  CHECK(prepared.error().message.find("nodes with feature no-such-feature") != std::string::npos);
  // A node feature that the node has: prepared, then the job gets its GPUs.
  RebuildSpec featured = f.with_gpus(2, "Test featured GPU");
  JobHandle job;
  auto outcome = start_and_wait(runner, featured, job);
  REQUIRE(outcome.exit.ok());
  CHECK(outcome.exit->exit_code == 0);
  CHECK(job_field(job.ref, "Features", f.tmp.path) == "fakegpu");
  CHECK(job_env(job).value("CUDA_VISIBLE_DEVICES", "") == "0,1");
  runner.cleanup(job);
  CHECK(queued_jobs("rvtest-slr-", f.tmp.path).empty());
}

TEST_CASE("an allocation that hands the job fewer GPUs than asked is a platform fault") {
  SlurmFixture f("ok", "slm-");
  SlurmRunner runner(f.config);
  const RebuildSpec spec = f.with_gpus(2);
  // The cluster's TaskProlog hides one device from this job (a node that lost a GPU).
  write_file(std::filesystem::path(f.cluster["SLURM_FAULTS"]) / ("short-gpu-" + f.job_name(spec)),
             "");
  JobHandle job;
  auto outcome = start_and_wait(runner, spec, job);
  std::filesystem::remove(std::filesystem::path(f.cluster["SLURM_FAULTS"]) /
                          ("short-gpu-" + f.job_name(spec)));
  REQUIRE(outcome.exit.ok());
  REQUIRE(outcome.exit->platform_fault.has_value());
  CHECK(outcome.exit->platform_fault->evidence["kind"] == "gpu_allocation");
  CHECK(outcome.exit->platform_fault->reason.find("handed the job 1 GPU device(s)") !=
        std::string::npos);
  const auto status = job_exit_status(*outcome.exit);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::infra);
  CHECK(outcome.exit->log_tail.find("the job is not started") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(job.work_dir / "out" / "env.json"));  // never ran
  runner.cleanup(job);
  CHECK(queued_jobs("rvtest-slm-", f.tmp.path).empty());
}

TEST_CASE("an entrypoint the node does not have is error:provision, not the job's failure") {
  SlurmFixture f("ok", "slp-");
  f.spec.manifest.run.entrypoint = {"no-such-trainer-binary", "train.py"};
  SlurmRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_FALSE(outcome.exit.ok());
  CHECK(outcome.exit.error().code == ErrorCode::provision);
  CHECK(outcome.exit.error().message.find("no-such-trainer-binary") != std::string::npos);
  runner.cleanup(job);
  CHECK(queued_jobs("rvtest-slp-", f.tmp.path).empty());
}
