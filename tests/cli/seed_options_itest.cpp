// The seed options of `run`, `calibrate` and `capture` that could only mislead (issue #12, found by
// a new user's trial on a second model), refused as usage errors (exit 2) before anything runs:
// - `run --mode steps --seed-override N` (steps mode is a same-seed comparison: another seed
//   diverges from step 0) and `calibrate --mode steps` with --first-seed, --until-power or fewer
//   than 3 --seeds (its reruns keep the release's seeds and replace the stored ones);
// - `run --seed-override N` with N one of the seeds the bands' seed runs used (the manifest's
//   tolerance.seed_overrides, or the stored calibration's with --config, or in subsample mode the
//   subsample reference's): no fresh-seed rerun; in subsample mode a fresh seed runs;
// - `capture --seed-runs DIR` / `--same-seed-runs DIR` with fewer than 3 reruns (no band: the
//   release would verify as uncalibrated).
// The digits example is the release; the cases that run jobs calibrate it once (one seed run) into
// a state_dir of their own, or rerun it once with a fresh seed.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/digits_trainer.hpp"
#include "tests/support/git_checkout.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace reverify::test;

namespace {

const std::string kTarget = "digits-mlp@2026.11.1";
const std::string kRepoUrl = kDigitsRepoUrl;

using reverify::test::contains;

fs::path registry() {
  return source_dir() / "examples/registry";
}

// The released example's tolerance.seed_overrides: 1..n, checked.
std::size_t released_seed_runs() {
  std::ifstream in(registry() / "digits-mlp/2026.11.1/manifest.json");
  const json seeds = json::parse(in)["tolerance"]["seed_overrides"];
  for (std::size_t i = 0; i < seeds.size(); ++i)
    REQUIRE(seeds[i] == i + 1);
  REQUIRE(seeds.size() >= 3);
  return seeds.size();
}

// A usage error from the command line itself: exit 2, one line on stderr, no job started.
void check_refused(const Ran& ran, const std::string& message) {
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 2);
  CHECK(ran.err == message + "\n");
  CHECK(ran.out.empty());
}

}  // namespace

TEST_CASE("run --mode steps --seed-override is refused: steps mode is a same-seed comparison") {
  TempDir dir("reverify-seed-options-itest-");
  check_refused(run_cli({"run", kTarget, "--registry", registry().string(), "--mode", "steps",
                         "--max-steps", "20", "--seed-override", "1000"},
                        dir.path),
                "reverify run: --seed-override cannot be used with --mode steps: steps mode "
                "compares the release's own seeds' first steps with its recorded curve, and "
                "another seed diverges from step 0; judge a fresh-seed rerun with --mode full");
}

TEST_CASE("calibrate --mode steps refuses --first-seed, --until-power and fewer than 3 --seeds") {
  TempDir dir("reverify-seed-options-itest-");
  const std::vector<std::string> steps = {"calibrate", kTarget, "--registry",  registry().string(),
                                          "--mode",    "steps", "--max-steps", "20"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = steps;
    args.insert(args.end(), more.begin(), more.end());
    return run_cli(args, dir.path);
  };
  check_refused(with({"--first-seed", "100"}),
                "reverify calibrate: --first-seed cannot be used with --mode steps: its reruns "
                "keep the release's own seeds (a same-seed comparison); drop --first-seed, or add "
                "seed-only reruns with --mode full");
  check_refused(with({"--until-power"}),
                "reverify calibrate: --until-power cannot be used with --mode steps: it adds "
                "seed-only reruns until tolerance.detect is met, which only --mode full records; "
                "steps mode records --seeds same-seed reruns");
  check_refused(with({"--seeds", "2"}),
                "reverify calibrate: --seeds 2 with --mode steps: these same-seed reruns replace "
                "the stored ones, and a steps band needs at least 3");
}

