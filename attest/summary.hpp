#pragma once
// One signed verification summary for one conclusive verdict: the statement (attest/vsa.hpp)
// built from what the verification knows, serialised once, and signed in a DSSE envelope. The
// caller gathers the digests (it reads the files); this part is pure apart from signing.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attest/ed25519.hpp"
#include "attest/vsa.hpp"
#include "core/manifest.hpp"
#include "core/unix_time.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

// How a deployment names itself and its resources in its summaries (settings: attestation).
struct SummaryIdentity {
  std::string verifier_id;  // predicate.verifier.id: a URI naming this verifier
  // predicate.resourceUri; "{model}" and "{version}" are replaced (e.g. a registry URL).
  std::string resource_uri_template = "reverify:{model}@{version}";
};

inline constexpr char kPolicyUriPrefix[] = "reverify:tolerance-policy/";

// resource_uri_template with {model} and {version} filled in.
std::string resource_uri_for(const std::string& resource_uri_template, const std::string& model,
                             const std::string& version);

struct SummaryInputs {
  std::string model, version;
  std::int64_t verification_id = 0;
  ReproLevel level = ReproLevel::equivalent;
  SummaryMode mode = SummaryMode::full;
  std::optional<std::int64_t> max_steps;  // steps mode
  UnixSeconds time_verified = 0;
  // The released artifacts, with the digests reverify computed from their bytes: the weights
  // (sha256 + reverify-tensor-sha256) when readable, and the manifest (sha256).
  std::vector<ResourceDescriptor> subjects;
  std::string policy_sha256;  // of the tolerance policy document actually applied
};

// The statement for a conclusive verdict; nullopt for error:*, uncalibrated and a pass that judged
// fewer deciding checks than its release defines (summary_result_for).
// REQUIRES: inputs.subjects is not empty, every subject has a digest.
std::optional<VerificationSummary> summary_for(const Verdict& verdict, const SummaryInputs& inputs,
                                               const SummaryIdentity& identity);

struct SignedSummary {
  std::string envelope_json;  // the DSSE envelope, as stored and served
  std::string key_id;
  SummaryResult result = SummaryResult::failed;
};

SignedSummary sign_summary(const VerificationSummary& summary, const Ed25519SigningKey& key);

}  // namespace reverify
