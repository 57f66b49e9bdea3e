#pragma once
// Where one verification is in its life: queued -> running -> done (with exactly one verdict).
// The store's rows, the scheduler, the gate and the API share this word list.

#include "core/enum_names.hpp"

namespace reverify {

enum class VerificationState { queued, running, done };

template <>
struct EnumNames<VerificationState> {
  static constexpr EnumName<VerificationState> table[] = {
      {VerificationState::queued, "queued"},
      {VerificationState::running, "running"},
      {VerificationState::done, "done"},
  };
};

}  // namespace reverify
