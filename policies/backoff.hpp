#pragma once
// Capped exponential backoff, the one formula every retry in reverify uses (a page delivery that
// failed, an error:* verification queued again). Pure.
//
//   delay(attempt) = min(initial * 2^(attempt - 1), cap)     attempt = 1, 2, 3, ...
//
// so initial, 2 x initial, 4 x initial, ... up to cap. `attempt` counts the failures so far,
// the one being retried included. Doubling stops at the cap, so a large attempt never overflows.
// REQUIRES: initial >= 0, cap >= 0 (a cap below initial caps the first delay too).

#include <chrono>

namespace reverify {

std::chrono::seconds capped_backoff(std::chrono::seconds initial, std::chrono::seconds cap,
                                    int attempt);

}  // namespace reverify
