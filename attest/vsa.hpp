#pragma once
// A SLSA Verification Summary Attestation (VSA) for one conclusive verdict, as an in-toto
// Statement v1. Specifications followed (docs/attestations.md "Signed verification summaries"):
// in-toto/attestation spec/v1 statement.md, resource_descriptor.md, digest_set.md,
// field_types.md; slsa-framework/slsa spec/verification_summary.md (VSA 1.2, predicateType v1).
//
//   {"_type": "https://in-toto.io/Statement/v1",
//    "subject": [{"name": "model.safetensors", "digest": {"sha256": ..., "reverify-tensor-sha256":
//    ...}},
//                {"name": "manifest.json", "digest": {"sha256": ...}}],
//    "predicateType": "https://slsa.dev/verification_summary/v1",
//    "predicate": {"verifier": {"id": URI, "version": {"reverify": "0.1.0"}},
//                  "timeVerified": "2026-11-02T03:00:00Z", "resourceUri": "reverify:MODEL@VERSION",
//                  "policy": {"uri": URI, "digest": {"sha256": ...}},
//                  "verificationResult": "PASSED" | "FAILED",
//                  "verifiedLevels": ["REVERIFY_EQUIVALENT_V1"] | ["FAILED"],
//                  "slsaVersion": "1.2",
//                  "reverify:verification/v1": {model, version, verificationId, verdict, level,
//                                               mode, maxSteps, explanation, headline,
//                                               checkCounts, checks}}}
//
// `reverify-tensor-sha256` (a DigestSet algorithm of reverify's): lowercase hex of docs/design.md's
// tensor hash of a safetensors file. The extension field's name is a URI, as the VSA spec asks of
// extension fields; like every extension it never changes the meaning of the standard fields.
//
// Pure: no I/O, no clock.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"
#include "core/result.hpp"
#include "core/unix_time.hpp"
#include "core/verdict_class.hpp"
#include "policies/verdict_model.hpp"

#include "core/enum_names.hpp"

