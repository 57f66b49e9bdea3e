// Fail closed (policies/coverage.hpp): every deciding check a release defines is a deciding row
// of its verdict. A family that cannot be computed on the rebuild fails as one row saying why; a
// release whose own side cannot give them (its predictions unreadable) is error:manifest-invalid;
// no verdict passes with fewer deciding checks than its release defines.

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>

#include "policies/coverage.hpp"
#include "policies/verdict.hpp"
#include "tests/support/check_fixture.hpp"
#include "tests/support/predictions_fixture.hpp"
#include "tests/support/text_search.hpp"

using namespace reverify;
using reverify::test::find_check;
using reverify::test::one_d;

using reverify::test::contains;

namespace {

// 100 scores in [0, 1], spread evenly; `shift` moves every one.
std::vector<double> scores(double shift = 0, std::size_t n = 100) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i)
    v.push_back(0.005 + 0.0099 * static_cast<double>(i) + shift);
  return v;
}

// A release with a primary band and the six distribution statistics: 7 deciding checks.
Manifest release() {
  Manifest m;
  m.model = "m";
  m.version = "1";
  m.owner = "o";
  m.level = ReproLevel::equivalent;
  m.evaluation.primary = {"accuracy", 0.9611, true, std::nullopt};
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  ToleranceSpec t;
  t.seed_runs["accuracy"] = {0.9605, 0.9622, 0.9611, 0.9598, 0.9617};
  for (const char* statistic : {"ks", "psi", "wasserstein", "max_abs_diff", "mean_abs_diff"})
    t.distribution_seed_runs[statistic] = {0.02, 0.03, 0.025, 0.035, 0.028};
  t.distribution_seed_runs["flip_rate"] = {0.02, 0.03, 0.01, 0.04, 0.02};
  m.tolerance = t;
  return m;
}

struct Case {
  Manifest m = release();
  Predictions original = one_d(scores());
  Predictions rebuilt = one_d(scores());

  VerdictInputs inputs(bool with_original = true, bool with_rebuilt = true) {
    VerdictInputs in{m, {}, with_original ? &original : nullptr, nullptr, {}};
    in.rebuild.primary = 0.9611;  // its predictions are the release's: so is its accuracy
    in.rebuild.predictions = with_rebuilt ? &rebuilt : nullptr;
    return in;
  }
};

}  // namespace

TEST_CASE("a bitwise release whose rebuilt weights hash the same passes, its weights judged") {
  Case c;
  c.m.level = ReproLevel::bitwise;
  c.m.weights = Weights{"model.safetensors", "safetensors", std::string(64, 'a')};
  VerdictInputs in = c.inputs();
  in.rebuild.tensor_sha256 = std::string(64, 'a');
  const Verdict v = decide_verdict(in);
  INFO(v.explanation);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(v.coverage.defined == 8);
  CHECK(v.coverage.complete());
  CHECK(std::none_of(v.checks.begin(), v.checks.end(),
                     [](const CheckResult& check) { return check.not_computed; }));
}

TEST_CASE("a verdict that judged every check its release defines passes and counts them") {
  Case c;
  const Verdict v = decide_verdict(c.inputs());
  CHECK(v.cls == VerdictClass::passed);
  CHECK(v.coverage.defined == 7);
  CHECK(v.coverage.judged == 7);
  CHECK(v.coverage.complete());
  CHECK(v.coverage.not_computed.empty());
  CHECK_FALSE(contains(v.explanation, "NOT COMPLETE"));
}

TEST_CASE("the release's predictions unreadable (a NaN): error:manifest-invalid, not a pass") {
  Case c;
  const Verdict v = decide_verdict(c.inputs(false));  // verify/ could not read them
  CHECK(v.cls == VerdictClass::error_manifest_invalid);
  CHECK(contains(v.explanation, "the release's reference cannot be read whole"));
  CHECK(contains(v.explanation, "6 of the 7 deciding checks"));
  INFO(v.explanation);
  CHECK(contains(v.explanation,
                 " and 3 more: the release's predictions (evaluation.predictions) cannot be read"));
  CHECK(v.coverage.defined == 7);
  CHECK(v.coverage.judged == 1);
  CHECK(v.coverage.not_computed.size() == 6);
  CHECK_FALSE(v.coverage.complete());
}

