// reverifyd: the daemon. `reverifyd --config FILE [--check-config]`, `--help`, `--version`.

#include <exception>
#include <iostream>
#include <string>

#include "core/command_line.hpp"
#include "core/version.hpp"
#include "daemon/daemon.hpp"
#include "pager/senders.hpp"
#include "runners/runner_factory.hpp"
#include "settings/config.hpp"

namespace {

// Everything the daemon would refuse at start, reported without starting it.
int check_config(const reverify::Config& config) {
  auto senders = reverify::make_notifiers(config.pager);
  if (!senders.ok()) {
    std::cerr << "reverifyd: config invalid:\n" << senders.error().message << "\n";
    return 2;
  }
  auto runner = reverify::make_runner(config.runner);
  if (!runner.ok()) {
    std::cerr << "reverifyd: config invalid:\n" << runner.error().message << "\n";
    return 2;
  }
  std::cout << "config OK: listen " << config.api.address << ":" << config.api.port
            << ", state_dir " << config.state_dir.string() << ", " << config.sources.size()
            << " source(s), runner " << config.runner.kind << ", " << senders->size()
            << " pager sender(s)\n";
  return 0;
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
               "validate the config and what it names (secret files, pager senders, runner), "
               "then exit: 0 valid, 2 not");
  app.allow_extras();  // reported by parse_command_line, with a suggestion
  if (auto exit_status = reverify::parse_command_line(app, {argv + 1, argv + argc}))
    return *exit_status;
  try {
    auto config = reverify::load_config(config_path);
    if (!config.ok()) {
      std::cerr << "reverifyd: config invalid: " << config.error().message << "\n";
      return 2;
    }
    if (check)
      return check_config(*config);
    reverify::DaemonOptions options;
    options.config_path = config_path;
    auto daemon = reverify::Daemon::create(std::move(*config), std::move(options));
    if (!daemon.ok()) {
      std::cerr << "reverifyd: cannot start: " << daemon.error().message << "\n";
      return 1;
    }
    return (*daemon)->run();
  } catch (const std::exception& e) {
    std::cerr << "reverifyd: internal error: " << e.what() << "\n";
    return 70;
  }
}
