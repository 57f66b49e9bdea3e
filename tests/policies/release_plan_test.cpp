// Verification at release (policies/release_plan.hpp): each new release on the earliest UTC day,
// from first seen + delay, that has room in the at-release budget (verifications a day, GPU-hours
// a day), apart from the cycle's; one that fits on no day of the cycle waits for the next cycle.

#include <doctest/doctest.h>

#include "core/unix_time.hpp"
#include "policies/release_plan.hpp"

using namespace reverify;
using namespace std::chrono;

namespace {

// 2026-03-10T12:00:00Z, and the cycle ends 2026-04-01T00:00:00Z.
const sys_seconds kNoon{seconds{1'773'144'000}};
const sys_seconds kCycleEnd{seconds{1'775'001'600}};

Release release(const std::string& version, sys_seconds first_seen, double gpu_hours = 1) {
  return {"m", version, first_seen, RebuildMode::full, gpu_hours};
}

std::string start_of(const ReleaseDecision& d) {
  return d.starts_at ? rfc3339(d.starts_at->time_since_epoch().count()) : "waits";
}

std::vector<std::string> starts(const std::vector<ReleaseDecision>& decisions) {
  std::vector<std::string> out;
  for (const auto& d : decisions)
    out.push_back(d.version + " " + start_of(d));
  return out;
}

}  // namespace

TEST_CASE("release plan: a release starts when first seen, or after the delay") {
  AtReleaseConfig config;
  auto now = plan_releases({release("1", kNoon)}, {}, kCycleEnd, config);
  REQUIRE(now.size() == 1);
  CHECK(start_of(now[0]) == "2026-03-10T12:00:00Z");
  CHECK(now[0].mode == RebuildMode::full);
  CHECK(now[0].reason.find("first seen 2026-03-10T12:00:00Z, at release (full, 1 GPU-hours)") !=
        std::string::npos);
  CHECK_FALSE(now[0].verification_id.has_value());

  config.delay_s = 13 * 3600;  // past midnight: the next day's budget
  auto later = plan_releases({release("1", kNoon)}, {}, kCycleEnd, config);
  CHECK(start_of(later[0]) == "2026-03-11T01:00:00Z");
}

TEST_CASE("release plan: per_day spills a burst onto the next days, in first-seen order") {
  AtReleaseConfig config;
  config.per_day = 2;
  std::vector<Release> burst = {release("c", kNoon + seconds(2)), release("a", kNoon),
                                release("b", kNoon + seconds(1)), release("d", kNoon + seconds(3)),
                                release("e", kNoon + seconds(4))};
  auto decisions = plan_releases(burst, {}, kCycleEnd, config);
  CHECK(starts(decisions) ==
        std::vector<std::string>{"a 2026-03-10T12:00:00Z", "b 2026-03-10T12:00:01Z",
                                 "c 2026-03-11T00:00:00Z", "d 2026-03-11T00:00:00Z",
                                 "e 2026-03-12T00:00:00Z"});
  CHECK(decisions[2].reason.find("2 of 2 at-release verifications a day") != std::string::npos);
  CHECK(decisions[0].reason.find("earlier day") == std::string::npos);
}

TEST_CASE("release plan: what the budget already spent counts on the day of its start") {
  AtReleaseConfig config;
  config.per_day = 2;
  const std::vector<ReleaseSpent> spent = {{kNoon - hours(3), 1}, {kNoon - hours(2), 1}};
  CHECK(start_of(plan_releases({release("1", kNoon)}, spent, kCycleEnd, config)[0]) ==
        "2026-03-11T00:00:00Z");
  // Spent yesterday: today is free.
  const std::vector<ReleaseSpent> yesterday = {{kNoon - hours(20), 1}, {kNoon - hours(19), 1}};
  CHECK(start_of(plan_releases({release("1", kNoon)}, yesterday, kCycleEnd, config)[0]) ==
        "2026-03-10T12:00:00Z");
}

TEST_CASE("release plan: the GPU-hour budget is per day, first fit") {
  AtReleaseConfig config;
  config.gpu_budget_hours = 10;
  auto decisions =
      plan_releases({release("big", kNoon, 8), release("bigger", kNoon + seconds(1), 6),
                     release("small", kNoon + seconds(2), 2)},
                    {}, kCycleEnd, config);
  // 8 fits today; 6 does not (14 > 10) and goes to tomorrow; 2 still fits today (10).
  CHECK(starts(decisions) == std::vector<std::string>{"big 2026-03-10T12:00:00Z",
                                                      "bigger 2026-03-11T00:00:00Z",
                                                      "small 2026-03-10T12:00:02Z"});
  CHECK(decisions[1].reason.find("8 of 10 at-release GPU-hours a day spent, it needs 6") !=
        std::string::npos);
}

TEST_CASE("release plan: no room before the cycle ends, or too big for a day: it waits") {
  AtReleaseConfig config;
  config.per_day = 1;
  const sys_seconds last_day = kCycleEnd - hours(2);  // 2026-03-31T22:00:00Z
  auto decisions = plan_releases({release("1", last_day), release("2", last_day + seconds(1))}, {},
                                 kCycleEnd, config);
  CHECK(starts(decisions) == std::vector<std::string>{"1 2026-03-31T22:00:00Z", "2 waits"});
  CHECK(decisions[1].reason.find("no day of this cycle has at-release budget left") !=
        std::string::npos);
  CHECK(decisions[1].reason.find("waits for the cycle starting 2026-04-01T00:00:00Z, whose "
                                 "rotation picks it first") != std::string::npos);

  config.per_day = 5;
  config.delay_s = 3 * 3600;  // the delay ends after the cycle
  CHECK(start_of(plan_releases({release("1", last_day)}, {}, kCycleEnd, config)[0]) == "waits");

  config.delay_s = 0;
  config.gpu_budget_hours = 4;
  auto too_big = plan_releases({release("1", kNoon, 5)}, {}, kCycleEnd, config);
  CHECK(start_of(too_big[0]) == "waits");
  CHECK(too_big[0].reason.find("needs more than the at-release budget of 4 GPU-hours a day") !=
        std::string::npos);
}

TEST_CASE("release plan: each release keeps its own mode and cost") {
  AtReleaseConfig config;
  Release steps = release("1", kNoon, 0.5);
  steps.mode = RebuildMode::steps;
  auto decisions = plan_releases({steps}, {}, kCycleEnd, config);
  CHECK(decisions[0].mode == RebuildMode::steps);
  CHECK(decisions[0].gpu_hours == 0.5);
  CHECK(plan_releases({}, {}, kCycleEnd, config).empty());
}
