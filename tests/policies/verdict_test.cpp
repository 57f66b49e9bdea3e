#include <doctest/doctest.h>

#include "policies/verdict.hpp"
#include "tests/support/check_fixture.hpp"
#include "tests/support/predictions_fixture.hpp"
#include "tests/support/text_search.hpp"

using namespace reverify;
using reverify::test::find_check;
using reverify::test::one_d;

using reverify::test::contains;

namespace {

Manifest base_manifest() {
  Manifest m;
  m.model = "digits-mlp";
  m.version = "2026.11.1";
  m.owner = "team-vision";
  m.level = ReproLevel::equivalent;
  m.evaluation.primary = {"accuracy", 0.9611, true, std::nullopt};
  ToleranceSpec t;
  t.seed_runs["accuracy"] = {0.9605, 0.9622, 0.9611, 0.9598, 0.9617};
  m.tolerance = t;
  return m;
}

VerdictInputs inputs(const Manifest& m) {
  return VerdictInputs{m, {}, nullptr, nullptr, {}};
}

}  // namespace

TEST_CASE("primary within the seed band passes and says from how many seed runs") {
  const auto m = base_manifest();
  auto in = inputs(m);
  in.rebuild.primary = 0.9609;
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  const auto* c = find_check(v, "primary:accuracy");
  REQUIRE(c);
  CHECK(c->outcome == CheckOutcome::passed);
  CHECK(*c->margin > 0);
  REQUIRE(c->band.has_value());
  REQUIRE(c->band->lower.has_value());
  CHECK(*c->band->lower < 0.9609);
  CHECK(c->band->upper > 0.9609);
  CHECK(c->seed_runs == 5u);
  // In [0, 1], no example count, short decimals (no count to infer): the angular scale.
  CHECK(c->evidence["model"] == "unit");
  CHECK(c->evidence["rebuilt_minus_recorded"].get<double>() == doctest::Approx(0.9609 - 0.9611));
  REQUIRE(c->power.has_value());
  CHECK(c->power->shift.has_value());
  CHECK_FALSE(c->power->underpowered);
  CHECK(contains(v.explanation, "5 seed runs"));
  CHECK(contains(v.explanation, "catches shifts of"));
  CHECK_FALSE(v.power.underpowered.size());
  MESSAGE(v.explanation);
}

TEST_CASE("primary out of band fails in either direction, naming the direction") {
  const auto m = base_manifest();
  auto in = inputs(m);
  in.rebuild.primary = 0.9500;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "regressed"));
  CHECK(*find_check(v, "primary:accuracy")->margin < 0);
  in.rebuild.primary = 0.9700;
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "improved"));
}

TEST_CASE("lower-is-better metrics flip the direction") {
  auto m = base_manifest();
  m.evaluation.primary = {"loss", 0.30, false, std::nullopt};
  m.tolerance->seed_runs = {{"loss", {0.30, 0.31, 0.29, 0.30}}};
  auto in = inputs(m);
  in.rebuild.primary = 0.50;
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(find_check(v, "primary:loss")->evidence["direction"] == "regressed");
}

TEST_CASE(
    "fewer than 3 seed runs: uncalibrated with how to calibrate; fallback only when allowed") {
  auto m = base_manifest();
  m.tolerance->seed_runs["accuracy"] = {0.96, 0.961};
  auto in = inputs(m);
  in.rebuild.primary = 0.9612;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::uncalibrated);
  CHECK(contains(v.explanation, "reverify calibrate digits-mlp@2026.11.1 --seeds 10"));

  VerdictPolicy policy;
  policy.allow_fallback = true;
  policy.fallback_tolerance["accuracy"] = 0.002;
  v = decide_verdict(in, policy);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(contains(v.explanation, "fallback"));
  CHECK(find_check(v, "primary:accuracy")->fallback == "policy fallback");
}

