#pragma once
// Secrets (API and registry tokens, PagerDuty routing keys, Slack webhook URLs) live in files that
// config `*_file` keys name, never inline in the config. One reader for all of them.

#include <filesystem>
#include <string>

#include "core/result.hpp"

namespace reverify {

// The file's content without surrounding whitespace; an unreadable or empty file is an error
// whose message starts with `key`, the config key that named the file
// ("pager.senders.pd.routing_key_file: cannot read \"/etc/reverify/pd.key\"").
Result<std::string> read_secret_file(const std::filesystem::path& path, const std::string& key);

}  // namespace reverify
