// `reverify bisect` when nothing can be rebuilt: every input A and B differ in is refused, or
// none differs. No rebuild means no answer, so it exits 3 (its --help says so), never 0 ("every
// swap ran and was judged"). Nothing runs: the digits example's manifest is copied into a registry
// of the test's own, with B changed only where a mixture is refused.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/text_search.hpp"

using nlohmann::json;
using namespace reverify::test;
namespace fs = std::filesystem;

namespace {

using reverify::test::contains;

// A registry under `dir` holding the digits release as A (2026.11.1) and B (2026.12.1), B edited.
std::string registry_with_b(const TempDir& dir, const std::function<void(json&)>& edit) {
  const fs::path root = dir.path / "registry/digits-mlp";
  const fs::path released = source_dir() / "examples/registry/digits-mlp/2026.11.1";
  for (const char* version : {"2026.11.1", "2026.12.1"}) {
    fs::create_directories(root / version);
    json manifest = json::parse(std::ifstream(released / "manifest.json"));
    manifest["version"] = version;
    if (std::string(version) == "2026.12.1")
      edit(manifest);
    std::ofstream(root / version / "manifest.json") << manifest.dump(2);
  }
  return (dir.path / "registry").string();
}

}  // namespace

TEST_CASE("bisect exits 3 when every input that differs is refused: nothing was rebuilt") {
  TempDir dir("reverify-bisect-itest-");
  // B differs only in data.split, which the contract never hands the job: refused per input.
  const std::string registry =
      registry_with_b(dir, [](json& m) { m["data"]["split"]["salt"] = "another salt"; });
  const Ran ran = run_cli(
      {"bisect", "digits-mlp@2026.11.1", "digits-mlp@2026.12.1", "--registry", registry}, dir.path);
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 3);
  CHECK(contains(ran.out, "nothing was rebuilt"));
  CHECK_FALSE(contains(ran.out, "rebuilt A with"));

  // --json says the same, with the same exit status.
  const Ran json_ran = run_cli(
      {"bisect", "digits-mlp@2026.11.1", "digits-mlp@2026.12.1", "--registry", registry, "--json"},
      dir.path);
  CHECK(json_ran.exit_code == 3);
  const auto report = json::parse(json_ran.out);
  CHECK(report["refused"].size() == 1);
  CHECK(contains(report["conclusion"].get<std::string>(), "nothing was rebuilt"));
}

TEST_CASE("bisect exits 3 when no input differs, and its --help names the exit statuses") {
  TempDir dir("reverify-bisect-itest-");
  const std::string registry = registry_with_b(dir, [](json&) {});
  const Ran ran = run_cli(
      {"bisect", "digits-mlp@2026.11.1", "digits-mlp@2026.12.1", "--registry", registry}, dir.path);
  INFO(ran.out << ran.err);
  CHECK(ran.exit_code == 3);
  const Ran help = run_cli({"bisect", "--help"}, dir.path);
  CHECK(help.exit_code == 0);
  CHECK(contains(help.out, "3 nothing was rebuilt"));
}
