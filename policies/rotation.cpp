#include "policies/rotation.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/unix_time.hpp"
#include "policies/cron.hpp"
#include "policies/number_text.hpp"

namespace reverify {
namespace {

using namespace std::chrono;

std::string date_text(sys_seconds t) {
  const auto day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss time(t - day);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02dZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()));
  return buffer;
}

std::string id_of(const std::string& model, const std::string& version) {
  return model + "@" + version;
}

struct Record {
  std::optional<sys_seconds> last_verified;
  std::optional<sys_seconds> last_scheduled;  // the last completed one nobody asked for by hand
  std::size_t steps_since_full = 0;  // completed verifications in another mode since the last full
  std::map<RebuildMode, sys_seconds> last_by_mode;  // the last completed verification per mode
};

std::map<std::string, Record> records(const std::vector<HistoryItem>& history, sys_seconds now) {
  std::vector<const HistoryItem*> done;
  for (const auto& h : history)
    if (h.completed && h.finished_at <= now)
      done.push_back(&h);
  std::stable_sort(done.begin(), done.end(), [](const HistoryItem* a, const HistoryItem* b) {
    return a->finished_at < b->finished_at;
  });
  std::map<std::string, Record> out;
  for (const auto* h : done) {
    auto& r = out[id_of(h->model, h->version)];
    r.last_verified = h->finished_at;
    if (!h->manual)
      r.last_scheduled = h->finished_at;
    r.steps_since_full = h->mode == RebuildMode::full ? 0 : r.steps_since_full + 1;
    r.last_by_mode[h->mode] = h->finished_at;
  }
  return out;
}

struct Candidate {
  const InventoryItem* item;
  Record record;
};

// Releases the at-release budget left waiting first, then never verified, then least recently
// verified, then criticality, newer release, name.
bool before(const Candidate& a, const Candidate& b) {
  if (a.item->awaiting_release != b.item->awaiting_release)
    return a.item->awaiting_release;
  const auto& ra = a.record.last_verified;
  const auto& rb = b.record.last_verified;
  if (ra.has_value() != rb.has_value())
    return !ra.has_value();
  if (ra && *ra != *rb)
    return *ra < *rb;
  if (a.item->criticality != b.item->criticality)
    return a.item->criticality > b.item->criticality;
  const auto& da = a.item->released_at;
  const auto& db = b.item->released_at;
  if (da.has_value() != db.has_value())
    return da.has_value();
  if (da && *da != *db)
    return *da > *db;
  return std::tie(a.item->model, a.item->version) < std::tie(b.item->model, b.item->version);
}

std::vector<ModeDue> modes_due(const InventoryItem& item, const Record& record,
                               sys_seconds cycle_start, sys_seconds cycle_end) {
  std::vector<ModeDue> modes;
  for (const auto& [mode, every] : item.cadence_s) {
    ModeDue m{mode,         every, item.gpu_hours(mode), item.cost_basis(mode), std::nullopt,
              std::nullopt, true};
    if (auto last = record.last_by_mode.find(mode); last != record.last_by_mode.end()) {
      m.last_completed = last->second;
      m.next_due = last->second + seconds(every);
      // Completed in this cycle: not again before the next one, whatever its period.
      if (last->second >= cycle_start)
        m.next_due = std::max(*m.next_due, cycle_end);
      m.due = *m.next_due < cycle_end;
    }
    modes.push_back(m);
  }
  return modes;
}

// When a mode is next due, in words: "never run" or the date.
std::string next_due_text(const ModeDue& m) {
  return m.next_due ? date_text(*m.next_due) : std::string("never run");
}

struct ModeChoice {
  RebuildMode mode = RebuildMode::full;
  std::optional<SkipReason> skip;  // not_due or no_subsample_reference: nothing runs
  std::string text;
};

