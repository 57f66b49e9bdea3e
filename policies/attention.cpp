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

}  // namespace reverify
