#pragma once
// What a page needs from a verification outcome beyond the verdict: the inputs that moved, read
// from the preflight evidence (run_verification's evidence["inputs"]).

#include <vector>

#include "pager/page_builder.hpp"
#include "verify/pipeline.hpp"

namespace reverify {

// One entry per recorded input whose hash differs now (dataset with the files that changed,
// were added or removed; eval set; released predictions; lockfile). Empty when nothing moved.
std::vector<MovedInput> moved_inputs(const VerificationOutcome& outcome);

}  // namespace reverify
