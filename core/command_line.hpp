#pragma once
// What the command lines of `reverify` and `reverifyd` share, on CLI11: one help layout (each
// option's units in its description, its default as "[default: X]", long descriptions wrapped),
// value checks whose messages read like the rest of reverify ("--min-score: must be an integer
// from 0 to 100, got "abc""), and one parse step that prints help and --version on stdout (exit
// 0) and any error as one line on stderr (exit 2) naming the argument, with the closest known
// option when an unknown one looks mistyped.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/enum_names.hpp"
#include "core/text.hpp"  // closest_match

namespace reverify {

// Applies the shared help layout to `app` (subcommands added later inherit it).
void use_help_format(CLI::App& app);

// Value checks for add_option(...)->check(...). They run on the text before CLI11 converts it.
CLI::Validator integer_in(long long min, long long max);
CLI::Validator finite_number();
CLI::Validator duration();  // "90s", "30m", "6h", "40d" (core/unix_time's parse_duration_s)
CLI::Validator one_of(std::vector<std::string> choices);
// The names of an enum's values (core/enum_names.hpp), for one_of().
template <NamedEnum E>
std::vector<std::string> enum_choices() {
  std::vector<std::string> out;
  for (const auto& entry : EnumNames<E>::table)
    out.emplace_back(entry.name);
  return out;
}

// An option whose word is one of an enum's names, stored as the enum (E or std::optional<E>):
// the word is parsed once, here, and any other word fails the parse naming the choices (one_of).
// The help shows the names as the option's type and, for a plain enum target, its value as the
// default.
template <NamedEnum E, class Target>
CLI::Option* add_enum_option_to(CLI::App& app, const std::string& name, Target& target,
                                const std::string& help) {
  return app
      .add_option_function<std::string>(
          name, [&target](const std::string& text) { target = *enum_from_string<E>(text); }, help)
      ->type_name(enum_names<E>("|"))
      ->check(one_of(enum_choices<E>()));
}
template <NamedEnum E>
CLI::Option* add_enum_option(CLI::App& app, const std::string& name, E& target,
                             const std::string& help) {
  return add_enum_option_to<E>(app, name, target, help)->default_str(to_string(target));
}
template <NamedEnum E>
CLI::Option* add_enum_option(CLI::App& app, const std::string& name, std::optional<E>& target,
                             const std::string& help) {
  return add_enum_option_to<E>(app, name, target, help);
}

// `unknown command "verfy"; did you mean "verify"?` for a word that is none of parent's
// subcommands (the suggestion only when one is close: closest_match).
std::string unknown_command_message(const CLI::App& parent, const std::string& given);

// Parses args (without the program name) into `app`. Returns nullopt when the program should go
// on; otherwise the exit status after printing: --help/-h and --version ("reverify 0.1.0") to
// stdout (0); an error to stderr as "<app> <subcommand>: <message>" plus a pointer to --help (2).
// `app` and its subcommands may set allow_extras(): what lands there is reported as an unknown
// option or an unknown subcommand (each with a suggestion) or an unexpected argument, never
// silently ignored.
std::optional<int> parse_command_line(CLI::App& app, std::vector<std::string> args);

}  // namespace reverify
