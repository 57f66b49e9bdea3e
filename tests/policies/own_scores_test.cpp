// The verdict on reverify's own scores (policies/own_scores.hpp): the primary and segment checks
// judge reverify's scoring of the predictions with exact counts, a job whose figures its
// predictions do not give is named, and a segment whose decisions crossed the threshold fails
// naming the segment and the records that changed side while the aggregate stays in its band.

#include <doctest/doctest.h>

#include "policies/verdict.hpp"
#include "tests/support/check_fixture.hpp"
#include "tests/support/text_search.hpp"

using namespace reverify;
using reverify::test::find_check;

using reverify::test::contains;

namespace {

// 200 binary records, labels alternating; segment group=a is records 0..99, group=b 100..199.
ScoringInputs two_groups() {
  ScoringSpec spec;
  spec.task = ScoringTask::binary;
  spec.metrics = {ScoringMetric::accuracy};
  ScoringInputs in = scoring_settings(spec);
  std::vector<std::string> groups;
  for (int i = 0; i < 200; ++i) {
    in.labels.push_back(i % 2);
    groups.push_back(i < 100 ? "a" : "b");
  }
  in.segment_keys.push_back(SegmentKey{"group", intern_keys(groups)});
  return in;
}

// Right on every record but those in `wrong`.
Predictions predictions(const ScoringInputs& in, const std::vector<int>& wrong) {
  Predictions p;
  p.rows = in.records();
  for (std::size_t i = 0; i < p.rows; ++i) {
    const bool right = std::find(wrong.begin(), wrong.end(), static_cast<int>(i)) == wrong.end();
    const bool positive = (in.labels[i] == 1) == right;
    p.values.push_back(positive ? 0.9 : 0.1);
  }
  return p;
}

// 5 wrong in each group: accuracy 0.95 overall and in both groups.
const std::vector<int> kReleaseWrong = {0, 20, 40, 60, 80, 100, 120, 140, 160, 180};

// The release's wrong records and 8 more of group a: a falls to 87/100, the aggregate to 182/200.
std::vector<int> group_a_crossed() {
  std::vector<int> wrong = kReleaseWrong;
  for (int i : {2, 4, 6, 8, 10, 12, 14, 16})
    wrong.push_back(i);
  return wrong;
}

Manifest manifest() {
  Manifest m;
  m.model = "m";
  m.version = "1";
  m.owner = "o";
  m.evaluation.primary = {"accuracy", 0.95, true, std::nullopt};
  m.evaluation.scoring = ScoringSpec{};
  ToleranceSpec t;
  // the aggregate varies widely from seed to seed; segment a never moved
  t.seed_runs["accuracy"] = {0.90, 0.95, 0.92, 0.97, 0.93, 0.94, 0.96};
  t.segment_seed_runs["group=a"]["accuracy"] = {0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95};
  t.segment_seed_runs["group=b"]["accuracy"] = {0.95, 0.94, 0.96, 0.95, 0.95, 0.93, 0.96};
  m.tolerance = t;
  return m;
}

struct Judged {
  ScoringInputs in = two_groups();
  Predictions release = predictions(in, kReleaseWrong);
  Manifest m = manifest();
  OwnScores own;
  std::optional<std::string> parity_error;  // set: reverify's parity could not be computed

  Verdict judge(const std::vector<int>& rebuild_wrong, std::optional<double> job_primary,
                SegmentMetrics job_segments = {}) {
    const Predictions rebuilt = predictions(in, rebuild_wrong);
    own.release = scoring::score(in, release).value();
    own.rebuild = scoring::score(in, rebuilt).value();
    if (parity_error)
      own.parity_error = parity_error;
    else
      own.parity = scoring::parity(in, release, rebuilt).value();
    VerdictInputs inputs{m, {}, nullptr, nullptr, {}};
    inputs.rebuild.primary = job_primary;
    inputs.rebuild.segments = std::move(job_segments);
    inputs.scores = &own;
    return decide_verdict(inputs);
  }
};

}  // namespace

