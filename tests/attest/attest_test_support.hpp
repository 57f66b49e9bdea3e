#pragma once
// A verdict and the inputs of its summary, as a verification of digits-mlp@2026.11.1 would
// produce them, for the attest tests.

#include <stdexcept>

#include "attest/summary.hpp"

namespace reverify::test {

inline const std::string kWeightsSha = std::string(64, 'a');
inline const std::string kTensorSha = std::string(64, 'b');
inline const std::string kManifestSha = std::string(64, 'c');
inline const std::string kPolicySha = std::string(64, 'd');
inline constexpr UnixSeconds kVerifiedAt = 1'793'588'400;  // 2026-11-02T03:00:00Z

// Read through verdict_from_json, as the store reads verdicts back; each check carries its band
// both as "tolerance" (a half-width or an upper bound) and as "band" {lower, upper}.
inline Verdict sample_verdict(VerdictClass cls = VerdictClass::passed) {
  const nlohmann::json checks = nlohmann::json::parse(R"([
    {"name": "input:image", "kind": "input", "outcome": "passed"},
    {"name": "primary:accuracy", "kind": "primary", "outcome": "passed", "observed": 0.9609,
     "reference": 0.9611, "tolerance": 0.004, "band": {"lower": 0.9571, "upper": 0.9651},
     "margin": 0.0038, "evidence": {"power": {"probability": 0.8, "shift": 0.006}}},
    {"name": "distribution:ks", "kind": "distribution", "outcome": "passed", "observed": 0.01,
     "reference": 0, "tolerance": 0.05, "band": {"lower": null, "upper": 0.05}, "margin": 0.04}
  ])");
  auto verdict = verdict_from_json({{"class", to_string(cls)},
                                    {"explanation", "all 3 checks within their bands"},
                                    {"checks", checks}});
  if (!verdict)
    throw std::logic_error("sample verdict does not read back");
  return *verdict;
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
