// The verification pipeline against a fake runner: preflight stops drifted inputs before any
// runner call and names what moved, runner failures map onto error classes, a clean run goes
// through every stage in order, calibration turns seed-only runs into a ToleranceSpec.

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <limits>

#include "core/hashing.hpp"
#include "policies/verdict.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/verify/fake_runner.hpp"
#include "verify/calibration.hpp"
#include "verify/pipeline.hpp"
#include "verify/pipeline_pages.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

// A released model version on disk: <root>/registry/m/1/ (manifest location, snapshot.sha256)
// and its dataset <root>/data/ referenced as ../../../data.
struct Release {
  test::TempDir temp{"pipeline-test-"};
  fs::path root = temp.path;
  VerificationRequest request;

  Release() {
    test::write_file(root / "data/a.csv", "id,label\n1,3\n");
    test::write_file(root / "data/b.csv", "id,label\n2,5\n");
    auto files = hash_directory(root / "data");
    REQUIRE(files.ok());
    fs::path version_dir = root / "registry/m/1";
    test::write_file(version_dir / kSnapshotFileManifestName, files->text());

    Manifest& m = request.manifest;
    m.model = "m";
    m.version = "1";
    m.owner = "team";
    m.code.repo = "https://git.example/team/trainer.git";
    m.code.commit = std::string(40, 'a');
    m.run.entrypoint = {"python3", "train.py"};
    m.evaluation.primary = PrimaryMetric{"accuracy", 0.96, true};
    m.data = Data{Snapshot{SnapshotKind::files, "../../../data", files->root, std::nullopt},
                  std::nullopt, std::nullopt};
    m.tolerance = ToleranceSpec{};
    m.tolerance->seed_runs["accuracy"] = {0.955, 0.96, 0.965, 0.958, 0.962};
    request.verification_id = "v1";
    request.manifest_location = (version_dir / "manifest.json").string();
    request.work_root = root / "work";
  }
};

struct Harness {
  test::FakeRunner runner;
  VerdictPolicy policy;
  std::vector<std::string> stages, details;
  std::vector<JobHandle> started;
  PipelineDeps deps{runner,
                    policy,
                    [this](std::string_view stage, std::string_view detail) {
                      stages.emplace_back(stage);
                      details.emplace_back(detail);
                    },
                    [this](const JobHandle& job) { started.push_back(job); },
                    {}};
};

const CheckResult* find_check(const Verdict& verdict, const std::string& name) {
  auto it = std::find_if(verdict.checks.begin(), verdict.checks.end(),
                         [&](const CheckResult& c) { return c.name == name; });
  return it == verdict.checks.end() ? nullptr : &*it;
}

TEST_CASE("a changed data file fails preflight as input-drift, naming it, before any runner call") {
  Release release;
  Harness h;
  test::write_file(release.root / "data/b.csv", "id,label\n2,6\n");
  test::write_file(release.root / "data/c.csv", "id,label\n3,1\n");

  VerificationOutcome outcome = run_verification(release.request, h.deps);

  CHECK(outcome.verdict.cls == VerdictClass::failed_input_drift);
  CHECK(h.runner.calls.empty());
  CHECK(h.started.empty());
  const nlohmann::json& moved = outcome.evidence["inputs"]["dataset"]["moved"];
  CHECK(moved["changed"] == nlohmann::json::array({"b.csv"}));
  CHECK(moved["added"] == nlohmann::json::array({"c.csv"}));
  const CheckResult* dataset = find_check(outcome.verdict, "input:dataset");
  REQUIRE(dataset != nullptr);
  CHECK(dataset->outcome == CheckOutcome::failed);
  CHECK(dataset->explanation.find("b.csv (changed)") != std::string::npos);
  CHECK(dataset->explanation.find("c.csv (added)") != std::string::npos);

  std::vector<MovedInput> pages = moved_inputs(outcome);
  REQUIRE(pages.size() == 1);
  CHECK(pages[0].input == "dataset");
  CHECK(pages[0].recorded == release.request.manifest.data->snapshot->sha256);
  CHECK(pages[0].changed == std::vector<std::string>{"b.csv (changed)", "c.csv (added)"});
}

