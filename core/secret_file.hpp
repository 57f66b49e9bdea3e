#pragma once
// Secrets (the API's bearer token, registry tokens, PagerDuty routing keys, Slack webhook URLs)
// live in files named by `*_file` config keys (or `reverify trigger --token-file`), never inline.
// One reader for all of them, so every secret gets the same checks and the same errors, each
// naming the config key or option. Most are read once, when the config is loaded; the Kubernetes
// runner's token is read again for every request (a cluster rotates it in place).

#include <cstddef>
#include <filesystem>
#include <string>

#include "core/result.hpp"

namespace reverify {

// The API's own bearer token: long enough not to be guessed, and only RFC 6750 token characters
// (A-Z a-z 0-9 - . _ ~ + / and trailing =), so it travels in a header as it is and can never be
// mistaken for text (`openssl rand -hex 32` makes one).
inline constexpr std::size_t kMinApiTokenBytes = 32;
inline constexpr std::size_t kMaxApiTokenBytes = 1024;  // fits api.max_header_bytes' minimum
// Every other secret (issued by someone else, so its form is theirs): at least this long, so that
// redacting it from a text (redact.hpp) never hits ordinary words.
inline constexpr std::size_t kMinSecretBytes = 16;

enum class SecretForm {
  bearer_token,  // kMinApiTokenBytes..kMaxApiTokenBytes of RFC 6750 token characters
  opaque,        // >= kMinSecretBytes, one line of printable characters
};

// Reads the secret in the regular file `path` (surrounding whitespace dropped). Errors name
// `yaml_key` and say what is wrong: missing, not a regular file (a directory), unreadable, empty,
// too short or too long, or a character that does not belong.
Result<std::string> read_secret_file(const std::filesystem::path& path, const std::string& yaml_key,
                                     SecretForm form);

}  // namespace reverify
