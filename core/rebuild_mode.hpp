#pragma once
// How much of the original training a rebuild re-runs: all of it (`full`), or the first
// max_steps steps compared step by step (`steps`). Shared by runners, the store's rows, the
// scheduler, the API and the CLI.

#include <optional>
#include <string_view>

namespace reverify {

enum class RebuildMode { full, steps };

const char* to_string(RebuildMode mode);  // "full", "steps"
std::optional<RebuildMode> parse_rebuild_mode(std::string_view text);

}  // namespace reverify
