#include "core/page_links.hpp"

namespace reverify {
namespace {

std::string_view without_trailing_slash(std::string_view base) {
  while (!base.empty() && base.back() == '/')
    base.remove_suffix(1);
  return base;
}

}  // namespace

std::string verification_page_url(std::string_view base, std::int64_t id) {
  return std::string(without_trailing_slash(base)) + "/verifications/" + std::to_string(id);
}

std::string version_page_url(std::string_view base, std::string_view model,
                             std::string_view version) {
  return std::string(without_trailing_slash(base)) + "/models/" + std::string(model) + "/" +
         std::string(version);
}

}  // namespace reverify