TEST_CASE("without a trustworthy recorded file manifest the drift is still caught, files unnamed") {
  Release release;
  Harness h;
  SUBCASE("missing") {
    fs::remove(release.root / "registry/m/1" / kSnapshotFileManifestName);
  }
  SUBCASE("tampered") {
    test::write_file(release.root / "registry/m/1" / kSnapshotFileManifestName, "x\n");
  }
  test::write_file(release.root / "data/a.csv", "id,label\n1,4\n");

  VerificationOutcome outcome = run_verification(release.request, h.deps);

  CHECK(outcome.verdict.cls == VerdictClass::failed_input_drift);
  CHECK(h.runner.calls.empty());
  CHECK(outcome.evidence["inputs"]["dataset"]["moved"].contains("unavailable"));
  CHECK(outcome.input_drift.changed == 1);
  CHECK(outcome.input_drift.missing == 0);
}

TEST_CASE("a missing dataset folder is input-drift") {
  Release release;
  Harness h;
  fs::remove_all(release.root / "data");
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::failed_input_drift);
  CHECK(h.runner.calls.empty());
  // Missing, not changed: what tells a moved registry from a drift (policies/source_condition).
  CHECK(outcome.input_drift.missing == 1);
  CHECK(outcome.input_drift.changed == 0);
}

TEST_CASE("clean inputs: every stage in order, outputs read by the pipeline, verdict passed") {
  Release release;
  Harness h;

  VerificationOutcome outcome = run_verification(release.request, h.deps);

  CHECK(h.runner.calls ==
        std::vector<std::string>{"prepare", "start", "wait", "collect", "cleanup"});
  CHECK(h.stages ==
        std::vector<std::string>{"preflight", "provision", "run", "collect", "compare"});
  REQUIRE(h.started.size() == 1);
  CHECK(h.started[0].rebuild_id == "v1");
  REQUIRE(outcome.job.has_value());
  CHECK(outcome.job->ref == "job-v1");
  CHECK(outcome.log_tail == "trained\n");
  CHECK(outcome.verdict.cls == VerdictClass::passed);
  REQUIRE(!outcome.verdict.checks.empty());
  CHECK(outcome.verdict.checks.front().name == "input:dataset");
  CHECK(outcome.verdict.checks.front().outcome == CheckOutcome::passed);
  CHECK(find_check(outcome.verdict, "primary:accuracy") != nullptr);
  CHECK(outcome.evidence["outputs"]["predictions_sha256"].get<std::string>().size() == 64);
  for (const char* stage : {"preflight", "provision", "run", "collect", "compare"}) {
    CHECK(outcome.evidence["durations"].contains(stage));
  }
  // The job got the preflight's dataset path and the mirror-free recorded repo.
  const RebuildSpec& spec = h.runner.started.at(0);
  REQUIRE(spec.data_path.has_value());
  CHECK(fs::weakly_canonical(*spec.data_path) == fs::weakly_canonical(release.root / "data"));
  CHECK(spec.manifest.code.repo == "https://git.example/team/trainer.git");
  CHECK(spec.work_dir == release.root / "work/v1/job");
  // The verification's scratch is gone once the verdict is in.
  CHECK_FALSE(fs::exists(release.root / "work/v1"));
}

TEST_CASE("a rebuilt metric far outside the seed-run band fails out of tolerance") {
  Release release;
  Harness h;
  h.runner.primary = [](const RebuildSpec&) { return 0.80; };
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::failed_out_of_tolerance);
  const CheckResult* primary = find_check(outcome.verdict, "primary:accuracy");
  REQUIRE(primary != nullptr);
  CHECK(primary->outcome == CheckOutcome::failed);
  REQUIRE(primary->margin.has_value());
  CHECK(*primary->margin < 0);
}

