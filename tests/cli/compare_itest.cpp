// `reverify compare ORIGINAL REBUILT` as a pipeline owner runs it: table, --json, --tolerances and
// exit statuses (0 within bounds, 1 a check failed, 2 usage or input error).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/hashing.hpp"
#include "core/predictions.hpp"
#include "policies/checks.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"

namespace fs = std::filesystem;
using namespace reverify;
using namespace reverify::test;

namespace {

const TempDir temp("reverify-compare-itest-");

// `reverify compare ARGS...`
Ran compare(std::vector<std::string> args) {
  args.insert(args.begin(), "compare");
  return run_cli(args, temp.path);
}

std::string npy(const std::string& name, std::vector<double> values) {
  Predictions p;
  p.rows = values.size();
  p.values = std::move(values);
  const auto path = temp.path / name;
  REQUIRE(write_npy(path, p).ok());
  return path.string();
}

std::string file(const std::string& name, const std::string& content) {
  write_file(temp.path / name, content);
  return (temp.path / name).string();
}

std::vector<double> ramp(std::size_t n, double scale, double offset) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = offset + scale * static_cast<double>(i) / static_cast<double>(n);
  return v;
}

}  // namespace

TEST_CASE("json output holds every statistic, both sides' quantiles and the paired statistics") {
  const auto a = npy("a.npy", ramp(1000, 1, 0));
  const auto csv = file("a.csv", "score\n0.1\n0.6\n0.9\n");
  const auto r = compare({a, a, "--json"});
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["ks"] == 0.0);
  CHECK(j["psi"] == 0.0);
  CHECK(j["wasserstein"] == 0.0);
  CHECK(j["quantiles"]["original"]["p50"] == j["quantiles"]["rebuilt"]["p50"]);
  CHECK(j["paired"]["flip_rate"] == 0.0);
  CHECK(j["checks"].empty());  // no bounds given: nothing was judged, and it says so
  CHECK(j["outcome"] == "not judged");
  const auto table = compare({a, a});
  CHECK(table.exit_code == 0);
  CHECK(table.out.find("distribution:ks                    0                -                -    "
                       "        not judged\n") != std::string::npos);
  CHECK(table.out.find("\nnot judged: no bounds were given (--tolerances FILE)") !=
        std::string::npos);
  const auto mixed = compare({a, csv, "--json"});
  REQUIRE(mixed.exit_code == 0);
  CHECK(nlohmann::json::parse(mixed.out)["paired"].is_null());  // different row counts
}

TEST_CASE(
    "tolerances: explicit bounds and seed-run pairs give each check a verdict; failures exit 1") {
  const auto a = npy("a.npy", ramp(1000, 1, 0));
  const auto near = npy("near.npy", ramp(1000, 1, 0.001));
  const auto far = npy("far.npy", ramp(1000, 0.5, 0.5));
  const auto tol = file(
      "tol.json", R"({"distribution_seed_runs": {"ks": 0.05, "psi": [0.001, 0.002, 0.0015]}})");
  auto r = compare({a, near, "--json", "--tolerances", tol});
  CHECK(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["outcome"] == "passed");
  CHECK(j["checks"].size() == 6);
  r = compare({a, far, "--tolerances", tol});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("failed") != std::string::npos);
  CHECK(r.out.find("p99") != std::string::npos);
}

TEST_CASE("a file of bounds alone splits the false-page rate over its own banded statistics") {
  const auto a = npy("alpha-a.npy", ramp(1000, 1, 0));
  const auto near = npy("alpha-near.npy", ramp(1000, 1, 0.001));
  const auto tol =
      file("alpha.json", R"({"psi": [0.001, 0.002, 0.0015], "ks": [0.01, 0.02, 0.015]})");
  auto alphas = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {a, near, "--json", "--tolerances", tol};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto j = nlohmann::json::parse(compare(args).out);
    std::vector<double> out;
    for (const auto& check : j["checks"]) {
      if (check["evidence"].contains("alpha"))
        out.push_back(check["evidence"]["alpha"].get<double>());
    }
    return out;
  };
  CHECK(alphas({}) == std::vector<double>{0.005, 0.005});  // 0.01 over 2 banded statistics
  CHECK(alphas({"--false-page-rate", "0.02"}) == std::vector<double>{0.01, 0.01});
}

