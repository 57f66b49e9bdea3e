// The ranking and confusion parity checks (policies/own_scores.hpp), judged by the verdict engine
// against bands made the way a calibration makes them: generated seed runs, each scored and
// compared with the release by reverify (seed_run_tolerance over reported_form and
// parity_values). A rebuild with seed noise only passes; one whose top-k order moves, or that
// moves one class's records into another while accuracy stays in its band, fails and the
// verdict names the statistic, the classes and the count.

#include <doctest/doctest.h>

#include <random>

#include "policies/bands.hpp"
#include "policies/calibration.hpp"
#include "policies/checks.hpp"
#include "policies/headline.hpp"
#include "policies/verdict.hpp"
#include "tests/support/check_fixture.hpp"
#include "tests/support/predictions_fixture.hpp"
#include "tests/support/text_search.hpp"

using namespace reverify;
using reverify::test::find_check;
using reverify::test::one_d;
using reverify::test::two_d;

using reverify::test::contains;

namespace {

std::vector<std::string> failed(const Verdict& v) {
  std::vector<std::string> names;
  for (const auto& c : v.checks)
    if (c.outcome == CheckOutcome::failed)
      names.push_back(c.name);
  return names;
}

// A model world: `truth` per record and a seed's noise around it; draw(seed) is one training run.
struct World {
  ScoringInputs in;
  std::vector<double> truth;  // per record (ranking: a score; multiclass: the favoured class)
  double noise = 0;
  std::size_t cols = 1;
  std::vector<double> margin;  // multiclass: the favoured class's lead per record

  // Ranking: one score per record; multiclass: a row of class scores.
  Predictions draw(std::uint64_t seed) const {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0, noise);
    Predictions p;
    p.rows = in.records();
    p.cols = cols;
    p.two_d = cols > 1;
    for (std::size_t i = 0; i < p.rows; ++i) {
      if (cols == 1) {
        p.values.push_back(truth[i] + normal(rng));
        continue;
      }
      for (std::size_t c = 0; c < cols; ++c)
        p.values.push_back((c == static_cast<std::size_t>(truth[i]) ? margin[i] : 0.0) +
                           normal(rng));
    }
    return p;
  }
};

Manifest manifest_for(const World& world, const std::string& primary, const Predictions& release,
                      const std::vector<Predictions>& seed_runs) {
  Manifest m;
  m.model = "m";
  m.version = "1";
  m.owner = "o";
  m.evaluation.scoring = ScoringSpec{};
  const auto release_scores = scoring::score(world.in, release).value();
  m.evaluation.primary = {primary, *release_scores.overall.find(primary)->value, true,
                          std::nullopt};
  std::vector<SeedRun> runs;
  for (const auto& p : seed_runs) {
    const auto form = reported_form(scoring::score(world.in, p).value(), primary);
    SeedRun run;
    run.primary = form.primary;
    run.segments = form.segments;
    run.predictions = &p;
    run.parity = parity_values(scoring::parity(world.in, release, p).value());
    runs.push_back(std::move(run));
  }
  m.tolerance = seed_run_tolerance(primary, runs, &release);
  return m;
}

Verdict judge(const World& world, const Manifest& m, const Predictions& release,
              const Predictions& rebuilt) {
  OwnScores own;
  own.release = scoring::score(world.in, release).value();
  own.rebuild = scoring::score(world.in, rebuilt).value();
  own.parity = scoring::parity(world.in, release, rebuilt).value();
  VerdictInputs inputs{m, {}, &release, nullptr, {}};
  inputs.rebuild.primary_name = m.evaluation.primary.name;
  inputs.rebuild.primary = own.rebuild.overall.find(m.evaluation.primary.name)->value;
  inputs.rebuild.predictions = &rebuilt;
  inputs.scores = &own;
  return decide_verdict(inputs);
}

// 80 queries of 8 documents, k = 3, the top 3 relevant; the documents' true scores are 0.7 to 1.3
// apart, so a seed's noise (sd 0.15) reorders a top 3 rarely and the rest of a query now and
// then.
World ranking_world() {
  ScoringSpec spec;
  spec.task = ScoringTask::ranking;
  spec.k = 3;
  spec.metrics = {ScoringMetric::ndcg_at_k};
  World w{scoring_settings(spec), {}, 0.15, 1, {}};
  std::vector<std::string> queries;
  for (int q = 0; q < 80; ++q)
    for (int d = 0; d < 8; ++d) {
      queries.push_back("q" + std::to_string(q));
      w.in.labels.push_back(d < 3 ? 1 : 0);  // the top 3 equally relevant
      w.truth.push_back(8.0 - d + 0.3 * (d % 2));
    }
  w.in.queries = intern_keys(queries);
  return w;
}

