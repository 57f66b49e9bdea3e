// `reverify capture` end to end on what it records as environment.accelerator (issue #12, item 7):
// the GPUs nvidia-smi lists (model, count, driver), merged with what the job reports it used, and
// nothing at all on a machine without a GPU (it once recorded the CPU model with count 0). The
// machine's nvidia-smi is replaced by a script on a PATH of the test's own, so every case runs the
// same on a machine with or without GPUs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/git_checkout.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace reverify::test;

namespace {

const char* const kGit = "/usr/bin/git";
const char* const kPython = "/usr/bin/python3";

using reverify::test::contains;

// What nvidia-smi prints for two H100s, for exactly the query capture makes (anything else is
// refused, so a changed query shows up here rather than on a GPU machine).
std::string nvidia_smi_listing(const std::string& listing) {
  return "#!/bin/sh\n"
         "[ \"$1\" = --query-gpu=name,driver_version ] && [ \"$2\" = --format=csv,noheader ] && "
         "[ $# = 2 ] || { echo \"unexpected arguments: $*\" >&2; exit 2; }\n"
         "printf '" +
         listing + "'\n";
}

// nvidia-smi installed without a working driver: it prints to stdout and exits 9.
const std::string kNvidiaSmiNoDriver =
    "#!/bin/sh\n"
    "echo 'NVIDIA-SMI has failed because it couldn'\\''t communicate with the NVIDIA driver.'\n"
    "exit 9\n";

// A code checkout with one commit, a job's result.json, and a PATH folder holding git and,
// when given, a fake nvidia-smi: nothing else of the machine's is found on that PATH.
struct CaptureWorld {
  TempDir dir{"reverify-capture-accelerator-itest-"};

  explicit CaptureWorld(const std::optional<std::string>& nvidia_smi) {
    REQUIRE(fs::exists(kGit));
    REQUIRE(fs::exists(kPython));
    fs::create_directories(dir.path / "bin");
    fs::create_symlink(kGit, dir.path / "bin/git");
    if (nvidia_smi) {
      const auto script = dir.write("bin/nvidia-smi", *nvidia_smi);
      fs::permissions(script, fs::perms::owner_all);
    }
    dir.write("code/train.py", "print('training')\n");
    commit_all(dir.path / "code", kGit);
  }

  // Writes result.json with `environment` (when not null) and runs capture on the test's PATH.
  Ran capture(const json& environment) const {
    json result = {{"primary", {{"name", "accuracy"}, {"value", 0.9}}}};
    if (!environment.is_null())
      result["environment"] = environment;
    write_file(dir.path / "out/result.json", result.dump());
    return run_program({"/usr/bin/env",
                        "PATH=" + (dir.path / "bin").string(),
                        env_or_throw("REVERIFY_CLI"),
                        "capture",
                        "--out",
                        (dir.path / "release").string(),
                        "--model",
                        "m",
                        "--version",
                        "1",
                        "--owner",
                        "team",
                        "--code",
                        (dir.path / "code").string(),
                        "--result",
                        (dir.path / "out/result.json").string(),
                        "--python",
                        kPython,
                        "--",
                        "python3",
                        "train.py"},
                       dir.path);
  }

  json manifest() const {
    std::ifstream in(dir.path / "release/manifest.json");
    return json::parse(in);
  }
};

// This machine's CPU model as /proc/cpuinfo names it (what capture once recorded), or "".
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string model = line.substr(line.find(':') + 1);
      model.erase(0, model.find_first_not_of(' '));
      return model;
    }
  }
  return "";
}

void check_no_accelerator(const CaptureWorld& world, const Ran& ran) {
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  const json env = world.manifest()["environment"];
  CHECK(env["python"].is_string());  // the environment itself was captured
  CHECK_FALSE(env.contains("accelerator"));
  const std::string cpu = cpu_model();
  if (!cpu.empty())
    CHECK_FALSE(contains(world.manifest().dump(), cpu));
}

}  // namespace

TEST_CASE("capture on a machine without nvidia-smi records no accelerator, not the CPU model") {
  const CaptureWorld world(std::nullopt);
  check_no_accelerator(world, world.capture(nullptr));
}

TEST_CASE("capture where nvidia-smi finds no driver records no accelerator") {
  const CaptureWorld world(kNvidiaSmiNoDriver);
  check_no_accelerator(world, world.capture(nullptr));
}

TEST_CASE("capture records nvidia-smi's GPUs: the first one's model and driver, and their count") {
  const CaptureWorld world(nvidia_smi_listing(
      "NVIDIA H100 80GB HBM3, 550.54.15\\nNVIDIA H100 80GB HBM3, 550.54.15\\n\\n"));
  const Ran ran = world.capture(nullptr);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(world.manifest()["environment"]["accelerator"] ==
        json({{"model", "NVIDIA H100 80GB HBM3"}, {"count", 2}, {"driver", "550.54.15"}}));
}

TEST_CASE("the job's reported GPU wins over nvidia-smi's listing, which still gives the driver") {
  const CaptureWorld world(
      nvidia_smi_listing("NVIDIA H100 80GB HBM3, 550.54.15\\nNVIDIA H100 80GB HBM3, 550.54.15\\n"));
  const Ran ran = world.capture(
      {{"framework", {{"name", "torch"}, {"version", "2.3.0"}}},
       {"accelerator",
        {{"model", "NVIDIA H100 80GB HBM3"}, {"count", 1}, {"cuda", "12.1"}, {"cudnn", "8902"}}}});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(world.manifest()["environment"]["accelerator"] == json({{"model", "NVIDIA H100 80GB HBM3"},
                                                                {"count", 1},
                                                                {"driver", "550.54.15"},
                                                                {"cuda", "12.1"},
                                                                {"cudnn", "8902"}}));
  CHECK(contains(ran.out,
                 "accelerator: 1 x NVIDIA H100 80GB HBM3, CUDA 12.1, cuDNN 8902 (as the job used "
                 "them)"));
}

TEST_CASE("a job that reports its framework and no GPU records none, even on a GPU machine") {
  // A CPU job on a machine with GPUs: recording nvidia-smi's GPUs would make every rebuild ask
  // the runner for GPUs it never used.
  const CaptureWorld world(nvidia_smi_listing("NVIDIA H100 80GB HBM3, 550.54.15\\n"));
  const Ran ran = world.capture({{"framework", {{"name", "torch"}, {"version", "2.3.0"}}}});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(contains(ran.out, "accelerator: the job used none (torch 2.3.0 reported no GPU)"));
  CHECK_FALSE(world.manifest()["environment"].contains("accelerator"));
}
