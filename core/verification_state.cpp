#include "core/verification_state.hpp"

namespace reverify {

const char* to_string(VerificationState state) {
  switch (state) {
    case VerificationState::queued:
      return "queued";
    case VerificationState::running:
      return "running";
    case VerificationState::done:
      return "done";
  }
  return "unknown";
}

std::optional<VerificationState> parse_verification_state(std::string_view text) {
  for (auto state :
       {VerificationState::queued, VerificationState::running, VerificationState::done}) {
    if (text == to_string(state))
      return state;
  }
  return std::nullopt;
}

}  // namespace reverify
