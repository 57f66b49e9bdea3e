#pragma once
// What `reverify attest verify` and `reverify gate --attestation` share: reading the trusted
// public keys and the artifact to match, checking a summary (attest/summary_check.hpp) and
// printing what it says. Exit status: 0 verified (valid, PASSED, and everything asked of it),
// 1 valid but not acceptable (FAILED, stale, another subject or model version), 2 invalid
// (unreadable, malformed, bad signature, wrong key) or a usage error.

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "attest/summary_check.hpp"
#include "core/result.hpp"

namespace reverify::cli {

struct AttestVerifyOptions {
  std::vector<std::filesystem::path> key_files;  // PEM public keys (a file may hold several)
  std::optional<std::filesystem::path> weights;  // matched against the subjects by digest
  SummaryExpectations expected;                  // everything but `artifact` and `now`
};

// Reads the keys and hashes the weights (sha256 of the file; its tensor hash too when it is
// safetensors). Errors name the file.
Result<std::vector<Ed25519PublicKey>> read_public_keys(
    const std::vector<std::filesystem::path>& files);
Result<ArtifactDigests> artifact_digests(const std::filesystem::path& file);

// Checks `envelope_json` (from `source`, for messages) and prints the outcome to `out` (problems
// and the verdict line) or, when invalid, the reason to `err`. Returns the exit status.
int verify_and_report(const std::string& envelope_json, const std::string& source,
                      const AttestVerifyOptions& options, bool json, std::ostream& out,
                      std::ostream& err);

}  // namespace reverify::cli
