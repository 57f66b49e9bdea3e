#include "attest/summary_check.hpp"

#include <algorithm>

namespace reverify {
namespace {

// DigestSet algorithms this verifier accepts (digest_set.md: only secure ones, the rest are
// ignored); reverify computes these two from the artifact's bytes.
constexpr const char* kAcceptedDigests[] = {"sha256", kTensorDigestKey};

std::optional<std::string> match_subject(const VerificationSummary& summary,
                                         const ArtifactDigests& artifact) {
  for (const auto& subject : summary.subjects) {
    for (const char* algorithm : kAcceptedDigests) {
      auto mine = artifact.digest.find(algorithm);
      auto theirs = subject.digest.find(algorithm);
      if (mine != artifact.digest.end() && theirs != subject.digest.end() &&
          mine->second == theirs->second) {
        return "subject \"" + (subject.name.empty() ? std::string("_") : subject.name) + "\" by " +
               algorithm;
      }
    }
  }
  return std::nullopt;
}

std::string digests_text(const DigestSet& digest) {
  std::string out;
  for (const auto& [algorithm, value] : digest)
    out += (out.empty() ? "" : ", ") + digest_text(algorithm, value);
  return out;
}

void check_model(const VerificationSummary& s, const ModelVersion& model,
                 std::vector<std::string>& problems) {
  if (s.details) {
    if (s.details->model != model.model || s.details->version != model.version) {
      problems.push_back("another model version: the summary is about " + s.details->model + "@" +
                         s.details->version + ", not " + model.id());
    }
  } else if (s.resource_uri != "reverify:" + model.id()) {
    problems.push_back("another model version: resourceUri is \"" + s.resource_uri +
                       "\", not \"reverify:" + model.id() + "\"");
  }
}

void check_age(const VerificationSummary& s, const SummaryExpectations& expected,
               std::vector<std::string>& problems) {
  if (!s.time_verified) {
    if (expected.max_age_s)
      problems.push_back("no timeVerified: the summary's age cannot be checked");
    return;
  }
  const std::int64_t age = expected.now - *s.time_verified;
  if (age < -kMaxClockSkewS) {
    problems.push_back("timeVerified " + rfc3339(*s.time_verified) + " is " + age_text(-age) +
                       " in the future");
  } else if (expected.max_age_s && age > *expected.max_age_s) {
    problems.push_back("stale: verified " + age_text(age) + " ago (" + rfc3339(*s.time_verified) +
                       "), more than the allowed " + age_text(*expected.max_age_s));
  }
}

}  // namespace

std::string digest_text(const std::string& algorithm, const std::string& hex) {
  return algorithm + ":" + (hex.size() > 16 ? hex.substr(0, 16) + "…" : hex);
}

std::string subjects_text(const VerificationSummary& summary) {
  std::string out;
  for (const auto& subject : summary.subjects) {
    out += out.empty() ? "" : "; ";
    out += subject.name.empty() ? "_" : subject.name;
    for (const auto& [algorithm, value] : subject.digest)
      out += " " + digest_text(algorithm, value);
  }
  return out;
}

std::string age_text(std::int64_t seconds) {
  if (seconds < 0)
    seconds = 0;
  const std::int64_t d = seconds / 86400, h = seconds % 86400 / 3600, m = seconds % 3600 / 60,
                     s = seconds % 60;
  if (d > 0)
    return std::to_string(d) + "d" + (h > 0 ? " " + std::to_string(h) + "h" : "");
  if (h > 0)
    return std::to_string(h) + "h" + (m > 0 ? " " + std::to_string(m) + "m" : "");
  if (m > 0)
    return std::to_string(m) + "m" + (s > 0 ? " " + std::to_string(s) + "s" : "");
  return std::to_string(s) + "s";
}

Result<CheckedSummary> check_summary(std::string_view envelope_json,
                                     const std::vector<Ed25519PublicKey>& keys,
                                     const SummaryExpectations& expected) {
  auto envelope = dsse_parse_envelope(envelope_json);
  if (!envelope)
    return envelope.error();
  auto verified = dsse_verify(*envelope, keys);
  if (!verified)
    return verified.error();
  if (verified->payload_type != kInTotoPayloadType) {
    return make_error(ErrorCode::parse, "payloadType is \"" + verified->payload_type +
                                            "\"; expected \"" + kInTotoPayloadType +
                                            "\" (an in-toto statement)");
  }
  auto summary = parse_statement(verified->payload);
  if (!summary)
    return summary.error();

  CheckedSummary checked{
      std::move(*summary), std::move(verified->payload), verified->key_id, std::nullopt, {}};
  const auto& s = checked.summary;
  auto& problems = checked.problems;
  if (expected.artifact) {
    checked.matched = match_subject(s, *expected.artifact);
    if (!checked.matched) {
      problems.push_back("another subject: " + expected.artifact->name + " (" +
                         digests_text(expected.artifact->digest) +
                         ") is not a subject of this summary (" + subjects_text(s) + ")");
    }
  }
  if (expected.verifier_id && s.verifier_id != *expected.verifier_id) {
    problems.push_back("another verifier: predicate.verifier.id is \"" + s.verifier_id +
                       "\", expected \"" + *expected.verifier_id + "\"");
  }
  if (expected.resource_uri && s.resource_uri != *expected.resource_uri) {
    problems.push_back("another resource: resourceUri is \"" + s.resource_uri + "\", expected \"" +
                       *expected.resource_uri + "\"");
  }
  if (expected.model)
    check_model(s, *expected.model, problems);
  if (s.result != SummaryResult::passed) {
    std::string why =
        s.details
            ? " (" + std::string(to_string(s.details->verdict)) + ": " +
                  (s.details->headline.empty() ? s.details->explanation : s.details->headline) + ")"
            : "";
    problems.push_back("verificationResult is FAILED" + why);
  }
  if (expected.level && std::find(s.verified_levels.begin(), s.verified_levels.end(),
                                  *expected.level) == s.verified_levels.end()) {
    std::string levels;
    for (const auto& l : s.verified_levels)
      levels += (levels.empty() ? "" : ", ") + l;
    problems.push_back("level " + *expected.level + " not verified (verifiedLevels: " + levels +
                       ")");
  }
  if (expected.mode && (!s.details || to_string(s.details->mode) != *expected.mode)) {
    problems.push_back("another mode: the summary attests " +
                       (s.details ? "a " + std::string(to_string(s.details->mode)) + " rebuild"
                                  : std::string("no rebuild mode")) +
                       ", expected " + *expected.mode);
  }
  check_age(s, expected, problems);
  return checked;
}

}  // namespace reverify