TEST_CASE("seed runs that all agree, with no count to give the grain: no band unless a floor") {
  auto m = base_manifest();
  m.evaluation.primary.value = 0.9712345678;  // not a fraction of a small count
  m.tolerance->seed_runs["accuracy"] = {0.9712345678, 0.9712345678, 0.9712345678};
  auto in = inputs(m);
  in.rebuild.primary = 0.9712345678;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::uncalibrated);
  CHECK(
      contains(find_check(v, "primary:accuracy")->explanation, "all 3 seed runs scored 0.971235"));
  m.tolerance->floor["accuracy"] = 0.005;
  auto floored = inputs(m);
  floored.rebuild.primary = 0.9712345678;
  v = decide_verdict(floored);
  CHECK(find_check(v, "primary:accuracy")->band->lower == doctest::Approx(0.9662345678));
}

TEST_CASE("a segment that every seed run scored alike, without a count: inferred or not judged") {
  auto m = base_manifest();
  // 42/43 in every run, to the last bit or one ulp apart: the count 43 is inferred.
  m.evaluation.segments["radius=low"]["accuracy"] = 42.0 / 43;
  m.tolerance->segment_seed_runs["radius=low"]["accuracy"] = {42.0 / 43, 0.97674418604651159,
                                                              42.0 / 43, 42.0 / 43, 42.0 / 43};
  // 1.0 in every run and in the release: nothing gives the grain.
  m.evaluation.segments["radius=high"]["accuracy"] = 1.0;
  m.tolerance->segment_seed_runs["radius=high"]["accuracy"] = {1.0, 1.0, 1.0, 1.0, 1.0};
  auto in = inputs(m);
  in.rebuild.primary = 0.961;
  in.rebuild.segments["radius=low"]["accuracy"] = 41.0 / 43;  // one more example wrong
  in.rebuild.segments["radius=high"]["accuracy"] = 0.9;
  const auto v = decide_verdict(in);
  const auto* low = find_check(v, "segment:radius=low:accuracy");
  REQUIRE(low);
  CHECK(low->outcome == CheckOutcome::passed);
  CHECK(low->band->lower.value() < 42.0 / 43);
  CHECK(contains(low->explanation, "inferred from the values"));
  const auto* high = find_check(v, "segment:radius=high:accuracy");
  REQUIRE(high);
  CHECK(high->outcome == CheckOutcome::not_judged);
  CHECK_FALSE(high->decides());
  CHECK(contains(high->explanation, "scoring spec"));
  CHECK(v.cls == VerdictClass::passed);  // a not-judged check never pages
  CHECK(contains(v.explanation, "1 not judged (segment:radius=high:accuracy)"));
}

TEST_CASE("a seed run that reproduced the release, or copied another run, is left out") {
  auto m = base_manifest();
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  m.tolerance->seed_runs["accuracy"] = {0.9605, 0.9622, 0.9611, 0.9598, 0.9617, 0.9611};
  double scale = 1;
  for (const char* s : {"ks", "psi", "wasserstein", "max_abs_diff", "mean_abs_diff", "flip_rate"}) {
    // Run 3 is the release's own predictions; run 6 a copy of run 2.
    m.tolerance->distribution_seed_runs[s] = {0.02 * scale,  0.03 * scale,  0,
                                              0.021 * scale, 0.031 * scale, 0.03 * scale};
    scale *= 1.1;
  }
  auto in = inputs(m);
  in.rebuild.primary = 0.961;
  const auto v = decide_verdict(in);
  CHECK(find_check(v, "primary:accuracy")->seed_runs == 4u);
  CHECK(contains(v.explanation,
                 "1 seed run(s) left out of the bands: their predictions are the "
                 "release's own"));
  CHECK(contains(v.explanation, "1 seed run(s) left out of the bands: copies of an earlier"));
}

TEST_CASE("a stored calibration overrides the manifest's seed runs") {
  auto m = base_manifest();
  m.tolerance->seed_runs["accuracy"] = {0.96};
  ToleranceSpec stored;
  stored.seed_runs["accuracy"] = {0.95, 0.96, 0.97};
  auto in = inputs(m);
  in.calibration = &stored;
  in.rebuild.primary = 0.965;
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(find_check(v, "primary:accuracy")->seed_runs == 3u);
}

