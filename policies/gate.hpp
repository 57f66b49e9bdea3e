#pragma once
// The release gate's decision (docs/design.md, "Release gates"): is this model version verified,
// and recently enough? Pure: the facts and the time come in, a decision with its reason goes out.
//
//   unknown       no registry source lists the version (never seen, or removed)     -> HTTP 404
//   queued        no conclusive verdict yet, and the version is a new release queued (or waiting)
//                 to be verified at release: not verified, with when it is expected  -> HTTP 412
//   not verified  the manifest no longer validates; no conclusive verdict yet; the latest
//                 conclusive verdict is not `passed` (uncalibrated and failed:* included); the
//                 manifest changed since that pass; the pass was underpowered and the policy
//                 requires power (gate.require_power)                                -> HTTP 412
//   not fresh     verified, but the pass is older than max_age                       -> HTTP 412
//   fresh         verified, and the pass is at most max_age old                      -> HTTP 200
// Checked in that order; the first that applies gives the reason. With a mode, only verdicts of
// that mode count (a pass in another mode does not verify it) and the reason starts
// "<mode> mode: ". "Conclusive" means not error:*:
// a system failure after a pass says nothing about the model, so it never fails the gate (the
// caller shows it beside the answer).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/enum_names.hpp"
#include "core/rebuild_mode.hpp"
#include "core/unix_time.hpp"
#include "core/verdict_class.hpp"
#include "core/verification_state.hpp"

namespace reverify {

// The latest conclusive (not error:*) verdict of the version.
struct GateVerdict {
  std::int64_t verification_id = 0;
  VerdictClass cls = VerdictClass::passed;
  UnixSeconds finished_at = 0;
  // What it says: its headline and checks counted (policies/headline.hpp summary_text), the
  // words every other surface shows of it.
  std::string summary;
  std::string manifest_sha256;  // of the manifest that verification verified
  bool underpowered = false;    // judged against a band that cannot catch its declared detect
  std::optional<std::int64_t> runs_needed;  // seed runs in all that would meet it
};

// The version is a new release to be verified at release (policies/release_plan.hpp): queued, or
// waiting for budget, expected to start at `expected_at`.
struct GateQueued {
  UnixSeconds expected_at = 0;
  std::string reason;
};

// A verification of the version that is queued or running now.
struct GateActive {
  std::int64_t verification_id = 0;
  VerificationState state = VerificationState::queued;
};

struct GateFacts {
  std::string model, version;
  bool listed = false;                        // a registry source lists the version now
  std::optional<std::string> manifest_error;  // the current manifest does not validate
  std::string manifest_sha256;                // of the current manifest
  std::optional<GateVerdict> conclusive;
  std::optional<GateActive> active;
  std::optional<GateQueued> at_release;
  // The gate asked for one mode (?mode=full): `conclusive` is that mode's latest conclusive
  // verdict, and the reason names the mode.
  std::optional<RebuildMode> mode;
  bool require_power = false;  // gate.require_power: an underpowered pass is not verified
  // How a suggested command finds this installation ("--config FILE", VerdictPolicy::
  // command_scope); points into the caller's config, which outlives the decision.
  std::string_view command_scope;
};

enum class GateStatus { fresh, not_fresh, not_verified, queued, unknown };
template <>
struct EnumNames<GateStatus> {
  static constexpr EnumName<GateStatus> table[] = {
      {GateStatus::fresh, "fresh"},
      {GateStatus::not_fresh, "not-fresh"},
      {GateStatus::not_verified, "not-verified"},
      {GateStatus::queued, "queued"},
      {GateStatus::unknown, "unknown"},
  };
};

struct GateDecision {
  GateStatus status = GateStatus::unknown;
  std::string reason;                      // one sentence, always set
  std::optional<std::int64_t> age_s;       // set once verified: now - the pass's finish time
  std::optional<UnixSeconds> expected_at;  // queued: when its verification is expected to start
  bool verified() const { return status == GateStatus::fresh || status == GateStatus::not_fresh; }
};

// REQUIRES: max_age_s >= 0.
GateDecision decide_gate(const GateFacts& facts, std::int64_t max_age_s, UnixSeconds now);

}  // namespace reverify
