// `reverify compare ORIGINAL REBUILT` as a pipeline owner runs it: table, --json, --tolerances and
// exit statuses (0 within bounds, 1 a check failed, 2 usage or input error).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/predictions.hpp"
#include "tests/support/temp_dir.hpp"

extern char** environ;

namespace fs = std::filesystem;
using namespace reverify;

namespace {

const testing::TempDir temp("reverify-compare-itest-");

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Outcome compare(std::vector<std::string> args) {
  const char* binary = std::getenv("REVERIFY_CLI");
  REQUIRE(binary != nullptr);
  args.insert(args.begin(), {binary, "compare"});
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto out = temp.path / "stdout", err = temp.path / "stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return {WEXITSTATUS(status), slurp(out), slurp(err)};
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
  std::ofstream(temp.path / name) << content;
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
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["ks"] == 0.0);
  CHECK(j["psi"] == 0.0);
  CHECK(j["wasserstein"] == 0.0);
  CHECK(j["quantiles"]["original"]["p50"] == j["quantiles"]["rebuilt"]["p50"]);
  CHECK(j["paired"]["flip_rate"] == 0.0);
  CHECK(j["checks"].empty());  // no bounds given: nothing was judged, and it says so
  CHECK(j["outcome"] == "not judged");
  const auto table = compare({a, a});
  CHECK(table.status == 0);
  CHECK(table.out.find("ks             0                -                not judged\n") !=
        std::string::npos);
  CHECK(table.out.find("\nnot judged: no bounds were given (--tolerances FILE)") !=
        std::string::npos);
  const auto mixed = compare({a, csv, "--json"});
  REQUIRE(mixed.status == 0);
  CHECK(nlohmann::json::parse(mixed.out)["paired"].is_null());  // different row counts
}

TEST_CASE(
    "tolerances: explicit bounds and seed-run pairs give each check a verdict; failures exit 1") {
  const auto a = npy("a.npy", ramp(1000, 1, 0));
  const auto near = npy("near.npy", ramp(1000, 1, 0.001));
  const auto far = npy("far.npy", ramp(1000, 0.5, 0.5));
  const auto tol =
      file("tol.json", R"({"distribution_pairs": {"ks": 0.05, "psi": [0.001, 0.002, 0.0015]}})");
  auto r = compare({a, near, "--json", "--tolerances", tol});
  CHECK(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["outcome"] == "passed");
  CHECK(j["checks"].size() == 6);
  r = compare({a, far, "--tolerances", tol});
  CHECK(r.status == 1);
  CHECK(r.out.find("failed") != std::string::npos);
  CHECK(r.out.find("p99") != std::string::npos);
}

TEST_CASE("--threshold decides 1-D flips") {
  const auto a = npy("t1.npy", {0.2, 0.4, 0.6});
  const auto b = npy("t2.npy", {0.35, 0.4, 0.6});
  auto j = nlohmann::json::parse(compare({a, b, "--json"}).out);
  CHECK(j["paired"]["flip_rate"] == 0.0);
  j = nlohmann::json::parse(compare({a, b, "--json", "--threshold", "0.3"}).out);
  CHECK(std::abs(j["paired"]["flip_rate"].get<double>() - 1.0 / 3) < 1e-12);
}

TEST_CASE("usage and input errors exit 2 and say what is wrong") {
  const auto a = npy("u.npy", {0.1, 0.2});
  CHECK(compare({a}).status == 2);
  auto r = compare({a, (temp.path / "missing.npy").string()});
  CHECK(r.status == 2);
  CHECK(r.err.find("missing.npy") != std::string::npos);
  r = compare({a, a, "--threshold", "high"});
  CHECK(r.status == 2);
  CHECK(r.err.find("--threshold") != std::string::npos);
  r = compare({a, a, "--tolerances", file("bad.json", R"({"kolmogorov": 0.1})")});
  CHECK(r.status == 2);
  CHECK(r.err.find("\"kolmogorov\" is not a statistic") != std::string::npos);
  r = compare({a, file("nan.csv", "0.1\nnan\n")});
  CHECK(r.status == 2);
  CHECK(r.err.find("NaN") != std::string::npos);
}
