// policies/scoring.hpp beyond the reference values (scoring_vectors_test.cpp): counts, steps
// (checked against every single-record move on random cases), every not-judged reason, the
// errors, and parity on hand-made cases.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "policies/scoring.hpp"
#include "tests/support/predictions_fixture.hpp"
#include "tests/support/text_search.hpp"

using namespace reverify;
using reverify::test::one_d;
using reverify::test::two_d;
using scoring::MetricScore;

using reverify::test::contains;

namespace {

ScoringInputs inputs(ScoringTask task, std::vector<double> labels, std::size_t classes = 0) {
  ScoringSpec spec;
  spec.task = task;
  if (classes)
    spec.classes = static_cast<std::int64_t>(classes);
  if (task == ScoringTask::ranking)
    spec.k = 2;
  ScoringInputs in = scoring_settings(spec);
  in.labels = std::move(labels);
  return in;
}

const MetricScore& metric(const scoring::ScopeScores& scope, std::string_view name) {
  const MetricScore* m = scope.find(name);
  REQUIRE_MESSAGE(m != nullptr, "no metric " << name);
  return *m;
}

scoring::Scores scored(const ScoringInputs& in, const Predictions& p) {
  auto s = scoring::score(in, p);
  REQUIRE_MESSAGE(s.ok(), s.error().message);
  return *s;
}

}  // namespace

TEST_CASE("binary: counts of every proportion and the exact steps at the current counts") {
  // TP 2 (0.9, 0.8), FN 1 (0.3), FP 1 (0.6), TN 1 (0.1) at 0.5.
  const auto in = inputs(ScoringTask::binary, {1, 1, 1, 0, 0});
  const auto s = scored(in, one_d({0.9, 0.8, 0.3, 0.6, 0.1})).overall;
  const auto& accuracy = metric(s, "accuracy");
  CHECK(*accuracy.value == doctest::Approx(0.6));
  CHECK(*accuracy.count == scoring::Count{3, 5});
  CHECK(*accuracy.step == doctest::Approx(0.2));
  CHECK(*accuracy.threshold == 0.5);
  const auto& precision = metric(s, "precision");
  CHECK(*precision.count == scoring::Count{2, 3});
  CHECK(*precision.step == doctest::Approx(1.0 / 3));  // FP -> TN: 2/3 -> 1
  const auto& recall = metric(s, "recall");
  CHECK(*recall.count == scoring::Count{2, 3});
  CHECK(*recall.step == doctest::Approx(1.0 / 3));
  const auto& f1 = metric(s, "f1");
  CHECK(*f1.value == doctest::Approx(2.0 / 3));
  CHECK_FALSE(f1.count.has_value());
  CHECK(*f1.step == doctest::Approx(2.0 / 3 - 0.4));  // TP -> FN: 4/6 -> 2/5
  const auto& balanced = metric(s, "balanced_accuracy");
  CHECK(*balanced.value == doctest::Approx((2.0 / 3 + 1.0 / 2) / 2));
  CHECK(*balanced.step == doctest::Approx(1.0 / 4));  // 1 / (2 * min(3, 2))
  const auto& auc = metric(s, "roc_auc");
  CHECK(*auc.value == doctest::Approx(5.0 / 6));
  CHECK(*auc.step == doctest::Approx(0.5));
  CHECK_FALSE(auc.count.has_value());
  CHECK_FALSE(metric(s, "log_loss").step.has_value());
  CHECK_FALSE(metric(s, "brier").step.has_value());
}

TEST_CASE("a segment that every run scores 42/43 moves in steps of one record, never +-0") {
  std::vector<double> labels(43, 1), scores(43, 0.9);
  scores[5] = 0.1;  // one miss
  auto in = inputs(ScoringTask::binary, labels);
  in.segment_keys.push_back(SegmentKey{"radius", intern_keys(std::vector<std::string>(43, "low"))});
  const auto s = scored(in, one_d(scores));
  REQUIRE(s.segments.size() == 1);
  CHECK(s.segments[0].segment == "radius=low");
  const auto& accuracy = metric(s.segments[0], "accuracy");
  CHECK(*accuracy.count == scoring::Count{42, 43});
  CHECK(*accuracy.step == doctest::Approx(1.0 / 43));
}

