// reverify: the command line. Subcommands live in cli/cmd_*.cpp and register themselves.

#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.hpp"

namespace {
void print_help(std::ostream& out) {
  out << "usage: reverify <command> [arguments]\n\ncommands:\n";
  for (const auto& [name, command] : reverify::cli::registered_commands()) {
    out << "  " << name << " " << command.usage << "\n      " << command.summary << "\n";
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_help(args.empty() ? std::cerr : std::cout);
    return args.empty() ? 2 : 0;
  }
  const auto& commands = reverify::cli::registered_commands();
  auto it = commands.find(args[0]);
  if (it == commands.end()) {
    std::cerr << "reverify: unknown command \"" << args[0] << "\"\n";
    print_help(std::cerr);
    return 2;
  }
  const auto& command = it->second;
  reverify::cli::Args parsed(std::vector<std::string>(args.begin() + 1, args.end()),
                             command.value_options, command.flags);
  if (parsed.flag("help")) {
    std::cout << "usage: reverify " << command.name << " " << command.usage << "\n"
              << command.summary << "\n";
    return 0;
  }
  if (!parsed.error().empty())
    return reverify::cli::usage_error(command.name, parsed.error());
  try {
    return command.run(parsed);
  } catch (const std::exception& e) {
    // Exceptions are bugs (expected failures are values): say so plainly.
    std::cerr << "reverify " << command.name << ": internal error: " << e.what() << "\n";
    return 70;
  }
}