// A cadence: the due mode (due before the cycle ends) with the longest period, else (nothing due)
// the mode due first. Subsample mode is never picked for a version without a subsample reference
// (it would be refused): another due mode runs instead, and when none is due the version is
// skipped with that reason. Without a cadence, large models: steps mode, a full rebuild every Nth
// verification.
ModeChoice choose_mode(const InventoryItem& item, const Record& record, std::size_t every_n,
                       sys_seconds cycle_start, sys_seconds cycle_end) {
  if (!item.cadence_s.empty()) {
    const auto modes = modes_due(item, record, cycle_start, cycle_end);
    const ModeDue* pick = nullptr;
    const ModeDue* refused = nullptr;  // subsample due without a reference
    for (const auto& m : modes) {
      if (!m.due)
        continue;
      if (m.mode == RebuildMode::subsample && !item.has_subsample_reference())
        refused = &m;
      else if (!pick || m.every_s > pick->every_s)
        pick = &m;
    }
    const auto describe = [](const ModeDue& m) {
      return std::string(to_string(m.mode)) + " every " + duration_text(m.every_s) +
             (m.last_completed
                  ? ", last " + date_text(*m.last_completed) + ", due " + next_due_text(m)
                  : std::string(", never run"));
    };
    const std::string no_reference =
        refused ? "; subsample (" + describe(*refused) +
                      ") not run: the manifest records no subsample reference"
                : "";
    if (pick)
      return {pick->mode, std::nullopt, "cadence: " + describe(*pick) + no_reference};
    if (refused) {
      // A manual trigger without a mode runs this one: another mode of the cadence (the one due
      // first) where there is one, since subsample would be refused.
      const ModeDue* other = nullptr;
      for (const auto& m : modes) {
        if (m.mode != RebuildMode::subsample && (!other || m.next_due < other->next_due))
          other = &m;  // nullopt (never run) orders first
      }
      return {other ? other->mode : RebuildMode::subsample, SkipReason::no_subsample_reference,
              "cadence: " + describe(*refused) +
                  ", but the manifest records no subsample reference, so a subsample rebuild "
                  "would be refused; no other mode is due before " +
                  date_text(cycle_end)};
    }
    const ModeDue* first = &modes.front();
    std::string text = "cadence: nothing due before " + date_text(cycle_end);
    for (const auto& m : modes) {
      text += "; " + describe(m);
      if (m.next_due < first->next_due)
        first = &m;
    }
    return {first->mode, SkipReason::not_due, text};
  }
  if (!item.large)
    return {RebuildMode::full, std::nullopt, "full rebuild"};
  if (record.steps_since_full + 1 >= every_n)
    return {
        RebuildMode::full, std::nullopt,
        "full rebuild (large model: every " + std::to_string(every_n) + "th verification is full)"};
  return {RebuildMode::steps, std::nullopt,
          "steps mode (large model; full rebuild after " +
              std::to_string(every_n - 1 - record.steps_since_full) +
              " more steps verification(s))"};
}

// Per model and mode, each cadence period the cycle is more than kCadenceSlack times as long as.
std::vector<CadenceWarning> cadence_warnings(const std::vector<InventoryItem>& inventory,
                                             sys_seconds cycle_start, sys_seconds cycle_end) {
  const std::int64_t cycle_s = (cycle_end - cycle_start).count();
  std::map<std::pair<std::string, RebuildMode>, CadenceWarning> by_model;
  for (const auto& item : inventory) {
    for (const auto& [mode, every] : item.cadence_s) {
      if (double(cycle_s) <= kCadenceSlack * double(every) || by_model.count({item.model, mode}))
        continue;
      by_model[{item.model, mode}] = {
          item.model, mode, every,
          item.model + "'s cadence runs " + std::string(to_string(mode)) + " every " +
              duration_text(every) + ", but this cycle (" + date_text(cycle_start) + " to " +
              date_text(cycle_end) + ") lasts " + duration_text(cycle_s) +
              " and runs each mode of a version at most once: it runs about every " +
              duration_text(cycle_s) +
              "; shorten the cycle (schedule.cron) or lengthen the period to match"};
    }
  }
  std::vector<CadenceWarning> warnings;
  for (auto& [key, warning] : by_model)
    warnings.push_back(std::move(warning));
  return warnings;
}

