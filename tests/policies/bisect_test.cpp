// reverify bisect's decisions: which inputs are swapped, refused (and why) or left alone, the
// mixture manifests, the cost and --budget, and how rebuilt mixtures read against A's bands.

#include <doctest/doctest.h>

#include "policies/bisect.hpp"
#include "tests/support/manifest_fixture.hpp"

namespace reverify::test {
namespace {

Manifest release_a() {
  return manifest_fixture("valid_full.json");
}

std::vector<std::string> swap_names(const BisectPlan& plan) {
  std::vector<std::string> names;
  for (const auto& swap : plan.swaps)
    names.push_back(swap.name());
  return names;
}

const RefusedInput* refusal(const BisectPlan& plan, BisectInput input) {
  for (const auto& refused : plan.refused) {
    if (refused.input == input)
      return &refused;
  }
  return nullptr;
}

CheckResult primary_check(double observed, CheckOutcome outcome) {
  CheckResult check;
  check.name = "primary:accuracy";
  check.kind = CheckKind::primary;
  check.outcome = outcome;
  check.observed = observed;
  check.reference = 0.97;
  check.band = CheckBand{0.95, 0.99};
  check.seed_runs = 5;
  return check;
}

Verdict verdict_with(VerdictClass cls, std::vector<CheckResult> checks) {
  Verdict verdict;
  verdict.cls = cls;
  verdict.checks = std::move(checks);
  verdict.explanation = "explained";
  return verdict;
}

}  // namespace

TEST_CASE("every bisect input has a name that reads back") {
  for (BisectInput input : {BisectInput::code, BisectInput::data, BisectInput::environment,
                            BisectInput::config, BisectInput::seeds}) {
    CHECK(enum_from_string<BisectInput>(to_string(input)) == input);
  }
}

TEST_CASE("equal releases: every input is unchanged and nothing is rebuilt") {
  auto plan = plan_bisect(release_a(), release_a(), true);
  REQUIRE(plan.ok());
  CHECK(plan->swaps.empty());
  CHECK(plan->refused.empty());
  CHECK(plan->unchanged.size() == 5);
}

TEST_CASE("code and data moved: two swaps in input order, the rest unchanged") {
  const Manifest a = release_a();
  Manifest b = a;
  b.code.commit = std::string(40, 'c');
  b.data->snapshot->sha256 = std::string(64, 'd');
  b.evaluation.primary.value = 0.5;  // an output, never a reason to refuse
  auto plan = plan_bisect(a, b, false);
  REQUIRE(plan.ok());
  CHECK(swap_names(*plan) == std::vector<std::string>{"code", "data"});
  CHECK(plan->unchanged == std::vector<BisectInput>{BisectInput::environment, BisectInput::config,
                                                    BisectInput::seeds});
  REQUIRE(plan->swaps[0].changes.size() == 1);
  CHECK(plan->swaps[0].changes[0].path == "code.commit");
  CHECK(plan->swaps[0].note.empty());
}

TEST_CASE("incomparable releases are refused as a whole, naming the field") {
  const Manifest a = release_a();
  SUBCASE("a different frozen eval set") {
    Manifest b = a;
    b.evaluation.set->sha256 = std::string(64, 'e');
    auto plan = plan_bisect(a, b, true);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().message.find("different frozen eval sets") != std::string::npos);
    CHECK(plan.error().message.find("evaluation.set.sha256") != std::string::npos);
  }
  SUBCASE("a different primary metric") {
    Manifest b = a;
    b.evaluation.primary.name = "f1";
    auto plan = plan_bisect(a, b, true);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().message.find("evaluation.primary.name") != std::string::npos);
  }
  SUBCASE("the eval set moved to another place with the same bytes is comparable") {
    Manifest b = a;
    b.evaluation.set->uri = "file:///elsewhere/eval.csv";
    CHECK(plan_bisect(a, b, true).ok());
  }
}

TEST_CASE("a lockfile that moved with the code: code and environment are one swap") {
  const Manifest a = release_a();
  Manifest b = a;
  b.environment->lockfile->sha256 = std::string(64, 'f');
  SUBCASE("the code moved too") {
    b.code.commit = std::string(40, 'c');
    auto plan = plan_bisect(a, b, true);
    REQUIRE(plan.ok());
    CHECK(swap_names(*plan) == std::vector<std::string>{"code+environment"});
    CHECK(plan->swaps[0].note.find("file of the code checkout") != std::string::npos);
    CHECK(plan->swaps[0].changes.size() == 2);
    CHECK(plan->refused.empty());
  }
  SUBCASE("the code did not: the environment is refused") {
    auto plan = plan_bisect(a, b, true);
    REQUIRE(plan.ok());
    CHECK(plan->swaps.empty());
    const RefusedInput* refused = refusal(*plan, BisectInput::environment);
    REQUIRE(refused);
    CHECK(refused->reason.find("cannot move without the code") != std::string::npos);
  }
}

