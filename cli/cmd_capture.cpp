// reverify capture: emits the manifest of a training run from inside the job (or the wrapper that
// ran it), so a manifest is never written by hand. It reads the job's outputs
// ($REVERIFY_OUT/result.json and the files it names), the code checkout (git), the machine and the
// interpreter, hashes the inputs and outputs itself, and writes into --out:
//   manifest.json, the predictions and weights files, snapshot.sha256 (the dataset's file
//   manifest, used later to name changed files) and code.diff when the tree was dirty.
// The scoring flags (--task, --labels, ...) record evaluation.scoring; the per-record files they
// name (labels, segment keys, query ids) are copied into --out and hashed there, like the
// predictions, and the spec is tried on the release's predictions before anything is written.
// The --subsample-* flags record the subsample reference (manifest field `subsample`): the
// subsample job's metrics, its predictions and weights (copied into --out/subsample/) and the
// tolerance from its own seed runs.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <system_error>

#include "cli/capture_facts.hpp"
#include "cli/command.hpp"
#include "cli/scoring_flags.hpp"
#include "cli/subsample_draw_read.hpp"
#include "core/eval_columns.hpp"
#include "core/file_write.hpp"
#include "core/hashing.hpp"
#include "core/manifest_json.hpp"
#include "core/manifest_parse.hpp"
#include "core/names.hpp"
#include "core/predictions.hpp"
#include "core/unix_time.hpp"
#include "policies/bands.hpp"
#include "policies/scoring.hpp"
#include "runners/runner.hpp"
#include "verify/calibration.hpp"
#include "verify/pipeline.hpp"
#include "verify/preflight.hpp"

namespace reverify::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* kName = "capture";
// Step values the manifest keeps: steps mode compares the first N, and N is rarely more. A job
// that reports more is recorded up to here, and capture says so.
constexpr std::size_t kMaxRecordedSteps = 10'000;

struct CaptureArguments {
  std::string out, model, version, owner;
  std::optional<std::string> result;
  std::string level = "equivalent";
  std::string code = ".";
  std::optional<std::string> repo, data, data_uri, eval, eval_uri, config, seeds, split_rule,
      split_salt, lockfile, framework, image, workdir, started_at, ci_runner, seed_runs,
      same_seed_runs, subsample_out, subsample_seed_runs, subsample_salt, subsample_key;
  std::optional<double> subsample_fraction, subsample_duration_s;
  std::vector<std::string> detect, floor;  // CHECK=NUMBER
  std::string python = "python3";
  std::int64_t world_size = 1;
  std::optional<double> duration_s;
  bool lower_is_better = false;
  ScoringArguments scoring;
  std::vector<std::string> entrypoint;
};

Result<nlohmann::json> read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in)
    return make_error(ErrorCode::io, path.string() + ": cannot open");
  auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded())
    return make_error(ErrorCode::parse, path.string() + ": not valid JSON");
  return doc;
}

std::string file_uri(const fs::path& path) {
  return "file://" + fs::absolute(path).lexically_normal().string();
}

// A captured file goes into the release folder (or its sub-folder `under`, relative) under its
// own name.
Result<FileRef> release_file(const fs::path& source, const fs::path& out_dir,
                             const fs::path& under = {}) {
  std::error_code ec;
  fs::create_directories(out_dir / under, ec);
  fs::copy_file(source, out_dir / under / source.filename(), fs::copy_options::overwrite_existing,
                ec);
  if (ec)
    return make_error(ErrorCode::io, source.string() + ": cannot copy: " + ec.message());
  auto digest = sha256_file(source);
  if (!digest.ok())
    return digest.error();
  return FileRef{(under / source.filename()).generic_string(), *digest};
}

// The files copied into the release folder, by name: two different files never share one.
class ReleaseNames {
 public:
  Status claim(const fs::path& source, const std::string& option) {
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(source, ec);
    auto [it, fresh] = by_name_.emplace(source.filename().string(), real);
    if (!fresh && it->second != real)
      return make_error(ErrorCode::invalid_argument,
                        option + " " + source.string() + ": the release folder already holds " +
                            it->second.string() + " under the name " + it->first);
    return Status::success();
  }

 private:
  std::map<std::string, fs::path> by_name_;
};

