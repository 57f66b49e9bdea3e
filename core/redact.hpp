#pragma once
// Secrets (tokens) must never reach an API response, a page's delivery detail or a log line.

#include <string>
#include <vector>

namespace reverify {

// Every occurrence of each non-empty secret replaced by "[redacted]".
std::string redact(std::string text, const std::vector<std::string>& secrets);

}  // namespace reverify