std::string priority_text(const Candidate& c, sys_seconds now) {
  std::string why =
      c.item->awaiting_release ? "new release the at-release budget left waiting: first pick"
      : c.record.last_verified
          ? "last verified " + date_text(*c.record.last_verified) + " (" +
                std::to_string(duration_cast<days>(now - *c.record.last_verified).count()) +
                " days ago)"
          : "never verified";
  return why + ", criticality " + std::to_string(c.item->criticality);
}

}  // namespace

SubsampleCost subsample_cost(std::int64_t devices, double full_gpu_hours,
                             std::optional<double> fraction, std::optional<double> duration_s) {
  if (!fraction)
    return {CostBasis::no_reference, full_gpu_hours};
  if (duration_s)
    return {CostBasis::subsample_duration, double(devices) * *duration_s / 3600.0};
  return {CostBasis::subsample_fraction, *fraction * full_gpu_hours};
}

double InventoryItem::gpu_hours(RebuildMode mode) const {
  switch (mode) {
    case RebuildMode::steps:
      return steps_gpu_hours;
    case RebuildMode::subsample:
      return has_subsample_reference() ? subsample.gpu_hours : full_gpu_hours;
    case RebuildMode::full:
      break;
  }
  return full_gpu_hours;
}

CostBasis InventoryItem::cost_basis(RebuildMode mode) const {
  switch (mode) {
    case RebuildMode::steps:
      return CostBasis::steps_fraction;
    case RebuildMode::subsample:
      return subsample.basis;
    case RebuildMode::full:
      break;
  }
  return CostBasis::full_run;
}

Result<std::pair<sys_seconds, sys_seconds>> cycle_bounds(sys_seconds now,
                                                         const RotationConfig& config) {
  if (!config.cron) {
    const year_month_day ymd(floor<days>(now));
    const auto first = ymd.year() / ymd.month() / day(1);
    return std::pair{sys_seconds(sys_days(first)), sys_seconds(sys_days(first + months(1)))};
  }
  auto schedule = CronSchedule::parse(*config.cron);
  if (!schedule.ok())
    return schedule.error();
  const auto start = schedule->latest_at_or_before(now);
  const auto end = schedule->next_after(now);
  if (!start || !end)
    return make_error(ErrorCode::invalid_argument,
                      "cron expression \"" + *config.cron + "\" never fires");
  return std::pair{*start, *end};
}

