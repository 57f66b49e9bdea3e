#pragma once
// A verdict and the inputs of its summary, as a verification of digits-mlp@2026.11.1 would
// produce them, for the attest tests.

#include <stdexcept>

#include "attest/summary.hpp"
#include "tests/support/check_fixture.hpp"

namespace reverify::test {

inline const std::string kWeightsSha = std::string(64, 'a');
inline const std::string kTensorSha = std::string(64, 'b');
inline const std::string kManifestSha = std::string(64, 'c');
inline const std::string kPolicySha = std::string(64, 'd');
inline constexpr UnixSeconds kVerifiedAt = 1'793'588'400;  // 2026-11-02T03:00:00Z

// An input check, the primary metric with its band and power, and a distribution bound.
inline Verdict sample_verdict(VerdictClass cls = VerdictClass::passed) {
  Verdict verdict;
  verdict.cls = cls;
  verdict.explanation = "all 3 checks within their bands";
  CheckResult image;
  image.name = "input:image";
  image.kind = CheckKind::input;
  image.outcome = CheckOutcome::passed;
  CheckResult primary = banded_check("primary:accuracy", CheckKind::primary, CheckOutcome::passed,
                                     0.9609, 0.9611, CheckBand{0.9571, 0.9651});
  primary.margin = 0.0038;
  primary.power = CheckPower{0.006, std::nullopt, false, std::nullopt};
  CheckResult ks = banded_check("distribution:ks", CheckKind::distribution, CheckOutcome::passed,
                                0.01, 0.0, CheckBand{std::nullopt, 0.05});
  ks.margin = 0.04;
  verdict.checks = {image, primary, ks};
  return verdict;
}

inline SummaryInputs sample_inputs() {
  SummaryInputs in;
  in.model = "digits-mlp";
  in.version = "2026.11.1";
  in.verification_id = 7;
  in.level = ReproLevel::equivalent;
  in.time_verified = kVerifiedAt;
  in.subjects = {
      {"model.safetensors", "", {{"sha256", kWeightsSha}, {kTensorDigestKey, kTensorSha}}},
      {"manifest.json", "", {{"sha256", kManifestSha}}}};
  in.policy_sha256 = kPolicySha;
  return in;
}

inline SummaryIdentity sample_identity() {
  return SummaryIdentity{"https://verifier.example/reverify", "reverify:{model}@{version}"};
}

inline VerificationSummary sample_summary(VerdictClass cls = VerdictClass::passed) {
  return *summary_for(sample_verdict(cls), sample_inputs(), sample_identity());
}

}  // namespace reverify::test
