#include "core/verdict_class.hpp"

#include <array>
#include <utility>

namespace reverify {
namespace {
constexpr std::array<std::pair<VerdictClass, const char*>, 9> kNames{{
    {VerdictClass::passed, "passed"},
    {VerdictClass::failed_input_drift, "failed:input-drift"},
    {VerdictClass::failed_out_of_tolerance, "failed:out-of-tolerance"},
    {VerdictClass::failed_distribution_shift, "failed:distribution-shift"},
    {VerdictClass::error_manifest_invalid, "error:manifest-invalid"},
    {VerdictClass::error_provision, "error:provision"},
    {VerdictClass::error_job, "error:job"},
    {VerdictClass::error_runner_lost, "error:runner-lost"},
    {VerdictClass::uncalibrated, "uncalibrated"},
}};
}  // namespace

const char* to_string(VerdictClass cls) {
  for (const auto& [c, name] : kNames) {
    if (c == cls)
      return name;
  }
  return "unknown";
}

std::optional<VerdictClass> parse_verdict_class(std::string_view text) {
  for (const auto& [c, name] : kNames) {
    if (text == name)
      return c;
  }
  return std::nullopt;
}

}  // namespace reverify
