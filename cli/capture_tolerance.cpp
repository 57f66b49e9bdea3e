#include "cli/capture_tolerance.hpp"

#include <algorithm>
#include <iostream>
#include <system_error>

#include "cli/capture_release.hpp"
#include "cli/subsample_draw_read.hpp"
#include "core/hashing.hpp"
#include "core/keyed_number.hpp"
#include "policies/bands.hpp"
#include "verify/pipeline.hpp"

namespace reverify::cli {

namespace fs = std::filesystem;

namespace {

// The reruns in DIR (one sub-folder per run, each a $REVERIFY_OUT), at least kMinSeedRuns.
// Sub-folders named by whole numbers are seed overrides: taken in numeric order and recorded;
// others in name order.
struct Reruns {
  std::vector<JobOutputs> outputs;
  std::vector<std::int64_t> seeds;  // empty unless every folder is named by its seed
};

Result<Reruns> rerun_outputs(const fs::path& dir, const std::string& option) {
  std::vector<fs::path> folders;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory())
      folders.push_back(entry.path());
  }
  if (ec)
    return make_error(ErrorCode::io, "--" + option + " " + dir.string() + ": " + ec.message());
  // Fewer reruns make no band: the release would verify as uncalibrated.
  if (folders.size() < kMinSeedRuns) {
    return make_error(ErrorCode::invalid_argument,
                      "--" + option + " " + dir.string() + ": " + std::to_string(folders.size()) +
                          " rerun(s) found (one sub-folder each), at least " +
                          std::to_string(kMinSeedRuns) + " needed for a band");
  }
  auto seed_of = [](const fs::path& folder) -> std::optional<std::int64_t> {
    const std::string name = folder.filename().string();
    if (name.empty() || name.size() > 18 ||
        !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::stoll(name);
  };
  const bool numbered = std::all_of(folders.begin(), folders.end(),
                                    [&](const fs::path& f) { return seed_of(f).has_value(); });
  std::sort(folders.begin(), folders.end(), [&](const fs::path& a, const fs::path& b) {
    return numbered ? *seed_of(a) < *seed_of(b) : a < b;
  });
  Reruns runs;
  for (const auto& folder : folders) {
    auto outputs = read_job_outputs(folder);
    if (!outputs.ok())
      return make_error(outputs.error().code, folder.string() + ": " + outputs.error().message);
    runs.outputs.push_back(std::move(outputs).value());
    if (numbered)
      runs.seeds.push_back(*seed_of(folder));
  }
  return runs;
}

// The seed-only reruns in DIR -> their tolerance against the predictions of the model they
// rerun (`release_predictions`), scored with `scoring` when given. A seed override equal to a
// seed the release recorded may reproduce the release: never used; what is left out is printed.
Result<ToleranceSpec> seed_run_tolerance(const fs::path& dir, const std::string& option,
                                         const std::map<std::string, std::int64_t>& recorded,
                                         const std::optional<fs::path>& release_predictions,
                                         const ScoringInputs* scoring) {
  auto runs = rerun_outputs(dir, option);
  if (!runs.ok())
    return runs.error();
  std::vector<JobOutputs> usable;
  for (std::size_t i = 0; i < runs->outputs.size(); ++i) {
    const bool reused = !runs->seeds.empty() &&
                        std::any_of(recorded.begin(), recorded.end(), [&](const auto& seed) {
                          return seed.second == runs->seeds[i];
                        });
    if (reused) {
      std::cout << "  --" << option << " " << runs->outputs[i].out_dir.filename().string()
                << " left out of the bands: its seed override is a seed the release recorded\n";
    } else {
      usable.push_back(runs->outputs[i]);
    }
  }
  auto made = tolerance_from_outputs(usable, release_predictions, scoring);
  if (!made.ok())
    return made.error();
  for (const auto& [index, why] : made->left_out) {
    std::cout << "  --" << option << " " << usable[index].out_dir.filename().string()
              << " left out of the bands: " << why << "\n";
  }
  ToleranceSpec spec = std::move(made->spec);
  spec.seed_overrides = runs->seeds;  // every seed used, those left out too
  return spec;
}

}  // namespace

Result<std::map<std::string, double>> keyed_numbers(const std::vector<std::string>& items,
                                                    const std::string& option,
                                                    const std::string& expected,
                                                    bool (*valid)(double)) {
  std::map<std::string, double> out;
  for (const auto& item : items) {
    const auto keyed = parse_keyed_number(item);
    if (!keyed || !valid(keyed->value)) {
      return make_error(ErrorCode::invalid_argument,
                        "--" + option + " " + item + ": expected CHECK=" + expected +
                            ", split at the last '=' (e.g. accuracy=0.01, "
                            "segment:digit=8:accuracy=0.05)");
    }
    out[keyed->key] = keyed->value;
  }
  return out;
}