// A release with evaluation.scoring: an eval set of 20 binary records (labels alternating; group
// a is records 0..9, group b 10..19) whose release predictions are all right, and seed runs
// whose aggregate accuracy varied while group a never moved.
void add_scoring(Release& release) {
  const fs::path dir = release.root / "registry/m/1";
  std::string csv = "id,label,group\n";
  Predictions released;
  for (int i = 0; i < 20; ++i) {
    csv += std::to_string(i) + "," + std::to_string(i % 2) + "," + (i < 10 ? "a" : "b") + "\n";
    released.values.push_back(i % 2 ? 0.9 : 0.1);
  }
  released.rows = released.values.size();
  test::write_file(dir / "eval.csv", csv);
  REQUIRE(write_npy(dir / "predictions.npy", released).ok());
  Manifest& m = release.request.manifest;
  m.evaluation.primary = PrimaryMetric{"accuracy", 1.0, true};
  m.evaluation.set = FileRef{"eval.csv", sha256_file(dir / "eval.csv").value()};
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  ScoringSpec scoring;
  scoring.task = ScoringTask::binary;
  scoring.labels.column = "label";
  scoring.metrics = {ScoringMetric::accuracy};
  scoring.segments = {SegmentKeySpec{"group", RecordColumn{std::nullopt, std::nullopt, "group"}}};
  m.evaluation.scoring = scoring;
  m.tolerance->seed_runs["accuracy"] = {0.80, 0.85, 0.90, 0.95, 0.85, 0.90, 0.80};
  m.tolerance->segment_seed_runs["group=a"]["accuracy"] = std::vector<double>(7, 1.0);
  m.tolerance->segment_seed_runs["group=b"]["accuracy"] = {0.6, 0.7, 0.8, 0.9, 0.7, 0.8, 0.6};
}

// The fake job's predictions for add_scoring's eval set: right on every record (odd records are
// positive) except those in `positive_instead` (even records it predicts positive, wrongly).
std::vector<double> predicted(std::initializer_list<int> positive_instead) {
  std::vector<double> out;
  for (int i = 0; i < 20; ++i) {
    const bool flipped =
        std::find(positive_instead.begin(), positive_instead.end(), i) != positive_instead.end();
    out.push_back(i % 2 || flipped ? 0.9 : 0.1);
  }
  return out;
}

TEST_CASE("scoring: a rebuild crossing the threshold on one segment fails, naming it and count") {
  Release release;
  add_scoring(release);
  Harness h;
  // records 0, 2 and 4 of group a (label 0) crossed to positive: a 7/10, the aggregate 17/20
  h.runner.predictions = predicted({0, 2, 4});
  h.runner.primary = [](const RebuildSpec&) { return 0.85; };
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::failed_out_of_tolerance);
  const CheckResult* primary = find_check(outcome.verdict, "primary:accuracy");
  REQUIRE(primary != nullptr);
  CHECK(primary->outcome == CheckOutcome::passed);
  CHECK(primary->evidence["examples"] == 20);
  const CheckResult* a = find_check(outcome.verdict, "segment:group=a:accuracy");
  REQUIRE(a != nullptr);
  CHECK(a->outcome == CheckOutcome::failed);
  CHECK(*a->observed == doctest::Approx(0.7));
  CHECK(a->explanation.find("3 of its 10 records changed side at threshold 0.5 (3 became wrong") !=
        std::string::npos);
  CHECK(outcome.verdict.explanation.find("segment:group=a:accuracy") != std::string::npos);
  CHECK(find_check(outcome.verdict, "job:metric-agrees")->outcome == CheckOutcome::passed);
}

TEST_CASE("scoring: a job whose evaluation code reports what its predictions do not give") {
  Release release;
  add_scoring(release);
  Harness h;
  h.runner.predictions = predicted({});
  h.runner.primary = [](const RebuildSpec&) { return 0.95; };  // its predictions score 1
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  const CheckResult* agrees = find_check(outcome.verdict, "job:metric-agrees");
  REQUIRE(agrees != nullptr);
  CHECK(agrees->outcome == CheckOutcome::failed);
  CHECK(agrees->explanation.find("it reports primary accuracy 0.95, its predictions score 1") !=
        std::string::npos);
  CHECK(outcome.verdict.cls == VerdictClass::failed_out_of_tolerance);
}