TEST_CASE("run --seed-override with a seed of the manifest's seed runs is refused, naming them") {
  TempDir dir("reverify-seed-options-itest-");
  const std::size_t n = released_seed_runs();
  for (const std::size_t seed : {std::size_t{1}, std::size_t{3}, n}) {
    CAPTURE(seed);
    check_refused(run_cli({"run", kTarget, "--registry", registry().string(), "--seed-override",
                           std::to_string(seed)},
                          dir.path),
                  "reverify run: --seed-override " + std::to_string(seed) + ": seed " +
                      std::to_string(seed) +
                      " is taken: the manifest's tolerance.seed_overrides lists the " +
                      std::to_string(n) + " seeds its seed runs used (1.." + std::to_string(n) +
                      "), and the bands come from " + std::to_string(n) +
                      " seed runs; a fresh-seed rerun needs a seed not among them, e.g. " +
                      std::to_string(n + 1));
  }
}

TEST_CASE("with --config the stored calibration's seeds are taken too; a fresh seed runs") {
  TempDir dir("reverify-seed-options-itest-");
  build_digits_trainer(dir.path / "trainer");
  const auto config =
      dir.write("reverify.yaml",
                "state_dir: state\n"
                "sources: [{name: examples, kind: directory, root: " +
                    registry().string() + "}]\n" + "code_mirrors: {" + kRepoUrl +
                    ": trainer}\n"
                    "runner: {kind: process, process: {path_env: /usr/bin:/bin}}\n");
  const std::size_t n = released_seed_runs();
  // One seed run of seed 1000 added to the released ones and stored in the state_dir.
  const Ran calibrated = run_cli(
      {"calibrate", kTarget, "--config", config.string(), "--seeds", "1", "--first-seed", "1000"},
      dir.path);
  REQUIRE_MESSAGE(calibrated.exit_code == 0, calibrated.out << calibrated.err);
  REQUIRE(contains(calibrated.out, "stored in "));

  // The manifest does not have seed 1000; the stored calibration does.
  check_refused(
      run_cli({"run", kTarget, "--config", config.string(), "--seed-override", "1000"}, dir.path),
      "reverify run: --seed-override 1000: seed 1000 is taken: the stored calibration's "
      "tolerance.seed_overrides lists the " +
          std::to_string(n + 1) + " seeds its seed runs used (1.." + std::to_string(n) +
          ", 1000), and the bands come from " + std::to_string(n + 1) +
          " seed runs; a fresh-seed rerun needs a seed not among them, e.g. 1001");

  // A seed none of them used is judged as a rebuild, recorded nowhere.
  const Ran fresh =
      run_cli({"run", kTarget, "--config", config.string(), "--seed-override", "1001"}, dir.path);
  INFO(fresh.out << fresh.err);
  CHECK((fresh.exit_code == 0 || fresh.exit_code == 1));
  CHECK(contains(fresh.out, "\nverdict: "));
  CHECK(contains(fresh.err, "fresh-seed rerun (REVERIFY_SEED_OVERRIDE=1001) judged as a rebuild"));
}

TEST_CASE("run --mode subsample --seed-override: the subsample reference's seeds, and it runs") {
  // A copy of the release whose subsample reference lists one seed more than its bands hold (a
  // seed run left out of them still took its seed).
  TempDir dir("reverify-seed-options-itest-");
  const fs::path version = dir.path / "registry/digits-mlp/2026.11.1";
  fs::create_directories(version.parent_path());
  fs::copy(registry() / "digits-mlp/2026.11.1", version, fs::copy_options::recursive);
  json manifest = json::parse(std::ifstream(version / "manifest.json"));
  json& seeds = manifest["subsample"]["tolerance"]["seed_overrides"];
  const std::size_t runs = manifest["subsample"]["tolerance"]["seed_runs"]["accuracy"].size();
  REQUIRE(seeds.size() == runs);
  REQUIRE(seeds.back() == runs);
  seeds.push_back(99);
  // Data and eval set by absolute path: the copy is read from elsewhere.
  manifest["data"]["snapshot"]["uri"] = (source_dir() / "examples/digits/data").string();
  manifest["evaluation"]["set"]["uri"] =
      (source_dir() / "examples/digits/eval/digits-eval.csv").string();
  std::ofstream(version / "manifest.json") << manifest.dump(2);
  const std::string copy = (dir.path / "registry").string();
  check_refused(
      run_cli({"run", kTarget, "--registry", copy, "--mode", "subsample", "--seed-override", "99"},
              dir.path),
      "reverify run: --seed-override 99: seed 99 is taken: the subsample reference's "
      "subsample.tolerance.seed_overrides lists the " +
          std::to_string(runs + 1) + " seeds its seed runs used (1.." + std::to_string(runs) +
          ", 99), and the bands come from " + std::to_string(runs) +
          " seed runs; a fresh-seed rerun needs a seed not among them, e.g. 100");
  // A fresh seed is judged in subsample mode against the subsample reference's bands.
  build_digits_trainer(dir.path / "trainer");
  const Ran fresh = run_cli({"run", kTarget, "--registry", copy, "--mode", "subsample",
                             "--code-mirror", kRepoUrl + "=" + (dir.path / "trainer").string(),
                             "--work-dir", (dir.path / "work").string(), "--seed-override", "100"},
                            dir.path);
  INFO(fresh.out << fresh.err);
  CHECK((fresh.exit_code == 0 || fresh.exit_code == 1));
  CHECK(contains(fresh.out, "\nverdict: "));
  CHECK(contains(fresh.err, "fresh-seed rerun (REVERIFY_SEED_OVERRIDE=100) judged as a rebuild"));
}

