#include "runners/runner.hpp"

namespace reverify {

const char* to_string(RebuildMode mode) {
  return mode == RebuildMode::full ? "full" : "steps";
}

}  // namespace reverify