// Found by trying the pipeline as an attacker would: one NaN in the released predictions (their
// hash updated) made them unreadable, and every check on predictions vanished while the verdict
// passed on the rest.
TEST_CASE("fail closed: released predictions that cannot be read whole stop the verification") {
  Release release;
  add_scoring(release);
  Harness h;
  h.runner.predictions = predicted({});
  h.runner.primary = [](const RebuildSpec&) { return 1.0; };
  // Bytes of a NaN in the first value of the release's .npy, the recorded hash updated.
  const fs::path file = release.root / "registry/m/1/predictions.npy";
  Predictions nan;
  nan.values = std::vector<double>(20, 0.5);
  nan.values[3] = std::numeric_limits<double>::quiet_NaN();
  nan.rows = nan.values.size();
  REQUIRE(write_npy(file, nan).ok());
  release.request.manifest.evaluation.predictions->sha256 = sha256_file(file).value();
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_manifest_invalid);
  CHECK(h.runner.calls.empty());  // before any job
  CHECK(outcome.verdict.explanation.find("evaluation.predictions") != std::string::npos);
  CHECK(outcome.verdict.explanation.find("NaN") != std::string::npos);
  CHECK(outcome.verdict.explanation.find("no job was started") != std::string::npos);
  const CheckResult* hashed = find_check(outcome.verdict, "input:reference-predictions");
  REQUIRE(hashed != nullptr);
  CHECK(hashed->outcome == CheckOutcome::passed);  // the hash matches: the record itself is bad
  CHECK_FALSE(fs::exists(release.request.work_root / "v1"));

  // A reattached job (no preflight in this process) reads them for the first time: the same.
  Harness resumed;
  resumed.runner.predictions = predicted({});
  JobHandle job{"v1", RunnerKind::process, "job-v1", release.root / "work/v1/job"};
  resumed.runner.started.push_back(RebuildSpec{});  // collect() reads the last started spec
  outcome = resume_verification(release.request, job, resumed.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_manifest_invalid);
}

TEST_CASE(
    "fail closed: rebuilt predictions of another shape are the job's, not a smaller verdict") {
  Release release;
  add_scoring(release);
  Harness h;
  h.runner.predictions = {0.9, 0.1, 0.9};  // 3 rows against the release's 20
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_job);
  CHECK(outcome.verdict.explanation.find("3 rows (1-D) against the release's 20 rows (1-D)") !=
        std::string::npos);
}

TEST_CASE("fail closed: a manifest path that leaves its root is refused before any job") {
  Release release;
  Harness h;
  release.request.manifest.run.workdir = "../../../../tmp";
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_manifest_invalid);
  CHECK(h.runner.calls.empty());
  CHECK(outcome.verdict.explanation.find("run.workdir: must be a folder without '..' segments") !=
        std::string::npos);
  release.request.manifest.run.workdir = "/src";
  release.request.manifest.evaluation.predictions = FileRef{"../../../etc/passwd", std::nullopt};
  outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_manifest_invalid);
  CHECK(outcome.verdict.explanation.find("evaluation.predictions.uri") != std::string::npos);
  CHECK(h.runner.calls.empty());
}

TEST_CASE("fail closed: a files snapshot at a scheme reverify cannot check is refused, named") {
  Release release;
  Harness h;
  release.request.manifest.data->snapshot->uri = "s3://bucket/data";
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_manifest_invalid);
  CHECK(outcome.verdict.explanation.find("data.snapshot.uri") != std::string::npos);
  CHECK(h.runner.calls.empty());
}

TEST_CASE("scoring: calibration scores each seed run's predictions, not the job's figure") {
  Release release;
  add_scoring(release);
  Harness h;
  h.runner.predictions = predicted({10});                     // 19/20; group b 9/10
  h.runner.primary = [](const RebuildSpec&) { return 0.5; };  // the job's own figure
  CalibrationRequest request;
  request.base = release.request;
  request.runs = 1;
  CalibrationOutcome outcome = run_calibration(request, h.deps);
  REQUIRE(outcome.spec.has_value());
  CHECK(outcome.spec->seed_runs.at("accuracy").back() == doctest::Approx(0.95));
  CHECK(outcome.spec->segment_seed_runs.at("group=b").at("accuracy").back() ==
        doctest::Approx(0.9));
  CHECK(outcome.spec->segment_seed_runs.at("group=a").at("accuracy").back() == 1.0);
  // and the records whose decision changed against the release's: record 10, of group b
  CHECK(outcome.spec->parity_seed_runs.at("parity:threshold=0.5") == std::vector<double>{0.05});
  CHECK(outcome.spec->parity_seed_runs.at("parity:threshold=0.5:segment:group=b") ==
        std::vector<double>{0.1});
  CHECK(outcome.spec->parity_seed_runs.at("parity:threshold=0.5:segment:group=a") ==
        std::vector<double>{0});
}

