#pragma once
// reverify capture: the release's tolerance (its seed-only reruns, its same-seed reruns, the
// owner's detect and floor choices) and the subsample reference with its own seed runs.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/capture_args.hpp"
#include "core/manifest.hpp"
#include "core/result.hpp"
#include "core/scoring_inputs.hpp"
#include "verify/calibration.hpp"

namespace reverify::cli {

// "KEY=NUMBER" options (--detect, --floor) -> a map, each split at its last '=' (a check's name
// may hold '='; core/keyed_number.hpp); the number must pass `valid`.
Result<std::map<std::string, double>> keyed_numbers(const std::vector<std::string>& items,
                                                    const std::string& option,
                                                    const std::string& expected,
                                                    bool (*valid)(double));

// --seed-runs, --same-seed-runs, --detect and --floor -> the manifest's tolerance (empty when
// none is given), against the release's predictions, scored with `scoring` when given.
Result<ToleranceSpec> capture_tolerance(const CaptureArguments& args, const Manifest& m,
                                        const std::optional<std::filesystem::path>& predictions,
                                        const ScoringInputs* scoring);

// --subsample-*: the subsample job's outputs (its $REVERIFY_OUT) and seed runs -> the manifest's
// subsample reference, its files under <out>/subsample/. The metric's direction is the release's.
Result<SubsampleReference> capture_subsample(const CaptureArguments& args, const Manifest& m,
                                             const std::filesystem::path& out_dir,
                                             const ScoringInputs* scoring);

}  // namespace reverify::cli
