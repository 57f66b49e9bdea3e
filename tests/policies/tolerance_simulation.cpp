// docs/design.md's two tolerance properties, measured by simulation (pure, seeded, no clock):
//  1. an honest rebuild (a fresh draw from the distribution the seed runs come from) falls outside
//     a band at most alpha of the time, for every kind of band: continuous metrics (near normal,
//     and skewed: Beta(48, 2)), proportions over k = 20, 100, 1000 examples (p from 0.5 to ~1,
//     including seed runs that all agree; binomial, over- and under-dispersed), and each
//     distribution statistic between simulated score vectors (the release against fresh-seed
//     runs, with and without a run-level factor that makes the statistics skewed);
//  2. the band's stated power: a rebuild shifted by it is caught about 80% of the time (asserted
//     with a floor, detection_floor()).
// n = 3, 5, 10, 20 seed runs. Each row asserts "false-page rate <= alpha + 3 binomial standard
// errors" and prints the rates and detection figures (ctest -V shows them; docs/verdicts.md
// "Tolerance bands" quotes them). A last case simulates whole verifications (primary + 10 segments
// + 6 statistics, the false-page rate split as the verdict does) against the per-verification
// alpha. The parity checks (policies/own_scores.hpp: ranking top-k set and order, tau distance;
// multiclass confusion shift per class and argmax) are measured on simulated rankings and
// classifiers, the release against fresh-seed runs, with reverify's own scoring::parity.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <span>

#include "core/manifest.hpp"
#include "policies/bands.hpp"
#include "policies/checks.hpp"
#include "policies/own_scores.hpp"
#include "policies/scoring.hpp"
#include "policies/stats.hpp"
#include "policies/verdict.hpp"

using namespace reverify;