TEST_CASE("merged tolerance: the stored calibration's seed list, when it has one, is the list") {
  auto m = base_manifest();
  m.tolerance->seed_runs["accuracy"] = {0.95, 0.96, 0.97};
  m.tolerance->seed_overrides = {1, 2, 3};
  m.tolerance->floor["accuracy"] = 0.01;
  // A later calibration that added seeds 4 and 5: the whole list, and its runs.
  ToleranceSpec stored;
  stored.seed_runs["accuracy"] = {0.95, 0.96, 0.97, 0.955, 0.965};
  stored.seed_overrides = {1, 2, 3, 4, 5};
  auto merged = merged_tolerance(m, &stored);
  CHECK(merged.seed_overrides == std::vector<std::int64_t>{1, 2, 3, 4, 5});
  CHECK(merged.seed_runs.at("accuracy").size() == 5);
  CHECK(merged.floor.at("accuracy") == doctest::Approx(0.01));  // key by key: kept
  // A calibration stored without the list (before it was kept): the manifest's stands.
  stored.seed_overrides.clear();
  CHECK(merged_tolerance(m, &stored).seed_overrides == std::vector<std::int64_t>{1, 2, 3});
  CHECK(merged_tolerance(m, nullptr).seed_overrides == std::vector<std::int64_t>{1, 2, 3});
}

TEST_CASE("segments: proportions over their examples; the rate split over the families") {
  auto m = base_manifest();
  m.evaluation.segments = {{"digit=8", {{"accuracy", 38.0 / 39}}},
                           {"digit=9", {{"accuracy", 1.0}}}};
  m.evaluation.segment_examples = {{"digit=8", 39}, {"digit=9", 40}};
  m.tolerance->segment_seed_runs["digit=8"]["accuracy"] = {37.0 / 39, 38.0 / 39, 39.0 / 39};
  m.tolerance->segment_seed_runs["digit=9"]["accuracy"] = {1.0, 1.0, 1.0};  // all agree
  auto in = inputs(m);
  in.rebuild.primary = 0.961;
  in.rebuild.segments = {{"digit=8", {{"accuracy", 38.0 / 39}}},
                         {"digit=9", {{"accuracy", 39.0 / 40}}}};
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  // primary 0.5 and segments 0.25 of the rate, over the families present (no distribution).
  CHECK(find_check(v, "primary:accuracy")->evidence["alpha"].get<double>() ==
        doctest::Approx(0.01 * 0.5 / 0.75));
  CHECK(find_check(v, "segment:digit=8:accuracy")->evidence["alpha"].get<double>() ==
        doctest::Approx(0.01 * 0.25 / 0.75 / 2));
  const auto* agreed = find_check(v, "segment:digit=9:accuracy");
  CHECK(agreed->evidence["model"] == "proportion");
  CHECK(agreed->evidence["examples"] == 40);
  CHECK(*agreed->band->lower < 1.0);  // never +-0: one more wrong example does not page
  CHECK(agreed->outcome == CheckOutcome::passed);

  in.rebuild.segments.erase("digit=9");
  in.rebuild.segments["digit=7"]["accuracy"] = 0.9;
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(find_check(v, "segment:digit=9:accuracy")->outcome == CheckOutcome::failed);
  CHECK(contains(find_check(v, "segment:digit=9:accuracy")->explanation, "missing"));
  CHECK(find_check(v, "segment:digit=7:accuracy")->outcome == CheckOutcome::failed);
  CHECK(contains(find_check(v, "segment:digit=7:accuracy")->explanation, "extra segment"));
}

