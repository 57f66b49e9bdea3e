// The same-seed:predictions note (policies/checks.hpp check_same_seed, through decide_verdict):
// same-seed reruns that reproduced the release bit for bit make a rebuild whose predictions differ
// a note naming the records; reruns that differ make a primary outside their range a note; it
// never pages, is absent without same-seed scores, at level bitwise and in steps mode, and the
// headline shows it as a note.

#include <doctest/doctest.h>

#include <string>

#include "policies/headline.hpp"
#include "policies/verdict.hpp"
#include "tests/support/check_fixture.hpp"
#include "tests/support/predictions_fixture.hpp"
#include "tests/support/text_search.hpp"

using namespace reverify;
using reverify::test::find_check;
using reverify::test::one_d;

using reverify::test::contains;

namespace {

const Predictions kRelease = one_d({0.1, 0.4, 0.7, 0.9});

// Seed runs spread wide (0.94 .. 0.96), so that 0.957 is inside the seed band.
Manifest manifest_with(std::vector<SameSeedScore> same_seed) {
  Manifest m;
  m.model = "m";
  m.version = "1";
  m.owner = "o";
  m.evaluation.primary = {"accuracy", 0.95, true, 400};
  ToleranceSpec t;
  t.seed_runs["accuracy"] = {0.94, 0.95, 0.96, 0.955, 0.945, 0.96, 0.94, 0.95};
  t.same_seed_scores = std::move(same_seed);
  m.tolerance = t;
  return m;
}

std::vector<SameSeedScore> reproducing(std::size_t n) {
  return std::vector<SameSeedScore>(n, SameSeedScore{values_sha256(kRelease), 0.95, {}});
}

Verdict judge(const Manifest& m, const Predictions& rebuilt, double primary) {
  VerdictInputs inputs{m, {}, &kRelease, nullptr, {}};
  inputs.rebuild.primary_name = "accuracy";
  inputs.rebuild.primary = primary;
  inputs.rebuild.predictions = &rebuilt;
  return decide_verdict(inputs);
}

}  // namespace

TEST_CASE("same-seed reruns that reproduced the release: a rebuild that differs is a note") {
  const auto m = manifest_with(reproducing(3));
  const auto same = judge(m, one_d({0.1, 0.4, 0.7, 0.9}), 0.95);
  const auto* check = find_check(same, "same-seed:predictions");
  REQUIRE(check);
  CHECK(check->kind == CheckKind::same_seed);
  CHECK(check->informational);
  CHECK(check->outcome == CheckOutcome::passed);
  CHECK(contains(check->explanation,
                 "3 of 3 same-seed reruns reproduced the release's "
                 "predictions exactly, and so did this rebuild"));

  const auto moved = judge(m, one_d({0.1, 0.41, 0.7, 0.95}), 0.95);
  check = find_check(moved, "same-seed:predictions");
  REQUIRE(check);
  CHECK(check->outcome == CheckOutcome::failed);
  CHECK(check->informational);
  CHECK(*check->observed == 2);
  CHECK(contains(check->explanation,
                 "3 of 3 same-seed reruns reproduced the release's predictions exactly; this "
                 "rebuild's differ in 2 of 4 records: something besides the seed moved"));
  CHECK_FALSE(is_failure(moved.cls));  // a note at equivalent: it never pages
  CHECK(contains(moved.explanation, "NOTE: same-seed:predictions"));
  CHECK(contains(verdict_headline(moved), "same-seed:predictions"));
}

