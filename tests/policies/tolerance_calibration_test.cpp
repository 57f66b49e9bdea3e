#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "policies/calibration.hpp"
#include "policies/number_text.hpp"
#include "policies/power.hpp"
#include "tests/support/check_fixture.hpp"
#include "tests/support/predictions_fixture.hpp"

using namespace reverify;
using reverify::test::one_d;

namespace {

Manifest manifest_with(const ToleranceSpec& tolerance) {
  Manifest m;
  m.model = "m";
  m.version = "1";
  m.evaluation.primary = {"accuracy", 0.95, true, 400};
  m.evaluation.segments["a"]["accuracy"] = 0.9;
  m.evaluation.segment_examples["a"] = 40;
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  m.tolerance = tolerance;
  return m;
}

}  // namespace

TEST_CASE("seed runs -> values per metric, statistics against the release per run") {
  const auto release = one_d({0.1, 0.4, 0.7, 0.9});
  const auto a = one_d({0.2, 0.4, 0.6, 0.9}), b = one_d({0.1, 0.5, 0.7, 0.8});
  std::vector<SeedRun> runs(2);
  runs[0].primary = 0.96;
  runs[0].segments["digit=8"]["accuracy"] = 0.93;
  runs[0].predictions = &a;
  runs[1].primary = 0.97;
  runs[1].segments["digit=8"]["accuracy"] = 0.94;
  runs[1].predictions = &b;
  const auto spec = seed_run_tolerance("accuracy", runs, &release);
  CHECK(spec.seed_runs.at("accuracy") == std::vector<double>{0.96, 0.97});
  CHECK(spec.segment_seed_runs.at("digit=8").at("accuracy").size() == 2);
  REQUIRE(spec.distribution_seed_runs.at("max_abs_diff").size() == 2);
  CHECK(spec.distribution_seed_runs.at("max_abs_diff")[0] == doctest::Approx(0.1));
  CHECK(spec.distribution_seed_runs.at("flip_rate")[1] == 0.25);  // 0.4 -> 0.5 crosses 0.5
  // Without a release to compare with, no distribution values.
  CHECK(seed_run_tolerance("accuracy", runs, nullptr).distribution_seed_runs.empty());
}

TEST_CASE("same-seed reruns keep their step curves; appending extends every series") {
  std::vector<SeedRun> runs(2);
  runs[0].steps = std::vector<double>{2.3, 2.1};
  runs[1].steps = std::vector<double>{2.3, 2.1};
  const auto same = same_seed_tolerance(runs);
  CHECK(same.steps_same_seed_runs.size() == 2);

  ToleranceSpec base;
  base.seed_runs["accuracy"] = {0.9, 0.91};
  base.seed_overrides = {1, 2};
  ToleranceSpec more;
  more.seed_runs["accuracy"] = {0.92};
  more.seed_overrides = {3};
  more.detect["accuracy"] = 0.02;
  const auto all = appended(base, more);
  CHECK(all.seed_runs.at("accuracy") == std::vector<double>{0.9, 0.91, 0.92});
  CHECK(all.seed_overrides == std::vector<std::int64_t>{1, 2, 3});
  CHECK(all.detect.at("accuracy") == 0.02);
  CHECK(seed_run_count(all, "accuracy") == 3);
}

