#pragma once
// Checking a signed verification summary offline (`reverify attest verify`, `reverify gate
// --attestation`), in the order of the VSA spec's "How to verify":
//   1. the DSSE signature over PAE, under one of the trusted public keys;
//   2. the payload type (application/vnd.in-toto+json), the statement's _type, the predicateType
//      (a VSA) and its required fields;
//   then what the caller expects of it: the subject matches the artifact's digest (DigestSet
//   rule: any accepted algorithm equal), the verifier id, the resource URI, the model version,
//   verificationResult PASSED, a verified level, the rebuild mode, and the age of timeVerified.
// Failing 1-2 makes the summary invalid (an error: exit 2); failing an expectation leaves a valid
// summary that does not vouch for what was asked (problems: exit 1). Pure: the caller reads the
// files and hashes the artifact.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attest/dsse.hpp"
#include "attest/ed25519.hpp"
#include "attest/vsa.hpp"
#include "core/names.hpp"
#include "core/result.hpp"
#include "core/unix_time.hpp"

namespace reverify {

// An artifact as the verifier computed it from its bytes.
struct ArtifactDigests {
  std::string name;  // for messages (the path given)
  DigestSet digest;  // sha256, and reverify-tensor-sha256 for a safetensors file
};

struct SummaryExpectations {
  UnixSeconds now = 0;
  std::optional<std::int64_t> max_age_s;
  std::optional<ModelVersion> model;  // extension's model/version, else resourceUri
  std::optional<ArtifactDigests> artifact;
  std::optional<std::string> verifier_id;
  std::optional<std::string> resource_uri;
  std::optional<std::string> level;  // must be among verifiedLevels
  // The rebuild mode it must attest (reverify details' "mode", e.g. "full"): `reverify gate
  // --mode`. A summary without reverify details does not say, so it does not vouch for one.
  std::optional<std::string> mode;
};

// Clock skew tolerated before a timeVerified counts as "in the future".
inline constexpr std::int64_t kMaxClockSkewS = 300;

struct CheckedSummary {
  VerificationSummary summary;
  std::string payload;                 // the statement bytes the signature covers
  std::string key_id;                  // the trusted key whose signature verified
  std::optional<std::string> matched;  // the subject the artifact matched, and by which digest
  std::vector<std::string> problems;   // each expectation not met, one sentence each
  bool acceptable() const { return problems.empty(); }
};

// Invalid envelopes (unparseable, unsigned by any of `keys`, wrong payload type, not a VSA
// statement, malformed) are errors whose message says why; ErrorCode::unauthorized for signature
// failures, ErrorCode::parse for the rest.
Result<CheckedSummary> check_summary(std::string_view envelope_json,
                                     const std::vector<Ed25519PublicKey>& keys,
                                     const SummaryExpectations& expected);

// "model.safetensors sha256:523ffcf152ee31a1… reverify-tensor-sha256:…; manifest.json …": the
// subjects for messages, digests cut to 16 hex digits.
std::string subjects_text(const VerificationSummary& summary);
std::string digest_text(const std::string& algorithm, const std::string& hex);

// "45d 3h", "2h 5m", "40s": an age for messages.
std::string age_text(std::int64_t seconds);

}  // namespace reverify
