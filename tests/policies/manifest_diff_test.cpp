// Manifest diff: sections and field paths that differ, with old and new values.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "core/manifest_parse.hpp"
#include "policies/manifest_diff.hpp"
#include "tests/support/manifest_fixture.hpp"

using nlohmann::json;
using reverify::Manifest;

namespace {
Manifest fixture() {
  return reverify::test::manifest_fixture("valid_full.json");
}

std::vector<std::string> section_names(const reverify::ManifestDiff& diff) {
  std::vector<std::string> names;
  for (const auto& s : diff.sections)
    names.push_back(s.section);
  return names;
}
}  // namespace

TEST_CASE("identical manifests have an empty diff") {
  const Manifest m = fixture();
  auto diff = reverify::diff_manifests(m, m);
  CHECK(diff.empty());
  CHECK(reverify::to_json(diff) ==
        json{{"same", true}, {"inputs_moved", json::array()}, {"sections", json::array()}});
}

TEST_CASE("each input section is reported with the field that moved") {
  const Manifest a = fixture();
  Manifest b = a;
  b.data->snapshot->sha256 = std::string(64, 'b');
  b.code.commit = std::string(40, 'c');
  (*b.config)["optimizer"]["lr"] = 0.002;
  b.environment->image = "registry.example/train@sha256:" + std::string(64, 'e');
  b.seeds["python"] = 43;
  auto diff = reverify::diff_manifests(a, b);
  CHECK(section_names(diff) ==
        std::vector<std::string>{"data", "code", "config", "environment", "seeds"});
  CHECK(diff.moved_inputs() == section_names(diff));
  const auto& config = diff.sections[2].changes;
  REQUIRE(config.size() == 1);
  CHECK(config[0].path == "config.optimizer.lr");
  CHECK(*config[0].old_value == 0.001);
  CHECK(*config[0].new_value == 0.002);
  CHECK(diff.sections[0].changes[0].path == "data.snapshot.sha256");
  CHECK(diff.sections[4].changes[0].path == "seeds.python");
  CHECK(*diff.sections[4].changes[0].old_value == 42);
}

TEST_CASE("config is compared recursively, with added and removed keys") {
  const Manifest a = fixture();
  Manifest b = a;
  (*b.config)["model"]["hidden"][1] = 64;
  (*b.config)["model"]["hidden"].push_back(32);
  (*b.config)["train"].erase("max_steps");
  (*b.config)["scheduler"] = {{"name", "cosine"}};
  auto diff = reverify::diff_manifests(a, b);
  REQUIRE(section_names(diff) == std::vector<std::string>{"config"});
  const auto& c = diff.sections[0].changes;
  REQUIRE(c.size() == 4);
  CHECK(c[0].path == "config.model.hidden[1]");
  CHECK(c[1].path == "config.model.hidden[2]");
  CHECK_FALSE(c[1].old_value.has_value());
  CHECK(*c[1].new_value == 32);
  CHECK(c[2].path == "config.scheduler");
  CHECK(*c[2].new_value == json{{"name", "cosine"}});
  CHECK(c[3].path == "config.train.max_steps");
  CHECK(*c[3].old_value == 3000);
  CHECK_FALSE(c[3].new_value.has_value());
}

TEST_CASE("evaluation, weights and non-input sections differ without moving inputs") {
  const Manifest a = fixture();
  Manifest b = a;
  b.evaluation.primary.value = 0.95;
  b.evaluation.segments["digit=8"]["accuracy"] = 0.91;
  b.weights->tensor_sha256 = std::string(64, 'f');
  b.run.started_at = "2026-12-02T03:00:00Z";
  b.version = "2026.12.1";
  b.extra["x-note"] = "rebuilt";
  auto diff = reverify::diff_manifests(a, b);
  CHECK(section_names(diff) ==
        std::vector<std::string>{"evaluation", "weights", "run", "identity", "extra"});
  CHECK(diff.moved_inputs().empty());
  CHECK(diff.sections[0].changes[0].path == "evaluation.primary.value");
  CHECK(diff.sections[0].changes[1].path == "evaluation.segments[\"digit=8\"].accuracy");
  CHECK(diff.sections[4].changes[0].path == "[\"x-note\"]");
  auto j = reverify::to_json(diff);
  CHECK(j["same"] == false);
  CHECK(j["sections"][1]["section"] == "weights");
  CHECK(j["sections"][1]["input"] == false);
  CHECK(j["sections"][1]["changes"][0]["path"] == "weights.tensor_sha256");
  CHECK(j["sections"][1]["changes"][0]["new"] == std::string(64, 'f'));
}

