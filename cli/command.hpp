#pragma once
// Subcommands register themselves (one file each, cli/cmd_<name>.cpp), so adding a command never
// edits a shared table:
//   namespace { int run_lint(reverify::cli::Args& args) {...}
//   const reverify::cli::Registrar kLint{{"lint", "MANIFEST [--json] [--min-score N]",
//       "score a manifest's reproducibility readiness", {"min-score"}, {"json"}, run_lint}}; }
// Exit status convention: 0 success, 1 a negative answer (different, not verified, failed), 2 usage
// or input error.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace reverify::cli {

// Parsed command line: positionals in order, "--key value" and "--key=value" options, "--flag".
// The command declares which options take a value and which flags exist; anything else starting
// with "--" is an error (error() names it) reported before the command runs.
class Args {
 public:
  Args(std::vector<std::string> argv, const std::vector<std::string>& value_options,
       const std::vector<std::string>& flags);

  const std::vector<std::string>& positionals() const { return positionals_; }
  bool flag(const std::string& name) const;  // "--json" -> flag("json")
  std::optional<std::string> option(const std::string& name) const;
  const std::string& error() const { return error_; }  // e.g. "--max-age needs a value"

 private:
  std::vector<std::string> positionals_;
  std::map<std::string, std::optional<std::string>> named_;
  std::string error_;
};

struct Command {
  std::string name;
  std::string usage;                       // arguments after the name
  std::string summary;                     // one line
  std::vector<std::string> value_options;  // options that take a value, without "--"
  std::vector<std::string> flags;  // options without a value, without "--" ("help" is implied)
  std::function<int(Args&)> run;
};

struct Registrar {
  explicit Registrar(Command command);
};

const std::map<std::string, Command>& registered_commands();

// Prints "reverify <name>: <message>" to stderr and returns 2.
int usage_error(const std::string& command, const std::string& message);

}  // namespace reverify::cli
