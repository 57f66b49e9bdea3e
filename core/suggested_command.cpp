#include "core/suggested_command.hpp"

#include "core/text.hpp"

namespace reverify {

std::string reverify_command(std::string_view args, std::string_view scope) {
  std::string command = "reverify " + std::string(args);
  if (!scope.empty())
    command += " " + std::string(scope);
  return command;
}

std::string suggested_command(std::string_view args, std::string_view scope) {
  return "`" + reverify_command(args, scope) + "`";
}

std::vector<std::string> suggested_commands_in(std::string_view text) {
  std::vector<std::string> commands;
  for (std::size_t open = text.find('`'); open != std::string_view::npos;) {
    const std::size_t close = text.find('`', open + 1);
    if (close == std::string_view::npos)
      break;
    const std::string_view span = text.substr(open + 1, close - open - 1);
    if (span.starts_with("reverify ") || span.starts_with("reverifyd "))
      commands.emplace_back(span);
    open = text.find('`', close + 1);
  }
  return commands;
}

std::string config_scope(const std::filesystem::path& config_file) {
  return "--config " + shell_word(std::filesystem::absolute(config_file).string());
}

}  // namespace reverify
