// reverify plan --config FILE: what the current cycle verifies, in which order and mode, and why
// (and what it defers), computed like the daemon does from the store, read-only.

#include <iostream>

#include "cli/command.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/schedule.hpp"

namespace {

struct PlanArguments {
  std::string config;
  bool json = false;
};

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
  auto j = plan_to_json(*plan);
  if (options.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "cycle " << j["cycle_start"].get<std::string>() << " .. "
            << j["cycle_end"].get<std::string>() << ": " << plan->entries.size() << " to run, "
            << plan->deferred.size() << " deferred, " << plan->gpu_hours_planned
            << " GPU hours planned\n";
  for (const auto& e : plan->entries) {
    std::cout << "  " << e.model << "@" << e.version << "  " << (e.steps_mode ? "steps" : "full")
              << "  wave " << e.wave << "  " << e.reason << "\n";
  }
  for (const auto& d : plan->deferred) {
    std::cout << "  deferred " << d.model << "@" << d.version << ": " << d.reason << "\n";
  }
  for (const auto& c : plan->calibrations) {
    std::cout << "  calibrate " << c.model << "@" << c.version << ": " << c.reason << "\n";
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