TEST_CASE("leave-one-out: each seed run judged against the others by decide_verdict") {
  ToleranceSpec t;
  for (int c : {380, 381, 379, 380, 382, 378, 380, 381})
    t.seed_runs["accuracy"].push_back(c / 400.0);
  for (int c : {36, 36, 37, 36, 35, 36, 36, 37})
    t.segment_seed_runs["a"]["accuracy"].push_back(c / 40.0);
  double scale = 1;
  for (const char* s : {"ks", "psi", "wasserstein", "max_abs_diff", "mean_abs_diff", "flip_rate"}) {
    t.distribution_seed_runs[s] = {0.02, 0.03, 0.025, 0.021, 0.031, 0.022, 0.027, 0.024};
    for (double& v : t.distribution_seed_runs[s])
      v *= scale;
    scale *= 1.1;
  }
  const auto m = manifest_with(t);
  ReleaseShape shape;
  shape.rows = shape.scores = 400;
  auto loo = leave_one_out(m, t, VerdictPolicy{}, shape);
  REQUIRE(loo.runs.size() == 8);
  CHECK(loo.paged == 0);
  for (const auto& run : loo.runs) {
    CHECK(run.verdict.cls == VerdictClass::passed);
    // The held-out run is judged with 7 others.
    CHECK(run.verdict.checks[0].seed_runs == 7u);
  }
  // An outlier among the seed runs pages when it is held out.
  t.seed_runs["accuracy"][3] = 300 / 400.0;
  loo = leave_one_out(manifest_with(t), t, VerdictPolicy{}, shape);
  CHECK(loo.paged >= 1);
  CHECK(is_failure(loo.runs[3].verdict.cls));
}

TEST_CASE("leave-one-out judges the metrics a verification judges, never an extra segment") {
  // A calibration made with a scoring spec records every scored metric of a segment; the
  // manifest records accuracy alone, which is all a rebuild's job reports. Held out, a run is
  // judged on accuracy only: the other metrics are no "extra segment" (which paged every run).
  ToleranceSpec t;
  for (int c : {380, 381, 379, 380, 382, 378, 380, 381, 379, 380})
    t.seed_runs["accuracy"].push_back(c / 400.0);
  for (int c : {36, 36, 37, 36, 35, 36, 36, 37, 36, 36}) {
    t.segment_seed_runs["a"]["accuracy"].push_back(c / 40.0);
    t.segment_seed_runs["a"]["brier"].push_back(0.1 + c / 4000.0);
    t.segment_seed_runs["a"]["f1"].push_back(c / 41.0);
  }
  const auto loo = leave_one_out(manifest_with(t), t, VerdictPolicy{}, ReleaseShape{});
  REQUIRE(loo.runs.size() == 10);
  CHECK(loo.paged == 0);
  for (const auto& run : loo.runs) {
    CHECK(reverify::test::find_check(run.verdict, "segment:a:accuracy"));
    CHECK_FALSE(reverify::test::find_check(run.verdict, "segment:a:brier"));
    CHECK_FALSE(reverify::test::find_check(run.verdict, "segment:a:f1"));
  }
  CHECK_FALSE(leave_one_out_excess(loo, 0.01).has_value());
}

TEST_CASE("a band narrowed by hand: leave-one-out warns, names it, and its floor clears it") {
  // 40 honest seed runs of a proportion over 400 page within what alpha allows. Edited by hand
  // to 37 runs of exactly 380/400 and 3 of 390/400 (a spread written far smaller than the runs'
  // own), the 3 page when held out: more than 40 honest runs would page 19 times in 20.
  const auto without_extras = [](const ToleranceSpec& t) {
    auto m = manifest_with(t);
    m.evaluation.segments.clear();
    m.evaluation.predictions.reset();
    return m;
  };
  ToleranceSpec t;
  const int counts[] = {380, 384, 376, 381, 379, 386, 374, 380, 383, 377, 380, 382, 378, 385,
                        375, 380, 381, 379, 384, 376, 380, 383, 377, 386, 374, 380, 382, 378,
                        381, 379, 380, 385, 375, 383, 377, 380, 382, 378, 386, 374};
  for (int c : counts)
    t.seed_runs["accuracy"].push_back(c / 400.0);
  const auto honest = leave_one_out(without_extras(t), t, VerdictPolicy{}, ReleaseShape{});
  CHECK_FALSE(leave_one_out_excess(honest, 0.01).has_value());

  ToleranceSpec narrowed = t;
  auto& values = narrowed.seed_runs["accuracy"];
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = (i == 5 || i == 18 || i == 31 ? 390 : 380) / 400.0;
  const auto loo =
      leave_one_out(without_extras(narrowed), narrowed, VerdictPolicy{}, ReleaseShape{});
  CHECK(loo.paged == 3);
  const auto excess = leave_one_out_excess(loo, 0.01);
  REQUIRE(excess.has_value());
  REQUIRE(excess->blamed.size() == 1);
  CHECK(excess->blamed[0].check == "primary:accuracy");
  CHECK(excess->blamed[0].runs == 3);
  REQUIRE(excess->blamed[0].floor.has_value());
  const std::string warning = excess_warning(*excess, 0.01, "m@1", "");
  CHECK(warning.find("to blame: primary:accuracy (3 runs)") != std::string::npos);
  CHECK(warning.find("primary:accuracy=" + number_text(*excess->blamed[0].floor)) !=
        std::string::npos);  // the floor to set

  // The action it names clears it: that floor holds every held-out run.
  narrowed.floor["primary:accuracy"] = *excess->blamed[0].floor;
  const auto again =
      leave_one_out(without_extras(narrowed), narrowed, VerdictPolicy{}, ReleaseShape{});
  CHECK(again.paged == 0);
  CHECK_FALSE(leave_one_out_excess(again, 0.01).has_value());
}

