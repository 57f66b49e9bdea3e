#include "verify/cycle_plan.hpp"

namespace reverify {

namespace {

UnixSeconds unix_of(std::chrono::sys_seconds t) {
  return t.time_since_epoch().count();
}

nlohmann::json time_or_null(const std::optional<std::chrono::sys_seconds>& t) {
  return t ? nlohmann::json(rfc3339(unix_of(*t))) : nlohmann::json(nullptr);
}

nlohmann::json entries_json(const Plan& plan) {
  auto entries = nlohmann::json::array();
  for (const auto& e : plan.entries) {
    entries.push_back({{"model", e.model},
                       {"version", e.version},
                       {"mode", to_string(e.mode)},
                       {"manual", e.manual},
                       {"gpu_hours", e.gpu_hours},
                       {"cost_basis", to_string(e.cost_basis)},
                       {"wave", e.wave},
                       {"reason", e.reason}});
  }
  return entries;
}

nlohmann::json releases_json(const CyclePlan& plan) {
  auto at_release = nlohmann::json::array();
  for (const auto& r : plan.at_release) {
    at_release.push_back(
        {{"model", r.model},
         {"version", r.version},
         {"mode", to_string(r.mode)},
         {"gpu_hours", r.gpu_hours},
         {"first_seen", rfc3339(unix_of(r.first_seen))},
         {"state", to_string(release_state(r))},
         {"verification_id", r.verification_id ? nlohmann::json(*r.verification_id) : nullptr},
         {"expected_at", rfc3339(plan.expected_at(r))},
         {"reason", r.reason}});
  }
  return at_release;
}

nlohmann::json cadence_json(const Plan& plan) {
  auto cadence = nlohmann::json::array();
  for (const auto& c : plan.cadence) {
    if (cadence.size() >= kPlanVersionsShown)
      break;
    auto modes = nlohmann::json::array();
    for (const auto& m : c.modes) {
      modes.push_back({{"mode", to_string(m.mode)},
                       {"every", duration_text(m.every_s)},
                       {"every_s", m.every_s},
                       {"gpu_hours", m.gpu_hours},
                       {"cost_basis", to_string(m.cost_basis)},
                       {"last_completed", time_or_null(m.last_completed)},
                       {"next_due", time_or_null(m.next_due)},
                       {"due", m.due}});
    }
    cadence.push_back({{"model", c.model}, {"version", c.version}, {"modes", std::move(modes)}});
  }
  return cadence;
}

nlohmann::json calibrations_json(const CyclePlan& plan) {
  auto planned = nlohmann::json::array();
  for (const auto& c : plan.calibrations) {
    planned.push_back({{"model", c.model},
                       {"version", c.version},
                       {"max_runs", c.max_runs},
                       {"runs_to_add", c.runs_to_add},
                       {"gpu_hours", c.gpu_hours},
                       {"reason", c.reason}});
  }
  return planned;
}

nlohmann::json calibrating_json(const CyclePlan& plan) {
  auto done = nlohmann::json::array();
  for (const auto& c : plan.calibrated)
    done.push_back({{"model", c.model}, {"version", c.version}, {"outcome", c.outcome}});
  nlohmann::json running;
  if (const auto& c = plan.calibrating)
    running = {{"model", c->model}, {"version", c->version}, {"since", rfc3339(c->since)}};
  return {{"running", std::move(running)}, {"done", std::move(done)}};
}

nlohmann::json warnings_json(const Plan& plan) {
  auto warnings = nlohmann::json::array();
  for (const auto& w : plan.calibration_warnings) {
    auto blamed = nlohmann::json::array();
    for (const auto& [check, runs] : w.blamed)
      blamed.push_back({{"check", check}, {"runs", runs}});
    warnings.push_back({{"model", w.model},
                        {"version", w.version},
                        {"leave_one_out", w.text},
                        {"blamed", std::move(blamed)}});
  }
  return warnings;
}

nlohmann::json cadence_warnings_json(const Plan& plan) {
  auto warnings = nlohmann::json::array();
  for (const auto& w : plan.cadence_warnings) {
    warnings.push_back({{"model", w.model},
                        {"mode", to_string(w.mode)},
                        {"every_s", w.every_s},
                        {"warning", w.text}});
  }
  return warnings;
}

nlohmann::json missing_subsample_json(const Plan& plan) {
  auto missing = nlohmann::json::array();
  for (const auto& m : plan.missing_subsample) {
    if (missing.size() >= kPlanVersionsShown)
      break;
    missing.push_back({{"model", m.model},
                       {"version", m.version},
                       {"large", m.why_large},
                       {"next_step", m.next_step}});
  }
  return missing;
}

nlohmann::json running_json(const CyclePlan& plan) {
  auto running = nlohmann::json::array();
  for (const auto& r : plan.running) {
    running.push_back(
        {{"id", r.verification_id},
         {"model", r.model},
         {"version", r.version},
         {"mode", to_string(r.mode)},
         {"trigger", to_string(r.trigger)},
         {"started_at", r.started_at ? nlohmann::json(rfc3339(*r.started_at)) : nullptr},
         {"runner", r.runner ? nlohmann::json(to_string(*r.runner)) : nullptr},
         {"ref", r.runner_ref ? nlohmann::json(*r.runner_ref) : nullptr},
         {"standing", r.standing ? r.standing->to_json() : nullptr},
         {"where", r.standing ? r.standing->text() : ""}});
  }
  return running;
}

nlohmann::json skipped_counts_json(const Plan& plan) {
  auto skipped = nlohmann::json::object();
  for (const auto& entry : EnumNames<SkipReason>::table)
    skipped[entry.name] = 0;
  for (const auto& skip : plan.skipped)
    skipped[to_string(skip.why)] = skipped[to_string(skip.why)].get<std::int64_t>() + 1;
  return skipped;
}

}  // namespace

ReleaseState release_state(const ReleaseDecision& release) {
  return release.verification_id ? ReleaseState::queued
         : release.starts_at     ? ReleaseState::to_queue
                                 : ReleaseState::waiting;
}

UnixSeconds CyclePlan::expected_at(const ReleaseDecision& release) const {
  return unix_of(release.starts_at.value_or(cycle_end));
}

nlohmann::json plan_to_json(const CyclePlan& plan) {
  auto deferred = nlohmann::json::array();
  for (const auto& d : plan.deferred)
    deferred.push_back({{"model", d.model}, {"version", d.version}, {"reason", d.reason}});
  return {{"cycle_start", rfc3339(unix_of(plan.cycle_start))},
          {"cycle_end", rfc3339(unix_of(plan.cycle_end))},
          {"gpu_hours_planned", plan.gpu_hours_planned},
          {"running", running_json(plan)},
          {"entries", entries_json(plan)},
          {"deferred", std::move(deferred)},
          {"calibrations", calibrations_json(plan)},
          {"calibrating", calibrating_json(plan)},
          {"at_release", releases_json(plan)},
          {"cadence", cadence_json(plan)},
          {"cadence_total", plan.cadence.size()},
          {"cadence_warnings", cadence_warnings_json(plan)},
          {"calibration_warnings", warnings_json(plan)},
          {"missing_subsample", missing_subsample_json(plan)},
          {"missing_subsample_total", plan.missing_subsample.size()},
          {"skipped_counts", skipped_counts_json(plan)}};
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

}  // namespace reverify