TEST_CASE("code mirrors replace the recorded repository for the checkout only") {
  Release release;
  Harness h;
  release.request.code_mirrors["https://git.example/team/trainer.git"] = "/srv/mirrors/trainer";
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  REQUIRE(h.runner.started.size() == 1);
  CHECK(h.runner.started[0].manifest.code.repo == "/srv/mirrors/trainer");
  CHECK(release.request.manifest.code.repo == "https://git.example/team/trainer.git");
}

TEST_CASE("runner failures map onto error classes, and the job is always cleaned up") {
  Release release;
  Harness h;
  VerdictClass expected = VerdictClass::error_job;
  std::vector<std::string> calls;
  SUBCASE("prepare: provision") {
    h.runner.prepare_status = make_error(ErrorCode::provision, "image not found");
    expected = VerdictClass::error_provision;
    calls = {"prepare"};
  }
  SUBCASE("start fails: provision") {
    h.runner.start_error = make_error(ErrorCode::io, "cannot fork");
    expected = VerdictClass::error_provision;
    calls = {"prepare", "start"};
  }
  SUBCASE("runner lost while waiting") {
    h.runner.wait_error = make_error(ErrorCode::runner_lost, "dockerd went away");
    expected = VerdictClass::error_runner_lost;
    calls = {"prepare", "start", "wait", "cleanup"};
  }
  SUBCASE("non-zero exit") {
    h.runner.exit = JobExit{3, false, "Traceback: boom\n", std::nullopt};
    calls = {"prepare", "start", "wait", "cleanup"};
  }
  SUBCASE("timeout") {
    h.runner.exit = JobExit{-1, true, "step 10\n", std::nullopt};
    calls = {"prepare", "start", "wait", "cleanup"};
  }
  SUBCASE("invalid result.json") {
    h.runner.collect_error = make_error(ErrorCode::job, "result.json: primary.value missing");
    calls = {"prepare", "start", "wait", "collect", "cleanup"};
  }
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == expected);
  CHECK(h.runner.calls == calls);
  CHECK_FALSE(outcome.verdict.explanation.empty());
}

TEST_CASE("outputs the job wrote wrong are its fault; a copy failing here is the platform's") {
  Release release;
  Harness h;
  h.runner.collect_error = make_error(
      ErrorCode::job, "result.json: 83886080 bytes, over the contract's limit of 16777216 bytes");
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_job);
  REQUIRE(outcome.verdict.job_output_fault.has_value());
  CHECK(*outcome.verdict.job_output_fault == h.runner.collect_error->message);
  CHECK(outcome.verdict.explanation.find("the job exited 0 but its outputs break the rebuild "
                                         "contract: result.json: 83886080 bytes") == 0);
  CHECK_FALSE(outcome.verdict.job_exit_status.has_value());

  Harness copy;
  copy.runner.collect_error =
      make_error(ErrorCode::io, "copying out to dest: No space left on device");
  outcome = run_verification(release.request, copy.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_infra);
  CHECK_FALSE(outcome.verdict.job_output_fault.has_value());
}

TEST_CASE("a verdict of a job whose code was trusted says so") {
  Release release;
  Harness h;
  VerificationOutcome sandboxed = run_verification(release.request, h.deps);
  CHECK_FALSE(sandboxed.verdict.job_code_trusted);
  CHECK(sandboxed.verdict.explanation.find("trusted") == std::string::npos);
  h.runner.trusted = true;
  VerificationOutcome trusted = run_verification(release.request, h.deps);
  CHECK(trusted.verdict.cls == sandboxed.verdict.cls);
  CHECK(trusted.verdict.job_code_trusted);
  CHECK(to_json(trusted.verdict)["job_code_trusted"] == true);
  CHECK(trusted.verdict.explanation.find("The job's code was trusted (runner.trust_job_code: "
                                         "true): it ran unisolated") != std::string::npos);
}

TEST_CASE("a non-zero exit keeps the job's log tail and says the status") {
  Release release;
  Harness h;
  h.runner.exit = JobExit{3, false, "Traceback: boom\n", std::nullopt};
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.log_tail == "Traceback: boom\n");
  CHECK(outcome.verdict.explanation.find("status 3") != std::string::npos);
  // It exited by itself: the recorded job failed to rerun, its last lines quoted.
  CHECK(outcome.verdict.job_exit_status == 3);
  CHECK(outcome.verdict.explanation.find("the recorded job failed to rerun") == 0);
  CHECK(outcome.verdict.explanation.ends_with("Traceback: boom\n"));
  // Killed by a signal (a memory limit, the runner): not the job's own doing.
  h.runner.exit = JobExit{137, false, "step 9\n", 12.5};
  outcome = run_verification(release.request, h.deps);
  CHECK_FALSE(outcome.verdict.job_exit_status.has_value());
  CHECK(outcome.verdict.explanation.find("signal 9") != std::string::npos);
}

