// reverifyd: the daemon. `reverifyd --config FILE [--check-config]`.

#include <exception>
#include <iostream>
#include <string>

#include "daemon/daemon.hpp"
#include "pager/senders.hpp"
#include "runners/runner_factory.hpp"
#include "settings/config.hpp"

namespace {

int usage() {
  std::cerr << "usage: reverifyd --config FILE [--check-config]\n"
               "  --check-config  validate the config (and the secret files it names), then exit\n";
  return 2;
}

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
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--config" && i + 1 < argc) {
      config_path = argv[++i];
    } else if (arg.rfind("--config=", 0) == 0) {
      config_path = arg.substr(9);
    } else if (arg == "--check-config") {
      check = true;
    } else {
      return usage();
    }
  }
  if (config_path.empty())
    return usage();
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
