#include <doctest/doctest.h>

#include "attest/summary.hpp"
#include "core/version.hpp"
#include "tests/attest/attest_test_support.hpp"

using namespace reverify;
using namespace reverify::test;
using nlohmann::json;

namespace {

json statement_of(const VerificationSummary& s) {
  return json::parse(statement_payload(s));
}

std::string parse_error(const json& statement) {
  auto parsed = parse_statement(statement.dump());
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().code == ErrorCode::parse);
  return parsed.error().message;
}

}  // namespace

TEST_CASE("a passed verdict becomes a VSA with every field the specs require") {
  const json j = statement_of(sample_summary());
  CHECK(j["_type"] == "https://in-toto.io/Statement/v1");
  CHECK(j["predicateType"] == "https://slsa.dev/verification_summary/v1");
  REQUIRE(j["subject"].size() == 2);
  CHECK(j["subject"][0] ==
        json{{"name", "model.safetensors"},
             {"digest", {{"sha256", kWeightsSha}, {kTensorDigestKey, kTensorSha}}}});
  CHECK(j["subject"][1] == json{{"name", "manifest.json"}, {"digest", {{"sha256", kManifestSha}}}});
  const json& p = j["predicate"];
  CHECK(p["verifier"]["id"] == "https://verifier.example/reverify");
  CHECK(p["verifier"]["version"]["reverify"] == reverify_version());
  CHECK(p["timeVerified"] == "2026-11-02T03:00:00Z");
  CHECK(p["resourceUri"] == "reverify:digits-mlp@2026.11.1");
  CHECK(p["policy"] == json{{"uri", "reverify:tolerance-policy/digits-mlp@2026.11.1"},
                            {"digest", {{"sha256", kPolicySha}}}});
  CHECK(p["verificationResult"] == "PASSED");
  CHECK(p["verifiedLevels"] == json{"REVERIFY_EQUIVALENT_V1"});
  CHECK(p["slsaVersion"] == "1.2");
  CHECK_FALSE(p.contains("dependencyLevels"));  // no claim about dependencies
  const json& ext = p["reverify:verification/v1"];
  CHECK(ext["model"] == "digits-mlp");
  CHECK(ext["version"] == "2026.11.1");
  CHECK(ext["verificationId"] == 7);
  CHECK(ext["verdict"] == "passed");
  CHECK(ext["level"] == "equivalent");
  CHECK(ext["mode"] == "full");
  CHECK_FALSE(ext.contains("maxSteps"));
  REQUIRE(ext["checks"].size() == 3);
}

TEST_CASE("per-check summary: observed, band, margin, and the power when the check has it") {
  const json checks = summarize_checks(sample_verdict());
  CHECK(checks[0] == json{{"check", "input:image"},
                          {"kind", "input"},
                          {"outcome", "passed"},
                          {"observed", nullptr},
                          {"reference", nullptr},
                          {"band", nullptr},
                          {"margin", nullptr}});
  CHECK(checks[1]["observed"] == 0.9609);
  CHECK(checks[1]["reference"] == 0.9611);
  CHECK(checks[1]["band"]["lower"].get<double>() == doctest::Approx(0.9571));
  CHECK(checks[1]["band"]["upper"].get<double>() == doctest::Approx(0.9651));
  CHECK(checks[1]["margin"] == 0.0038);
  CHECK(checks[1]["power"]["shift"] == 0.006);
  CHECK_FALSE(checks[1].contains("underpowered"));
  CHECK_FALSE(checks[1].contains("informational"));
  CHECK(checks[2]["band"] == json{{"lower", nullptr}, {"upper", 0.05}});

  // Flags the verdict engine puts on a check are carried through.
  auto verdict = sample_verdict();
  verdict.checks[2].power = CheckPower{0.2, 0.1, true, 40};
  verdict.checks[2].informational = true;
  const json flagged = summarize_checks(verdict);
  CHECK(flagged[2]["underpowered"] == true);
  CHECK(flagged[2]["informational"] == true);
}

