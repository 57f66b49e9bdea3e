#include "runners/slurm_batch.hpp"

#include "core/text.hpp"
#include "runners/job_contract.hpp"

namespace reverify {
namespace {

std::int64_t cpus_for(const RebuildSpec& spec, const SlurmPlacement& placement) {
  if (placement.cpus)
    return *placement.cpus;
  const auto& environment = spec.manifest.environment;
  if (environment && environment->threads && environment->threads->intra_op) {
    return *environment->threads->intra_op + environment->threads->dataloader_workers.value_or(0);
  }
  return 1;
}

// --time in whole minutes, rounded up (Slurm's smallest unit), at least one.
std::string time_limit(std::chrono::seconds timeout) {
  const auto minutes = std::max<std::int64_t>(1, (timeout.count() + 59) / 60);
  return std::to_string(minutes);
}

Result<SlurmGpuRequest> gpu_request(const RebuildSpec& spec, const SlurmConfig& config) {
  SlurmGpuRequest request;
  const auto& environment = spec.manifest.environment;
  if (!environment || !environment->accelerator || environment->accelerator->count <= 0)
    return request;
  request.count = environment->accelerator->count;
  const std::string& model = environment->accelerator->model;
  if (model.empty())
    return request;
  const auto mapped = config.gpu_models.find(model);
  if (mapped == config.gpu_models.end()) {
    return make_error(ErrorCode::provision,
                      "environment.accelerator.model \"" + model +
                          "\": runner.slurm.gpu_models has no entry for it (map it to the GRES "
                          "type or the node feature that names this GPU on the cluster)");
  }
  request.gres_type = mapped->second.gres_type;
  request.feature = mapped->second.feature;
  return request;
}

std::vector<std::string> sbatch_options(const RebuildSpec& spec, const SlurmConfig& config,
                                        const SlurmBatch& batch,
                                        const std::filesystem::path& node_dir) {
  std::vector<std::string> options = {
      "--parsable",
      // sbatch runs with PATH and SLURM_CONF only (slurm_cli.hpp), and the script sets the job's
      // whole environment itself; NONE would make the node build a login environment first.
      "--export=ALL",
      "--no-requeue",  // a rebuild runs once, from a clean folder: never rerun by Slurm
      "--job-name=" + slurm_job_name(config, spec.rebuild_id),
      "--comment=" + slurm_job_comment(spec.rebuild_id),
      "--output=" + (node_dir / "job.log").string(),
      "--chdir=" + node_dir.string(),
      "--nodes=1",
      "--ntasks=1",
      "--cpus-per-task=" + std::to_string(cpus_for(spec, batch.placement)),
      "--time=" + time_limit(batch.placement.time_limit.value_or(spec.timeout)),
  };
  const auto add = [&options](const char* option, const std::string& value) {
    if (!value.empty())
      options.push_back(std::string(option) + value);
  };
  add("--partition=", batch.placement.partition);
  add("--account=", batch.placement.account);
  add("--qos=", batch.placement.qos);
  add("--mem=", batch.placement.memory);
  if (batch.gpus.count > 0) {
    add("--constraint=", batch.gpus.feature);
    options.push_back(
        "--gres=gpu:" + (batch.gpus.gres_type.empty() ? "" : batch.gpus.gres_type + ":") +
        std::to_string(batch.gpus.count));
  }
  return options;
}

Result<std::string> job_script(const RebuildSpec& spec, const SlurmConfig& config,
                               const SlurmBatch& batch, const std::filesystem::path& node_dir) {
  const std::string dir = shell_word(node_dir.string());
  ContractPaths paths{(node_dir / "in" / "config.json").string(),
                      (node_dir / "in" / "seeds.json").string(), (node_dir / "out").string(),
                      spec.data_path ? config.node_path(*spec.data_path).string() : "",
                      spec.eval_path ? config.node_path(*spec.eval_path).string() : ""};
  auto env = contract_environment(spec, paths);
  env["PATH"] = config.path_env;
  std::string job_env;
  for (const auto& [name, value] : env) {
    if (name.empty() || name.find('=') != std::string::npos || name == "CUDA_VISIBLE_DEVICES") {
      return make_error(ErrorCode::manifest_invalid,
                        "environment.env: \"" + name +
                            "\" cannot be passed to the job (empty, holds '=', or names "
                            "CUDA_VISIBLE_DEVICES, which the allocation sets)");
    }
    job_env += " \\\n  " + shell_word(name + "=" + value);
  }
  const auto& argv = spec.manifest.run.entrypoint;
  std::string command;
  for (const auto& arg : argv)
    command += " " + shell_word(arg);
  const std::string expected = std::to_string(batch.gpus.count);
  std::string s;
  s += "#!/bin/sh\n";
  s += "# reverify: rebuild " + spec.rebuild_id + " of " + spec.manifest.model + "@" +
       spec.manifest.version + " (written by the slurm runner; see runners/slurm_batch.hpp)\n";
  s += "dir=" + dir + "\n";
  s += "set -f; IFS=,; set -- ${CUDA_VISIBLE_DEVICES-}; unset IFS; set +f\n";
  s += "devices=$#\n";
  s += "report() {\n";
  s += "  { echo \"node=$(uname -n)\"; echo \"devices=$devices\"; echo \"expected=" + expected +
       "\"\n";
  s += "    echo \"cuda_visible_devices=${CUDA_VISIBLE_DEVICES-}\"; [ -z \"$1\" ] || echo "
       "\"problem=$1\"; } >\"$dir/allocation.tmp\" && mv -f \"$dir/allocation.tmp\" "
       "\"$dir/allocation\"\n";
  s += "}\n";
  s += "if [ \"$devices\" -ne " + expected + " ]; then\n";
  s += "  report gpu_count\n";
  s += "  echo \"[reverify] the allocation hands the job $devices GPU device(s) "
       "(CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}) on $(uname -n); the rebuild asked "
       "for " +
       expected + ": the job is not started\" >&2\n";
  s += "  exit " + std::to_string(kSlurmPreflightExit) + "\n";
  s += "fi\n";
  s += "if ! PATH=" + shell_word(config.path_env) + " command -v " + shell_word(argv[0]) +
       " >/dev/null 2>&1; then\n";
  s += "  report entrypoint\n";
  s += "  echo \"[reverify] run.entrypoint[0] " + shell_word(argv[0]) +
       " is not found on $(uname -n) (PATH=" + config.path_env +
       "): the job is not started\" >&2\n";
  s += "  exit " + std::to_string(kSlurmPreflightExit) + "\n";
  s += "fi\n";
  s += "report ''\n";
  s += "gpus=${CUDA_VISIBLE_DEVICES-}\n";
  s += "cd " + shell_word(job_workdir(spec, node_dir / "src").string()) + " || exit 1\n";
  s += "env -i" + job_env + " \\\n  \"CUDA_VISIBLE_DEVICES=$gpus\"" + command + "\n";
  s += "status=$?\n";
  s += "echo \"$status\" >\"$dir/exit_status.tmp\" && mv -f \"$dir/exit_status.tmp\" "
       "\"$dir/exit_status\"\n";
  s += "exit \"$status\"\n";
  return s;
}

}  // namespace

std::string slurm_job_name(const SlurmConfig& config, const std::string& rebuild_id) {
  return config.job_name_prefix + rebuild_id;
}

std::string slurm_job_comment(const std::string& rebuild_id) {
  return std::string(kRebuildIdLabel) + "=" + rebuild_id;
}

Result<SlurmBatch> build_slurm_batch(const RebuildSpec& spec, const SlurmConfig& config,
                                     const std::filesystem::path& daemon_dir) {
  if (spec.manifest.run.entrypoint.empty()) {
    return make_error(ErrorCode::manifest_invalid,
                      "run.entrypoint: expected a non-empty argv array");
  }
  SlurmBatch batch;
  batch.placement = config.placement_for(spec.manifest.model);
  auto gpus = gpu_request(spec, config);
  if (!gpus)
    return gpus.error();
  batch.gpus = *gpus;
  const auto node_dir = config.node_path(daemon_dir);
  batch.options = sbatch_options(spec, config, batch, node_dir);
  auto script = job_script(spec, config, batch, node_dir);
  if (!script)
    return script.error();
  batch.script = std::move(*script);
  return batch;
}

}  // namespace reverify
