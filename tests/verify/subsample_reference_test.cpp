// What a subsample rebuild is judged against: the release's inputs, the subsample model's numbers.

#include <doctest/doctest.h>

#include "tests/support/manifest_fixture.hpp"
#include "verify/subsample_reference.hpp"

namespace reverify::test {

TEST_CASE("a subsample request is judged on the subsample reference, with the release's inputs") {
  const Manifest release = manifest_fixture("valid_full.json");
  VerificationRequest request;
  request.manifest = release;
  request.mode = RebuildMode::subsample;
  request.calibration = ToleranceSpec{};
  request.calibration->seed_runs["accuracy"] = {0.96, 0.97, 0.95};
  REQUIRE(judge_against_mode_reference(request).ok());
  const Manifest& judged = request.manifest;
  CHECK(judged.evaluation.primary.value == doctest::Approx(0.9335));
  CHECK(judged.evaluation.segments == release.subsample->evaluation.segments);
  CHECK(judged.evaluation.predictions->uri == "subsample/predictions.npy");
  CHECK(judged.weights == release.subsample->weights);
  CHECK(judged.tolerance == release.subsample->tolerance);
  CHECK_FALSE(judged.evaluation.steps.has_value());
  // What preflight checks and the job gets is the release's.
  CHECK(judged.evaluation.set == release.evaluation.set);
  CHECK(judged.code == release.code);
  CHECK(judged.data == release.data);
  CHECK(judged.seeds == release.seeds);
  CHECK(judged.subsample == release.subsample);
  // The calibration is the one the caller loaded for the subsample reference
  // (CalibratedReference::subsample): kept for the subsample model's bands.
  REQUIRE(request.calibration.has_value());
  CHECK(request.calibration->seed_runs["accuracy"].size() == 3);
  CHECK(calibrated_reference(RebuildMode::subsample) == CalibratedReference::subsample);
  CHECK(calibrated_reference(RebuildMode::steps) == CalibratedReference::release);
}

TEST_CASE("other modes keep the release's numbers and the stored calibration") {
  for (RebuildMode mode : {RebuildMode::full, RebuildMode::steps}) {
    VerificationRequest request;
    request.manifest = manifest_fixture("valid_full.json");
    request.mode = mode;
    request.calibration = ToleranceSpec{};
    REQUIRE(judge_against_mode_reference(request).ok());
    CHECK(request.manifest == manifest_fixture("valid_full.json"));
    CHECK(request.calibration.has_value());
  }
}

TEST_CASE("a subsample rebuild of a version without a reference is refused, saying why") {
  Manifest release = manifest_fixture("valid_full.json");
  release.subsample.reset();
  VerificationRequest request;
  request.manifest = release;
  request.mode = RebuildMode::subsample;
  auto refused = judge_against_mode_reference(request);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == ErrorCode::not_found);
  CHECK(refused.error().message.find("digits-mlp@2026.11.1 records no subsample reference") == 0);
  CHECK(refused.error().message.find("--subsample-out") != std::string::npos);
  CHECK(request.manifest == release);
}

}  // namespace reverify::test
