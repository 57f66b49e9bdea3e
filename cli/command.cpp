#include "cli/command.hpp"

#include <iostream>

namespace reverify::cli {
namespace {
std::map<std::string, Command>& registry() {
  static std::map<std::string, Command> commands;
  return commands;
}
}  // namespace

Registrar::Registrar(Command command) {
  auto name = command.name;
  registry().emplace(std::move(name), std::move(command));
}

const std::map<std::string, Command>& registered_commands() {
  return registry();
}

int usage_error(const std::string& command, const std::string& message) {
  std::cerr << "reverify " << command << ": " << message << "\n";
  return 2;
}

CLI::Option* add_json_flag(CLI::App& app, bool& json) {
  return app.add_flag("--json", json, "print JSON on stdout instead of the human form");
}

}  // namespace reverify::cli
