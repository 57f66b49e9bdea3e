#include "cli/check_job_runs.hpp"

#include <cctype>

#include "core/hashing.hpp"
#include "core/uri.hpp"
#include "runners/process_spawn.hpp"
#include "verify/pipeline_rebuild.hpp"

namespace reverify::cli {
namespace {

namespace fs = std::filesystem;

// What the record needs from validated outputs; an unreadable predictions or weights file is the
// run's error.
void read_outputs(const JobOutputs& outputs, JobRunRecord& record) {
  record.result = outputs.result;
  record.steps = outputs.steps_values;
  if (outputs.predictions) {
    auto predictions = read_predictions(*outputs.predictions);
    if (!predictions.ok()) {
      record.error = "its predictions cannot be read: " + predictions.error().message;
      return;
    }
    record.predictions = std::move(predictions).value();
  }
  if (outputs.weights) {
    auto hash = hash_safetensors(*outputs.weights);
    if (!hash.ok()) {
      record.error = "its weights are not a valid safetensors file: " + hash.error().message;
      return;
    }
    record.weights_hash = hash->root;
  }
  if (outputs.subsample_keys) {
    auto keys = read_uri(outputs.subsample_keys->string());
    if (keys.ok())
      record.keys_file = *keys;
  }
}

RebuildSpec spec_for(const CheckJobSetup& setup, const CheckJobRun& run,
                     const std::optional<std::vector<std::string>>& trace_prefix) {
  RebuildSpec spec;
  spec.rebuild_id = "check-job-" + run.name;  // a rebuild id is [A-Za-z0-9._-]+
  for (char& c : spec.rebuild_id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
      c = '-';
  }
  spec.manifest = setup.draft;
  spec.manifest_location = setup.manifest_location;
  spec.mode = run.mode;
  spec.max_steps = run.max_steps;
  spec.seed_override = run.seed_override;
  spec.data_path = setup.data;
  spec.eval_path = setup.eval;
  spec.work_dir = setup.work / "scratch" / spec.rebuild_id;
  spec.timeout = setup.timeout;
  for (const auto& [name, value] : run.seeds_changed)
    spec.manifest.seeds[name] = value;
  if (run.traced && trace_prefix) {
    auto& argv = spec.manifest.run.entrypoint;
    argv.insert(argv.begin(), trace_prefix->begin(), trace_prefix->end());
  }
  return spec;
}

}  // namespace

std::optional<std::vector<std::string>> strace_prefix(const fs::path& log,
                                                      const std::string& path) {
  if (!find_executable("strace", path, fs::current_path()).ok())
    return std::nullopt;
  return std::vector<std::string>{
      "strace", "-f",          "-qq", "-e",         "trace=%file,%network",
      "-e",     "signal=none", "-o",  log.string(), "--"};
}

JobRunRecord run_job_once(const CheckJobSetup& setup, const CheckJobRun& run, Runner& runner,
                          const std::optional<std::vector<std::string>>& trace_prefix,
                          const std::function<void(const std::string&)>& progress) {
  JobRunRecord record;
  record.name = run.name;
  const RebuildSpec spec = spec_for(setup, run, trace_prefix);
  progress(run.name);
  std::error_code ec;
  fs::remove_all(spec.work_dir, ec);
  // As a verification runs it (verify/pipeline_rebuild.hpp): its error verdict says why a run
  // failed, with the job's last log lines.
  const VerdictPolicy policy;
  PipelineDeps deps{runner, policy, {}, {}, {}};
  RebuildAttempt attempt = execute_rebuild(spec, deps, setup.work / "runs" / spec.rebuild_id);
  if (attempt.error)
    record.error = attempt.error->explanation;
  else
    read_outputs(*attempt.outputs, record);
  return record;
}

}  // namespace reverify::cli
