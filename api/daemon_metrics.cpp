#include "api/daemon_metrics.hpp"

#include <sstream>

#include "api/metrics.hpp"

namespace reverify {
namespace {

// A counter by an enum's value, as `label`: one line for every value, 0 for those not counted yet.
template <NamedEnum E>
void outcome_counts_by(std::ostream& out, const char* name, const char* label, const char* help,
                       const std::map<E, std::int64_t>& counts) {
  metric_header(out, name, "counter", help);
  for (const auto& entry : EnumNames<E>::table) {
    const auto it = counts.find(entry.value);
    out << name << "{" << label << "=\"" << entry.name << "\"} "
        << (it == counts.end() ? 0 : it->second) << "\n";
  }
}

template <NamedEnum E>
void outcome_counts(std::ostream& out, const char* name, const char* help,
                    const std::map<E, std::int64_t>& counts) {
  outcome_counts_by(out, name, "outcome", help, counts);
}

}  // namespace

DaemonMetrics::DaemonMetrics(UnixSeconds started_at)
    : started_at_(started_at), heartbeat_(started_at), last_reload_success_(started_at) {}

void DaemonMetrics::add_sources(const std::vector<std::string>& sources) {
  std::lock_guard lock(mutex_);
  for (const auto& source : sources)
    sources_[source];
}

void DaemonMetrics::registry_synced(const std::string& source, bool ok, UnixSeconds at) {
  std::lock_guard lock(mutex_);
  auto& counts = sources_[source];
  ++(ok ? counts.ok : counts.error);
  if (ok)
    counts.last_success = at;
}

void DaemonMetrics::config_reloaded(ReloadOutcome outcome, UnixSeconds at) {
  std::lock_guard lock(mutex_);
  ++reloads_[outcome];
  last_reload_ok_ = outcome == ReloadOutcome::applied;
  if (last_reload_ok_)
    last_reload_success_ = at;
}

void DaemonMetrics::calibration_started() {
  std::lock_guard lock(mutex_);
  ++calibrations_started_;
}

void DaemonMetrics::calibration_ended(CalibrationOutcomeKind outcome) {
  std::lock_guard lock(mutex_);
  ++calibrations_ended_[outcome];
}

void DaemonMetrics::observe(Stage stage, const std::string& runner, double seconds) {
  auto& histogram = stages_[{stage, runner}];
  for (std::size_t i = 0; i < std::size(kStageBucketsS); ++i) {
    if (seconds <= kStageBucketsS[i]) {
      ++histogram.buckets[i];
      break;
    }
  }
  ++histogram.count;
  histogram.sum += seconds;
}

void DaemonMetrics::verification_finished(std::optional<RunnerKind> runner,
                                          const nlohmann::json& durations,
                                          std::optional<double> total_s) {
  const std::string runner_name = runner ? to_string(*runner) : "none";
  std::lock_guard lock(mutex_);
  if (durations.is_object()) {
    for (const auto& [key, value] : durations.items()) {
      const auto stage = enum_from_string<Stage>(key);
      if (stage && *stage != Stage::total && value.is_number() && value.get<double>() >= 0)
        observe(*stage, runner_name, value.get<double>());
    }
  }
  if (total_s && *total_s >= 0)
    observe(Stage::total, runner_name, *total_s);
}

void DaemonMetrics::heartbeat(UnixSeconds at) {
  std::lock_guard lock(mutex_);
  heartbeat_ = at;
}

void DaemonMetrics::store_used(StoreUse use, const Status& outcome, UnixSeconds at) {
  std::lock_guard lock(mutex_);
  if (outcome.ok()) {
    store_faults_.erase(use);
    if (use == StoreUse::check)
      store_faults_.erase(StoreUse::write);
    return;
  }
  ++store_errors_[use];
  auto [fault, first] = store_faults_.try_emplace(use, StoreFault{outcome.error().message, at});
  if (!first)
    fault->second.reason = outcome.error().message;  // the latest word, since the first failure
}

std::optional<StoreFault> DaemonMetrics::store_fault() const {
  std::lock_guard lock(mutex_);
  std::optional<StoreFault> earliest;
  for (const auto& [use, fault] : store_faults_) {
    if (!earliest || fault.since < earliest->since)
      earliest = fault;
  }
  return earliest;
}

std::string DaemonMetrics::render() const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  metric_single(out, "reverify_start_time_seconds", "gauge",
                "Unix time this reverifyd started (the counters below count from then).",
                started_at_);
  metric_single(out, "reverify_loop_heartbeat_timestamp_seconds", "gauge",
                "Unix time the daemon's loop last turned (every few seconds while it runs); "
                "an old value means a stalled loop.",
                heartbeat_);

