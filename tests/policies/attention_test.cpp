#include <doctest/doctest.h>

#include "policies/attention.hpp"

using namespace reverify;

namespace {

constexpr auto kFailed = VerdictClass::failed_input_drift;
constexpr auto kPassed = VerdictClass::passed;
constexpr auto kUncalibrated = VerdictClass::uncalibrated;

AttentionFacts facts(GateStatus gate, std::optional<VerdictClass> conclusive,
                     bool newer_error = false) {
  AttentionFacts f;
  f.gate = gate;
  f.conclusive = conclusive;
  f.latest_is_newer_error = newer_error;
  return f;
}

}  // namespace

TEST_CASE("attention: what blocks the gate decides, not the newest verdict") {
  const struct {
    const char* what;
    AttentionFacts facts;
    Attention expected;
  } cases[] = {
      // The case: an error:provision after a failed:input-drift still shows the failure.
      {"failed, then an error", facts(GateStatus::not_verified, kFailed, true), Attention::failed},
      {"failed", facts(GateStatus::not_verified, VerdictClass::failed_out_of_tolerance),
       Attention::failed},
      {"manifest invalid after a pass",
       [] {
         auto f = facts(GateStatus::not_verified, kPassed);
         f.manifest_invalid = true;
         return f;
       }(),
       Attention::manifest_invalid},
      {"failed outranks an invalid manifest",
       [] {
         auto f = facts(GateStatus::not_verified, kFailed);
         f.manifest_invalid = true;
         return f;
       }(),
       Attention::failed},
      {"only errors so far", facts(GateStatus::not_verified, std::nullopt, true), Attention::error},
      {"stale pass, errors since", facts(GateStatus::not_fresh, kPassed, true), Attention::error},
      {"uncalibrated, errors since", facts(GateStatus::not_verified, kUncalibrated, true),
       Attention::error},
      {"uncalibrated", facts(GateStatus::not_verified, kUncalibrated), Attention::uncalibrated},
      {"underpowered pass, still fresh",
       [] {
         auto f = facts(GateStatus::fresh, kPassed);
         f.underpowered = true;
         return f;
       }(),
       Attention::uncalibrated},
      {"stale pass", facts(GateStatus::not_fresh, kPassed), Attention::outdated},
      {"pass of an older manifest", facts(GateStatus::not_verified, kPassed), Attention::outdated},
      {"never verified", facts(GateStatus::not_verified, std::nullopt), Attention::never_verified},
      {"fresh pass, newer error", facts(GateStatus::fresh, kPassed, true),
       Attention::fresh_with_error},
      {"fresh pass", facts(GateStatus::fresh, kPassed), Attention::fresh},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    CHECK(rank_attention(c.facts) == c.expected);
    CHECK(needs_attention(rank_attention(c.facts)) == (c.expected != Attention::fresh));
  }
}

TEST_CASE("attention: the ranks order failures, then errors, then calibration, then age") {
  CHECK(Attention::failed < Attention::manifest_invalid);
  CHECK(Attention::manifest_invalid < Attention::error);
  CHECK(Attention::error < Attention::uncalibrated);
  CHECK(Attention::uncalibrated < Attention::outdated);
  CHECK(Attention::outdated < Attention::never_verified);
  CHECK(Attention::never_verified < Attention::fresh_with_error);
  CHECK(std::string(to_string(Attention::manifest_invalid)) == "manifest-invalid");
  for (auto a : {Attention::failed, Attention::manifest_invalid, Attention::error,
                 Attention::uncalibrated, Attention::outdated, Attention::never_verified,
                 Attention::fresh_with_error, Attention::fresh}) {
    CHECK(enum_from_string<Attention>(to_string(a)) == a);
  }
  CHECK_FALSE(enum_from_string<Attention>("passed").has_value());
}
