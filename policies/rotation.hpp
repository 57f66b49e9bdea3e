#pragma once
// policies/: pure decisions, no I/O, no clock, no sockets: tolerance bands, checks and verdicts,
// statistics, lint rules, manifest diff, rotation and cron, the release gate, the retry backoff.
// Given data in, a decision with its reasons out. Includes core/ only.
//
// The rotation policy (docs/design.md, "Scheduler and rotation"): which model versions the current
// cycle verifies, in which order, in which mode, and why. A pure function of its inputs; the time
// is passed in, never read from a clock.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/enum_names.hpp"
#include "core/rebuild_mode.hpp"
#include "core/result.hpp"
#include "policies/release_plan.hpp"

namespace reverify {

struct InventoryItem {
  std::string model;
  std::string version;
  int criticality = 0;                                  // higher = more critical; breaks ties first
  std::optional<std::chrono::sys_seconds> released_at;  // newer releases break remaining ties first
  bool large = false;          // steps mode by default, full every `full_every_n_cycles`
  double full_gpu_hours = 0;   // estimated cost of a full rebuild (accelerators x duration)
  double steps_gpu_hours = 0;  // estimated cost of a steps rebuild
  // The model's cadence (config models.<name>.cadence): mode -> how often it runs, in seconds.
  // Empty: the large-model rule (steps, full every full_every_n_cycles). Set: it replaces that
  // rule; a mode is due when its last completed verification is older than its period by the
  // cycle's end, and the cycle runs the due mode with the longest period.
  std::map<RebuildMode, std::int64_t> cadence_s;
  // A release first seen in an earlier cycle that the at-release budget never queued
  // (policies/release_plan.hpp): the rotation's first pick, before every other due version.
  bool awaiting_release = false;
  // Verified at release instead: queued (or to be queued) by the at-release policy this cycle.
  // The rotation skips it (SkipReason::at_release) with `at_release_reason`.
  bool at_release = false;
  std::string at_release_reason;

  // A rebuild's estimated GPU-hours in `mode`: steps costs steps_gpu_hours; every other mode a
  // full rebuild (the conservative estimate for a mode without one of its own).
  double gpu_hours(RebuildMode mode) const {
    return mode == RebuildMode::steps ? steps_gpu_hours : full_gpu_hours;
  }
};

struct HistoryItem {
  std::string model;
  std::string version;
  std::chrono::sys_seconds finished_at;
  RebuildMode mode = RebuildMode::full;
  bool completed = true;  // false for error:* verifications: they do not count as verified
};

struct ManualTrigger {
  std::string model;
  std::string version;
  std::chrono::sys_seconds requested_at;
  std::optional<RebuildMode> mode;  // absent: the policy's choice
  std::string requested_by;         // free text for the reason ("api", "cli:alice")
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
  RebuildMode mode = RebuildMode::full;
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
  at_release,           // a new release: verified at release, on that policy's own budget
  not_due,              // its model's cadence has no mode due before the cycle ends
};
template <>
struct EnumNames<SkipReason> {
  static constexpr EnumName<SkipReason> table[] = {
      {SkipReason::verified_this_cycle, "verified-this-cycle"},
      {SkipReason::manifest_invalid, "manifest-invalid"},
      {SkipReason::at_release, "at-release"},
      {SkipReason::not_due, "not-due"},
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

// One mode of a version's cadence: how often, what it costs, when it last completed and when it
// is next due (its last completion + its period; the cycle's start when never).
struct ModeDue {
  RebuildMode mode = RebuildMode::full;
  std::int64_t every_s = 0;
  double gpu_hours = 0;
  std::optional<std::chrono::sys_seconds> last_completed;
  std::chrono::sys_seconds next_due;
};

struct CadenceRow {
  std::string model;
  std::string version;
  std::vector<ModeDue> modes;  // in RebuildMode order
};

// A version whose stored calibration paged more often in leave-one-out than the false-page rate
// allows (policies/calibration.hpp, LeaveOneOutExcess): its bands are narrower than its runs'
// spread, and the checks to blame are named.
struct CalibrationWarning {
  std::string model;
  std::string version;
  std::string text;  // the warning as `reverify calibrate` printed it
  std::vector<std::pair<std::string, std::size_t>> blamed;  // check, held-out runs it failed
};

struct Plan {
  std::chrono::sys_seconds cycle_start;
  std::chrono::sys_seconds cycle_end;            // exclusive: the next cycle's start
  std::vector<PlanEntry> entries;                // in start order
  std::vector<Deferred> deferred;                // due but left out (per_cycle, budget), with why
  std::vector<Skipped> skipped;                  // not due (plan_cycle), or not verifiable
  std::vector<PlannedCalibration> calibrations;  // after the entries, in spare budget
  // New releases verified at release, on their own budget (not counted in gpu_hours_planned):
  // those queued (verification_id set) and those still to queue or waiting for the next cycle.
  std::vector<ReleaseDecision> at_release;
  // Every listed version whose model sets a cadence, with each mode's next due date.
  std::vector<CadenceRow> cadence;
  std::vector<CalibrationWarning> calibration_warnings;  // listed versions, by name
  double gpu_hours_planned = 0;
};

// The cycle containing `now`: [start, end). Error when the cron expression is invalid.
Result<std::pair<std::chrono::sys_seconds, std::chrono::sys_seconds>> cycle_bounds(
    std::chrono::sys_seconds now, const RotationConfig& config);

// Manual triggers first (in request order, always included), then items not verified in this
// cycle (nor left to the at-release policy): releases awaiting the rotation first, then never
// verified, then least recently verified, then higher criticality, then newer
// release, then name. Budget packing is first-fit in that order: an item that does not fit is
// deferred and smaller later items may still run.
Result<Plan> plan_cycle(const std::vector<InventoryItem>& inventory,
                        const std::vector<HistoryItem>& history,
                        const std::vector<ManualTrigger>& triggers, std::chrono::sys_seconds now,
                        const RotationConfig& config);

}  // namespace reverify
