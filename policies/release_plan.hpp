#pragma once
// Verification at release (docs/design.md, "Scheduler and rotation" → "At release"): when each
// version that the registry sync saw for the first time is verified, under the at-release policy's
// own budget, apart from the cycle's per_cycle and gpu_budget_hours, so a burst of releases cannot
// starve the rotation and the rotation cannot starve releases. Pure: the releases, what the
// at-release budget already spent and the time come in; a start time (or "waits for the next
// cycle") with its reason goes out.
//
// The budget is per UTC day: at most `per_day` at-release verifications and `gpu_budget_hours`
// GPU-hours start on one day (a verification counts on the day of its start time). Releases are
// placed in the order they were first seen, each on the earliest day, from first seen + delay,
// that still has room; one that fits on no day before the cycle ends waits, and the next cycle's
// rotation picks it first (policies/rotation.hpp, InventoryItem::awaiting_release).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/rebuild_mode.hpp"

namespace reverify {

struct AtReleaseConfig {
  bool enabled = true;
  RebuildMode mode = RebuildMode::full;    // a model's cadence may name another (settings/)
  std::int64_t delay_s = 0;                // wait after the version is first seen
  std::size_t per_day = 5;                 // at-release verifications starting on one UTC day
  std::optional<double> gpu_budget_hours;  // GPU-hours starting on one UTC day; absent = unlimited
};

// A version seen for the first time, not yet queued, with the mode and cost of its verification.
struct Release {
  std::string model, version;
  std::chrono::sys_seconds first_seen;
  RebuildMode mode = RebuildMode::full;
  double gpu_hours = 0;
};

// An at-release verification already queued, running or done: it spent its day's budget.
struct ReleaseSpent {
  std::chrono::sys_seconds starts_at;  // its start time (the queued row's not_before)
  double gpu_hours = 0;
};

struct ReleaseDecision {
  std::string model, version;
  RebuildMode mode = RebuildMode::full;
  double gpu_hours = 0;
  std::chrono::sys_seconds first_seen;
  // When it may start. Absent: no day of this cycle has room, so it waits for the next cycle,
  // whose rotation picks it first.
  std::optional<std::chrono::sys_seconds> starts_at;
  std::string reason;
  // The at-release verification queued for it (set by the caller once queued; never by
  // plan_releases).
  std::optional<std::int64_t> verification_id;
};

// The releases in first-seen order (then model, version), each placed as the header says.
// `cycle_end` is exclusive. Errors are the caller's to prevent: the config is validated.
std::vector<ReleaseDecision> plan_releases(std::vector<Release> releases,
                                           const std::vector<ReleaseSpent>& spent,
                                           std::chrono::sys_seconds cycle_end,
                                           const AtReleaseConfig& config);

}  // namespace reverify
