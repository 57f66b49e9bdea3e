// evaluation.scoring: valid specs of every task round-trip through to_json, and each malformed
// spec gives its exact errors, each naming its JSON path and what was expected.

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/manifest_json.hpp"
#include "core/manifest_parse.hpp"
#include "tests/support/manifest_fixture.hpp"

using nlohmann::json;
using namespace reverify;

namespace {

const std::string kScoringSha(64, 'c');

json with_scoring(json scoring) {
  json doc = json::parse(test::manifest_fixture_text("valid_full.json"));
  doc["evaluation"]["scoring"] = std::move(scoring);
  return doc;
}

json multiclass_spec() {
  return {{"task", "multiclass"},
          {"labels", {{"column", "label"}}},
          {"classes", 10},
          {"metrics", {"accuracy", "f1", "roc_auc"}},
          {"segments",
           {{{"column", "label"}, {"name", "digit"}},
            {{"uri", "segments.csv"}, {"sha256", kScoringSha}, {"column", "radius"}}}}};
}

json binary_spec() {
  return {{"task", "binary"},
          {"labels", {{"uri", "labels.npy"}, {"sha256", kScoringSha}}},
          {"thresholds", {0.5, 0.3}},
          {"segments", {{{"uri", "data/region.txt"}, {"sha256", kScoringSha}}}}};
}

json ranking_spec() {
  return {{"task", "ranking"},
          {"labels", {{"column", "relevance"}}},
          {"k", 10},
          {"query", {{"column", "qid"}}}};
}

json regression_spec() {
  return {{"task", "regression"}, {"labels", {{"column", "price"}}}, {"thresholds", {100.0}}};
}

std::vector<std::string> errors_of(const json& doc) {
  std::vector<std::string> texts;
  for (const auto& e : parse_manifest(doc.dump()).errors)
    texts.push_back(e.to_string());
  return texts;
}

Manifest parsed(const json& doc) {
  auto parse = parse_manifest(doc.dump());
  INFO(doc["evaluation"]["scoring"].dump());
  for (const auto& e : parse.errors)
    INFO(e.to_string());
  REQUIRE(parse.ok());
  return *parse.manifest;
}

}  // namespace

TEST_CASE("a scoring spec of each task parses into the model and round-trips through to_json") {
  for (const json& spec : {multiclass_spec(), binary_spec(), ranking_spec(), regression_spec()}) {
    CAPTURE(spec.dump());
    const Manifest m = parsed(with_scoring(spec));
    REQUIRE(m.evaluation.scoring.has_value());
    CHECK(parsed(to_json(m)) == m);
  }
  const ScoringSpec s = *parsed(with_scoring(multiclass_spec())).evaluation.scoring;
  CHECK(s.task == ScoringTask::multiclass);
  CHECK(s.labels == RecordColumn{std::nullopt, std::nullopt, "label"});
  CHECK(*s.classes == 10);
  CHECK(s.metrics ==
        std::vector{ScoringMetric::accuracy, ScoringMetric::f1, ScoringMetric::roc_auc});
  REQUIRE(s.segments.size() == 2);
  CHECK(s.segments[0].name == "digit");
  CHECK(s.segments[1].name == "radius");  // the default: the column's name
  CHECK(*s.segments[1].values.uri == "segments.csv");
  const ScoringSpec b = *parsed(with_scoring(binary_spec())).evaluation.scoring;
  CHECK(b.thresholds == std::vector{0.5, 0.3});
  CHECK(b.segments[0].name == "region");  // the default: the file's stem
  CHECK(b.metrics.empty());               // absent: the task's full set
  const ScoringSpec r = *parsed(with_scoring(ranking_spec())).evaluation.scoring;
  CHECK(*r.k == 10);
  CHECK(r.query->column == "qid");
}

TEST_CASE("a manifest without a scoring spec has none and writes none") {
  const Manifest m = test::manifest_fixture("valid_full.json");
  CHECK_FALSE(m.evaluation.scoring.has_value());
  CHECK_FALSE(to_json(m)["evaluation"].contains("scoring"));
}