TEST_CASE("the platform failing under the job is error:infra with its evidence, never the job's") {
  Release release;
  Harness h;
  JobExit exit{1, false, "writing checkpoint\nOSError: No space left on device\n", std::nullopt};
  exit.platform_fault = PlatformFault{
      "the platform failed under the job, not the job itself: the file system of /state was full",
      {{"kind", "disk_full"}, {"file_systems", {{{"path", "/state"}, {"lowest_free_bytes", 0}}}}}};
  h.runner.exit = exit;
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_infra);
  CHECK_FALSE(outcome.verdict.job_exit_status.has_value());  // no fault=job on the page
  CHECK(outcome.verdict.explanation.rfind("the platform failed under the job", 0) == 0);
  CHECK(outcome.verdict.explanation.find("/state was full") != std::string::npos);
  CHECK(outcome.evidence["platform_fault"]["kind"] == "disk_full");
  CHECK(outcome.evidence["platform_fault"]["reason"].get<std::string>().find("/state") !=
        std::string::npos);
  CHECK(outcome.log_tail.find("No space left on device") != std::string::npos);

  // The same job succeeding on that disk is judged as usual: the evidence decides nothing then.
  exit.exit_code = 0;
  h.runner.exit = exit;
  outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::passed);
  CHECK_FALSE(outcome.evidence.contains("platform_fault"));

  // ... but outputs it could not write are the platform's too.
  h.runner.collect_error = make_error(ErrorCode::job, "result.json: not found");
  outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_infra);
  CHECK(outcome.verdict.explanation.find("collecting outputs failed") != std::string::npos);
}

TEST_CASE("a job that ran into its own pids or memory bound is error:job, the job's fault") {
  Release release;
  Harness h;
  JobExit exit{137, false, "allocating\n", std::nullopt};
  exit.limit_hit = "the job hit its memory limit of 268435456 bytes (runner.process.memory_bytes)";
  h.runner.exit = exit;
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.verdict.cls == VerdictClass::error_job);
  CHECK(outcome.verdict.job_exit_status == 137);
  CHECK(outcome.verdict.explanation.find("the job hit its memory limit of 268435456 bytes") !=
        std::string::npos);
}

TEST_CASE("the job's own run time, as the runner measured it, is recorded beside the stages") {
  Release release;
  Harness h;  // the fake runner's job ran 1.25 s by its own clock
  VerificationOutcome outcome = run_verification(release.request, h.deps);
  CHECK(outcome.evidence["durations"]["job"] == 1.25);
  CHECK(outcome.evidence["durations"].contains("run"));  // wait()'s wall time, polling included
}

TEST_CASE("resume skips preflight and start, and finishes the reattached job") {
  Release release;
  Harness h;
  JobHandle job{"v1", RunnerKind::process, "job-v1", release.root / "work/v1/job"};
  h.runner.started.push_back(RebuildSpec{});  // collect() reads the last started spec
  VerificationOutcome outcome = resume_verification(release.request, job, h.deps);
  CHECK(h.runner.calls == std::vector<std::string>{"wait", "collect", "cleanup"});
  CHECK(outcome.verdict.cls == VerdictClass::passed);
  CHECK(outcome.evidence.contains("resumed"));
}

CalibrationRequest calibration_of(const Release& release, int runs) {
  CalibrationRequest request;
  request.base = release.request;
  request.runs = runs;
  return request;
}

// --until-power from a first batch of `runs`, at most `max_runs` seed runs in all.
CalibrationRequest until_power_of(const Release& release, int runs, int max_runs = 100) {
  CalibrationRequest request = calibration_of(release, runs);
  request.until_power = true;
  request.max_runs = max_runs;
  return request;
}

