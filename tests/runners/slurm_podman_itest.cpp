// The slurm runner running a rebuild in the manifest's image, by digest, through podman on the
// node: the `slurm` fixture's cluster and the `docker` fixture's registry and trainer image
// (tests/services/docker_up.sh). podman keeps its images under the test's temp folder and pulls
// the image over plain HTTP (--tls-verify=false); runc refuses podman's default rlimits in this
// VM, so the test sets its own (--ulimit). No GPU case: CDI needs NVIDIA's container toolkit.
#include "slurm_test_support.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

struct PodmanFixture : SlurmFixture {
  std::map<std::string, std::string> docker = services_env("docker");
  std::vector<std::string> podman = {"podman", "--root=" + (tmp.path / "podman" / "root").string(),
                                     "--runroot=" + (tmp.path / "podman" / "run").string(),
                                     "--runtime=runc", "--cgroup-manager=cgroupfs"};

  explicit PodmanFixture(const std::string& behaviour) : SlurmFixture(behaviour, "slo-") {
    config.containers = {SlurmContainerRuntime::podman,
                         podman,
                         {"--ulimit=nofile=4096:4096", "--ulimit=nproc=4096:4096"},
                         {"--tls-verify=false"}};
    spec.manifest.environment->image = docker.at("TRAINER_IMAGE");
    spec.manifest.run.workdir = "/src";
    // No code.repo: the code is in the image, nothing is checked out.
    spec.manifest.code.repo.reset();
  }
  ~PodmanFixture() {
    // Its images and their mounts go before the temp folder does.
    auto reset = podman;
    reset.insert(reset.end(), {"system", "reset", "--force"});
    (void)run_program(reset, tmp.path);
  }
};

}  // namespace

TEST_CASE("a manifest with an image runs in that image, pulled by digest by podman") {
  PodmanFixture f("ok");
  SlurmRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_MESSAGE(outcome.exit.ok(), (outcome.exit.ok() ? "" : outcome.exit.error().message));
  CHECK_MESSAGE(outcome.exit->exit_code == 0, outcome.exit->log_tail);
  CHECK_FALSE(std::filesystem::exists(job.work_dir / "src"));  // no checkout
  auto outputs = runner.collect(job, f.tmp.path / "collected");
  REQUIRE_MESSAGE(outputs.ok(), (outputs.ok() ? "" : outputs.error().message));
  CHECK(outputs->primary_value == doctest::Approx(0.9609));
  const auto env = nlohmann::json::parse(read_file(job.work_dir / "out" / "env.json"));
  CHECK(env.value("REVERIFY_OUT", "") == (job.work_dir / "out").string());
  CHECK(env.value("TRAINER_BEHAVIOUR", "") == "ok");
  CHECK(env.value("PATH", "") != f.config.path_env);  // the image's own PATH
  CHECK_FALSE(env.contains("SLURM_JOB_ID"));
  runner.cleanup(job);
  CHECK(queued_jobs(f.name_prefix(), f.tmp.path).empty());
}

TEST_CASE("a job in an image that exits 3 is error:job with its log") {
  PodmanFixture f("exit3");
  SlurmRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE(outcome.exit.ok());
  CHECK(outcome.exit->exit_code == 3);
  const auto status = job_exit_status(*outcome.exit);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::job);
  CHECK(status.error().message.find("failing on purpose") != std::string::npos);
  runner.cleanup(job);
  CHECK(queued_jobs(f.name_prefix(), f.tmp.path).empty());
}

TEST_CASE("an image the node cannot pull is error:provision, never the job's failure") {
  PodmanFixture f("ok");
  const std::string image = f.docker.at("TRAINER_IMAGE");
  f.spec.manifest.environment->image =
      image.substr(0, image.find("@sha256:")) + "@sha256:" + std::string(64, '0');
  SlurmRunner runner(f.config);
  JobHandle job;
  auto outcome = start_and_wait(runner, f.spec, job);
  REQUIRE_FALSE(outcome.exit.ok());
  CHECK(outcome.exit.error().code == ErrorCode::provision);
  CHECK(outcome.exit.error().message.find("could not be pulled") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(job.work_dir / "out" / "env.json"));
  runner.cleanup(job);
  CHECK(queued_jobs(f.name_prefix(), f.tmp.path).empty());
}
