#pragma once
// What an operator must look at first (the status page's order). Pure: the gate's decision and
// the version's latest verdicts in, one rank out. Lower ranks come first:
//
//   failed            the gate is blocked by a failed:* verdict: the model moved (the owner acts)
//   manifest_invalid  the released manifest no longer validates (the owner acts)
//   error             the gate is not satisfied and the newest attempt since the conclusive
//                     verdict (or the only one) is error:*: the system keeps failing to verify
//   uncalibrated      the gate is blocked by an uncalibrated verdict, or the verdict's bands are
//                     underpowered (cannot catch the shift the owner declared): calibrate
//   outdated          verified once, but older than max_age or for another manifest
//   never_verified    no verdict yet (queued, or waiting for its cycle)
//   fresh_with_error  verified and fresh; the newest attempt was error:* (it does not block)
//   fresh             verified and fresh: nothing to do
// A failure outranks every error: a system failure after a failed verdict never hides it.

#include <optional>
#include <string_view>

#include "core/verdict_class.hpp"
#include "policies/gate.hpp"

#include "core/enum_names.hpp"

namespace reverify {

enum class Attention {
  failed,
  manifest_invalid,
  error,
  uncalibrated,
  outdated,
  never_verified,
  fresh_with_error,
  fresh,
};
template <>
struct EnumNames<Attention> {
  static constexpr EnumName<Attention> table[] = {
      {Attention::failed, "failed"},
      {Attention::manifest_invalid, "manifest-invalid"},
      {Attention::error, "error"},
      {Attention::uncalibrated, "uncalibrated"},
      {Attention::outdated, "outdated"},
      {Attention::never_verified, "never-verified"},
      {Attention::fresh_with_error, "fresh-with-error"},
      {Attention::fresh, "fresh"},
  };
};

struct AttentionFacts {
  GateStatus gate = GateStatus::unknown;
  bool manifest_invalid = false;
  std::optional<VerdictClass> conclusive;  // the latest verdict that is not error:*
  bool latest_is_newer_error = false;      // the latest verdict is error:* and newer than that
  bool underpowered = false;               // the conclusive verdict has an underpowered band
};

Attention rank_attention(const AttentionFacts& facts);

// Whether the version is listed under "needs attention" (everything but `fresh`).
inline bool needs_attention(Attention attention) {
  return attention != Attention::fresh;
}

}  // namespace reverify
