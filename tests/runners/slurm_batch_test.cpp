// The slurm runner's batch job (runners/slurm_batch.hpp): what sbatch is asked for (GPUs as
// recorded, placement per model, time, CPUs), and the script itself run by /bin/sh outside Slurm
// with the environment an allocation would give it: the GPU check, the entrypoint check, the
// job's environment (the contract's, quoted intact) and its exit status.
#include <doctest/doctest.h>

#include <algorithm>

#include "runners/slurm_batch.hpp"
#include "tests/runners/runner_test_support.hpp"
#include "tests/support/run_program.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

struct BatchFixture {
  TempDir tmp;
  SlurmConfig config;
  RebuildSpec spec;
  std::filesystem::path dir;

  BatchFixture() {
    config.shared_root = tmp.path / "shared";
    config.gpu_models["NVIDIA H100 80GB HBM3"] = SlurmGpuModel{"h100", ""};
    config.gpu_models["NVIDIA L4"] = SlurmGpuModel{"", "l4"};
    spec.rebuild_id = "verification-7";
    spec.manifest = trainer_manifest("ok");
    spec.timeout = std::chrono::seconds(3601);
    dir = config.shared_root / spec.rebuild_id;
  }

  SlurmBatch batch() const {
    auto built = build_slurm_batch(spec, config, dir);
    REQUIRE_MESSAGE(built.ok(), (built.ok() ? "" : built.error().message));
    return *built;
  }

  // The script written where the runner writes it, with a checkout folder, run by /bin/sh with
  // only `env` (what Slurm would set) in its environment.
  Ran run_script(const std::vector<std::string>& env) const {
    std::filesystem::create_directories(dir / "src");
    std::filesystem::create_directories(dir / "out");
    write_file(dir / "job.sh", batch().script);
    std::vector<std::string> argv = {"/usr/bin/env", "-i"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"/bin/sh", (dir / "job.sh").string()});
    return run_program(argv, tmp.path);
  }

  std::string allocation() const { return read_file(dir / "allocation"); }
};

bool has(const std::vector<std::string>& options, const std::string& option) {
  return std::find(options.begin(), options.end(), option) != options.end();
}

}  // namespace

TEST_CASE("sbatch is asked for the recorded GPUs by GRES type, and for the model's placement") {
  BatchFixture f;
  f.spec.manifest.environment->accelerator = Accelerator{"NVIDIA H100 80GB HBM3", 8, {}, {}, {}};
  f.config.placement = {"gpu", "ml", "normal", std::nullopt, "64G", std::nullopt};
  f.config.models["runner-test"] = {"long", "", "", 16, "", std::chrono::seconds(7200)};
  const auto options = f.batch().options;
  for (const std::string option :
       {"--parsable", "--export=ALL", "--no-requeue", "--job-name=reverify-verification-7",
        "--comment=reverify.rebuild-id=verification-7", "--nodes=1", "--ntasks=1",
        "--gres=gpu:h100:8", "--partition=long", "--account=ml", "--qos=normal", "--mem=64G",
        "--cpus-per-task=16", "--time=120"}) {
    CHECK_MESSAGE(has(options, option), option);
  }
  CHECK(has(options, "--output=" + (f.dir / "job.log").string()));
  CHECK(has(options, "--chdir=" + f.dir.string()));
  CHECK(std::none_of(options.begin(), options.end(),
                     [](const std::string& o) { return o.rfind("--constraint", 0) == 0; }));
}

TEST_CASE("a GPU model matched by node feature; a count without a model; a CPU rebuild") {
  BatchFixture f;
  f.spec.manifest.environment->accelerator = Accelerator{"NVIDIA L4", 2, {}, {}, {}};
  auto options = f.batch().options;
  CHECK(has(options, "--constraint=l4"));
  CHECK(has(options, "--gres=gpu:2"));
  CHECK(has(options, "--time=61"));  // the model's timeout, rounded up to whole minutes
  CHECK(has(options, "--cpus-per-task=1"));

  f.spec.manifest.environment->accelerator = Accelerator{"", 1, {}, {}, {}};
  CHECK(has(f.batch().options, "--gres=gpu:1"));

  f.spec.manifest.environment->accelerator.reset();
  f.spec.manifest.environment->threads = Threads{6, 1, 2};
  options = f.batch().options;
  CHECK(std::none_of(options.begin(), options.end(),
                     [](const std::string& o) { return o.rfind("--gres", 0) == 0; }));
  CHECK(has(options, "--cpus-per-task=8"));  // intra-op threads + data loader workers
}