TEST_CASE("no predictions file from the rebuild: the distribution family fails as one row") {
  Case c;
  Verdict v = decide_verdict(c.inputs(true, false));
  CHECK(v.cls == VerdictClass::failed_distribution_shift);
  const auto* family = find_check(v, "distribution:*");
  REQUIRE(family);
  CHECK(family->outcome == CheckOutcome::failed);
  CHECK(family->not_computed);
  CHECK(family->decides());
  CHECK(contains(family->explanation, "the rebuild wrote no predictions file"));
  CHECK(contains(family->explanation, "the 6 distribution check(s) the release defines"));
  CHECK(family->evidence["checks"].size() == 6);
  CHECK(v.coverage.judged == 1);
  CHECK(contains(v.explanation, "NOT COMPLETE: 1 of the 7 deciding checks"));
  // Uncalibrated statistics fail it too: a missing predictions file fails whatever was recorded.
  c.m.tolerance->distribution_seed_runs.clear();
  v = decide_verdict(c.inputs(true, false));
  CHECK(v.cls == VerdictClass::failed_distribution_shift);
  REQUIRE(find_check(v, "distribution:*"));
  CHECK(v.coverage.defined == 1);
}

TEST_CASE("rebuilt predictions that do not pair: each paired statistic fails as not computed") {
  Case c;
  c.rebuilt = one_d(scores(0, 99));
  const Verdict v = decide_verdict(c.inputs());
  CHECK(v.cls == VerdictClass::failed_distribution_shift);
  for (const char* name :
       {"distribution:max_abs_diff", "distribution:mean_abs_diff", "distribution:flip_rate"}) {
    const auto* check = find_check(v, name);
    REQUIRE(check);
    CHECK(check->outcome == CheckOutcome::failed);
    CHECK(check->not_computed);
    CHECK(contains(check->explanation,
                   "do not pair with the release's row by row (99 x 1 "
                   "against 100 x 1)"));
  }
  CHECK(find_check(v, "distribution:ks")->outcome == CheckOutcome::passed);
  CHECK(v.coverage.judged == 4);
}

TEST_CASE(
    "a statistic the release defines and the rebuild cannot give fails; one it never "
    "defined does not count") {
  Case c;
  // The rebuild's scores leave [0, 1]: no decision of the release's kind can flip.
  c.rebuilt = one_d(scores(0.001));
  c.rebuilt.values.back() = 1.5;
  Verdict v = decide_verdict(c.inputs());
  const auto* flip = find_check(v, "distribution:flip_rate");
  REQUIRE(flip);
  CHECK(flip->outcome == CheckOutcome::failed);
  CHECK(flip->not_computed);
  CHECK(contains(flip->explanation, "cannot be computed on this rebuild"));
  CHECK(v.cls != VerdictClass::passed);
  // A release of regression outputs never defines the flip rate: not judged, and not missing.
  c.original = one_d(scores(2));
  c.rebuilt = one_d(scores(2));
  v = decide_verdict(c.inputs());
  CHECK(find_check(v, "distribution:flip_rate")->outcome == CheckOutcome::not_judged);
  CHECK(v.coverage.defined == 6);
  CHECK(v.coverage.judged == 6);
  CHECK(v.cls == VerdictClass::passed);
}

TEST_CASE("parity seed runs without a scoring spec: the release cannot define them") {
  Case c;
  c.m.tolerance->parity_seed_runs["parity:argmax"] = {0.01, 0.02, 0.01, 0.03, 0.02};
  const Verdict v = decide_verdict(c.inputs());
  CHECK(v.cls == VerdictClass::error_manifest_invalid);
  CHECK(contains(v.explanation, "evaluation.scoring"));
  CHECK(contains(v.explanation, "parity:argmax"));
}

TEST_CASE("segment seed runs for a segment the release records no value for: manifest-invalid") {
  Case c;
  c.m.tolerance->segment_seed_runs["digit=3"]["accuracy"] = {0.9, 0.92, 0.91, 0.93, 0.9};
  Verdict v = decide_verdict(c.inputs());
  INFO(v.explanation);
  CHECK(v.cls == VerdictClass::error_manifest_invalid);
  CHECK(contains(v.explanation, "segment:digit=3:accuracy: the release records no value for it"));
  // Recorded, and the rebuild reports it: judged.
  c.m.evaluation.segments["digit=3"]["accuracy"] = 0.91;
  auto in = c.inputs();
  in.rebuild.segments["digit=3"]["accuracy"] = 0.91;  // the same predictions: the same value
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(v.coverage.defined == 8);
  CHECK(v.coverage.judged == 8);
  // A metric its seed runs record that the release does not: no check is defined for it.
  c.m.tolerance->segment_seed_runs["digit=3"]["f1"] = {0.9, 0.92, 0.91, 0.93, 0.9};
  CHECK(decide_verdict(in).coverage.defined == 8);
}