TEST_CASE("several thresholds: each threshold metric once per threshold, named by it") {
  auto in = inputs(ScoringTask::binary, {1, 0, 1, 0});
  in.thresholds = {0.5, 0.25};
  const auto s = scored(in, one_d({0.6, 0.3, 0.2, 0.1})).overall;
  CHECK(*metric(s, "accuracy@0.5").value == doctest::Approx(0.75));
  CHECK(*metric(s, "accuracy@0.25").value == doctest::Approx(0.5));
  CHECK(*metric(s, "recall@0.25").threshold == 0.25);
  CHECK(s.find("accuracy") == nullptr);
  CHECK(s.find("roc_auc") != nullptr);  // threshold-free metrics keep their plain name
  CHECK(s.metrics.size() == 5 * 2 + 4);
}

TEST_CASE("every not-judged case says why, with no value, count or step") {
  auto check_not_judged = [](const MetricScore& m, const std::string& reason) {
    INFO(m.name << ": " << m.not_judged);
    CHECK_FALSE(m.judged());
    CHECK_FALSE(m.count.has_value());
    CHECK_FALSE(m.step.has_value());
    CHECK(contains(m.not_judged, reason));
  };
  SUBCASE("binary with one class present, nothing predicted positive") {
    const auto s = scored(inputs(ScoringTask::binary, {0, 0, 0}), one_d({0.1, 0.2, 0.3})).overall;
    check_not_judged(metric(s, "roc_auc"), "one class present (0 positive, 3 negative records)");
    check_not_judged(metric(s, "pr_auc"), "one class present");
    check_not_judged(metric(s, "precision"), "no record is predicted positive at threshold 0.5");
    check_not_judged(metric(s, "recall"), "no positive record");
    check_not_judged(metric(s, "f1"), "no positive record (label 1) and none predicted positive");
    CHECK(metric(s, "accuracy").judged());
    CHECK(metric(s, "balanced_accuracy").judged());
  }
  SUBCASE("binary scores that are not probabilities") {
    const auto s = scored(inputs(ScoringTask::binary, {0, 1}), one_d({-1.5, 2.0})).overall;
    check_not_judged(metric(s, "log_loss"),
                     "the scores are not probabilities (row 0: score -1.5 is outside [0, 1])");
    check_not_judged(metric(s, "brier"), "not probabilities");
  }
  SUBCASE("multiclass rows that do not sum to 1, and a segment of one class") {
    auto in = inputs(ScoringTask::multiclass, {0, 1, 2, 2}, 3);
    in.segment_keys.push_back(SegmentKey{"label", intern_keys({"0", "1", "2", "2"})});
    const auto s =
        scored(in, two_d(3, {0.7, 0.2, 0.1, 0.2, 0.9, 0.1, 0.1, 0.1, 0.8, 0.2, 0.2, 0.6}));
    check_not_judged(metric(s.overall, "log_loss"),
                     "the scores are not probabilities (row 1: the row sums to 1.2, not 1)");
    CHECK(metric(s.overall, "roc_auc").judged());
    const auto& two = s.segments.at(2);
    CHECK(two.segment == "label=2");
    CHECK(metric(two, "log_loss").judged());  // its rows are probabilities
    check_not_judged(metric(two, "roc_auc"), "no class has both members and others");
    check_not_judged(metric(two, "pr_auc"), "one class present");
  }
  SUBCASE("R2 with constant labels") {
    const auto s = scored(inputs(ScoringTask::regression, {2.5, 2.5}), one_d({2.0, 3.0})).overall;
    check_not_judged(metric(s, "r2"), "the labels are constant (all 2.5)");
    CHECK(*metric(s, "rmse").value == doctest::Approx(0.5));
  }
  SUBCASE("ranking with no query to judge") {
    auto in = inputs(ScoringTask::ranking, {1, 0, 0});
    in.queries = intern_keys({"a", "b", "b"});
    const auto s = scored(in, one_d({0.3, 0.2, 0.1})).overall;
    for (const char* name : {"ndcg@k", "mrr", "precision@k"})
      check_not_judged(metric(s, name),
                       "no query to judge: 1 of one record, 1 without a relevant record");
    CHECK(s.queries->judged == 0);
  }
}

