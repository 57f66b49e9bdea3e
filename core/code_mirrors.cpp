#include "core/code_mirrors.hpp"

namespace reverify {

std::optional<std::string> mirrored_url(const std::string& url, const CodeMirrors& mirrors) {
  const std::pair<const std::string, std::string>* best = nullptr;
  for (const auto& entry : mirrors) {
    if (!entry.first.empty() && url.rfind(entry.first, 0) == 0 &&
        (!best || entry.first.size() > best->first.size())) {
      best = &entry;
    }
  }
  if (!best)
    return std::nullopt;
  return best->second + url.substr(best->first.size());
}

}  // namespace reverify