Result<ToleranceSpec> capture_tolerance(const CaptureArguments& args, const Manifest& m,
                                        const std::optional<fs::path>& predictions,
                                        const ScoringInputs* scoring) {
  ToleranceSpec tolerance;
  if (auto dir = args.seed_runs) {
    auto made = seed_run_tolerance(*dir, "seed-runs", m.seeds, predictions, scoring);
    if (!made.ok())
      return made.error();
    tolerance = std::move(made).value();
  }
  if (auto dir = args.same_seed_runs) {
    auto runs = rerun_outputs(*dir, "same-seed-runs");
    if (!runs.ok())
      return runs.error();
    auto same_seed = same_seed_from_outputs(runs->outputs, scoring);
    if (!same_seed.ok())
      return make_error(ErrorCode::invalid_argument,
                        "--same-seed-runs: " + same_seed.error().message);
    const std::size_t steps = same_seed->steps_same_seed_runs.size();
    if (steps != 0 && steps != runs->outputs.size())
      return make_error(ErrorCode::invalid_argument,
                        "--same-seed-runs: every rerun must report steps.values, or none");
    if (steps == 0 && same_seed->same_seed_scores.empty()) {
      return make_error(ErrorCode::invalid_argument,
                        "--same-seed-runs: the reruns report neither steps.values nor "
                        "predictions: nothing to compare a rebuild with");
    }
    tolerance.steps_same_seed_runs = std::move(same_seed->steps_same_seed_runs);
    tolerance.same_seed_scores = std::move(same_seed->same_seed_scores);
  }
  auto detect = keyed_numbers(args.detect, "detect", "SHIFT (> 0, the metric's units)",
                              [](double v) { return v > 0; });
  auto floor = keyed_numbers(args.floor, "floor", "VALUE (>= 0, the metric's units)",
                             [](double v) { return v >= 0; });
  if (!detect.ok())
    return detect.error();
  if (!floor.ok())
    return floor.error();
  tolerance.detect = std::move(detect).value();
  tolerance.floor = std::move(floor).value();
  return tolerance;
}

Result<SubsampleReference> capture_subsample(const CaptureArguments& args, const Manifest& m,
                                             const fs::path& out_dir,
                                             const ScoringInputs* scoring) {
  const fs::path dir = *args.subsample_out;
  if (!args.subsample_fraction || !args.subsample_salt || !args.subsample_seed_runs) {
    return make_error(ErrorCode::invalid_argument,
                      "--subsample-out needs --subsample-fraction, --subsample-salt (the values "
                      "the subsample job ran with) and --subsample-seed-runs (its bands)");
  }
  auto outputs = read_job_outputs(dir);
  if (!outputs.ok())
    return make_error(outputs.error().code,
                      "--subsample-out " + dir.string() + ": " + outputs.error().message);
  if (outputs->primary_name != m.evaluation.primary.name) {
    return make_error(ErrorCode::invalid_argument,
                      "--subsample-out " + dir.string() + ": primary metric \"" +
                          outputs->primary_name + "\", the release's is \"" +
                          m.evaluation.primary.name + "\"");
  }
  if (!outputs->predictions)
    return make_error(ErrorCode::invalid_argument,
                      "--subsample-out " + dir.string() + ": result.json names no predictions");
  SubsampleReference s;
  s.fraction = *args.subsample_fraction;
  s.salt = *args.subsample_salt;
  s.key = args.subsample_key ? args.subsample_key : outputs->subsample_key;
  s.duration_s = args.subsample_duration_s;
  auto drawn = checked_draw(*outputs, s.fraction, s.salt, "--subsample-out " + dir.string());
  if (!drawn.ok())
    return drawn.error();
  s.drawn = *drawn;
  if (s.drawn) {
    if (auto same = same_draw_in_runs(*args.subsample_seed_runs, *s.drawn, "--subsample-seed-runs");
        !same.ok())
      return same.error();
  }
  s.evaluation.primary =
      PrimaryMetric{outputs->primary_name, outputs->primary_value,
                    m.evaluation.primary.higher_is_better, outputs->primary_examples};
  s.evaluation.segments = outputs->segments;
  s.evaluation.segment_examples = outputs->segment_examples;
  auto predictions = release_file(*outputs->predictions, out_dir, "subsample");
  if (!predictions.ok())
    return predictions.error();
  s.evaluation.predictions = *predictions;
  if (outputs->weights) {
    auto tensors = hash_safetensors(*outputs->weights);
    if (!tensors.ok())
      return make_error(tensors.error().code,
                        outputs->weights->string() + ": " + tensors.error().message);
    auto ref = release_file(*outputs->weights, out_dir, "subsample");
    if (!ref.ok())
      return ref.error();
    s.weights = Weights{ref->uri, "safetensors", tensors->root};
  }
  auto tolerance = seed_run_tolerance(*args.subsample_seed_runs, "subsample-seed-runs", m.seeds,
                                      outputs->predictions, scoring);
  if (!tolerance.ok())
    return tolerance.error();
  s.tolerance = std::move(tolerance).value();
  if (m.tolerance) {  // the owner's declared detect and floors apply to both models
    s.tolerance->detect = m.tolerance->detect;
    s.tolerance->floor = m.tolerance->floor;
  }
  return s;
}

}  // namespace reverify::cli