TEST_CASE("--threshold decides 1-D flips") {
  const auto a = npy("t1.npy", {0.2, 0.4, 0.6});
  const auto b = npy("t2.npy", {0.35, 0.4, 0.6});
  auto j = nlohmann::json::parse(compare({a, b, "--json"}).out);
  CHECK(j["paired"]["flip_rate"] == 0.0);
  j = nlohmann::json::parse(compare({a, b, "--json", "--threshold", "0.3"}).out);
  CHECK(std::abs(j["paired"]["flip_rate"].get<double>() - 1.0 / 3) < 1e-12);
}

namespace {

// A ranking release of 30 queries of 5 documents: its eval set (qid, relevance), its predictions
// and a manifest with a ranking scoring spec (k = 3) that names them; returns the manifest's path.
std::string ranking_release(const std::vector<double>& scores) {
  std::string eval = "qid,relevance\n";
  for (std::size_t row = 0; row < scores.size(); ++row)
    eval += "q" + std::to_string(row / 5) + "," + std::to_string((row * 7) % 3) + "\n";
  file("ranking-eval.csv", eval);
  const auto release = npy("ranking-release.npy", scores);
  nlohmann::json manifest = nlohmann::json::parse(R"({
    "schema": "reverify.manifest/v1", "model": "search", "version": "1", "owner": "team-search",
    "level": "equivalent", "code": {"commit": "0000000000000000000000000000000000000000"},
    "run": {"entrypoint": ["python3", "train.py"]},
    "evaluation": {
      "primary": {"name": "ndcg@k", "value": 0.9, "higher_is_better": true},
      "scoring": {"task": "ranking", "labels": {"column": "relevance"}, "k": 3,
                  "query": {"column": "qid"}}}})");
  manifest["evaluation"]["set"] = {{"uri", "ranking-eval.csv"}, {"sha256", sha256_hex(eval)}};
  manifest["evaluation"]["predictions"] = {{"uri", "ranking-release.npy"},
                                           {"sha256", *sha256_file(release)}};
  return file("ranking-manifest.json", manifest.dump(2));
}

}  // namespace

TEST_CASE("a ranking's flip rate is left out, as its verdict leaves it out, with the same line") {
  std::vector<double> scores = ramp(150, 1, 0), moved = scores;
  for (std::size_t row = 0; row < moved.size(); row += 5)
    std::swap(moved[row], moved[row + 1]);  // the order moves in every query
  const auto manifest = ranking_release(scores);
  const auto rebuilt = npy("ranking-rebuilt.npy", moved);
  const auto original = (temp.path / "ranking-release.npy").string();
  const auto table = compare({original, rebuilt, "--tolerances", manifest});
  INFO(table.out << table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("parity:top-k-order") != std::string::npos);  // judged as a verification
  CHECK(table.out.find("distribution:flip_rate  ") == std::string::npos);  // no row for it
  CHECK(table.out.find(std::string(kFlipRateLeftOut) + "\n") != std::string::npos);
  const auto json = compare({original, rebuilt, "--tolerances", manifest, "--json"});
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["judged_as"] == "verification");
  CHECK(j["paired"].contains("mean_abs_diff"));
  CHECK_FALSE(j["paired"].contains("flip_rate"));
  CHECK(j["left_out"] == nlohmann::json::array({kFlipRateLeftOut}));
  for (const auto& check : j["checks"])
    CHECK(check["name"] != "distribution:flip_rate");
  // The same files without the manifest: compare cannot know the task, and shows the flip rate.
  const auto plain = nlohmann::json::parse(compare({original, rebuilt, "--json"}).out);
  CHECK(plain["paired"].contains("flip_rate"));
  CHECK_FALSE(plain.contains("left_out"));
}

TEST_CASE("usage and input errors exit 2 and say what is wrong") {
  const auto a = npy("u.npy", {0.1, 0.2});
  CHECK(compare({a}).exit_code == 2);
  auto r = compare({a, (temp.path / "missing.npy").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("missing.npy") != std::string::npos);
  r = compare({a, a, "--threshold", "high"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--threshold") != std::string::npos);
  r = compare({a, a, "--tolerances", file("bad.json", R"({"kolmogorov": 0.1})")});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("\"kolmogorov\" is not a statistic") != std::string::npos);
  for (const char* rate : {"0", "1", "-0.1", "often"}) {
    r = compare({a, a, "--false-page-rate", rate});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--false-page-rate") != std::string::npos);
  }
  r = compare({a, a, "--config", (temp.path / "missing.yaml").string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("missing.yaml") != std::string::npos);
  r = compare({a, file("nan.csv", "0.1\nnan\n")});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("NaN") != std::string::npos);
}
