#pragma once
// Code mirrors: where to fetch a manifest's code.repo from on this machine, with git's
// `url.<base>.insteadOf` semantics. Each entry maps a URL prefix to a replacement (a local folder
// or another URL); a code.repo that starts with a prefix is fetched from the replacement followed
// by the rest of the URL; when several prefixes match, the longest wins. Entries come from the
// config's `code_mirrors:` (daemon and CLI alike) and the CLI's --code-mirror (on top).

#include <map>
#include <optional>
#include <string>

namespace reverify {

using CodeMirrors = std::map<std::string, std::string>;  // URL prefix -> replacement

// The URL to fetch instead of `url`, or nullopt when no prefix matches.
std::optional<std::string> mirrored_url(const std::string& url, const CodeMirrors& mirrors);

}  // namespace reverify
