#pragma once
// The scheduler's decisions, kept apart from the event loop so they are tested without one:
// what the current cycle verifies (the policies' rotation over the store's inventory and
// history) and which underpowered versions it calibrates, in which order queued verifications
// start, and the plan as `reverify plan` and the status page show it. The loop that acts on them is
// daemon.cpp.

#include <optional>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "policies/calibration_plan.hpp"
#include "policies/rotation.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/cycle_plan.hpp"

namespace reverify {

RotationConfig rotation_config(const ScheduleConfig& schedule);

// Verifiable versions (listed, manifest valid) with the metadata rotation needs: criticality and
// `large` from config `models:`, cost from the manifest (accelerator count x run.duration_s;
// a job without accelerators costs 0 GPU hours; a subsample rebuild per subsample_cost), large
// also when a full rebuild costs at least schedule.large_gpu_hours (with why, in words).
std::vector<InventoryItem> build_inventory(const std::vector<ModelVersionRow>& rows,
                                           const Config& config);
// Each verdict as the rotation reads it; manual triggers and `reverify run` are manual (a retry
// counts as the schedule's: the store does not say whom the attempt it retries was for).
std::vector<HistoryItem> build_history(const std::vector<VerdictBrief>& verdicts);

// Versions whose latest conclusive verdict is underpowered and that are still verifiable, oldest
// verdict first, each costing a full rebuild per seed run, with the seed runs they hold (the
// verdict's or the newest calibration's, the larger) and whether a complete calibration was
// stored since that verdict.
std::vector<CalibrationCandidate> calibration_candidates(
    const std::vector<InventoryItem>& inventory, std::vector<VerdictBrief> latest_conclusive,
    const std::vector<CalibrationBrief>& latest_calibrations);

// The listed versions (in `inventory`) whose newest calibration's leave-one-out paged more than
// the false-page rate allows, by model and version; each warning's command carries `scope`
// (VerdictPolicy::command_scope).
std::vector<CalibrationWarning> calibration_warnings(
    const std::vector<InventoryItem>& inventory,
    const std::vector<CalibrationBrief>& latest_calibrations, const std::string& scope);

// Blocking (SQLite). The plan for the cycle containing `now`: its verifications, then the
// calibrations of underpowered versions in the budget they leave (schedule.calibrations_per_cycle,
// schedule.calibration_max_runs), and the new releases verified at release (schedule.at_release):
// those queued and those still to queue or waiting, each with when and why; the warnings
// of stored calibrations (calibration_warnings); and the large versions without a subsample
// reference (Plan::missing_subsample), whose next step names config.verdict.command_scope; the
// verifications a runner holds now (CyclePlan::running).
//
// A NEW RELEASE is a version first seen by a registry sync after its source's first listing in
// this store (the versions a source lists the first time it is synced are the inventory, not
// releases, so a first start does not verify the whole registry at once), whose manifest
// validates and that has no verification of any kind yet. One first seen in this cycle is left
// to the at-release policy (the rotation skips it: SkipReason::at_release); one first seen in an
// earlier cycle that was never queued is the rotation's first pick (awaiting_release).
Result<CyclePlan> plan_current_cycle(Store& store, const Config& config, UnixSeconds now);

// A new release queued to be verified at release.
struct QueuedRelease {
  std::int64_t verification_id = 0;
  std::string model, version;
  RebuildMode mode = RebuildMode::full;
  std::string reason;  // when and why (ReleaseDecision::reason)
};

// Blocking (SQLite). Queues, as trigger `release` with not_before = its start time, each new
// release of this cycle that the at-release budget has room for (plan_current_cycle's
// `at_release` without a verification yet and with a start time). Returns each release queued.
// Nothing when schedule.at_release.enabled is false.
Result<std::vector<QueuedRelease>> queue_releases(Store& store, const Config& config,
                                                  UnixSeconds now);

// The plan's entries as rows to queue, each start jittered uniformly over [0, jitter_s].
std::vector<QueuedVerification> plan_entries_to_queue(const Plan& plan, UnixSeconds now,
                                                      std::int64_t jitter_s, std::mt19937_64& rng);

// Which queued verification starts next: due ones only (not_before <= now), manual triggers
// first, then in queue order. nullopt when none is due.
std::optional<VerificationRow> next_to_start(const std::vector<VerificationRow>& queued,
                                             UnixSeconds now);

}  // namespace reverify
