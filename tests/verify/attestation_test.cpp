// A verdict's signed summary as the verification service builds it: the subjects' digests come
// from the released files' bytes, the policy digest from the policy document stored beside it,
// and only passed and failed:* verdicts get one.

#include <doctest/doctest.h>

#include <fstream>

#include "attest/summary_check.hpp"
#include "core/hashing.hpp"
#include "tests/support/temp_dir.hpp"
#include "verify/attestation.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

// A safetensors file with one F32 tensor of two elements.
std::string safetensors(float a, float b) {
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string out;
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out += header;
  out.append(reinterpret_cast<const char*>(&a), 4);
  out.append(reinterpret_cast<const char*>(&b), 4);
  return out;
}

struct Fixture {
  TempDir dir;
  VerificationRequest request;
  VerdictPolicy policy;
  AttestationConfig config;
  Ed25519SigningKey key = Ed25519SigningKey::generate();
  nlohmann::json evidence = nlohmann::json::object();

  Fixture() {
    dir.write("m/1/model.safetensors", safetensors(1.0f, 2.0f));
    request.manifest.model = "m";
    request.manifest.version = "1";
    request.manifest.level = ReproLevel::bitwise;
    request.manifest.weights = Weights{"model.safetensors", "safetensors", std::nullopt};
    request.manifest.tolerance = ToleranceSpec{};
    request.manifest.tolerance->seed_runs["accuracy"] = {0.95, 0.96, 0.97};
    request.manifest_location = (dir.path / "m/1/manifest.json").string();
    config.key = std::make_shared<const Ed25519SigningKey>(key);
    config.identity.verifier_id = "https://verifier.example/reverify";
  }

  std::optional<AttestationToRecord> attest(VerdictClass cls) {
    Verdict verdict;
    verdict.cls = cls;
    verdict.explanation = "why";
    return attest_verdict(
        verdict, AttestationRequest{request, 12, std::string(64, 'c'), policy, 1'800'000'000},
        config, evidence);
  }

  CheckedSummary check(const AttestationToRecord& record) {
    SummaryExpectations e;
    e.now = 1'800'000'000;
    e.model = ModelVersion{"m", "1"};
    auto checked = check_summary(record.envelope_json, {key.public_key()}, e);
    REQUIRE_MESSAGE(checked.ok(), checked.error().message);
    return std::move(checked).value();
  }
};

TEST_CASE("the summary names the released weights and manifest by the digests of their bytes") {
  Fixture f;
  auto record = f.attest(VerdictClass::passed);
  REQUIRE(record);
  CHECK(record->result == "PASSED");
  CHECK(record->key_id == f.key.key_id());
  const auto checked = f.check(*record);
  CHECK(checked.acceptable());
  const auto& s = checked.summary;
  REQUIRE(s.subjects.size() == 2);
  const fs::path weights = f.dir.path / "m/1/model.safetensors";
  CHECK(s.subjects[0].name == "model.safetensors");
  CHECK(s.subjects[0].digest.at("sha256") == *sha256_file(weights));
  CHECK(s.subjects[0].digest.at(kTensorDigestKey) == hash_safetensors(weights)->root);
  CHECK(s.subjects[1] ==
        ResourceDescriptor{"manifest.json", "", {{"sha256", std::string(64, 'c')}}});
  CHECK(s.verified_levels == std::vector<std::string>{"REVERIFY_BITWISE_V1"});
  CHECK(s.details->verification_id == 12);
  CHECK(*s.time_verified == 1'800'000'000);

  // The policy digest names the document stored beside the summary.
  CHECK(s.policy.digest.at("sha256") == sha256_hex(record->policy_json));
  const auto policy = nlohmann::json::parse(record->policy_json);
  CHECK(policy["schema"] == "reverify.tolerance-policy/v1");
  CHECK(policy["level"] == "bitwise");
  CHECK(policy["mode"] == "full");
  CHECK(policy["verdict"]["false_page_rate"] == 0.01);
  CHECK(policy["seed_spread"]["seed_runs"]["accuracy"].size() == 3);
  CHECK(f.evidence["attestation"]["subjects"] ==
        nlohmann::json{"model.safetensors", "manifest.json"});

  // Another calibration is another policy, hence another digest.
  f.request.calibration = ToleranceSpec{};
  f.request.calibration->seed_runs["accuracy"] = {0.9, 0.91, 0.92};
  auto recalibrated = f.attest(VerdictClass::passed);
  CHECK(recalibrated->policy_json != record->policy_json);
}

TEST_CASE("steps mode and failures say so; error:* and uncalibrated get no summary") {
  Fixture f;
  f.request.mode = RebuildMode::steps;
  f.request.max_steps = 50;
  auto steps = f.check(*f.attest(VerdictClass::passed)).summary;
  CHECK(steps.verified_levels == std::vector<std::string>{"REVERIFY_BITWISE_STEPS_V1"});
  CHECK(steps.details->max_steps == 50);
  CHECK(nlohmann::json::parse(f.attest(VerdictClass::passed)->policy_json)["max_steps"] == 50);

  auto failed = f.attest(VerdictClass::failed_input_drift);
  CHECK(failed->result == "FAILED");
  CHECK(f.check(*failed).summary.verified_levels == std::vector<std::string>{"FAILED"});

  for (auto cls :
       {VerdictClass::error_job, VerdictClass::error_provision, VerdictClass::error_runner_lost,
        VerdictClass::error_manifest_invalid, VerdictClass::uncalibrated}) {
    CHECK_FALSE(f.attest(cls));
  }
  f.config.key.reset();  // attestation off
  CHECK_FALSE(f.attest(VerdictClass::passed));
}

TEST_CASE("weights that cannot be read leave the manifest as the only subject, and say why") {
  Fixture f;
  fs::remove(f.dir.path / "m/1/model.safetensors");
  auto record = f.attest(VerdictClass::passed);
  REQUIRE(record);
  const auto s = f.check(*record).summary;
  REQUIRE(s.subjects.size() == 1);
  CHECK(s.subjects[0].name == "manifest.json");
  CHECK(f.evidence["attestation"]["notes"][0].get<std::string>().find(
            "the released weights model.safetensors are not a readable local file") == 0);

  f.request.manifest.weights.reset();
  REQUIRE(f.attest(VerdictClass::passed));
  CHECK(f.evidence["attestation"]["notes"][0].get<std::string>().find("names no weights") !=
        std::string::npos);
}

}  // namespace
}  // namespace reverify
