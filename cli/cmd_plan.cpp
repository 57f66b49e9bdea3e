// reverify plan --config FILE: what runs now (each job's standing on its runner: a Slurm job
// pending in its partition with Slurm's reason); what the current cycle verifies, in which order
// and mode, and why;
// what it defers and what it skips (verified this cycle, invalid manifest), each with why; the
// new releases verified at release (queued, to queue, or waiting for the next cycle) with when
// each is expected to start and why; the stored calibrations whose leave-one-out paged more
// than alpha allows, with the checks to blame; the large versions without a subsample reference,
// with the commands that record and check one; each cost in GPU-hours with what it was read
// from; computed like the daemon does from the store, read-only.

#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/schedule.hpp"

namespace {

// Skipped versions printed per reason; the rest are counted (--json has them all).
constexpr std::size_t kSkippedShown = 20;

struct PlanArguments {
  std::string config;
  bool json = false;
};

// Why a plan runs nothing, in words: the versions it skipped or deferred, or an empty inventory.
std::string why_nothing_to_run(const reverify::Plan& plan) {
  using namespace reverify;
  if (plan.skipped.empty() && plan.deferred.empty()) {
    return "no verifiable model version is listed (no source listed any yet: has reverifyd "
           "synced its sources? `reverifyd --check-config` checks them)";
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

// The verifications running now, with where each job stands on its runner (a Slurm job pending
// in its partition with Slurm's reason, or running on its node).
nlohmann::json running_to_json(const std::vector<reverify::VerificationRow>& unfinished) {
  using namespace reverify;
  nlohmann::json running = nlohmann::json::array();
  for (const auto& row : unfinished) {
    if (row.state != VerificationState::running)
      continue;
    running.push_back(
        {{"id", row.id},
         {"model", row.model},
         {"version", row.version},
         {"mode", to_string(row.mode)},
         {"runner", row.runner_kind ? nlohmann::json(to_string(*row.runner_kind)) : nullptr},
         {"ref", row.runner_ref ? nlohmann::json(*row.runner_ref) : nullptr},
         {"standing", row.runner_standing ? row.runner_standing->to_json() : nullptr},
         {"where", row.runner_standing ? row.runner_standing->text() : ""}});
  }
  return running;
}

int run_plan(const PlanArguments& options) {
  using namespace reverify;
  auto config = load_config(options.config);
  if (!config.ok())
    return cli::usage_error("plan", config.error().message);
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
  auto unfinished = (*store)->unfinished();
  if (!unfinished.ok()) {
    std::cerr << "reverify plan: " << unfinished.error().message << "\n";
    return 2;
  }
  auto j = plan_to_json(*plan);
  j["running"] = running_to_json(*unfinished);
  if (options.json) {
    j["skipped"] = skipped_to_json(*plan);
    if (plan->entries.empty())
      j["nothing_to_run"] = why_nothing_to_run(*plan);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "cycle " << j["cycle_start"].get<std::string>() << " .. "
            << j["cycle_end"].get<std::string>() << ": " << plan->entries.size() << " to run, "
            << plan->deferred.size() << " deferred, " << plan->skipped.size() << " skipped, "
            << plan->gpu_hours_planned << " GPU hours planned\n";
  if (plan->entries.empty())
    std::cout << "  nothing to run: " << why_nothing_to_run(*plan) << "\n";
  for (const auto& r : j["running"]) {
    std::cout << "  running " << r["model"].get<std::string>() << "@"
              << r["version"].get<std::string>() << "  " << r["mode"].get<std::string>()
              << "  verification " << r["id"].get<std::int64_t>();
    if (r["runner"].is_string()) {
      std::cout << "  " << r["runner"].get<std::string>() << " job "
                << (r["ref"].is_string() ? r["ref"].get<std::string>() : "(not started)");
    }
    if (!r["where"].get<std::string>().empty())
      std::cout << ": " << r["where"].get<std::string>();
    std::cout << "\n";
  }
  for (const auto& e : plan->entries) {
    std::cout << "  " << e.model << "@" << e.version << "  " << to_string(e.mode) << "  wave "
              << e.wave << "  " << e.gpu_hours << " GPU-hours (" << to_string(e.cost_basis) << ")  "
              << e.reason << "\n";
  }
  for (const auto& d : plan->deferred) {
    std::cout << "  deferred " << d.model << "@" << d.version << ": " << d.reason << "\n";
  }
  for (const auto& c : plan->calibrations) {
    std::cout << "  calibrate " << c.model << "@" << c.version << ": " << c.reason << "\n";
  }
  // Each version whose model sets a cadence: every mode, how often, its cost, next due.
  for (const auto& c : j["cadence"]) {
    std::cout << "  cadence " << c["model"].get<std::string>() << "@"
              << c["version"].get<std::string>() << ":";
    for (const auto& m : c["modes"]) {
      std::cout << " " << m["mode"].get<std::string>() << " every " << m["every"].get<std::string>()
                << ", " << m["gpu_hours"].get<double>() << " GPU-hours ("
                << m["cost_basis"].get<std::string>() << "), next due "
                << m["next_due"].get<std::string>() << ";";
    }
    std::cout << "\n";
  }
  if (j["cadence_total"].get<std::size_t>() > j["cadence"].size()) {
    std::cout << "  cadence of " << j["cadence_total"].get<std::size_t>() - j["cadence"].size()
              << " more version(s) not listed\n";
  }
  for (const auto& r : j["at_release"]) {
    std::cout << "  at release " << r["model"].get<std::string>() << "@"
              << r["version"].get<std::string>() << "  " << r["mode"].get<std::string>() << "  "
              << r["state"].get<std::string>() << ", expected "
              << r["expected_at"].get<std::string>() << ": " << r["reason"].get<std::string>()
              << "\n";
  }
  for (const auto& m : j["missing_subsample"]) {
    std::cout << "  no subsample reference " << m["model"].get<std::string>() << "@"
              << m["version"].get<std::string>() << " (large: " << m["large"].get<std::string>()
              << "): " << m["next_step"].get<std::string>() << "\n";
  }
  if (j["missing_subsample_total"].get<std::size_t>() > j["missing_subsample"].size()) {
    std::cout << "  "
              << j["missing_subsample_total"].get<std::size_t>() - j["missing_subsample"].size()
              << " more large version(s) without a subsample reference not listed\n";
  }
  for (const auto& w : plan->calibration_warnings) {
    std::cout << "  WARNING " << w.model << "@" << w.version
              << ": its calibration's leave-one-out: " << w.text << "\n";
  }
  // Each skipped version with why (new releases are listed above); past kSkippedShown of one
  // reason, how many more.
  std::map<SkipReason, std::size_t> shown;
  for (const auto& skip : plan->skipped) {
    if (skip.why == SkipReason::at_release)
      continue;
    if (shown[skip.why]++ < kSkippedShown)
      std::cout << "  skipped " << skip.model << "@" << skip.version << ": " << skip.reason << "\n";
  }
  for (const auto& [why, count] : shown) {
    if (count > kSkippedShown) {
      std::cout << "  skipped " << count - kSkippedShown << " more (" << to_string(why)
                << "; --json lists every one)\n";
    }
  }
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
