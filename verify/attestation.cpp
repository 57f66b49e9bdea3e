#include "verify/attestation.hpp"

#include "attest/summary.hpp"
#include "core/hashing.hpp"
#include "store/tolerance_json.hpp"

namespace reverify {
namespace {

std::string file_name(const std::string& location) {
  const auto slash = location.find_last_of('/');
  return slash == std::string::npos ? location : location.substr(slash + 1);
}

// The released weights as a subject: sha256 of the file, and its tensor hash when it is
// safetensors. nullopt (with the reason in `notes`) when there is no local file to hash.
std::optional<ResourceDescriptor> weights_subject(const VerificationRequest& request,
                                                  nlohmann::json& notes) {
  const auto& weights = request.manifest.weights;
  if (!weights) {
    notes.push_back("the manifest names no weights: the summary's only subject is the manifest");
    return std::nullopt;
  }
  auto path = released_weights(request);
  if (!path) {
    notes.push_back("the released weights " + weights->uri +
                    " are not a readable local file: not a subject of the summary");
    return std::nullopt;
  }
  auto sha256 = sha256_file(*path);
  if (!sha256.ok()) {
    notes.push_back("the released weights: " + sha256.error().message);
    return std::nullopt;
  }
  ResourceDescriptor subject{weights->uri, "", {{"sha256", *sha256}}};
  if (weights->format == "safetensors") {
    auto tensors = hash_safetensors(*path);
    if (tensors.ok()) {
      subject.digest[kTensorDigestKey] = tensors->root;
    } else {
      notes.push_back("the released weights' tensor hash: " + tensors.error().message);
    }
  }
  return subject;
}

}  // namespace

nlohmann::json tolerance_policy_document(const VerificationRequest& request,
                                         const VerdictPolicy& policy) {
  const ToleranceSpec spread =
      merged_tolerance(request.manifest, request.calibration ? &*request.calibration : nullptr);
  return {{"schema", kTolerancePolicySchema},
          {"level", to_string(request.manifest.level)},
          {"mode", to_string(request.mode)},
          {"max_steps", request.mode == RebuildMode::steps ? nlohmann::json(request.max_steps)
                                                           : nlohmann::json(nullptr)},
          {"verdict",
           {{"false_page_rate", policy.false_page_rate},
            {"fallback", policy.allow_fallback},
            {"fallback_tolerance", policy.fallback_tolerance},
            {"flip_threshold", policy.flip_threshold}}},
          {"seed_spread", tolerance_to_json(spread)},
          {"calibrated", request.calibration.has_value()}};
}

std::optional<AttestationToRecord> attest_verdict(const Verdict& verdict,
                                                  const AttestationRequest& in,
                                                  const AttestationConfig& config,
                                                  nlohmann::json& evidence) {
  if (!config.enabled() || !summary_result_for(verdict))
    return std::nullopt;
  const auto& request = in.request;
  nlohmann::json notes = nlohmann::json::array();
  SummaryInputs inputs;
  inputs.model = request.manifest.model;
  inputs.version = request.manifest.version;
  inputs.verification_id = in.verification_id;
  inputs.level = request.manifest.level;
  inputs.mode = *enum_from_string<SummaryMode>(to_string(request.mode));  // the same names
  if (inputs.mode == SummaryMode::steps)
    inputs.max_steps = request.max_steps;
  inputs.time_verified = in.time_verified;
  if (auto weights = weights_subject(request, notes))
    inputs.subjects.push_back(std::move(*weights));
  inputs.subjects.push_back(ResourceDescriptor{
      file_name(request.manifest_location), "", {{"sha256", in.manifest_sha256}}});
  const std::string policy = tolerance_policy_document(request, in.policy).dump();
  inputs.policy_sha256 = sha256_hex(policy);

  auto summary = summary_for(verdict, inputs, config.identity);
  const SignedSummary signed_summary = sign_summary(*summary, *config.key);
  nlohmann::json subjects = nlohmann::json::array();
  for (const auto& s : inputs.subjects)
    subjects.push_back(s.name);
  evidence["attestation"] = {{"key_id", signed_summary.key_id},
                             {"result", to_string(signed_summary.result)},
                             {"subjects", subjects},
                             {"policy_sha256", inputs.policy_sha256},
                             {"notes", notes}};
  return AttestationToRecord{signed_summary.envelope_json, signed_summary.key_id,
                             to_string(signed_summary.result), policy};
}

}  // namespace reverify
