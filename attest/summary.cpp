#include "attest/summary.hpp"

#include "attest/dsse.hpp"
#include "core/version.hpp"
#include "policies/headline.hpp"

namespace reverify {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos + to.size()))
    text.replace(pos, from.size(), to);
}

}  // namespace

std::string resource_uri_for(const std::string& resource_uri_template, const std::string& model,
                             const std::string& version) {
  std::string uri = resource_uri_template;
  replace_all(uri, "{model}", model);
  replace_all(uri, "{version}", version);
  return uri;
}

std::optional<VerificationSummary> summary_for(const Verdict& verdict, const SummaryInputs& inputs,
                                               const SummaryIdentity& identity) {
  const auto result = summary_result_for(verdict);
  if (!result)
    return std::nullopt;
  VerificationSummary s;
  s.subjects = inputs.subjects;
  s.verifier_id = identity.verifier_id;
  s.verifier_version = {{"reverify", reverify_version()}};
  s.time_verified = inputs.time_verified;
  s.resource_uri = resource_uri_for(identity.resource_uri_template, inputs.model, inputs.version);
  s.policy.uri = kPolicyUriPrefix + inputs.model + "@" + inputs.version;
  s.policy.digest = {{"sha256", inputs.policy_sha256}};
  s.result = *result;
  s.verified_levels = verified_levels_for(*result, inputs.level, inputs.mode);
  ReverifyDetails details;
  details.model = inputs.model;
  details.version = inputs.version;
  details.verification_id = inputs.verification_id;
  details.verdict = verdict.cls;
  details.level = inputs.level;
  details.mode = inputs.mode;
  if (inputs.mode == SummaryMode::steps)
    details.max_steps = inputs.max_steps;
  details.explanation = verdict.explanation;
  details.headline = verdict_headline(verdict);
  details.check_counts = counts_text(count_checks(verdict));
  details.checks = summarize_checks(verdict);
  s.details = std::move(details);
  return s;
}

SignedSummary sign_summary(const VerificationSummary& summary, const Ed25519SigningKey& key) {
  auto envelope = dsse_sign(kInTotoPayloadType, statement_payload(summary), key);
  return SignedSummary{dsse_envelope_json(envelope), key.key_id(), summary.result};
}

}  // namespace reverify
