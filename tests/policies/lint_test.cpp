// Lint rules: one finding per silent-failure rule, with its weight taken off the score.

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>

#include "core/manifest_parse.hpp"
#include "policies/lint.hpp"
#include "tests/support/manifest_fixture.hpp"

using reverify::test::manifest_fixture;

using reverify::LintSeverity;
using reverify::Manifest;

namespace {
struct Expected {
  std::string rule;
  LintSeverity severity;
  std::string path;
  int weight;
};

void check_findings(const reverify::LintReport& report, const std::vector<Expected>& expected) {
  REQUIRE(report.findings.size() == expected.size());
  int lost = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(report.findings[i].rule == expected[i].rule);
    CHECK(report.findings[i].severity == expected[i].severity);
    CHECK(report.findings[i].path == expected[i].path);
    CHECK(report.findings[i].weight == expected[i].weight);
    CHECK_FALSE(report.findings[i].message.empty());
    CHECK_FALSE(report.findings[i].fix.empty());
    lost += expected[i].weight;
  }
  CHECK(report.score == 100 - lost);
}
}  // namespace

TEST_CASE("the rule weights sum to 100") {
  const auto& rules = reverify::lint_rules();
  CHECK(rules.size() == 13);
  CHECK(std::accumulate(rules.begin(), rules.end(), 0, [](int sum, const reverify::LintRule& r) {
          return sum + r.weight;
        }) == 100);
}

TEST_CASE("the full fixture has no findings and scores 100") {
  auto report = reverify::lint_manifest(manifest_fixture("valid_full.json"));
  CHECK(report.findings.empty());
  CHECK(report.score == 100);
}

TEST_CASE("the minimal manifest fails every rule it can, and scores 5") {
  // Minimal: no image, lockfile, snapshot, split, determinism, runner, eval set, seeds, world
  // size; clean tree (dirty-tree passes).
  check_findings(reverify::lint_manifest(manifest_fixture("valid_minimal.json")),
                 {{"image-digest", LintSeverity::error, "environment.image", 15},
                  {"lockfile-hash", LintSeverity::error, "environment.lockfile", 10},
                  {"data-snapshot", LintSeverity::error, "data.snapshot", 15},
                  {"split-hash-rule", LintSeverity::warning, "data.split", 10},
                  {"determinism", LintSeverity::warning, "environment.determinism", 15},
                  {"machine-emitted", LintSeverity::warning, "run", 10},
                  {"eval-set-hash", LintSeverity::error, "evaluation.set", 10},
                  {"seeds", LintSeverity::warning, "seeds", 5},
                  {"world-size", LintSeverity::warning, "environment.world_size", 5},
                  {"counts", LintSeverity::warning, "evaluation.primary.examples", 0},
                  {"subsample-reference", LintSeverity::info, "subsample", 0}});
}

TEST_CASE("a subsample reference too thin for a band is a warning, 0 points") {
  Manifest m = manifest_fixture("valid_full.json");
  m.subsample->tolerance->seed_runs["accuracy"] = {0.93, 0.94};
  auto report = reverify::lint_manifest(m);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].rule == "subsample-reference");
  CHECK(report.findings[0].severity == LintSeverity::warning);
  CHECK(report.findings[0].path == "subsample.tolerance.seed_runs");
  CHECK(report.findings[0].message.find("2 seed run(s)") != std::string::npos);
  CHECK(report.findings[0].fix.find("--mode subsample") != std::string::npos);
  CHECK(report.score == 100);
  m.subsample->tolerance.reset();
  CHECK(reverify::lint_manifest(m).findings.at(0).message.find("0 seed run(s)") !=
        std::string::npos);
}

TEST_CASE("a subsample reference without its draw is an info finding, 0 points") {
  Manifest m = manifest_fixture("valid_full.json");
  m.subsample->drawn.reset();
  auto report = reverify::lint_manifest(m);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].path == "subsample.drawn");
  CHECK(report.findings[0].severity == LintSeverity::info);
  CHECK(report.findings[0].message.find("cannot check that they trained on the release's") !=
        std::string::npos);
  CHECK(report.score == 100);
}

TEST_CASE("metrics without their example counts: what is missing and what it costs, 0 points") {
  Manifest m = manifest_fixture("valid_full.json");
  m.evaluation.primary.examples = 391;
  m.evaluation.segments["digit=8"]["accuracy"] = 0.93;
  m.evaluation.segments["digit=9"]["accuracy"] = 0.95;
  m.evaluation.segment_examples = {{"digit=8", 37}};
  auto report = reverify::lint_manifest(m);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].rule == "counts");
  CHECK(report.findings[0].path == "evaluation.segment_examples");
  CHECK(report.findings[0].message.find("1 segment metric(s)") != std::string::npos);
  CHECK(report.findings[0].message.find("not judged") != std::string::npos);
  CHECK(report.findings[0].fix.find("evaluation.scoring") != std::string::npos);
  CHECK(report.score == 100);
  m.evaluation.segment_examples["digit=9"] = 40;
  CHECK(reverify::lint_manifest(m).findings.empty());
}

