// `reverify plan` names the stored calibrations whose leave-one-out paged more often than the
// false-page rate allows, with the checks to blame (issue #22 item 4), in its text and its --json;
// a calibration within alpha, or of a version no longer listed, gives no warning. It names the
// large versions without a subsample reference with the commands that record and check one (issue
// #27), and says what each cost was read from.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "policies/calibration.hpp"
#include "store/store.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

namespace fs = std::filesystem;
using namespace reverify;
using namespace reverify::test;

namespace {

using reverify::test::contains;

ModelVersionRow listed(const std::string& model, const std::string& version) {
  ModelVersionRow row;
  row.model = model;
  row.version = version;
  row.owner = "team-a";
  row.level = "equivalent";
  row.source = "local";
  row.location = "/reg/" + model + "/" + version + "/manifest.json";
  row.manifest_sha256 = "aa";
  return row;
}

// `runs` held-out runs of which `paged` failed on `check` (and on nothing else).
LeaveOneOut held_out(std::size_t runs, std::size_t paged, const std::string& check) {
  LeaveOneOut loo;
  for (std::size_t i = 0; i < runs; ++i) {
    LeaveOneOutRun run;
    run.index = i;
    run.verdict.cls = VerdictClass::passed;
    if (i < paged) {
      run.verdict.cls = VerdictClass::failed_out_of_tolerance;
      CheckResult failed;
      failed.name = check;
      failed.kind = CheckKind::segment;
      failed.outcome = CheckOutcome::failed;
      run.verdict.checks.push_back(failed);
    }
    loo.runs.push_back(run);
  }
  loo.paged = paged;
  return loo;
}

}  // namespace

TEST_CASE("plan: a calibration whose leave-one-out paged too often is a warning naming the check") {
  TempDir dir("reverify-plan-itest-");
  const auto config = dir.write("reverify.yaml",
                                "state_dir: state\n"
                                "sources: [{name: local, kind: directory, root: reg}]\n");
  fs::create_directories(dir.path / "state");
  {
    auto store = Store::open(dir.path / "state/reverify.db", system_now);
    REQUIRE(store.ok());
    ToleranceSpec spec;
    spec.seed_runs["accuracy"] = {0.97, 0.975, 0.98};
    // 2 of 24 paged at 0.01 (0.24 expected): honest bands do that in 2.4% of calibrations.
    const auto too_often =
        leave_one_out_finding(held_out(24, 2, "segment:radius=low:accuracy"), 0.01);
    REQUIRE(too_often.excess.has_value());
    // 1 of 40 at 0.01: 33% of calibrations do that, no warning.
    const auto within = leave_one_out_finding(held_out(40, 1, "primary:accuracy"), 0.01);
    REQUIRE_FALSE(within.excess.has_value());
    for (const auto& [version, finding] :
         {std::pair{"1", too_often}, std::pair{"2", within}, std::pair{"3", too_often}}) {
      REQUIRE((*store)->upsert_model_version(listed("m", version)).ok());
      REQUIRE((*store)
                  ->put_calibration("m", version, spec, 24, CalibrationEnd::complete, "", finding)
                  .ok());
    }
    // m@3 is gone from its source: the next sync lists only 1 and 2.
    REQUIRE((*store)->sync_model_versions("local", {listed("m", "1"), listed("m", "2")}).ok());
  }

  const Ran plan = run_cli({"plan", "--config", config.string()}, dir.path);
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(contains(plan.out,
                 "\n  WARNING m@1: its calibration's leave-one-out: 2 of 24 seed runs paged where "
                 "0.24 are expected at false_page_rate 0.01"));
  CHECK(contains(plan.out, "to blame: segment:radius=low:accuracy (2)"));
  // Its command names the config, so it runs as printed.
  CHECK(contains(plan.out, "`reverify calibrate m@1 --seeds 24 --config "));
  CHECK_FALSE(contains(plan.out, "WARNING m@2"));
  CHECK_FALSE(contains(plan.out, "WARNING m@3"));  // removed from its source

  const Ran as_json = run_cli({"plan", "--config", config.string(), "--json"}, dir.path);
  REQUIRE(as_json.exit_code == 0);
  const auto j = nlohmann::json::parse(as_json.out);
  REQUIRE(j["calibration_warnings"].size() == 1);
  const auto& warning = j["calibration_warnings"][0];
  CHECK(warning["model"] == "m");
  CHECK(warning["version"] == "1");
  CHECK(warning["blamed"] ==
        nlohmann::json::array({{{"check", "segment:radius=low:accuracy"}, {"runs", 2}}}));
  CHECK(warning["leave_one_out"].get<std::string>().find("2 of 24 seed runs paged") == 0);
}

TEST_CASE("plan: a large version without a subsample reference is named, with its --config") {
  TempDir dir("reverify-plan-itest-");
  const auto config = dir.write("reverify.yaml",
                                "state_dir: state\n"
                                "sources: [{name: local, kind: directory, root: reg}]\n"
                                "models:\n"
                                "  big: {cadence: {subsample: 1mo}}\n");
  fs::create_directories(dir.path / "state");
  {
    auto store = Store::open(dir.path / "state/reverify.db", system_now);
    REQUIRE(store.ok());
    auto bare = listed("big", "1");
    bare.gpus = 8;
    bare.duration_s = 36'000;
    auto referenced = bare;
    referenced.version = "2";
    referenced.subsample_fraction = 0.25;  // no duration recorded: a quarter of the full rebuild
    REQUIRE((*store)->sync_model_versions("local", {bare, referenced}).ok());
  }
  const Ran plan = run_cli({"plan", "--config", config.string()}, dir.path);
  INFO(plan.out << plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(contains(plan.out, "\n  big@2  subsample  wave 0  20 GPU-hours (subsample.fraction)  "));
  CHECK(contains(plan.out,
                 "\n  no subsample reference big@1 (large: its cadence runs subsample "
                 "every 30 d): a subsample rebuild of it is refused"));
  CHECK(
      contains(plan.out, "`reverify run big@1 --mode subsample --config " + config.string() + "`"));
  CHECK(contains(plan.out,
                 "\n  skipped big@1: cadence: subsample every 30 d, never run, but the "
                 "manifest records no subsample reference"));
  // A mode never run has no next due date: the plan says so instead of the cycle's start.
  CHECK(contains(plan.out,
                 "cadence big@1: subsample every 30 d, 80 GPU-hours (no-subsample-reference), "
                 "next due never run;"));
}
