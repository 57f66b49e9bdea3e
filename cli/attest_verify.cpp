#include "cli/attest_verify.hpp"

#include <nlohmann/json.hpp>

#include "core/hashing.hpp"
#include "policies/number_text.hpp"

namespace reverify::cli {
namespace {

std::string number_or_dash(const nlohmann::json& j) {
  return j.is_number() ? number_text(j.get<double>()) : "-";
}

// A check's outcome as its verdict reads it (policies/headline.hpp reading_of): an informational
// check is a note, never "failed"; so is a failed check of a passed verdict (its level enforces
// none).
std::string outcome_word(const nlohmann::json& c, VerdictClass verdict) {
  const std::string outcome = c.value("outcome", "?");
  const bool failed = outcome == to_string(CheckOutcome::failed);
  const bool enforced_nothing = verdict == VerdictClass::passed && failed;
  if (c.value("informational", false) || enforced_nothing)
    return failed ? "note: outside its band" : "note";
  return outcome;
}

// One check of the per-check summary: "primary:accuracy passed: 0.9609 in [0.9571, 0.9651]
// (margin 0.0038); catches shifts of 0.006 with 80% probability".
std::string check_line(const nlohmann::json& c, VerdictClass verdict) {
  if (!c.is_object())
    return c.dump();
  std::string line = c.value("check", "?") + " " + outcome_word(c, verdict);
  const auto observed = c.value("observed", nlohmann::json());
  const auto band = c.value("band", nlohmann::json());
  if (band.is_object() && band.value("upper", nlohmann::json()).is_number()) {
    const auto lower = band.value("lower", nlohmann::json());
    line += ": " + number_or_dash(observed) +
            (lower.is_number()
                 ? " in [" + number_or_dash(lower) + ", " + number_or_dash(band["upper"]) + "]"
                 : " <= " + number_or_dash(band["upper"]));
  } else if (observed.is_number()) {
    line += ": " + number_or_dash(observed);
  }
  if (c.value("margin", nlohmann::json()).is_number())
    line += " (margin " + number_or_dash(c["margin"]) + ")";
  const auto power = c.value("power", nlohmann::json());
  if (power.is_object()) {
    // "shift" (or "shift_units"): the smallest shift the band catches with that probability.
    const auto shift =
        power.contains("shift") ? power["shift"] : power.value("shift_units", nlohmann::json());
    if (shift.is_number()) {
      line += "; catches shifts of " + number_or_dash(shift) + " with " +
              number_text(100 * power.value("probability", 0.8)) + "% probability";
    }
  }
  if (c.value("underpowered", false) || (power.is_object() && power.value("underpowered", false)))
    line += "; UNDERPOWERED";
  return line;
}

void print_summary(std::ostream& out, const CheckedSummary& c, UnixSeconds now) {
  const auto& s = c.summary;
  out << "  signed by key " << c.key_id.substr(0, 16) << "… (" << s.verifier_id << ")\n";
  std::string levels;
  for (const auto& level : s.verified_levels)
    levels += (levels.empty() ? "" : ", ") + level;
  out << "  " << to_string(s.result) << " [" << levels << "] for " << s.resource_uri;
  if (s.time_verified) {
    out << ", verified " << rfc3339(*s.time_verified) << " (" << age_text(now - *s.time_verified)
        << " ago)";
  }
  out << "\n";
  if (s.details) {
    const auto& d = *s.details;
    out << "  verification " << d.verification_id << " of " << d.model << "@" << d.version << ": "
        << to_string(d.verdict) << ", level " << to_string(d.level) << ", "
        << (d.mode == SummaryMode::steps
                ? "first " + std::to_string(d.max_steps.value_or(0)) + " steps rebuilt"
                : std::string(d.mode == SummaryMode::subsample ? "subsample rebuild"
                                                               : "full rebuild"))
        << "\n";
    // What it says, as every surface says it; a summary signed before headlines were kept has
    // only its explanation.
    if (!d.headline.empty()) {
      out << "    " << d.headline
          << (d.check_counts.empty() ? "" : " Checks: " + d.check_counts + ".") << "\n";
    } else {
      out << "    " << d.explanation << "\n";
    }
    for (const auto& check : d.checks)
      out << "    - " << check_line(check, d.verdict) << "\n";
  }
  out << "  subjects: " << subjects_text(s) << "\n";
  out << "  policy: " << s.policy.uri;
  for (const auto& [algorithm, value] : s.policy.digest)
    out << " " << digest_text(algorithm, value);
  out << "\n";
  if (c.matched)
    out << "  the weights match " << *c.matched << "\n";
}

}  // namespace

Result<std::vector<Ed25519PublicKey>> read_public_keys(
    const std::vector<std::filesystem::path>& files) {
  std::vector<Ed25519PublicKey> keys;
  for (const auto& file : files) {
    auto read = Ed25519PublicKey::read_pem_file(file);
    if (!read.ok())
      return read.error();
    keys.insert(keys.end(), read->begin(), read->end());
  }
  if (keys.empty())
    return make_error(ErrorCode::invalid_argument, "--key PUBKEY.pem is required");
  return keys;
}

Result<ArtifactDigests> artifact_digests(const std::filesystem::path& file) {
  auto sha256 = sha256_file(file);
  if (!sha256.ok())
    return sha256.error();
  ArtifactDigests artifact{file.string(), {{"sha256", *sha256}}};
  // Only a file that reads as safetensors has a tensor hash; any other file is matched by sha256.
  if (auto tensors = hash_safetensors(file); tensors.ok())
    artifact.digest[kTensorDigestKey] = tensors->root;
  return artifact;
}

int verify_and_report(const std::string& envelope_json, const std::string& source,
                      const AttestVerifyOptions& options, bool json, std::ostream& out,
                      std::ostream& err) {
  auto keys = read_public_keys(options.key_files);
  if (!keys.ok()) {
    err << "reverify attest: " << keys.error().message << "\n";
    return 2;
  }
  SummaryExpectations expected = options.expected;
  if (options.weights) {
    auto artifact = artifact_digests(*options.weights);
    if (!artifact.ok()) {
      err << "reverify attest: --weights: " << artifact.error().message << "\n";
      return 2;
    }
    expected.artifact = std::move(*artifact);
  }
  auto checked = check_summary(envelope_json, *keys, expected);
  if (!checked.ok()) {
    if (json) {
      out << nlohmann::json{{"source", source},
                            {"valid", false},
                            {"reason", checked.error().message}}
                 .dump(2)
          << "\n";
    }
    err << source << ": INVALID: " << checked.error().message << "\n";
    return 2;
  }
  if (json) {
    out << nlohmann::json{{"source", source},
                          {"valid", true},
                          {"accepted", checked->acceptable()},
                          {"problems", checked->problems},
                          {"key_id", checked->key_id},
                          {"matched_subject", checked->matched ? nlohmann::json(*checked->matched)
                                                               : nlohmann::json(nullptr)},
                          {"statement", nlohmann::json::parse(checked->payload)}}
               .dump(2)
        << "\n";
    return checked->acceptable() ? 0 : 1;
  }
  out << source << ": signature valid\n";
  print_summary(out, *checked, expected.now);
  for (const auto& problem : checked->problems)
    out << "  NOT ACCEPTED: " << problem << "\n";
  out << (checked->acceptable() ? "VERIFIED" : "NOT VERIFIED") << "\n";
  return checked->acceptable() ? 0 : 1;
}

}  // namespace reverify::cli
