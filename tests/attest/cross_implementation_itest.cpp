// reverify's summaries against a second implementation that shares no code with it:
// tests/attest/dsse_reference.py (Python, Debian's python3-cryptography, PAE written from the
// DSSE spec). Each side verifies what the other signed, and each rejects the other's tampering.
#include <doctest/doctest.h>

#include <fstream>

#include "attest/summary_check.hpp"
#include "tests/attest/attest_test_support.hpp"
#include "tests/core/hashing_test_support.hpp"

namespace fs = std::filesystem;
using namespace reverify;
using namespace reverify::test;
using nlohmann::json;

namespace {

const fs::path kScript = source_dir() / "tests" / "attest" / "dsse_reference.py";

Ran python(const std::vector<std::string>& args, const fs::path& scratch) {
  std::vector<std::string> argv = {"/usr/bin/python3", kScript.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, scratch);
}

std::vector<Ed25519PublicKey> public_keys(const fs::path& pem) {
  auto keys = Ed25519PublicKey::read_pem_file(pem);
  REQUIRE_MESSAGE(keys.ok(), keys.error().message);
  return *keys;
}

SummaryExpectations expectations() {
  SummaryExpectations e;
  e.now = kVerifiedAt + 3600;
  e.max_age_s = 40 * 86'400;
  e.model = ModelVersion{"digits-mlp", "2026.11.1"};
  e.artifact = ArtifactDigests{"model.safetensors", {{"sha256", kWeightsSha}}};
  return e;
}

std::string rejection(const fs::path& envelope, const std::vector<Ed25519PublicKey>& keys) {
  auto checked = check_summary(read_file(envelope), keys, expectations());
  REQUIRE_FALSE(checked.ok());
  return checked.error().message;
}

}  // namespace

TEST_CASE("an envelope signed by reverify verifies in the second implementation") {
  TempDir dir;
  auto key = Ed25519SigningKey::generate();
  write_file(dir.path / "reverify.pub", key.public_key().pem());
  for (auto cls : {VerdictClass::passed, VerdictClass::failed_distribution_shift}) {
    const auto summary = sample_summary(cls);
    write_file(dir.path / "envelope.json", sign_summary(summary, key).envelope_json);
    Ran ran = python(
        {"verify", (dir.path / "envelope.json").string(), (dir.path / "reverify.pub").string()},
        dir.path);
    REQUIRE_MESSAGE(ran.exit_code == 0, ran.err);
    const json gist = json::parse(ran.out);
    // The key id computed independently (sha256 of the DER SubjectPublicKeyInfo) agrees.
    CHECK(gist["keyid"] == key.key_id());
    CHECK(gist["verificationResult"] == (cls == VerdictClass::passed ? "PASSED" : "FAILED"));
    CHECK(gist["subject"][0]["digest"]["sha256"] == kWeightsSha);
    CHECK(gist["subject"][0]["digest"]["reverify-tensor-sha256"] == kTensorSha);
    CHECK(gist["subject"][1]["digest"]["sha256"] == kManifestSha);
    CHECK(gist["resourceUri"] == "reverify:digits-mlp@2026.11.1");
    CHECK(gist["timeVerified"] == "2026-11-02T03:00:00Z");
    CHECK(gist["policy"]["digest"]["sha256"] == kPolicySha);
    CHECK(gist["slsaVersion"] == "1.2");
  }
}