// A scoring flag's column (cli/scoring_flags.hpp column_source): a file is copied into the release
// folder and recorded by name and sha256.
Result<RecordColumn> record_column(const std::string& text, const std::string& option,
                                   const CaptureArguments& args, const fs::path& out_dir,
                                   ReleaseNames& names) {
  auto source = column_source(text, option, args.eval);
  if (!source.ok())
    return source.error();
  if (!source->file)
    return RecordColumn{std::nullopt, std::nullopt, source->column};
  if (Status claimed = names.claim(*source->file, option); !claimed.ok())
    return claimed.error();
  auto ref = release_file(*source->file, out_dir);
  if (!ref.ok())
    return make_error(ref.error().code, option + " " + text + ": " + ref.error().message);
  return RecordColumn{ref->uri, ref->sha256, source->column};
}

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

// "KEY=NUMBER" options (--detect, --floor) -> a map; the number must pass `valid`.
Result<std::map<std::string, double>> keyed_numbers(const std::vector<std::string>& items,
                                                    const std::string& option,
                                                    const std::string& expected,
                                                    bool (*valid)(double)) {
  std::map<std::string, double> out;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    double value = 0;
    std::size_t used = 0;
    bool parsed = eq != std::string::npos && eq > 0;
    if (parsed) {
      try {
        value = std::stod(item.substr(eq + 1), &used);
      } catch (const std::exception&) {
        parsed = false;
      }
      parsed = parsed && used == item.size() - eq - 1 && std::isfinite(value) && valid(value);
    }
    if (!parsed) {
      return make_error(
          ErrorCode::invalid_argument,
          "--" + option + " " + item + ": expected CHECK=" + expected + " (e.g. accuracy=0.01)");
    }
    out[item.substr(0, eq)] = value;
  }
  return out;
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

// --subsample-*: the subsample job's outputs (its $REVERIFY_OUT) and seed runs -> the manifest's
// subsample reference, its files under <out>/subsample/. The metric's direction is the release's.
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

struct Captured {
  Manifest manifest;
  std::optional<FileManifest> snapshot;
  std::optional<std::string> diff;
};

// Everything but the release files: code, environment, data, run.
Result<Captured> capture_context(const CaptureArguments& args) {
  Captured c;
  Manifest& m = c.manifest;
  m.model = args.model;
  m.version = args.version;
  m.owner = args.owner;
  m.level = *enum_from_string<ReproLevel>(args.level);  // checked by one_of()

  fs::path code = args.code;
  auto git = read_git_facts(code);
  if (!git.ok())
    return git.error();
  m.code.commit = git->commit;
  m.code.dirty = git->dirty;
  m.code.repo = args.repo ? args.repo : git->remote;
  if (!m.code.repo)
    m.code.repo = fs::absolute(code).lexically_normal().string();
  if (git->diff) {
    m.code.diff_sha256 = sha256_hex(*git->diff);
    c.diff = git->diff;
  }

  Environment env;
  env.image = args.image;
  if (auto lockfile = args.lockfile) {
    auto digest = sha256_file(code / *lockfile);
    if (!digest.ok())
      return make_error(ErrorCode::io, "--lockfile: " + digest.error().message);
    env.lockfile = Lockfile{*lockfile, *digest};
  }
  const std::string& python = args.python;
  if (auto version = python_version(python); version.ok())
    env.python = *version;
  if (auto framework = args.framework) {
    auto version = module_version(python, *framework);
    if (!version.ok())
      return make_error(ErrorCode::invalid_argument,
                        "--framework " + *framework + ": " + version.error().message);
    env.framework = Framework{*framework, *version};
  }
  env.accelerator = read_accelerator();  // none on a machine without a GPU
  env.env = determinism_env();
  env.world_size = args.world_size;
  m.environment = env;

  Data data;
  if (auto dir = args.data) {
    auto files = hash_directory(*dir);
    if (!files.ok())
      return make_error(files.error().code, "--data: " + files.error().message);
    data.snapshot = Snapshot{SnapshotKind::files, args.data_uri.value_or(file_uri(*dir)),
                             files->root, std::nullopt};
    c.snapshot = std::move(files).value();
  }
  if (auto rule = args.split_rule)
    data.split = Split{*rule, args.split_salt};
  if (data.snapshot || data.split)
    m.data = data;
  if (auto eval = args.eval) {
    auto digest = hash_input(*eval);
    if (!digest.ok())
      return make_error(digest.error().code, "--eval: " + digest.error().message);
    m.evaluation.set = FileRef{args.eval_uri.value_or(file_uri(*eval)), *digest};
  }
  if (auto config = args.config) {
    auto doc = read_json_file(*config);
    if (!doc.ok())
      return make_error(doc.error().code, "--config: " + doc.error().message);
    m.config = *doc;
  }
  if (auto seeds = args.seeds) {
    auto doc = read_json_file(*seeds);
    if (!doc.ok())
      return make_error(doc.error().code, "--seeds: " + doc.error().message);
    for (const auto& [name, value] : doc->items()) {
      if (!value.is_number_integer())
        return make_error(ErrorCode::invalid_argument,
                          "--seeds: \"" + name + "\" must be an integer");
      m.seeds[name] = value.get<std::int64_t>();
    }
  }

  m.run.entrypoint = args.entrypoint;
  m.run.workdir = args.workdir;
  m.run.started_at = args.started_at.value_or(rfc3339(system_now()));
  if (args.duration_s)
    m.run.duration_s = *args.duration_s;
  m.run.runner = args.ci_runner.value_or(host_name());
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"))
    m.run.source_date_epoch = std::stoll(epoch);
  return c;
}