TEST_CASE("what cannot be submitted is refused with the field to fix") {
  BatchFixture f;
  f.spec.manifest.environment->accelerator = Accelerator{"AMD MI300X", 8, {}, {}, {}};
  auto refused = build_slurm_batch(f.spec, f.config, f.dir);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::provision);
  CHECK(refused.error().message.find("\"AMD MI300X\": runner.slurm.gpu_models has no entry") !=
        std::string::npos);

  f.spec.manifest.environment->accelerator.reset();
  f.spec.manifest.environment->env["CUDA_VISIBLE_DEVICES"] = "3";
  refused = build_slurm_batch(f.spec, f.config, f.dir);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::manifest_invalid);

  f.spec.manifest.environment->env.erase("CUDA_VISIBLE_DEVICES");
  f.spec.manifest.run.entrypoint.clear();
  CHECK(build_slurm_batch(f.spec, f.config, f.dir).error().code == ErrorCode::manifest_invalid);
}

TEST_CASE("node_root: the nodes see the rebuild's folder under their own mount") {
  BatchFixture f;
  f.config.shared_root = "/srv/reverify";
  f.config.node_root = "/shared/reverify";
  f.dir = "/srv/reverify/verification-7";
  f.spec.data_path = "/srv/reverify/data/digits";
  f.spec.eval_path = "/datasets/eval.npy";
  const auto batch = f.batch();
  CHECK(has(batch.options, "--output=/shared/reverify/verification-7/job.log"));
  CHECK(batch.script.find("REVERIFY_DATA=/shared/reverify/data/digits") != std::string::npos);
  CHECK(batch.script.find("REVERIFY_EVAL=/datasets/eval.npy") != std::string::npos);
  CHECK(batch.script.find("REVERIFY_OUT=/shared/reverify/verification-7/out") != std::string::npos);
  CHECK(f.config.node_path("/srv/reverify") == "/shared/reverify");
  CHECK(f.config.node_path("/srv/reverify-other/x") == "/srv/reverify-other/x");
}

TEST_CASE("a remote input's fetched copy: the job gets it under its node path, or it is refused") {
  BatchFixture f;
  f.config.shared_root = "/srv/reverify";
  f.config.node_root = "/shared/reverify";
  f.dir = "/srv/reverify/verification-7";
  f.spec.data_fetched = f.spec.eval_fetched = true;
  // The daemon's work_dir under shared_root: preflight fetched into <work_dir>/<id>/inputs.
  f.spec.data_path = "/srv/reverify/work/7/inputs/data";
  f.spec.eval_path = "/srv/reverify/work/7/inputs/eval/eval.csv";
  const auto batch = f.batch();
  CHECK(batch.script.find("REVERIFY_DATA=/shared/reverify/work/7/inputs/data") !=
        std::string::npos);
  CHECK(batch.script.find("REVERIFY_EVAL=/shared/reverify/work/7/inputs/eval/eval.csv") !=
        std::string::npos);

  // Elsewhere (the default <state_dir>/work on the daemon's disk): no node sees that copy.
  f.spec.eval_path = "/var/lib/reverify/work/7/inputs/eval/eval.csv";
  auto refused = build_slurm_batch(f.spec, f.config, f.dir);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::provision);
  CHECK(refused.error().message.find("evaluation.set.uri: the slurm runner cannot show the job "
                                     "(REVERIFY_EVAL) the copy preflight fetched") == 0);
  CHECK(refused.error().message.find("runner.slurm.shared_root (/srv/reverify)") !=
        std::string::npos);
  // The same path placed by the operator (shared storage the nodes mount alike) is theirs.
  f.spec.eval_fetched = false;
  CHECK(build_slurm_batch(f.spec, f.config, f.dir).ok());
}