TEST_CASE("result and levels: PASSED names the level and mode, FAILED says FAILED") {
  CHECK(summary_result_for(VerdictClass::passed) == SummaryResult::passed);
  for (auto cls : {VerdictClass::failed_input_drift, VerdictClass::failed_out_of_tolerance,
                   VerdictClass::failed_distribution_shift})
    CHECK(summary_result_for(cls) == SummaryResult::failed);
  for (auto cls :
       {VerdictClass::error_manifest_invalid, VerdictClass::error_provision,
        VerdictClass::error_job, VerdictClass::error_runner_lost, VerdictClass::uncalibrated}) {
    CHECK_FALSE(summary_result_for(cls));
    CHECK_FALSE(summary_for(sample_verdict(cls), sample_inputs(), sample_identity()));
  }
  // A pass that judged fewer deciding checks than its release defines is never signed PASSED.
  Verdict short_pass = sample_verdict(VerdictClass::passed);
  CHECK(summary_result_for(short_pass) == SummaryResult::passed);
  short_pass.coverage.defined = 35;
  short_pass.coverage.judged = 17;
  CHECK_FALSE(summary_result_for(short_pass));
  CHECK_FALSE(summary_for(short_pass, sample_inputs(), sample_identity()));
  short_pass.coverage.judged = 35;
  CHECK(summary_result_for(short_pass) == SummaryResult::passed);
  short_pass.coverage.not_computed = {"distribution:ks"};
  CHECK_FALSE(summary_result_for(short_pass));
  using L = ReproLevel;
  using M = SummaryMode;
  const auto passed = SummaryResult::passed;
  CHECK(verified_levels_for(passed, L::rerunnable, M::full) ==
        std::vector<std::string>{"REVERIFY_RERUNNABLE_V1"});
  CHECK(verified_levels_for(passed, L::equivalent, M::full) ==
        std::vector<std::string>{"REVERIFY_EQUIVALENT_V1"});
  CHECK(verified_levels_for(passed, L::bitwise, M::full) ==
        std::vector<std::string>{"REVERIFY_BITWISE_V1"});
  CHECK(verified_levels_for(passed, L::equivalent, M::steps) ==
        std::vector<std::string>{"REVERIFY_EQUIVALENT_STEPS_V1"});
  CHECK(verified_levels_for(passed, L::bitwise, M::subsample) ==
        std::vector<std::string>{"REVERIFY_BITWISE_SUBSAMPLE_V1"});
  CHECK(verified_levels_for(SummaryResult::failed, L::bitwise, M::full) ==
        std::vector<std::string>{"FAILED"});

  auto failed = statement_of(sample_summary(VerdictClass::failed_out_of_tolerance));
  CHECK(failed["predicate"]["verificationResult"] == "FAILED");
  CHECK(failed["predicate"]["verifiedLevels"] == json{"FAILED"});
  CHECK(failed["predicate"]["reverify:verification/v1"]["verdict"] == "failed:out-of-tolerance");

  auto inputs = sample_inputs();
  inputs.mode = SummaryMode::steps;
  inputs.max_steps = 200;
  auto steps = statement_of(*summary_for(sample_verdict(), inputs, sample_identity()));
  CHECK(steps["predicate"]["reverify:verification/v1"]["mode"] == "steps");
  CHECK(steps["predicate"]["reverify:verification/v1"]["maxSteps"] == 200);
  CHECK(steps["predicate"]["verifiedLevels"] == json{"REVERIFY_EQUIVALENT_STEPS_V1"});
}

TEST_CASE("the resource URI template names a registry URL when configured") {
  CHECK(resource_uri_for("https://models.example/{model}/{version}/", "m", "1.0") ==
        "https://models.example/m/1.0/");
  CHECK(resource_uri_for("reverify:{model}@{version}", "m", "1.0") == "reverify:m@1.0");
}

