#include <doctest/doctest.h>

#include "policies/gate.hpp"

using namespace reverify;

namespace {

constexpr UnixSeconds kNow = 1'800'000'000;
constexpr std::int64_t kDay = 86'400;

GateFacts listed(std::optional<GateVerdict> conclusive) {
  GateFacts facts;
  facts.model = "m";
  facts.version = "1";
  facts.listed = true;
  facts.manifest_sha256 = "abc";
  facts.conclusive = std::move(conclusive);
  return facts;
}

GateVerdict verdict(VerdictClass cls, UnixSeconds finished_at, std::string sha = "abc") {
  GateVerdict v;
  v.verification_id = 7;
  v.cls = cls;
  v.finished_at = finished_at;
  v.summary = "because";
  v.manifest_sha256 = std::move(sha);
  return v;
}

}  // namespace

TEST_CASE("gate: each fact decides in order, with its reason") {
  const struct {
    const char* what;
    GateFacts facts;
    GateStatus status;
    const char* reason;
  } cases[] = {
      {"not listed",
       GateFacts{
           "m", "1", false, {}, "", verdict(VerdictClass::passed, kNow), {}, {}, {}, false, {}},
       GateStatus::unknown, "unknown model version: no registry source lists m@1"},
      {"manifest invalid",
       [] {
         auto f = listed(verdict(VerdictClass::passed, kNow));
         f.manifest_error = "schema: must be reverify.manifest/v1";
         return f;
       }(),
       GateStatus::not_verified,
       "the manifest no longer validates: schema: must be reverify.manifest/v1"},
      {"never verified", listed(std::nullopt), GateStatus::not_verified, "never verified"},
      {"never verified, one queued",
       [] {
         auto f = listed(std::nullopt);
         f.active = GateActive{9, VerificationState::running};
         return f;
       }(),
       GateStatus::not_verified, "never verified; verification 9 is running"},
      {"never verified, a new release queued at release",
       [] {
         auto f = listed(std::nullopt);
         f.active = GateActive{9, VerificationState::queued};
         f.at_release = GateQueued{kNow + 600, "first seen 2027-01-15T08:00:00Z"};
         return f;
       }(),
       GateStatus::queued,
       "queued: a new release, not verified yet; its verification at release is expected to "
       "start at 2027-01-15T08:10:00Z (first seen 2027-01-15T08:00:00Z)"},
      {"a verdict outranks the release's queue",
       [] {
         auto f = listed(verdict(VerdictClass::passed, kNow));
         f.at_release = GateQueued{kNow + 600, "first seen"};
         return f;
       }(),
       GateStatus::fresh, "passed verification 7 at 2027-01-15T08:00:00Z"},
      {"an invalid manifest outranks the release's queue",
       [] {
         auto f = listed(std::nullopt);
         f.manifest_error = "bad";
         f.at_release = GateQueued{kNow + 600, "first seen"};
         return f;
       }(),
       GateStatus::not_verified, "the manifest no longer validates: bad"},
      {"failed", listed(verdict(VerdictClass::failed_out_of_tolerance, kNow)),
       GateStatus::not_verified,
       "the latest verdict is failed:out-of-tolerance (verification 7): because"},
      {"uncalibrated", listed(verdict(VerdictClass::uncalibrated, kNow)), GateStatus::not_verified,
       "the latest verdict is uncalibrated (verification 7): because"},
      {"manifest changed", listed(verdict(VerdictClass::passed, kNow, "old")),
       GateStatus::not_verified,
       "the manifest changed since verification 7; the new manifest is not verified yet"},
      {"stale", listed(verdict(VerdictClass::passed, kNow - 41 * kDay)), GateStatus::not_fresh,
       "verified 41d ago (2026-12-05T08:00:00Z), older than max_age 3456000s"},
      {"fresh at the limit", listed(verdict(VerdictClass::passed, kNow - 40 * kDay)),
       GateStatus::fresh, "passed verification 7 at 2026-12-06T08:00:00Z"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const auto decision = decide_gate(c.facts, 40 * kDay, kNow);
    CHECK(decision.status == c.status);
    CHECK(decision.reason == c.reason);
    CHECK(decision.verified() ==
          (c.status == GateStatus::fresh || c.status == GateStatus::not_fresh));
    CHECK(decision.age_s.has_value() == decision.verified());
    CHECK(decision.expected_at.has_value() == (c.status == GateStatus::queued));
  }
}

TEST_CASE("gate: the age is measured from the pass's finish") {
  const auto decision =
      decide_gate(listed(verdict(VerdictClass::passed, kNow - 3 * kDay)), 40 * kDay, kNow);
  REQUIRE(decision.age_s);
  CHECK(*decision.age_s == 3 * kDay);
  CHECK(
      decide_gate(listed(verdict(VerdictClass::passed, kNow - 3 * kDay)), 2 * kDay, kNow).status ==
      GateStatus::not_fresh);
}

TEST_CASE("gate: an underpowered pass counts only when the policy does not require power") {
  auto pass = verdict(VerdictClass::passed, kNow - kDay);
  pass.underpowered = true;
  pass.runs_needed = 23;
  auto facts = listed(pass);
  CHECK(decide_gate(facts, 40 * kDay, kNow).status == GateStatus::fresh);
  facts.require_power = true;
  const auto refused = decide_gate(facts, 40 * kDay, kNow);
  CHECK(refused.status == GateStatus::not_verified);
  CHECK(refused.reason ==
        "verification 7 passed against bands that cannot catch the shift tolerance.detect asks "
        "(underpowered; 23 seed runs in all would meet it) and gate.require_power is set; run "
        "`reverify calibrate m@1 --until-power`, then verify again");
  // The daemon's gate names its config, so the command runs as printed.
  facts.command_scope = "--config /etc/reverify/config.yaml";
  CHECK(decide_gate(facts, 40 * kDay, kNow)
            .reason.find(
                "`reverify calibrate m@1 --until-power --config /etc/reverify/config.yaml`") !=
        std::string::npos);
  facts.conclusive->underpowered = false;
  CHECK(decide_gate(facts, 40 * kDay, kNow).status == GateStatus::fresh);
}

TEST_CASE("gate: asked for a mode, the reason names it; an unknown version stays unknown") {
  auto facts = listed(verdict(VerdictClass::passed, kNow));
  facts.mode = RebuildMode::full;
  auto decision = decide_gate(facts, 40 * kDay, kNow);
  CHECK(decision.status == GateStatus::fresh);
  CHECK(decision.reason == "full mode: passed verification 7 at 2027-01-15T08:00:00Z");
  facts.conclusive.reset();  // no verdict in that mode
  decision = decide_gate(facts, 40 * kDay, kNow);
  CHECK(decision.status == GateStatus::not_verified);
  CHECK(decision.reason == "full mode: never verified");
  facts.listed = false;
  CHECK(decide_gate(facts, 40 * kDay, kNow).reason.rfind("unknown model version", 0) == 0);
}