// The release's scores with the first and second document of `queries` queries swapped: the same
// top-3 set, in another order.
Predictions top_two_swapped(Predictions p, int queries) {
  for (int q = 0; q < queries; ++q) {
    const std::size_t first = static_cast<std::size_t>(q) * 8;
    std::swap(p.values[first], p.values[first + 1]);
  }
  return p;
}

// 10 classes, 60 records each. Classes 0 and 5 are hard (a lead of 0.1 against a seed's noise of
// sd 0.2: their records change class from seed to seed, so accuracy has a wide band); the others
// are easy (a lead of 1.5: a seed almost never moves one).
World multiclass_world() {
  ScoringSpec spec;
  spec.task = ScoringTask::multiclass;
  spec.classes = 10;
  spec.metrics = {ScoringMetric::accuracy};
  World w{scoring_settings(spec), {}, 0.2, 10, {}};
  for (int i = 0; i < 600; ++i) {
    w.in.labels.push_back(i % 10);
    w.truth.push_back(i % 10);
    w.margin.push_back(i % 5 == 0 ? 0.1 : 1.5);
  }
  return w;
}

// The release's rows with `count` records of true class `from` now favouring class `to`.
Predictions moved(Predictions p, const World& w, std::size_t from, std::size_t to, int count) {
  for (std::size_t i = 0; i < p.rows && count > 0; ++i) {
    if (w.in.labels[i] != static_cast<double>(from))
      continue;
    p.values[i * 10 + to] = p.values[i * 10 + from] + 0.5;
    --count;
  }
  return p;
}

std::vector<Predictions> seed_runs(const World& w, std::uint64_t first, int n) {
  std::vector<Predictions> runs;
  for (int i = 0; i < n; ++i)
    runs.push_back(w.draw(first + static_cast<std::uint64_t>(i)));
  return runs;
}

}  // namespace

TEST_CASE("ranking parity: seed noise passes, a top-k order that moves fails and is named") {
  const World w = ranking_world();
  const Predictions release = w.draw(1);
  const auto seeds = seed_runs(w, 100, 20);
  const Manifest m = manifest_for(w, "ndcg@k", release, seeds);
  for (const char* name : {"parity:top-k-set", "parity:top-k-order", "parity:tau-distance"})
    CHECK(m.tolerance->parity_seed_runs.at(name).size() == 20);

  SUBCASE("fresh seeds pass, with every ranking check banded") {
    for (std::uint64_t seed : {500, 501, 502, 503, 504}) {
      const Verdict v = judge(w, m, release, w.draw(seed));
      CAPTURE(seed);
      CHECK(failed(v).empty());
      CHECK(v.cls == VerdictClass::passed);
      for (const char* name : {"parity:top-k-set", "parity:top-k-order", "parity:tau-distance"}) {
        const auto* c = find_check(v, name);
        REQUIRE(c);
        CHECK(c->kind == CheckKind::parity);
        CHECK(c->outcome == CheckOutcome::passed);
        REQUIRE(c->band);
        CHECK(c->seed_runs == 20u);
        REQUIRE(c->power);
      }
    }
  }
  SUBCASE("the top two swapped in 12 of 80 queries: the order check fails, the set check not") {
    const Predictions rebuilt = top_two_swapped(release, 12);
    const Verdict v = judge(w, m, release, rebuilt);
    const auto* order = find_check(v, "parity:top-k-order");
    REQUIRE(order);
    CHECK(order->outcome == CheckOutcome::failed);
    CHECK(contains(order->explanation,
                   "12 of the eval set's 80 queries have another top-3 order than the release's"));
    CHECK(contains(order->explanation, "the seed runs' own changes allow"));
    CHECK(order->evidence["allowed"].get<int>() < 12);
    CHECK(find_check(v, "parity:top-k-set")->outcome == CheckOutcome::passed);
    // the ranking metric cannot see it: the top 3 are equally relevant, ndcg@3 does not move
    const auto* ndcg = find_check(v, "primary:ndcg@k");
    REQUIRE(ndcg);
    CHECK(ndcg->outcome != CheckOutcome::failed);
    CHECK(*ndcg->observed == doctest::Approx(1.0));
    CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
    CHECK(contains(v.explanation, "parity:top-k-order"));
  }
  SUBCASE("the whole order reversed in many queries: the tau distance fails") {
    Predictions rebuilt = release;
    for (std::size_t q = 0; q < 40; ++q)
      std::reverse(rebuilt.values.begin() + static_cast<std::ptrdiff_t>(q * 8 + 3),
                   rebuilt.values.begin() + static_cast<std::ptrdiff_t>(q * 8 + 8));
    const Verdict v = judge(w, m, release, rebuilt);
    const auto* tau = find_check(v, "parity:tau-distance");
    REQUIRE(tau);
    CAPTURE(tau->explanation);
    CHECK(tau->outcome == CheckOutcome::failed);
    CHECK(contains(tau->explanation, "the mean Kendall tau-b against the release's scores"));
    CHECK(contains(tau->explanation, "the seed runs' own allow 1 - tau <= "));
    // below the top 3 nothing a top-k metric sees moved
    CHECK(find_check(v, "parity:top-k-set")->outcome == CheckOutcome::passed);
    CHECK(find_check(v, "parity:top-k-order")->outcome == CheckOutcome::passed);
  }
}