TEST_CASE("the script runs the entrypoint with the contract's environment only, quoted intact") {
  BatchFixture f;
  f.spec.manifest.environment->env["TRICKY"] = "it's \"$HOME\" `id` ; *";
  f.spec.manifest.run.entrypoint = {"sh", "-c", "env > \"$REVERIFY_OUT/env.txt\"; exit 7"};
  f.spec.manifest.environment->accelerator = Accelerator{"NVIDIA H100 80GB HBM3", 2, {}, {}, {}};
  const Ran ran = f.run_script({"CUDA_VISIBLE_DEVICES=0,1", "SLURM_JOB_ID=5", "SECRET=x"});
  CHECK(ran.exit_code == 7);
  CHECK(read_file(f.dir / "exit_status") == "7\n");
  CHECK(f.allocation().find("devices=2\nexpected=2\n") != std::string::npos);
  CHECK(f.allocation().find("problem=") == std::string::npos);
  const std::string env = read_file(f.dir / "out" / "env.txt");
  CHECK(env.find("TRICKY=it's \"$HOME\" `id` ; *\n") != std::string::npos);
  CHECK(env.find("CUDA_VISIBLE_DEVICES=0,1\n") != std::string::npos);
  CHECK(env.find("REVERIFY_OUT=" + (f.dir / "out").string() + "\n") != std::string::npos);
  CHECK(env.find("PATH=/usr/bin:/bin\n") != std::string::npos);
  CHECK(env.find("SLURM_JOB_ID") == std::string::npos);
  CHECK(env.find("SECRET") == std::string::npos);
}

TEST_CASE("the script refuses to run the job on an allocation with another GPU count") {
  BatchFixture f;
  f.spec.manifest.run.entrypoint = {"sh", "-c", "touch \"$REVERIFY_OUT/ran\""};
  f.spec.manifest.environment->accelerator = Accelerator{"NVIDIA H100 80GB HBM3", 2, {}, {}, {}};
  for (const std::string visible : {"CUDA_VISIBLE_DEVICES=0", "CUDA_VISIBLE_DEVICES=0,1,2", ""}) {
    CAPTURE(visible);
    const Ran ran = f.run_script(visible.empty() ? std::vector<std::string>{}
                                                 : std::vector<std::string>{visible});
    CHECK(ran.exit_code == kSlurmPreflightExit);
    CHECK(f.allocation().find("problem=gpu_count\n") != std::string::npos);
    CHECK(ran.err.find("the job is not started") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(f.dir / "out" / "ran"));
  }
  // A CPU rebuild on a node that would show it GPUs: it runs, and sees none.
  f.spec.manifest.environment->accelerator.reset();
  f.spec.manifest.run.entrypoint = {"sh", "-c", "echo \"[$CUDA_VISIBLE_DEVICES]\""};
  const Ran cpu = f.run_script({});
  CHECK(cpu.exit_code == 0);
  CHECK(cpu.out == "[]\n");
}

TEST_CASE("the script refuses to start an entrypoint the node does not have") {
  BatchFixture f;
  f.spec.manifest.run.entrypoint = {"no-such-trainer", "train.py"};
  const Ran ran = f.run_script({});
  CHECK(ran.exit_code == kSlurmPreflightExit);
  CHECK(f.allocation().find("problem=entrypoint\n") != std::string::npos);
  CHECK(ran.err.find("no-such-trainer is not found") != std::string::npos);
}

