#include <doctest/doctest.h>

#include "policies/verdict.hpp"

using namespace reverify;

namespace {

Manifest base_manifest() {
  Manifest m;
  m.model = "digits-mlp";
  m.version = "2026.11.1";
  m.owner = "team-vision";
  m.level = ReproLevel::equivalent;
  m.evaluation.primary = {"accuracy", 0.9611, true};
  ToleranceSpec t;
  t.seed_runs["accuracy"] = {0.9605, 0.9622, 0.9611, 0.9598, 0.9617};
  m.tolerance = t;
  return m;
}

Predictions scores(std::vector<double> values) {
  Predictions p;
  p.rows = values.size();
  p.values = std::move(values);
  return p;
}

const CheckResult* find(const Verdict& v, const std::string& name) {
  for (const auto& c : v.checks)
    if (c.name == name)
      return &c;
  return nullptr;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("primary within the seed band passes and says from how many seed runs") {
  const auto m = base_manifest();
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.9609;
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  const auto* c = find(v, "primary:accuracy");
  REQUIRE(c);
  CHECK(c->outcome == CheckOutcome::passed);
  CHECK(*c->margin > 0);
  CHECK(c->evidence["seed_runs"] == 5);
  CHECK(c->evidence["rebuilt_minus_recorded"].get<double>() == doctest::Approx(0.9609 - 0.9611));
  CHECK(c->evidence["power"].contains("shift_sigma"));
  CHECK(contains(v.explanation, "5 seed runs"));
  MESSAGE(v.explanation);
}

TEST_CASE("primary out of band fails in either direction, naming the direction") {
  const auto m = base_manifest();
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.9500;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "regressed"));
  CHECK(*find(v, "primary:accuracy")->margin < 0);
  in.rebuild.primary = 0.9700;
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "improved"));
}

TEST_CASE("lower-is-better metrics flip the direction") {
  auto m = base_manifest();
  m.evaluation.primary = {"loss", 0.30, false};
  m.tolerance->seed_runs = {{"loss", {0.30, 0.31, 0.29, 0.30}}};
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.50;
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(find(v, "primary:loss")->evidence["direction"] == "regressed");
}

TEST_CASE(
    "fewer than 3 seed runs: uncalibrated with how to calibrate; fallback only when allowed") {
  auto m = base_manifest();
  m.tolerance->seed_runs["accuracy"] = {0.96, 0.961};
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.9612;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::uncalibrated);
  CHECK(contains(v.explanation, "reverify calibrate digits-mlp@2026.11.1 --seeds 5"));

  VerdictPolicy policy;
  policy.allow_fallback = true;
  policy.fallback_tolerance["accuracy"] = 0.002;
  v = decide_verdict(in, policy);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(contains(v.explanation, "fallback"));
  CHECK(find(v, "primary:accuracy")->evidence["fallback"] == true);
}

TEST_CASE("a stored calibration overrides the manifest's seed runs") {
  auto m = base_manifest();
  m.tolerance->seed_runs["accuracy"] = {0.96};
  ToleranceSpec stored;
  stored.seed_runs["accuracy"] = {0.95, 0.96, 0.97};
  VerdictInputs in{m, {}};
  in.calibration = &stored;
  in.rebuild.primary = 0.965;
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(find(v, "primary:accuracy")->evidence["seed_runs"] == 3);
}

TEST_CASE("segments: each with its own seed runs; missing and extra segments are findings") {
  auto m = base_manifest();
  m.evaluation.segments = {{"digit=8", {{"accuracy", 0.93}}}, {"digit=9", {{"accuracy", 0.95}}}};
  m.tolerance->segment_seed_runs["digit=8"]["accuracy"] = {0.93, 0.931, 0.929};
  m.tolerance->segment_seed_runs["digit=9"]["accuracy"] = {0.95, 0.951, 0.949};
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.961;
  in.rebuild.segments = {{"digit=8", {{"accuracy", 0.9301}}}, {"digit=9", {{"accuracy", 0.9502}}}};
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  // Bonferroni: 3 calibrated checks share alpha.
  CHECK(find(v, "primary:accuracy")->evidence["alpha"].get<double>() == doctest::Approx(0.01 / 3));

  in.rebuild.segments.erase("digit=9");
  in.rebuild.segments["digit=7"]["accuracy"] = 0.9;
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(find(v, "segment:digit=9:accuracy")->outcome == CheckOutcome::failed);
  CHECK(contains(find(v, "segment:digit=9:accuracy")->explanation, "missing"));
  CHECK(find(v, "segment:digit=7:accuracy")->outcome == CheckOutcome::failed);
  CHECK(contains(find(v, "segment:digit=7:accuracy")->explanation, "extra segment"));
}

