#include "cli/command.hpp"

#include <algorithm>
#include <iostream>

namespace reverify::cli {
namespace {
std::map<std::string, Command>& registry() {
  static std::map<std::string, Command> commands;
  return commands;
}
}  // namespace

Args::Args(std::vector<std::string> argv, const std::vector<std::string>& value_options,
           const std::vector<std::string>& flags) {
  auto contains = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  bool options_done = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (options_done || arg.size() < 3 || arg.rfind("--", 0) != 0) {
      if (arg == "--") {
        options_done = true;
        continue;
      }
      positionals_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    const bool takes_value = contains(value_options, name);
    if (!takes_value && !contains(flags, name) && name != "help") {
      error_ = "unknown option --" + name;
      continue;
    }
    if (takes_value && !value) {
      if (i + 1 >= argv.size()) {
        error_ = "--" + name + " needs a value";
        continue;
      }
      value = argv[++i];
    }
    if (!takes_value && value) {
      error_ = "--" + name + " takes no value";
    }
    named_[name] = value;
  }
}

bool Args::flag(const std::string& name) const {
  return named_.count(name) != 0;
}

std::optional<std::string> Args::option(const std::string& name) const {
  auto it = named_.find(name);
  if (it == named_.end())
    return std::nullopt;
  return it->second;
}

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

}  // namespace reverify::cli
