#include "verify/schedule.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/text.hpp"
#include "policies/bands.hpp"
#include "policies/number_text.hpp"
#include "verify/subsample_reference.hpp"

namespace reverify {

namespace {
std::chrono::sys_seconds to_sys(UnixSeconds t) {
  return std::chrono::sys_seconds{std::chrono::seconds{t}};
}
UnixSeconds from_sys(std::chrono::sys_seconds t) {
  return t.time_since_epoch().count();
}

// The new releases (plan_current_cycle's header) and the at-release verifications queued, marked
// on the inventory for the rotation; returns the at-release list the plan shows.
Result<std::vector<ReleaseDecision>> mark_releases(Store& store, const Config& config,
                                                   const std::vector<ModelVersionRow>& rows,
                                                   const std::vector<VerificationRow>& unfinished,
                                                   std::vector<InventoryItem>& inventory,
                                                   UnixSeconds now, UnixSeconds cycle_start,
                                                   UnixSeconds cycle_end) {
  const AtReleaseConfig& policy = config.schedule.at_release;
  if (!policy.enabled)
    return std::vector<ReleaseDecision>();
  auto verified = store.versions_with_verifications();
  if (!verified.ok())
    return verified.error();
  const UnixSeconds today = now - ((now % 86'400) + 86'400) % 86'400;
  auto spent_rows = store.verifications_by_trigger(VerificationTrigger::release, today);
  if (!spent_rows.ok())
    return spent_rows.error();
  std::map<std::string, UnixSeconds> source_first_listing;
  for (const auto& row : rows) {
    auto [it, inserted] = source_first_listing.emplace(row.source, row.first_seen_at);
    if (!inserted)
      it->second = std::min(it->second, row.first_seen_at);
  }
  std::map<std::pair<std::string, std::string>, const ModelVersionRow*> row_of;
  for (const auto& row : rows)
    row_of[{row.model, row.version}] = &row;
  std::map<std::pair<std::string, std::string>, InventoryItem*> item_of;
  for (auto& item : inventory)
    item_of[{item.model, item.version}] = &item;

  std::vector<ReleaseSpent> spent;
  for (const auto& v : *spent_rows) {
    auto item = item_of.find({v.model, v.version});
    spent.push_back(
        {to_sys(v.not_before), item == item_of.end() ? 0 : item->second->gpu_hours(v.mode)});
  }
  // Every at-release verification not done yet, whatever day it was queued for: the rotation
  // leaves its version alone, and the plan shows the queued ones.
  std::vector<ReleaseDecision> shown;
  for (const auto& v : unfinished) {
    auto item = item_of.find({v.model, v.version});
    if (v.trigger != VerificationTrigger::release || item == item_of.end())
      continue;
    const double cost = item->second->gpu_hours(v.mode);
    if (v.state != VerificationState::queued) {
      item->second->at_release = true;
      item->second->at_release_reason =
          "verification " + std::to_string(v.id) + " at release is " + to_string(v.state);
      continue;
    }
    ReleaseDecision queued{
        v.model, v.version, v.mode, cost, to_sys(v.queued_at), to_sys(v.not_before), "", v.id};
    if (auto row = row_of.find({v.model, v.version}); row != row_of.end())
      queued.first_seen = to_sys(row->second->first_seen_at);
    // A start on a later day than its delay ends: the days between had no budget left.
    const UnixSeconds earliest = from_sys(queued.first_seen) + policy.delay_s;
    const bool spilled = v.not_before / 86'400 > earliest / 86'400;
    queued.reason = "first seen " + rfc3339(from_sys(queued.first_seen)) + "; verification " +
                    std::to_string(v.id) + " (" + to_string(v.mode) + ") queued at release" +
                    (spilled ? " (the at-release budget of the days before was spent)" : "");
    item->second->at_release = true;
    item->second->at_release_reason = queued.reason;
    shown.push_back(std::move(queued));
  }
  std::vector<Release> releases;
  for (auto& item : inventory) {
    const ModelVersionRow& row = *row_of.at({item.model, item.version});
    if (row.first_seen_at <= source_first_listing[row.source] ||
        verified->count({item.model, item.version}))
      continue;
    if (row.first_seen_at < cycle_start) {
      item.awaiting_release = true;  // the at-release budget of its cycle never queued it
      continue;
    }
    // The model's cadence may name its own at-release mode.
    const RebuildMode mode = config.model_policy(item.model).at_release_mode.value_or(policy.mode);
    releases.push_back(
        {item.model, item.version, to_sys(row.first_seen_at), mode, item.gpu_hours(mode)});
  }
  for (auto& d : plan_releases(std::move(releases), spent, to_sys(cycle_end), policy)) {
    auto& item = *item_of.at({d.model, d.version});
    item.at_release = true;
    item.at_release_reason = d.reason;
    shown.push_back(std::move(d));
  }
  return shown;
}

// The verifications a runner holds now (running rows), for the plan.
std::vector<RebuildOnRunner> on_runners(const std::vector<VerificationRow>& unfinished) {
  std::vector<RebuildOnRunner> running;
  for (const auto& v : unfinished) {
    if (v.state != VerificationState::running)
      continue;
    running.push_back({v.id, v.model, v.version, v.mode, v.trigger, v.started_at, v.runner_kind,
                       v.runner_ref, v.runner_standing});
  }
  return running;
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
    item.subsample = subsample_cost(row.gpus, item.full_gpu_hours, row.subsample_fraction,
                                    row.subsample_duration_s);
    item.large = policy.large.value_or(item.full_gpu_hours >= config.schedule.large_gpu_hours);
    item.large_reason = policy.large
                            ? "models." + (config.models.count(row.model) ? row.model : "default") +
                                  ".large is " + (*policy.large ? "true" : "false")
                            : "a full rebuild costs " + number_text(item.full_gpu_hours) +
                                  " GPU-hours, at least schedule.large_gpu_hours (" +
                                  number_text(config.schedule.large_gpu_hours) + ")";
    item.cadence_s = policy.cadence_s;
    items.push_back(std::move(item));
  }
  return items;
}

std::vector<HistoryItem> build_history(const std::vector<VerdictBrief>& verdicts) {
  std::vector<HistoryItem> history;
  history.reserve(verdicts.size());
  for (const auto& v : verdicts) {
    const bool manual =
        v.trigger == VerificationTrigger::manual || v.trigger == VerificationTrigger::cli;
    history.push_back(
        {v.model, v.version, to_sys(v.finished_at), v.mode, !is_error(v.cls), manual});
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

std::vector<CalibrationWarning> calibration_warnings(
    const std::vector<InventoryItem>& inventory,
    const std::vector<CalibrationBrief>& latest_calibrations, const std::string& scope) {
  std::set<std::pair<std::string, std::string>> listed;
  for (const auto& item : inventory)
    listed.insert({item.model, item.version});
  std::vector<CalibrationWarning> warnings;
  for (const auto& c : latest_calibrations) {  // ordered by model, version
    if (!c.leave_one_out || !c.leave_one_out->excess || !listed.count({c.model, c.version}))
      continue;
    std::vector<std::pair<std::string, std::size_t>> blamed;
    for (const auto& blame : c.leave_one_out->excess->blamed)
      blamed.emplace_back(blame.check, blame.runs);
    warnings.push_back({c.model, c.version,
                        *c.leave_one_out->warning(c.model + "@" + c.version, scope),
                        std::move(blamed)});
  }
  return warnings;
}

Result<CyclePlan> plan_current_cycle(Store& store, const Config& config, UnixSeconds now) {
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
  auto unfinished = store.unfinished();
  if (!unfinished.ok())
    return unfinished.error();
  auto inventory = build_inventory(*rows, config);
  const auto rotation = rotation_config(config.schedule);
  auto bounds = cycle_bounds(to_sys(now), rotation);
  if (!bounds.ok())
    return bounds.error();
  auto at_release = mark_releases(store, config, *rows, *unfinished, inventory, now,
                                  from_sys(bounds->first), from_sys(bounds->second));
  if (!at_release.ok())
    return at_release.error();
  auto rotation_plan = plan_cycle(inventory, build_history(*verdicts), {}, to_sys(now), rotation);
  if (!rotation_plan.ok())
    return rotation_plan.error();
  CyclePlan plan;
  static_cast<Plan&>(plan) = std::move(rotation_plan).value();
  plan.running = on_runners(*unfinished);
  plan.at_release = std::move(*at_release);
  for (const auto& row : *rows) {
    if (!row.removed && row.manifest_error) {
      plan.skipped.push_back({row.model, row.version, SkipReason::manifest_invalid,
                              "manifest invalid: " + one_line(*row.manifest_error, 200)});
    }
  }
  CalibrationPlanConfig calibration;
  calibration.per_cycle = config.schedule.calibrations_per_cycle;
  calibration.max_runs = config.schedule.calibration_max_runs;
  plan.calibrations =
      plan_calibrations(calibration_candidates(inventory, std::move(latest).value(), *calibrations),
                        plan, config.schedule.gpu_budget_hours, calibration);
  plan.calibration_warnings =
      calibration_warnings(inventory, *calibrations, config.verdict.command_scope);
  const std::string& scope = config.verdict.command_scope;
  for (auto& missing : plan.missing_subsample) {
    const std::string id = missing.model + "@" + missing.version;
    missing.next_step =
        "a subsample rebuild of it is refused (nothing to judge it against); "
        "record one when releasing it: `" +
        std::string(kRecordSubsampleReference) +
        "`, then check it: " + suggested_command("run " + id + " --mode subsample", scope);
  }
  return plan;
}

Result<std::vector<QueuedRelease>> queue_releases(Store& store, const Config& config,
                                                  UnixSeconds now) {
  std::vector<QueuedRelease> queued;
  if (!config.schedule.at_release.enabled)
    return queued;
  auto plan = plan_current_cycle(store, config, now);
  if (!plan.ok())
    return plan.error();
  for (const auto& d : plan->at_release) {
    if (d.verification_id || !d.starts_at)
      continue;
    QueuedVerification item{d.model, d.version, d.mode, VerificationTrigger::release};
    item.not_before = from_sys(*d.starts_at);
    auto id = store.enqueue_unless_active(item);
    if (!id.ok()) {
      if (id.error().code == ErrorCode::conflict)
        continue;  // a manual trigger queued it meanwhile
      return id.error();
    }
    queued.push_back({*id, d.model, d.version, d.mode, d.reason});
  }
  return queued;
}

std::vector<QueuedVerification> plan_entries_to_queue(const Plan& plan, UnixSeconds now,
                                                      std::int64_t jitter_s, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::int64_t> jitter(0, std::max<std::int64_t>(jitter_s, 0));
  std::vector<QueuedVerification> queue;
  for (const auto& e : plan.entries) {
    QueuedVerification item{e.model, e.version, e.mode,
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