TEST_CASE("distribution: calibrated bands pass an honest rebuild and catch a shift") {
  auto m = base_manifest();
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  for (const char* s : {"ks", "psi", "wasserstein", "max_abs_diff", "mean_abs_diff", "flip_rate"})
    m.tolerance->distribution_pairs[s] = {0.02, 0.03, 0.025, 0.02, 0.03, 0.028};
  std::vector<double> base(1000);
  for (std::size_t i = 0; i < base.size(); ++i)
    base[i] = static_cast<double>(i) / 1000;
  const auto original = scores(base);
  auto near = base;
  for (auto& x : near)
    x += 0.001;
  const auto honest = scores(near);
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.961;
  in.original_predictions = &original;
  in.rebuild.predictions = &honest;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  const auto* ks = find(v, "distribution:ks");
  REQUIRE(ks);
  CHECK(ks->outcome == CheckOutcome::passed);
  CHECK(ks->evidence["quantiles"]["original"].contains("p99"));
  CHECK(find(v, "primary:accuracy")->evidence["alpha"].get<double>() == doctest::Approx(0.01 / 7));

  auto far = base;
  for (auto& x : far)
    x = x * 0.5 + 0.5;
  const auto shifted = scores(far);
  in.rebuild.predictions = &shifted;
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_distribution_shift);
  CHECK(contains(v.explanation, "distribution:"));
  CHECK(contains(v.explanation, "6 seed-run pairs"));
}

TEST_CASE(
    "distribution uncalibrated: uncalibrated verdict, or the PSI fallback when the policy allows") {
  auto m = base_manifest();
  std::vector<double> base(500);
  for (std::size_t i = 0; i < base.size(); ++i)
    base[i] = static_cast<double>(i % 97) / 97;
  const auto original = scores(base);
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.961;
  in.original_predictions = &original;
  in.rebuild.predictions = &original;
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::uncalibrated);
  CHECK(find(v, "distribution:psi")->outcome == CheckOutcome::uncalibrated);

  VerdictPolicy policy;
  policy.allow_fallback = true;
  v = decide_verdict(in, policy);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(find(v, "distribution:psi")->outcome == CheckOutcome::passed);
  CHECK(*find(v, "distribution:psi")->tolerance == 0.1);
  CHECK(find(v, "distribution:ks")->evidence["informational"] == true);
  CHECK(contains(v.explanation, "fallback"));
}

TEST_CASE("bitwise: tensor hash equality and exact steps") {
  auto m = base_manifest();
  m.level = ReproLevel::bitwise;
  m.weights = Weights{"model.safetensors", "safetensors", std::string(64, 'a')};
  m.evaluation.steps = StepValues{"loss", {2.30, 2.11, 1.96}};
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.9611;
  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.96};
  in.rebuild.tensor_sha256 = std::string(64, 'a');
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(find(v, "weights:tensor_sha256")->outcome == CheckOutcome::passed);
  CHECK(*find(v, "steps:loss")->tolerance == 0);

  in.rebuild.tensor_sha256 = std::string(64, 'b');
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(find(v, "weights:tensor_sha256")->outcome == CheckOutcome::failed);

  in.rebuild.tensor_sha256 = std::string(64, 'a');
  in.rebuild.steps = std::vector<double>{2.30, 2.11, 1.9600000001};
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(find(v, "steps:loss")->evidence["worst_step"] == 2);
}

