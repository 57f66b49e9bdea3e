// `reverify subsample` as a job author runs it to compare their own implementation of the rule:
// every (salt, fraction) of docs/subsample-vectors.json through the command, in --json and the
// printed form, keys from a file and a CSV file's records, and its usage errors.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify::test;
using nlohmann::json;

namespace {

const TempDir temp("reverify-subsample-itest-");

const json& vectors() {
  static const json v = json::parse(read_file(source_dir() / "docs" / "subsample-vectors.json"));
  return v;
}

Ran subsample(std::vector<std::string> args) {
  args.insert(args.begin(), "subsample");
  return run_cli(args, temp.path);
}

}  // namespace

TEST_CASE("reverify subsample --json agrees with every membership vector") {
  std::map<std::pair<std::string, std::string>, std::vector<json>> groups;
  for (const auto& c : vectors().at("membership"))
    groups[{c.at("salt"), c.at("fraction")}].push_back(c);
  REQUIRE(groups.size() > 10);
  for (const auto& [group, cases] : groups) {
    std::vector<std::string> args{"--json", "--salt", group.first, "--fraction", group.second};
    for (const auto& c : cases)
      args.push_back(c.at("key"));
    const Ran ran = subsample(args);
    CAPTURE(ran.err);
    REQUIRE(ran.exit_code == 0);
    const json out = json::parse(ran.out);
    REQUIRE(out.at("keys").size() == cases.size());
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CHECK(out["keys"][i]["key"] == cases[i]["key"]);
      CHECK(out["keys"][i]["h"] == cases[i]["h"]);
      CHECK(out["keys"][i]["member"] == cases[i]["member"]);
    }
  }
}

TEST_CASE("reverify subsample prints h, in or out and the key, and the threshold") {
  const Ran ran = subsample({"--salt", "digits-subsample-1", "--fraction", "0.250", "7", "007"});
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.out.find("fraction 0.25 = 25 / 10^2, salt digits-subsample-1: a key is in the "
                     "subsample iff h < 4611686018427387904") == 0);
  for (const auto& c : vectors().at("membership")) {
    if (c["salt"] == "digits-subsample-1" && c["fraction"] == "0.25" &&
        (c["key"] == "7" || c["key"] == "007")) {
      const std::string line = c["h"].get<std::string>() +
                               (c["member"].get<bool>() ? "  in   " : "  out  ") +
                               c["key"].get<std::string>() + "\n";
      CHECK(ran.out.find(line) != std::string::npos);
    }
  }
}

TEST_CASE("keys from a file and from a CSV file's records (content keys or an id column)") {
  const auto& csv = vectors().at("csv_content_keys");
  write_file(temp.path / "data.csv", csv.at("document").get<std::string>());
  const Ran by_content = subsample(
      {"--json", "--salt", "s", "--fraction", "1", "--csv", (temp.path / "data.csv").string()});
  REQUIRE(by_content.exit_code == 0);
  const json out = json::parse(by_content.out);
  REQUIRE(out["keys"].size() == csv["records"].size());
  for (std::size_t i = 0; i < out["keys"].size(); ++i)
    CHECK(out["keys"][i]["key"] == csv["records"][i]["key"]);
  CHECK(out["members"] == 5);
  CHECK(out["members_distinct"] == 4);  // two records hold the same bytes

  const Ran by_column = subsample({"--json", "--salt", "s", "--fraction", "1", "--csv",
                                   (temp.path / "data.csv").string(), "--key-column", "x"});
  REQUIRE(by_column.exit_code == 0);
  CHECK(json::parse(by_column.out)["keys"][2]["key"] == "two\nlines");

  write_file(temp.path / "keys.txt", "optdigits-0001\noptdigits-0002\n");
  const Ran from_file = subsample(
      {"--json", "--salt", "s", "--fraction", "0.5", "--keys", (temp.path / "keys.txt").string()});
  REQUIRE(from_file.exit_code == 0);
  CHECK(json::parse(from_file.out)["keys"].size() == 2);
}

TEST_CASE("reverify subsample refuses a fraction the rule cannot read, an empty salt or key") {
  const Ran exponent = subsample({"--salt", "s", "--fraction", "3e-1", "k"});
  CHECK(exponent.exit_code == 2);
  CHECK(exponent.err.find("--fraction: subsample fraction \"3e-1\": not a plain decimal") !=
        std::string::npos);
  CHECK(subsample({"--salt", "s", "--fraction", "1.5", "k"}).exit_code == 2);
  CHECK(subsample({"--salt", "", "--fraction", "0.5", "k"}).exit_code == 2);
  const Ran empty = subsample({"--salt", "s", "--fraction", "0.5", ""});
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.find("an empty key") != std::string::npos);
  CHECK(subsample({"--salt", "s", "--fraction", "0.5", "--key-column", "id"}).exit_code == 2);
}
