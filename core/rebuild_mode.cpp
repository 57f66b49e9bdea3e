#include "core/rebuild_mode.hpp"

namespace reverify {

const char* to_string(RebuildMode mode) {
  return mode == RebuildMode::full ? "full" : "steps";
}

std::optional<RebuildMode> parse_rebuild_mode(std::string_view text) {
  for (auto mode : {RebuildMode::full, RebuildMode::steps}) {
    if (text == to_string(mode))
      return mode;
  }
  return std::nullopt;
}

}  // namespace reverify