TEST_CASE("a metric scoring computes, named otherwise, is an error naming the spelling, 0 points") {
  Manifest m = manifest_fixture("valid_full.json");
  reverify::ScoringSpec spec;
  spec.task = reverify::ScoringTask::ranking;
  spec.k = 10;
  m.evaluation.scoring = spec;
  m.evaluation.primary.name = "ndcg@10";  // ndcg@k at k = 10
  m.evaluation.segments = {{"market=de", {{"NDCG@10", 0.9}}}};
  auto findings_of = [](const Manifest& manifest) {
    std::vector<reverify::LintFinding> out;
    for (const auto& f : reverify::lint_manifest(manifest).findings)
      if (f.rule == "metric-names")
        out.push_back(f);
    return out;
  };
  const auto findings = findings_of(m);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].severity == LintSeverity::error);
  CHECK(findings[0].weight == 0);
  CHECK(findings[0].path == "evaluation.segments.market=de");
  CHECK(findings[0].message.find("\"NDCG@10\" is a metric evaluation.scoring computes") !=
        std::string::npos);
  CHECK(findings[0].fix.find("name it ndcg@10 (or ndcg@k)") != std::string::npos);
  m.evaluation.segments["market=de"] = {{"ndcg@10", 0.9}};
  CHECK(findings_of(m).empty());
}

TEST_CASE("each rule fires on its own silent failure") {
  struct Case {
    std::string name;
    std::function<void(Manifest&)> mutate;
    Expected expected;
  };
  const std::vector<Case> cases = {
      {"no image",
       [](Manifest& m) { m.environment->image.reset(); },
       {"image-digest", LintSeverity::error, "environment.image", 15}},
      {"no lockfile",
       [](Manifest& m) { m.environment->lockfile.reset(); },
       {"lockfile-hash", LintSeverity::error, "environment.lockfile", 10}},
      {"lockfile without hash",
       [](Manifest& m) { m.environment->lockfile->sha256.reset(); },
       {"lockfile-hash", LintSeverity::error, "environment.lockfile.sha256", 10}},
      {"live data",
       [](Manifest& m) { m.data->snapshot.reset(); },
       {"data-snapshot", LintSeverity::error, "data.snapshot", 15}},
      {"table snapshot without id",
       [](Manifest& m) {
         m.data->snapshot = reverify::Snapshot{reverify::SnapshotKind::delta, "s3://t", {}, {}};
       },
       {"data-snapshot", LintSeverity::error, "data.snapshot.id", 15}},
      {"table snapshot with id is info only",
       [](Manifest& m) {
         m.data->snapshot = reverify::Snapshot{reverify::SnapshotKind::iceberg, "s3://t", {}, "42"};
       },
       {"data-snapshot", LintSeverity::info, "data.snapshot.kind", 0}},
      {"no split",
       [](Manifest& m) { m.data->split.reset(); },
       {"split-hash-rule", LintSeverity::warning, "data.split", 10}},
      {"split without hash function",
       [](Manifest& m) { m.data->split->rule = "random 80/20 after shuffle"; },
       {"split-hash-rule", LintSeverity::warning, "data.split.rule", 10}},
      {"split without salt",
       [](Manifest& m) { m.data->split->salt.reset(); },
       {"split-hash-rule", LintSeverity::warning, "data.split.salt", 10}},
      {"cudnn benchmark on",
       [](Manifest& m) { m.environment->determinism->cudnn_benchmark = true; },
       {"determinism", LintSeverity::error, "environment.determinism", 15}},
      {"nondeterministic algorithms",
       [](Manifest& m) { m.environment->determinism->deterministic_algorithms = false; },
       {"determinism", LintSeverity::error, "environment.determinism", 15}},
      {"tf32 on",
       [](Manifest& m) { m.environment->determinism->tf32 = true; },
       {"determinism", LintSeverity::error, "environment.determinism", 15}},
      {"determinism not recorded",
       [](Manifest& m) { m.environment->determinism.reset(); },
       {"determinism", LintSeverity::warning, "environment.determinism", 15}},
      {"torch: cudnn_deterministic off without deterministic algorithms",
       [](Manifest& m) {
         m.environment->determinism->cudnn_deterministic = false;
         m.environment->determinism->deterministic_algorithms.reset();
       },
       {"determinism", LintSeverity::error, "environment.determinism", 15}},
      {"torch on a GPU without CUBLAS_WORKSPACE_CONFIG",
       [](Manifest& m) { m.environment->env.erase("CUBLAS_WORKSPACE_CONFIG"); },
       {"determinism", LintSeverity::error, "environment.determinism", 15}},
      {"torch on a GPU with a nondeterministic cuBLAS workspace",
       [](Manifest& m) { m.environment->env["CUBLAS_WORKSPACE_CONFIG"] = ":0:0"; },
       {"determinism", LintSeverity::error, "environment.determinism", 15}},
      {"torch without a data-loader worker count",
       [](Manifest& m) { m.environment->threads->dataloader_workers.reset(); },
       {"determinism", LintSeverity::warning, "environment.threads", 15}},
      {"torch without any thread count",
       [](Manifest& m) {
         m.environment->threads.reset();
         m.environment->env.erase("OMP_NUM_THREADS");
       },
       {"determinism", LintSeverity::warning, "environment.threads", 15}},
      {"no runner",
       [](Manifest& m) { m.run.runner.reset(); },
       {"machine-emitted", LintSeverity::warning, "run.runner", 10}},
      {"no timestamp",
       [](Manifest& m) { m.run.started_at.reset(); },
       {"machine-emitted", LintSeverity::warning, "run.started_at", 10}},
      {"no eval set",
       [](Manifest& m) { m.evaluation.set.reset(); },
       {"eval-set-hash", LintSeverity::error, "evaluation.set", 10}},
      {"eval set without hash",
       [](Manifest& m) { m.evaluation.set->sha256.reset(); },
       {"eval-set-hash", LintSeverity::error, "evaluation.set.sha256", 10}},
      {"dirty tree without diff hash",
       [](Manifest& m) { m.code.dirty = true; },
       {"dirty-tree", LintSeverity::error, "code.diff_sha256", 5}},
      {"no seeds",
       [](Manifest& m) { m.seeds.clear(); },
       {"seeds", LintSeverity::warning, "seeds", 5}},
      {"no world size",
       [](Manifest& m) { m.environment->world_size.reset(); },
       {"world-size", LintSeverity::warning, "environment.world_size", 5}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    Manifest m = manifest_fixture("valid_full.json");
    c.mutate(m);
    check_findings(reverify::lint_manifest(m), {c.expected});
  }
}

TEST_CASE(
    "torch: a thread count from OMP_NUM_THREADS, cuDNN flags under deterministic "
    "algorithms and a CPU run without CUBLAS_WORKSPACE_CONFIG all pass") {
  Manifest m = manifest_fixture("valid_full.json");
  m.environment->threads->intra_op.reset();                 // OMP_NUM_THREADS=8 is recorded in env
  m.environment->determinism->cudnn_deterministic = false;  // overridden by the algorithms flag
  CHECK(reverify::lint_manifest(m).findings.empty());
  m.environment->accelerator = reverify::Accelerator{};  // CPU: count 0
  m.environment->env.erase("CUBLAS_WORKSPACE_CONFIG");
  CHECK(reverify::lint_manifest(m).findings.empty());
}

TEST_CASE("torch: every unsafe setting and every unrecorded count is named in one finding") {
  Manifest m = manifest_fixture("valid_full.json");
  m.environment->determinism->tf32 = true;
  m.environment->env.erase("CUBLAS_WORKSPACE_CONFIG");
  m.environment->threads.reset();
  m.environment->env.erase("OMP_NUM_THREADS");
  auto report = reverify::lint_manifest(m);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.score == 85);
  const std::string& message = report.findings[0].message;
  CHECK(message.find("tf32 is true, a GPU run without CUBLAS_WORKSPACE_CONFIG") == 0);
  CHECK(message.find("not recorded: the intra-op thread count") != std::string::npos);
  CHECK(message.find("the data-loader worker count") != std::string::npos);
}