int run_capture(const CaptureArguments& args) {
  if (args.entrypoint.empty())
    return usage_error(kName, "the job's entrypoint is required after --");
  auto result_path = args.result;
  if (!result_path) {
    const char* out = std::getenv("REVERIFY_OUT");
    if (!out)
      return usage_error(kName, "--result or $REVERIFY_OUT is required");
    result_path = (fs::path(out) / "result.json").string();
  }
  Result<Captured> captured = [&]() -> Result<Captured> {
    try {
      return capture_context(args);
    } catch (const std::invalid_argument&) {  // std::stoll on a malformed SOURCE_DATE_EPOCH
      return make_error(ErrorCode::invalid_argument, "SOURCE_DATE_EPOCH must be an integer");
    }
  }();
  if (!captured.ok())
    return usage_error(kName, captured.error().message);
  Manifest& m = captured->manifest;

  auto outputs = read_job_outputs(fs::path(*result_path).parent_path());
  if (!outputs.ok())
    return usage_error(kName, *result_path + ": " + outputs.error().message);
  auto job_facts = merge_job_environment(outputs->result, *m.environment);
  if (!job_facts.ok())
    return usage_error(kName, job_facts.error().message);
  // The direction is the job's when it states one; --lower-is-better says the same or is wrong.
  const bool higher_is_better = outputs->primary_higher_is_better.value_or(!args.lower_is_better);
  if (args.lower_is_better && higher_is_better) {
    return usage_error(kName, "--lower-is-better contradicts " + *result_path +
                                  ": primary.higher_is_better is true for \"" +
                                  outputs->primary_name + "\" (drop the flag, or fix the job)");
  }
  m.evaluation.primary = PrimaryMetric{outputs->primary_name, outputs->primary_value,
                                       higher_is_better, outputs->primary_examples};
  m.evaluation.segments = outputs->segments;
  m.evaluation.segment_examples = outputs->segment_examples;
  if (outputs->steps_metric)
    m.evaluation.steps = StepValues{*outputs->steps_metric, outputs->steps_values};

  fs::path out_dir = args.out;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (outputs->predictions) {
    auto ref = release_file(*outputs->predictions, out_dir);
    if (!ref.ok())
      return usage_error(kName, ref.error().message);
    m.evaluation.predictions = *ref;
  }
  if (outputs->weights) {
    auto tensors = hash_safetensors(*outputs->weights);
    if (!tensors.ok())
      return usage_error(kName, outputs->weights->string() + ": " + tensors.error().message);
    auto ref = release_file(*outputs->weights, out_dir);
    if (!ref.ok())
      return usage_error(kName, ref.error().message);
    m.weights = Weights{ref->uri, "safetensors", tensors->root};
  }
  std::optional<ScoringTried> scoring;
  if (args.scoring.any()) {
    if (!outputs->predictions)
      return usage_error(kName, "--task: scoring needs the job's predictions, and " + *result_path +
                                    " names none");
    ReleaseNames names;
    for (const auto& released : {outputs->predictions, outputs->weights}) {
      if (released)
        (void)names.claim(*released, "");
    }
    auto spec = scoring_spec(args.scoring, [&](const std::string& text, const std::string& option) {
      return record_column(text, option, args, out_dir, names);
    });
    if (!spec.ok())
      return usage_error(kName, spec.error().message);
    m.evaluation.scoring = std::move(spec).value();
    if (ManifestParse check = parse_manifest(to_json(m).dump()); !check.ok()) {
      for (const auto& error : check.errors)
        std::cerr << "reverify capture: " << error.to_string() << "\n";
      return 2;
    }
    std::optional<FileRef> eval_set;
    if (args.eval && m.evaluation.set)
      eval_set = FileRef{fs::absolute(*args.eval).string(), m.evaluation.set->sha256};
    auto note = try_scoring(*m.evaluation.scoring, (out_dir / "manifest.json").string(), eval_set,
                            *outputs->predictions);
    if (!note.ok())
      return usage_error(kName, note.error().message);
    scoring = std::move(note).value();
  }
  if (auto steps = m.evaluation.steps; steps && steps->values.size() > kMaxRecordedSteps) {
    steps->values.resize(kMaxRecordedSteps);
    m.evaluation.steps = steps;
    std::cout << "  steps: the job reported " << outputs->steps_values.size()
              << " step values; the first " << kMaxRecordedSteps << " are recorded\n";
  }
  ToleranceSpec tolerance;
  if (auto dir = args.seed_runs) {
    auto made = seed_run_tolerance(*dir, "seed-runs", m.seeds, outputs->predictions,
                                   scoring ? &scoring->inputs : nullptr);
    if (!made.ok())
      return usage_error(kName, made.error().message);
    tolerance = std::move(made).value();
  }
  if (auto dir = args.same_seed_runs) {
    auto runs = rerun_outputs(*dir, "same-seed-runs");
    if (!runs.ok())
      return usage_error(kName, runs.error().message);
    auto same_seed = same_seed_from_outputs(runs->outputs, scoring ? &scoring->inputs : nullptr);
    if (!same_seed.ok())
      return usage_error(kName, "--same-seed-runs: " + same_seed.error().message);
    const std::size_t steps = same_seed->steps_same_seed_runs.size();
    if (steps != 0 && steps != runs->outputs.size())
      return usage_error(kName, "--same-seed-runs: every rerun must report steps.values, or none");
    if (steps == 0 && same_seed->same_seed_scores.empty()) {
      return usage_error(kName,
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
    return usage_error(kName, detect.error().message);
  if (!floor.ok())
    return usage_error(kName, floor.error().message);
  tolerance.detect = std::move(detect).value();
  tolerance.floor = std::move(floor).value();
  if (!(tolerance == ToleranceSpec{}))
    m.tolerance = tolerance;
  if (args.subsample_out) {
    auto reference = capture_subsample(args, m, out_dir, scoring ? &scoring->inputs : nullptr);
    if (!reference.ok())
      return usage_error(kName, reference.error().message);
    m.subsample = std::move(reference).value();
  } else if (args.subsample_fraction || args.subsample_salt || args.subsample_seed_runs) {
    return usage_error(kName,
                       "--subsample-fraction, --subsample-salt and --subsample-seed-runs "
                       "describe the subsample job of --subsample-out DIR, which is missing");
  }

  // The emitted document must pass the same validation every reader applies.
  nlohmann::json doc = to_json(m);
  ManifestParse check = parse_manifest(doc.dump());
  if (!check.ok()) {
    for (const auto& error : check.errors)
      std::cerr << "reverify capture: " << error.to_string() << "\n";
    return 2;
  }
  if (captured->snapshot) {
    if (Status s = write_file(out_dir / kSnapshotFileManifestName, captured->snapshot->text());
        !s.ok())
      return usage_error(kName, s.error().message);
  }
  if (captured->diff) {
    if (Status s = write_file(out_dir / "code.diff", *captured->diff); !s.ok())
      return usage_error(kName, s.error().message);
  }
  if (Status s = write_file(out_dir / "manifest.json", doc.dump(2) + "\n"); !s.ok())
    return usage_error(kName, s.error().message);
  std::cout << "captured " << m.id() << " -> " << (out_dir / "manifest.json").string()
            << " (commit " << m.code.commit.substr(0, 12) << (m.code.dirty ? ", dirty" : "") << ", "
            << m.evaluation.primary.name << " " << m.evaluation.primary.value
            << (m.tolerance && !m.tolerance->seed_runs.empty()
                    ? ", " + std::to_string(m.tolerance->seed_runs.begin()->second.size()) +
                          " seed runs"
                    : "")
            << (m.tolerance && !m.tolerance->steps_same_seed_runs.empty()
                    ? ", " + std::to_string(m.tolerance->steps_same_seed_runs.size()) +
                          " same-seed steps reruns"
                    : "")
            << (m.tolerance && !m.tolerance->same_seed_scores.empty()
                    ? ", " + std::to_string(m.tolerance->same_seed_scores.size()) +
                          " same-seed reruns' predictions scored"
                    : "")
            << ")\n";
  if (m.subsample) {
    std::cout << "  subsample reference: fraction " << m.subsample->fraction << ", "
              << m.evaluation.primary.name << " " << m.subsample->evaluation.primary.value << ", "
              << seed_run_count(*m.subsample->tolerance, m.evaluation.primary.name)
              << " seed runs\n";
  }
  for (const auto& note : *job_facts)
    std::cout << "  " << note << "\n";
  if (scoring)
    std::cout << "  " << scoring->line << "\n";
  return 0;
}

Action define_capture(CLI::App& app) {
  auto o = std::make_shared<CaptureArguments>();
  app.add_option("--out", o->out,
                 "release folder: manifest.json, the predictions and weights, snapshot.sha256 "
                 "and code.diff go here")
      ->type_name("DIR")
      ->required();
  app.add_option("--model", o->model, "model name ([A-Za-z0-9][A-Za-z0-9._-]{0,127})")
      ->type_name("M")
      ->required();
  app.add_option("--version", o->version, "version name, same characters as --model")
      ->type_name("V")
      ->required();
  app.add_option("--owner", o->owner, "the team paged when a rebuild fails")
      ->type_name("O")
      ->required();
  app.add_option("--level", o->level, "the reproducibility level the release promises")
      ->type_name("rerunnable|equivalent|bitwise")
      ->check(one_of(enum_choices<ReproLevel>()))
      ->capture_default_str();
  app.add_option("--code", o->code,
                 "the job's git checkout: commit, dirty flag and diff are read from it")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_option("--repo", o->repo,
                 "code.repo to record; without it: the checkout's origin remote, else its path")
      ->type_name("URL");
  app.add_option("--result", o->result,
                 "the job's result.json; without it: $REVERIFY_OUT/result.json")
      ->type_name("FILE");
  app.add_option("--data", o->data, "the training data folder, hashed into a file manifest")
      ->type_name("DIR")
      ->envname("REVERIFY_DATA");
  app.add_option("--data-uri", o->data_uri,
                 "data.snapshot.uri to record (relative to --out, or absolute); without it: "
                 "file:// of --data")
      ->type_name("URI");
  app.add_option("--eval", o->eval, "the eval set (file or folder), hashed")
      ->type_name("PATH")
      ->envname("REVERIFY_EVAL");
  app.add_option("--eval-uri", o->eval_uri,
                 "evaluation.set.uri to record; without it: file:// of --eval")
      ->type_name("URI");
  app.add_option("--config", o->config, "the job's resolved config, as JSON")
      ->type_name("FILE")
      ->envname("REVERIFY_CONFIG");
  app.add_option("--seeds", o->seeds, "the job's seeds, a JSON object of integers")
      ->type_name("FILE")
      ->envname("REVERIFY_SEEDS");
  app.add_option("--split-rule", o->split_rule,
                 "data.split.rule, e.g. \"sha256(id + salt) % 100 < 20\"")
      ->type_name("RULE");
  app.add_option("--split-salt", o->split_salt, "data.split.salt")->type_name("SALT");
  app.add_option("--lockfile", o->lockfile, "dependency lockfile, relative to --code; hashed")
      ->type_name("PATH");
  app.add_option("--python", o->python, "interpreter whose version (and --framework) is recorded")
      ->type_name("EXE")
      ->capture_default_str();
  app.add_option("--framework", o->framework,
                 "Python module whose version is recorded (torch, numpy, ...)")
      ->type_name("MODULE");
  app.add_option("--image", o->image, "the training image, by digest (name@sha256:<64 hex>)")
      ->type_name("REF")
      ->envname("REVERIFY_IMAGE");
  app.add_option("--world-size", o->world_size, "processes in the training job")
      ->type_name("N")
      ->check(integer_in(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--workdir", o->workdir, "run.workdir: the job's working folder in its image")
      ->type_name("DIR");
  app.add_option("--started-at", o->started_at,
                 "run.started_at, RFC 3339 (e.g. 2026-11-02T03:00:00Z); without it: now")
      ->type_name("TIME");
  app.add_option("--duration-s", o->duration_s, "run.duration_s: the job's wall time, in seconds")
      ->type_name("SECONDS")
      ->check(finite_number());
  app.add_option("--ci-runner", o->ci_runner,
                 "run.runner: the machine or CI runner; without it: "
                 "this host's name")
      ->type_name("NAME");
  app.add_option("--seed-runs", o->seed_runs,
                 "a folder of seed-only reruns: one sub-folder per rerun of this job with "
                 "REVERIFY_SEED_OVERRIDE set (every seed replaced, all else as released), holding "
                 "that rerun's $REVERIFY_OUT (result.json and the files it names); name the "
                 "sub-folders by their seed override (1, 2, ...) to record it. Their metrics, and "
                 "their predictions against the release's, become tolerance (at least " +
                     std::to_string(kMinSeedRuns) + "; about 20 for a tight primary band)")
      ->type_name("DIR");
  app.add_option("--same-seed-runs", o->same_seed_runs,
                 "a folder of reruns with the release's own seeds (REVERIFY_MODE=steps and "
                 "REVERIFY_MAX_STEPS=N are enough), one $REVERIFY_OUT per sub-folder: their step "
                 "curves become the steps-mode band (at least " +
                     std::to_string(kMinSeedRuns) + "; exact when they reproduce the release's)")
      ->type_name("DIR");
  app.add_option("--detect", o->detect,
                 "tolerance.detect: the shift of a check that must be caught with 80% "
                 "probability, in the metric's units: the primary metric by name "
                 "(accuracy=0.01), others by check name (segment:digit=8:accuracy=0.05, "
                 "distribution:psi=0.05, steps:loss=0.001); repeatable")
      ->type_name("CHECK=SHIFT");
  app.add_option("--floor", o->floor,
                 "tolerance.floor: the smallest band half-width (metrics) or bound (statistics) "
                 "for a metric or check, in its units (accuracy=0.002); repeatable")
      ->type_name("CHECK=VALUE");
  app.add_flag("--lower-is-better", o->lower_is_better,
               "the primary metric improves downwards (a loss, an error rate); without it, "
               "result.json's primary.higher_is_better decides (true when absent), and the flag "
               "is refused when result.json says true");
  app.add_option("--subsample-out", o->subsample_out,
                 "the subsample job's output folder (its $REVERIFY_OUT, run with REVERIFY_MODE="
                 "subsample): recorded as the manifest's subsample reference, which subsample "
                 "rebuilds are judged against (docs/job-guide.md \"Subsample mode\")")
      ->type_name("DIR");
  app.add_option("--subsample-seed-runs", o->subsample_seed_runs,
                 "the subsample job's seed-only reruns, one sub-folder each (named by the seed "
                 "override): the subsample reference's own bands. At least " +
                     std::to_string(kMinSeedRuns) +
                     "; 20 or more recommended, as many as --seed-runs: a model trained on a "
                     "fraction of the records spreads more from seed to seed than the full one, "
                     "and a band from n runs is a prediction interval whose width falls steeply "
                     "with n (one check at a false-page rate of 0.01: +-11.5 standard deviations "
                     "from 3 runs, 5.0 from 5, 3.4 from 10, 2.9 from 20, 2.7 from 40), so few runs "
                     "give bands that let real shifts through. Every run must draw the same "
                     "records as --subsample-out (the rule does not depend on the seed)")
      ->type_name("DIR");
  app.add_option("--subsample-fraction", o->subsample_fraction,
                 "REVERIFY_SUBSAMPLE_FRACTION the subsample job ran with, in (0, 1]")
      ->type_name("F")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            const double f = std::strtod(text.c_str(), &end);
            const bool ok = end != text.c_str() && *end == '\0' && f > 0 && f <= 1;
            return ok ? "" : "must be a number in (0, 1], got " + text;
          },
          ""));
  app.add_option("--subsample-salt", o->subsample_salt,
                 "REVERIFY_SUBSAMPLE_SALT the subsample job ran with")
      ->type_name("SALT");
  app.add_option("--subsample-key", o->subsample_key,
                 "what a training record's stable key is, in words (recorded as subsample.key)")
      ->type_name("TEXT");
  app.add_option("--subsample-duration-s", o->subsample_duration_s,
                 "the subsample job's wall time, in seconds")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber);
  add_scoring_flags(app, o->scoring);
  app.add_option("ENTRYPOINT", o->entrypoint, "the job's argv, after --, e.g. -- python3 train.py");
  return [o] { return run_capture(*o); };
}

const Registrar kCapture{
    {kName, "emit a training run's manifest (hashes, environment, metrics) from inside the job",
     define_capture}};

}  // namespace
}  // namespace reverify::cli
