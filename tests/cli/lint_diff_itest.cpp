// `reverify lint` and `reverify diff` as a user runs them: output, --json and exit statuses.

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using nlohmann::json;
namespace fs = std::filesystem;

namespace {
struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path work_dir() {
  static const fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("reverify-cli-itest-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string fixture(const std::string& name) {
  const char* source = std::getenv("REVERIFY_SOURCE_DIR");
  REQUIRE(source != nullptr);
  return std::string(source) + "/tests/core/manifests/" + name;
}

// Runs the CLI with arguments (single-quoted: the test's own paths hold no quotes).
Outcome cli(const std::vector<std::string>& args) {
  const char* binary = std::getenv("REVERIFY_CLI");
  REQUIRE(binary != nullptr);
  std::string command = std::string("'") + binary + "'";
  for (const auto& arg : args)
    command += " '" + arg + "'";
  const auto out = work_dir() / "stdout", err = work_dir() / "stderr";
  command += " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int raw = std::system(command.c_str());
  REQUIRE(WIFEXITED(raw));
  return {WEXITSTATUS(raw), slurp(out), slurp(err)};
}

std::string write_variant(const std::string& name, const std::function<void(json&)>& edit) {
  json doc = json::parse(slurp(fixture("valid_full.json")));
  edit(doc);
  const auto path = work_dir() / name;
  std::ofstream(path) << doc.dump(2);
  return path.string();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("lint: a complete manifest scores 100 and exits 0") {
  auto r = cli({"lint", fixture("valid_full.json")});
  CHECK(r.status == 0);
  CHECK(contains(r.out, "digits-mlp@2026.11.1"));
  CHECK(contains(r.out, "no findings"));
  CHECK(contains(r.out, "readiness score: 100/100"));
  CHECK(r.err.empty());
}

TEST_CASE("lint: findings, --min-score and --json") {
  auto r = cli({"lint", fixture("valid_minimal.json")});
  CHECK(r.status == 0);
  CHECK(contains(r.out, "readiness score: 5/100"));
  CHECK(contains(r.out, "error    image-digest      -15  environment.image: "));
  CHECK(contains(r.out, "fix: "));

  auto strict = cli({"lint", fixture("valid_minimal.json"), "--min-score", "50"});
  CHECK(strict.status == 1);
  CHECK(contains(strict.out, "below the minimum score of 50"));

  auto as_json = cli({"lint", "--json", "--min-score=5", fixture("valid_minimal.json")});
  CHECK(as_json.status == 0);
  const json j = json::parse(as_json.out);
  CHECK(j["score"] == 5);
  CHECK(j["passed"] == true);
  CHECK(j["manifest"] == "tiny@1");
  CHECK(j["findings"].size() == 9);
  CHECK(j["findings"][0]["rule"] == "image-digest");
}

TEST_CASE("lint: an invalid manifest prints every validation error and exits 2") {
  const auto path = write_variant("invalid.json", [](json& d) {
    d["environment"]["image"] = "python:3.11-slim";
    d["environment"]["world_size"] = 0;
  });
  auto r = cli({"lint", path});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "invalid manifest (2 errors)"));
  CHECK(contains(r.err,
                 "  environment.image: must be referenced by digest "
                 "(name@sha256:<64 hex>), got \"python:3.11-slim\"\n"));
  CHECK(contains(r.err, "  environment.world_size: must be an integer >= 1, got number 0\n"));

  auto as_json = cli({"lint", "--json", path});
  CHECK(as_json.status == 2);
  const json j = json::parse(as_json.out);
  CHECK(j["valid"] == false);
  REQUIRE(j["errors"].size() == 2);
  CHECK(j["errors"][0]["path"] == "environment.image");
}

TEST_CASE("lint: usage and read errors exit 2") {
  auto bad_score = cli({"lint", fixture("valid_full.json"), "--min-score", "abc"});
  CHECK(bad_score.status == 2);
  CHECK(bad_score.err ==
        "reverify lint: --min-score: must be an integer from 0 to 100, got \"abc\"\n"
        "(reverify lint --help lists every option)\n");
  auto missing = cli({"lint", (work_dir() / "absent.json").string()});
  CHECK(missing.status == 2);
  CHECK(contains(missing.err, "reverify lint: cannot read manifest: "));
  auto none = cli({"lint"});
  CHECK(none.status == 2);
}

TEST_CASE("lint: unknown fields are warned about on stderr") {
  const auto path = write_variant("extra.json", [](json& d) { d["x-team-note"] = "hi"; });
  auto r = cli({"lint", path});
  CHECK(r.status == 0);
  CHECK(contains(r.err, "warning: "));
  CHECK(contains(r.err, "[\"x-team-note\"]: unknown top-level field"));
}

TEST_CASE("diff: the same manifest exits 0") {
  auto r = cli({"diff", fixture("valid_full.json"), fixture("valid_full.json")});
  CHECK(r.status == 0);
  CHECK(r.out == "same: no field differs\n");
}

TEST_CASE("diff: moved inputs are named, field by field, and the exit status is 1") {
  const auto path = write_variant("moved.json", [](json& d) {
    d["config"]["optimizer"]["lr"] = 0.002;
    d["seeds"]["python"] = 7;
    d["evaluation"]["primary"]["value"] = 0.95;
  });
  auto r = cli({"diff", fixture("valid_full.json"), path});
  CHECK(r.status == 1);
  CHECK(contains(r.out, "inputs moved: config, seeds\n"));
  CHECK(contains(r.out, "[config]\n  config.optimizer.lr: 0.001 -> 0.002\n"));
  CHECK(contains(r.out, "[seeds]\n  seeds.python: 42 -> 7\n"));
  CHECK(contains(r.out, "[evaluation]\n  evaluation.primary.value: 0.9611 -> 0.95\n"));

  auto as_json = cli({"diff", "--json", fixture("valid_full.json"), path});
  CHECK(as_json.status == 1);
  const json j = json::parse(as_json.out);
  CHECK(j["same"] == false);
  CHECK(j["inputs_moved"] == json::array({"config", "seeds"}));
  CHECK(j["sections"][0]["changes"][0] ==
        json{{"path", "config.optimizer.lr"}, {"old", 0.001}, {"new", 0.002}});
}

TEST_CASE("diff: an invalid side exits 2 with its errors") {
  const auto path = write_variant("bad.json", [](json& d) { d.erase("model"); });
  auto r = cli({"diff", fixture("valid_full.json"), path});
  CHECK(r.status == 2);
  CHECK(contains(r.err, "  model: required field is missing"));
  auto as_json = cli({"diff", "--json", path, fixture("valid_full.json")});
  CHECK(as_json.status == 2);
  CHECK(json::parse(as_json.out)["invalid"].size() == 1);
  CHECK(cli({"diff", fixture("valid_full.json")}).status == 2);
}