TEST_CASE("an environment is swapped only where a runner can deliver it") {
  const Manifest a = release_a();
  Manifest b = a;
  SUBCASE("another image on the process runner is refused, on docker it is swapped") {
    b.environment->image = "registry.example/train@sha256:" + std::string(64, '1');
    auto process = plan_bisect(a, b, false);
    REQUIRE(process.ok());
    REQUIRE(refusal(*process, BisectInput::environment));
    CHECK(refusal(*process, BisectInput::environment)->reason.find("--runner docker") !=
          std::string::npos);
    auto docker = plan_bisect(a, b, true);
    REQUIRE(docker.ok());
    CHECK(swap_names(*docker) == std::vector<std::string>{"environment"});
  }
  SUBCASE("only recorded facts (python) differ: refused") {
    b.environment->python = "3.12.1";
    auto plan = plan_bisect(a, b, true);
    REQUIRE(plan.ok());
    REQUIRE(refusal(*plan, BisectInput::environment));
    CHECK(refusal(*plan, BisectInput::environment)->reason.find("environment.python") !=
          std::string::npos);
  }
  SUBCASE("an environment variable the job gets is swapped") {
    b.environment->env["OMP_NUM_THREADS"] = "4";
    auto plan = plan_bisect(a, b, false);
    REQUIRE(plan.ok());
    CHECK(swap_names(*plan) == std::vector<std::string>{"environment"});
  }
}

TEST_CASE("data that differs only in its split record, and B's dirty code, are refused") {
  const Manifest a = release_a();
  Manifest b = a;
  b.data->split->salt = "s4";
  b.code.commit = std::string(40, 'c');
  b.code.dirty = true;
  b.code.diff_sha256 = std::string(64, 'a');
  b.seeds["python"] = 7;
  auto plan = plan_bisect(a, b, true);
  REQUIRE(plan.ok());
  CHECK(swap_names(*plan) == std::vector<std::string>{"seeds"});
  REQUIRE(refusal(*plan, BisectInput::data));
  CHECK(refusal(*plan, BisectInput::data)->reason.find("data.split.salt") != std::string::npos);
  REQUIRE(refusal(*plan, BisectInput::code));
  CHECK(refusal(*plan, BisectInput::code)->reason.find("dirty tree") != std::string::npos);
}

TEST_CASE("a mixture is A with B's input, B's relative paths made absolute") {
  Manifest a = release_a();
  a.data->snapshot->uri = "../../data-a";
  Manifest b = a;
  b.data->snapshot->uri = "../../data-b";
  b.data->snapshot->sha256 = std::string(64, 'd');
  b.code.commit = std::string(40, 'c');
  b.code.repo = "trainer";
  b.seeds["python"] = 7;
  const std::string b_location = "/reg/digits-mlp/2026.12.1/manifest.json";

  auto plan = plan_bisect(a, b, true);
  REQUIRE(plan.ok());
  REQUIRE(swap_names(*plan) == std::vector<std::string>{"code", "data", "seeds"});
  const Manifest code = mixture_manifest(a, b, b_location, plan->swaps[0]);
  CHECK(code.code.commit == b.code.commit);
  CHECK(*code.code.repo == "/reg/digits-mlp/2026.12.1/trainer");
  CHECK(code.data == a.data);
  CHECK(code.seeds == a.seeds);
  CHECK(code.tolerance == a.tolerance);  // judged against A's bands
  CHECK(code.evaluation == a.evaluation);
  const Manifest data = mixture_manifest(a, b, b_location, plan->swaps[1]);
  CHECK(data.data->snapshot->uri == "/reg/data-b");
  CHECK(data.data->snapshot->sha256 == b.data->snapshot->sha256);
  CHECK(data.code == a.code);
  const Manifest seeds = mixture_manifest(a, b, b_location, plan->swaps[2]);
  CHECK(seeds.seeds.at("python") == 7);
  CHECK(seeds.data == a.data);
}

TEST_CASE("cost per rebuild and --budget") {
  const Manifest a = release_a();  // 5400 s on 8 GPUs
  const RebuildCost cost = rebuild_cost(a);
  REQUIRE(cost.gpu_hours());
  CHECK(*cost.gpu_hours() == doctest::Approx(12.0));

  auto gpu = parse_bisect_budget("30gpu-h");
  REQUIRE(gpu.ok());
  CHECK(gpu->unit == BisectBudget::Unit::gpu_hours);
  CHECK(*swaps_within_budget(4, cost, *gpu) == 2);
  CHECK(*swaps_within_budget(4, cost, BisectBudget{BisectBudget::Unit::gpu_hours, 24}) == 2);
  auto count = parse_bisect_budget("3");
  REQUIRE(count.ok());
  CHECK(*swaps_within_budget(5, cost, *count) == 3);
  CHECK(*swaps_within_budget(2, cost, *count) == 2);
  CHECK(*swaps_within_budget(4, cost, std::nullopt) == 4);
  for (const char* bad : {"", "2.5", "-1", "abc", "gpu-h", "3 rebuilds", "1e999gpu-h"}) {
    CAPTURE(bad);
    auto parsed = parse_bisect_budget(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message.find("--budget") != std::string::npos);
  }

  RebuildCost unknown;
  auto refused = swaps_within_budget(2, unknown, *gpu);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("run.duration_s") != std::string::npos);
  RebuildCost cpu{60.0, 0};
  CHECK(*cpu.gpu_hours() == 0);
  CHECK(*swaps_within_budget(3, cpu, *gpu) == 3);
}

