#pragma once
// What a subsample rebuild is judged against (docs/job-guide.md "Subsample mode"): the release's
// manifest with its `subsample` reference in place of the full model's numbers. Every reader of a
// verification request (preflight, the runner, the verdict, the attestation) then works on it
// unchanged: the inputs checked and given to the job are the release's, the metrics, predictions,
// weights and bands are the subsample model's.

#include "core/result.hpp"
#include "verify/pipeline.hpp"

namespace reverify {

// The command that records a subsample reference: `reverify capture` at release, with the
// subsample job's outputs and seed runs (docs/job-guide.md "Subsample mode").
inline constexpr const char* kRecordSubsampleReference =
    "reverify capture --subsample-out DIR --subsample-seed-runs DIR --subsample-fraction F "
    "--subsample-salt S";

// The manifest as a subsample rebuild is judged: evaluation's primary, segments, segment_examples
// and predictions, the weights and the tolerance come from manifest.subsample; the eval set and
// its scoring spec stay; the steps are not compared. An error (ErrorCode::not_found) naming the
// version and the missing field when the manifest records no subsample reference.
Result<Manifest> subsample_judged_manifest(const Manifest& release);

// A request in subsample mode made to judge against the subsample reference: its manifest
// replaced as above. Its calibration must be the subsample reference's (the store's calibration of
// CalibratedReference::subsample: full-mode seed runs say nothing about the subsample model);
// both callers load the one of the request's mode. Other modes: unchanged.
Status judge_against_mode_reference(VerificationRequest& request);

}  // namespace reverify
