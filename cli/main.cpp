// reverify: the command line. Subcommands live in cli/cmd_*.cpp and register themselves; CLI11
// parses (core/command_line.hpp: shared help layout, error lines, suggestions).

#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "core/version.hpp"

namespace {

constexpr const char* kFooter =
    "Run `reverify COMMAND --help` for a command's arguments, their units and defaults.\n"
    "\n"
    "The daemon's API (status, gate, trigger) is found at --url, else the api.address and\n"
    "api.port of --config, else $REVERIFY_URL, else http://127.0.0.1:8420 (reverifyd's default).\n"
    "\n"
    "Exit status: 0 success; 1 a negative answer (failed, not verified, different, below the\n"
    "minimum); 2 usage, input or system error; `run` adds 3 for uncalibrated, `bisect` 3 for\n"
    "nothing rebuilt. 70 is a bug.\n"
    "\n"
    "Shell completion: source <(reverify completion bash)   (or zsh)";

}  // namespace

int main(int argc, char** argv) {
  using namespace reverify;
  std::vector<std::string> args(argv + 1, argv + argc);
  CLI::App app{"reverify: proves, on a schedule, that released ML models can still be rebuilt.",
               "reverify"};
  use_help_format(app);
  app.set_version_flag("--version", std::string(reverify_version()), "print the version and exit");
  app.require_subcommand(1);
  std::map<std::string, cli::Action> actions;
  for (const auto& [name, command] : cli::registered_commands()) {
    CLI::App* sub = app.add_subcommand(name, command.summary);
    sub->allow_extras();  // reported by parse_command_line, with a suggestion
    actions[name] = command.define(*sub);
  }
  app.footer(kFooter);  // after the subcommands, which would inherit it

  if (args.empty()) {
    std::cerr << app.help();
    return 2;
  }
  if (args[0] == "help")  // `reverify help` and `reverify help COMMAND`
    args = args.size() > 1 ? std::vector<std::string>{args[1], "--help"}
                           : std::vector<std::string>{"--help"};
  if (args[0].empty() || args[0][0] != '-') {
    if (!actions.count(args[0])) {
      std::cerr << "reverify: " << unknown_command_message(app, args[0])
                << "\n(reverify --help lists every command)\n";
      return 2;
    }
  }
  if (auto exit_status = parse_command_line(app, args))
    return *exit_status;
  const std::string name = app.get_subcommands().front()->get_name();
  try {
    return actions.at(name)();
  } catch (const std::exception& e) {
    // Exceptions are bugs (expected failures are values): say so plainly.
    std::cerr << "reverify " << name << ": internal error: " << e.what() << "\n";
    return 70;
  }
}