namespace {

constexpr double kAlpha = 0.01;
constexpr int kNs[] = {3, 5, 10, 20};

using Rng = std::mt19937_64;

double binomial_slack(double p, int trials) {
  return 3 * std::sqrt(p * (1 - p) / trials);
}

struct Rates {
  int trials = 0;
  int pages = 0;
  int not_judged = 0;  // no honest band could be made (never pages)
  int detect_trials = 0;
  int detected = 0;
  double rate() const { return trials ? static_cast<double>(pages) / trials : 0; }
  double detection() const {
    return detect_trials ? static_cast<double>(detected) / detect_trials : -1;
  }
};

// Property 2, as measured: a band claims the shift it catches with 80% probability from a normal
// (t) predictive approximation, which holds to within a few points from 5 seed runs on and is
// optimistic at 3 (coarse proportions: k = 20 at p = 0.5 is caught 68% of the time).
// docs/verdicts.md "Tolerance bands" quotes the measured figures and these floors; the floors
// keep them from sliding.
double detection_floor(int n) {
  return n >= 5 ? 0.70 : 0.65;
}

// Asserts property 2 for one row, when it had detection trials (a band that catches no shift the
// metric can make has none).
void check_power(const Rates& r, int n) {
  if (r.detect_trials < 100)
    return;
  CHECK(r.detection() >= detection_floor(n));
}

// ---- metrics ---------------------------------------------------------------------------------

struct MetricModel {
  std::string name;
  std::function<double(Rng&)> draw;      // one seed run's metric value
  std::optional<std::int64_t> examples;  // k, for proportions
  std::optional<double> step;  // MetricBandSpec::step (reverify's own NDCG: fractional steps)
};

double beta_draw(Rng& rng, double a, double b) {
  const double x = std::gamma_distribution<double>(a, 1)(rng);
  const double y = std::gamma_distribution<double>(b, 1)(rng);
  return x / (x + y);
}

MetricModel normal_metric(double mean, double sd) {
  return {"normal(" + std::to_string(mean).substr(0, 4) + ")",
          [=](Rng& rng) { return std::normal_distribution<double>(mean, sd)(rng); }, std::nullopt,
          std::nullopt};
}

MetricModel beta_metric(double a, double b) {
  return {"beta(" + std::to_string(static_cast<int>(a)) + "," +
              std::to_string(static_cast<int>(b)) + ")",
          [=](Rng& rng) { return beta_draw(rng, a, b); }, std::nullopt, std::nullopt};
}

// A proportion over k examples. dispersion: "binomial"; "over" (p itself varies by seed,
// beta-binomial with 5x the binomial variance); "under" (a fixed set of hard examples flips,
// the rest never do: the spread of real seed runs on a fixed eval set).
MetricModel proportion_metric(std::int64_t k, double p, const std::string& dispersion) {
  std::function<double(Rng&)> draw;
  if (dispersion == "binomial") {
    draw = [=](Rng& rng) {
      return static_cast<double>(std::binomial_distribution<std::int64_t>(k, p)(rng)) /
             static_cast<double>(k);
    };
  } else if (dispersion == "over") {
    const double rho = 4.0 / static_cast<double>(k - 1);  // variance x (1 + (k - 1) rho) = 5x
    const double s = (1 - rho) / rho;
    draw = [=](Rng& rng) {
      const double q = beta_draw(rng, p * s, (1 - p) * s);
      return static_cast<double>(std::binomial_distribution<std::int64_t>(k, q)(rng)) /
             static_cast<double>(k);
    };
  } else if (dispersion == "rare") {
    // Every example but one always scores the same (p k of them right); the one left flips with
    // probability 2%: most seed runs agree to the last digit (the trainer that reported 42/43 in
    // 24 of 24 seed runs).
    const auto right = std::llround(p * static_cast<double>(k - 1));
    draw = [=](Rng& rng) {
      const auto flipped = std::bernoulli_distribution(0.02)(rng) ? 1 : 0;
      return static_cast<double>(right + flipped) / static_cast<double>(k);
    };
  } else {
    // 4 (1 - p) k hard examples each right with probability 3/4; the others always right.
    const auto hard = std::max<std::int64_t>(1, std::llround(4 * (1 - p) * static_cast<double>(k)));
    draw = [=](Rng& rng) {
      const auto right = std::binomial_distribution<std::int64_t>(hard, 0.75)(rng);
      return static_cast<double>(k - hard + right) / static_cast<double>(k);
    };
  }
  char name[64];
  std::snprintf(name, sizeof name, "k=%lld p=%g %s", static_cast<long long>(k), p,
                dispersion.c_str());
  return {name, draw, k, std::nullopt};
}

// A ranking metric as reverify scores it: NDCG@10 (gain = grade, discount 1/log2(rank + 1)), the
// mean over `queries` queries of 20 to 40 documents graded 0-3. A document's score is its grade
// plus N(0, 1) (fixed by the world) plus N(0, noise) per seed run: a query's NDCG changes only
// when a seed swaps two documents of different grades near the top, so most queries never move
// and the others take a few values, and the mean over queries takes clumped values (at noise 0.1
// over 150 queries, a handful of clumps; rare ones that few calibrations see). Each query's
// seed-run values are tabulated once (kQueryDraws seed runs of that query: the world's truth),
// and a seed run of the metric draws every query from its table independently.
double ndcg_at_10(const std::vector<int>& grades, const std::vector<double>& scores) {
  std::vector<std::size_t> order(grades.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t k = std::min<std::size_t>(10, order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<int> ideal = grades;
  std::sort(ideal.rbegin(), ideal.rend());
  double dcg = 0, best = 0;
  for (std::size_t r = 0; r < k; ++r) {
    dcg += grades[order[r]] / std::log2(r + 2.0);
    best += ideal[r] / std::log2(r + 2.0);
  }
  return dcg / best;
}

MetricModel ranking_metric(int queries, double touched, double noise, std::uint64_t seed, bool own,
                           bool binary = false) {
  constexpr int kQueryDraws = 1000;
  Rng rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::discrete_distribution<int> grade({50, 25, 15, 10});
  std::bernoulli_distribution touch(touched);
  double stable = 0;
  std::vector<std::vector<double>> moving;  // per query that moves: its tabulated seed-run values
  for (int q = 0; q < queries; ++q) {
    const int docs = 20 + static_cast<int>(rng() % 21);
    std::vector<int> grades(docs);
    std::vector<double> truth(docs), scores(docs);
    for (int d = 0; d < docs; ++d) {
      grades[d] = d == 0 ? 1 + grade(rng) % 3 : grade(rng);  // at least one relevant document
      if (binary)
        grades[d] = std::min(grades[d], 1);
      truth[d] = grades[d] + z(rng);
    }
    std::vector<double> values(kQueryDraws);
    for (auto& v : values) {
      for (int d = 0; d < docs; ++d)
        scores[d] = truth[d] + (touch(rng) ? noise * z(rng) : 0);
      v = ndcg_at_10(grades, scores) / queries;
    }
    if (std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; }))
      stable += values[0];
    else
      moving.push_back(std::move(values));
  }
  char name[64];
  std::snprintf(name, sizeof name, "ndcg@10 q=%d moved=%g%s", queries, touched,
                binary ? " binary"
                : own  ? ""
                       : " job's figure");
  auto draw = [stable, moving](Rng& r) {
    double x = stable;
    for (const auto& values : moving)
      x += values[r() % values.size()];
    return x;
  };
  return {name, draw, std::nullopt, own ? std::optional<double>(1.0 / queries) : std::nullopt};
}

// A regression error metric without a count: RMSE over `records` records whose residuals are
// heavy-tailed (t with 3 degrees of freedom, fixed by the world). `trail`: each seed run shrinks
// the residuals by a factor that is usually near 1 and sometimes much smaller (better seeds trail
// off: a long tail of lower, "improved" values, skewness < 0); otherwise each seed run moves every
// record's prediction by N(0, 0.6 sqrt|residual|) (the largest residuals move most: a long tail
// of higher values, skewness > 0).
MetricModel rmse_metric(int records, bool trail, std::uint64_t seed) {
  Rng rng(seed);
  std::student_t_distribution<double> t3(3);
  std::vector<double> residuals(records);
  for (auto& r : residuals)
    r = 10 * t3(rng);
  auto draw = [residuals, trail](Rng& r) {
    std::normal_distribution<double> z(0, 1);
    const double shrink = trail ? 1 - 0.25 * std::pow(std::uniform_real_distribution<>()(r), 3) : 1;
    double sum = 0;
    for (double e : residuals) {
      const double moved =
          trail ? e * shrink + 0.3 * z(r) : e + 0.6 * std::sqrt(std::abs(e)) * z(r);
      sum += moved * moved;
    }
    return std::sqrt(sum / static_cast<double>(residuals.size()));
  };
  char name[64];
  std::snprintf(name, sizeof name, "rmse n=%d %s", records, trail ? "better seeds" : "heavy");
  return {name, draw, std::nullopt, std::nullopt};
}

// One detection trial: shift an honest value by the band's stated power, in each direction the
// band can catch, and count it caught or not.
void detect(const MetricBand& band, double honest, const std::optional<std::int64_t>& k, Rates& r) {
  if (!band.power_shift)
    return;
  for (double sign : {-1.0, 1.0}) {
    double shifted = honest + sign * *band.power_shift;
    if (band.scale != MetricScale::real && (shifted < 0 || shifted > 1))
      continue;
    if (k)
      shifted = std::round(shifted * static_cast<double>(*k)) / static_cast<double>(*k);
    ++r.detect_trials;
    r.detected += !band.contains(shifted);
  }
}

Rates simulate_metric(const MetricModel& model, int n, int trials, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> runs(n);
  Rates r;
  MetricBandSpec spec;
  spec.alpha = kAlpha;
  spec.examples = model.examples;
  spec.step = model.step;
  spec.fractional_steps = model.step.has_value();
  for (int t = 0; t < trials; ++t) {
    for (auto& x : runs)
      x = model.draw(rng);
    const double honest = model.draw(rng);
    const auto made = metric_band(runs, spec);
    ++r.trials;
    if (!made.band) {
      // Only a metric without a count whose runs all agree, with nothing to infer it from.
      REQUIRE(made.cannot_judge);
      REQUIRE_FALSE(model.examples.has_value());
      ++r.not_judged;
      continue;
    }
    r.pages += !made.band->contains(honest);
    if (t % 4 == 0)
      detect(*made.band, model.draw(rng), model.examples, r);
  }
  return r;
}

void metric_table(const std::vector<MetricModel>& models, int trials, std::uint64_t& seed,
                  std::span<const int> ns = kNs) {
  std::printf("%-34s %3s | %-12s %-9s | %-10s | %s\n", "metric", "n", "false pages", "(limit)",
              "not judged", "detected at the stated power shift");
  for (const auto& model : models) {
    for (int n : ns) {
      const auto r = simulate_metric(model, n, trials, seed++);
      const double limit = kAlpha + binomial_slack(kAlpha, r.trials);
      std::printf("%-34s %3d | %-12.4f %-9.4f | %-10.4f | %.3f\n", model.name.c_str(), n, r.rate(),
                  limit, static_cast<double>(r.not_judged) / r.trials, r.detection());
      CAPTURE(model.name);
      CAPTURE(n);
      CHECK(r.rate() <= limit);
      check_power(r, n);
    }
  }
}

// ---- distribution statistics -----------------------------------------------------------------

// A classifier's scores on a fixed eval set: true logits per example; a seed run adds example
// noise and, optionally, a run-level temperature (seeds that train more or less confident
// models: the statistics become skewed and dependent on the release's own temperature).
struct ScoreWorld {
  std::size_t rows = 150;
  std::size_t classes = 4;  // 1: one sigmoid score per row
  double separation = 4;
  double noise = 0.5;
  double temperature_sd = 0;
  std::vector<double> logits;