TEST_CASE("an image recorded and a container runtime configured: the job runs in the image") {
  BatchFixture f;
  f.spec.manifest.environment->image = "registry.example/train@sha256:" + std::string(64, 'a');
  f.spec.manifest.run.workdir = "/src";
  f.spec.data_path = f.tmp.path / "data";
  CHECK_FALSE(runs_image(f.spec, f.config));  // runtime none: the checkout, image or not
  CHECK(f.batch().script.find("env -i") != std::string::npos);

  // A runtime that prints its arguments, one a line, stands in for podman.
  const auto fake = f.tmp.write("bin/fake-podman", "#!/bin/sh\nprintf '%s\\n' \"$@\"\n");
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  f.config.containers = {
      SlurmContainerRuntime::podman, {fake.string(), "--runtime", "runc"}, {"--tls-verify=false"}};
  f.spec.manifest.environment->accelerator = Accelerator{"NVIDIA H100 80GB HBM3", 2, {}, {}, {}};
  REQUIRE(runs_image(f.spec, f.config));
  const Ran ran = f.run_script({"CUDA_VISIBLE_DEVICES=0,1", "SLURM_JOB_GPUS=4,5"});
  CHECK(ran.exit_code == 0);
  const std::string in = (f.dir / "in").string(), out = (f.dir / "out").string();
  const std::string data = (f.tmp.path / "data").string();
  const std::string expected_start =
      "--runtime\nrunc\nrun\n--tls-verify=false\n--rm\n"
      "--pull=never\n--network=none\n--volume=" +
      in + ":" + in + ":ro\n--volume=" + out + ":" + out + "\n--volume=" + data + ":" + data +
      ":ro\n";
  CHECK(ran.out.rfind(expected_start, 0) == 0);
  CHECK(ran.out.find("--env=REVERIFY_OUT=" + out + "\n") != std::string::npos);
  CHECK(ran.out.find("--env=PATH=") == std::string::npos);  // the image's own PATH
  // Pulled by digest before it runs (the pull's words go to the job's log, stderr).
  CHECK(ran.err.find("--runtime\nrunc\npull\n--quiet\nregistry.example/train@sha256:") !=
        std::string::npos);
  // The allocation's GPUs by the job's GPU indices, as options before the image.
  CHECK(ran.out.find("--workdir=/src\n--entrypoint=[\"python3\"]\n--device\nnvidia.com/gpu=4\n"
                     "--device\nnvidia.com/gpu=5\nregistry.example/train@sha256:" +
                     std::string(64, 'a') + "\ntrainer.py\n") != std::string::npos);

  f.config.containers = {SlurmContainerRuntime::apptainer, {fake.string()}, {}};
  const Ran apptainer = f.run_script({"CUDA_VISIBLE_DEVICES=0,1"});
  CHECK(apptainer.exit_code == 0);
  CHECK(apptainer.out.rfind(
            "exec\n--containall\n--cleanenv\n--no-home\n--nv\n--bind=" + in + ":" + in + ":ro\n",
            0) == 0);
  CHECK(apptainer.err.find("pull\n" + (f.dir / "image.sif").string() +
                           "\ndocker://registry.example/train@sha256:") != std::string::npos);
  CHECK(apptainer.out.find("--pwd=/src\n--env=CUDA_VISIBLE_DEVICES=0,1\n" +
                           (f.dir / "image.sif").string() + "\npython3\ntrainer.py\n") !=
        std::string::npos);

  // A runtime that cannot pull the image: the job is not started.
  const auto no_pull = f.tmp.write(
      "bin/no-pull", "#!/bin/sh\nfor a; do [ \"$a\" = pull ] && exit 1; done\nexit 0\n");
  std::filesystem::permissions(no_pull, std::filesystem::perms::owner_all);
  f.config.containers.command = {no_pull.string()};
  const Ran unpulled = f.run_script({"CUDA_VISIBLE_DEVICES=0,1"});
  CHECK(unpulled.exit_code == kSlurmPreflightExit);
  CHECK(f.allocation().find("problem=image\n") != std::string::npos);
  CHECK(unpulled.err.find("could not be pulled") != std::string::npos);

  f.config.containers.command = {"no-such-runtime"};
  const Ran missing = f.run_script({"CUDA_VISIBLE_DEVICES=0,1"});
  CHECK(missing.exit_code == kSlurmPreflightExit);
  CHECK(f.allocation().find("problem=container_runtime\n") != std::string::npos);
}
