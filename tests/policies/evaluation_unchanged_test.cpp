// job:evaluation-unchanged (policies/own_scores.hpp check_evaluation_unchanged, through
// decide_verdict): without a scoring spec, a rebuild whose predictions are the release's bit for
// bit (or a same-seed rerun's) while the job reports other numbers for them fails, naming the
// number; the same numbers pass; predictions that reproduce neither leave the check out; a scoring
// spec leaves it to job:metric-agrees.

#include <doctest/doctest.h>

#include <string>

#include "policies/headline.hpp"
#include "policies/verdict.hpp"
#include "tests/support/check_fixture.hpp"
#include "tests/support/predictions_fixture.hpp"

using namespace reverify;
using reverify::test::find_check;
using reverify::test::one_d;

namespace {

const Predictions kRelease = one_d({0.1, 0.4, 0.7, 0.9});
const Predictions kRerun = one_d({0.1, 0.4, 0.7, 0.8});

Manifest manifest() {
  Manifest m;
  m.model = "m";
  m.version = "1";
  m.owner = "o";
  m.evaluation.primary = {"accuracy", 0.95, true, 400};
  m.evaluation.segments["digit=8"]["accuracy"] = 0.9;
  m.evaluation.segment_examples["digit=8"] = 40;
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  ToleranceSpec t;
  t.seed_runs["accuracy"] = {0.94, 0.95, 0.96, 0.955, 0.945, 0.96, 0.94, 0.95};
  t.segment_seed_runs["digit=8"]["accuracy"] = {0.9, 0.875, 0.9, 0.925, 0.9, 0.9, 0.875, 0.9};
  SameSeedScore rerun{values_sha256(kRerun), 0.9475, {{"digit=8", {{"accuracy", 0.925}}}}};
  t.same_seed_scores = {rerun};
  m.tolerance = t;
  return m;
}

Verdict judge(const Manifest& m, const Predictions& rebuilt, double primary, double segment) {
  VerdictInputs inputs{m, {}, &kRelease, nullptr, {}};
  inputs.rebuild.primary_name = "accuracy";
  inputs.rebuild.primary = primary;
  inputs.rebuild.segments["digit=8"]["accuracy"] = segment;
  inputs.rebuild.predictions = &rebuilt;
  return decide_verdict(inputs);
}

}  // namespace

TEST_CASE("the release's predictions, other numbers: the job's evaluation changed") {
  const auto v = judge(manifest(), one_d({0.1, 0.4, 0.7, 0.9}), 0.955, 0.9);
  const auto* check = find_check(v, "job:evaluation-unchanged");
  REQUIRE(check);
  CHECK(check->outcome == CheckOutcome::failed);
  CHECK(check->decides());
  CHECK(check->observed == 1);  // one number of two differs
  CHECK(check->explanation.find("the job's evaluation changed: same predictions, other numbers") !=
        std::string::npos);
  CHECK(check->explanation.find("primary accuracy 0.955 where 0.95 was recorded") !=
        std::string::npos);
  // Every other check passes: the numbers moved within their bands, so only this one says so.
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(verdict_summary(v).failing == std::vector<std::string>{"job:evaluation-unchanged"});
  CHECK(verdict_headline(v).rfind("The job's evaluation changed: same predictions, other numbers",
                                  0) == 0);
}

TEST_CASE("the release's predictions and its numbers: the check passes") {
  const auto v = judge(manifest(), one_d({0.1, 0.4, 0.7, 0.9}), 0.95, 0.9);
  const auto* check = find_check(v, "job:evaluation-unchanged");
  REQUIRE(check);
  CHECK(check->outcome == CheckOutcome::passed);
  // Nothing fails (the predictions' statistics have no seed runs here: uncalibrated, not failed).
  CHECK_FALSE(is_failure(v.cls));
  CHECK(verdict_summary(v).failing.empty());
}

TEST_CASE("a same-seed rerun's predictions: held to that rerun's numbers") {
  const auto same = judge(manifest(), one_d({0.1, 0.4, 0.7, 0.8}), 0.9475, 0.925);
  REQUIRE(find_check(same, "job:evaluation-unchanged"));
  CHECK(find_check(same, "job:evaluation-unchanged")->outcome == CheckOutcome::passed);
  const auto other = judge(manifest(), one_d({0.1, 0.4, 0.7, 0.8}), 0.9475, 0.95);
  const auto* check = find_check(other, "job:evaluation-unchanged");
  REQUIRE(check);
  CHECK(check->outcome == CheckOutcome::failed);
  CHECK(check->explanation.find("same-seed rerun 1's") != std::string::npos);
  CHECK(check->explanation.find("segment digit=8 accuracy 0.95 where 0.925 was recorded") !=
        std::string::npos);
}

TEST_CASE("predictions that reproduce nothing, or a scoring spec: no such check") {
  CHECK_FALSE(find_check(judge(manifest(), one_d({0.2, 0.4, 0.7, 0.9}), 0.955, 0.9),
                         "job:evaluation-unchanged"));
  Manifest scored = manifest();
  scored.evaluation.scoring = ScoringSpec{};
  CHECK_FALSE(find_check(judge(scored, one_d({0.1, 0.4, 0.7, 0.9}), 0.955, 0.9),
                         "job:evaluation-unchanged"));
}