TEST_CASE("leave-one-out judges the held-out run's recorded parity values") {
  // 12 seed runs whose accuracy is steady; one of them moved 30 of segment group=a's 100
  // records across the threshold, where the others moved at most 2.
  ToleranceSpec t;
  for (int c : {380, 381, 379, 380, 382, 378, 380, 381, 379, 380, 381, 380})
    t.seed_runs["accuracy"].push_back(c / 400.0);
  t.parity_seed_runs["parity:threshold=0.5:segment:group=a"] = {0.01, 0.02, 0.01, 0,    0.02, 0.01,
                                                                0.30, 0.01, 0,    0.02, 0.01, 0.01};
  t.parity_seed_runs["parity:threshold=0.5"] = {0.01, 0.01, 0.01,  0.005, 0.01, 0.01,
                                                0.02, 0.01, 0.005, 0.01,  0.01, 0.01};
  auto m = manifest_with(t);
  m.evaluation.segments.clear();
  ParityStatistic group_a;  // the release's shape: its scopes' sizes
  group_a.name = "parity:threshold=0.5:segment:group=a";
  group_a.count = 0;
  group_a.of = 100;
  ParityStatistic overall = group_a;
  overall.name = "parity:threshold=0.5";
  overall.of = 200;
  ReleaseShape shape;
  shape.parity = {overall, group_a};

  // Without the shape (no scoring spec) the parity checks are not judged: nothing pages.
  CHECK(leave_one_out(m, t, VerdictPolicy{}, ReleaseShape{}).paged == 0);

  const auto loo = leave_one_out(m, t, VerdictPolicy{}, shape);
  REQUIRE(loo.runs.size() == 12);
  CHECK(loo.paged == 1);
  const Verdict& held = loo.runs[6].verdict;
  CHECK(held.cls == VerdictClass::failed_out_of_tolerance);  // parity fails as out-of-tolerance
  const auto* a = reverify::test::find_check(held, "parity:threshold=0.5:segment:group=a");
  REQUIRE(a);
  CHECK(a->outcome == CheckOutcome::failed);
  CHECK(a->evidence["changed"] == 30);
  CHECK(a->evidence["of"] == 100);
  CHECK(a->seed_runs == 11u);
  const auto* whole = reverify::test::find_check(held, "parity:threshold=0.5");
  REQUIRE(whole);
  CHECK(whole->outcome == CheckOutcome::passed);
  for (std::size_t i = 0; i < loo.runs.size(); ++i) {
    if (i != 6)
      CHECK(loo.runs[i].verdict.cls == VerdictClass::passed);
  }
  // One of 12 at α = 0.001 is a warning, and it names the parity check.
  const auto excess = leave_one_out_excess(loo, 0.001);
  REQUIRE(excess.has_value());
  REQUIRE(excess->blamed.size() == 1);
  CHECK(excess->blamed[0].check == "parity:threshold=0.5:segment:group=a");
  CHECK_FALSE(excess->blamed[0].floor.has_value());  // no floor widens a parity band
}