Result<Plan> plan_cycle(const std::vector<InventoryItem>& inventory,
                        const std::vector<HistoryItem>& history,
                        const std::vector<ManualTrigger>& triggers, sys_seconds now,
                        const RotationConfig& config) {
  if (config.max_concurrent == 0)
    return make_error(ErrorCode::invalid_argument, "rotation.max_concurrent: must be at least 1");
  if (config.full_every_n_cycles == 0)
    return make_error(ErrorCode::invalid_argument,
                      "rotation.full_every_n_cycles: must be at least 1");
  if (config.gpu_budget_hours && *config.gpu_budget_hours < 0)
    return make_error(ErrorCode::invalid_argument,
                      "rotation.gpu_budget_hours: must not be negative");
  auto bounds = cycle_bounds(now, config);
  if (!bounds.ok())
    return bounds.error();

  Plan plan;
  std::tie(plan.cycle_start, plan.cycle_end) = *bounds;
  const auto history_by_id = records(history, now);
  std::map<std::string, const InventoryItem*> by_id;
  for (const auto& item : inventory)
    by_id.emplace(id_of(item.model, item.version), &item);
  auto record_of = [&](const std::string& id) {
    auto it = history_by_id.find(id);
    return it == history_by_id.end() ? Record{} : it->second;
  };

  // Manual triggers: always run, first, in request order; they still use up GPU budget.
  std::vector<const ManualTrigger*> manual;
  for (const auto& t : triggers)
    manual.push_back(&t);
  std::stable_sort(manual.begin(), manual.end(),
                   [](const ManualTrigger* a, const ManualTrigger* b) {
                     return a->requested_at < b->requested_at;
                   });
  std::set<std::string> planned;
  for (const auto* t : manual) {
    const auto id = id_of(t->model, t->version);
    if (!planned.insert(id).second)
      continue;
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      plan.deferred.push_back(
          {t->model, t->version, "manual trigger for a model version not in the inventory"});
      continue;
    }
    const auto choice = choose_mode(*it->second, record_of(id), config.full_every_n_cycles,
                                    plan.cycle_start, plan.cycle_end);
    PlanEntry e{t->model, t->version, t->mode.value_or(choice.mode), true, 0, {}, 0, ""};
    e.gpu_hours = it->second->gpu_hours(e.mode);
    e.cost_basis = it->second->cost_basis(e.mode);
    e.reason = "manual trigger" +
               (t->requested_by.empty() ? std::string() : " by " + t->requested_by) + " at " +
               date_text(t->requested_at) + "; " +
               (t->mode ? std::string(to_string(e.mode)) + " mode as requested" : choice.text);
    plan.gpu_hours_planned += e.gpu_hours;
    plan.entries.push_back(std::move(e));
  }

  std::vector<Candidate> due;
  for (const auto& item : inventory) {
    const auto id = id_of(item.model, item.version);
    const auto record = record_of(id);
    if (planned.count(id))
      continue;
    if (item.at_release) {
      plan.skipped.push_back(
          {item.model, item.version, SkipReason::at_release, item.at_release_reason});
      continue;
    }
    // With a cadence, a manual run counts for its own mode only (choose_mode sees it): what
    // ends the version's cycle is a verification the schedule queued.
    const auto& this_cycle = item.cadence_s.empty() ? record.last_verified : record.last_scheduled;
    if (this_cycle && *this_cycle >= plan.cycle_start) {
      plan.skipped.push_back({item.model, item.version, SkipReason::verified_this_cycle,
                              "verified " + date_text(*this_cycle) +
                                  ", in this cycle; due again in the cycle starting " +
                                  date_text(plan.cycle_end)});
      continue;
    }
    due.push_back({&item, record});
  }
  std::stable_sort(due.begin(), due.end(), before);
  std::size_t scheduled = 0;
  for (const auto& c : due) {
    const auto choice = choose_mode(*c.item, c.record, config.full_every_n_cycles, plan.cycle_start,
                                    plan.cycle_end);
    if (choice.skip) {
      plan.skipped.push_back({c.item->model, c.item->version, *choice.skip, choice.text});
      continue;
    }
    const double cost = c.item->gpu_hours(choice.mode);
    const std::string why = priority_text(c, now);
    if (scheduled >= config.per_cycle) {
      plan.deferred.push_back(
          {c.item->model, c.item->version,
           why + "; per_cycle limit of " + std::to_string(config.per_cycle) + " reached"});
      continue;
    }
    if (config.gpu_budget_hours &&
        plan.gpu_hours_planned + cost > *config.gpu_budget_hours + 1e-9) {
      plan.deferred.push_back(
          {c.item->model, c.item->version,
           why + "; needs " + number_text(cost) + " GPU-hours, " +
               number_text(std::max(0.0, *config.gpu_budget_hours - plan.gpu_hours_planned)) +
               " left of the " + number_text(*config.gpu_budget_hours) + " budget"});
      continue;
    }
    ++scheduled;
    plan.gpu_hours_planned += cost;
    plan.entries.push_back({c.item->model, c.item->version, choice.mode, false, cost,
                            c.item->cost_basis(choice.mode), 0, why + "; " + choice.text});
  }
  for (std::size_t i = 0; i < plan.entries.size(); ++i)
    plan.entries[i].wave = i / config.max_concurrent;
  plan.cadence_warnings = cadence_warnings(inventory, plan.cycle_start, plan.cycle_end);
  for (const auto& item : inventory) {
    if (!item.cadence_s.empty())
      plan.cadence.push_back({item.model, item.version,
                              modes_due(item, record_of(id_of(item.model, item.version)),
                                        plan.cycle_start, plan.cycle_end)});
    if (item.wants_subsample_reference() && !item.has_subsample_reference()) {
      auto cadence = item.cadence_s.find(RebuildMode::subsample);
      plan.missing_subsample.push_back(
          {item.model, item.version,
           cadence != item.cadence_s.end()
               ? "its cadence runs subsample every " + duration_text(cadence->second)
               : item.large_reason,
           ""});
    }
  }
  return plan;
}

}  // namespace reverify
