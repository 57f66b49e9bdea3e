#include "core/redact.hpp"

namespace reverify {

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  constexpr std::string_view kRedacted = "[redacted]";
  for (const auto& secret : secrets) {
    if (secret.empty())
      continue;
    // Searching on after the replacement: a secret inside "[redacted]" cannot loop forever.
    for (auto at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kRedacted.size())) {
      text.replace(at, secret.size(), kRedacted);
    }
  }
  return text;
}

void redact_strings(nlohmann::json& document, const std::vector<std::string>& secrets) {
  if (document.is_string()) {
    auto& text = document.get_ref<std::string&>();
    text = redact(std::move(text), secrets);
  } else if (document.is_structured()) {
    for (auto& value : document)
      redact_strings(value, secrets);
  }
}

}  // namespace reverify