TEST_CASE("a whole section present on one side only is one change") {
  const Manifest a = fixture();
  Manifest b = a;
  b.environment.reset();
  auto diff = reverify::diff_manifests(a, b);
  REQUIRE(section_names(diff) == std::vector<std::string>{"environment"});
  REQUIRE(diff.sections[0].changes.size() == 1);
  CHECK(diff.sections[0].changes[0].path == "environment");
  CHECK_FALSE(diff.sections[0].changes[0].new_value.has_value());
  auto j = reverify::to_json(diff);
  CHECK_FALSE(j["sections"][0]["changes"][0].contains("new"));
}

TEST_CASE("a uri spelt differently beside the same hash moves nothing") {
  const Manifest a = fixture();
  for (const std::string spelling :
       {"../../data/digits/2026-11", "./data/digits/2026-11", "/data/digits/2026-11"}) {
    CAPTURE(spelling);
    Manifest b = a;
    b.data->snapshot->uri = spelling;
    b.evaluation.set->uri = "./" + spelling;
    auto diff = reverify::diff_manifests(a, b);
    REQUIRE(section_names(diff) == std::vector<std::string>{"data", "evaluation"});
    CHECK(diff.moved_inputs().empty());
    CHECK(diff.sections[0].changes[0].path == "data.snapshot.uri");
    CHECK(diff.sections[0].changes[0].location_only);
    CHECK_FALSE(diff.sections[0].moved());
    auto summary = reverify::summarize(diff);
    CHECK(summary.inputs_moved.empty());
    CHECK(summary.also_differ.empty());
    CHECK(summary.sections.empty());
    CHECK(summary.relocated == std::vector<std::string>{"data.snapshot.uri", "evaluation.set.uri"});
    CHECK(reverify::to_json(diff)["sections"][0]["changes"][0]["location_only"] == true);
  }
}

TEST_CASE("a uri beside another hash is a move, and so is the hash") {
  const Manifest a = fixture();
  Manifest b = a;
  b.data->snapshot->uri = "./data/digits/2026-12";
  b.data->snapshot->sha256 = std::string(64, 'd');
  b.weights->uri = "/models/model.safetensors";
  b.weights->tensor_sha256 = std::string(64, 'f');
  auto diff = reverify::diff_manifests(a, b);
  REQUIRE(section_names(diff) == std::vector<std::string>{"data", "weights"});
  CHECK(diff.moved_inputs() == std::vector<std::string>{"data"});
  for (const auto& section : diff.sections) {
    for (const auto& change : section.changes)
      CHECK_FALSE(change.location_only);
  }
  auto summary = reverify::summarize(diff);
  CHECK(summary.relocated.empty());
  CHECK(summary.also_differ == std::vector<std::string>{"weights"});
  REQUIRE(summary.sections.size() == 2);
  CHECK(summary.sections[0].lines.size() == 2);  // data.snapshot.sha256 and data.snapshot.uri
}

TEST_CASE("the weights' uri beside the same tensor hash moves nothing") {
  const Manifest a = fixture();
  Manifest b = a;
  b.weights->uri = "./model.safetensors";
  auto diff = reverify::diff_manifests(a, b);
  REQUIRE(section_names(diff) == std::vector<std::string>{"weights"});
  CHECK(diff.sections[0].changes[0].location_only);
  CHECK(reverify::summarize(diff).relocated == std::vector<std::string>{"weights.uri"});
}

TEST_CASE("the summary collapses arrays to counts and large groups to one line") {
  const Manifest a = fixture();
  Manifest b = a;
  b.tolerance->seed_runs["accuracy"] = {0.9605, 0.9623, 0.9611, 0.9599, 0.9617, 0.96};
  b.evaluation.steps->values = {2.3, 2.12, 1.97};
  b.tolerance->steps_same_seed_runs[1][2] = 1.95;
  for (const std::string segment : {"digit=1", "digit=2", "digit=3", "digit=4", "digit=5"})
    b.evaluation.segments[segment]["accuracy"] = 0.9;
  b.evaluation.primary.value = 0.95;
  auto diff = reverify::diff_manifests(a, b);
  // --full keeps every element
  CHECK(diff.sections[0].changes.size() == 1 + 5 + 2);
  auto summary = reverify::summarize(diff);
  CHECK(summary.inputs_moved.empty());
  CHECK(summary.also_differ == std::vector<std::string>{"evaluation", "tolerance"});
  REQUIRE(summary.sections.size() == 2);
  const auto& evaluation = summary.sections[0].lines;
  REQUIRE(evaluation.size() == 3);
  CHECK(evaluation[0].path == "evaluation.primary.value");
  CHECK(evaluation[0].text == "0.9611 -> 0.95");
  CHECK(evaluation[1].path == "evaluation.segments");
  // segments new in B: each a whole object added
  CHECK(evaluation[1].text == "5 fields changed: [\"digit=1\"], [\"digit=2\"], [\"digit=3\"], ...");
  CHECK(evaluation[2].path == "evaluation.steps.values");
  CHECK(evaluation[2].text == "3 -> 3 values, 2 changed");
  const auto& tolerance = summary.sections[1].lines;
  REQUIRE(tolerance.size() == 2);
  CHECK(tolerance[0].path == "tolerance.seed_runs.accuracy");
  CHECK(tolerance[0].text == "5 -> 6 runs, 3 changed");
  CHECK(tolerance[1].path == "tolerance.steps_same_seed_runs");
  CHECK(tolerance[1].text == "3 -> 3 runs, 1 changed");
}

