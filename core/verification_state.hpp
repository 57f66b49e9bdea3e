#pragma once
// Where one verification is in its life: queued -> running -> done (with exactly one verdict).
// The store's rows, the scheduler, the gate and the API share this word list.

#include <optional>
#include <string_view>

namespace reverify {

enum class VerificationState { queued, running, done };

const char* to_string(VerificationState state);  // "queued", "running", "done"
std::optional<VerificationState> parse_verification_state(std::string_view text);

}  // namespace reverify
