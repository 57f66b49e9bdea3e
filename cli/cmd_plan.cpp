// reverify plan --config FILE: what the current cycle verifies, in which order and mode, and why
// (and what it defers), computed like the daemon does from the store, read-only.

#include <iostream>

#include "cli/command.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/schedule.hpp"

namespace {

int run_plan(reverify::cli::Args& args) {
  using namespace reverify;
  auto path = args.option("config");
  if (!path)
    return cli::usage_error("plan", "--config FILE is required");
  auto config = load_config(*path);
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
  if (args.flag("json")) {
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
  return 0;
}

const reverify::cli::Registrar kPlan{{"plan",
                                      "--config FILE [--json]",
                                      "what the current cycle verifies and why",
                                      {"config"},
                                      {"json"},
                                      run_plan}};

}  // namespace