  void draw_truth(Rng& rng) {
    std::normal_distribution<double> z(0, 1);
    logits.assign(rows * std::max<std::size_t>(classes, 1), 0);
    for (std::size_t i = 0; i < rows; ++i) {
      if (classes == 1) {
        logits[i] = separation * z(rng);
        continue;
      }
      const std::size_t label = rng() % classes;
      for (std::size_t c = 0; c < classes; ++c)
        logits[i * classes + c] = z(rng) + (c == label ? separation : 0);
    }
  }

  std::vector<double> run(Rng& rng) const {
    std::normal_distribution<double> eps(0, noise);
    const double t = std::exp(std::normal_distribution<double>(0, temperature_sd)(rng));
    std::vector<double> scores(logits.size());
    if (classes == 1) {
      for (std::size_t i = 0; i < rows; ++i)
        scores[i] = 1 / (1 + std::exp(-t * (logits[i] + eps(rng))));
      return scores;
    }
    for (std::size_t i = 0; i < rows; ++i) {
      double top = -1e300, sum = 0;
      for (std::size_t c = 0; c < classes; ++c) {
        scores[i * classes + c] = t * (logits[i * classes + c] + eps(rng));
        top = std::max(top, scores[i * classes + c]);
      }
      for (std::size_t c = 0; c < classes; ++c)
        sum += scores[i * classes + c] = std::exp(scores[i * classes + c] - top);
      for (std::size_t c = 0; c < classes; ++c)
        scores[i * classes + c] /= sum;
    }
    return scores;
  }