TEST_CASE("task and metric names: one table each, both ways; metrics belong to tasks") {
  for (auto task : {ScoringTask::binary, ScoringTask::multiclass, ScoringTask::regression,
                    ScoringTask::ranking}) {
    CHECK(enum_from_string<ScoringTask>(to_string(task)) == task);
    for (ScoringMetric metric : task_metrics(task)) {
      CHECK(enum_from_string<ScoringMetric>(to_string(metric)) == metric);
      CHECK(metric_applies(metric, task));
    }
  }
  CHECK(task_metrics(ScoringTask::binary).size() == 9);
  CHECK(task_metrics(ScoringTask::multiclass) == task_metrics(ScoringTask::binary));
  CHECK(task_metrics(ScoringTask::regression) ==
        std::vector{ScoringMetric::rmse, ScoringMetric::mae, ScoringMetric::r2});
  CHECK(task_metrics(ScoringTask::ranking) ==
        std::vector{ScoringMetric::ndcg_at_k, ScoringMetric::mrr, ScoringMetric::precision_at_k});
  CHECK_FALSE(higher_is_better(ScoringMetric::rmse));
  CHECK_FALSE(higher_is_better(ScoringMetric::log_loss));
  CHECK(higher_is_better(ScoringMetric::r2));
  CHECK_FALSE(enum_from_string<ScoringMetric>("ndcg").has_value());
}