TEST_CASE("steps mode defines the steps check; level rerunnable defines none") {
  Case c;
  c.m.evaluation.steps = StepValues{"loss", {2.3, 2.1, 1.9}};
  auto in = c.inputs();
  in.rebuild.steps_mode = true;
  in.rebuild.max_steps = 3;
  in.rebuild.steps = std::vector<double>{2.3, 2.1, 1.9};
  Verdict v = decide_verdict(in);
  CHECK(v.coverage.defined == 1);
  c.m.level = ReproLevel::rerunnable;
  v = decide_verdict(c.inputs(true, false));
  CHECK(v.cls == VerdictClass::passed);  // the level enforces nothing
  CHECK(v.coverage.defined == 0);
  CHECK(find_check(v, "distribution:*"));  // still a row with its reason, as a note
}

TEST_CASE("calibration's verdicts over recorded values judge only what was recorded") {
  Case c;
  auto in = c.inputs(false, false);
  in.fail_closed = false;
  const Verdict v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK_FALSE(find_check(v, "distribution:*"));
  CHECK(v.coverage.defined == 0);
}

TEST_CASE("apply_coverage: a defined check without a row fails with its family's reason") {
  std::vector<CheckResult> checks(1);
  checks[0].name = "parity:class=1";
  checks[0].kind = CheckKind::parity;
  checks[0].outcome = CheckOutcome::passed;
  CoverageGaps gaps;
  CheckCoverage coverage;
  const std::vector<DefinedCheck> defined{{"parity:class=1", CheckKind::parity},
                                          {"parity:tau-distance", CheckKind::parity}};
  const auto release = apply_coverage(checks, defined, gaps, coverage);
  CHECK(release.empty());
  REQUIRE(checks.size() == 2);
  CHECK(checks[1].name == "parity:tau-distance");
  CHECK(checks[1].outcome == CheckOutcome::failed);
  CHECK(checks[1].not_computed);
  CHECK(contains(checks[1].explanation, "the rebuild's outputs give no value to judge"));
  CHECK(coverage.defined == 2);
  CHECK(coverage.judged == 1);
  CHECK(coverage_text(coverage) ==
        "1 of the 2 deciding checks the release defines were judged; 1 could not be computed "
        "(parity:tau-distance)");
}

// Each family the release defines, removed from the rebuild's outputs in turn: the verdict never
// passes, and a failed row of that family says what is missing.
TEST_CASE("each family removed from the rebuild: a failed row of its own, never a pass") {
  struct Removal {
    std::string family;
    CheckKind kind;
    std::function<void(Case&, VerdictInputs&)> remove;
  };
  const std::vector<Removal> removals{
      {"primary", CheckKind::primary, [](Case&, VerdictInputs& in) { in.rebuild.primary.reset(); }},
      {"segment", CheckKind::segment,
       [](Case& c, VerdictInputs&) {
         c.m.evaluation.segments["digit=3"]["accuracy"] = 0.91;
         c.m.tolerance->segment_seed_runs["digit=3"]["accuracy"] = {0.9, 0.92, 0.91, 0.93, 0.9};
       }},
      {"distribution", CheckKind::distribution,
       [](Case&, VerdictInputs& in) { in.rebuild.predictions = nullptr; }},
      {"parity", CheckKind::parity,
       [](Case& c, VerdictInputs&) {
         c.m.evaluation.scoring = ScoringSpec{};
         c.m.tolerance->parity_seed_runs["parity:argmax"] = {0.01, 0.02, 0.01, 0.03, 0.02};
       }},
      {"weights", CheckKind::weights,
       [](Case& c, VerdictInputs&) {
         c.m.level = ReproLevel::bitwise;
         c.m.weights = Weights{"model.safetensors", "safetensors", std::string(64, 'a')};
       }},
      {"steps", CheckKind::steps,
       [](Case& c, VerdictInputs& in) {
         c.m.evaluation.steps = StepValues{"loss", {2.3, 2.1, 1.9}};
         in.rebuild.steps_mode = true;
         in.rebuild.max_steps = 3;
       }},
  };
  for (const auto& removal : removals) {
    CAPTURE(removal.family);
    Case c;
    VerdictInputs in = c.inputs();
    removal.remove(c, in);
    const Verdict v = decide_verdict(in);
    INFO(v.explanation);
    CHECK(v.cls != VerdictClass::passed);
    CHECK(is_failure(v.cls));
    const auto row = std::find_if(v.checks.begin(), v.checks.end(), [&](const CheckResult& check) {
      return check.kind == removal.kind && check.outcome == CheckOutcome::failed;
    });
    REQUIRE(row != v.checks.end());
    CHECK(row->decides());
  }
}