TEST_CASE("a ranking metric named with its cut-off written out is reverify's own, k checked") {
  // Graded relevance and more noise than ranking_world's: seeds reorder top 3s, NDCG varies.
  World w = ranking_world();
  w.noise = 0.5;
  std::vector<std::string> markets;
  for (std::size_t i = 0; i < w.in.records(); ++i) {
    markets.push_back(i < 320 ? "us" : "de");
    w.in.labels[i] = static_cast<double>(3 - std::min<std::size_t>(i % 8, 3));
  }
  w.in.segment_keys.push_back(SegmentKey{"market", intern_keys(markets)});
  const Predictions release = w.draw(1);
  // The job names its metric "ndcg@3" (k = 3), in the primary and in its segments.
  Manifest m = manifest_for(w, "ndcg@3", release, seed_runs(w, 100, 20));
  m.evaluation.segments["market=us"]["ndcg@3"] = m.evaluation.primary.value;
  m.evaluation.segments["market=de"]["ndcg@3"] = m.evaluation.primary.value;
  CHECK(m.tolerance->seed_runs.at("ndcg@3").size() == 20);
  CHECK(m.tolerance->segment_seed_runs.at("market=us").at("ndcg@k").size() == 20);
  const Predictions rebuilt = w.draw(500);
  const Verdict v = judge(w, m, release, rebuilt);
  CHECK(v.cls == VerdictClass::passed);
  // Scored and banded by reverify: the primary, each segment (one check each, in scoring's
  // spelling, with its seed runs), and the job's figure cross-checked.
  const auto* primary = find_check(v, "primary:ndcg@3");
  REQUIRE(primary);
  CHECK(primary->outcome == CheckOutcome::passed);
  CHECK(primary->seed_runs == 20u);
  for (const char* name : {"segment:market=us:ndcg@k", "segment:market=de:ndcg@k"}) {
    const auto* segment = find_check(v, name);
    REQUIRE_MESSAGE(segment, name);
    CAPTURE(segment->explanation);
    CHECK(segment->outcome == CheckOutcome::passed);
    CHECK(segment->seed_runs == 20u);
  }
  CHECK_FALSE(find_check(v, "segment:market=us:ndcg@3"));
  const auto* agrees = find_check(v, "job:metric-agrees");
  REQUIRE(agrees);
  CHECK(agrees->outcome == CheckOutcome::passed);
  // An evaluation code reporting 0.01 too much is caught, not read as an improvement.
  OwnScores own;
  own.release = scoring::score(w.in, release).value();
  own.rebuild = scoring::score(w.in, rebuilt).value();
  VerdictInputs inputs{m, {}, &release, nullptr, {}};
  inputs.rebuild.primary_name = "ndcg@3";
  inputs.rebuild.primary = *own.rebuild.overall.find("ndcg@3")->value + 0.01;
  inputs.rebuild.predictions = &rebuilt;
  inputs.scores = &own;
  const Verdict inflated = decide_verdict(inputs);
  REQUIRE(find_check(inflated, "job:metric-agrees"));
  CHECK(find_check(inflated, "job:metric-agrees")->outcome == CheckOutcome::failed);
  CHECK(find_check(inflated, "primary:ndcg@3")->outcome == CheckOutcome::passed);
  // Another cut-off than the spec's is not reverify's metric: not found under that name.
  CHECK_FALSE(own.release.overall.find("ndcg@5"));
  CHECK(own.release.overall.find("ndcg@k") == own.release.overall.find("ndcg@3"));
  // Its band counts each seed run's distance from the median in fractional steps of 1/queries:
  // a graded NDCG moves by slivers of a step (bands.hpp), and whole steps would be wider.
  MetricBandSpec spec;
  spec.alpha = primary->evidence.at("alpha").get<double>();
  spec.step = own.release.overall.find("ndcg@3")->step;
  spec.fractional_steps = true;
  const auto& runs = m.tolerance->seed_runs.at("ndcg@3");
  const MetricBand fractional = metric_band(runs, spec).band.value();
  CHECK(primary->band->lower.value() == doctest::Approx(fractional.lower).epsilon(1e-12));
  CHECK(primary->band->upper == doctest::Approx(fractional.upper).epsilon(1e-12));
  spec.fractional_steps = false;
  CHECK(metric_band(runs, spec).band->lower < fractional.lower);
}

