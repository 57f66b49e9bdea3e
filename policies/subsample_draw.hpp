#pragma once
// The input:subsample-draw check of a subsample rebuild (docs/design.md, "The subsample rule"):
// did the job train on the records the release's subsample job trained on, drawn by the rule?
// Pure: the reference, the rebuild's report and its keys file's text in, a check out.
// - The rebuild reports no draw (result.json "subsample"): failed when the release recorded one
//   (subsample.drawn), else not judged (a release from before the job kit).
// - Its keys file must hash to its keys_sha256 and hold only keys the rule keeps (core/
//   subsample_rule.hpp check_keys_file): else failed, the job's draw is not the rule's.
// - Its records and keys_sha256 must equal the release's: else failed, it trained on other records
//   (its rule, its key or its data reading changed).
// A failed check blames the job's draw, not the model: the verdict is failed:input-drift and no
// metric is judged (verdict_for_subsample_draw).

#include <optional>
#include <string>

#include "core/manifest.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

CheckResult subsample_draw_check(const SubsampleReference& reference,
                                 const std::optional<SubsampleDrawn>& reported,
                                 const std::optional<std::string>& keys_file);

// The verdict of a subsample rebuild whose draw check failed: failed:input-drift, the check
// first, the explanation saying the metrics were not judged.
Verdict verdict_for_subsample_draw(CheckResult failed_check);

}  // namespace reverify