TEST_CASE("distribution: bounds from the release vs each seed run pass honest, catch a shift") {
  auto m = base_manifest();
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  for (const char* s : {"ks", "psi", "wasserstein", "max_abs_diff", "mean_abs_diff", "flip_rate"})
    m.tolerance->distribution_seed_runs[s] = {0.02, 0.03, 0.025, 0.021, 0.031};
  std::vector<double> base(1000);
  for (std::size_t i = 0; i < base.size(); ++i)
    base[i] = static_cast<double>(i) / 1000;
  const auto original = one_d(base);
  auto near = base;
  for (auto& x : near)
    x += 0.001;
  const auto honest = one_d(near);
  auto in = inputs(m);
  in.rebuild.primary = 0.961;
  in.original_predictions = &original;
  in.rebuild.predictions = &honest;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  const auto* ks = find_check(v, "distribution:ks");
  REQUIRE(ks);
  CHECK(ks->outcome == CheckOutcome::passed);
  CHECK_FALSE(ks->band->lower.has_value());  // one-sided
  CHECK(ks->evidence["quantiles"]["original"].contains("p99"));
  CHECK(find_check(v, "primary:accuracy")->evidence["alpha"].get<double>() ==
        doctest::Approx(0.01 * 0.5 / 0.75));
  CHECK(find_check(v, "distribution:psi")->evidence["alpha"].get<double>() ==
        doctest::Approx(0.01 * 0.25 / 0.75 / 6));

  auto far = base;
  for (auto& x : far)
    x = x * 0.5 + 0.5;
  const auto shifted = one_d(far);
  in.rebuild.predictions = &shifted;
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_distribution_shift);
  CHECK(contains(v.explanation, "distribution:"));
  CHECK(contains(v.explanation, "5 seed runs against the release"));
  CHECK(contains(v.explanation, "≤ "));
  CHECK_FALSE(contains(v.explanation, "±"));
}

TEST_CASE("distribution uncalibrated: uncalibrated verdict, or the PSI fallback when allowed") {
  auto m = base_manifest();
  std::vector<double> base(500);
  for (std::size_t i = 0; i < base.size(); ++i)
    base[i] = static_cast<double>(i % 97) / 97;
  const auto original = one_d(base);
  auto in = inputs(m);
  in.rebuild.primary = 0.9611;  // the release's predictions: the number recorded for them
  in.original_predictions = &original;
  in.rebuild.predictions = &original;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::uncalibrated);
  CHECK(find_check(v, "distribution:psi")->outcome == CheckOutcome::uncalibrated);

  VerdictPolicy policy;
  policy.allow_fallback = true;
  v = decide_verdict(in, policy);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(find_check(v, "distribution:psi")->outcome == CheckOutcome::passed);
  CHECK(find_check(v, "distribution:psi")->band->upper == 0.1);
  CHECK(find_check(v, "distribution:ks")->informational);  // a typed flag, not evidence
  CHECK_FALSE(find_check(v, "distribution:ks")->evidence.contains("informational"));
  CHECK(contains(v.explanation, "fallback"));
}

TEST_CASE("headline: the primary when it fails, else the failure worst relative to its band") {
  auto m = base_manifest();
  m.evaluation.segments = {{"a", {{"accuracy", 0.9}}}, {"b", {{"accuracy", 0.9}}}};
  m.tolerance->segment_seed_runs["a"]["accuracy"] = {0.90, 0.91, 0.89, 0.90};
  m.tolerance->segment_seed_runs["b"]["accuracy"] = {0.90, 0.91, 0.89, 0.90};
  auto in = inputs(m);
  in.rebuild.primary = 0.9611;
  in.rebuild.segments = {{"a", {{"accuracy", 0.70}}}, {"b", {{"accuracy", 0.5}}}};
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(v.explanation.rfind("segment:b:accuracy", 0) == 0);  // further outside its band
  in.rebuild.primary = 0.80;
  v = decide_verdict(in);
  CHECK(v.explanation.rfind("primary:accuracy", 0) == 0);
}

