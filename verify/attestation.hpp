#pragma once
// The signed summary of one verification's verdict (attest/), built and signed before the
// verdict is recorded so that the store writes both in one transaction. This part does what
// takes I/O: the subjects' digests, computed from the released files' bytes (the weights'
// sha256 and tensor hash, the manifest's sha256), and the tolerance policy document whose digest
// the summary names.
//
// The policy document (JSON, schema "reverify.tolerance-policy/v1"): the manifest's level, the
// mode, the verdict policy (false-page rate, fallback bands, flip threshold) and the seed-run
// spread the bands came from (the manifest's tolerance overlaid with the stored calibration).
//
// Blocking (hashing the weights): call from a worker thread.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "policies/verdict.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/pipeline.hpp"

namespace reverify {

inline constexpr char kTolerancePolicySchema[] = "reverify.tolerance-policy/v1";

// The tolerance policy document for a request judged under `policy`.
nlohmann::json tolerance_policy_document(const VerificationRequest& request,
                                         const VerdictPolicy& policy);

struct AttestationRequest {
  const VerificationRequest& request;  // manifest, its location, mode, calibration
  std::int64_t verification_id = 0;
  std::string manifest_sha256;  // of the manifest bytes this verification read
  const VerdictPolicy& policy;
  UnixSeconds time_verified = 0;
};

// The summary to record with `verdict`: nullopt when attestation is off or the verdict is not
// passed or failed:*. What it covers (and what it could not: weights that are not a local file)
// is added to `evidence["attestation"]`.
std::optional<AttestationToRecord> attest_verdict(const Verdict& verdict,
                                                  const AttestationRequest& in,
                                                  const AttestationConfig& config,
                                                  nlohmann::json& evidence);

}  // namespace reverify