TEST_CASE("a moved subsample reference is its own section, summarised like the evaluation") {
  const Manifest a = fixture();
  Manifest b = a;
  auto& reference = *b.subsample;
  reference.fraction = 0.5;
  reference.salt = "digits-subsample-2";
  reference.evaluation.primary.value = 0.95;
  for (const std::string segment : {"digit=1", "digit=2", "digit=3", "digit=4"})
    reference.evaluation.segments[segment]["accuracy"] = 0.9;
  reference.evaluation.predictions->sha256 = std::string(64, 'c');
  reference.weights->tensor_sha256 = std::string(64, 'd');
  reference.tolerance->seed_runs["accuracy"] = {0.931, 0.937, 0.929};
  auto diff = reverify::diff_manifests(a, b);
  CHECK(section_names(diff) == std::vector<std::string>{"subsample"});
  CHECK(diff.moved_inputs().empty());
  CHECK_FALSE(diff.sections[0].input);
  // --full: every field and element, by its path under subsample
  std::vector<std::string> paths;
  for (const auto& change : diff.sections[0].changes)
    paths.push_back(change.path);
  CHECK(std::find(paths.begin(), paths.end(), "subsample.fraction") != paths.end());
  CHECK(std::find(paths.begin(), paths.end(), "subsample.weights.tensor_sha256") != paths.end());
  CHECK(std::find(paths.begin(), paths.end(), "subsample.tolerance.seed_runs.accuracy[1]") !=
        paths.end());

  const auto summary = reverify::summarize(diff);
  CHECK(summary.also_differ == std::vector<std::string>{"subsample"});
  REQUIRE(summary.sections.size() == 1);
  std::map<std::string, std::string> lines;
  for (const auto& line : summary.sections[0].lines)
    lines[line.path] = line.text;
  CHECK(lines["subsample.fraction"] == "0.25 -> 0.5");
  CHECK(lines["subsample.salt"] == "\"digits-subsample-1\" -> \"digits-subsample-2\"");
  CHECK(lines["subsample.evaluation.primary.value"] == "0.9335 -> 0.95");
  // more than kSummaryGroupLines segments: one line under the subsample's own evaluation
  CHECK(lines["subsample.evaluation.segments"] ==
        "4 fields changed: [\"digit=1\"], [\"digit=2\"], [\"digit=3\"], ...");
  CHECK(lines["subsample.evaluation.predictions.sha256"].find("\"3f310a62d21a8aacf9b...\" -> ") ==
        0);
  CHECK(lines.count("subsample.weights.tensor_sha256") == 1);
  CHECK(lines["subsample.tolerance.seed_runs.accuracy"] == "5 -> 3 runs, 3 changed");
  CHECK(lines.size() == 7);
  const auto json = reverify::to_json(diff);
  CHECK(json["sections"][0]["section"] == "subsample");
  CHECK(json["sections"][0]["moved"] == true);
  REQUIRE(json["sections"][0]["lists"].size() == 1);
  CHECK(json["sections"][0]["lists"][0]["path"] == "subsample.tolerance.seed_runs.accuracy");
}

TEST_CASE("a subsample reference added on one side is one change") {
  Manifest a = fixture();
  a.subsample.reset();
  const auto diff = reverify::diff_manifests(a, fixture());
  REQUIRE(diff.sections.size() == 1);
  CHECK(diff.sections[0].section == "subsample");
  REQUIRE(diff.sections[0].changes.size() == 1);
  CHECK(diff.sections[0].changes[0].path == "subsample");
  CHECK_FALSE(diff.sections[0].changes[0].old_value.has_value());
}