TEST_CASE("underpowered: a band that cannot catch the declared shift says so, with the runs") {
  auto m = base_manifest();
  m.tolerance->detect["accuracy"] = 0.0005;  // tighter than 5 runs with sd 0.0009 allow
  auto in = inputs(m);
  in.rebuild.primary = 0.9609;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  const auto* c = find_check(v, "primary:accuracy");
  REQUIRE(c->power.has_value());
  CHECK(c->power->underpowered);
  CHECK(c->power->detect == 0.0005);
  CHECK(contains(c->explanation, "UNDERPOWERED"));
  CHECK(v.power.underpowered == std::vector<std::string>{"primary:accuracy"});
  CHECK(contains(v.explanation, "UNDERPOWERED"));
  const auto j = to_json(v);
  CHECK(j["underpowered"] == true);
  // A shift the band does catch: not underpowered; the config's override wins.
  in.detect["accuracy"] = 0.05;
  v = decide_verdict(in);
  CHECK_FALSE(find_check(v, "primary:accuracy")->power->underpowered);
  CHECK(contains(find_check(v, "primary:accuracy")->explanation, "catches shifts of ≤ 0.05"));
  CHECK(to_json(v)["underpowered"] == false);
}

TEST_CASE("underpowered with more runs possible: runs_needed is the total that would do") {
  auto m = base_manifest();
  const double shift = *decide_verdict([&] {
                          auto in = inputs(m);
                          in.rebuild.primary = 0.9611;
                          return in;
                        }())
                            .checks[0]
                            .power->shift;
  m.tolerance->detect["accuracy"] = shift * 0.8;
  auto in = inputs(m);
  in.rebuild.primary = 0.9611;
  const auto v = decide_verdict(in);
  REQUIRE(v.power.runs_needed.has_value());
  CHECK(*v.power.runs_needed > 5u);
  CHECK_FALSE(v.power.unreachable);
}

TEST_CASE("bitwise: tensor hash equality and exact steps") {
  auto m = base_manifest();
  m.level = ReproLevel::bitwise;
  m.weights = Weights{"model.safetensors", "safetensors", std::string(64, 'a')};
  m.evaluation.steps = StepValues{"loss", {2.30, 2.11, 1.96}};
  auto in = inputs(m);
  in.rebuild.primary = 0.9611;
  in.rebuild.tensor_sha256 = std::string(64, 'a');
  in.rebuild.steps_mode = true;
  in.rebuild.max_steps = 3;
  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.96};
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(find_check(v, "steps:loss")->band->upper < 1e-10);

  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.9600000001};
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(find_check(v, "steps:loss")->evidence["worst_step"] == 2);

  in.rebuild.steps_mode = false;
  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.96};
  v = decide_verdict(in);
  CHECK(find_check(v, "weights:tensor_sha256")->outcome == CheckOutcome::passed);
  in.rebuild.tensor_sha256 = std::string(64, 'b');
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(find_check(v, "weights:tensor_sha256")->outcome == CheckOutcome::failed);
}