TEST_CASE("with a scoring spec the primary and segment checks judge reverify's exact counts") {
  Judged j;
  // the job reports the figure its predictions give: they agree
  const Verdict v = j.judge(kReleaseWrong, 0.95);
  CHECK(v.cls == VerdictClass::passed);
  const auto* primary = find_check(v, "primary:accuracy");
  REQUIRE(primary);
  CHECK(*primary->observed == doctest::Approx(0.95));
  CHECK(primary->evidence["examples"] == 200);  // the scope's denominator, not inferred
  CHECK(!primary->evidence.contains("examples_inferred"));
  const auto* a = find_check(v, "segment:group=a:accuracy");
  REQUIRE(a);
  CHECK(a->outcome == CheckOutcome::passed);
  CHECK(a->evidence["examples"] == 100);
  REQUIRE(a->band);
  CHECK(a->band->upper > a->band->lower);  // every seed run scored 95/100: never a +-0 band
  const auto* agrees = find_check(v, "job:metric-agrees");
  REQUIRE(agrees);
  CHECK(agrees->outcome == CheckOutcome::passed);
  // no seed-run crossings recorded: the parity checks report, never decide
  const auto* parity = find_check(v, "parity:threshold=0.5:segment:group=a");
  REQUIRE(parity);
  CHECK(parity->outcome == CheckOutcome::uncalibrated);
  CHECK(parity->informational);
  CHECK(contains(parity->explanation, "0 of segment group=a's 100 records changed side"));
}

TEST_CASE("parity: records that changed side in a segment, judged against the seed runs' own") {
  Judged j;
  auto& parity = j.m.tolerance->parity_seed_runs;
  parity["parity:threshold=0.5"] = {0.02, 0.03, 0.025, 0.035, 0.02, 0.03, 0.025};
  // 20 seed runs changed 0 to 2 of group a's records
  parity["parity:threshold=0.5:segment:group=a"] = {0.01, 0.02, 0,    0.01, 0.02, 0.01, 0,
                                                    0.01, 0,    0.01, 0.02, 0,    0.01, 0.01,
                                                    0.02, 0,    0.01, 0.01, 0,    0.02};
  parity["parity:threshold=0.5:segment:group=b"] = {0.03, 0.04, 0.05, 0.06, 0.02, 0.05, 0.04};
  SUBCASE("8 of group a's records crossed: failed, naming the segment and the count") {
    const Verdict v = j.judge(group_a_crossed(), 0.91);
    const auto* a = find_check(v, "parity:threshold=0.5:segment:group=a");
    REQUIRE(a);
    CHECK(a->outcome == CheckOutcome::failed);
    CHECK(a->kind == CheckKind::parity);
    CHECK(contains(a->explanation,
                   "8 of segment group=a's 100 records changed side against the "
                   "release at threshold 0.5 (8 became wrong, 0 became right)"));
    CHECK(contains(a->explanation, "the seed runs' own changes allow"));
    CHECK(a->evidence["allowed"].get<int>() < 8);
    CHECK(a->seed_runs == 20u);
    CHECK(find_check(v, "parity:threshold=0.5")->outcome == CheckOutcome::passed);
    CHECK(find_check(v, "parity:threshold=0.5:segment:group=b")->outcome == CheckOutcome::passed);
    CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  }
  SUBCASE("as many crossings as the seed runs made pass") {
    const Verdict v = j.judge({0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 2}, 0.945);
    CHECK(find_check(v, "parity:threshold=0.5:segment:group=a")->outcome == CheckOutcome::passed);
    CHECK(v.cls == VerdictClass::passed);
  }
}

TEST_CASE("a segment whose decisions crossed the threshold fails, naming it and the count") {
  Judged j;
  // the wide aggregate band still holds 182/200
  const Verdict v = j.judge(group_a_crossed(), 0.91);
  const auto* primary = find_check(v, "primary:accuracy");
  REQUIRE(primary);
  CHECK(primary->outcome == CheckOutcome::passed);
  const auto* a = find_check(v, "segment:group=a:accuracy");
  REQUIRE(a);
  CHECK(a->outcome == CheckOutcome::failed);
  CHECK(contains(a->explanation, "8 of its 100 records changed side at threshold 0.5"));
  CHECK(contains(a->explanation, "8 became wrong, 0 became right"));
  CHECK(find_check(v, "segment:group=b:accuracy")->outcome == CheckOutcome::passed);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "segment:group=a:accuracy"));
}