TEST_CASE("ranking: queries left out are counted; precision@k counts slots") {
  auto in = inputs(ScoringTask::ranking, {2, 0, 1, 0, 0, 1, 0});  // k = 2
  in.queries = intern_keys({"a", "a", "a", "b", "b", "c", "d"});
  const auto s = scored(in, one_d({0.9, 0.8, 0.1, 0.5, 0.4, 0.3, 0.2})).overall;
  REQUIRE(s.queries.has_value());
  CHECK(s.queries->judged == 1);       // a
  CHECK(s.queries->no_relevant == 1);  // b
  CHECK(s.queries->one_record == 2);   // c, d
  const auto& p = metric(s, "precision@k");
  CHECK(*p.count == scoring::Count{1, 2});
  CHECK(*p.step == doctest::Approx(0.5));
  CHECK(*metric(s, "mrr").value == doctest::Approx(1.0));
  CHECK(*metric(s, "ndcg@k").step == doctest::Approx(1.0));
}

namespace {

// Moves one record's prediction in every way `move` knows (variant 0..2) and checks that no judged
// metric of any scope changes by more than the step it had before the move.
template <class Move>
void check_steps_bound_moves(const ScoringInputs& in, const Predictions& p, Move move) {
  const auto before = scored(in, p);
  for (std::size_t record = 0; record < in.records(); ++record) {
    for (int variant = 0; variant < 3; ++variant) {
      Predictions moved = p;
      move(moved, record, variant);
      const auto after = scored(in, moved);
      auto compare = [&](const scoring::ScopeScores& a, const scoring::ScopeScores& b) {
        REQUIRE(a.metrics.size() == b.metrics.size());
        for (std::size_t m = 0; m < a.metrics.size(); ++m) {
          const MetricScore &x = a.metrics[m], &y = b.metrics[m];
          if (!x.judged() || !y.judged() || !x.step)
            continue;
          INFO(a.segment << " " << x.name << " record " << record << " variant " << variant << ": "
                         << *x.value << " -> " << *y.value << ", step " << *x.step);
          CHECK(std::abs(*y.value - *x.value) <= *x.step + 1e-12);
        }
      };
      compare(before.overall, after.overall);
      for (std::size_t k = 0; k < before.segments.size(); ++k)
        compare(before.segments[k], after.segments[k]);
    }
  }
}

struct RandomCase {
  std::mt19937_64 rng{20261201};
  std::uniform_real_distribution<double> unit{0, 1};
  static constexpr std::size_t kRecords = 14;

  double tied_score() { return std::round(unit(rng) * 8) / 8; }  // ties on purpose
  SegmentKey groups() const {
    std::vector<std::string> values;
    for (std::size_t i = 0; i < kRecords; ++i)
      values.push_back(i % 3 == 0 ? "x" : "y");
    return SegmentKey{"g", intern_keys(values)};
  }
};

}  // namespace