TEST_CASE("steps mode: a same-seed comparison; exact when the reruns reproduced the curve") {
  auto m = base_manifest();
  m.evaluation.steps = StepValues{"loss", {2.30, 2.11, 1.96, 1.80}};
  auto in = inputs(m);
  in.rebuild.steps_mode = true;
  in.rebuild.max_steps = 3;
  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.96};
  // No same-seed reruns: uncalibrated, telling how to record them.
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::uncalibrated);
  CHECK(contains(v.explanation,
                 "`reverify calibrate digits-mlp@2026.11.1 --mode steps --max-steps 3 --seeds 3`"));

  // Three same-seed reruns that reproduced it: exact band; any deviation fails.
  m.tolerance->steps_same_seed_runs = {
      {2.30, 2.11, 1.96, 1.80}, {2.30, 2.11, 1.96, 1.80}, {2.30, 2.11, 1.96, 1.80}};
  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.96};
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  REQUIRE(v.checks.size() == 1);
  CHECK(v.checks[0].evidence["steps_compared"] == 3);
  CHECK(contains(v.checks[0].explanation, "exact"));
  CHECK(contains(v.checks[0].explanation, "≤ "));
  in.rebuild.steps = std::vector<double>{2.30, 2.1105, 1.96};
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(v.checks[0].evidence["worst_step"] == 1);

  // Nondeterministic platform: a band from the reruns' deviations (the whole rate: alpha 0.01).
  m.tolerance->steps_same_seed_runs = {
      {2.3001, 2.1102, 1.9603, 1.80}, {2.2999, 2.1101, 1.9598, 1.8}, {2.3002, 2.1097, 1.9601, 1.8}};
  in.rebuild.steps = std::vector<double>{2.3001, 2.1101, 1.9601};
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(contains(v.checks[0].explanation, "3 same-seed reruns, α=0.01"));

  // More steps requested than recorded: the recorded ones are compared, and it says so.
  in.rebuild.max_steps = 10;
  in.rebuild.steps = std::vector<double>{2.3001, 2.1101, 1.9601, 1.8, 1.7, 1.6};
  v = decide_verdict(in);
  CHECK(v.checks[0].evidence["steps_compared"] == 4);
  CHECK(contains(v.checks[0].explanation, "the release recorded 4 step values, 10 were requested"));

  in.rebuild.max_steps = 3;
  in.rebuild.steps = std::vector<double>{2.301, 2.112};
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "expected 3"));

  // Same-seed reruns shorter than the steps compared: no band, and the command that records one.
  m.tolerance->steps_same_seed_runs = {{2.30, 2.11}, {2.30, 2.11}, {2.30, 2.11}};
  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.96};
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::uncalibrated);
  CHECK(contains(v.explanation,
                 "(recalibrate with `reverify calibrate digits-mlp@2026.11.1 --mode steps "
                 "--max-steps 3`)"));
}

TEST_CASE("a full rebuild's step curve is a note: it never fails the verdict") {
  auto m = base_manifest();
  m.evaluation.steps = StepValues{"loss", {2.30, 2.11, 1.96}};
  m.tolerance->steps_same_seed_runs = {{2.30, 2.11, 1.96}, {2.30, 2.11, 1.96}, {2.30, 2.11, 1.96}};
  auto in = inputs(m);
  in.rebuild.primary = 0.9611;
  in.rebuild.steps = std::vector<double>{2.40, 2.20, 2.00};
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  const auto* steps = find_check(v, "steps:loss");
  CHECK(steps->informational);
  CHECK(steps->outcome == CheckOutcome::failed);
  CHECK(contains(steps->explanation, "a note"));
  // The one sign of a change no hash sees is in the headline, not only among the checks.
  CHECK(contains(v.explanation, "NOTE: steps:loss is outside its same-seed band (informational"));
  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.96};
  CHECK_FALSE(contains(decide_verdict(in).explanation, "NOTE:"));
}

