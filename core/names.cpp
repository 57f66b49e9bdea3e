#include "core/names.hpp"

namespace reverify {
namespace {
bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
}  // namespace

std::optional<DigestReference> parse_digest_reference(std::string_view image) {
  constexpr std::string_view kAt = "@sha256:";
  const auto at = image.find(kAt);
  if (at == std::string_view::npos || at == 0)
    return std::nullopt;
  for (char c : image.substr(0, at)) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '@' || c == 0x7f)
      return std::nullopt;
  }
  const auto hex = image.substr(at + kAt.size());
  if (hex.size() != 64)
    return std::nullopt;
  for (char c : hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return std::nullopt;
  }
  return DigestReference{std::string(image.substr(0, at)), std::string(image.substr(at + 1))};
}

bool is_valid_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || !is_alnum(name.front()))
    return false;
  for (char c : name) {
    if (!is_alnum(c) && c != '.' && c != '_' && c != '-')
      return false;
  }
  return true;
}

Result<ModelVersion> parse_model_version(std::string_view text) {
  auto at = text.find('@');
  if (at == std::string_view::npos) {
    return make_error(ErrorCode::invalid_argument,
                      "expected MODEL@VERSION, got \"" + std::string(text) + "\"");
  }
  std::string_view model = text.substr(0, at), version = text.substr(at + 1);
  const char* rule = "must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}";
  if (!is_valid_name(model)) {
    return make_error(ErrorCode::invalid_argument,
                      "model name " + std::string(rule) + ", got \"" + std::string(model) + "\"");
  }
  if (!is_valid_name(version)) {
    return make_error(ErrorCode::invalid_argument,
                      "version " + std::string(rule) + ", got \"" + std::string(version) + "\"");
  }
  return ModelVersion{std::string(model), std::string(version)};
}

}  // namespace reverify
