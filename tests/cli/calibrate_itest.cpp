// `reverify calibrate` end to end on the digits example (issue #12, property 2), with a config so
// that the calibration is stored: what it prints (each band with the shift it catches and the
// declared detect, never a pass/fail of the seed mean against its own band; the leave-one-out
// estimate; why --until-power stopped), and that a second calibration continues past the seeds
// the stored one used.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "store/store.hpp"
#include "tests/support/digits_trainer.hpp"
#include "tests/support/files.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

namespace fs = std::filesystem;
using namespace reverify::test;

namespace {

const std::string kTarget = "digits-mlp@2026.11.1";

using reverify::test::contains;

// A state_dir of its own over the released example, with `detect` for accuracy.
fs::path config_with_detect(TempDir& dir, const std::string& detect) {
  build_digits_trainer(dir.path / "trainer");
  return dir.write("reverify.yaml",
                   "state_dir: state\n"
                   "sources: [{name: examples, kind: directory, root: " +
                       (source_dir() / "examples/registry").string() +
                       "}]\n"
                       "code_mirrors: {" +
                       std::string(kDigitsRepoUrl) +
                       ": trainer}\n"
                       "runner: {kind: process, process: {path_env: /usr/bin:/bin}}\n"
                       "models: {digits-mlp: {detect: {accuracy: " +
                       detect + "}}}\n");
}

}  // namespace

TEST_CASE("calibrate --until-power: out of reach even at the low end of the spread, it stops") {
  TempDir dir("reverify-calibrate-itest-");
  const auto config = config_with_detect(dir, "0.005");
  const Ran ran = run_cli({"calibrate", kTarget, "--config", config.string(), "--until-power",
                           "--seeds", "3", "--max-runs", "60"},
                          dir.path);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(contains(ran.out, "calibrated " + kTarget + ": 3 seed-only reruns added\n"));
  // The bands: no outcome column, the shift each catches and the declared detect.
  CHECK(contains(ran.out,
                 "check                             seed mean  band                  "
                 "catches    detect"));
  CHECK(contains(ran.out, "\n  UNDER primary:accuracy "));
  CHECK_FALSE(contains(ran.out, "  PASS  "));
  CHECK_FALSE(contains(ran.out, " is within the "));  // the mean is not judged against its band
  CHECK(contains(ran.out,
                 "leave-one-out: each of the 43 seed runs judged as a rebuild against "
                 "the other 42: "));
  CHECK(contains(ran.out,
                 "--until-power: no number of seed runs would meet tolerance.detect for "
                 "primary:accuracy, even with a spread "));
  CHECK(contains(ran.out, "stopped at 43 seed runs"));
  CHECK(contains(ran.out, "stored in "));
  // Stored with what leave-one-out found, for `reverify plan`: its warning exactly when printed.
  {
    auto store = reverify::Store::open(dir.path / "state/reverify.db", reverify::system_now,
                                       /*read_only=*/true);
    REQUIRE(store.ok());
    auto latest = (*store)->latest_calibrations();
    REQUIRE(latest.ok());
    REQUIRE(latest->size() == 1);
    const auto& found = latest->front().leave_one_out;
    REQUIRE(found.has_value());
    CHECK(found->runs == 43);
    CHECK(found->excess.has_value() == contains(ran.out, "WARNING: leave-one-out: "));
  }

  // No seed run uses the release's seed (42): it would copy the release, not measure a spread.
  CHECK(contains(ran.out, "\n  seed41: accuracy "));
  CHECK_FALSE(contains(ran.out, "\n  seed42: accuracy "));
  CHECK(contains(ran.out, "\n  seed44: accuracy "));
  // A second calibration continues past the seeds the stored one used (41, 43, 44 were added).
  const Ran again =
      run_cli({"calibrate", kTarget, "--config", config.string(), "--seeds", "2"}, dir.path);
  INFO(again.out << again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(contains(again.out, "\n  seed45: accuracy "));
  CHECK(contains(again.out, "\n  seed46: accuracy "));
  CHECK(contains(again.out, "leave-one-out: each of the 45 seed runs"));
}

TEST_CASE("calibrate --until-power: a detect the bands reach stops at once, said so") {
  TempDir dir("reverify-calibrate-itest-");
  const auto config = config_with_detect(dir, "0.03");
  const Ran ran =
      run_cli({"calibrate", kTarget, "--config", config.string(), "--until-power", "--seeds", "3"},
              dir.path);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(
      contains(ran.out, "--until-power: every declared tolerance.detect is met with 43 seed runs"));
  CHECK_FALSE(contains(ran.out, "UNDER"));
  CHECK(contains(ran.out, "it catches shifts of ≤ 0.03 as tolerance.detect asks"));
}

TEST_CASE(
    "calibrate --mode subsample --config stores the subsample reference's calibration, and "
    "a subsample rebuild is judged by it") {
  TempDir dir("reverify-calibrate-itest-");
  const auto config = config_with_detect(dir, "0.03");
  const Ran ran = run_cli(
      {"calibrate", kTarget, "--config", config.string(), "--mode", "subsample", "--seeds", "3"},
      dir.path);
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  CHECK(contains(ran.out, "calibrated " + kTarget + ": 3 seed-only reruns added\n"));
  CHECK(contains(ran.out, "later subsample verdicts of " + kTarget + " use it"));
  CHECK_FALSE(contains(ran.out + ran.err, "paste"));
  CHECK_FALSE(contains(ran.out + ran.err, "put it in the manifest"));
  auto store = reverify::Store::open(dir.path / "state/reverify.db", reverify::system_now, true);
  REQUIRE(store.ok());
  auto subsample =
      (*store)->calibration("digits-mlp", "2026.11.1", reverify::CalibratedReference::subsample);
  REQUIRE(subsample.ok());
  REQUIRE(subsample->has_value());
  CHECK((*subsample)->seed_runs.at("accuracy").size() == 43);  // the reference's 40, and 3 more
  CHECK_FALSE((*store)->calibration("digits-mlp", "2026.11.1")->has_value());

  const Ran rebuilt = run_cli(
      {"run", kTarget, "--config", config.string(), "--mode", "subsample", "--json"}, dir.path);
  INFO(rebuilt.err);
  REQUIRE(rebuilt.exit_code == 0);
  CHECK(contains(rebuilt.out, "\"name\": \"input:subsample-draw\""));
  CHECK(contains(rebuilt.out, "\"seed_runs\": 43"));

  const Ran unkept =
      run_cli({"calibrate", kTarget, "--registry", (source_dir() / "examples/registry").string(),
               "--code-mirror", std::string(kDigitsRepoUrl) + "=" + (dir.path / "trainer").string(),
               "--mode", "subsample", "--seeds", "3"},
              dir.path);
  INFO(unkept.out << unkept.err);
  REQUIRE(unkept.exit_code == 0);
  CHECK(contains(unkept.err + unkept.out, "measured, not kept: without --config"));
  CHECK_FALSE(contains(unkept.out, "\"tolerance\""));
}