  stats::Comparison compare(const std::vector<double>& release,
                            const std::vector<double>& other) const {
    const std::size_t cols = std::max<std::size_t>(classes, 1);
    return stats::compare(release, other, cols, cols, classes > 1, 0.5, 1);
  }
};

struct DistributionRates {
  std::map<Statistic, Rates> by_statistic;
};

// worlds x (n seed runs against the release, then `rebuilds` fresh-seed rebuilds against it).
DistributionRates simulate_distribution(ScoreWorld world, int n, int worlds, int rebuilds,
                                        std::uint64_t seed) {
  Rng rng(seed);
  DistributionRates out;
  for (int w = 0; w < worlds; ++w) {
    world.draw_truth(rng);
    const auto release = world.run(rng);
    std::map<Statistic, std::vector<double>> values;
    stats::Comparison shape;
    for (int i = 0; i < n; ++i) {
      shape = world.compare(release, world.run(rng));
      for (const auto& [name, v] : stats::banded_statistics(shape))
        values[name].push_back(v);
    }
    std::map<Statistic, UpperBound> bounds;
    for (const auto& [name, v] : values) {
      const auto made = upper_bound(v, statistic_bound_spec(name, shape, kAlpha));
      if (made.bound)
        bounds.emplace(name, *made.bound);
    }
    for (int b = 0; b < rebuilds; ++b) {
      const auto c = world.compare(release, world.run(rng));
      for (const auto& [name, v] : stats::banded_statistics(c)) {
        auto& r = out.by_statistic[name];
        ++r.trials;
        auto bound = bounds.find(name);
        r.pages += bound == bounds.end() || v > bound->second.upper;
        if (bound != bounds.end() && bound->second.power_shift && b % 4 == 0) {
          ++r.detect_trials;
          r.detected += v + *bound->second.power_shift > bound->second.upper;
        }
      }
    }
  }
  return out;
}

// ---- whole verifications ---------------------------------------------------------------------

// counts: the job reports k for the primary and each segment; else none (k is inferred).
Manifest simulated_manifest(std::int64_t k_primary, std::int64_t k_segment, int segments,
                            bool counts) {
  Manifest m;
  m.model = "sim";
  m.version = "1";
  m.level = ReproLevel::equivalent;
  m.evaluation.primary = PrimaryMetric{"accuracy", 0.9, true, k_primary};
  if (!counts)
    m.evaluation.primary.examples.reset();
  for (int s = 0; s < segments; ++s) {
    m.evaluation.segments["s" + std::to_string(s)]["accuracy"] = 0.9;
    if (counts)
      m.evaluation.segment_examples["s" + std::to_string(s)] = k_segment;
  }
  m.evaluation.predictions = FileRef{"predictions.npy", std::nullopt};
  return m;
}

}  // namespace

TEST_CASE("property 1 and 2, continuous metrics: near-normal and skewed") {
  std::printf("\n-- continuous metrics, alpha = %.2f per check --\n", kAlpha);
  std::uint64_t seed = 1;
  metric_table({normal_metric(0.96, 0.002), normal_metric(10, 1), beta_metric(48, 2)}, 20000, seed);
}

