#include "core/manifest_path.hpp"

#include <nlohmann/json.hpp>

namespace reverify {
namespace {
bool is_identifier(std::string_view key) {
  if (key.empty() || (key.front() >= '0' && key.front() <= '9'))
    return false;
  for (char c : key) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok)
      return false;
  }
  return true;
}
}  // namespace

std::string json_path_key(const std::string& parent, std::string_view key) {
  if (is_identifier(key))
    return parent.empty() ? std::string(key) : parent + "." + std::string(key);
  // The replace handler keeps a path printable even for keys that are not valid UTF-8.
  return parent + "[" +
         nlohmann::json(std::string(key))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "]";
}

std::string json_path_index(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

}  // namespace reverify
