// Every metric and parity figure of policies/scoring.hpp against scikit-learn, scipy and numpy
// (scoring_vectors/make_scoring_vectors.py): values to a relative 1e-9, "not judged" exactly where
// the reference has null, counts exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "policies/scoring.hpp"
#include "tests/support/files.hpp"

using namespace reverify;
using nlohmann::json;

namespace {

Predictions predictions_of(const json& rows) {
  Predictions p;
  p.rows = rows.size();
  for (const auto& row : rows) {
    if (row.is_array()) {
      p.two_d = true;
      p.cols = row.size();
      for (const auto& v : row)
        p.values.push_back(v.get<double>());
    } else {
      p.values.push_back(row.get<double>());
    }
  }
  return p;
}

ScoringInputs inputs_of(const json& c) {
  ScoringSpec spec;
  spec.task = *enum_from_string<ScoringTask>(c["task"].get<std::string>());
  if (c.contains("classes"))
    spec.classes = c["classes"].get<std::int64_t>();
  if (c.contains("thresholds"))
    spec.thresholds = c["thresholds"].get<std::vector<double>>();
  if (c.contains("k"))
    spec.k = c["k"].get<std::int64_t>();
  ScoringInputs in = scoring_settings(spec);
  in.labels = c["labels"].get<std::vector<double>>();
  for (const auto& key : c.value("segments", json::array()))
    in.segment_keys.push_back(
        SegmentKey{key["name"].get<std::string>(),
                   intern_keys(key["values"].get<std::vector<std::string>>())});
  if (c.contains("queries"))
    in.queries = intern_keys(c["queries"].get<std::vector<std::string>>());
  return in;
}

void check_close(const std::string& what, double actual, double expected) {
  INFO(what << ": actual " << actual << ", expected " << expected);
  CHECK(std::abs(actual - expected) <= 1e-9 * std::abs(expected) + 1e-12);
}

void check_optional(const std::string& what, const std::optional<double>& actual,
                    const json& expected) {
  INFO(what);
  REQUIRE(actual.has_value() == !expected.is_null());
  if (actual)
    check_close(what, *actual, expected.get<double>());
}

std::map<std::string, const scoring::ScopeScores*> scopes_of(const scoring::Scores& s) {
  std::map<std::string, const scoring::ScopeScores*> out{{"", &s.overall}};
  for (const auto& segment : s.segments)
    out[segment.segment] = &segment;
  return out;
}

void check_scores(const json& c, const scoring::Scores& scores) {
  const auto scopes = scopes_of(scores);
  REQUIRE(scopes.size() == c["scores"].size());
  for (const auto& [segment, expected] : c["scores"].items()) {
    CAPTURE(segment);
    REQUIRE(scopes.contains(segment));
    const scoring::ScopeScores& got = *scopes.at(segment);
    REQUIRE(got.metrics.size() == expected.size());
    for (const auto& [name, value] : expected.items()) {
      CAPTURE(name);
      const scoring::MetricScore* m = got.find(name);
      REQUIRE(m != nullptr);
      if (value.is_null()) {
        CHECK_FALSE(m->judged());
        CHECK_FALSE(m->not_judged.empty());
        CHECK_FALSE(m->count.has_value());
        CHECK_FALSE(m->step.has_value());
      } else {
        REQUIRE(m->judged());
        check_close(name, *m->value, value.get<double>());
        if (m->count)
          check_close(name + " count", m->count->numerator / m->count->denominator,
                      value.get<double>());
      }
    }
  }
}

void check_scope_parity(const json& expected, const scoring::ScopeParity& got) {
  if (expected.contains("crossings")) {
    REQUIRE(got.crossings.size() == expected["crossings"].size());
    for (std::size_t t = 0; t < got.crossings.size(); ++t) {
      const json& e = expected["crossings"][t];
      const scoring::Crossings& c = got.crossings[t];
      CHECK(c.threshold == e["threshold"].get<double>());
      CHECK(c.changed == e["changed"].get<std::size_t>());
      CHECK(c.became_positive == e["became_positive"].get<std::size_t>());
      CHECK(c.became_negative == e["became_negative"].get<std::size_t>());
      REQUIRE(c.became_correct.has_value() == e.contains("became_correct"));
      if (c.became_correct) {
        CHECK(*c.became_correct == e["became_correct"].get<std::size_t>());
        CHECK(*c.became_wrong == e["became_wrong"].get<std::size_t>());
      }
    }
  }
  if (expected.contains("argmax_changed")) {
    REQUIRE(got.argmax_changed.has_value());
    CHECK(*got.argmax_changed == expected["argmax_changed"].get<std::size_t>());
    REQUIRE(got.classes.size() == expected["classes"].size());
    for (std::size_t k = 0; k < got.classes.size(); ++k) {
      const json& e = expected["classes"][k];
      const scoring::ClassShift& s = got.classes[k];
      CHECK(s.cls == e["class"].get<std::size_t>());
      CHECK(s.release == e["release"].get<std::size_t>());
      CHECK(s.other == e["other"].get<std::size_t>());
      CHECK(s.left == e["left"].get<std::size_t>());
      CHECK(s.entered == e["entered"].get<std::size_t>());
      CHECK(s.became_correct == e["became_correct"].get<std::size_t>());
      CHECK(s.became_wrong == e["became_wrong"].get<std::size_t>());
    }
  }
  if (expected.contains("ranking")) {
    REQUIRE(got.ranking.has_value());
    const json& e = expected["ranking"];
    CHECK(got.ranking->queries == e["queries"].get<std::size_t>());
    CHECK(got.ranking->top_k_changed == e["top_k_changed"].get<std::size_t>());
    CHECK(got.ranking->tau_queries == e["tau_queries"].get<std::size_t>());
    check_optional("mean_overlap", got.ranking->mean_overlap, e["mean_overlap"]);
    check_optional("mean_tau", got.ranking->mean_tau, e["mean_tau"]);
  }
}

void check_parity(const json& c, const scoring::Parity& parity) {
  std::map<std::string, const scoring::ScopeParity*> scopes{{"", &parity.overall}};
  for (const auto& segment : parity.segments)
    scopes[segment.segment] = &segment;
  REQUIRE(scopes.size() == c["parity"].size());
  for (const auto& [segment, expected] : c["parity"].items()) {
    CAPTURE(segment);
    REQUIRE(scopes.contains(segment));
    check_scope_parity(expected, *scopes.at(segment));
  }
  if (c.contains("query_parity")) {
    REQUIRE(parity.queries.size() == c["query_parity"].size());
    for (std::size_t q = 0; q < parity.queries.size(); ++q) {
      const json& e = c["query_parity"][q];
      const scoring::QueryParity& got = parity.queries[q];
      CAPTURE(got.query);
      CHECK(got.query == e["query"].get<std::string>());
      CHECK(got.records == e["records"].get<std::size_t>());
      check_close("overlap", got.overlap, e["overlap"].get<double>());
      CHECK(got.top_k_changed == e["top_k_changed"].get<bool>());
      check_optional("tau", got.tau, e["tau"]);
    }
  }
}

json load_vectors() {
  const std::string text =
      test::read_file(test::source_dir() / "tests/policies/scoring_vectors/scoring_vectors.json");
  REQUIRE_FALSE(text.empty());
  return json::parse(text);
}

}  // namespace

TEST_CASE("every metric matches scikit-learn on the generated cases, per segment") {
  const json vectors = load_vectors();
  std::set<std::string> tasks;
  for (const json& c : vectors["cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const ScoringInputs in = inputs_of(c);
    auto scores = scoring::score(in, predictions_of(c["predictions"]));
    REQUIRE(scores.ok());
    check_scores(c, *scores);
    tasks.insert(c["task"].get<std::string>());
  }
  CHECK(tasks == std::set<std::string>{"binary", "multiclass", "regression", "ranking"});
}

TEST_CASE("parity matches numpy and scipy's kendalltau on the generated cases, per segment") {
  const json vectors = load_vectors();
  std::size_t cases = 0;
  for (const json& c : vectors["cases"]) {
    if (!c.contains("other"))
      continue;
    CAPTURE(c["name"].get<std::string>());
    ++cases;
    auto parity =
        scoring::parity(inputs_of(c), predictions_of(c["predictions"]), predictions_of(c["other"]));
    REQUIRE(parity.ok());
    check_parity(c, *parity);
  }
  CHECK(cases >= 5);
}
