// New releases over a real store (verify/schedule.hpp): what counts as a new release (first seen
// after its source's first listing), the plan's at-release list and the rotation's skip, the
// queueing of releases once, a release of an earlier cycle as the rotation's first pick, and a
// model's cadence naming the at-release mode.

#include <doctest/doctest.h>

#include <algorithm>

#include "tests/support/temp_dir.hpp"
#include "verify/schedule.hpp"

using namespace reverify;

namespace {

constexpr UnixSeconds kFeb1 = 1'769'904'000;         // 2026-02-01T00:00:00Z
constexpr UnixSeconds kFeb20 = kFeb1 + 19 * 86'400;  // 2026-02-20T00:00:00Z
constexpr UnixSeconds kMar10 = 1'773'144'000;        // 2026-03-10T12:00:00Z

struct Registry {
  test::TempDir dir;
  UnixSeconds now = kFeb1;
  std::unique_ptr<Store> store;
  Config config;

  Registry() {
    auto opened = Store::open(dir.path / "reverify.db", [this] { return now; });
    REQUIRE(opened.ok());
    store = std::move(*opened);
    config.schedule.jitter_s = 0;
  }

  // The source lists these versions of "m" at `now`.
  void list(const std::string& source, const std::vector<std::string>& versions) {
    std::vector<ModelVersionRow> rows;
    for (const auto& v : versions) {
      ModelVersionRow row;
      row.model = source == "reg" ? "m" : source;
      row.version = v;
      row.location = "/registry/" + v;
      row.manifest_sha256 = "sha-" + v;
      row.gpus = 2;
      row.duration_s = 3600;
      rows.push_back(row);
    }
    REQUIRE(store->sync_model_versions(source, rows).ok());
  }

  CyclePlan plan() {
    auto p = plan_current_cycle(*store, config, now);
    REQUIRE(p.ok());
    return *p;
  }
};

std::vector<std::string> entries(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& e : plan.entries)
    out.push_back(e.model + "@" + e.version);
  return out;
}

std::vector<std::string> releases(const Plan& plan) {
  std::vector<std::string> out;
  for (const auto& r : plan.at_release)
    out.push_back(r.model + "@" + r.version + (r.verification_id ? " queued" : "") +
                  (r.starts_at ? "" : " waits"));
  return out;
}

}  // namespace

TEST_CASE(
    "at release: the first listing is the inventory; a later version is a release, queued "
    "once") {
  Registry r;
  r.list("reg", {"1"});
  CHECK(r.plan().at_release.empty());  // the store's first sync: no release

  r.now = kMar10;
  r.list("reg", {"1", "2"});
  r.list("other", {"x"});  // a source's first listing is not a release either
  CyclePlan plan = r.plan();
  CHECK(releases(plan) == std::vector<std::string>{"m@2"});
  CHECK(entries(plan) == std::vector<std::string>{"m@1", "other@x"});  // not m@2
  const auto skipped = std::find_if(plan.skipped.begin(), plan.skipped.end(),
                                    [](const Skipped& s) { return s.version == "2"; });
  REQUIRE(skipped != plan.skipped.end());
  CHECK(skipped->why == SkipReason::at_release);
  CHECK(plan.at_release[0].gpu_hours == doctest::Approx(2));
  CHECK(plan_to_json(plan)["at_release"][0]["state"] == "to-queue");

  auto queued = queue_releases(*r.store, r.config, r.now);
  REQUIRE(queued.ok());
  REQUIRE(queued->size() == 1);
  CHECK((*queued)[0].verification_id == 1);
  CHECK((*queued)[0].model + "@" + (*queued)[0].version == "m@2");
  CHECK((*queued)[0].reason == plan.at_release[0].reason);
  auto row = r.store->verification(1);
  REQUIRE(row.ok());
  CHECK((*row)->trigger == VerificationTrigger::release);
  CHECK((*row)->mode == RebuildMode::full);
  CHECK((*row)->not_before == kMar10);
  CHECK(queue_releases(*r.store, r.config, r.now)->empty());  // queued once

  plan = r.plan();
  CHECK(releases(plan) == std::vector<std::string>{"m@2 queued"});
  const auto shown = plan_to_json(plan)["at_release"][0];
  CHECK(shown["state"] == "queued");
  CHECK(shown["verification_id"] == 1);
  CHECK(shown["expected_at"] == "2026-03-10T12:00:00Z");

  // Off: nothing is a release; m@2 is an ordinary never-verified version again.
  r.config.schedule.at_release.enabled = false;
  CHECK(r.plan().at_release.empty());
  CHECK(queue_releases(*r.store, r.config, r.now)->empty());
}

TEST_CASE("at release: one from an earlier cycle never queued is the rotation's first pick") {
  Registry r;
  r.list("reg", {"1"});
  r.now = kFeb20;
  r.list("reg", {"1", "3"});  // a February release nobody queued (the daemon was down)
  r.now = kMar10;
  r.list("reg", {"1", "2", "3"});
  const CyclePlan plan = r.plan();
  CHECK(entries(plan) == std::vector<std::string>{"m@3", "m@1"});
  CHECK(plan.entries[0].reason.find("first pick") != std::string::npos);
  CHECK(releases(plan) == std::vector<std::string>{"m@2"});
}

TEST_CASE("the plan's JSON lists the cadence of the first 500 versions and counts them all") {
  CyclePlan plan;
  for (int i = 0; i < 501; ++i)
    plan.cadence.push_back({"m", std::to_string(i), {}});
  const auto j = plan_to_json(plan);
  CHECK(j["cadence"].size() == 500);
  CHECK(j["cadence_total"] == 501);
}

TEST_CASE("at release: a model's cadence names its at-release mode; beyond budget it waits") {
  Registry r;
  r.config.models["m"].at_release_mode = RebuildMode::steps;
  r.config.schedule.steps_cost_fraction = 0.25;
  r.list("reg", {"1"});
  r.now = kMar10;
  r.list("reg", {"1", "2"});
  CyclePlan plan = r.plan();
  REQUIRE(plan.at_release.size() == 1);
  CHECK(plan.at_release[0].mode == RebuildMode::steps);
  CHECK(plan.at_release[0].gpu_hours == doctest::Approx(0.5));

  r.config.models.clear();
  r.config.schedule.at_release.gpu_budget_hours = 1;  // a full rebuild needs 2
  plan = r.plan();
  CHECK(releases(plan) == std::vector<std::string>{"m@2 waits"});
  CHECK(plan_to_json(plan)["at_release"][0]["expected_at"] == "2026-04-01T00:00:00Z");
  CHECK(queue_releases(*r.store, r.config, r.now)->empty());
}