TEST_CASE("property 1 and 2, ranking metrics with clumped values (NDCG over queries)") {
  std::printf("\n-- ranking metrics with clumped values, alpha = %.2f per check --\n", kAlpha);
  std::uint64_t seed = 600;
  std::vector<MetricModel> models;
  // moved: the share of documents a seed run moves (by N(0, 1)); 1: every document, by N(0, 0.1).
  const struct {
    int queries;
    double moved, noise;
    bool own;  // reverify scores it (the band knows the step, 1/queries); else the job's figure
  } worlds[] = {{50, 0.0003, 1, true},  {150, 0.0003, 1, true}, {150, 0.001, 1, true},
                {500, 0.001, 1, true},  {150, 0.01, 1, true},   {150, 1, 0.1, true},
                {150, 0.003, 1, false}, {500, 0.001, 1, false}};
  for (const auto& w : worlds)
    models.push_back(ranking_metric(w.queries, w.moved, w.noise, seed++, w.own));
  constexpr int ns[] = {5, 10, 20, 30, 60};
  metric_table(models, 4000, seed, ns);
}

// Reverify's own NDCG where one query moves by a small fraction of its step (graded relevance:
// near-tied documents swap), and where values are lumpier (binary relevance, few queries).
// q=200 moved=1 is the search-ranking example's situation (examples/search-ranking: 200 queries
// graded 0-3, 20 seed runs spanning about 0.0005): every document is nudged by N(0, 0.003) per
// seed run, so a few dozen queries swap near-tied documents, each by under a tenth of a step.
TEST_CASE("property 1 and 2, own NDCG moved by fractions of a step, and binary relevance") {
  std::printf("\n-- own NDCG, graded by small moves and binary, alpha = %.2f per check --\n",
              kAlpha);
  std::uint64_t seed = 700;
  std::vector<MetricModel> models{ranking_metric(200, 1, 0.003, seed++, true),
                                  ranking_metric(50, 0.0003, 1, seed++, true, true),
                                  ranking_metric(50, 0.003, 1, seed++, true, true)};
  constexpr int ns[] = {5, 10, 20, 30, 60};
  metric_table(models, 4000, seed, ns);
}

// Power where it costs the example: 20 seed runs of the world above, and a rebuild whose NDCG@10
// is 0.01 lower or higher (two queries' worth; the seed runs' sd is about 0.00018) must page.
TEST_CASE("the search-ranking example's situation: a 0.01 NDCG@10 shift pages from 20 seed runs") {
  const auto model = ranking_metric(200, 1, 0.003, 700, true);
  constexpr double kShift = 0.01;
  constexpr int kTrials = 4000;
  Rng rng(800);
  MetricBandSpec spec;
  spec.alpha = kAlpha;
  spec.step = model.step;
  spec.fractional_steps = true;
  std::vector<double> runs(20);
  Rates r;
  double width = 0, stated = 0;
  for (int t = 0; t < kTrials; ++t) {
    for (auto& x : runs)
      x = model.draw(rng);
    const auto band = metric_band(runs, spec).band.value();
    width += band.upper - band.lower;
    stated += band.power_shift.value();
    ++r.trials;
    r.pages += !band.contains(model.draw(rng));
    const double honest = model.draw(rng);
    for (double sign : {-1.0, 1.0}) {
      ++r.detect_trials;
      r.detected += !band.contains(honest + sign * kShift);
    }
  }
  const double limit = kAlpha + binomial_slack(kAlpha, r.trials);
  std::printf(
      "\n-- the search-ranking example's situation, n = 20 --\n"
      "mean band width %.5f, stated power shift %.5f | false pages %.4f (limit %.4f) | shift "
      "%.2f caught %.3f\n",
      width / kTrials, stated / kTrials, r.rate(), limit, kShift, r.detection());
  CHECK(r.rate() <= limit);
  CHECK(r.detection() >= 0.95);
}

TEST_CASE("property 1 and 2, skewed continuous error metrics without a count (RMSE)") {
  std::printf("\n-- skewed error metrics, alpha = %.2f per check --\n", kAlpha);
  std::uint64_t seed = 700;
  std::vector<MetricModel> models;
  models.push_back(rmse_metric(86, true, seed++));
  models.push_back(rmse_metric(100, true, seed++));
  models.push_back(rmse_metric(100, false, seed++));
  // From 10 seed runs: 5 runs of a metric this skewed (skewness about -1) mostly miss its long
  // side, and no band made from them holds (docs/verdicts.md quotes the measured rate).
  constexpr int ns[] = {10, 22, 30};
  metric_table(models, 8000, seed, ns);
}