TEST_CASE("a job reporting a metric its predictions do not give is named") {
  Judged j;
  SUBCASE("the primary metric") {
    // the predictions score 0.95; the job's evaluation code says 0.97
    const Verdict v = j.judge(kReleaseWrong, 0.97);
    const auto* agrees = find_check(v, "job:metric-agrees");
    REQUIRE(agrees);
    CHECK(agrees->outcome == CheckOutcome::failed);
    CHECK(contains(agrees->explanation,
                   "the job's evaluation code and its predictions disagree: it reports primary "
                   "accuracy 0.97, its predictions score 0.95"));
    CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
    // the verdict is judged on the predictions' figure, not the job's
    CHECK(*find_check(v, "primary:accuracy")->observed == doctest::Approx(0.95));
  }
  SUBCASE("a segment metric") {
    const Verdict v = j.judge(kReleaseWrong, 0.95, {{"group=a", {{"accuracy", 0.9}}}});
    const auto* agrees = find_check(v, "job:metric-agrees");
    REQUIRE(agrees);
    CHECK(agrees->outcome == CheckOutcome::failed);
    CHECK(contains(agrees->explanation, "segment group=a accuracy 0.9"));
  }
  SUBCASE("float noise is no disagreement") {
    const Verdict v = j.judge(kReleaseWrong, 0.95 * (1 + 1e-9));
    CHECK(find_check(v, "job:metric-agrees")->outcome == CheckOutcome::passed);
  }
  SUBCASE("a job that reports nothing scoring computes cannot be cross-checked") {
    const Verdict v = j.judge(kReleaseWrong, std::nullopt);
    CHECK(find_check(v, "job:metric-agrees")->outcome == CheckOutcome::not_judged);
  }
}

TEST_CASE("reported_form: a run's scores in the shape a job reports, for the seed runs") {
  const ScoringInputs in = two_groups();
  const auto scores = scoring::score(in, predictions(in, {0, 2, 101})).value();
  const ReportedForm form = reported_form(scores, "accuracy");
  REQUIRE(form.primary);
  CHECK(*form.primary == doctest::Approx(197.0 / 200));
  CHECK(form.segments.at("group=a").at("accuracy") == doctest::Approx(0.98));
  CHECK(form.segments.at("group=b").at("accuracy") == doctest::Approx(0.99));
  CHECK(!reported_form(scores, "rmse").primary);  // not a metric of this task
}

TEST_CASE("no check disappears: parity the rebuild's scores cannot give fails as one row") {
  Judged j;
  j.m.tolerance->parity_seed_runs["parity:threshold=0.5"] = {0.02, 0.03, 0.025, 0.035, 0.02};
  j.m.tolerance->parity_seed_runs["parity:threshold=0.5:segment:group=a"] = {0.01, 0.02, 0, 0.01};
  j.parity_error = "reverify's parity of the rebuild against the release failed: 199 rows";
  const Verdict v = j.judge(kReleaseWrong, 0.95);
  const auto* family = find_check(v, "parity:*");
  REQUIRE(family);
  CHECK(family->outcome == CheckOutcome::failed);
  CHECK(family->not_computed);
  CHECK(contains(family->explanation, "the 2 parity check(s) the release defines"));
  CHECK(contains(family->explanation, "199 rows"));
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(v.coverage.defined == 5);  // primary, 2 segments, 2 parity
  CHECK(v.coverage.judged == 3);
}

TEST_CASE("a metric the release's own predictions do not score, with seed runs: manifest-invalid") {
  Judged j;
  j.in.metrics.push_back(ScoringMetric::precision);
  for (std::size_t i = 0; i < 100; ++i)
    j.release.values[i] = 0.1;  // group a: nothing predicted positive, so no precision
  j.m.evaluation.segments["group=a"]["precision"] = 0.9;
  j.m.tolerance->segment_seed_runs["group=a"]["precision"] = {0.9, 0.91, 0.9, 0.92, 0.9};
  const Verdict v = j.judge(kReleaseWrong, 0.95);
  CHECK(v.cls == VerdictClass::error_manifest_invalid);
  CHECK(contains(v.explanation,
                 "segment:group=a:precision: the release's predictions score no "
                 "value for it"));
  CHECK_FALSE(v.coverage.complete());
}

TEST_CASE("a parity check the release defines without a band decides: uncalibrated, not a pass") {
  Judged j;
  j.m.tolerance->parity_seed_runs["parity:threshold=0.5"] = {0.02};
  const Verdict v = j.judge(kReleaseWrong, 0.95);
  const auto* parity = find_check(v, "parity:threshold=0.5");
  REQUIRE(parity);
  CHECK(parity->outcome == CheckOutcome::uncalibrated);
  CHECK_FALSE(parity->informational);
  CHECK(v.cls == VerdictClass::uncalibrated);
  // Without any seed value it stays a note (a calibration from before parity checks).
  CHECK(find_check(v, "parity:threshold=0.5:segment:group=a")->informational);
}