TEST_CASE("same-seed reruns that differ: a primary outside their range, inside the seed band") {
  auto runs = reproducing(3);
  runs[0] = {std::string(64, 'a'), 0.951, {}};
  runs[1] = {std::string(64, 'b'), 0.949, {}};
  const auto m = manifest_with(runs);
  const auto rebuilt = one_d({0.12, 0.41, 0.69, 0.88});

  const auto inside = judge(m, rebuilt, 0.9505);
  const auto* check = find_check(inside, "same-seed:predictions");
  REQUIRE(check);
  CHECK(check->outcome == CheckOutcome::passed);
  REQUIRE(check->band);
  CHECK(*check->band->lower == doctest::Approx(0.949));
  CHECK(check->band->upper == doctest::Approx(0.951));
  CHECK(contains(check->explanation, "1 of 3 reproduced the release's predictions exactly"));

  const auto outside = judge(m, rebuilt, 0.957);
  CHECK(find_check(outside, "primary:accuracy")->outcome == CheckOutcome::passed);
  check = find_check(outside, "same-seed:predictions");
  REQUIRE(check);
  CHECK(check->outcome == CheckOutcome::failed);
  CHECK(check->informational);
  CHECK(contains(check->explanation, "the rebuild's accuracy 0.957 is outside the range"));
  CHECK(contains(check->explanation, "though inside the seed band"));
  CHECK_FALSE(is_failure(outside.cls));

  // Far outside the seed band too: the primary check pages on its own, the note says so.
  const auto far = judge(m, rebuilt, 0.80);
  CHECK(find_check(far, "primary:accuracy")->outcome == CheckOutcome::failed);
  CHECK(contains(find_check(far, "same-seed:predictions")->explanation,
                 "its primary check fails on its own"));
}

TEST_CASE("same-seed:predictions is absent without same-seed scores, at bitwise, in steps mode") {
  const auto rebuilt = one_d({0.1, 0.41, 0.7, 0.95});
  CHECK_FALSE(find_check(judge(manifest_with({}), rebuilt, 0.95), "same-seed:predictions"));

  auto bitwise = manifest_with(reproducing(3));
  bitwise.level = ReproLevel::bitwise;
  CHECK_FALSE(find_check(judge(bitwise, rebuilt, 0.95), "same-seed:predictions"));

  const auto m = manifest_with(reproducing(3));
  VerdictInputs steps{m, {}, &kRelease, nullptr, {}};
  steps.rebuild.steps_mode = true;
  CHECK_FALSE(find_check(decide_verdict(steps), "same-seed:predictions"));

  // Reruns that reproduced the release, and a rebuild without predictions: not judged, says why.
  VerdictInputs none{m, {}, &kRelease, nullptr, {}};
  none.rebuild.primary = 0.95;
  const Verdict verdict = decide_verdict(none);  // alive while `check` points into it
  const auto* check = find_check(verdict, "same-seed:predictions");
  REQUIRE(check);
  CHECK(check->outcome == CheckOutcome::not_judged);
  CHECK(contains(check->explanation, "the rebuild wrote no predictions to compare"));
}

TEST_CASE("same-seed: a fresh-seed rerun is not judged by the release's same-seed references") {
  auto m = manifest_with(reproducing(3));
  m.evaluation.steps = StepValues{"loss", {2.30, 2.11, 1.96}};
  m.tolerance->steps_same_seed_runs = {{2.30, 2.11, 1.96}, {2.30, 2.11, 1.96}, {2.30, 2.11, 1.96}};
  const Predictions rebuilt = one_d({0.1, 0.41, 0.7, 0.95});
  VerdictInputs inputs{m, {}, &kRelease, nullptr, {}};
  inputs.rebuild.primary_name = "accuracy";
  inputs.rebuild.primary = 0.95;
  inputs.rebuild.predictions = &rebuilt;
  inputs.rebuild.steps = std::vector<double>{2.31, 2.2, 2.0};
  // The release's own seeds: both notes judge it (and fail, which decides nothing).
  const Verdict same_seeds = decide_verdict(inputs);
  REQUIRE(find_check(same_seeds, "same-seed:predictions"));
  CHECK(find_check(same_seeds, "same-seed:predictions")->outcome == CheckOutcome::failed);
  REQUIRE(find_check(same_seeds, "steps:loss"));
  // Seed override 4242: the same-seed reruns say nothing of it; the steps note is not drawn.
  inputs.rebuild.seed_override = 4242;
  const Verdict fresh = decide_verdict(inputs);
  const auto* check = find_check(fresh, "same-seed:predictions");
  REQUIRE(check);
  CHECK(check->outcome == CheckOutcome::not_judged);
  CHECK(contains(check->explanation, "not judged: this rebuild ran seed override 4242"));
  CHECK_FALSE(find_check(fresh, "steps:loss"));
}
