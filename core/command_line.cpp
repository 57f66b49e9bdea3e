#include "core/command_line.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>

#include "core/text.hpp"
#include "core/unix_time.hpp"
#include "core/version.hpp"

namespace reverify {
namespace {

constexpr std::size_t kNameColumn = 30;
constexpr std::size_t kLineWidth = 100;

// Words of `text` filled into lines of at most `width` characters (a longer word stays whole).
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines(1);
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width)
      lines.emplace_back();
    if (!lines.back().empty())
      lines.back() += ' ';
    lines.back() += word;
  }
  return lines;
}

// `left` in the name column, then `text` wrapped into the rest of the line.
std::string two_columns(const std::string& left, const std::string& text) {
  std::string out = left;
  if (left.size() >= kNameColumn)
    out += "\n" + std::string(kNameColumn, ' ');
  else
    out += std::string(kNameColumn - left.size(), ' ');
  const auto lines = wrap(text, kLineWidth - kNameColumn);
  for (std::size_t i = 0; i < lines.size(); ++i)
    out += (i ? "\n" + std::string(kNameColumn, ' ') : "") + lines[i];
  return out + "\n";
}

// "--timeout DURATION    the job's time limit ... [default: 6h]", wrapped under its column.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(kNameColumn); }

  std::string make_description(const CLI::App* app) const override {
    std::string out;
    for (const auto& line : wrap(app->get_description(), kLineWidth))
      out += line + "\n";
    return out + "\n";
  }

  std::string make_subcommand(const CLI::App* sub) const override {
    return two_columns("  " + sub->get_name(), sub->get_description());
  }

  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string out;
    if (opt->nonpositional() && opt->get_type_size() != 0 && !opt->get_type_name().empty())
      out += " " + opt->get_type_name();
    if (opt->get_expected_max() == CLI::detail::expected_max_vector_size)
      out += " ...";
    return out;
  }

  std::string make_option_desc(const CLI::Option* opt) const override {
    std::string desc = opt->get_description();
    if (opt->get_required())
      desc += " (required)";
    if (!opt->get_default_str().empty())
      desc += " [default: " + opt->get_default_str() + "]";
    if (!opt->get_envname().empty())
      desc += " [env: $" + opt->get_envname() + "]";
    return desc;
  }

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return two_columns("  " + make_option_name(opt, is_positional) + make_option_opts(opt),
                       make_option_desc(opt));
  }
};

std::string in_quotes(const std::string& text) {
  return "\"" + text + "\"";
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

// Every long option name of `app` ("--min-score"), for suggestions.
std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& name : opt->get_lnames())
      names.push_back("--" + name);
  }
  return names;
}

// The deepest subcommand the parse selected (the app itself when none).
const CLI::App* selected(const CLI::App& app) {
  const CLI::App* current = &app;
  while (!current->get_subcommands().empty())
    current = current->get_subcommands().front();
  return current;
}

std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* parent = app.get_parent(); parent; parent = parent->get_parent())
    path = parent->get_name() + " " + path;
  return path;
}

int report(const CLI::App& app, const std::string& message) {
  const std::string path = command_path(app);
  const bool commands = !subcommand_names(app).empty();
  std::cerr << path << ": " << message << "\n(" << path << " --help lists every "
            << (commands ? "command" : "option") << ")\n";
  return 2;
}

}  // namespace

void use_help_format(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.set_help_flag("-h,--help", "print this help and exit");
  // Repeating an option keeps the last value, as before CLI11 (lists use take_all()).
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

CLI::Validator integer_in(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        long long value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
          return "must be an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                 ", got " + in_quotes(text);
        }
        return {};
      },
      "");
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !std::isfinite(value))
          return "must be a number, got " + in_quotes(text);
        return {};
      },
      "");
}

CLI::Validator duration() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto seconds = parse_duration_s(text);
        return seconds.ok() ? std::string() : seconds.error().message;
      },
      "");
}

CLI::Validator one_of(std::vector<std::string> choices) {
  return CLI::Validator(
      [choices](std::string& text) -> std::string {
        if (std::find(choices.begin(), choices.end(), text) != choices.end())
          return {};
        std::string list;
        for (std::size_t i = 0; i < choices.size(); ++i)
          list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
        return "must be " + list + ", got " + in_quotes(text);
      },
      "");
}

namespace {

// What was left over after parsing (allow_extras), as the message for the first leftover: an
// unknown option (with the closest known one), an unknown subcommand of a command that has them
// (with the closest one), or an unexpected argument. nullopt when nothing was.
std::optional<std::string> leftover_problem(const CLI::App& command) {
  for (const auto& extra : command.remaining()) {
    if (extra == "--")
      continue;
    if (extra.size() > 1 && extra[0] == '-') {
      const std::string name = extra.substr(0, extra.find('='));
      auto guess = closest_match(name, option_names(command));
      return "unknown option " + name + (guess ? " (did you mean " + *guess + "?)" : "");
    }
    if (!subcommand_names(command).empty())
      return unknown_command_message(command, extra);
    return "unexpected argument " + in_quotes(extra);
  }
  return std::nullopt;
}

}  // namespace

std::string unknown_command_message(const CLI::App& parent, const std::string& given) {
  std::string message = "unknown command " + in_quotes(given);
  if (auto guess = closest_match(given, subcommand_names(parent)))
    message += "; did you mean " + in_quotes(*guess) + "?";
  return message;
}

std::optional<int> parse_command_line(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 consumes the vector from its back
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << app.get_name() << " " << reverify_version() << "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    // A mistyped option explains a "required" error that follows from it: name it first.
    const CLI::App& command = *selected(app);
    return report(command, leftover_problem(command).value_or(e.what()));
  }
  const CLI::App& command = *selected(app);
  if (auto problem = leftover_problem(command))
    return report(command, *problem);
  return std::nullopt;
}

}  // namespace reverify