TEST_CASE(
    "steps mode: only the steps check, calibrated from seed-run pairs; short runs are findings") {
  auto m = base_manifest();
  m.evaluation.steps = StepValues{"loss", {2.30, 2.11, 1.96, 1.80}};
  m.tolerance->steps_pairs_max_abs = {0.01, 0.012, 0.011};
  VerdictInputs in{m, {}};
  in.rebuild.steps_mode = true;
  in.rebuild.max_steps = 3;
  in.rebuild.steps = std::vector<double>{2.301, 2.112, 1.958};
  auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  REQUIRE(v.checks.size() == 1);
  CHECK(v.checks[0].evidence["steps_compared"] == 3);
  CHECK(v.checks[0].evidence["alpha"] == 0.01);  // the only calibrated check: m = 1
  CHECK(contains(v.checks[0].explanation, "α=0.01"));

  in.rebuild.steps = std::vector<double>{2.301, 2.112};
  v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
  CHECK(contains(v.explanation, "expected 3"));
}

TEST_CASE("rerunnable: checks are reported, not enforced") {
  auto m = base_manifest();
  m.level = ReproLevel::rerunnable;
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.5;
  const auto v = decide_verdict(in);
  CHECK(v.cls == VerdictClass::passed);
  CHECK(find(v, "primary:accuracy")->outcome == CheckOutcome::failed);
  CHECK(contains(v.explanation, "not enforced"));
}

TEST_CASE("a missing primary or a renamed primary is a finding") {
  const auto m = base_manifest();
  VerdictInputs in{m, {}};
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
  CheckResult ok{"input:image",
                 CheckKind::input,
                 CheckOutcome::passed,
                 {},
                 {},
                 {},
                 {},
                 "image resolvable",
                 {}};
  CheckResult moved{"input:dataset",
                    CheckKind::input,
                    CheckOutcome::failed,
                    {},
                    {},
                    {},
                    {},
                    "dataset root hash moved",
                    {}};
  const auto v = verdict_for_input_drift({ok, moved});
  CHECK(v.cls == VerdictClass::failed_input_drift);
  CHECK(contains(v.explanation, "dataset root hash moved"));
  CHECK(v.checks.size() == 2);
  const auto e = verdict_for_error(VerdictClass::error_provision, "docker: no such image");
  CHECK(e.cls == VerdictClass::error_provision);
  CHECK(e.explanation == "docker: no such image");
}

TEST_CASE("verdict JSON round trip") {
  const auto m = base_manifest();
  VerdictInputs in{m, {}};
  in.rebuild.primary = 0.9609;
  const auto v = decide_verdict(in);
  const auto j = to_json(v);
  CHECK(j["class"] == "passed");
  const auto back = verdict_from_json(j);
  REQUIRE(back.has_value());
  CHECK(back->cls == v.cls);
  CHECK(back->explanation == v.explanation);
  REQUIRE(back->checks.size() == v.checks.size());
  CHECK(back->checks[0].name == v.checks[0].name);
  CHECK(back->checks[0].margin == v.checks[0].margin);
  CHECK(back->checks[0].evidence == v.checks[0].evidence);
  CHECK_FALSE(verdict_from_json(nlohmann::json{{"class", "nope"}}).has_value());
  CHECK_FALSE(verdict_from_json(nlohmann::json{{"class", "passed"}, {"checks", {{{"name", 1}}}}})
                  .has_value());
}

TEST_CASE("calibration from seed runs: values per metric, statistics over all pairs") {
  const auto a = scores({0.1, 0.4, 0.7, 0.9}), b = scores({0.2, 0.4, 0.6, 0.9}),
             c = scores({0.1, 0.5, 0.7, 0.8});
  std::vector<SeedRun> runs(3);
  const Predictions* preds[] = {&a, &b, &c};
  for (int i = 0; i < 3; ++i) {
    runs[i].primary = 0.96 + 0.001 * i;
    runs[i].segments["digit=8"]["accuracy"] = 0.93 + 0.001 * i;
    runs[i].steps = std::vector<double>{2.3 + 0.01 * i, 2.1};
    runs[i].predictions = preds[i];
  }
  const auto spec = calibrate_from_runs("accuracy", runs);
  CHECK(spec.seed_runs.at("accuracy").size() == 3);
  CHECK(spec.segment_seed_runs.at("digit=8").at("accuracy").size() == 3);
  CHECK(spec.distribution_pairs.at("ks").size() == 3);
  CHECK(spec.distribution_pairs.at("flip_rate").size() == 3);
  REQUIRE(spec.steps_pairs_max_abs.size() == 3);
  CHECK(spec.steps_pairs_max_abs[1] == doctest::Approx(0.02));
}
