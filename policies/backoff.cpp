#include "policies/backoff.hpp"

#include <algorithm>

namespace reverify {

std::chrono::seconds capped_backoff(std::chrono::seconds initial, std::chrono::seconds cap,
                                    int attempt) {
  std::chrono::seconds delay = initial;
  for (int i = 1; i < attempt && delay < cap && delay.count() > 0; ++i)
    delay *= 2;
  return std::min(delay, cap);
}

}  // namespace reverify
