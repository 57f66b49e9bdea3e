// The plan of large models in subsample mode over a real store (verify/schedule.hpp): the
// subsample reference read from a manifest into the inventory, a subsample rebuild costed from
// the reference's own seconds, and the large versions without a reference named with the
// commands that record and check one, and never planned in subsample mode.

#include <doctest/doctest.h>

#include "store/inventory_row.hpp"
#include "tests/support/manifest_fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/schedule.hpp"

using namespace reverify;

namespace {

constexpr UnixSeconds kFebruaryFirst = 1'769'904'000;  // 2026-02-01T00:00:00Z

// valid_full.json (8 accelerators; its subsample reference: fraction 0.25, 1350 s) as
// model@version, with or without its subsample section.
ModelVersionRow described(const std::string& model, const std::string& version,
                          bool with_reference) {
  auto document = nlohmann::json::parse(test::manifest_fixture_text("valid_full.json"));
  document["model"] = model;
  document["version"] = version;
  if (!with_reference)
    document.erase("subsample");
  return describe_manifest(model, version, "/registry/" + version, document.dump());
}

}  // namespace

TEST_CASE("a manifest's subsample reference reaches the inventory and costs subsample mode") {
  const auto with = described("big", "1", true);
  REQUIRE_FALSE(with.manifest_error.has_value());
  CHECK(with.subsample_fraction == std::optional<double>(0.25));
  CHECK(with.subsample_duration_s == std::optional<double>(1350));
  const auto without = described("big", "2", false);
  CHECK_FALSE(without.subsample_fraction.has_value());

  Config config;
  const auto items = build_inventory({with, without}, config);
  REQUIRE(items.size() == 2);
  CHECK(items[0].has_subsample_reference());
  CHECK(items[0].cost_basis(RebuildMode::subsample) == CostBasis::subsample_duration);
  CHECK(items[0].gpu_hours(RebuildMode::subsample) ==
        doctest::Approx(double(with.gpus) * 1350 / 3600));
  CHECK_FALSE(items[1].has_subsample_reference());
  CHECK(items[1].gpu_hours(RebuildMode::subsample) == doctest::Approx(items[1].full_gpu_hours));
}

TEST_CASE("the plan names large versions without a subsample reference and never runs them so") {
  test::TempDir dir;
  UnixSeconds now = kFebruaryFirst + 86'400;
  auto opened = Store::open(dir.path / "reverify.db", [&now] { return now; });
  REQUIRE(opened.ok());
  auto& store = **opened;
  Config config;
  config.verdict.command_scope = "--config /etc/reverify/reverify.yaml";
  config.models["big"].cadence_s = {{RebuildMode::subsample, 30 * 86'400}};
  config.models["plain"].large = true;
  REQUIRE(
      store
          .sync_model_versions("reg", {described("big", "1", true), described("big", "2", false),
                                       described("plain", "1", false)})
          .ok());

  auto plan = plan_current_cycle(store, config, now);
  REQUIRE(plan.ok());
  // big@1 runs in subsample mode, costed from its recorded seconds; big@2 would be refused.
  REQUIRE(plan->entries.size() == 2);
  CHECK(plan->entries[0].model + "@" + plan->entries[0].version == "big@1");
  CHECK(plan->entries[0].mode == RebuildMode::subsample);
  CHECK(plan->entries[0].cost_basis == CostBasis::subsample_duration);
  CHECK(plan->entries[1].model == "plain");
  CHECK(plan->entries[1].mode == RebuildMode::steps);  // the large-model rule, no cadence
  REQUIRE(plan->skipped.size() == 1);
  CHECK(plan->skipped[0].version == "2");
  CHECK(plan->skipped[0].why == SkipReason::no_subsample_reference);

  REQUIRE(plan->missing_subsample.size() == 2);
  CHECK(plan->missing_subsample[0].model + "@" + plan->missing_subsample[0].version == "big@2");
  CHECK(plan->missing_subsample[0].why_large == "its cadence runs subsample every 30 d");
  CHECK(plan->missing_subsample[1].why_large == "models.plain.large is true");
  const std::string& next = plan->missing_subsample[0].next_step;
  CHECK(next.find("a subsample rebuild of it is refused") == 0);
  CHECK(next.find("reverify capture --subsample-out DIR") != std::string::npos);
  CHECK(next.find("`reverify run big@2 --mode subsample --config /etc/reverify/reverify.yaml`") !=
        std::string::npos);

  const auto json = plan_to_json(*plan);
  REQUIRE(json["missing_subsample"].size() == 2);
  CHECK(json["missing_subsample"][0]["model"] == "big");
  CHECK(json["missing_subsample"][0]["next_step"] == next);
  CHECK(json["missing_subsample_total"] == 2);
  CHECK(json["entries"][0]["cost_basis"] == "subsample.duration_s");
  CHECK(json["cadence"][1]["modes"][0]["cost_basis"] == "no-subsample-reference");
  CHECK(json["skipped_counts"]["no-subsample-reference"] == 1);
}