TEST_CASE("calibration: seed-only reruns extend the version's seed runs, with fresh seeds") {
  Release release;
  Predictions released;
  released.rows = 4;
  released.values = {0.2, 0.9, 0.7, 0.2};
  REQUIRE(write_npy(release.root / "registry/m/1/predictions.npy", released).ok());
  release.request.manifest.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  Harness h;
  h.runner.primary = [](const RebuildSpec& spec) {
    return 0.9 + 0.01 * static_cast<double>(spec.seed_override.value_or(100) % 7);
  };
  CalibrationOutcome outcome = run_calibration(calibration_of(release, 5), h.deps);

  REQUIRE(outcome.spec.has_value());
  CHECK_FALSE(outcome.failure.has_value());
  REQUIRE(h.runner.started.size() == 5);
  // The manifest holds 5 seed runs of seeds 1..5: the new ones are 6..10.
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(h.runner.started[i].seed_override == static_cast<std::int64_t>(i + 6));
    CHECK(h.runner.started[i].rebuild_id == "v1-seed" + std::to_string(i + 6));
  }
  const std::vector<double>& runs = outcome.spec->seed_runs.at("accuracy");
  REQUIRE(runs.size() == 10);
  CHECK(runs[5] == doctest::Approx(0.96));  // seed 6
  CHECK(outcome.spec->seed_overrides == std::vector<std::int64_t>{6, 7, 8, 9, 10});
  // Distribution statistics against the release's predictions, one per new run.
  CHECK(outcome.spec->distribution_seed_runs.at("max_abs_diff").size() == 5);
  CHECK(outcome.spec->distribution_seed_runs.at("max_abs_diff")[0] == doctest::Approx(0.1));
  CHECK(outcome.runs.size() == 5);
  CHECK(outcome.added == 5);
  // The bands now, and the leave-one-out estimate over the seed runs that have every value.
  CHECK_FALSE(outcome.bands.empty());
  REQUIRE(outcome.leave_one_out.has_value());
}

TEST_CASE("a second calibration over a stored one continues past its seeds, never reruns one") {
  Release release;
  release.request.manifest.tolerance->seed_overrides = {1, 2, 3, 4, 5};
  Harness h;
  h.runner.primary = [](const RebuildSpec& spec) {
    return 0.9 + 0.01 * static_cast<double>(spec.seed_override.value_or(100) % 7);
  };
  CalibrationOutcome first = run_calibration(calibration_of(release, 3), h.deps);
  REQUIRE(first.spec.has_value());
  CHECK(first.spec->seed_overrides == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8});
  // The next calibration starts from the stored one (the manifest's tolerance under it).
  release.request.calibration = *first.spec;
  h.runner.started.clear();
  CalibrationOutcome second = run_calibration(calibration_of(release, 2), h.deps);
  REQUIRE(second.spec.has_value());
  REQUIRE(h.runner.started.size() == 2);
  CHECK(h.runner.started[0].seed_override == 9);
  CHECK(h.runner.started[1].seed_override == 10);
  CHECK(second.spec->seed_overrides == std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK(second.spec->seed_runs.at("accuracy").size() == 10);
}