TEST_CASE("describe bands: a parity check's band has its power and takes part in runs_needed") {
  ToleranceSpec t;
  for (int c : {380, 381, 379, 380, 382})
    t.seed_runs["accuracy"].push_back(c / 400.0);
  t.parity_seed_runs["parity:argmax"] = {0.01, 0.02, 0.0125, 0.015, 0.01};
  t.detect["parity:argmax"] = 0.0025;  // one record of 400: no band from 5 runs catches it
  auto m = manifest_with(t);
  m.evaluation.segments.clear();
  ParityStatistic argmax;
  argmax.name = "parity:argmax";
  argmax.count = 0;
  argmax.of = 400;
  ReleaseShape shape;
  shape.parity = {argmax};
  const auto bands = describe_bands(m, t, VerdictPolicy{}, shape);
  const CheckResult* parity = nullptr;
  for (const auto& b : bands)
    if (b.name == "parity:argmax")
      parity = &b;
  REQUIRE(parity);
  REQUIRE(parity->band.has_value());
  REQUIRE(parity->power.has_value());
  CHECK(parity->power->detect == 0.0025);
  CHECK(parity->power->underpowered);
  CHECK(parity->explanation.find("UNDERPOWERED") != std::string::npos);
  const auto power = summarize_power(bands);
  CHECK(std::find(power.underpowered.begin(), power.underpowered.end(), "parity:argmax") !=
        power.underpowered.end());
  // A generous target is met and says so.
  t.detect["parity:argmax"] = 0.2;
  const auto met = describe_bands(manifest_with(t), t, VerdictPolicy{}, shape);
  for (const auto& b : met)
    if (b.name == "parity:argmax")
      CHECK_FALSE(b.power->underpowered);
}

TEST_CASE(
    "leave-one-out paging more than the false-page rate allows is a warning naming the check") {
  // The calibration: 24 seed runs, 2 paged by one segment whose band collapsed.
  LeaveOneOut loo;
  for (std::size_t i = 0; i < 24; ++i) {
    LeaveOneOutRun run{i, {}};
    run.verdict.cls = VerdictClass::passed;
    CheckResult segment;
    segment.name = "segment:radius=low:accuracy";
    segment.outcome = CheckOutcome::passed;
    CheckResult primary;
    primary.name = "primary:accuracy";
    primary.outcome = CheckOutcome::passed;
    if (i == 4 || i == 17) {
      run.verdict.cls = VerdictClass::failed_out_of_tolerance;
      segment.outcome = CheckOutcome::failed;
      ++loo.paged;
    }
    run.verdict.checks = {primary, segment};
    loo.runs.push_back(run);
  }
  const auto excess = leave_one_out_excess(loo, 0.01);
  REQUIRE(excess.has_value());
  CHECK(excess->expected == doctest::Approx(0.24));
  CHECK(excess->tail ==
        doctest::Approx(0.023854431118303702).epsilon(1e-9));  // scipy binom.sf(1, 24, 0.01)
  REQUIRE(excess->blamed.size() == 1);
  CHECK(excess->blamed[0].check == "segment:radius=low:accuracy");
  CHECK(excess->blamed[0].runs == 2);
  const std::string text = excess_text(*excess, 0.01);
  CHECK(text.find("2 of 24 seed runs paged where 0.24 are expected") != std::string::npos);
  CHECK(blamed_text(*excess) == "segment:radius=low:accuracy (2 runs)");
  // The warning printed names the checks and adds what clears it, with a command that runs as
  // printed.
  const std::string warning = excess_warning(*excess, 0.01, "m@1", "--config /etc/r.yaml");
  CHECK(warning.rfind(text + "; to blame: segment:radius=low:accuracy (2 runs). To clear it:", 0) ==
        0);
  CHECK(warning.find("(`reverify calibrate m@1 --seeds 24 --config /etc/r.yaml`)") !=
        std::string::npos);
  // What a calibration keeps (the plan's and the status page's text) leaves the checks to their
  // own column: the page names each once.
  const auto finding = leave_one_out_finding(loo, 0.01);
  const auto kept = finding.warning("m@1", "");
  REQUIRE(kept.has_value());
  CHECK(kept->find("segment:radius=low:accuracy") == std::string::npos);
  CHECK(kept->find("To clear it:") != std::string::npos);
  // Read back, it is the same finding; one stored by an earlier leave-one-out (no "judged_as")
  // is stale and warns of nothing.
  auto stored = to_json(finding);
  CHECK(leave_one_out_finding_from_json(stored)->excess->blamed == finding.excess->blamed);
  stored.erase("judged_as");
  const auto stale = leave_one_out_finding_from_json(stored);
  REQUIRE(stale.has_value());
  CHECK(stale->stale);
  CHECK_FALSE(stale->warning("m@1", "").has_value());

  // One of 24 is what α allows about a fifth of the time (binom.sf(0, 24, 0.01) = 0.214): no
  // warning.
  loo.runs[17].verdict.cls = VerdictClass::passed;
  loo.paged = 1;
  CHECK_FALSE(leave_one_out_excess(loo, 0.01).has_value());
  loo.paged = 0;
  CHECK_FALSE(leave_one_out_excess(loo, 0.01).has_value());
}

