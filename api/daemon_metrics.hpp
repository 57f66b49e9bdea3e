#pragma once
// What only the running reverifyd knows, for /metrics: counts of events since it started
// (registry syncs, config reloads, calibrations, store errors), the duration of each verification
// stage by runner, the loop's heartbeat, and whether the store works (also /healthz's answer). The
// read model's series (api/metrics.hpp) come from the store and survive restarts; these are the
// process's own and start from zero with it, as Prometheus counters may (rate() and increase()
// handle the reset; reverify_start_time_seconds says when).
//
// Cardinality: every label is an enum (stage, runner, outcome) or a configured registry source's
// name; no model, version, verification id or free text.
//
// Thread-safety: every method may be called from any thread (one mutex); the loop records, the
// API threads render at each scrape.

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/result.hpp"
#include "core/unix_time.hpp"
#include "runners/runner_kind.hpp"

namespace reverify {

// The stages a verification's evidence times ("durations", verify/pipeline.hpp), and `total`:
// from its start to its verdict.
enum class Stage { preflight, provision, run, job, collect, compare, total };
template <>
struct EnumNames<Stage> {
  static constexpr EnumName<Stage> table[] = {
      {Stage::preflight, "preflight"},
      {Stage::provision, "provision"},
      {Stage::run, "run"},
      {Stage::job, "job"},
      {Stage::collect, "collect"},
      {Stage::compare, "compare"},
      {Stage::total, "total"},
  };
};

// What a SIGHUP did: applied, refused as invalid, or refused because it changes what applies
// only at start (state_dir, work_dir, listen address, runner).
enum class ReloadOutcome { applied, invalid, restart_required };
template <>
struct EnumNames<ReloadOutcome> {
  static constexpr EnumName<ReloadOutcome> table[] = {
      {ReloadOutcome::applied, "applied"},
      {ReloadOutcome::invalid, "invalid"},
      {ReloadOutcome::restart_required, "restart_required"},
  };
};

// How a daemon calibration ended: stored complete, interrupted (its slot given back or the
// daemon stopping; it resumes), or failed (a run failed, or it could not run).
enum class CalibrationOutcomeKind { complete, interrupted, failed };
template <>
struct EnumNames<CalibrationOutcomeKind> {
  static constexpr EnumName<CalibrationOutcomeKind> table[] = {
      {CalibrationOutcomeKind::complete, "complete"},
      {CalibrationOutcomeKind::interrupted, "interrupted"},
      {CalibrationOutcomeKind::failed, "failed"},
  };
};

// How the daemon's loop used the store: its periodic check (the file is the one opened and whole,
// and a write commits: Store::check_health), a read (a read-model build, the watch for other
// processes' commits), or a write of its own (a manual trigger, a cycle's plan).
enum class StoreUse { check, read, write };
template <>
struct EnumNames<StoreUse> {
  static constexpr EnumName<StoreUse> table[] = {
      {StoreUse::check, "check"},
      {StoreUse::read, "read"},
      {StoreUse::write, "write"},
  };
};

// Why the store is failing, and since when.
struct StoreFault {
  std::string reason;  // the error, naming the file and the way out
  UnixSeconds since = 0;
};

// Upper bounds (seconds) of the stage histogram's buckets; +Inf implied.
inline constexpr double kStageBucketsS[] = {0.5, 1,    5,    15,   60,    300,
                                            900, 1800, 3600, 7200, 21600, 86400};

class DaemonMetrics {
 public:
  explicit DaemonMetrics(UnixSeconds started_at);

  // Registry sources get their series (zero) once named, so an alert on "no successful sync"
  // has a series before the first sync ends.
  void add_sources(const std::vector<std::string>& sources);
  void registry_synced(const std::string& source, bool ok, UnixSeconds at);
  void config_reloaded(ReloadOutcome outcome, UnixSeconds at);
  void calibration_started();
  void calibration_ended(CalibrationOutcomeKind outcome);
  // A finished verification: each stage its evidence timed ({"preflight": 0.4, ...}; unknown
  // keys are ignored), and `total_s` when it is known, under its runner ("none" when it never
  // reached one: an input-drift caught in preflight).
  void verification_finished(std::optional<RunnerKind> runner, const nlohmann::json& durations,
                             std::optional<double> total_s);
  void heartbeat(UnixSeconds at);  // the loop is alive and turning
  // A use of the store and how it ended. A failed use counts an error and makes the store
  // failing until a use of the same kind succeeds; a successful check (it writes) also ends a
  // write's failure.
  void store_used(StoreUse use, const Status& outcome, UnixSeconds at);
  // The store's fault while it has one (the earliest of the failing uses): /healthz answers 503
  // with it and reverify_store_ok is 0. nullopt while every use works.
  std::optional<StoreFault> store_fault() const;

  // The exposition text of these series (appended to the read model's at each scrape).
  std::string render() const;

 private:
  struct Histogram {
    std::array<std::int64_t, std::size(kStageBucketsS)> buckets{};  // not cumulative
    std::int64_t count = 0;
    double sum = 0;
  };
  struct SourceCounts {
    std::int64_t ok = 0, error = 0;
    UnixSeconds last_success = 0;
  };
  void observe(Stage stage, const std::string& runner, double seconds);

  mutable std::mutex mutex_;
  UnixSeconds started_at_;
  UnixSeconds heartbeat_ = 0;
  std::map<std::string, SourceCounts> sources_;
  std::map<ReloadOutcome, std::int64_t> reloads_;
  bool last_reload_ok_ = true;
  UnixSeconds last_reload_success_;  // the start counts: the config was loaded then
  std::int64_t calibrations_started_ = 0;
  std::map<CalibrationOutcomeKind, std::int64_t> calibrations_ended_;
  std::map<std::pair<Stage, std::string>, Histogram> stages_;  // (stage, runner)
  std::map<StoreUse, std::int64_t> store_errors_;
  std::map<StoreUse, StoreFault> store_faults_;  // the kinds of use failing now
};

}  // namespace reverify
