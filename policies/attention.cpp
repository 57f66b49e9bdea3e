#include "policies/attention.hpp"

namespace reverify {

Attention rank_attention(const AttentionFacts& facts) {
  if (facts.conclusive && is_failure(*facts.conclusive))
    return Attention::failed;
  if (facts.manifest_invalid)
    return Attention::manifest_invalid;
  if (facts.gate == GateStatus::fresh) {
    if (facts.underpowered)
      return Attention::uncalibrated;
    return facts.latest_is_newer_error ? Attention::fresh_with_error : Attention::fresh;
  }
  if (facts.latest_is_newer_error)
    return Attention::error;
  if (facts.conclusive == VerdictClass::uncalibrated || facts.underpowered)
    return Attention::uncalibrated;
  if (facts.conclusive)
    return Attention::outdated;
  return Attention::never_verified;
}

const char* to_string(Attention attention) {
  switch (attention) {
    case Attention::failed:
      return "failed";
    case Attention::manifest_invalid:
      return "manifest-invalid";
    case Attention::error:
      return "error";
    case Attention::uncalibrated:
      return "uncalibrated";
    case Attention::outdated:
      return "outdated";
    case Attention::never_verified:
      return "never-verified";
    case Attention::fresh_with_error:
      return "fresh-with-error";
    case Attention::fresh:
      return "fresh";
  }
  return "fresh";
}

std::optional<Attention> parse_attention(std::string_view text) {
  for (auto a : {Attention::failed, Attention::manifest_invalid, Attention::error,
                 Attention::uncalibrated, Attention::outdated, Attention::never_verified,
                 Attention::fresh_with_error, Attention::fresh}) {
    if (text == to_string(a))
      return a;
  }
  return std::nullopt;
}

}  // namespace reverify
