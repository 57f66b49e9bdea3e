#include <doctest/doctest.h>

#include "attest/base64.hpp"
#include "attest/summary_check.hpp"
#include "tests/attest/attest_test_support.hpp"

using namespace reverify;
using namespace reverify::test;
using nlohmann::json;

namespace {

const Ed25519SigningKey& signer() {
  static const Ed25519SigningKey key = Ed25519SigningKey::generate();
  return key;
}

std::string envelope_for(const VerificationSummary& s) {
  return sign_summary(s, signer()).envelope_json;
}

SummaryExpectations fresh() {
  SummaryExpectations e;
  e.now = kVerifiedAt + 86'400;
  e.max_age_s = 40 * 86'400;
  e.model = ModelVersion{"digits-mlp", "2026.11.1"};
  return e;
}

CheckedSummary accepted(const std::string& envelope, const SummaryExpectations& e) {
  auto checked = check_summary(envelope, {signer().public_key()}, e);
  REQUIRE_MESSAGE(checked.ok(), checked.error().message);
  return std::move(checked).value();
}

std::string rejected(const std::string& envelope,
                     const std::vector<Ed25519PublicKey>& keys = {signer().public_key()}) {
  auto checked = check_summary(envelope, keys, fresh());
  REQUIRE_FALSE(checked.ok());
  return checked.error().message;
}

std::string only_problem(const CheckedSummary& c) {
  REQUIRE(c.problems.size() == 1);
  return c.problems[0];
}

}  // namespace

TEST_CASE("a fresh PASSED summary of the expected model version is acceptable") {
  auto c = accepted(envelope_for(sample_summary()), fresh());
  CHECK(c.acceptable());
  CHECK(c.key_id == signer().key_id());
  CHECK(c.summary == sample_summary());
}

TEST_CASE("valid summaries that do not vouch for what was asked: one problem each") {
  auto failed =
      accepted(envelope_for(sample_summary(VerdictClass::failed_out_of_tolerance)), fresh());
  CHECK(only_problem(failed).find("verificationResult is FAILED (failed:out-of-tolerance") !=
        std::string::npos);

  auto e = fresh();
  e.now = kVerifiedAt + 45 * 86'400 + 3 * 3600;
  CHECK(only_problem(accepted(envelope_for(sample_summary()), e)) ==
        "stale: verified 45d 3h ago (2026-11-02T03:00:00Z), more than the allowed 40d");
  e.now = kVerifiedAt - 3600;
  CHECK(only_problem(accepted(envelope_for(sample_summary()), e)).find("1h in the future") !=
        std::string::npos);
  e.now = kVerifiedAt - kMaxClockSkewS;  // within the skew: fine
  CHECK(accepted(envelope_for(sample_summary()), e).acceptable());

  e = fresh();
  e.model = ModelVersion{"digits-mlp", "2026.11.2"};
  CHECK(only_problem(accepted(envelope_for(sample_summary()), e)) ==
        "another model version: the summary is about digits-mlp@2026.11.1, not "
        "digits-mlp@2026.11.2");

  e = fresh();
  e.verifier_id = "https://someone.else";
  CHECK(only_problem(accepted(envelope_for(sample_summary()), e)).find("another verifier") == 0);
  e = fresh();
  e.resource_uri = "https://models.example/digits-mlp/2026.11.1/";
  CHECK(only_problem(accepted(envelope_for(sample_summary()), e)).find("another resource") == 0);
  e = fresh();
  e.level = "REVERIFY_BITWISE_V1";
  CHECK(only_problem(accepted(envelope_for(sample_summary()), e)) ==
        "level REVERIFY_BITWISE_V1 not verified (verifiedLevels: REVERIFY_EQUIVALENT_V1)");
  e.level = "REVERIFY_EQUIVALENT_V1";
  CHECK(accepted(envelope_for(sample_summary()), e).acceptable());
  e = fresh();
  e.mode = "steps";  // `reverify gate --mode steps --attestation`
  CHECK(only_problem(accepted(envelope_for(sample_summary()), e)) ==
        "another mode: the summary attests a full rebuild, expected steps");
  e.mode = "full";
  CHECK(accepted(envelope_for(sample_summary()), e).acceptable());
}