TEST_CASE("readings: the swap out of A's band is named, errors are not judged") {
  const BisectSwap code{{BisectInput::code}, {}, {}};
  const BisectSwap data{{BisectInput::data}, {}, {}};
  const BisectSwap seeds{{BisectInput::seeds}, {}, {}};
  CheckResult segment = primary_check(0.5, CheckOutcome::failed);
  segment.name = "segment:digit=1:accuracy";
  segment.kind = CheckKind::segment;

  BisectReport report;
  report.a = "m@1";
  report.b = "m@2";
  report.metric = "accuracy";
  report.a_value = 0.97;
  report.b_value = 0.73;
  report.plan.swaps = {code, data, seeds};
  report.readings.push_back(read_swap(
      code, verdict_with(VerdictClass::passed, {primary_check(0.97, CheckOutcome::passed)})));
  report.readings.push_back(
      read_swap(data, verdict_with(VerdictClass::failed_out_of_tolerance,
                                   {primary_check(0.73, CheckOutcome::failed), segment})));

  SUBCASE("one swap moved it") {
    report.readings.push_back(read_swap(
        seeds, verdict_with(VerdictClass::passed, {primary_check(0.96, CheckOutcome::passed)})));
    CHECK(report.moved() == std::vector<std::string>{"data"});
    CHECK(report.readings[1].delta() == doctest::Approx(-0.24));
    REQUIRE(report.readings[1].segments_out.size() == 1);
    const std::string conclusion = report.conclusion();
    CHECK(conclusion.find("the data swap moved accuracy outside A's band: 0.73 against A's "
                          "reference 0.97 (-0.24)") == 0);
    CHECK(conclusion.find("; in A's band: code, seeds. B records 0.73, A 0.97") !=
          std::string::npos);
    const auto j = to_json(report);
    CHECK(j["moved"] == nlohmann::json::array({"data"}));
    CHECK(j["swaps"][1]["primary"]["delta"].get<double>() == doctest::Approx(-0.24));
    CHECK(j["swaps"][1]["primary"]["seed_runs"] == 5);
    CHECK(j["swaps"][1]["segments_out_of_band"].size() == 1);
    CHECK(j["swaps"][0]["moved"] == false);
  }
  SUBCASE("an errored rebuild and a swap over budget are not judged, and said so") {
    report.readings[1] = read_swap(data, verdict_with(VerdictClass::error_job, {}));
    report.not_run = {"seeds"};
    CHECK_FALSE(report.readings[1].conclusive());
    CHECK(report.moved().empty());
    const std::string conclusion = report.conclusion();
    CHECK(conclusion.find("no single swap moved accuracy") == 0);
    CHECK(conclusion.find("data (error:job)") != std::string::npos);
    CHECK(conclusion.find("seeds (not run)") != std::string::npos);
    CHECK(conclusion.find("in A's band: code") != std::string::npos);
    const auto j = to_json(report);
    CHECK(j["swaps"][2]["ran"] == false);
    CHECK(j["swaps"][1]["explanation"] == "explained");
  }
  SUBCASE("an uncalibrated A has no band: nothing is judged in or out of it") {
    CheckResult unbanded = primary_check(0.73, CheckOutcome::uncalibrated);
    unbanded.band.reset();
    report.readings[1] = read_swap(data, verdict_with(VerdictClass::uncalibrated, {unbanded}));
    CHECK_FALSE(report.readings[1].conclusive());
    CHECK(report.readings[1].delta() == doctest::Approx(-0.24));
    CHECK(report.conclusion().find("not judged: data (uncalibrated)") != std::string::npos);
  }
  SUBCASE("a swap that moved only segments is said so") {
    CheckResult in_band = primary_check(0.96, CheckOutcome::passed);
    report.readings[1] =
        read_swap(data, verdict_with(VerdictClass::failed_out_of_tolerance, {in_band, segment}));
    CHECK(report.moved().empty());
    CHECK(report.conclusion().find("no single swap moved accuracy outside A's band; segments "
                                   "moved outside their bands with data (1 segment(s))") == 0);
  }
}

}  // namespace reverify::test