TEST_CASE("a distribution bound above the statistic's range cannot fail, and says so") {
  auto m = base_manifest();
  // Probabilities: the distances are at most 1. Seed runs 5, one far from the others: the
  // log-normal bound at this α is far above 1 for every statistic but psi.
  std::vector<double> base(200);
  for (std::size_t i = 0; i < base.size(); ++i)
    base[i] = i % 2 ? 0.02 + 0.001 * static_cast<double>(i % 7) : 0.97;
  const auto original = one_d(base);
  auto nudged = base;
  nudged[0] = 0.5;
  const auto rebuilt = one_d(nudged);
  m.tolerance->distribution_seed_runs = {{"ks", {0.01, 0.012, 0.011, 0.3, 0.009}},
                                         {"psi", {0.01, 0.012, 0.011, 0.3, 0.009}},
                                         {"wasserstein", {0.001, 0.0012, 0.0011, 0.4, 0.0009}},
                                         {"max_abs_diff", {0.01, 0.012, 0.011, 0.3, 0.009}},
                                         {"mean_abs_diff", {0.001, 0.0012, 0.0011, 0.3, 0.0009}},
                                         {"flip_rate", {0.005, 0.01, 0.005, 0.4, 0.01}}};
  auto in = inputs(m);
  in.rebuild.primary = 0.9611;
  in.original_predictions = &original;
  in.rebuild.predictions = &rebuilt;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  for (const char* name : {"distribution:ks", "distribution:flip_rate", "distribution:wasserstein",
                           "distribution:max_abs_diff"}) {
    INFO(name);
    const auto* c = find_check(v, name);
    REQUIRE(c);
    CHECK(c->cannot_fail);
    CHECK(c->band->upper == 1.0);  // shown at the statistic's largest value
    CHECK(c->evidence["bound_from_seed_runs"].get<double>() > 1.0);
    CHECK(contains(c->explanation, "it cannot fail: the bound from 5 seed runs is "));
    CHECK_FALSE(c->power->shift.has_value());  // it catches no shift
  }
  CHECK_FALSE(
      find_check(v, "distribution:psi")->evidence.contains("cannot_fail"));  // no largest value
  CHECK(contains(v.explanation,
                 "cannot fail with these seed runs, their bound above the "
                 "statistic's range (distribution:"));
  // With a declared detect such a check is underpowered.
  m.tolerance->detect["distribution:ks"] = 0.2;
  v = decide_verdict(in);
  CHECK(find_check(v, "distribution:ks")->power->underpowered);

  // Scores outside [0, 1] (logits): the distances have no largest value to compare with.
  std::vector<double> logits(base);
  for (auto& x : logits)
    x = x * 8 - 4;
  const auto original_logits = one_d(logits);
  logits[0] += 1;
  const auto rebuilt_logits = one_d(logits);
  in.original_predictions = &original_logits;
  in.rebuild.predictions = &rebuilt_logits;
  v = decide_verdict(in);
  CHECK_FALSE(find_check(v, "distribution:wasserstein")->evidence.contains("cannot_fail"));
  CHECK(find_check(v, "distribution:ks")->cannot_fail);  // always at most 1
}

TEST_CASE("rerunnable: checks are reported, not enforced") {
  auto m = base_manifest();
  m.level = ReproLevel::rerunnable;
  auto in = inputs(m);
  in.rebuild.primary = 0.5;
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(find_check(v, "primary:accuracy")->outcome == CheckOutcome::failed);
  CHECK(contains(v.explanation, "not enforced"));
}

TEST_CASE("a missing primary or a renamed primary is a finding") {
  const auto m = base_manifest();
  auto in = inputs(m);
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "did not report"));
  in.rebuild.primary = 0.9611;
  in.rebuild.primary_name = "f1";
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "\"f1\""));
}

TEST_CASE("input drift and error verdicts") {
  CheckResult ok;
  ok.name = "input:image";
  ok.kind = CheckKind::input;
  ok.outcome = CheckOutcome::passed;
  ok.explanation = "image resolvable";
  CheckResult moved = ok;
  moved.name = "input:dataset";
  moved.outcome = CheckOutcome::failed;
  moved.explanation = "dataset root hash moved";
  const auto v = verdict_for_input_drift({ok, moved});
  CHECK(v.cls == VerdictClass::failed_input_drift);
  CHECK(contains(v.explanation, "dataset root hash moved"));
  CHECK(v.checks.size() == 2);
  const auto e = verdict_for_error(VerdictClass::error_provision, "docker: no such image");
  CHECK(e.cls == VerdictClass::error_provision);
  CHECK(e.explanation == "docker: no such image");
}

TEST_CASE("verdict JSON: band, power, informational and the typed evidence") {
  auto m = base_manifest();
  m.tolerance->detect["accuracy"] = 0.0005;
  auto in = inputs(m);
  in.rebuild.primary = 0.9609;
  const auto v = decide_verdict(in);
  const auto j = to_json(v);
  CHECK(j["class"] == "passed");
  CHECK(j["checks"][0]["band"]["lower"].is_number());
  CHECK(j["checks"][0]["power"]["probability"] == 0.8);
  CHECK(j["checks"][0]["power"]["underpowered"] == true);
  CHECK(j["checks"][0]["informational"] == false);
  CHECK(j["checks"][0]["evidence"]["seed_runs"] == v.checks[0].seed_runs.value());
  CHECK_FALSE(j["checks"][0]["evidence"].contains("cannot_fail"));
}
