#include "cli/subsample_draw_read.hpp"

#include "core/subsample_rule.hpp"
#include "core/uri.hpp"

namespace reverify::cli {

namespace fs = std::filesystem;

Result<std::optional<SubsampleDrawn>> checked_draw(const JobOutputs& outputs, double fraction,
                                                   const std::string& salt,
                                                   const std::string& what) {
  if (!outputs.subsample || !outputs.subsample_keys)
    return std::optional<SubsampleDrawn>();
  auto f = subsample_fraction_of(fraction);
  if (!f.ok())
    return make_error(ErrorCode::invalid_argument, what + ": " + f.error().message);
  auto text = read_uri(outputs.subsample_keys->string());
  if (!text.ok())
    return make_error(ErrorCode::invalid_argument, what + ": " + text.error().message);
  auto checked = check_keys_file(*text, outputs.subsample->keys_sha256, salt, *f);
  if (!checked.ok())
    return make_error(ErrorCode::invalid_argument, what + ": " + checked.error().message);
  if (checked->outside > 0) {
    return make_error(ErrorCode::invalid_argument,
                      what + ": " + std::to_string(checked->outside) + " of the " +
                          std::to_string(checked->keys) +
                          " keys the subsample job trained on are not in the subsample by the "
                          "rule (\"" +
                          checked->first_outside + "\" is out at fraction " + f->text + ", salt " +
                          salt +
                          "): it was not drawn by the rule of docs/design.md "
                          "\"The subsample rule\"; `reverify check-job` shows how it was drawn");
  }
  return std::optional(*outputs.subsample);
}

Status same_draw_in_runs(const fs::path& runs_dir, const SubsampleDrawn& drawn,
                         const std::string& option) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(runs_dir, ec)) {
    if (!entry.is_directory())
      continue;
    auto outputs = read_job_outputs(entry.path());
    if (!outputs.ok())
      continue;  // reported where the seed runs are read for the bands
    if (!outputs->subsample || outputs->subsample->keys_sha256 != drawn.keys_sha256 ||
        outputs->subsample->records != drawn.records) {
      return make_error(
          ErrorCode::invalid_argument,
          option + " " + entry.path().string() +
              ": this seed run trained on other records than the subsample job (" +
              (outputs->subsample
                   ? std::to_string(outputs->subsample->records) + " records, keys sha256 " +
                         outputs->subsample->keys_sha256.substr(0, 12)
                   : std::string("no draw reported")) +
              " against " + std::to_string(drawn.records) + ", " + drawn.keys_sha256.substr(0, 12) +
              "): a subsample that follows the seed is drawn by a shuffle, not by "
              "the rule");
    }
  }
  return Status::success();
}

}  // namespace reverify::cli