namespace reverify {

inline constexpr char kInTotoStatementType[] = "https://in-toto.io/Statement/v1";
inline constexpr char kVsaPredicateType[] = "https://slsa.dev/verification_summary/v1";
inline constexpr char kInTotoPayloadType[] = "application/vnd.in-toto+json";
// The in-toto storage convention's media type for one DSSE-signed VSA (envelope.md).
inline constexpr char kVsaEnvelopeMediaType[] = "application/vnd.in-toto.vsa+dsse";
inline constexpr char kVsaSlsaVersion[] = "1.2";
inline constexpr char kReverifyExtension[] = "reverify:verification/v1";
inline constexpr char kTensorDigestKey[] = "reverify-tensor-sha256";

// DigestSet: algorithm -> lowercase hex.
using DigestSet = std::map<std::string, std::string>;

struct ResourceDescriptor {
  std::string name;  // "" = unset
  std::string uri;   // "" = unset
  DigestSet digest;
  bool operator==(const ResourceDescriptor&) const = default;
};

enum class SummaryResult { passed, failed };  // verificationResult PASSED | FAILED
template <>
struct EnumNames<SummaryResult> {
  static constexpr EnumName<SummaryResult> table[] = {
      {SummaryResult::passed, "PASSED"},
      {SummaryResult::failed, "FAILED"},
  };
};
enum class SummaryMode { full, steps, subsample };
template <>
struct EnumNames<SummaryMode> {
  static constexpr EnumName<SummaryMode> table[] = {
      {SummaryMode::full, "full"},
      {SummaryMode::steps, "steps"},
      {SummaryMode::subsample, "subsample"},
  };
};

// What reverify adds to the predicate under kReverifyExtension.
struct ReverifyDetails {
  std::string model, version;
  std::int64_t verification_id = 0;
  VerdictClass verdict = VerdictClass::passed;
  ReproLevel level = ReproLevel::equivalent;
  SummaryMode mode = SummaryMode::full;
  std::optional<std::int64_t> max_steps;  // steps mode: the first N steps rebuilt
  std::string explanation;
  // What the verdict says, as every surface says it (policies/headline.hpp): its headline and its
  // checks counted ("1 failed, 33 passed"). Empty in summaries signed before they were added.
  std::string headline;
  std::string check_counts;
  nlohmann::json checks = nlohmann::json::array();  // summarize_checks()
  bool operator==(const ReverifyDetails&) const = default;
};

struct VerificationSummary {
  std::vector<ResourceDescriptor> subjects;  // each with a non-empty digest
  std::string verifier_id;                   // URI
  std::map<std::string, std::string> verifier_version;
  std::optional<UnixSeconds> time_verified;
  std::string resource_uri;
  ResourceDescriptor policy;  // uri required, digest recommended
  SummaryResult result = SummaryResult::failed;
  std::vector<std::string> verified_levels;
  std::optional<ReverifyDetails> details;  // absent in other producers' VSAs
  bool operator==(const VerificationSummary&) const = default;
};

// passed -> PASSED, failed:* -> FAILED; nullopt for error:* and uncalibrated (no summary: they
// say nothing about the model).
std::optional<SummaryResult> summary_result_for(VerdictClass cls);
// The same for a whole verdict, failing closed: a passed verdict that judged fewer deciding checks
// than its release defines (Verdict::coverage short, or naming a check not computed) gets no
// summary: never PASSED, and FAILED would say the model failed.
std::optional<SummaryResult> summary_result_for(const Verdict& verdict);

// verifiedLevels. PASSED: one reverify level (custom SlsaResult values, never "SLSA_"-prefixed):
//   full mode:  REVERIFY_RERUNNABLE_V1 < REVERIFY_EQUIVALENT_V1 < REVERIFY_BITWISE_V1
//   steps mode: REVERIFY_RERUNNABLE_STEPS_V1 < REVERIFY_EQUIVALENT_STEPS_V1 <
//               REVERIFY_BITWISE_STEPS_V1 (only the first N steps were rebuilt and compared; a
//               steps level never implies a full one)
//   subsample mode: the same with _SUBSAMPLE (the whole run on the manifest's fixed subsample,
//               judged against its subsample reference; never implies a full level either)
// Each implies those before it on its line. FAILED: ["FAILED"], as the VSA spec says.
std::vector<std::string> verified_levels_for(SummaryResult result, ReproLevel level,
                                             SummaryMode mode);

// The per-check results summary: one object per check, {check, kind, outcome, observed,
// reference, band: {lower, upper} (accepted: lower <= observed <= upper; lower null for an upper
// bound; band null for input and weights checks, which compare hashes), margin (to the nearest
// edge, negative outside)}, plus power (the shift the band catches with 80% probability),
// underpowered and informational when the check carries them. Read from to_json(CheckResult):
// its "band" when it has one, else reference ± tolerance (metrics) or [.., tolerance]
// (distances); power and flags from its top level, else from its evidence.
nlohmann::json summarize_checks(const Verdict& verdict);

// The Statement as JSON (fields in the specs' order) and as the exact payload bytes that get
// signed.
nlohmann::ordered_json statement_json(const VerificationSummary& summary);
std::string statement_payload(const VerificationSummary& summary);

// Why `uri` is not a URI as in-toto's ResourceURI and TypeURI fields want one (field_types.md):
// "scheme:rest", the scheme and an authority after "//" in lower case (RFC 3986 case
// normalisation), no whitespace or control characters; nullopt when it is one.
std::optional<std::string> in_toto_uri_problem(std::string_view uri);

// Reads a Statement back. ErrorCode::parse naming the JSON path for: not a JSON object, duplicate
// keys, `_type` other than Statement v1, a `predicateType` other than the VSA's, a missing or
// mistyped required field (subject with digests, verifier.id, resourceUri, policy.uri,
// verificationResult PASSED|FAILED, verifiedLevels), a timeVerified that is not an RFC 3339 UTC
// ("Z") timestamp, a sha256 or reverify-tensor-sha256 digest that is not 64 lowercase hex.
// Unknown fields are ignored (in-toto parsing rules); the reverify extension is read when present
// and must then be well-formed.
Result<VerificationSummary> parse_statement(std::string_view payload);

}  // namespace reverify
