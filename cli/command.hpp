#pragma once
// Subcommands register themselves (one file each, cli/cmd_<name>.cpp), so adding a command never
// edits a shared table. A command declares its arguments on its CLI11 subcommand and returns what
// runs once they parsed; every option carries its help text with units, and its default:
//
//   struct LintArguments { std::string manifest; bool json = false; std::optional<int> min_score;
//   }; int run_lint(const LintArguments& o) { ... } const Registrar kLint{{"lint", "score a
//   manifest's reproducibility readiness",
//       [](CLI::App& app) {
//         auto o = std::make_shared<LintArguments>();
//         app.add_option("MANIFEST", o->manifest, "manifest file or URL")->required();
//         app.add_option("--min-score", o->min_score, "exit 1 below this score (0-100)")
//             ->type_name("N")->check(integer_in(0, 100));
//         add_json_flag(app, o->json);
//         return [o] { return run_lint(*o); };
//       }}};
//
// Adding a flag = one member in the command's options struct + one add_option/add_flag line.
// Value checks (core/command_line.hpp: integer_in, duration, one_of, ...) run before the command,
// so a bad value exits 2 with "reverify lint: --min-score: must be ..." and never reaches it.
// Exit status convention: 0 success, 1 a negative answer (different, not verified, failed), 2 usage
// or input error; `run` adds 3 for uncalibrated, `bisect` 3 for nothing rebuilt.

#include <functional>
#include <map>
#include <string>

#include "core/command_line.hpp"

namespace reverify::cli {

using Action = std::function<int()>;

struct Command {
  std::string name;
  std::string summary;  // one line, shown by `reverify --help`
  // Declares positionals, options and flags on the command's CLI11 app; returns the action.
  std::function<Action(CLI::App& app)> define;
};

struct Registrar {
  explicit Registrar(Command command);
};

const std::map<std::string, Command>& registered_commands();

// Prints "reverify <name>: <message>" to stderr and returns 2.
int usage_error(const std::string& command, const std::string& message);

// --json: "print JSON on stdout instead of the human form".
CLI::Option* add_json_flag(CLI::App& app, bool& json);

}  // namespace reverify::cli
