// reverify capture: emits the manifest of a training run from inside the job (or the wrapper that
// ran it), so a manifest is never written by hand. It reads the job's outputs
// ($REVERIFY_OUT/result.json and the files it names), the code checkout (git), the machine and the
// interpreter, hashes the inputs and outputs itself, and writes into --out:
//   manifest.json, the predictions and weights files, snapshot.sha256 (the dataset's file
//   manifest, used later to name changed files) and code.diff when the tree was dirty.

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <system_error>

#include "cli/capture_facts.hpp"
#include "cli/command.hpp"
#include "core/hashing.hpp"
#include "core/manifest_json.hpp"
#include "core/manifest_parse.hpp"
#include "core/unix_time.hpp"
#include "runners/runner.hpp"
#include "verify/calibration.hpp"
#include "verify/pipeline.hpp"
#include "verify/preflight.hpp"

namespace reverify::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* kName = "capture";

std::optional<std::string> option_or_env(const Args& args, const std::string& name,
                                         const char* env) {
  if (auto value = args.option(name))
    return value;
  if (const char* value = std::getenv(env); value && *value)
    return std::string(value);
  return std::nullopt;
}

Result<nlohmann::json> read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in)
    return make_error(ErrorCode::io, path.string() + ": cannot open");
  auto doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded())
    return make_error(ErrorCode::parse, path.string() + ": not valid JSON");
  return doc;
}

Status write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out)
    return make_error(ErrorCode::io, path.string() + ": cannot write");
  return {};
}

std::string file_uri(const fs::path& path) {
  return "file://" + fs::absolute(path).lexically_normal().string();
}

// A captured file goes into the release folder under its own name.
Result<FileRef> release_file(const fs::path& source, const fs::path& out_dir) {
  std::error_code ec;
  fs::copy_file(source, out_dir / source.filename(), fs::copy_options::overwrite_existing, ec);
  if (ec)
    return make_error(ErrorCode::io, source.string() + ": cannot copy: " + ec.message());
  auto digest = sha256_file(source);
  if (!digest.ok())
    return digest.error();
  return FileRef{source.filename().string(), *digest};
}

// The seed-only reruns in DIR (one sub-folder per run, each a $REVERIFY_OUT) -> tolerance.
Result<ToleranceSpec> seed_run_tolerance(const fs::path& dir) {
  std::vector<fs::path> folders;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory())
      folders.push_back(entry.path());
  }
  if (ec)
    return make_error(ErrorCode::io, "--seed-runs " + dir.string() + ": " + ec.message());
  std::sort(folders.begin(), folders.end());
  std::vector<JobOutputs> runs;
  for (const auto& folder : folders) {
    auto outputs = read_job_outputs(folder);
    if (!outputs.ok())
      return make_error(outputs.error().code, folder.string() + ": " + outputs.error().message);
    runs.push_back(std::move(outputs).value());
  }
  return tolerance_from_outputs(runs);
}

struct Captured {
  Manifest manifest;
  std::optional<FileManifest> snapshot;
  std::optional<std::string> diff;
};

