#include "verify/schedule.hpp"

#include <algorithm>
#include <map>

#include "core/text.hpp"

namespace reverify {

namespace {
std::chrono::sys_seconds to_sys(UnixSeconds t) {
  return std::chrono::sys_seconds{std::chrono::seconds{t}};
}
UnixSeconds from_sys(std::chrono::sys_seconds t) {
  return t.time_since_epoch().count();
}
}  // namespace

RotationConfig rotation_config(const ScheduleConfig& schedule) {
  RotationConfig rotation;
  rotation.cron = schedule.cron;
  rotation.per_cycle = schedule.per_cycle;
  rotation.max_concurrent = schedule.max_concurrent;
  rotation.gpu_budget_hours = schedule.gpu_budget_hours;
  rotation.full_every_n_cycles = schedule.full_every_n_cycles;
  return rotation;
}

std::vector<InventoryItem> build_inventory(const std::vector<ModelVersionRow>& rows,
                                           const Config& config) {
  std::vector<InventoryItem> items;
  for (const auto& row : rows) {
    if (row.removed || row.manifest_error)
      continue;
    const auto& policy = config.model_policy(row.model);
    InventoryItem item;
    item.model = row.model;
    item.version = row.version;
    item.criticality = policy.criticality;
    if (row.released_at)
      item.released_at = to_sys(*row.released_at);
    item.full_gpu_hours = double(row.gpus) * row.duration_s.value_or(0) / 3600.0;
    item.steps_gpu_hours = item.full_gpu_hours * config.schedule.steps_cost_fraction;
    item.large = policy.large.value_or(item.full_gpu_hours >= config.schedule.large_gpu_hours);
    items.push_back(std::move(item));
  }
  return items;
}

std::vector<HistoryItem> build_history(const std::vector<VerdictBrief>& verdicts) {
  std::vector<HistoryItem> history;
  history.reserve(verdicts.size());
  for (const auto& v : verdicts) {
    // A subsample rebuild is scoped like steps mode: it never resets "full every Nth".
    history.push_back(
        {v.model, v.version, to_sys(v.finished_at), v.mode != RebuildMode::full, !is_error(v.cls)});
  }
  return history;
}

std::vector<CalibrationCandidate> calibration_candidates(
    const std::vector<InventoryItem>& inventory, std::vector<VerdictBrief> latest_conclusive,
    const std::vector<CalibrationBrief>& latest_calibrations) {
  std::map<std::pair<std::string, std::string>, const InventoryItem*> by_version;
  for (const auto& item : inventory)
    by_version[{item.model, item.version}] = &item;
  std::map<std::pair<std::string, std::string>, const CalibrationBrief*> calibrations;
  for (const auto& c : latest_calibrations)
    calibrations[{c.model, c.version}] = &c;
  std::stable_sort(
      latest_conclusive.begin(), latest_conclusive.end(),
      [](const VerdictBrief& a, const VerdictBrief& b) { return a.finished_at < b.finished_at; });
  std::vector<CalibrationCandidate> candidates;
  for (auto& v : latest_conclusive) {
    auto item = by_version.find({v.model, v.version});
    if (!v.underpowered || item == by_version.end())
      continue;
    CalibrationCandidate c;
    c.model = v.model;
    c.version = v.version;
    c.underpowered = true;
    c.underpowered_checks = std::move(v.underpowered_checks);
    if (v.runs_needed && *v.runs_needed > 0)
      c.runs_needed = static_cast<std::size_t>(*v.runs_needed);
    c.gpu_hours_per_run = item->second->full_gpu_hours;
    c.seed_runs = static_cast<std::size_t>(std::max<std::int64_t>(v.seed_runs.value_or(0), 0));
    if (auto stored = calibrations.find({v.model, v.version}); stored != calibrations.end()) {
      const CalibrationBrief& b = *stored->second;
      // Same second as the verdict: taken as after it (no GPU spent on a version just calibrated).
      c.calibrated_since_verdict =
          b.end == CalibrationEnd::complete && b.created_at >= v.finished_at;
      c.seed_runs =
          std::max(c.seed_runs, static_cast<std::size_t>(std::max<std::int64_t>(b.seeds, 0)));
    }
    candidates.push_back(std::move(c));
  }
  return candidates;
}

Result<Plan> plan_current_cycle(Store& store, const Config& config, UnixSeconds now) {
  auto rows = store.model_versions();
  if (!rows.ok())
    return rows.error();
  auto verdicts = store.history();
  if (!verdicts.ok())
    return verdicts.error();
  auto latest = store.latest_verdicts(VerdictFilter::conclusive);
  if (!latest.ok())
    return latest.error();
  auto calibrations = store.latest_calibrations();
  if (!calibrations.ok())
    return calibrations.error();
  const auto inventory = build_inventory(*rows, config);
  auto plan = plan_cycle(inventory, build_history(*verdicts), {}, to_sys(now),
                         rotation_config(config.schedule));
  if (!plan.ok())
    return plan;
  for (const auto& row : *rows) {
    if (!row.removed && row.manifest_error) {
      plan->skipped.push_back({row.model, row.version, SkipReason::manifest_invalid,
                               "manifest invalid: " + one_line(*row.manifest_error, 200)});
    }
  }
  CalibrationPlanConfig calibration;
  calibration.per_cycle = config.schedule.calibrations_per_cycle;
  calibration.max_runs = config.schedule.calibration_max_runs;
  plan->calibrations =
      plan_calibrations(calibration_candidates(inventory, std::move(latest).value(), *calibrations),
                        *plan, config.schedule.gpu_budget_hours, calibration);
  return plan;
}

nlohmann::json plan_to_json(const Plan& plan) {
  auto entries = nlohmann::json::array();
  for (const auto& e : plan.entries) {
    entries.push_back({{"model", e.model},
                       {"version", e.version},
                       {"mode", to_string(e.steps_mode ? RebuildMode::steps : RebuildMode::full)},
                       {"manual", e.manual},
                       {"gpu_hours", e.gpu_hours},
                       {"wave", e.wave},
                       {"reason", e.reason}});
  }
  auto deferred = nlohmann::json::array();
  for (const auto& d : plan.deferred) {
    deferred.push_back({{"model", d.model}, {"version", d.version}, {"reason", d.reason}});
  }
  auto calibrations = nlohmann::json::array();
  for (const auto& c : plan.calibrations) {
    calibrations.push_back({{"model", c.model},
                            {"version", c.version},
                            {"max_runs", c.max_runs},
                            {"runs_to_add", c.runs_to_add},
                            {"gpu_hours", c.gpu_hours},
                            {"reason", c.reason}});
  }
  auto skipped = nlohmann::json::object();
  for (const auto& entry : EnumNames<SkipReason>::table)
    skipped[entry.name] = 0;
  for (const auto& skip : plan.skipped)
    skipped[to_string(skip.why)] = skipped[to_string(skip.why)].get<std::int64_t>() + 1;
  return {{"cycle_start", rfc3339(from_sys(plan.cycle_start))},
          {"cycle_end", rfc3339(from_sys(plan.cycle_end))},
          {"gpu_hours_planned", plan.gpu_hours_planned},
          {"entries", std::move(entries)},
          {"deferred", std::move(deferred)},
          {"calibrations", std::move(calibrations)},
          {"skipped_counts", std::move(skipped)}};
}

nlohmann::json skipped_to_json(const Plan& plan) {
  auto skipped = nlohmann::json::array();
  for (const auto& skip : plan.skipped) {
    skipped.push_back({{"model", skip.model},
                       {"version", skip.version},
                       {"why", to_string(skip.why)},
                       {"reason", skip.reason}});
  }
  return skipped;
}

std::vector<QueuedVerification> plan_entries_to_queue(const Plan& plan, UnixSeconds now,
                                                      std::int64_t jitter_s, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> jitter(0, std::max<std::int64_t>(jitter_s, 0));
  std::vector<QueuedVerification> queue;
  for (const auto& e : plan.entries) {
    QueuedVerification item{e.model, e.version,
                            e.steps_mode ? RebuildMode::steps : RebuildMode::full,
                            e.manual ? VerificationTrigger::manual : VerificationTrigger::schedule};
    item.not_before = std::max(now, from_sys(plan.cycle_start)) + jitter(rng);
    queue.push_back(std::move(item));
  }
  return queue;
}

std::optional<VerificationRow> next_to_start(const std::vector<VerificationRow>& queued,
                                             UnixSeconds now) {
  const VerificationRow* best = nullptr;
  for (const auto& row : queued) {
    if (row.state != VerificationState::queued || row.not_before > now)
      continue;
    const bool manual = row.trigger == VerificationTrigger::manual;
    const bool best_manual = best && best->trigger == VerificationTrigger::manual;
    if (!best || (manual && !best_manual) || (manual == best_manual && row.id < best->id)) {
      best = &row;
    }
  }
  if (!best)
    return std::nullopt;
  return *best;
}

}  // namespace reverify
