#pragma once
// policies/: pure decisions, no I/O, no clock, no sockets: tolerance bands, checks and verdicts,
// statistics, lint rules, manifest diff, rotation and cron, the release gate, the retry backoff.
// Given data in, a decision with its reasons out. Includes core/ only.
//
// The rotation policy (docs/design.md, "Scheduler and rotation"): which model versions the current
// cycle verifies, in which order, in which mode, and why. A pure function of its inputs; the time
// is passed in, never read from a clock.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.hpp"
#include "core/result.hpp"

namespace reverify {

struct InventoryItem {
  std::string model;
  std::string version;
  int criticality = 0;                                  // higher = more critical; breaks ties first
  std::optional<std::chrono::sys_seconds> released_at;  // newer releases break remaining ties first
  bool large = false;          // steps mode by default, full every `full_every_n_cycles`
  double full_gpu_hours = 0;   // estimated cost of a full rebuild (accelerators x duration)
  double steps_gpu_hours = 0;  // estimated cost of a steps rebuild
};

struct HistoryItem {
  std::string model;
  std::string version;
  std::chrono::sys_seconds finished_at;
  bool steps_mode = false;
  bool completed = true;  // false for error:* verifications: they do not count as verified
};

struct ManualTrigger {
  std::string model;
  std::string version;
  std::chrono::sys_seconds requested_at;
  std::optional<bool> steps_mode;  // absent: the policy's choice
  std::string requested_by;        // free text for the reason ("api", "cli:alice")
};

struct RotationConfig {
  std::optional<std::string> cron;  // absent: calendar month (UTC)
  std::size_t per_cycle = 10;       // scheduled (non-manual) verifications per cycle
  std::size_t max_concurrent = 2;   // verifications running at once (entries carry a wave number)
  std::optional<double> gpu_budget_hours;  // per cycle; absent = unlimited
  std::size_t full_every_n_cycles = 4;     // large models: full rebuild every Nth verification
};

struct PlanEntry {
  std::string model;
  std::string version;
  bool steps_mode = false;
  bool manual = false;
  double gpu_hours = 0;
  std::size_t wave = 0;  // position / max_concurrent: entries of one wave may run together
  std::string reason;
};

struct Deferred {
  std::string model;
  std::string version;
  std::string reason;
};

// Why a listed version is neither planned nor deferred this cycle.
enum class SkipReason {
  verified_this_cycle,  // a completed verification since the cycle started
  manifest_invalid,     // nothing to verify until its manifest validates
};
template <>
struct EnumNames<SkipReason> {
  static constexpr EnumName<SkipReason> table[] = {
      {SkipReason::verified_this_cycle, "verified-this-cycle"},
      {SkipReason::manifest_invalid, "manifest-invalid"},
  };
};

struct Skipped {
  std::string model;
  std::string version;
  SkipReason why = SkipReason::verified_this_cycle;
  std::string reason;  // the words: when it was verified, what is wrong with the manifest
};

// Seed-only reruns for an underpowered version in the budget the verifications left
// (policies/calibration_plan.hpp decides them).
struct PlannedCalibration {
  std::string model;
  std::string version;
  std::size_t max_runs = 0;     // seed runs in all, at most
  std::size_t runs_to_add = 0;  // estimated: projected runs in all less those it holds
  double gpu_hours = 0;         // estimated: runs_to_add full rebuilds
  std::string reason;
};

struct Plan {
  std::chrono::sys_seconds cycle_start;
  std::chrono::sys_seconds cycle_end;            // exclusive: the next cycle's start
  std::vector<PlanEntry> entries;                // in start order
  std::vector<Deferred> deferred;                // due but left out (per_cycle, budget), with why
  std::vector<Skipped> skipped;                  // not due (plan_cycle), or not verifiable
  std::vector<PlannedCalibration> calibrations;  // after the entries, in spare budget
  double gpu_hours_planned = 0;
};

// The cycle containing `now`: [start, end). Error when the cron expression is invalid.
Result<std::pair<std::chrono::sys_seconds, std::chrono::sys_seconds>> cycle_bounds(
    std::chrono::sys_seconds now, const RotationConfig& config);

// Manual triggers first (in request order, always included), then items not verified in this
// cycle: never verified first, then least recently verified, then higher criticality, then newer
// release, then name. Budget packing is first-fit in that order: an item that does not fit is
// deferred and smaller later items may still run.
Result<Plan> plan_cycle(const std::vector<InventoryItem>& inventory,
                        const std::vector<HistoryItem>& history,
                        const std::vector<ManualTrigger>& triggers, std::chrono::sys_seconds now,
                        const RotationConfig& config);

}  // namespace reverify