TEST_CASE("the step bounds every single-record move, in every scope, on random cases") {
  RandomCase r;
  constexpr std::size_t n = RandomCase::kRecords;
  for (int trial = 0; trial < 6; ++trial) {
    CAPTURE(trial);
    std::vector<double> labels, scores;
    for (std::size_t i = 0; i < n; ++i) {
      labels.push_back(r.unit(r.rng) < 0.5 ? 1 : 0);
      scores.push_back(r.tied_score());
    }
    auto binary = inputs(ScoringTask::binary, labels);
    binary.thresholds = {0.5, 0.25};
    binary.segment_keys.push_back(r.groups());
    check_steps_bound_moves(binary, one_d(scores), [&](Predictions& p, std::size_t i, int v) {
      p.values[i] = v == 0 ? 1.0 : v == 1 ? 0.0 : p.values[(i + 1) % n];
    });

    constexpr std::size_t classes = 3;
    labels.clear();
    scores.clear();
    for (std::size_t i = 0; i < n; ++i) {
      labels.push_back(static_cast<double>(r.rng() % classes));
      for (std::size_t c = 0; c < classes; ++c)
        scores.push_back(r.tied_score());
    }
    auto multiclass = inputs(ScoringTask::multiclass, labels, classes);
    multiclass.segment_keys.push_back(r.groups());
    check_steps_bound_moves(multiclass, two_d(classes, scores),
                            [&](Predictions& p, std::size_t i, int v) {
                              for (std::size_t c = 0; c < classes; ++c)
                                p.values[i * classes + c] = c == std::size_t(v) ? 1.0 : 0.0;
                            });

    labels.clear();
    scores.clear();
    std::vector<std::string> queries;
    for (std::size_t i = 0; i < n; ++i) {
      labels.push_back(static_cast<double>(r.rng() % 3));
      scores.push_back(r.tied_score());
      queries.push_back(i < 6 ? "a" : "b");
    }
    auto ranking = inputs(ScoringTask::ranking, labels);
    ranking.queries = intern_keys(queries);
    ranking.segment_keys.push_back(r.groups());
    check_steps_bound_moves(ranking, one_d(scores), [&](Predictions& p, std::size_t i, int v) {
      p.values[i] = v == 0 ? 2.0 : v == 1 ? -1.0 : p.values[(i + 1) % n];
    });
  }
}

TEST_CASE("predictions that do not fit the inputs are errors naming what is wrong") {
  auto message = [](const ScoringInputs& in, const Predictions& p) {
    auto s = scoring::score(in, p);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == ErrorCode::invalid_argument);
    return s.error().message;
  };
  const auto binary = inputs(ScoringTask::binary, {0, 1, 1});
  CHECK(message(binary, one_d({0.1, 0.2})) ==
        "the predictions have 2 rows, the eval set 3 labels (one row per eval record)");
  CHECK(message(binary, two_d(3, std::vector<double>(9, 0.1))) ==
        "the predictions have 3 column(s); task binary needs 1 (the positive class's score) or 2 "
        "(column 1 is read)");
  CHECK(message(inputs(ScoringTask::multiclass, {0, 1}, 3), two_d(2, {0.5, 0.5, 0.5, 0.5})) ==
        "the predictions have 2 column(s); task multiclass needs 3");
  CHECK(message(binary, one_d({0.1, NAN, 0.3})) ==
        "NaN at row 1, column 0: predictions must be finite");
  CHECK(message(binary, one_d({0.1, 0.2, INFINITY})) ==
        "Inf at row 2, column 0: predictions must be finite");
  CHECK(message(inputs(ScoringTask::binary, {0, 2, 1}), one_d({0.1, 0.2, 0.3})) ==
        "label 1: must be 0 or 1 (task binary)");
  CHECK(message(inputs(ScoringTask::multiclass, {0, 1.5}, 2), two_d(2, {1, 0, 0, 1})) ==
        "label 1: must be an integer in 0..1 (the declared classes: 2)");
  auto ranking = inputs(ScoringTask::ranking, {1, 0});
  CHECK(message(ranking, one_d({0.1, 0.2})) ==
        "task ranking needs k >= 1 and one query id per record");
  auto keyed = binary;
  keyed.segment_keys.push_back(SegmentKey{"g", intern_keys({"a", "b"})});
  CHECK(message(keyed, one_d({0.1, 0.2, 0.3})) == "segment key g: 2 values for 3 labels");
}