TEST_CASE("an envelope signed by the second implementation verifies in reverify") {
  TempDir dir;
  const auto priv = dir.path / "python.pem", pub = dir.path / "python.pub";
  REQUIRE(python({"keygen", priv.string(), pub.string()}, dir.path).exit_code == 0);
  Ran made = python({"statement", (dir.path / "statement.json").string(), "digits-mlp", "2026.11.1",
                     kWeightsSha, kTensorSha, kManifestSha, "PASSED", "2026-11-02T03:00:00Z"},
                    dir.path);
  REQUIRE_MESSAGE(made.exit_code == 0, made.err);
  Ran signed_ = python({"sign", (dir.path / "statement.json").string(), priv.string(),
                        (dir.path / "envelope.json").string()},
                       dir.path);
  REQUIRE_MESSAGE(signed_.exit_code == 0, signed_.err);

  auto checked =
      check_summary(read_file(dir.path / "envelope.json"), public_keys(pub), expectations());
  REQUIRE_MESSAGE(checked.ok(), checked.error().message);
  CHECK(checked->acceptable());
  CHECK(*checked->matched == "subject \"model.safetensors\" by sha256");
  CHECK(checked->summary.verifier_id == "https://second-implementation.example/verifier");
  CHECK(checked->summary.details->explanation == "written by the second implementation");
  Ran gist = python({"verify", (dir.path / "envelope.json").string(), pub.string()}, dir.path);
  REQUIRE(gist.exit_code == 0);
  CHECK(json::parse(gist.out)["keyid"] == checked->key_id);

  // Tampered after signing (no re-signing): payload, subject, base64 cut short.
  const std::pair<const char*, const char*> tampering[] = {
      {"payload", "bad signature"},
      {"subject", "bad signature"},
      {"truncate", "payload: not valid base64"}};
  for (auto [kind, reason] : tampering) {
    CAPTURE(kind);
    REQUIRE(python({"tamper", kind, (dir.path / "envelope.json").string(),
                    (dir.path / "bad.json").string()},
                   dir.path)
                .exit_code == 0);
    CHECK(rejection(dir.path / "bad.json", public_keys(pub)).find(reason) != std::string::npos);
  }
  SUBCASE("wrong key") {
    CHECK(rejection(dir.path / "envelope.json", {Ed25519SigningKey::generate().public_key()})
              .find("wrong key") != std::string::npos);
  }
  SUBCASE("a statement of another predicate type, correctly signed") {
    json statement = json::parse(read_file(dir.path / "statement.json"));
    statement["predicateType"] = "https://slsa.dev/provenance/v1";
    write_file(dir.path / "provenance.json", statement.dump());
    REQUIRE(python({"sign", (dir.path / "provenance.json").string(), priv.string(),
                    (dir.path / "bad.json").string()},
                   dir.path)
                .exit_code == 0);
    CHECK(rejection(dir.path / "bad.json", public_keys(pub)).find("predicateType: is") !=
          std::string::npos);
  }
  SUBCASE("another payload type, correctly signed") {
    REQUIRE(python({"sign", (dir.path / "statement.json").string(), priv.string(),
                    (dir.path / "bad.json").string(), "--payload-type", "application/json"},
                   dir.path)
                .exit_code == 0);
    CHECK(rejection(dir.path / "bad.json", public_keys(pub)).find("payloadType is") !=
          std::string::npos);
  }
}

TEST_CASE("the second implementation rejects reverify envelopes that were tampered with") {
  TempDir dir;
  auto key = Ed25519SigningKey::generate();
  write_file(dir.path / "reverify.pub", key.public_key().pem());
  write_file(dir.path / "other.pub", Ed25519SigningKey::generate().public_key().pem());
  write_file(dir.path / "envelope.json", sign_summary(sample_summary(), key).envelope_json);
  for (const char* kind : {"payload", "subject", "truncate"}) {
    CAPTURE(kind);
    REQUIRE(python({"tamper", kind, (dir.path / "envelope.json").string(),
                    (dir.path / "bad.json").string()},
                   dir.path)
                .exit_code == 0);
    Ran ran =
        python({"verify", (dir.path / "bad.json").string(), (dir.path / "reverify.pub").string()},
               dir.path);
    CHECK(ran.exit_code == 2);
  }
  Ran wrong =
      python({"verify", (dir.path / "envelope.json").string(), (dir.path / "other.pub").string()},
             dir.path);
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.err.find("no signature verifies") != std::string::npos);
}