TEST_CASE("the artifact is matched by any accepted digest of any subject") {
  auto e = fresh();
  e.artifact = ArtifactDigests{"model.safetensors", {{"sha256", kWeightsSha}}};
  auto by_file = accepted(envelope_for(sample_summary()), e);
  CHECK(by_file.acceptable());
  CHECK(*by_file.matched == "subject \"model.safetensors\" by sha256");
  // Same tensors in a re-serialised file: other bytes, same tensor hash.
  e.artifact = ArtifactDigests{"resaved.safetensors",
                               {{"sha256", std::string(64, 'e')}, {kTensorDigestKey, kTensorSha}}};
  auto by_tensors = accepted(envelope_for(sample_summary()), e);
  CHECK(*by_tensors.matched == "subject \"model.safetensors\" by reverify-tensor-sha256");
  e.artifact = ArtifactDigests{"other.safetensors", {{"sha256", std::string(64, 'e')}}};
  CHECK(
      only_problem(accepted(envelope_for(sample_summary()), e))
          .find("another subject: other.safetensors (sha256:eeeeeeeeeeeeeeee…) is not a subject") ==
      0);
  // An algorithm this verifier does not accept never matches.
  e.artifact = ArtifactDigests{"x", {{"md5", std::string(32, 'a')}}};
  CHECK_FALSE(accepted(envelope_for(sample_summary()), e).acceptable());
}

TEST_CASE("invalid envelopes: tampered, wrong key, swapped subject, truncated, another type") {
  const std::string good = envelope_for(sample_summary());
  json envelope = json::parse(good);
  const std::string payload = *base64_decode(envelope["payload"].get<std::string>());

  SUBCASE("tampered payload") {
    json statement = json::parse(payload);
    statement["predicate"]["verificationResult"] = "PASSED";
    statement["predicate"]["reverify:verification/v1"]["verificationId"] = 8;
    json tampered = envelope;
    tampered["payload"] = base64_encode(statement.dump());
    CHECK(rejected(tampered.dump()).find("bad signature") != std::string::npos);
  }
  SUBCASE("swapped subject") {
    json statement = json::parse(payload);
    statement["subject"][0]["digest"]["sha256"] = std::string(64, 'f');
    json swapped = envelope;
    swapped["payload"] = base64_encode(statement.dump());
    CHECK(rejected(swapped.dump()).find("bad signature") != std::string::npos);
  }
  SUBCASE("wrong key") {
    auto other = Ed25519SigningKey::generate();
    CHECK(rejected(good, {other.public_key()}).find("wrong key") != std::string::npos);
  }
  SUBCASE("truncated base64") {
    json truncated = envelope;
    std::string text = truncated["payload"];
    // Cut to a length of 4k+1 characters: never base64, padded or not, whatever the payload's size.
    truncated["payload"] = text.substr(0, text.size() - 1 - (text.size() - 2) % 4);
    CHECK(rejected(truncated.dump()).find("payload: not valid base64") != std::string::npos);
    truncated = envelope;
    text = truncated["signatures"][0]["sig"];
    truncated["signatures"][0]["sig"] = text.substr(0, 49);  // 4n+1 characters: never base64
    CHECK(rejected(truncated.dump()).find("sig: not valid base64") != std::string::npos);
  }
  SUBCASE("a correctly signed statement of another predicate type") {
    json statement = json::parse(payload);
    statement["predicateType"] = "https://slsa.dev/provenance/v1";
    auto other_type = dsse_sign(kInTotoPayloadType, statement.dump(), signer());
    CHECK(rejected(dsse_envelope_json(other_type)).find("predicateType: is") != std::string::npos);
  }
  SUBCASE("a correctly signed payload of another payload type") {
    auto plain_json = dsse_sign("application/json", payload, signer());
    CHECK(rejected(dsse_envelope_json(plain_json)).find("payloadType is \"application/json\"") !=
          std::string::npos);
  }
  SUBCASE("not an envelope at all") {
    CHECK(rejected(payload).find("payloadType: required") != std::string::npos);
    CHECK(rejected("").find("not valid JSON") != std::string::npos);
  }
}

TEST_CASE("age text") {
  CHECK(age_text(0) == "0s");
  CHECK(age_text(59) == "59s");
  CHECK(age_text(61) == "1m 1s");
  CHECK(age_text(3600) == "1h");
  CHECK(age_text(40 * 86'400) == "40d");
  CHECK(age_text(86'400 + 7200) == "1d 2h");
}