TEST_CASE("a ranking verdict reads in queries and k, and leaves out the flip rate in one line") {
  // ranking_world with two markets of 40 queries each, and seeds noisy enough to reorder the
  // rest of a query now and then (so that the top-k order, not the tau distance, fails worst);
  // the swaps all fall in market=us.
  World w = ranking_world();
  w.noise = 0.22;
  std::vector<std::string> markets;
  for (int q = 0; q < 80; ++q)
    markets.insert(markets.end(), 8, q < 40 ? "us" : "de");
  w.in.segment_keys.push_back(SegmentKey{"market", intern_keys(markets)});
  const Predictions release = w.draw(1);
  Manifest m = manifest_for(w, "ndcg@k", release, seed_runs(w, 100, 20));
  m.evaluation.scoring->task = ScoringTask::ranking;
  m.evaluation.scoring->k = 3;
  const Verdict v = judge(w, m, release, top_two_swapped(release, 20));
  REQUIRE(v.cls == VerdictClass::failed_out_of_tolerance);
  const VerdictSummary summary = verdict_summary(v);
  CAPTURE(summary.headline);
  CAPTURE(v.explanation);

  SUBCASE("the headline counts queries of its scope and names k, never records") {
    CHECK(summary.headline.rfind("20 of 40 queries of market=us have another top-3 order than the "
                                 "release's (its share is 0.5, above its bound ≤ ",
                                 0) == 0);
    CHECK_FALSE(contains(summary.headline, "records"));
    CHECK_FALSE(contains(summary.headline, "decision"));
    CHECK(contains(summary.headline, "Also failed: parity:top-k-order"));
    CHECK(contains(find_check(v, "parity:top-k-order:segment:market=us")->explanation,
                   "20 of segment market=us's 40 queries have another top-3 order"));
  }
  SUBCASE("the flip rate is no check, and one line says why, with no threshold to declare") {
    CHECK(find_check(v, "distribution:flip_rate") == nullptr);
    CHECK(summary.counts.not_judged == 0);
    CHECK(summary.counts.notes == 0);
    const auto line = v.explanation.find(kFlipRateLeftOut);
    REQUIRE(line != std::string::npos);
    CHECK(v.explanation.find(kFlipRateLeftOut, line + 1) == std::string::npos);
    CHECK_FALSE(contains(v.explanation, "threshold"));
    CHECK(v.coverage.complete());
    // the other distribution statistics over the ranking scores are still judged
    REQUIRE(find_check(v, "distribution:ks"));
    CHECK(find_check(v, "distribution:ks")->decides());
  }
}

TEST_CASE("a ranking tau-distance failure says it looks past the top k") {
  const World w = ranking_world();
  const Predictions release = w.draw(1);
  const Manifest m = manifest_for(w, "ndcg@k", release, seed_runs(w, 100, 20));
  Predictions rebuilt = release;
  for (std::size_t q = 0; q < 40; ++q)
    std::reverse(rebuilt.values.begin() + static_cast<std::ptrdiff_t>(q * 8 + 3),
                 rebuilt.values.begin() + static_cast<std::ptrdiff_t>(q * 8 + 8));
  const std::string headline = verdict_summary(judge(w, m, release, rebuilt)).headline;
  CAPTURE(headline);
  CHECK(contains(headline,
                 "The queries' whole rankings moved against the release (not only their "
                 "top 3): 1 - the mean Kendall tau-b over the 80 queries of the eval "
                 "set is "));
}

