#pragma once
// docs/design.md verdict classes. failed:* is the model's problem; error:* is the system's.
// error:infra is the platform failing under the job (a full or read-only file system it needed,
// the host's OOM killer): never the job's fault, whatever its exit status was.

#include "core/enum_names.hpp"

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
  error_infra,
  uncalibrated,
};

template <>
struct EnumNames<VerdictClass> {
  static constexpr EnumName<VerdictClass> table[] = {
      {VerdictClass::passed, "passed"},
      {VerdictClass::failed_input_drift, "failed:input-drift"},
      {VerdictClass::failed_out_of_tolerance, "failed:out-of-tolerance"},
      {VerdictClass::failed_distribution_shift, "failed:distribution-shift"},
      {VerdictClass::error_manifest_invalid, "error:manifest-invalid"},
      {VerdictClass::error_provision, "error:provision"},
      {VerdictClass::error_job, "error:job"},
      {VerdictClass::error_runner_lost, "error:runner-lost"},
      {VerdictClass::error_infra, "error:infra"},
      {VerdictClass::uncalibrated, "uncalibrated"},
  };
};

inline bool is_failure(VerdictClass c) {
  return c == VerdictClass::failed_input_drift || c == VerdictClass::failed_out_of_tolerance ||
         c == VerdictClass::failed_distribution_shift;
}
inline bool is_error(VerdictClass c) {
  return c == VerdictClass::error_manifest_invalid || c == VerdictClass::error_provision ||
         c == VerdictClass::error_job || c == VerdictClass::error_runner_lost ||
         c == VerdictClass::error_infra;
}

}  // namespace reverify