TEST_CASE("property 1 and 2, proportions over k examples, incl. p ~ 1 and runs that all agree") {
  std::printf("\n-- proportions, alpha = %.2f per check --\n", kAlpha);
  std::uint64_t seed = 100;
  std::vector<MetricModel> models;
  for (std::int64_t k : {20, 100, 1000}) {
    for (double p : {0.5, 0.9, 0.99, 1 - 0.1 / static_cast<double>(k)})
      models.push_back(proportion_metric(k, p, "binomial"));
  }
  for (std::int64_t k : {100, 1000}) {
    models.push_back(proportion_metric(k, 0.95, "over"));
    models.push_back(proportion_metric(k, 0.97, "under"));
  }
  metric_table(models, 8000, seed);
}

TEST_CASE("property 1 and 2, proportions reported without their count (k inferred)") {
  std::printf("\n-- proportions without a count (k inferred from the values), alpha = %.2f --\n",
              kAlpha);
  std::uint64_t seed = 300;
  std::vector<MetricModel> models;
  auto uncounted = [](MetricModel m) {
    m.examples.reset();
    m.name += " no count";
    return m;
  };
  for (std::int64_t k : {20, 43, 100, 1000}) {
    for (double p : {0.5, 0.9, 0.99, 1 - 0.1 / static_cast<double>(k)})
      models.push_back(uncounted(proportion_metric(k, p, "binomial")));
  }
  for (std::int64_t k : {43, 400})
    models.push_back(uncounted(proportion_metric(k, 0.977, "rare")));
  for (std::int64_t k : {100, 1000}) {
    models.push_back(uncounted(proportion_metric(k, 0.95, "over")));
    models.push_back(uncounted(proportion_metric(k, 0.97, "under")));
  }
  metric_table(models, 8000, seed);
}

TEST_CASE("24 seed runs all 42/43 without a count: a band of whole examples, not +-0") {
  std::vector<double> runs(24, 42.0 / 43);
  runs[3] = 0.97674418604651159;  // the same 42/43 computed another way, one ulp apart
  runs[9] = 0.97674418604651170;
  MetricBandSpec spec;
  spec.alpha = 0.01 * 0.25 / 10;
  const auto made = metric_band(runs, spec);
  REQUIRE(made.band.has_value());
  CHECK(made.band->scale == MetricScale::proportion);
  CHECK(made.band->examples == 43);
  CHECK(made.band->examples_inferred);
  CHECK(made.band->contains(41.0 / 43));  // one more misclassified example does not page
  CHECK(made.band->contains(1.0));
  CHECK(made.band->power_shift.value() > 1.0 / 43);
  // Every run 1.0 and no count anywhere: nothing gives the grain, so no band at all.
  const std::vector<double> all_right(24, 1.0);
  const auto none = metric_band(all_right, spec);
  CHECK_FALSE(none.band.has_value());
  CHECK(none.cannot_judge);
  // ... unless the release's own value shows it.
  spec.recorded = 42.0 / 43;
  CHECK(metric_band(all_right, spec).band->examples == 43);
  CHECK(infer_examples(std::vector<double>{1.0 / 3, 1.0 / 6, 5.0 / 6}) == 6);
  CHECK_FALSE(infer_examples(std::vector<double>{0.5, 0.25}).has_value());  // short decimals
  CHECK_FALSE(infer_examples(std::vector<double>{0.96123456789}).has_value());
  CHECK_FALSE(infer_examples(std::vector<double>{1.0, 0.0}).has_value());
  CHECK_FALSE(infer_examples(std::vector<double>{1.5}).has_value());
}

TEST_CASE("runs that all agree still get a band of whole examples, never +-0") {
  const std::vector<double> all_right(5, 1.0);
  MetricBandSpec spec;
  spec.alpha = 0.01;
  spec.examples = 39;
  const auto made = metric_band(all_right, spec);
  REQUIRE(made.band.has_value());
  CHECK(made.band->lower < 1.0);
  CHECK(made.band->lower * 39 == doctest::Approx(std::round(made.band->lower * 39)));
  CHECK(made.band->contains(38.0 / 39));  // one more misclassified example does not page
  CHECK(made.band->discrete_applied);
}

