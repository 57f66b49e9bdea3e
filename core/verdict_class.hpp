#pragma once
// DESIGN.md verdict classes. failed:* is the model's problem; error:* is the system's.

#include <optional>
#include <string_view>

namespace reverify {

enum class VerdictClass {
  passed,
  failed_input_drift,
  failed_out_of_tolerance,
  failed_distribution_shift,
  error_manifest_invalid,
  error_provision,
  error_job,
  error_runner_lost,
  uncalibrated,
};

const char* to_string(VerdictClass cls);  // "passed", "failed:input-drift", ...
std::optional<VerdictClass> parse_verdict_class(std::string_view text);
inline bool is_failure(VerdictClass c) {
  return c == VerdictClass::failed_input_drift || c == VerdictClass::failed_out_of_tolerance ||
         c == VerdictClass::failed_distribution_shift;
}
inline bool is_error(VerdictClass c) {
  return c == VerdictClass::error_manifest_invalid || c == VerdictClass::error_provision ||
         c == VerdictClass::error_job || c == VerdictClass::error_runner_lost;
}

}  // namespace reverify