// Everything but the release files: code, environment, data, run.
Result<Captured> capture_context(const Args& args) {
  Captured c;
  Manifest& m = c.manifest;
  m.model = args.option("model").value_or("");
  m.version = args.option("version").value_or("");
  m.owner = args.option("owner").value_or("");
  auto level = parse_repro_level(args.option("level").value_or("equivalent"));
  if (!level)
    return make_error(ErrorCode::invalid_argument,
                      "--level: expected rerunnable, equivalent or bitwise");
  m.level = *level;

  fs::path code = args.option("code").value_or(".");
  auto git = read_git_facts(code);
  if (!git.ok())
    return git.error();
  m.code.commit = git->commit;
  m.code.dirty = git->dirty;
  m.code.repo = args.option("repo") ? args.option("repo") : git->remote;
  if (!m.code.repo)
    m.code.repo = fs::absolute(code).lexically_normal().string();
  if (git->diff) {
    m.code.diff_sha256 = sha256_hex(*git->diff);
    c.diff = git->diff;
  }

  Environment env;
  env.image = option_or_env(args, "image", "REVERIFY_IMAGE");
  if (auto lockfile = args.option("lockfile")) {
    auto digest = sha256_file(code / *lockfile);
    if (!digest.ok())
      return make_error(ErrorCode::io, "--lockfile: " + digest.error().message);
    env.lockfile = Lockfile{*lockfile, *digest};
  }
  std::string python = args.option("python").value_or("python3");
  if (auto version = python_version(python); version.ok())
    env.python = *version;
  if (auto framework = args.option("framework")) {
    auto version = module_version(python, *framework);
    if (!version.ok())
      return make_error(ErrorCode::invalid_argument,
                        "--framework " + *framework + ": " + version.error().message);
    env.framework = Framework{*framework, *version};
  }
  env.accelerator = read_accelerator();
  env.env = determinism_env();
  env.world_size = std::stoll(args.option("world-size").value_or("1"));
  m.environment = env;

  Data data;
  if (auto dir = option_or_env(args, "data", "REVERIFY_DATA")) {
    auto files = hash_directory(*dir);
    if (!files.ok())
      return make_error(files.error().code, "--data: " + files.error().message);
    data.snapshot = Snapshot{"files", args.option("data-uri").value_or(file_uri(*dir)), files->root,
                             std::nullopt};
    c.snapshot = std::move(files).value();
  }
  if (auto rule = args.option("split-rule"))
    data.split = Split{*rule, args.option("split-salt")};
  if (data.snapshot || data.split)
    m.data = data;
  if (auto eval = option_or_env(args, "eval", "REVERIFY_EVAL")) {
    auto digest = hash_input(*eval);
    if (!digest.ok())
      return make_error(digest.error().code, "--eval: " + digest.error().message);
    m.evaluation.set = FileRef{args.option("eval-uri").value_or(file_uri(*eval)), *digest};
  }
  if (auto config = option_or_env(args, "config", "REVERIFY_CONFIG")) {
    auto doc = read_json_file(*config);
    if (!doc.ok())
      return make_error(doc.error().code, "--config: " + doc.error().message);
    m.config = *doc;
  }
  if (auto seeds = option_or_env(args, "seeds", "REVERIFY_SEEDS")) {
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

  m.run.entrypoint = args.positionals();
  m.run.workdir = args.option("workdir");
  m.run.started_at = args.option("started-at").value_or(rfc3339(system_now()));
  if (auto duration = args.option("duration-s"))
    m.run.duration_s = std::stod(*duration);
  m.run.runner = args.option("ci-runner").value_or(host_name());
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"))
    m.run.source_date_epoch = std::stoll(epoch);
  return c;
}

int run_capture(Args& args) {
  for (const char* required : {"out", "model", "version", "owner"}) {
    if (!args.option(required))
      return usage_error(kName, std::string("--") + required + " is required");
  }
  if (args.positionals().empty())
    return usage_error(kName, "the job's entrypoint is required after --");
  auto result_path = args.option("result");
  if (!result_path) {
    const char* out = std::getenv("REVERIFY_OUT");
    if (!out)
      return usage_error(kName, "--result or $REVERIFY_OUT is required");
    result_path = (fs::path(out) / "result.json").string();
  }
  Result<Captured> captured = [&]() -> Result<Captured> {
    try {
      return capture_context(args);
    } catch (const std::invalid_argument&) {  // std::stoll / std::stod on a malformed number
      return make_error(ErrorCode::invalid_argument,
                        "--world-size, --duration-s and SOURCE_DATE_EPOCH must be numbers");
    }
  }();
  if (!captured.ok())
    return usage_error(kName, captured.error().message);
  Manifest& m = captured->manifest;

  auto outputs = read_job_outputs(fs::path(*result_path).parent_path());
  if (!outputs.ok())
    return usage_error(kName, *result_path + ": " + outputs.error().message);
  m.evaluation.primary =
      PrimaryMetric{outputs->primary_name, outputs->primary_value, !args.flag("lower-is-better")};
  m.evaluation.segments = outputs->segments;
  if (outputs->steps_metric)
    m.evaluation.steps = StepValues{*outputs->steps_metric, outputs->steps_values};

  fs::path out_dir = *args.option("out");
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
  if (auto dir = args.option("seed-runs")) {
    auto tolerance = seed_run_tolerance(*dir);
    if (!tolerance.ok())
      return usage_error(kName, tolerance.error().message);
    m.tolerance = *tolerance;
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
            << (m.tolerance ? ", " + std::to_string(m.tolerance->seed_runs.begin()->second.size()) +
                                  " seed runs"
                            : "")
            << ")\n";
  return 0;
}

const Registrar kCapture{
    {kName,
     "--out DIR --model M --version V --owner O [--level L] [--code DIR] "
     "[--repo URL] [--result FILE] [--data DIR --data-uri URI] [--eval PATH "
     "--eval-uri URI] [--config FILE] [--seeds FILE] [--split-rule R "
     "--split-salt S] [--lockfile PATH] [--python EXE] [--framework MODULE] "
     "[--image REF] [--world-size N] [--workdir DIR] [--started-at T] "
     "[--duration-s S] [--ci-runner NAME] [--seed-runs DIR] -- ENTRYPOINT...",
     "emit a training run's manifest (hashes, environment, metrics) from "
     "inside the job",
     {"out",        "model",      "version",    "owner",     "level",     "code",   "repo",
      "result",     "data",       "data-uri",   "eval",      "eval-uri",  "config", "seeds",
      "split-rule", "split-salt", "lockfile",   "python",    "framework", "image",  "world-size",
      "workdir",    "started-at", "duration-s", "ci-runner", "seed-runs"},
     {"lower-is-better"},
     run_capture}};

}  // namespace
}  // namespace reverify::cli