TEST_CASE("describe bands: every band and its power, steps included") {
  ToleranceSpec t;
  for (int c : {380, 381, 379, 380, 382})
    t.seed_runs["accuracy"].push_back(c / 400.0);
  t.steps_same_seed_runs = {{2.3, 2.1}, {2.3, 2.1}, {2.3, 2.1}};
  t.detect["accuracy"] = 0.001;
  auto m = manifest_with(t);
  m.evaluation.segments.clear();
  m.evaluation.steps = StepValues{"loss", {2.3, 2.1}};
  const auto bands = describe_bands(m, t, VerdictPolicy{}, ReleaseShape{});
  REQUIRE(bands.size() == 2);
  CHECK(bands[0].name == "primary:accuracy");
  CHECK(bands[0].power->underpowered);
  CHECK(bands[1].name == "steps:loss");
  CHECK(bands[1].band.has_value());
  CHECK(summarize_power(bands).underpowered == std::vector<std::string>{"primary:accuracy"});
}

TEST_CASE("the low end of a measured spread, and a spec with its spread scaled") {
  // sqrt((n - 1) / chi2(n - 1, 0.95)): 5 runs -> 0.649, 40 runs -> 0.845.
  CHECK(spread_lower_limit(5) == doctest::Approx(0.6493).epsilon(1e-3));
  CHECK(spread_lower_limit(40) == doctest::Approx(0.8454).epsilon(1e-3));
  CHECK(spread_lower_limit(40) < spread_lower_limit(200));
  ToleranceSpec spec;
  spec.seed_runs["accuracy"] = {0.90, 0.92, 0.94};
  spec.segment_seed_runs["a"]["accuracy"] = {0.5, 1.0};
  spec.distribution_seed_runs["psi"] = {0.01, 0.04, 0.0};
  spec.steps_same_seed_runs = {{2.3, 2.1}};
  const auto half = with_spread_scaled(spec, 0.5);
  CHECK(half.seed_runs.at("accuracy")[0] == doctest::Approx(0.91));
  CHECK(half.seed_runs.at("accuracy")[2] == doctest::Approx(0.93));
  CHECK(half.segment_seed_runs.at("a").at("accuracy")[1] == doctest::Approx(0.875));
  // Log scale around the geometric mean (0.02): 0.01 -> 0.02 * 0.5^0.5, 0.04 -> 0.02 * 2^0.5;
  // a zero stays 0.
  CHECK(half.distribution_seed_runs.at("psi")[0] == doctest::Approx(0.02 / std::sqrt(2.0)));
  CHECK(half.distribution_seed_runs.at("psi")[1] == doctest::Approx(0.02 * std::sqrt(2.0)));
  CHECK(half.distribution_seed_runs.at("psi")[2] == 0.0);
  CHECK(half.steps_same_seed_runs == spec.steps_same_seed_runs);
}
