// to_json(Manifest) is the inverse of parse_manifest: parse(to_json(m)) == m.

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/manifest_json.hpp"
#include "core/manifest_parse.hpp"
#include "tests/support/manifest_fixture.hpp"

using reverify::test::manifest_fixture;

using nlohmann::json;

namespace {
reverify::Manifest round_trip(const reverify::Manifest& m) {
  auto parse = reverify::parse_manifest(reverify::to_json(m).dump(2));
  REQUIRE(parse.errors.empty());
  return *parse.manifest;
}
}  // namespace

TEST_CASE("the full fixture round-trips through to_json") {
  const auto m = manifest_fixture("valid_full.json");
  CHECK(round_trip(m) == m);
}

TEST_CASE("the minimal fixture round-trips and gains no optional sections") {
  const auto m = manifest_fixture("valid_minimal.json");
  const json j = reverify::to_json(m);
  CHECK_FALSE(j.contains("environment"));
  CHECK_FALSE(j.contains("seeds"));
  CHECK(round_trip(m) == m);
}

TEST_CASE("extra top-level keys and edited fields survive the round trip") {
  auto m = manifest_fixture("valid_full.json");
  m.extra["x-provenance"] = json{{"builder", "ci"}, {"n", 3}};
  m.level = reverify::ReproLevel::bitwise;
  m.code.dirty = true;
  m.code.diff_sha256 = std::string(64, 'e');
  m.environment->determinism->tf32.reset();
  m.data->snapshot =
      reverify::Snapshot{reverify::SnapshotKind::iceberg, "s3://lake/t", std::nullopt, "8812"};
  m.evaluation.primary.value = 0.1 + 0.2;  // not exactly representable in short decimal
  m.tolerance->steps_same_seed_runs.pop_back();
  m.tolerance->same_seed_scores = {
      {std::string(64, 'c'), 0.97, {{"digit=3", {{"accuracy", 0.95}}}}},
      {std::string(64, 'd'), std::nullopt, {}}};
  const auto back = round_trip(m);
  REQUIRE(back.tolerance->same_seed_scores.size() == 2);
  CHECK(back.tolerance->same_seed_scores[0].segments.at("digit=3").at("accuracy") == 0.95);
  CHECK_FALSE(back.tolerance->same_seed_scores[1].primary.has_value());
  CHECK(back == m);
  CHECK(back.extra.at("x-provenance").at("n") == 3);
  CHECK(back.evaluation.primary.value == m.evaluation.primary.value);
}

TEST_CASE("a change in any section makes manifests unequal") {
  const auto m = manifest_fixture("valid_full.json");
  auto changed = m;
  changed.seeds["python"] = 43;
  CHECK_FALSE(changed == m);
  changed = m;
  (*changed.config)["train"]["epochs"] = 21;
  CHECK_FALSE(changed == m);
}