TEST_CASE("a statement reads back to the same summary") {
  for (auto cls : {VerdictClass::passed, VerdictClass::failed_input_drift}) {
    const auto summary = sample_summary(cls);
    auto parsed = parse_statement(statement_payload(summary));
    REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
    CHECK(*parsed == summary);
  }
}

TEST_CASE("statements that are not reverify's kind of VSA are refused, naming the field") {
  const json good = statement_of(sample_summary());
  auto with = [&](auto change) {
    json j = good;
    change(j);
    return parse_error(j);
  };
  CHECK(with([](json& j) {
          j["predicateType"] = "https://slsa.dev/provenance/v1";
        }).find("predicateType: is \"https://slsa.dev/provenance/v1\"; expected") !=
        std::string::npos);
  CHECK(with([](json& j) { j["_type"] = "https://in-toto.io/Statement/v0.1"; }).find("_type: is") !=
        std::string::npos);
  CHECK(with([](json& j) { j.erase("subject"); }).find("subject: required") != std::string::npos);
  CHECK(with([](json& j) { j["subject"] = json::array(); }).find("non-empty array") !=
        std::string::npos);
  CHECK(with([](json& j) {
          j["subject"][1].erase("digest");
        }).find("subject[1].digest: required") != std::string::npos);
  CHECK(with([](json& j) {
          j["subject"][0]["digest"]["sha256"] = "ABC";
        }).find("subject[0].digest.sha256: must be 64 lowercase hex") != std::string::npos);
  CHECK(with([](json& j) {
          j["predicate"]["verifier"].erase("id");
        }).find("predicate.verifier.id: required") != std::string::npos);
  CHECK(with([](json& j) {
          j["predicate"].erase("resourceUri");
        }).find("predicate.resourceUri: required") != std::string::npos);
  CHECK(with([](json& j) {
          j["predicate"]["policy"].erase("uri");
        }).find("predicate.policy.uri: required") != std::string::npos);
  CHECK(with([](json& j) {
          j["predicate"]["verificationResult"] = "OK";
        }).find("must be \"PASSED\" or \"FAILED\"") != std::string::npos);
  CHECK(with([](json& j) {
          j["predicate"].erase("verifiedLevels");
        }).find("predicate.verifiedLevels: required") != std::string::npos);
  CHECK(with([](json& j) {
          j["predicate"]["timeVerified"] = "2026-11-02T05:00:00+02:00";
        }).find("in UTC (\"Z\")") != std::string::npos);
  CHECK(with([](json& j) {
          j["predicate"]["reverify:verification/v1"]["mode"] = "half";
        }).find("mode: must be") != std::string::npos);
  // Duplicate keys make a statement mean two things.
  std::string text = good.dump();
  text.insert(1, R"("predicateType":"https://slsa.dev/verification_summary/v1",)");
  auto duplicate = parse_statement(text);
  REQUIRE_FALSE(duplicate.ok());
  CHECK(duplicate.error().message.find("duplicate") != std::string::npos);
}

TEST_CASE("optional and unknown fields: a minimal VSA from another producer reads") {
  json minimal = {{"_type", "https://in-toto.io/Statement/v1"},
                  {"subject", {{{"digest", {{"sha256", kWeightsSha}}}}}},
                  {"predicateType", "https://slsa.dev/verification_summary/v1"},
                  {"predicate",
                   {{"verifier", {{"id", "https://other.example"}}},
                    {"resourceUri", "pkg:generic/x@1"},
                    {"policy", {{"uri", "https://other.example/policy"}}},
                    {"verificationResult", "PASSED"},
                    {"verifiedLevels", {"SLSA_BUILD_LEVEL_3"}},
                    {"dependencyLevels", {{"SLSA_BUILD_LEVEL_3", 2}}},
                    {"https://other.example/ext", {{"anything", true}}}}},
                  {"unknownTopLevel", 1}};
  auto parsed = parse_statement(minimal.dump());
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  CHECK_FALSE(parsed->time_verified);
  CHECK_FALSE(parsed->details);
  CHECK(parsed->subjects[0].name.empty());
}
