// reverifyd: the daemon. `reverifyd --config FILE [--check-config]`, `--help`, `--version`.

#include <exception>
#include <iostream>
#include <string>

#include "core/command_line.hpp"
#include "core/log.hpp"
#include "core/version.hpp"
#include "daemon/daemon.hpp"
#include "pager/senders.hpp"
#include "runners/runner_factory.hpp"
#include "settings/config.hpp"
#include "settings/config_check.hpp"
#include "verify/state_dir.hpp"

namespace {

// --check-config: the loader's errors and what the machine around the config lacks
// (settings/config_check.hpp), every one of them in one pass, one per line; exit 2 on any error.
int check_config(const std::string& path) {
  using namespace reverify;
  const ConfigReading reading = read_daemon_config_file(path);
  const auto problems = check_deployment(reading.config, reading.errors);
  std::size_t errors = reading.errors.size(), warnings = 0;
  for (const auto& error : reading.errors)
    std::cerr << "error: " << error << "\n";
  for (const auto& problem : problems) {
    const bool error = problem.severity == ProblemSeverity::error;
    (error ? errors : warnings) += 1;
    std::cerr << (error ? "error: " : "warning: ") << problem.message << "\n";
  }
  if (errors > 0) {
    std::cerr << path << ": " << errors << " error(s), " << warnings << " warning(s)\n";
    return 2;
  }
  const Config& config = reading.config;
  std::cout << "config OK" << (warnings ? " (" + std::to_string(warnings) + " warning(s))" : "")
            << ": listen " << config.api.address << ":" << config.api.port << ", state_dir "
            << config.state_dir.string() << ", " << config.sources.size() << " source(s), runner "
            << to_string(config.runner.kind) << ", " << config.pager.senders.size()
            << " pager sender(s)\n";
  return 0;
}

// reverifyd's collaborators made from the config (daemon.hpp), then its loop. Exit status 2 for an
// invalid config and for a state_dir it must not use: another reverifyd holds it, or its store is
// gone while the folder shows history (verify/state_dir.hpp).
int run_daemon(const std::string& config_path) {
  using namespace reverify;
  auto config = load_daemon_config(config_path);
  if (!config.ok()) {
    log_error("config invalid: " + config.error().message);
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(config->state_dir, ec);
  // Held until this process ends, however it ends.
  auto lock = StateLock::whole(config->state_dir, "reverifyd");
  if (!lock.ok()) {
    log_error("cannot start: " + lock.error().message +
              ": one reverifyd per state_dir (a second one would reconcile the first one's "
              "verifications as its own); stop that one, or give this one a state_dir of its own");
    return lock.error().code == ErrorCode::conflict ? 2 : 1;
  }
  auto store = open_state_store(*config, system_now);
  if (!store.ok()) {
    log_error("cannot start: " + store.error().message);
    return store.error().code == ErrorCode::conflict ? 2 : 1;
  }
  auto runner = make_runner(config->runner);
  if (!runner.ok()) {
    log_error("cannot start: " + runner.error().message);
    return 1;
  }
  SystemLoopClock clock;
  DaemonOptions options;
  options.config_path = config_path;
  auto daemon = Daemon::create(
      std::move(*config),
      DaemonCollaborators{**store, **runner, clock, make_registry_source, make_notifiers},
      std::move(options));
  if (!daemon.ok()) {
    log_error("cannot start: " + daemon.error().message);
    return 1;
  }
  return (*daemon)->run();
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  bool check = false;
  CLI::App app{
      "reverifyd: the reverify daemon. It verifies released model versions on a schedule "
      "and serves the status page, /metrics and the /v1 API (systemd Type=notify; "
      "SIGHUP reloads the config, SIGTERM drains and exits).",
      "reverifyd"};
  reverify::use_help_format(app);
  app.set_version_flag("--version", std::string(reverify::reverify_version()),
                       "print the version and exit");
  app.add_option("--config", config_path,
                 "the config file (installed: /etc/reverify/reverify.yaml; every key with its "
                 "default and unit: config/production.yaml)")
      ->type_name("FILE")
      ->required();
  app.add_flag("--check-config", check,
               "validate the config and the machine around it (secret files and their "
               "permissions, source roots, pager senders, runner), print every problem in one "
               "pass, then exit: 0 valid (warnings allowed), 2 not");
  app.allow_extras();  // reported by parse_command_line, with a suggestion
  if (auto exit_status = reverify::parse_command_line(app, {argv + 1, argv + argc}))
    return *exit_status;
  try {
    if (check)
      return check_config(config_path);
    reverify::install_crash_handler();
    return run_daemon(config_path);
  } catch (const std::exception& e) {
    reverify::log_error(std::string("internal error: ") + e.what());
    return 70;
  }
}