TEST_CASE("calibration until power: adds runs until tolerance.detect is met or max-runs") {
  Release release;
  Harness h;
  // A continuous metric, 0.950..0.958 by seed: sd about 0.003.
  h.runner.primary = test::continuous_accuracy;
  release.request.manifest.tolerance->seed_runs["accuracy"] = {0.952, 0.954, 0.956, 0.958, 0.95};
  SUBCASE("reachable") {
    release.request.manifest.tolerance->detect["accuracy"] = 0.0125;
    CalibrationOutcome outcome = run_calibration(until_power_of(release, 3), h.deps);
    REQUIRE(outcome.spec.has_value());
    CAPTURE(outcome.stopped);
    CHECK(outcome.power.underpowered.empty());
    CHECK(outcome.stopped.find("every declared tolerance.detect is met") != std::string::npos);
    CHECK(outcome.spec->seed_runs.at("accuracy").size() > 8);
  }
  SUBCASE("max runs") {
    release.request.manifest.tolerance->detect["accuracy"] = 0.011;
    CalibrationOutcome outcome = run_calibration(until_power_of(release, 3, 12), h.deps);
    REQUIRE(outcome.spec.has_value());
    CAPTURE(outcome.stopped);
    CHECK(outcome.spec->seed_runs.at("accuracy").size() == 12);
    CHECK(outcome.stopped.find("--max-runs 12") != std::string::npos);
    CHECK_FALSE(outcome.power.underpowered.empty());
  }
  SUBCASE("a wide spread from few runs is an estimate: more runs still reach it") {
    // The recorded runs scatter more than the reruns (sd 0.008 against 0.003): with the spread
    // of the first 5 runs no number of runs reaches 0.024, but a spread at the low end of what 5
    // runs allow would, so it measures again; the reruns' spread then reaches it.
    release.request.manifest.tolerance->seed_runs["accuracy"] = {0.944, 0.96, 0.95};
    release.request.manifest.tolerance->detect["accuracy"] = 0.024;
    CalibrationOutcome outcome = run_calibration(until_power_of(release, 2, 60), h.deps);
    REQUIRE(outcome.spec.has_value());
    CAPTURE(outcome.stopped);
    CHECK(outcome.power.underpowered.empty());
    CHECK(outcome.spec->seed_runs.at("accuracy").size() < 60);
    CHECK(std::any_of(h.details.begin(), h.details.end(), [](const std::string& d) {
      return d.find(
                 "no number would at the spread measured so far, but a spread that few runs "
                 "cannot rule out would: measuring it again") != std::string::npos;
    }));
  }
  SUBCASE("out of reach even at the low end of the spread: it stops instead of spending runs") {
    // sd 0.011 from 5 runs; 0.012 is out of reach even if the spread were 35% smaller.
    release.request.manifest.tolerance->seed_runs["accuracy"] = {0.94, 0.965, 0.95};
    release.request.manifest.tolerance->detect["accuracy"] = 0.012;
    CalibrationOutcome outcome = run_calibration(until_power_of(release, 2, 60), h.deps);
    REQUIRE(outcome.spec.has_value());
    CAPTURE(outcome.stopped);
    CHECK(h.runner.started.size() == 2);  // the first batch only
    CHECK(outcome.stopped ==
          "no number of seed runs would meet tolerance.detect for primary:accuracy, even with a "
          "spread 35.0695% below the one measured (the low end of what 5 seed runs allow, 95%): "
          "stopped at 5 seed runs");
    CHECK_FALSE(outcome.power.underpowered.empty());
  }
}

TEST_CASE("calibration in steps mode: same-seed reruns of the first steps") {
  Release release;
  release.request.manifest.evaluation.steps = StepValues{"loss", {2.3, 2.1, 1.9}};
  release.request.mode = RebuildMode::steps;
  release.request.max_steps = 3;
  Harness h;
  h.runner.steps = {2.3, 2.1, 1.9};
  CalibrationOutcome outcome = run_calibration(calibration_of(release, 3), h.deps);
  REQUIRE(outcome.spec.has_value());
  REQUIRE(h.runner.started.size() == 3);
  for (const auto& spec : h.runner.started) {
    CHECK_FALSE(spec.seed_override.has_value());  // the release's own seeds
    CHECK(spec.mode == RebuildMode::steps);
  }
  CHECK(outcome.spec->steps_same_seed_runs.size() == 3);
  CHECK(outcome.spec->seed_runs.at("accuracy").size() == 5);  // unchanged
  Verdict bands;
  bands.cls = VerdictClass::passed;
  bands.checks = outcome.bands;
  const auto* steps = find_check(bands, "steps:loss");  // points into `bands`
  REQUIRE(steps != nullptr);
  CHECK(steps->explanation.find("exact") != std::string::npos);
  CHECK_FALSE(outcome.leave_one_out.has_value());
}

TEST_CASE("calibration refuses drifted inputs and stops at the first failed run") {
  Release release;
  Harness h;
  SUBCASE("drift") {
    test::write_file(release.root / "data/a.csv", "changed\n");
    CalibrationOutcome outcome = run_calibration(calibration_of(release, 5), h.deps);
    REQUIRE(outcome.failure.has_value());
    CHECK(outcome.failure->cls == VerdictClass::failed_input_drift);
    CHECK(h.runner.calls.empty());
  }
  SUBCASE("job error") {
    h.runner.exit = JobExit{1, false, "oom\n", std::nullopt};
    CalibrationOutcome outcome = run_calibration(calibration_of(release, 5), h.deps);
    REQUIRE(outcome.failure.has_value());
    CHECK(outcome.failure->cls == VerdictClass::error_job);
    CHECK(h.runner.started.size() == 1);
    CHECK_FALSE(outcome.spec.has_value());
  }
}

}  // namespace
}  // namespace reverify