TEST_CASE("property 1 and 2, distribution statistics of the release against fresh-seed runs") {
  struct Case {
    const char* name;
    ScoreWorld world;
  };
  std::vector<Case> cases;
  cases.push_back({"4-class softmax", ScoreWorld{}});
  ScoreWorld tempered;
  tempered.temperature_sd = 0.1;
  cases.push_back({"4-class, run temperature", tempered});
  ScoreWorld binary;
  binary.classes = 1;
  binary.separation = 3;
  binary.noise = 0.3;
  cases.push_back({"binary sigmoid", binary});
  ScoreWorld piled = binary;
  piled.separation = 8;  // scores piled near 0 and 1
  piled.temperature_sd = 0.1;
  cases.push_back({"binary, piled at 0/1, temp.", piled});

  std::printf("\n-- distribution statistics, alpha = %.2f per check (release vs fresh seeds) --\n",
              kAlpha);
  std::printf("%-28s %3s | false pages per statistic (limit), detected at the stated power\n",
              "scores", "n");
  std::uint64_t seed = 1000;
  for (const auto& c : cases) {
    for (int n : kNs) {
      const auto rates = simulate_distribution(c.world, n, 300, 20, seed++);
      std::printf("%-28s %3d |", c.name, n);
      for (const auto& [name, r] : rates.by_statistic) {
        const double limit = kAlpha + binomial_slack(kAlpha, r.trials);
        std::printf(" %s %.4f (%.4f) %.2f;", to_string(name), r.rate(), limit, r.detection());
        CAPTURE(c.name);
        CAPTURE(n);
        CAPTURE(name);
        CHECK(r.rate() <= limit);
        check_power(r, n);
      }
      std::printf("\n");
    }
  }
}

TEST_CASE("property 1 for whole verifications: primary, 10 segments and 6 statistics") {
  std::printf("\n-- whole verifications, false_page_rate = %.2f split over the families --\n",
              kAlpha);
  VerdictPolicy policy;
  policy.false_page_rate = kAlpha;
  const auto primary = proportion_metric(400, 0.97, "under");
  ScoreWorld world;
  std::uint64_t seed = 5000;
  // Segments of 40 examples at 97% (binomial), and of 43 where one hard example flips rarely
  // (most seed runs agree to the last digit); with the job's counts and without.
  struct World {
    const char* name;
    MetricModel segment;
    bool counts;
  };
  const World worlds[] = {
      {"k=40 binomial, counts", proportion_metric(40, 0.97, "binomial"), true},
      {"k=40 binomial, no counts", proportion_metric(40, 0.97, "binomial"), false},
      {"k=43 rare flips, no counts", proportion_metric(43, 0.977, "rare"), false}};
  for (const auto& [world_name, segment, counts] : worlds)
    for (int n : {5, 10, 20}) {
      Rng rng(seed++);
      int trials = 0, pages = 0;
      for (int w = 0; w < 60; ++w) {
        Manifest m = simulated_manifest(400, 40, 10, counts);
        ToleranceSpec tol;
        world.draw_truth(rng);
        const auto release = world.run(rng);
        stats::Comparison shape;
        for (int i = 0; i < n; ++i) {
          tol.seed_runs["accuracy"].push_back(primary.draw(rng));
          for (int s = 0; s < 10; ++s)
            tol.segment_seed_runs["s" + std::to_string(s)]["accuracy"].push_back(segment.draw(rng));
          shape = world.compare(release, world.run(rng));
          for (const auto& [name, v] : stats::banded_statistics(shape))
            tol.distribution_seed_runs[to_string(name)].push_back(v);
        }
        m.tolerance = tol;
        for (int b = 0; b < 40; ++b) {
          RebuildObservation rebuild;
          rebuild.primary_name = "accuracy";
          rebuild.primary = primary.draw(rng);
          for (int s = 0; s < 10; ++s)
            rebuild.segments["s" + std::to_string(s)]["accuracy"] = segment.draw(rng);
          rebuild.comparison = world.compare(release, world.run(rng));
          const auto verdict =
              decide_verdict(VerdictInputs{m, rebuild, nullptr, nullptr, {}}, policy);
          REQUIRE(verdict.cls != VerdictClass::uncalibrated);
          ++trials;
          pages += verdict.cls != VerdictClass::passed;
        }
      }
      const double rate = static_cast<double>(pages) / trials;
      const double limit = kAlpha + binomial_slack(kAlpha, trials);
      std::printf("%-28s n=%-3d %d verifications: %d paged = %.4f (limit %.4f)\n", world_name, n,
                  trials, pages, rate, limit);
      CAPTURE(world_name);
      CAPTURE(n);
      CHECK(rate <= limit);
    }
}

// ---- parity checks ------------------------------------------------------------------------------

