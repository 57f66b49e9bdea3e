#pragma once
// How much of the original training a rebuild re-runs: all of it (`full`), or the first
// max_steps steps compared step by step (`steps`). Shared by runners, the store's rows, the
// scheduler, the API and the CLI.

#include "core/enum_names.hpp"

namespace reverify {

enum class RebuildMode { full, steps };

template <>
struct EnumNames<RebuildMode> {
  static constexpr EnumName<RebuildMode> table[] = {
      {RebuildMode::full, "full"},
      {RebuildMode::steps, "steps"},
  };
};

}  // namespace reverify
