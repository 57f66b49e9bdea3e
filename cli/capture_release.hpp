#pragma once
// reverify capture: the files a release folder holds (copied under their own names, recorded by
// sha256) and the scoring spec made from the flags and tried on the release's predictions.

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/capture_args.hpp"
#include "core/eval_columns.hpp"
#include "core/manifest.hpp"
#include "core/result.hpp"

namespace reverify::cli {

Result<nlohmann::json> read_json_file(const std::filesystem::path& path);

std::string file_uri(const std::filesystem::path& path);

// A captured file goes into the release folder (or its sub-folder `under`, relative) under its
// own name.
Result<FileRef> release_file(const std::filesystem::path& source,
                             const std::filesystem::path& out_dir,
                             const std::filesystem::path& under = {});

// The files copied into the release folder, by name: two different files never share one.
class ReleaseNames {
 public:
  Status claim(const std::filesystem::path& source, const std::string& option);

 private:
  std::map<std::string, std::filesystem::path> by_name_;
};

// evaluation.scoring from the flags; the manifest's validation judges the combination.
Result<ScoringSpec> scoring_spec(const CaptureArguments& args, const std::filesystem::path& out_dir,
                                 ReleaseNames& names);

// The spec tried on the release's own predictions: every per-record input read and checked,
// every metric scored. One line for the user, and the inputs (the seed runs are scored with them).
struct ScoringTried {
  std::string line;
  ScoringInputs inputs;
};
Result<ScoringTried> try_scoring(const Manifest& m, const CaptureArguments& args,
                                 const std::filesystem::path& out_dir,
                                 const std::filesystem::path& predictions_file);

}  // namespace reverify::cli
