#pragma once
// Reading and checking the draw a subsample job reports (runners' JobOutputs::subsample and its
// keys file) against the subsample rule, for `reverify capture`: a release records only a draw
// made by the rule, and every subsample seed run must have drawn the same records.

#include <filesystem>
#include <optional>
#include <string>

#include "core/manifest.hpp"
#include "core/result.hpp"
#include "runners/runner.hpp"

namespace reverify::cli {

// The draw `outputs` reports, checked: its keys file against its keys_sha256, every key against
// the rule with `fraction` and `salt`. nullopt when it reports none (a job without the report:
// its subsample rebuilds cannot check their draw); an invalid_argument error naming `what` and
// the first key the rule leaves out otherwise.
Result<std::optional<SubsampleDrawn>> checked_draw(const JobOutputs& outputs, double fraction,
                                                   const std::string& salt,
                                                   const std::string& what);

// Every run folder under `runs_dir` (seed runs of the subsample job) drew `drawn`'s records;
// else an invalid_argument error naming the run: a draw that follows the seed is a shuffle.
Status same_draw_in_runs(const std::filesystem::path& runs_dir, const SubsampleDrawn& drawn,
                         const std::string& option);

}  // namespace reverify::cli
