#include "policies/gate.hpp"

#include "policies/bands.hpp"

namespace reverify {

namespace {

GateDecision decide(const GateFacts& facts, std::int64_t max_age_s, UnixSeconds now) {
  GateDecision decision;
  if (!facts.listed) {
    decision.reason =
        "unknown model version: no registry source lists " + facts.model + "@" + facts.version;
    return decision;
  }
  decision.status = GateStatus::not_verified;
  if (facts.manifest_error) {
    decision.reason = "the manifest no longer validates: " + *facts.manifest_error;
    return decision;
  }
  if (!facts.conclusive && facts.at_release) {
    decision.status = GateStatus::queued;
    decision.expected_at = facts.at_release->expected_at;
    decision.reason =
        "queued: a new release, not verified yet; its verification at release is "
        "expected to start at " +
        rfc3339(facts.at_release->expected_at) + " (" + facts.at_release->reason + ")";
    return decision;
  }
  if (!facts.conclusive) {
    decision.reason = facts.active ? "never verified; verification " +
                                         std::to_string(facts.active->verification_id) + " is " +
                                         to_string(facts.active->state)
                                   : std::string("never verified");
    return decision;
  }
  const GateVerdict& verdict = *facts.conclusive;
  const std::string id = std::to_string(verdict.verification_id);
  if (verdict.cls != VerdictClass::passed) {
    decision.reason = std::string("the latest verdict is ") + to_string(verdict.cls) +
                      " (verification " + id + "): " + verdict.summary;
    return decision;
  }
  if (verdict.manifest_sha256 != facts.manifest_sha256) {
    decision.reason =
        "the manifest changed since verification " + id + "; the new manifest is not verified yet";
    return decision;
  }
  if (verdict.underpowered && facts.require_power) {
    decision.reason =
        "verification " + id +
        " passed against bands that cannot catch the shift tolerance.detect asks "
        "(underpowered" +
        (verdict.runs_needed
             ? "; " + std::to_string(*verdict.runs_needed) + " seed runs in all would meet it"
             : std::string()) +
        ") and gate.require_power is set; run " +
        suggested_command("calibrate " + facts.model + "@" + facts.version + " --until-power",
                          std::string(facts.command_scope)) +
        ", then verify again";
    return decision;
  }
  const std::int64_t age = now - verdict.finished_at;
  decision.age_s = age;
  if (age > max_age_s) {
    decision.status = GateStatus::not_fresh;
    decision.reason = "verified " + std::to_string(age / 86400) + "d ago (" +
                      rfc3339(verdict.finished_at) + "), older than max_age " +
                      std::to_string(max_age_s) + "s";
    return decision;
  }
  decision.status = GateStatus::fresh;
  decision.reason = "passed verification " + id + " at " + rfc3339(verdict.finished_at);
  return decision;
}

}  // namespace

GateDecision decide_gate(const GateFacts& facts, std::int64_t max_age_s, UnixSeconds now) {
  GateDecision decision = decide(facts, max_age_s, now);
  if (facts.mode && decision.status != GateStatus::unknown)
    decision.reason = std::string(to_string(*facts.mode)) + " mode: " + decision.reason;
  return decision;
}

}  // namespace reverify
