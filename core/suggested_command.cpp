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

std::string config_scope(const std::filesystem::path& config_file) {
  return "--config " + shell_word(std::filesystem::absolute(config_file).string());
}

}  // namespace reverify