TEST_CASE("a run without --config names its rebuild after its own process") {
  // Its throwaway store numbers from 1 like every other: two at once shared "verification-1" and
  // collided in the runner's scratch links (found by bench/fresh_seed_reruns.sh, 1 in 100).
  TempDir dir("reverify-seed-options-itest-");
  build_digits_trainer(dir.path / "trainer");
  const Ran ran = run_cli({"run", kTarget, "--registry", registry().string(), "--code-mirror",
                           kRepoUrl + "=" + (dir.path / "trainer").string(), "--work-dir",
                           (dir.path / "work").string(), "--seed-override", "100000"},
                          dir.path);
  INFO(ran.out << ran.err);
  CHECK((ran.exit_code == 0 || ran.exit_code == 1));
  const auto at = ran.err.find("its log: " + (dir.path / "work").string() + "/run-");
  REQUIRE(at != std::string::npos);
  CHECK_FALSE(contains(ran.err, "/verification-1/"));
}

TEST_CASE("capture --seed-runs and --same-seed-runs need at least 3 reruns") {
  TempDir dir("reverify-seed-options-itest-");
  dir.write("code/train.py", "print('training')\n");
  commit_all(dir.path / "code");
  const auto result = [](double accuracy) {
    return json{{"primary", {{"name", "accuracy"}, {"value", accuracy}}},
                {"steps", {{"metric", "loss"}, {"values", {2.3, 2.1}}}}}
        .dump();
  };
  dir.write("out/result.json", result(0.9));
  auto capture = [&](const std::string& option, const std::string& folder) {
    std::vector<std::string> args = {"capture", "--model", "m",        "--version",       "1",
                                     "--owner", "team",    "--python", "/usr/bin/python3"};
    for (const auto& [flag, path] :
         std::vector<std::pair<std::string, std::string>>{{"--out", "release"},
                                                          {"--code", "code"},
                                                          {"--result", "out/result.json"},
                                                          {option, folder}}) {
      args.push_back(flag);
      args.push_back((dir.path / path).string());
    }
    args.insert(args.end(), {"--", "python3", "train.py"});
    return run_cli(args, dir.path);
  };
  for (const std::string option : {"--seed-runs", "--same-seed-runs"}) {
    CAPTURE(option);
    const std::string folder = option.substr(2);
    for (int run = 1; run <= 2; ++run)
      dir.write(folder + "/" + std::to_string(run) + "/result.json", result(0.9 + run * 0.001));
    check_refused(capture(option, folder), "reverify capture: " + option + " " +
                                               (dir.path / folder).string() +
                                               ": 2 rerun(s) found (one sub-folder each), at "
                                               "least 3 needed for a band");
    CHECK_FALSE(fs::exists(dir.path / "release/manifest.json"));
    dir.write(folder + "/3/result.json", result(0.903));
    const Ran three = capture(option, folder);
    INFO(three.out << three.err);
    CHECK(three.exit_code == 0);
    CHECK(contains(three.out,
                   option == "--seed-runs" ? ", 3 seed runs)" : ", 3 same-seed steps reruns)"));
    fs::remove_all(dir.path / "release");
  }
}
