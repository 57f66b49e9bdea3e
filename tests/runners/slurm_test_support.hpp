#pragma once
// Helpers shared by the slurm runner's integration tests: the one-node cluster of the CTest
// fixture `slurm` (tests/services/slurm_up.sh, coordinates in $REVERIFY_SERVICES_DIR/slurm.env),
// a git repository holding the test trainer (fixtures/trainer.py), a SlurmConfig on that cluster,
// and Slurm's own commands for the tests' side (squeue, scontrol, sbatch).
#include <doctest/doctest.h>
#include <stdlib.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runner_test_support.hpp"
#include "runners/slurm_batch.hpp"
#include "runners/slurm_runner.hpp"
#include "tests/support/git_checkout.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/services_env.hpp"
#include "tests/support/temp_dir.hpp"

namespace reverify::test {

// The fixture's cluster; SLURM_CONF is exported so that the tests' own Slurm commands reach it.
struct SlurmCluster {
  std::map<std::string, std::string> env = services_env("slurm");
  SlurmCluster() {
    REQUIRE(env.count("SLURM_CONF") == 1);
    ::setenv("SLURM_CONF", env.at("SLURM_CONF").c_str(), 1);
  }
  const std::string& operator[](const std::string& key) const { return env.at(key); }
};

// Slurm's command `argv` (sbatch, squeue, scontrol, scancel) from the test; its output, and a
// failed test when it fails.
inline std::string slurm_command(const std::vector<std::string>& argv,
                                 const std::filesystem::path& scratch) {
  const Ran ran = run_program(argv, scratch);
  REQUIRE_MESSAGE(ran.exit_code == 0, (argv[0] + " failed: " + ran.err));
  return ran.out;
}

// Jobs squeue lists (pending, running, completing) whose name starts with `prefix`.
inline std::vector<std::string> queued_jobs(const std::string& prefix,
                                            const std::filesystem::path& scratch) {
  const std::string out = slurm_command({"squeue", "--noheader", "--format=%j"}, scratch);
  std::vector<std::string> names;
  std::size_t pos = 0;
  while (pos < out.size()) {
    auto end = out.find('\n', pos);
    if (end == std::string::npos)
      end = out.size();
    const std::string name = out.substr(pos, end - pos);
    if (name.rfind(prefix, 0) == 0)
      names.push_back(name);
    pos = end + 1;
  }
  return names;
}

// One field of `scontrol show job -o ID` ("JobState", "TresPerNode", ...).
inline std::string job_field(const std::string& id, const std::string& key,
                             const std::filesystem::path& scratch) {
  const auto records =
      parse_scontrol_lines(slurm_command({"scontrol", "show", "job", "-o", id}, scratch));
  REQUIRE(records.size() == 1);
  const auto it = records.front().find(key);
  return it == records.front().end() ? "" : it->second;
}

// Polls (every 100 ms, up to `seconds`) until `done` holds; false when it never did.
template <class Predicate>
bool eventually(Predicate done, int seconds = 60) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= give_up)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// Cancels every job whose name starts with `prefix` (what a failed test left behind).
inline void cancel_jobs(const std::string& prefix, const std::filesystem::path& scratch) {
  const Ran listed = run_program({"squeue", "--noheader", "--format=%i %j"}, scratch);
  std::istringstream lines(listed.out);
  std::string id, name;
  while (lines >> id >> name) {
    if (name.rfind(prefix, 0) == 0)
      (void)run_program({"scancel", id}, scratch);
  }
}

// A git repository holding the test trainer, a SlurmConfig on the fixture's cluster with its
// rebuild folders under the temp folder, and a spec of the trainer with the given behaviour.
// Every job of the fixture is named rvtest-<id prefix>...: those still queued when it goes are
// cancelled, so a test that fails half-way leaves nothing in squeue for the next one.
struct SlurmFixture {
  SlurmCluster cluster;
  TempDir tmp{"reverify-slurm-test-"};
  std::filesystem::path repo = tmp.path / "repo";
  SlurmConfig config;
  RebuildSpec spec;

  // Rebuild ids (and so job names) start with `id_prefix`, one per test file.
  std::string id_prefix;

  SlurmFixture(const std::string& behaviour, const std::string& prefix) : id_prefix(prefix) {
    std::filesystem::create_directories(repo);
    std::filesystem::copy_file(source_dir() / "tests/runners/fixtures/trainer.py",
                               repo / "trainer.py");
    commit_all(repo);
    config.slurm_conf = cluster["SLURM_CONF"];
    config.shared_root = tmp.path / "shared";
    config.job_name_prefix = "rvtest-";
    config.poll_interval = std::chrono::milliseconds(200);
    config.cancel_wait = std::chrono::seconds(60);
    // Every job names its memory: without --mem a job takes the whole node (CR_Core_Memory).
    config.placement.memory = "256M";
    config.gpu_models["Test vGPU"] = SlurmGpuModel{cluster["SLURM_GPU_TYPE"], ""};
    config.gpu_models["Test featured GPU"] = SlurmGpuModel{"", "fakegpu"};
    spec.rebuild_id = prefix + behaviour;
    spec.manifest = trainer_manifest(behaviour);
    spec.manifest.code.repo = repo.string();
    const Ran head = run_program({"git", "-C", repo.string(), "rev-parse", "HEAD"}, tmp.path);
    REQUIRE(head.exit_code == 0);
    spec.manifest.code.commit = head.out.substr(0, 40);
    spec.manifest_location = (tmp.path / "registry" / "manifest.json").string();
    spec.timeout = std::chrono::seconds(300);
  }
  ~SlurmFixture() { cancel_jobs(name_prefix(), tmp.path); }
  SlurmFixture(const SlurmFixture&) = delete;
  SlurmFixture& operator=(const SlurmFixture&) = delete;

  // The names of this fixture's jobs start with this; so must those a test submits itself.
  std::string name_prefix() const { return slurm_job_name(config, id_prefix); }

  // The spec asking for `count` GPUs of the recorded model `model`.
  RebuildSpec with_gpus(std::int64_t count, const std::string& model = "Test vGPU") const {
    RebuildSpec gpu_spec = spec;
    gpu_spec.manifest.environment->accelerator = Accelerator{model, count, {}, {}, {}};
    return gpu_spec;
  }

  std::string job_name(const RebuildSpec& s) const { return slurm_job_name(config, s.rebuild_id); }
};

}  // namespace reverify::test
