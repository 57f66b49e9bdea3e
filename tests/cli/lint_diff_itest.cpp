// `reverify lint` and `reverify diff` as a user runs them: output, --json and exit statuses.

#include <doctest/doctest.h>
#include <algorithm>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/manifest_fixture.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

using nlohmann::json;
using namespace reverify::test;
namespace fs = std::filesystem;

namespace {

const TempDir lint_scratch("reverify-lint-diff-itest-");

std::string fixture(const std::string& name) {
  return manifest_fixture_path(name).string();
}

Ran cli(const std::vector<std::string>& args) {
  return run_cli(args, lint_scratch.path);
}

std::string write_variant(const std::string& name, const std::function<void(json&)>& edit) {
  json doc = json::parse(manifest_fixture_text("valid_full.json"));
  edit(doc);
  const auto path = lint_scratch.path / name;
  write_file(path, doc.dump(2));
  return path.string();
}

using reverify::test::contains;
}  // namespace

TEST_CASE("lint: a complete manifest scores 100 and exits 0") {
  auto r = cli({"lint", fixture("valid_full.json")});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "digits-mlp@2026.11.1"));
  CHECK(contains(r.out, "no findings"));
  CHECK(contains(r.out, "readiness score: 100/100"));
  CHECK(r.err.empty());
}

TEST_CASE("lint: findings, --min-score and --json") {
  auto r = cli({"lint", fixture("valid_minimal.json")});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "readiness score: 5/100"));
  CHECK(contains(r.out, "error    image-digest      -15  environment.image: "));
  CHECK(contains(r.out, "fix: "));

  auto strict = cli({"lint", fixture("valid_minimal.json"), "--min-score", "50"});
  CHECK(strict.exit_code == 1);
  CHECK(contains(strict.out, "below the minimum score of 50"));

  auto as_json = cli({"lint", "--json", "--min-score=5", fixture("valid_minimal.json")});
  CHECK(as_json.exit_code == 0);
  const json j = json::parse(as_json.out);
  CHECK(j["score"] == 5);
  CHECK(j["passed"] == true);
  CHECK(j["manifest"] == "tiny@1");
  CHECK(j["findings"].size() == 11);  // the 0-point subsample-reference info included
  CHECK(j["findings"][0]["rule"] == "image-digest");
  // Plain metrics without their example counts or a scoring spec: a warning worth no points.
  const auto counts = std::find_if(j["findings"].begin(), j["findings"].end(),
                                   [](const json& f) { return f["rule"] == "counts"; });
  REQUIRE(counts != j["findings"].end());
  CHECK((*counts)["severity"] == "warning");
}

TEST_CASE("lint: an invalid manifest prints every validation error and exits 2") {
  const auto path = write_variant("invalid.json", [](json& d) {
    d["environment"]["image"] = "python:3.11-slim";
    d["environment"]["world_size"] = 0;
  });
  auto r = cli({"lint", path});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "invalid manifest (2 errors)"));
  CHECK(contains(r.err,
                 "  environment.image: must be referenced by digest "
                 "(name@sha256:<64 hex>), got \"python:3.11-slim\"\n"));
  CHECK(contains(r.err, "  environment.world_size: must be an integer >= 1, got number 0\n"));

  auto as_json = cli({"lint", "--json", path});
  CHECK(as_json.exit_code == 2);
  const json j = json::parse(as_json.out);
  CHECK(j["valid"] == false);
  REQUIRE(j["errors"].size() == 2);
  CHECK(j["errors"][0]["path"] == "environment.image");
}

TEST_CASE("lint: usage and read errors exit 2") {
  auto bad_score = cli({"lint", fixture("valid_full.json"), "--min-score", "abc"});
  CHECK(bad_score.exit_code == 2);
  CHECK(bad_score.err ==
        "reverify lint: --min-score: must be an integer from 0 to 100, got \"abc\"\n"
        "(reverify lint --help lists every option)\n");
  auto missing = cli({"lint", (lint_scratch.path / "absent.json").string()});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "reverify lint: cannot read manifest: "));
  auto none = cli({"lint"});
  CHECK(none.exit_code == 2);
}

TEST_CASE("lint: unknown fields are warned about on stderr") {
  const auto path = write_variant("extra.json", [](json& d) { d["x-team-note"] = "hi"; });
  auto r = cli({"lint", path});
  CHECK(r.exit_code == 0);
  CHECK(contains(r.err, "warning: "));
  CHECK(contains(r.err, "[\"x-team-note\"]: unknown top-level field"));
}

TEST_CASE("diff: the same manifest exits 0") {
  auto r = cli({"diff", fixture("valid_full.json"), fixture("valid_full.json")});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "same: no field differs\n");
}

TEST_CASE("diff: moved inputs are named, field by field, and the exit status is 1") {
  const auto path = write_variant("moved.json", [](json& d) {
    d["config"]["optimizer"]["lr"] = 0.002;
    d["seeds"]["python"] = 7;
    d["evaluation"]["primary"]["value"] = 0.95;
  });
  auto r = cli({"diff", fixture("valid_full.json"), path});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "inputs moved: config, seeds\n"));
  CHECK(contains(r.out, "[config]\n  config.optimizer.lr: 0.001 -> 0.002\n"));
  CHECK(contains(r.out, "[seeds]\n  seeds.python: 42 -> 7\n"));
  CHECK(contains(r.out, "[evaluation]\n  evaluation.primary.value: 0.9611 -> 0.95\n"));

  auto as_json = cli({"diff", "--json", fixture("valid_full.json"), path});
  CHECK(as_json.exit_code == 1);
  const json j = json::parse(as_json.out);
  CHECK(j["same"] == false);
  CHECK(j["inputs_moved"] == json::array({"config", "seeds"}));
  CHECK(j["sections"][0]["changes"][0] ==
        json{{"path", "config.optimizer.lr"}, {"old", 0.001}, {"new", 0.002}});
}

TEST_CASE("diff: a summary by default, every element with --full, a relocated file no move") {
  const auto path = write_variant("lists.json", [](json& d) {
    d["tolerance"]["seed_runs"]["accuracy"][1] = 0.9623;
    d["data"]["snapshot"]["uri"] = "/data/digits/2026-11";  // same sha256: the same bytes
  });
  auto r = cli({"diff", fixture("valid_full.json"), path});
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "inputs moved: none\nalso differ: tolerance\n"));
  CHECK(contains(r.out, "[tolerance]\n  tolerance.seed_runs.accuracy: 5 -> 5 runs, 1 changed\n"));
  CHECK(contains(r.out, "same content at another location (not a move): data.snapshot.uri\n"));
  CHECK_FALSE(contains(r.out, "[data]"));

  auto full = cli({"diff", "--full", fixture("valid_full.json"), path});
  CHECK(full.exit_code == 1);
  CHECK(contains(full.out, "  tolerance.seed_runs.accuracy[1]: 0.9622 -> 0.9623\n"));
  CHECK(contains(full.out,
                 "  data.snapshot.uri: \"file:///data/digits/2026-11\" -> \"/data/digits/2026-11\""
                 "  (same content)\n"));
}

TEST_CASE("diff: an invalid side exits 2 with its errors") {
  const auto path = write_variant("bad.json", [](json& d) { d.erase("model"); });
  auto r = cli({"diff", fixture("valid_full.json"), path});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "  model: required field is missing"));
  auto as_json = cli({"diff", "--json", path, fixture("valid_full.json")});
  CHECK(as_json.exit_code == 2);
  CHECK(json::parse(as_json.out)["invalid"].size() == 1);
  CHECK(cli({"diff", fixture("valid_full.json")}).exit_code == 2);
}