TEST_CASE("parity: threshold crossings, class shifts and top-k overlap on hand-made cases") {
  SUBCASE("binary, per segment") {
    auto in = inputs(ScoringTask::binary, {1, 0, 1, 0});
    in.segment_keys.push_back(SegmentKey{"g", intern_keys({"a", "a", "b", "b"})});
    auto p = scoring::parity(in, one_d({0.6, 0.4, 0.7, 0.2}), one_d({0.4, 0.6, 0.8, 0.2}));
    REQUIRE(p.ok());
    const scoring::Crossings& all = p->overall.crossings.at(0);
    CHECK(all.changed == 2);
    CHECK(all.became_positive == 1);
    CHECK(all.became_negative == 1);
    CHECK(*all.became_wrong == 2);
    CHECK(*all.became_correct == 0);
    CHECK(p->segments.at(0).segment == "g=a");
    CHECK(p->segments.at(0).crossings.at(0).changed == 2);
    CHECK(p->segments.at(1).crossings.at(0).changed == 0);
  }
  SUBCASE("regression crossings carry no correctness") {
    auto in = inputs(ScoringTask::regression, {1, 2});
    in.thresholds = {1.5};
    auto p = scoring::parity(in, one_d({1.0, 2.0}), one_d({2.0, 2.0}));
    REQUIRE(p.ok());
    CHECK(p->overall.crossings.at(0).became_positive == 1);
    CHECK_FALSE(p->overall.crossings.at(0).became_correct.has_value());
  }
  SUBCASE("multiclass confusion shift") {
    const auto in = inputs(ScoringTask::multiclass, {0, 1, 2}, 3);
    auto p = scoring::parity(in, two_d(3, {1, 0, 0, 0, 1, 0, 0, 1, 0}),
                             two_d(3, {0, 1, 0, 0, 1, 0, 0, 0, 1}));
    REQUIRE(p.ok());
    CHECK(*p->overall.argmax_changed == 2);
    const auto& one = p->overall.classes.at(1);
    CHECK(one.release == 2);
    CHECK(one.other == 2);
    CHECK(one.left == 1);
    CHECK(one.entered == 1);
    CHECK(p->overall.classes.at(0).became_wrong == 1);
    CHECK(p->overall.classes.at(2).became_correct == 1);
  }
  SUBCASE("ranking: ties keep eval-set order in the top k; tau needs both sides to vary") {
    auto in = inputs(ScoringTask::ranking, {1, 0, 0, 1, 1});  // k = 2
    in.queries = intern_keys({"a", "a", "a", "b", "b"});
    auto p =
        scoring::parity(in, one_d({0.5, 0.5, 0.5, 0.9, 0.1}), one_d({0.5, 0.4, 0.6, 0.9, 0.1}));
    REQUIRE(p.ok());
    REQUIRE(p->queries.size() == 2);
    CHECK(p->queries[0].query == "a");
    CHECK(p->queries[0].overlap == doctest::Approx(0.5));  // {0, 1} against {2, 0}
    CHECK(p->queries[0].top_k_changed);
    CHECK_FALSE(p->queries[0].tau.has_value());  // the release's scores are constant
    CHECK(p->queries[1].overlap == 1);
    CHECK(*p->queries[1].tau == doctest::Approx(1.0));
    CHECK(p->overall.ranking->tau_queries == 1);
    CHECK(p->overall.ranking->largest_tau_query == 2);
  }
  SUBCASE("ranking: the top-k order changes with the same set") {
    auto in = inputs(ScoringTask::ranking, {1, 1, 0, 1, 1, 0});  // k = 2
    in.queries = intern_keys({"a", "a", "a", "b", "b", "b"});
    // a: the top two swap places; b: the second and third swap, across the cut-off
    auto p = scoring::parity(in, one_d({0.9, 0.8, 0.1, 0.9, 0.5, 0.4}),
                             one_d({0.8, 0.9, 0.1, 0.9, 0.4, 0.5}));
    REQUIRE(p.ok());
    CHECK(p->queries[0].top_k_order_changed);
    CHECK_FALSE(p->queries[0].top_k_changed);
    CHECK(p->queries[0].overlap == 1);
    CHECK(p->queries[1].top_k_changed);
    CHECK(p->queries[1].top_k_order_changed);  // a changed set is a changed order too
    CHECK(p->queries[1].overlap == doctest::Approx(0.5));
    CHECK(p->overall.ranking->top_k_changed == 1);
    CHECK(p->overall.ranking->top_k_order_changed == 2);
  }
  SUBCASE("different shapes are refused") {
    const auto in = inputs(ScoringTask::binary, {0, 1});
    auto p = scoring::parity(in, one_d({0.1, 0.9}), two_d(2, {0.9, 0.1, 0.1, 0.9}));
    REQUIRE_FALSE(p.ok());
    CHECK(contains(p.error().message, "differ in shape"));
  }
}
