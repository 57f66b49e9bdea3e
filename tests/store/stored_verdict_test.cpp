// A verdict read back from the store is the verdict that was written, and rows written by earlier
// versions (a `tolerance` instead of a `band`, the power kept in the evidence) read as they meant.
#include <doctest/doctest.h>

#include "store/stored_verdict.hpp"
#include "tests/support/check_fixture.hpp"

namespace reverify::test {
namespace {

Verdict sample() {
  Verdict v;
  v.cls = VerdictClass::failed_distribution_shift;
  v.explanation = "distribution:ks 0.2 exceeds the bound ≤ 0.1";
  CheckResult primary =
      test::banded_check("primary:accuracy", CheckKind::primary, CheckOutcome::passed, 0.9609,
                         0.9611, CheckBand{0.9571, 0.9651});
  primary.margin = 0.0038;
  primary.power = CheckPower{0.02, 0.01, true, 23};
  primary.seed_runs = 40;
  primary.evidence["alpha"] = 0.005;
  CheckResult ks =
      test::banded_check("distribution:ks", CheckKind::distribution, CheckOutcome::failed, 0.2,
                         std::nullopt, CheckBand{std::nullopt, 0.1});
  ks.margin = -0.1;
  ks.cannot_fail = false;
  ks.fallback = "policy fallback";
  CheckResult segment;
  segment.name = "segment:radius=low:auc";
  segment.kind = CheckKind::segment;
  segment.outcome = CheckOutcome::not_judged;
  segment.informational = true;
  segment.explanation = "undefined: one class present";
  v.checks = {primary, ks, segment};
  return v;
}

}  // namespace

TEST_CASE("a stored verdict reads back field by field") {
  const Verdict v = sample();
  const auto back = verdict_from_json(to_json(v));
  REQUIRE(back.has_value());
  CHECK(back->cls == v.cls);
  CHECK(back->explanation == v.explanation);
  REQUIRE(back->checks.size() == 3);
  const auto& p = back->checks[0];
  CHECK(p.name == "primary:accuracy");
  CHECK(p.band->lower == 0.9571);
  CHECK(p.power->shift == 0.02);
  CHECK(p.power->runs_needed == 23u);
  CHECK(p.seed_runs == 40u);
  CHECK(p.evidence == nlohmann::json{{"alpha", 0.005}});  // the typed fields are not kept twice
  CHECK(back->checks[1].fallback == "policy fallback");
  CHECK_FALSE(back->checks[1].band->lower.has_value());
  CHECK(back->checks[2].outcome == CheckOutcome::not_judged);
  CHECK_FALSE(back->checks[2].decides());
  CHECK(back->power.underpowered == std::vector<std::string>{"primary:accuracy"});
  CHECK(back->primary() == &back->checks[0]);
}

TEST_CASE("rows from earlier versions: tolerance instead of band, power in the evidence") {
  const auto back = verdict_from_json(nlohmann::json::parse(R"({"class": "passed", "checks": [
    {"name": "primary:accuracy", "kind": "primary", "outcome": "passed", "observed": 0.96,
     "reference": 0.9611, "tolerance": 0.004, "evidence": {"power": {"shift": 0.006},
     "fallback": true}},
    {"name": "distribution:ks", "kind": "distribution", "outcome": "passed", "observed": 0.01,
     "tolerance": 0.05, "evidence": {"underpowered": true}}]})"));
  REQUIRE(back.has_value());
  CHECK(back->checks[0].band->lower.value() == doctest::Approx(0.9571));
  CHECK(back->checks[0].band->upper == doctest::Approx(0.9651));
  CHECK(back->checks[0].power->shift == 0.006);
  CHECK(back->checks[0].fallback == "policy fallback");
  CHECK_FALSE(back->checks[1].band->lower.has_value());
  CHECK(back->checks[1].band->upper == 0.05);
  CHECK(back->checks[1].power->underpowered);
}

TEST_CASE("what is not a verdict is refused") {
  CHECK_FALSE(verdict_from_json(nlohmann::json{{"class", "nope"}}).has_value());
  CHECK_FALSE(verdict_from_json(nlohmann::json{{"class", "passed"}, {"checks", {{{"name", 1}}}}})
                  .has_value());
  CHECK_FALSE(verdict_from_json(nlohmann::json{{"class", "passed"}, {"checks", 3}}).has_value());
  CHECK_FALSE(verdict_from_json(nlohmann::json::array()).has_value());
}

}  // namespace reverify::test
