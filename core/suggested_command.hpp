#pragma once
// The commands reverify tells a person to run (in a log line, a page, an alert, a CLI message),
// built in one place so each runs as printed from a POSIX shell: every word that is not a name or
// a flag (a path, a file) comes in as shell_word (core/text.hpp) made it.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace reverify {

// "reverify <args>", then " <scope>" when scope is not empty. `args` and `scope` are shell words
// already: names ([A-Za-z0-9._-] and '@', core/names.hpp), flags, numbers, shell_word'd paths.
std::string reverify_command(std::string_view args, std::string_view scope);

// reverify_command in backticks, for prose: "run `reverify plan --config /etc/reverify.yaml`".
std::string suggested_command(std::string_view args, std::string_view scope);

// The commands `text` suggests: each `backtick-quoted` span that starts "reverify " or
// "reverifyd ", in order, without the backticks. A log line repeats them where nothing escapes
// them (a logfmt field escapes quotes and backslashes, so a command copied from it would not run).
std::vector<std::string> suggested_commands_in(std::string_view text);

// "--config <the file's absolute path, one shell word>": how a suggested command finds the
// installation (registry, state_dir) of the process that suggests it.
std::string config_scope(const std::filesystem::path& config_file);

}  // namespace reverify