namespace {

// A model's outputs on a fixed eval set, for scoring::parity: a ranking (queries of 8 documents,
// k = 3, true scores drawn per world so that some queries hold near ties) or a multiclass
// classifier (ScoreWorld's softmax rows); a seed run adds noise.
struct ParityWorld {
  const char* name;
  ScoringInputs in;
  ScoreWorld classifier;      // multiclass
  std::vector<double> truth;  // ranking

  void draw_truth(Rng& rng) {
    if (in.task == ScoringTask::multiclass) {
      classifier.draw_truth(rng);
      in.labels.assign(classifier.rows, 0);
      for (std::size_t i = 0; i < classifier.rows; ++i) {
        const double* row = &classifier.logits[i * classifier.classes];
        in.labels[i] = static_cast<double>(std::max_element(row, row + classifier.classes) - row);
      }
      return;
    }
    std::normal_distribution<double> z(0, 1);
    for (auto& t : truth)
      t = z(rng);
  }

  Predictions run(Rng& rng) const {
    Predictions p;
    if (in.task == ScoringTask::multiclass) {
      p.values = classifier.run(rng);
      p.rows = classifier.rows;
      p.cols = classifier.classes;
      p.two_d = true;
      return p;
    }
    std::normal_distribution<double> eps(0, 0.15);
    p.rows = truth.size();
    for (double t : truth)
      p.values.push_back(t + eps(rng));
    return p;
  }
};

ParityWorld ranking_parity_world(std::size_t queries) {
  ScoringSpec spec;
  spec.task = ScoringTask::ranking;
  spec.k = 3;
  ParityWorld w{"ranking 3 of 8", scoring_settings(spec), {}, {}};
  std::vector<std::string> ids;
  for (std::size_t q = 0; q < queries; ++q)
    for (int d = 0; d < 8; ++d) {
      ids.push_back(std::to_string(q));
      w.in.labels.push_back(d < 2 ? 1 : 0);
    }
  w.in.queries = intern_keys(ids);
  w.truth.assign(w.in.labels.size(), 0);
  return w;
}

ParityWorld multiclass_parity_world() {
  ScoringSpec spec;
  spec.task = ScoringTask::multiclass;
  spec.classes = 4;
  ParityWorld w{"4-class softmax", scoring_settings(spec), ScoreWorld{}, {}};
  w.classifier.rows = 400;
  w.classifier.separation = 2.5;
  return w;
}

// "parity:class=3" -> "parity:class=*", "parity:top-k-order" as is: the families a table prints.
std::string parity_family(const std::string& name) {
  const auto eq = name.find("class=");
  return eq == std::string::npos ? name : name.substr(0, eq) + "class=*";
}

}  // namespace

TEST_CASE("property 1, parity checks: ranking top-k and tau, multiclass confusion shift") {
  std::printf("\n-- parity checks, alpha = %.2f per check (fresh-seed rebuilds) --\n", kAlpha);
  std::uint64_t seed = 9000;
  for (ParityWorld world : {ranking_parity_world(60), multiclass_parity_world()})
    for (int n : {5, 10, 20}) {
      Rng rng(seed++);
      std::map<std::string, Rates> rates;
      for (int w = 0; w < 100; ++w) {
        world.draw_truth(rng);
        const Predictions release = world.run(rng);
        ToleranceSpec tol;
        for (int i = 0; i < n; ++i) {
          const auto parity = scoring::parity(world.in, release, world.run(rng));
          REQUIRE(parity.ok());
          for (const auto& [name, v] : parity_values(*parity))
            tol.parity_seed_runs[name].push_back(v);
        }
        for (int b = 0; b < 20; ++b) {
          const auto parity = scoring::parity(world.in, release, world.run(rng));
          REQUIRE(parity.ok());
          for (const auto& check : parity_checks(parity_statistics(*parity), tol, kAlpha, "")) {
            auto& r = rates[parity_family(check.name)];
            if (!check.band) {
              ++r.not_judged;
              continue;
            }
            ++r.trials;
            r.pages += check.outcome == CheckOutcome::failed;
          }
        }
      }
      for (const auto& [family, r] : rates) {
        const double limit = kAlpha + binomial_slack(kAlpha, std::max(r.trials, 1));
        std::printf("%-16s n=%-3d %-22s %5d checks: %.4f paged (limit %.4f), %d unbanded\n",
                    world.name, n, family.c_str(), r.trials, r.rate(), limit, r.not_judged);
        CAPTURE(world.name);
        CAPTURE(n);
        CAPTURE(family);
        CHECK(r.rate() <= limit);
      }
    }
}