TEST_CASE("ranking parity without recorded seed values informs and never decides") {
  const World w = ranking_world();
  const Predictions release = w.draw(1);
  Manifest m = manifest_for(w, "ndcg@k", release, seed_runs(w, 100, 5));
  m.tolerance->parity_seed_runs.clear();  // a calibration from before the ranking checks
  const Verdict v = judge(w, m, release, top_two_swapped(release, 12));
  const auto* order = find_check(v, "parity:top-k-order");
  REQUIRE(order);
  CHECK(order->outcome == CheckOutcome::uncalibrated);
  CHECK(order->informational);
  CHECK(contains(order->explanation, "uncalibrated"));
  CHECK(v.cls != VerdictClass::uncalibrated);
}

TEST_CASE("confusion shift: a class moved into another fails naming the classes and the count") {
  const World w = multiclass_world();
  const Predictions release = w.draw(1);
  const auto seeds = seed_runs(w, 100, 20);
  const Manifest m = manifest_for(w, "accuracy", release, seeds);
  CHECK(m.tolerance->parity_seed_runs.at("parity:class=3").size() == 20);
  CHECK(m.tolerance->parity_seed_runs.at("parity:argmax").size() == 20);

  SUBCASE("fresh seeds pass") {
    for (std::uint64_t seed : {500, 501, 502, 503, 504}) {
      const Verdict v = judge(w, m, release, w.draw(seed));
      CAPTURE(seed);
      CHECK(failed(v).empty());
      CHECK(v.cls == VerdictClass::passed);
      const auto* c = find_check(v, "parity:class=3");
      REQUIRE(c);
      CHECK(c->outcome == CheckOutcome::passed);
      REQUIRE(c->band);
    }
  }
  SUBCASE("8 of class 3's 60 records moved to class 8, accuracy inside its band") {
    const Predictions rebuilt = moved(release, w, 3, 8, 8);
    const Verdict v = judge(w, m, release, rebuilt);
    const auto* primary = find_check(v, "primary:accuracy");
    REQUIRE(primary);
    CHECK(primary->outcome == CheckOutcome::passed);  // 8 of 600 is inside the seed spread
    const auto* three = find_check(v, "parity:class=3");
    REQUIRE(three);
    CAPTURE(three->explanation);
    CAPTURE(primary->explanation);
    CHECK(three->outcome == CheckOutcome::failed);
    CHECK(contains(three->explanation,
                   "8 of class 3's 60 records changed predicted class against the release: 8 to "
                   "class 8 (8 became wrong, 0 became right)"));
    CHECK(three->evidence["changed"] == 8);
    CHECK(three->evidence["of"] == 60);
    for (int c : {0, 1, 2, 4, 5, 6, 7, 8, 9})
      CHECK(find_check(v, "parity:class=" + std::to_string(c))->outcome == CheckOutcome::passed);
    CHECK(v.cls == VerdictClass::failed_out_of_tolerance);
    CHECK(contains(v.explanation, "parity:class=3"));
  }
}

TEST_CASE("binary confusion shift: per true class at each threshold") {
  ScoringSpec spec;
  spec.task = ScoringTask::binary;
  spec.metrics = {ScoringMetric::accuracy};
  ScoringInputs in = scoring_settings(spec);
  in.labels = {1, 1, 1, 0, 0};
  const auto p =
      scoring::parity(in, one_d({0.9, 0.8, 0.3, 0.1, 0.6}), one_d({0.4, 0.8, 0.7, 0.1, 0.2}))
          .value();
  const auto stats = parity_statistics(p);
  auto stat = [&](const std::string& name) -> const ParityStatistic& {
    auto it = std::find_if(stats.begin(), stats.end(),
                           [&](const ParityStatistic& s) { return s.name == name; });
    REQUIRE(it != stats.end());
    return *it;
  };
  // positives: record 0 left class 1 (became wrong), record 2 entered it (became right)
  const auto& positives = stat("parity:threshold=0.5:class=1");
  CHECK(*positives.count == 2);
  CHECK(positives.of == 3);
  CHECK(positives.what ==
        "2 of class 1's 3 records changed predicted class against the release at threshold 0.5: "
        "1 to class 0, 1 to class 1 (1 became wrong, 1 became right)");
  const auto& negatives = stat("parity:threshold=0.5:class=0");
  CHECK(*negatives.count == 1);
  CHECK(negatives.of == 2);
  CHECK(stat("parity:threshold=0.5").value == doctest::Approx(3.0 / 5));
  const auto& shift = p.overall.crossings.at(0).classes;
  CHECK(shift.at(1).members == 3);
  CHECK(shift.at(1).moved_to == std::map<std::size_t, std::size_t>{{0, 1}, {1, 1}});
  CHECK(*p.overall.crossings.at(0).became_wrong == 1);
  CHECK(*p.overall.crossings.at(0).became_correct == 2);
}

