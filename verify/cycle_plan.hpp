#pragma once
// The cycle's plan as every reader sees it, typed from the scheduler to the end: the rotation's
// Plan (policies/rotation.hpp: entries, deferred, skipped, releases, cadence, calibrations and
// warnings), the rebuilds a runner holds now, and the daemon's calibrations in progress. The
// scheduler builds it (verify/schedule.hpp plan_current_cycle), reverifyd adds its loop's
// calibrations and publishes it in the read model (api/snapshot.hpp), the status page and
// `reverify plan` read its fields; plan_to_json is its one JSON form (`reverify plan --json`,
// the cycle's record in the store), read back by nobody.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/rebuild_mode.hpp"
#include "core/unix_time.hpp"
#include "policies/rotation.hpp"
#include "runners/runner.hpp"  // JobStanding
#include "runners/runner_kind.hpp"
#include "store/store.hpp"

namespace reverify {

// The first this many versions of the cadence and of the large versions without a subsample
// reference are shown (a models.default cadence covers every version, and the plan is rebuilt
// with every read model); the totals count them all.
inline constexpr std::size_t kPlanVersionsShown = 500;

// A verification whose rebuild a runner holds now: started, or waiting in the runner's own queue
// (a runner that queues jobs: a batch scheduler's pending job).
struct RebuildOnRunner {
  std::int64_t verification_id = 0;
  std::string model, version;
  RebuildMode mode = RebuildMode::full;
  VerificationTrigger trigger = VerificationTrigger::schedule;
  std::optional<UnixSeconds> started_at;
  std::optional<RunnerKind> runner;       // absent until the runner took the job
  std::optional<std::string> runner_ref;  // the runner's name for the job (container, Job, pid)
  // Where the job stands on its runner, when the runner reports more than "started" (a queueing
  // runner: pending in which queue and why, or running on which node).
  std::optional<JobStanding> standing;
};

// How a new release stands: queued (its at-release verification exists), to-queue (a start time
// this cycle, not queued yet), waiting (no day of this cycle has budget: the next cycle's first
// pick).
enum class ReleaseState { queued, to_queue, waiting };
template <>
struct EnumNames<ReleaseState> {
  static constexpr EnumName<ReleaseState> table[] = {
      {ReleaseState::queued, "queued"},
      {ReleaseState::to_queue, "to-queue"},
      {ReleaseState::waiting, "waiting"},
  };
};
ReleaseState release_state(const ReleaseDecision& release);

// The daemon's calibration of an underpowered version running now, and one finished this cycle.
struct CalibrationRunning {
  std::string model, version;
  UnixSeconds since = 0;
};
struct CalibrationFinished {
  std::string model, version;
  std::string outcome;  // what it did, in words
};

struct CyclePlan : Plan {
  std::vector<RebuildOnRunner> running;  // in verification order
  // reverifyd's loop only (empty for `reverify plan`, which runs no calibration).
  std::optional<CalibrationRunning> calibrating;
  std::vector<CalibrationFinished> calibrated;

  // When a release is expected to start: its start time, else the next cycle's start.
  UnixSeconds expected_at(const ReleaseDecision& release) const;
};

// The plan as `reverify plan --json` and the cycle's record show it; the skipped versions only as
// counts by reason ("skipped_counts": with 100,000 versions nearly all are skipped), the cadence
// and the large versions without a subsample reference of the first kPlanVersionsShown versions
// ("cadence_total", "missing_subsample_total" count them all). Each entry and cadence mode names
// what its GPU-hours were read from ("cost_basis", CostBasis); a cadence mode never run has
// "next_due": null.
nlohmann::json plan_to_json(const CyclePlan& plan);
// The skipped versions one by one, with why ({"model","version","why","reason"}).
nlohmann::json skipped_to_json(const Plan& plan);

}  // namespace reverify