TEST_CASE("other frameworks are not asked for PyTorch's settings") {
  Manifest m = manifest_fixture("valid_full.json");
  m.environment->framework = reverify::Framework{"numpy", "1.24.2"};
  m.environment->threads.reset();
  m.environment->env.clear();
  CHECK(reverify::lint_manifest(m).findings.empty());
}

TEST_CASE("a dirty tree with its diff hash passes") {
  Manifest m = manifest_fixture("valid_full.json");
  m.code.dirty = true;
  m.code.diff_sha256 = std::string(64, 'd');
  CHECK(reverify::lint_manifest(m).findings.empty());
}

TEST_CASE("every autotuning flag that is on is named in one finding") {
  Manifest m = manifest_fixture("valid_full.json");
  m.environment->determinism = reverify::Determinism{false, true, true, std::nullopt};
  auto report = reverify::lint_manifest(m);
  REQUIRE(report.findings.size() == 1);
  CHECK(report.findings[0].message.find("cudnn_benchmark is true, deterministic_algorithms is "
                                        "false, tf32 is true") == 0);
}

TEST_CASE("the JSON report lists findings and every rule with its outcome") {
  Manifest m = manifest_fixture("valid_full.json");
  m.seeds.clear();
  auto j = reverify::to_json(reverify::lint_manifest(m));
  CHECK(j["score"] == 95);
  REQUIRE(j["findings"].size() == 1);
  CHECK(j["findings"][0]["rule"] == "seeds");
  CHECK(j["findings"][0]["severity"] == "warning");
  REQUIRE(j["rules"].size() == 13);
  for (const auto& rule : j["rules"])
    CHECK(rule["passed"] == (rule["id"] != "seeds"));
}