TEST_CASE("parity statistics: a class without records and a scope without queries are left out") {
  ScoringSpec spec;
  spec.task = ScoringTask::multiclass;
  spec.classes = 3;
  spec.metrics = {ScoringMetric::accuracy};
  ScoringInputs in = scoring_settings(spec);
  in.labels = {0, 0, 1};  // no record of class 2
  const auto stats = parity_statistics(scoring::parity(in, two_d(3, {1, 0, 0, 1, 0, 0, 0, 1, 0}),
                                                       two_d(3, {0, 0, 1, 1, 0, 0, 0, 1, 0}))
                                           .value());
  std::vector<std::string> names;
  for (const auto& s : stats)
    names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"parity:argmax", "parity:class=0", "parity:class=1"});
  CHECK(stats[0].what ==
        "1 of the eval set's 3 records changed predicted class against the release (1 became "
        "wrong, 0 became right)");
  CHECK(stats[1].what ==
        "1 of class 0's 2 records changed predicted class against the release: 1 to class 2 (1 "
        "became wrong, 0 became right)");
  CHECK(stats[2].what == "0 of class 1's 1 records changed predicted class against the release");
}

TEST_CASE("ranking parity statistics per segment: names, counts and the tau resolution") {
  ScoringSpec spec;
  spec.task = ScoringTask::ranking;
  spec.k = 1;
  ScoringInputs in = scoring_settings(spec);
  in.labels = {1, 0, 1, 0, 0, 1, 0};
  in.queries = intern_keys({"a", "a", "b", "b", "b", "c", "c"});
  in.segment_keys.push_back(
      SegmentKey{"lang", intern_keys({"de", "de", "en", "en", "en", "en", "en"})});
  // a keeps its order; b's top record changes; c's order reverses
  const auto p = scoring::parity(in, one_d({0.9, 0.1, 0.9, 0.5, 0.1, 0.8, 0.2}),
                                 one_d({0.9, 0.1, 0.5, 0.9, 0.1, 0.2, 0.8}))
                     .value();
  std::map<std::string, ParityStatistic> stats;
  for (auto& s : parity_statistics(p))
    stats[s.name] = s;
  REQUIRE(stats.count("parity:top-k-order:segment:lang=en"));
  const auto& en = stats.at("parity:top-k-set:segment:lang=en");
  CHECK(*en.count == 2);
  CHECK(en.of == 2);
  CHECK(en.what == "2 of segment lang=en's 2 queries have another top-1 set than the release's");
  CHECK(*stats.at("parity:top-k-order:segment:lang=de").count == 0);
  CHECK(*stats.at("parity:top-k-order").count == 2);
  CHECK(stats.at("parity:top-k-order").of == 3);
  const auto& tau = stats.at("parity:tau-distance");
  CHECK_FALSE(tau.count.has_value());
  // taus: a 1, b 1/3 (one of three pairs discordant), c -1: mean 1/9
  CHECK(tau.value == doctest::Approx(1 - 1.0 / 9));
  CHECK(tau.of == 3);
  CHECK(tau.resolution == doctest::Approx(4.0 / (3 * 2) / 3));  // one pair of the largest query
}

TEST_CASE("a segment keyed by the label is judged by its class's check, not twice") {
  ScoringSpec spec;
  spec.task = ScoringTask::multiclass;
  spec.classes = 2;
  ScoringInputs in = scoring_settings(spec);
  in.labels = {0, 0, 1, 1};
  in.segment_keys.push_back(SegmentKey{"digit", intern_keys({"0", "0", "1", "1"})});
  in.segment_keys.push_back(SegmentKey{"half", intern_keys({"a", "b", "a", "b"})});
  const auto p =
      scoring::parity(in, two_d(2, {1, 0, 1, 0, 0, 1, 0, 1}), two_d(2, {0, 1, 1, 0, 0, 1, 0, 1}));
  std::vector<std::string> names;
  for (const auto& s : parity_statistics(p.value()))
    names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"parity:argmax", "parity:class=0", "parity:class=1",
                                          "parity:argmax:segment:half=a",
                                          "parity:argmax:segment:half=b"});
}
