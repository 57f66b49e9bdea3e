#include "verify/subsample_reference.hpp"

namespace reverify {

Result<Manifest> subsample_judged_manifest(const Manifest& release) {
  if (!release.subsample) {
    return make_error(ErrorCode::not_found,
                      release.id() +
                          " records no subsample reference (manifest field `subsample`), so a "
                          "subsample rebuild has nothing to be judged against: release it with `" +
                          kRecordSubsampleReference + "`, or run full or steps mode");
  }
  Manifest judged = release;
  const SubsampleReference& reference = *release.subsample;
  Evaluation evaluation = reference.evaluation;
  evaluation.set = release.evaluation.set;
  evaluation.scoring = release.evaluation.scoring;
  evaluation.steps.reset();
  judged.evaluation = std::move(evaluation);
  judged.weights = reference.weights;
  judged.tolerance = reference.tolerance;
  return judged;
}

Status judge_against_mode_reference(VerificationRequest& request) {
  if (request.mode != RebuildMode::subsample)
    return {};
  auto judged = subsample_judged_manifest(request.manifest);
  if (!judged.ok())
    return judged.error();
  request.manifest = std::move(judged).value();
  return {};
}

}  // namespace reverify
