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

// Where a mode's GPU-hours come from (InventoryItem::cost_basis), named after what was read.
enum class CostBasis {
  full_run,            // a full rebuild: accelerators x the release's run.duration_s
  steps_fraction,      // steps: schedule.steps_cost_fraction of a full rebuild
  subsample_duration,  // subsample: accelerators x the reference's own subsample.duration_s
  subsample_fraction,  // subsample, no duration recorded: subsample.fraction x a full rebuild
  no_reference,        // subsample without a reference: a full rebuild (it is refused anyway)
};
template <>
struct EnumNames<CostBasis> {
  static constexpr EnumName<CostBasis> table[] = {
      {CostBasis::full_run, "run.duration_s"},
      {CostBasis::steps_fraction, "steps_cost_fraction"},
      {CostBasis::subsample_duration, "subsample.duration_s"},
      {CostBasis::subsample_fraction, "subsample.fraction"},
      {CostBasis::no_reference, "no-subsample-reference"},
  };
};

struct SubsampleCost {
  CostBasis basis = CostBasis::no_reference;
  double gpu_hours = 0;
};

// A subsample rebuild's estimated cost: `devices` x the reference's recorded seconds when the
// manifest has them, else its fraction x a full rebuild; a version without a reference
// (`fraction` absent) is costed as a full rebuild, the conservative side of a budget.
SubsampleCost subsample_cost(std::int64_t devices, double full_gpu_hours,
                             std::optional<double> fraction, std::optional<double> duration_s);

struct InventoryItem {
  std::string model;
  std::string version;
  int criticality = 0;                                  // higher = more critical; breaks ties first
  std::optional<std::chrono::sys_seconds> released_at;  // newer releases break remaining ties first
  bool large = false;          // steps mode by default, full every `full_every_n_cycles`
  std::string large_reason;    // why, in words ("models.big.large is true", "a full rebuild ...")
  double full_gpu_hours = 0;   // estimated cost of a full rebuild (accelerators x duration)
  double steps_gpu_hours = 0;  // estimated cost of a steps rebuild
  SubsampleCost subsample;     // estimated cost of a subsample rebuild, and whether it can run
  // Large in the sense of subsample mode (docs/scheduling.md "Subsample mode in the rotation"):
  // `large` (config, or a full rebuild costing at least schedule.large_gpu_hours), or a cadence
  // that runs subsample mode. The plan names such a version when it has no subsample reference.
  bool wants_subsample_reference() const {
    return large || cadence_s.count(RebuildMode::subsample) > 0;
  }
  bool has_subsample_reference() const { return subsample.basis != CostBasis::no_reference; }
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

  // A rebuild's estimated GPU-hours in `mode`, and what that estimate was read from.
  double gpu_hours(RebuildMode mode) const;
  CostBasis cost_basis(RebuildMode mode) const;
};

struct HistoryItem {
  std::string model;
  std::string version;
  std::chrono::sys_seconds finished_at;
  RebuildMode mode = RebuildMode::full;
  bool completed = true;  // false for error:* verifications: they do not count as verified
  // Asked for by a person (a manual trigger, `reverify run`): it counts for its own mode's
  // cadence, never as the cycle's verification of a version whose model sets a cadence.
  bool manual = false;
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
  CostBasis cost_basis = CostBasis::full_run;
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
  // its cadence's only due mode is subsample and the manifest records no subsample reference:
  // the rebuild would be refused (nothing to judge it against), so no GPU is spent on it
  no_subsample_reference,
};
template <>
struct EnumNames<SkipReason> {
  static constexpr EnumName<SkipReason> table[] = {
      {SkipReason::verified_this_cycle, "verified-this-cycle"},
      {SkipReason::manifest_invalid, "manifest-invalid"},
      {SkipReason::at_release, "at-release"},
      {SkipReason::not_due, "not-due"},
      {SkipReason::no_subsample_reference, "no-subsample-reference"},
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
// is next due. A cycle runs each mode of a version at most once (the cycle is the finest grain).
struct ModeDue {
  RebuildMode mode = RebuildMode::full;
  std::int64_t every_s = 0;
  double gpu_hours = 0;
  CostBasis cost_basis = CostBasis::full_run;
  std::optional<std::chrono::sys_seconds> last_completed;
  // Its last completion + its period, or the next cycle's start when that is later and the mode
  // already completed in this cycle; absent when it never completed ("never run": due at once).
  std::optional<std::chrono::sys_seconds> next_due;
  bool due = false;  // due in this cycle: never run, or next_due before the cycle ends
};

// A cadence period the cycle cannot keep: a cycle runs each mode at most once, so a mode whose
// period is shorter than the cycle runs once per cycle, not once per period. Warned when the cycle
// is more than kCadenceSlack times the period (a `1mo` cadence, 30 days, in 31-day calendar
// months is not worth a warning).
inline constexpr double kCadenceSlack = 1.1;
struct CadenceWarning {
  std::string model;
  RebuildMode mode = RebuildMode::full;
  std::int64_t every_s = 0;
  std::string text;  // what happens and what to change, for `reverify plan` and the status page
};

struct CadenceRow {
  std::string model;
  std::string version;
  std::vector<ModeDue> modes;  // in RebuildMode order
};

// A large version (InventoryItem::wants_subsample_reference) whose manifest records no subsample
// reference: a subsample rebuild of it is refused.
struct MissingSubsampleReference {
  std::string model;
  std::string version;
  std::string why_large;  // "its cadence runs subsample every 30 d", "a full rebuild costs ..."
  // What to do, with the commands (filled by verify/schedule.hpp, which knows the --config).
  std::string next_step;
};

// A version whose stored calibration paged more often in leave-one-out than the false-page rate
// allows (policies/calibration.hpp, LeaveOneOutExcess): its bands are narrower than its runs'
// spread, and the checks to blame are named.
struct CalibrationWarning {
  std::string model;
  std::string version;
  std::string text;  // what it found and what clears it (LeaveOneOutFinding::warning)
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
  // Per model and mode, each cadence period shorter than this cycle (by model, then mode).
  std::vector<CadenceWarning> cadence_warnings;
  std::vector<CalibrationWarning> calibration_warnings;      // listed versions, by name
  std::vector<MissingSubsampleReference> missing_subsample;  // listed versions, inventory order
  double gpu_hours_planned = 0;
};

// The cycle containing `now`: [start, end). Error when the cron expression is invalid.
Result<std::pair<std::chrono::sys_seconds, std::chrono::sys_seconds>> cycle_bounds(
    std::chrono::sys_seconds now, const RotationConfig& config);

// Manual triggers first (in request order, always included), then items not verified in this
// cycle (nor left to the at-release policy; for a model with a cadence only a verification the
// schedule queued counts, since a manual run of one mode never consumes another mode's due
// cadence): releases awaiting the rotation first, then never
// verified, then least recently verified, then higher criticality, then newer
// release, then name. Budget packing is first-fit in that order: an item that does not fit is
// deferred and smaller later items may still run.
Result<Plan> plan_cycle(const std::vector<InventoryItem>& inventory,
                        const std::vector<HistoryItem>& history,
                        const std::vector<ManualTrigger>& triggers, std::chrono::sys_seconds now,
                        const RotationConfig& config);

}  // namespace reverify
