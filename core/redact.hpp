#pragma once
// Secrets (tokens, routing keys, webhook URLs) must never reach an API response, a page's
// delivery detail or a log line. Redaction works on values: one text that may carry a secret (a
// receiver's error message, a job's log tail), or every string value of a JSON document, never
// its keys or its serialized form, so it cannot change what a document means or break its
// syntax. The config refuses secrets short enough to match ordinary words (secret_file.hpp).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace reverify {

// Every occurrence of each non-empty secret in `text` replaced by "[redacted]".
std::string redact(std::string text, const std::vector<std::string>& secrets);

// redact() applied to every string value in `document` (recursively), keys and structure kept.
void redact_strings(nlohmann::json& document, const std::vector<std::string>& secrets);

}  // namespace reverify