TEST_CASE("malformed scoring specs: each gives its exact errors") {
  const std::string kMetricsOfMulticlass =
      "a metric of task multiclass: one of accuracy, balanced_accuracy, precision, recall, f1, "
      "roc_auc, pr_auc, log_loss, brier";
  const std::string kRecordColumn =
      "an object naming a column of the eval set ({\"column\": NAME}) or a file ({\"uri\", "
      "\"sha256\"} and, for a CSV with a header row, \"column\")";
  const std::string kName = "a name matching [A-Za-z0-9][A-Za-z0-9._-]{0,127}";
  struct Case {
    std::string name;
    json spec;
    std::function<void(json&)> mutate;
    std::vector<std::string> expected;
  };
  const std::string at = "evaluation.scoring";
  const std::vector<Case> cases = {
      {"not an object",
       multiclass_spec(),
       [](json& s) { s = "multiclass"; },
       {at + ": must be an object, got \"multiclass\""}},
      {"missing task",
       multiclass_spec(),
       [](json& s) { s.erase("task"); },
       {at + ".task: required field is missing (must be one of binary, multiclass, regression, "
             "ranking)"}},
      {"unknown task",
       multiclass_spec(),
       [](json& s) { s["task"] = "clustering"; },
       {at + ".task: must be one of binary, multiclass, regression, ranking, got \"clustering\""}},
      {"missing labels",
       multiclass_spec(),
       [](json& s) { s.erase("labels"); },
       {at + ".labels: required field is missing (must be " + kRecordColumn + ")"}},
      {"labels naming nothing",
       multiclass_spec(),
       [](json& s) { s["labels"] = json::object(); },
       {at +
        ".labels: must name a column of the eval set ({\"column\": NAME}) or a file ({\"uri\", "
        "\"sha256\"})"}},
      {"labels file without its hash",
       binary_spec(),
       [](json& s) { s["labels"].erase("sha256"); },
       {at + ".labels.sha256: required field is missing with \"uri\" (must be 64 lowercase hex "
             "characters (sha256) of the file)"}},
      {"labels file with a bad hash",
       binary_spec(),
       [](json& s) { s["labels"]["sha256"] = "abc"; },
       {at + ".labels.sha256: must be 64 lowercase hex characters (sha256), got \"abc\""}},
      {"empty column name",
       multiclass_spec(),
       [](json& s) { s["labels"]["column"] = ""; },
       {at + ".labels.column: must be a non-empty string, got \"\""}},
      {"multiclass without classes",
       multiclass_spec(),
       [](json& s) { s.erase("classes"); },
       {at +
        ".classes: required field is missing for task multiclass (must be an integer >= 2 (the "
        "number of classes))"}},
      {"one class",
       multiclass_spec(),
       [](json& s) { s["classes"] = 1; },
       {at + ".classes: must be an integer >= 2 (the number of classes), got number 1"}},
      {"binary with three classes",
       binary_spec(),
       [](json& s) { s["classes"] = 3; },
       {at + ".classes: must be 2 for task binary (labels are 0 and 1), got number 3"}},
      {"classes for regression",
       regression_spec(),
       [](json& s) { s["classes"] = 3; },
       {at + ".classes: not taken by task regression (only by binary and multiclass)"}},
      {"unknown metric",
       multiclass_spec(),
       [](json& s) { s["metrics"][1] = "f2"; },
       {at + ".metrics[1]: must be " + kMetricsOfMulticlass + ", got \"f2\""}},
      {"a metric of another task",
       multiclass_spec(),
       [](json& s) { s["metrics"][0] = "rmse"; },
       {at + ".metrics[0]: must be " + kMetricsOfMulticlass + ", got \"rmse\""}},
      {"duplicate metric",
       multiclass_spec(),
       [](json& s) { s["metrics"][2] = "f1"; },
       {at + ".metrics[2]: duplicate metric \"f1\""}},
      {"empty metrics",
       multiclass_spec(),
       [](json& s) { s["metrics"] = json::array(); },
       {at + ".metrics: must be a non-empty array of metric names, got an array"}},
      {"segments not an array",
       multiclass_spec(),
       [](json& s) { s["segments"] = "label"; },
       {at + ".segments: must be an array of segment keys, got \"label\""}},
      {"segment key not an object",
       multiclass_spec(),
       [](json& s) { s["segments"][1] = 3; },
       {at + ".segments[1]: must be an object, got number 3"}},
      {"segment key naming nothing",
       multiclass_spec(),
       [](json& s) {
         s["segments"][0] = {{"name", "digit"}};
       },
       {at + ".segments[0]: must name a column of the eval set ({\"column\": NAME}) or a file "
             "({\"uri\", \"sha256\"})"}},
      {"segment name with '='",
       multiclass_spec(),
       [](json& s) { s["segments"][0]["name"] = "digit=1"; },
       {at + ".segments[0].name: must be " + kName + ", got \"digit=1\""}},
      {"default segment name that is not a name",
       multiclass_spec(),
       [](json& s) { s["segments"][1]["column"] = "radius (km)"; },
       {at +
        ".segments[1].name: required field is missing: the default, \"radius (km)\", is "
        "not " +
        kName}},
      {"duplicate segment key names",
       multiclass_spec(),
       [](json& s) { s["segments"][1]["name"] = "digit"; },
       {at + ".segments[1].name: duplicate segment key name \"digit\" (" + at +
        ".segments[0] has it)"}},
      {"thresholds for multiclass",
       multiclass_spec(),
       [](json& s) { s["thresholds"] = {0.5}; },
       {at + ".thresholds: not taken by task multiclass (only by binary and regression)"}},
      {"empty thresholds",
       binary_spec(),
       [](json& s) { s["thresholds"] = json::array(); },
       {at + ".thresholds: must be a non-empty array of numbers, got an array"}},
      {"threshold not a number",
       binary_spec(),
       [](json& s) { s["thresholds"][1] = "0.3"; },
       {at + ".thresholds[1]: must be a number, got \"0.3\""}},
      {"duplicate threshold",
       binary_spec(),
       [](json& s) { s["thresholds"][1] = 0.5; },
       {at + ".thresholds[1]: duplicate threshold number 0.5"}},
      {"ranking without k and query",
       ranking_spec(),
       [](json& s) {
         s.erase("k");
         s.erase("query");
       },
       {at + ".k: required field is missing for task ranking (must be an integer >= 1 (the "
             "cut-off of ndcg@k and precision@k))",
        at + ".query: required field is missing for task ranking (must be " + kRecordColumn + ")"}},
      {"k of 0",
       ranking_spec(),
       [](json& s) { s["k"] = 0; },
       {at + ".k: must be an integer >= 1 (the cut-off of ndcg@k and precision@k), got number 0"}},
      {"k and query for binary",
       binary_spec(),
       [](json& s) {
         s["k"] = 5;
         s["query"] = {{"column", "qid"}};
       },
       {at + ".k: not taken by task binary (only by ranking)",
        at + ".query: not taken by task binary (only by ranking)"}},
      {"query naming nothing",
       ranking_spec(),
       [](json& s) {
         s["query"] = {{"sha256", kScoringSha}};
       },
       {at + ".query: must name a column of the eval set ({\"column\": NAME}) or a file ({\"uri\", "
             "\"sha256\"})"}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    json doc = with_scoring(c.spec);
    c.mutate(doc["evaluation"]["scoring"]);
    CHECK(errors_of(doc) == c.expected);
  }
}

TEST_CASE("a column of the eval set needs evaluation.set") {
  json doc = with_scoring(ranking_spec());
  doc["evaluation"].erase("set");
  CHECK(errors_of(doc) ==
        std::vector<std::string>{
            "evaluation.scoring.labels.column: names a column of the eval set, but "
            "evaluation.set is missing (record the eval set, or give the file's \"uri\" and "
            "\"sha256\")",
            "evaluation.scoring.query.column: names a column of the eval set, but "
            "evaluation.set is missing (record the eval set, or give the file's \"uri\" and "
            "\"sha256\")"});
  // A file needs no eval set.
  json files = with_scoring(binary_spec());
  files["evaluation"].erase("set");
  CHECK(errors_of(files).empty());
}

TEST_CASE("unknown keys inside the scoring spec are warned about, not kept") {
  json doc = with_scoring(binary_spec());
  doc["evaluation"]["scoring"]["averaging"] = "micro";
  doc["evaluation"]["scoring"]["labels"]["dtype"] = "int";
  const auto parse = parse_manifest(doc.dump());
  REQUIRE(parse.ok());
  CHECK(parse.warnings ==
        std::vector<std::string>{"evaluation.scoring.labels.dtype: unknown field, ignored",
                                 "evaluation.scoring.averaging: unknown field, ignored"});
}

TEST_CASE("metric names as jobs write them: taken as they are, or the spelling to use") {
  ScoringSpec ranking;
  ranking.task = ScoringTask::ranking;
  ranking.k = 10;
  ScoringSpec binary;
  binary.task = ScoringTask::binary;
  ScoringSpec regression;
  regression.task = ScoringTask::regression;
  // Taken as they are: the table's names, the cut-off written out as the spec's k, a threshold
  // after a classification metric; and names of no metric the task computes.
  for (const auto& [name, spec] :
       std::vector<std::pair<std::string, ScoringSpec>>{{"ndcg@k", ranking},
                                                        {"ndcg@10", ranking},
                                                        {"precision@10", ranking},
                                                        {"precision@k", ranking},
                                                        {"mrr", ranking},
                                                        {"map@10", ranking},
                                                        {"mrr@10", ranking},
                                                        {"ndcg", ranking},
                                                        {"accuracy", binary},
                                                        {"accuracy@0.5", binary},
                                                        {"roc_auc", binary},
                                                        {"rmse", regression},
                                                        {"loss", regression},
                                                        {"ndcg@10", binary}}) {
    CAPTURE(name);
    CHECK_FALSE(metric_spelling_to_use(name, spec).has_value());
  }
  // Meant as one of the task's metrics, spelled otherwise: the spelling to use.
  for (const auto& [name, spec, use] :
       std::vector<std::tuple<std::string, ScoringSpec, std::string>>{
           {"NDCG@10", ranking, "name it ndcg@10 (or ndcg@k)"},
           {"ndcg_at_10", ranking, "name it ndcg@10 (or ndcg@k)"},
           {"ndcg@K", ranking, "name it ndcg@10 (or ndcg@k)"},
           {"p@10", ranking, "name it precision@10 (or precision@k)"},
           {"ndcg@5", ranking,
            "ndcg@5 names the cut-off 5, the scoring spec's k is 10: name it ndcg@10 (or ndcg@k), "
            "or set evaluation.scoring.k to 5"},
           {"MRR", ranking, "name it mrr"},
           {"Accuracy", binary, "name it accuracy"},
           {"accuracy_score", binary, "name it accuracy"},
           {"AUC", binary, "name it roc_auc"},
           {"F1@0.3", binary, "name it f1@0.3"},
           {"RMSE", regression, "name it rmse"},
           {"mean_absolute_error", regression, "name it mae"}}) {
    CAPTURE(name);
    CHECK(metric_spelling_to_use(name, spec) == use);
  }
}

TEST_CASE("misspelled_metrics: the primary and every segment metric, with their paths") {
  Evaluation ev;
  ev.primary.name = "NDCG@10";
  ev.segments["market=de"]["ndcg@10"] = 0.9;
  ev.segments["market=us"]["ndcg@5"] = 0.9;
  CHECK(misspelled_metrics(ev).empty());  // no scoring spec: every name is the job's
  ev.scoring = ScoringSpec{};
  ev.scoring->task = ScoringTask::ranking;
  ev.scoring->k = 10;
  const auto found = misspelled_metrics(ev);
  REQUIRE(found.size() == 2);
  CHECK(found[0].path == "evaluation.primary.name");
  CHECK(found[0].name == "NDCG@10");
  CHECK(found[1].path == "evaluation.segments.market=us");
  CHECK(found[1].use.find("the scoring spec's k is 10") != std::string::npos);
}
