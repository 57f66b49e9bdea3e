// reverify plan --config FILE: what runs now (each job's standing on its runner: a Slurm job
// pending in its partition with Slurm's reason); what the current cycle verifies, in which order
// and mode, and why;
// what it defers and what it skips (verified this cycle, invalid manifest), each with why; the
// new releases verified at release (queued, to queue, or waiting for the next cycle) with when
// each is expected to start and why; the stored calibrations whose leave-one-out paged more
// than alpha allows, with the checks to blame; the large versions without a subsample reference,
// with the commands that record and check one; each cadence mode's next due date ("never run")
// and each period the cycle cannot keep; each cost in GPU-hours with what it was read from;
// computed like the daemon does from the store, read-only, from the typed plan (verify/
// cycle_plan.hpp) its text and JSON are both written from.

#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "core/suggested_command.hpp"
#include "settings/config.hpp"
#include "store/restore_advice.hpp"
#include "store/store.hpp"
#include "verify/schedule.hpp"

namespace {

// Skipped versions printed per reason; the rest are counted (--json has them all).
constexpr std::size_t kSkippedShown = 20;

struct PlanArguments {
  std::string config;
  bool json = false;
};

// Why a plan runs nothing, in words: the versions it skipped or deferred, or an empty inventory
// (then the command that checks the sources of `config_file`).
std::string why_nothing_to_run(const reverify::Plan& plan, const std::string& config_file) {
  using namespace reverify;
  if (plan.skipped.empty() && plan.deferred.empty()) {
    return "no verifiable model version is listed (no source listed any yet: has reverifyd "
           "synced its sources? `reverifyd " +
           config_scope(config_file) + " --check-config` checks them)";
  }
  std::map<SkipReason, std::size_t> counts;
  for (const auto& skip : plan.skipped)
    ++counts[skip.why];
  std::string text;
  const auto add = [&text](const std::string& part) { text += (text.empty() ? "" : "; ") + part; };
  if (auto n = counts[SkipReason::verified_this_cycle]) {
    add(std::to_string(n) + " version(s) already verified in this cycle (due again from " +
        rfc3339(plan.cycle_end.time_since_epoch().count()) + ")");
  }
  if (auto n = counts[SkipReason::manifest_invalid])
    add(std::to_string(n) + " version(s) with an invalid manifest");
  if (auto n = counts[SkipReason::not_due])
    add(std::to_string(n) + " version(s) whose cadence has no mode due this cycle");
  if (auto n = counts[SkipReason::no_subsample_reference]) {
    add(std::to_string(n) +
        " version(s) whose only due mode is subsample, without a subsample reference");
  }
  if (auto n = counts[SkipReason::at_release])
    add(std::to_string(n) + " new release(s) verified at release, on its own budget");
  if (!plan.deferred.empty()) {
    add(std::to_string(plan.deferred.size()) +
        " due but deferred (schedule.per_cycle or gpu_budget_hours)");
  }
  return text;
}

// The verifications a runner holds now, with where each job stands on it.
void print_running(std::ostream& out, const reverify::CyclePlan& plan) {
  using namespace reverify;
  for (const auto& r : plan.running) {
    out << "  running " << r.model << "@" << r.version << "  " << to_string(r.mode)
        << "  verification " << r.verification_id;
    if (r.runner)
      out << "  " << to_string(*r.runner) << " job " << r.runner_ref.value_or("(not started)");
    if (r.standing)
      out << ": " << r.standing->text();
    out << "\n";
  }
}

// Each version whose model sets a cadence: every mode, how often, its cost, next due ("never
// run" for a mode that never completed); then each period the cycle cannot keep.
void print_cadence(std::ostream& out, const reverify::CyclePlan& plan) {
  using namespace reverify;
  std::size_t shown = 0;
  for (const auto& c : plan.cadence) {
    if (shown++ >= kPlanVersionsShown)
      break;
    out << "  cadence " << c.model << "@" << c.version << ":";
    for (const auto& m : c.modes) {
      out << " " << to_string(m.mode) << " every " << duration_text(m.every_s) << ", "
          << m.gpu_hours << " GPU-hours (" << to_string(m.cost_basis) << "), next due "
          << (m.next_due ? rfc3339(m.next_due->time_since_epoch().count()) : "never run") << ";";
    }
    out << "\n";
  }
  if (plan.cadence.size() > kPlanVersionsShown) {
    out << "  cadence of " << plan.cadence.size() - kPlanVersionsShown
        << " more version(s) not listed\n";
  }
  for (const auto& w : plan.cadence_warnings)
    out << "  WARNING " << w.text << "\n";
}

void print_releases(std::ostream& out, const reverify::CyclePlan& plan) {
  using namespace reverify;
  for (const auto& r : plan.at_release) {
    out << "  at release " << r.model << "@" << r.version << "  " << to_string(r.mode) << "  "
        << to_string(release_state(r)) << ", expected " << rfc3339(plan.expected_at(r)) << ": "
        << r.reason << "\n";
  }
}

void print_missing_subsample(std::ostream& out, const reverify::CyclePlan& plan) {
  using namespace reverify;
  std::size_t shown = 0;
  for (const auto& m : plan.missing_subsample) {
    if (shown++ >= kPlanVersionsShown)
      break;
    out << "  no subsample reference " << m.model << "@" << m.version << " (large: " << m.why_large
        << "): " << m.next_step << "\n";
  }
  if (plan.missing_subsample.size() > kPlanVersionsShown) {
    out << "  " << plan.missing_subsample.size() - kPlanVersionsShown
        << " more large version(s) without a subsample reference not listed\n";
  }
}

void print_plan(std::ostream& out, const reverify::CyclePlan& plan,
                const std::string& config_file) {
  using namespace reverify;
  out << "cycle " << rfc3339(plan.cycle_start.time_since_epoch().count()) << " .. "
      << rfc3339(plan.cycle_end.time_since_epoch().count()) << ": " << plan.entries.size()
      << " to run, " << plan.deferred.size() << " deferred, " << plan.skipped.size() << " skipped, "
      << plan.gpu_hours_planned << " GPU hours planned\n";
  if (plan.entries.empty())
    out << "  nothing to run: " << why_nothing_to_run(plan, config_file) << "\n";
  print_running(out, plan);
  for (const auto& e : plan.entries) {
    out << "  " << e.model << "@" << e.version << "  " << to_string(e.mode) << "  wave " << e.wave
        << "  " << e.gpu_hours << " GPU-hours (" << to_string(e.cost_basis) << ")  " << e.reason
        << "\n";
  }
  for (const auto& d : plan.deferred)
    out << "  deferred " << d.model << "@" << d.version << ": " << d.reason << "\n";
  for (const auto& c : plan.calibrations)
    out << "  calibrate " << c.model << "@" << c.version << ": " << c.reason << "\n";
  print_cadence(out, plan);
  print_releases(out, plan);
  print_missing_subsample(out, plan);
  for (const auto& w : plan.calibration_warnings) {
    std::string blamed;
    for (const auto& [check, runs] : w.blamed)
      blamed += (blamed.empty() ? "" : ", ") + check + " (" + std::to_string(runs) + ")";
    out << "  WARNING " << w.model << "@" << w.version
        << ": its calibration's leave-one-out: " << w.text << "\n";
    if (!blamed.empty())
      out << "    to blame: " << blamed << "\n";
  }
  // Each skipped version with why (new releases are listed above); past kSkippedShown of one
  // reason, how many more.
  std::map<SkipReason, std::size_t> shown;
  for (const auto& skip : plan.skipped) {
    if (skip.why == SkipReason::at_release)
      continue;
    if (shown[skip.why]++ < kSkippedShown)
      out << "  skipped " << skip.model << "@" << skip.version << ": " << skip.reason << "\n";
  }
  for (const auto& [why, count] : shown) {
    if (count > kSkippedShown) {
      out << "  skipped " << count - kSkippedShown << " more (" << to_string(why)
          << "; --json lists every one)\n";
    }
  }
}

int run_plan(const PlanArguments& options) {
  using namespace reverify;
  auto config = load_config(options.config);
  if (!config.ok())
    return cli::usage_error("plan", config.error().message);
  set_restore_scope(config->api.command_scope);
  auto store = Store::open(config->db_path(), system_now, /*read_only=*/true);
  if (!store.ok()) {
    std::cerr << "reverify plan: " << store.error().message
              << " (has reverifyd run with this config yet?)\n";
    return 2;
  }
  auto plan = plan_current_cycle(**store, *config, system_now());
  if (!plan.ok()) {
    std::cerr << "reverify plan: " << plan.error().message << "\n";
    return 2;
  }
  if (options.json) {
    auto j = plan_to_json(*plan);
    j["skipped"] = skipped_to_json(*plan);
    if (plan->entries.empty())
      j["nothing_to_run"] = why_nothing_to_run(*plan, options.config);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  print_plan(std::cout, *plan, options.config);
  return 0;
}

reverify::cli::Action define_plan(CLI::App& app) {
  auto o = std::make_shared<PlanArguments>();
  app.add_option("--config", o->config,
                 "reverifyd's config file; the plan is computed from its state_dir, read-only")
      ->type_name("FILE")
      ->required();
  reverify::cli::add_json_flag(app, o->json);
  return [o] { return run_plan(*o); };
}

const reverify::cli::Registrar kPlan{
    {"plan", "what the current cycle verifies and why", define_plan}};

}  // namespace
