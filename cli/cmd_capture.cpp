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

#include <cstdlib>
#include <iostream>
#include <memory>
#include <system_error>

#include "cli/capture_args.hpp"
#include "cli/capture_context.hpp"
#include "cli/capture_facts.hpp"
#include "cli/capture_release.hpp"
#include "cli/capture_tolerance.hpp"
#include "cli/command.hpp"
#include "core/file_write.hpp"
#include "core/hashing.hpp"
#include "core/manifest_json.hpp"
#include "core/manifest_parse.hpp"
#include "policies/calibration.hpp"
#include "verify/pipeline.hpp"

namespace reverify::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* kCaptureName = "capture";
// Step values the manifest keeps: steps mode compares the first N, and N is rarely more. A job
// that reports more is recorded up to here, and capture says so.
constexpr std::size_t kMaxRecordedSteps = 10'000;

// Every error of a manifest that fails validation, one line each; 2, the input error status.
int invalid_manifest(const ManifestParse& check) {
  for (const auto& error : check.errors)
    std::cerr << "reverify capture: " << error.to_string() << "\n";
  return 2;
}

// The job's result.json: --result, else $REVERIFY_OUT/result.json.
Result<fs::path> result_path_of(const CaptureArguments& args) {
  if (args.result)
    return fs::path(*args.result);
  const char* out = std::getenv("REVERIFY_OUT");
  if (!out)
    return make_error(ErrorCode::invalid_argument, "--result or $REVERIFY_OUT is required");
  return fs::path(out) / "result.json";
}

// The job's reported evaluation into the manifest; the direction is the job's when it states
// one, and --lower-is-better says the same or is wrong.
Status record_evaluation(Manifest& m, const JobOutputs& outputs, const CaptureArguments& args,
                         const fs::path& result_path) {
  const bool higher_is_better = outputs.primary_higher_is_better.value_or(!args.lower_is_better);
  if (args.lower_is_better && higher_is_better) {
    return make_error(ErrorCode::invalid_argument,
                      "--lower-is-better contradicts " + result_path.string() +
                          ": primary.higher_is_better is true for \"" + outputs.primary_name +
                          "\" (drop the flag, or fix the job)");
  }
  m.evaluation.primary = PrimaryMetric{outputs.primary_name, outputs.primary_value,
                                       higher_is_better, outputs.primary_examples};
  m.evaluation.segments = outputs.segments;
  m.evaluation.segment_examples = outputs.segment_examples;
  if (outputs.steps_metric) {
    std::vector<double> values = outputs.steps_values;
    if (values.size() > kMaxRecordedSteps) {
      values.resize(kMaxRecordedSteps);
      std::cout << "  steps: the job reported " << outputs.steps_values.size()
                << " step values; the first " << kMaxRecordedSteps << " are recorded\n";
    }
    m.evaluation.steps = StepValues{*outputs.steps_metric, std::move(values)};
  }
  return Status::success();
}

// The job's predictions and weights, copied into the release folder and hashed.
Status release_outputs(Manifest& m, const JobOutputs& outputs, const fs::path& out_dir) {
  if (outputs.predictions) {
    auto ref = release_file(*outputs.predictions, out_dir);
    if (!ref.ok())
      return ref.error();
    m.evaluation.predictions = *ref;
  }
  if (outputs.weights) {
    auto tensors = hash_safetensors(*outputs.weights);
    if (!tensors.ok())
      return make_error(tensors.error().code,
                        outputs.weights->string() + ": " + tensors.error().message);
    auto ref = release_file(*outputs.weights, out_dir);
    if (!ref.ok())
      return ref.error();
    m.weights = Weights{ref->uri, "safetensors", tensors->root};
  }
  return Status::success();
}

// What a scoring step ends in: the spec tried (or none asked for), or the status to exit with.
struct ScoringStep {
  std::optional<ScoringTried> tried;
  int exit_status = 0;
};

// --task and the other scoring flags: evaluation.scoring, validated, then tried on the release's
// predictions.
ScoringStep capture_scoring(Manifest& m, const CaptureArguments& args, const JobOutputs& outputs,
                            const fs::path& out_dir, const fs::path& result_path) {
  if (!args.scoring.any())
    return {};
  if (!outputs.predictions)
    return {std::nullopt,
            usage_error(kCaptureName, "--task: scoring needs the job's predictions, and " +
                                          result_path.string() + " names none")};
  ReleaseNames names;
  for (const auto& released : {outputs.predictions, outputs.weights}) {
    if (released)
      (void)names.claim(*released, "");
  }
  auto spec = release_scoring_spec(args, out_dir, names);
  if (!spec.ok())
    return {std::nullopt, usage_error(kCaptureName, spec.error().message)};
  m.evaluation.scoring = std::move(spec).value();
  if (ManifestParse check = parse_manifest(to_json(m).dump()); !check.ok())
    return {std::nullopt, invalid_manifest(check)};
  // A metric scoring computes, reported under a name it does not take, would be left to the
  // job's own figures: refused with the name to report.
  if (const auto misspelled = misspelled_metrics(m.evaluation); !misspelled.empty()) {
    const auto& first = misspelled.front();
    return {
        std::nullopt,
        usage_error(kCaptureName,
                    result_path.string() + ": " + first.path + " reports \"" + first.name +
                        "\", a metric reverify's scoring computes, but not under that name (it "
                        "would be judged on the job's own figures): " +
                        first.use +
                        (misspelled.size() > 1 ? " (and " + std::to_string(misspelled.size() - 1) +
                                                     " more name(s) like it)"
                                               : ""))};
  }
  std::optional<FileRef> eval_set;
  if (args.eval && m.evaluation.set)
    eval_set = FileRef{fs::absolute(*args.eval).string(), m.evaluation.set->sha256};
  auto tried = try_scoring(*m.evaluation.scoring, (out_dir / "manifest.json").string(), eval_set,
                           *outputs.predictions);
  if (!tried.ok())
    return {std::nullopt, usage_error(kCaptureName, tried.error().message)};
  return {std::move(tried).value(), 0};
}

