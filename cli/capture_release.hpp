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

// evaluation.scoring from the flags (cli/scoring_flags.hpp), its files copied into the release
// folder and recorded by name and sha256.
Result<ScoringSpec> release_scoring_spec(const CaptureArguments& args,
                                         const std::filesystem::path& out_dir, ReleaseNames& names);

}  // namespace reverify::cli
