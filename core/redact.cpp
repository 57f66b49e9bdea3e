#include "core/redact.hpp"

namespace reverify {

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    if (secret.empty())
      continue;
    for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
      text.replace(at, secret.size(), "[redacted]");
  }
  return text;
}

}  // namespace reverify