  metric_header(out, "reverify_registry_syncs_total", "counter",
                "Registry source listings by outcome (ok: listed and stored; error: not).");
  for (const auto& [source, counts] : sources_) {
    const std::string label = metric_label_value(source);
    out << "reverify_registry_syncs_total{source=\"" << label << "\",outcome=\"ok\"} " << counts.ok
        << "\nreverify_registry_syncs_total{source=\"" << label << "\",outcome=\"error\"} "
        << counts.error << "\n";
  }
  metric_header(out, "reverify_registry_sync_last_success_timestamp_seconds", "gauge",
                "Unix time of the last successful listing of each registry source; 0: none "
                "since the daemon started.");
  for (const auto& [source, counts] : sources_) {
    out << "reverify_registry_sync_last_success_timestamp_seconds{source=\""
        << metric_label_value(source) << "\"} " << counts.last_success << "\n";
  }

  outcome_counts(out, "reverify_config_reloads_total",
                 "SIGHUP reloads by outcome (applied; invalid; restart_required: it changes what "
                 "applies only at start). Refused reloads keep the running config.",
                 reloads_);
  metric_single(out, "reverify_config_last_reload_successful", "gauge",
                "1 when the last reload (or the start) applied its config, 0 when it was refused.",
                last_reload_ok_ ? 1 : 0);
  metric_single(out, "reverify_config_last_reload_success_timestamp_seconds", "gauge",
                "Unix time the running config was applied (the start, or the last applied "
                "reload).",
                last_reload_success_);

  metric_single(out, "reverify_calibrations_started_total", "counter",
                "Calibrations of underpowered versions the daemon started.", calibrations_started_);
  outcome_counts(out, "reverify_calibrations_finished_total",
                 "Calibrations that ended, by outcome (complete; interrupted: they resume; "
                 "failed).",
                 calibrations_ended_);

  metric_single(out, "reverify_store_ok", "gauge",
                "1 while the store works (its file is whole and takes writes, reads succeed); 0 "
                "while a use of it fails: /healthz then answers 503 with the reason.",
                store_faults_.empty() ? 1 : 0);
  outcome_counts_by(out, "reverify_store_errors_total", "operation",
                    "Failed uses of the store by the daemon's loop: check (its file and a write, "
                    "every few seconds), read (read-model builds), write (triggers, cycle plans).",
                    store_errors_);

  metric_header(out, "reverify_stage_duration_seconds", "histogram",
                "Duration of each stage of the verifications this daemon finished, by runner "
                "(stage total: start to verdict; job: the job's own run time).");
  for (const auto& [key, histogram] : stages_) {
    const std::string labels = std::string("stage=\"") + to_string(key.first) + "\",runner=\"" +
                               metric_label_value(key.second) + "\"";
    std::int64_t cumulative = 0;
    for (std::size_t i = 0; i < std::size(kStageBucketsS); ++i) {
      cumulative += histogram.buckets[i];
      out << "reverify_stage_duration_seconds_bucket{" << labels << ",le=\""
          << metric_number(kStageBucketsS[i]) << "\"} " << cumulative << "\n";
    }
    out << "reverify_stage_duration_seconds_bucket{" << labels << ",le=\"+Inf\"} "
        << histogram.count << "\nreverify_stage_duration_seconds_sum{" << labels << "} "
        << metric_number(histogram.sum) << "\nreverify_stage_duration_seconds_count{" << labels
        << "} " << histogram.count << "\n";
  }
  return out.str();
}

}  // namespace reverify