// --subsample-out and its companions: the subsample reference, or none.
Status record_subsample(Manifest& m, const CaptureArguments& args, const fs::path& out_dir,
                        const ScoringInputs* scoring) {
  if (args.subsample_out) {
    auto reference = capture_subsample(args, m, out_dir, scoring);
    if (!reference.ok())
      return reference.error();
    m.subsample = std::move(reference).value();
  } else if (args.subsample_fraction || args.subsample_salt || args.subsample_seed_runs) {
    return make_error(ErrorCode::invalid_argument,
                      "--subsample-fraction, --subsample-salt and --subsample-seed-runs "
                      "describe the subsample job of --subsample-out DIR, which is missing");
  }
  return Status::success();
}

// The release folder's files besides those already copied: the dataset's file manifest, the
// code diff and manifest.json.
Status write_release(const Captured& captured, const nlohmann::json& doc, const fs::path& out_dir) {
  if (captured.snapshot) {
    if (Status s = write_file(out_dir / kSnapshotFileManifestName, captured.snapshot->text());
        !s.ok())
      return s;
  }
  if (captured.diff) {
    if (Status s = write_file(out_dir / "code.diff", *captured.diff); !s.ok())
      return s;
  }
  return write_file(out_dir / "manifest.json", doc.dump(2) + "\n");
}

// ", N what" when n > 0.
std::string counted(std::size_t n, const std::string& what) {
  return n == 0 ? "" : ", " + std::to_string(n) + " " + what;
}

void print_captured(const Manifest& m, const fs::path& out_dir) {
  const ToleranceSpec none;
  const ToleranceSpec& t = m.tolerance ? *m.tolerance : none;
  std::cout << "captured " << m.id() << " -> " << (out_dir / "manifest.json").string()
            << " (commit " << m.code.commit.substr(0, 12) << (m.code.dirty ? ", dirty" : "") << ", "
            << m.evaluation.primary.name << " " << m.evaluation.primary.value
            << counted(t.seed_runs.empty() ? 0 : t.seed_runs.begin()->second.size(), "seed runs")
            << counted(t.steps_same_seed_runs.size(), "same-seed steps reruns")
            << counted(t.same_seed_scores.size(), "same-seed reruns' predictions scored") << ")\n";
  if (m.subsample) {
    std::cout << "  subsample reference: fraction " << m.subsample->fraction << ", "
              << m.evaluation.primary.name << " " << m.subsample->evaluation.primary.value << ", "
              << seed_run_count(*m.subsample->tolerance, m.evaluation.primary.name)
              << " seed runs\n";
  }
}

int run_capture(const CaptureArguments& args) {
  if (args.entrypoint.empty())
    return usage_error(kCaptureName, "the job's entrypoint is required after --");
  auto result_path = result_path_of(args);
  if (!result_path.ok())
    return usage_error(kCaptureName, result_path.error().message);
  Result<Captured> captured = capture_context(args);
  if (!captured.ok())
    return usage_error(kCaptureName, captured.error().message);
  Manifest& m = captured->manifest;
  auto outputs = read_job_outputs(result_path->parent_path());
  if (!outputs.ok())
    return usage_error(kCaptureName, result_path->string() + ": " + outputs.error().message);
  auto job_facts = merge_job_environment(outputs->result, *m.environment);
  if (!job_facts.ok())
    return usage_error(kCaptureName, job_facts.error().message);
  if (Status s = record_evaluation(m, *outputs, args, *result_path); !s.ok())
    return usage_error(kCaptureName, s.error().message);
  const fs::path out_dir = args.out;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (Status s = release_outputs(m, *outputs, out_dir); !s.ok())
    return usage_error(kCaptureName, s.error().message);
  ScoringStep scoring = capture_scoring(m, args, *outputs, out_dir, *result_path);
  if (scoring.exit_status != 0)
    return scoring.exit_status;
  const ScoringInputs* inputs = scoring.tried ? &scoring.tried->inputs : nullptr;
  auto tolerance = capture_tolerance(args, m, outputs->predictions, inputs);
  if (!tolerance.ok())
    return usage_error(kCaptureName, tolerance.error().message);
  if (!(*tolerance == ToleranceSpec{}))
    m.tolerance = *tolerance;
  if (Status s = record_subsample(m, args, out_dir, inputs); !s.ok())
    return usage_error(kCaptureName, s.error().message);
  // The emitted document must pass the same validation every reader applies.
  nlohmann::json doc = to_json(m);
  if (ManifestParse check = parse_manifest(doc.dump()); !check.ok())
    return invalid_manifest(check);
  if (Status s = write_release(*captured, doc, out_dir); !s.ok())
    return usage_error(kCaptureName, s.error().message);
  print_captured(m, out_dir);
  for (const auto& note : *job_facts)
    std::cout << "  " << note << "\n";
  if (scoring.tried)
    std::cout << "  " << scoring.tried->line << "\n";
  return 0;
}

Action define_capture(CLI::App& app) {
  auto args = std::make_shared<CaptureArguments>();
  define_capture_options(app, *args);
  return [args] { return run_capture(*args); };
}

const Registrar kCapture{
    {kCaptureName,
     "emit a training run's manifest (hashes, environment, metrics) from inside the job",
     define_capture}};

}  // namespace
}  // namespace reverify::cli
