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

// The contract's environment as the job sees it (node paths); `name` problems are the
// manifest's.
Result<std::map<std::string, std::string>> job_environment(const RebuildSpec& spec,
                                                           const SlurmConfig& config,
                                                           const std::filesystem::path& node_dir) {
  // A fetched copy lives in the daemon's scratch: the nodes see it only under shared_root.
  for (const JobInput& input : job_inputs(spec)) {
    const auto inside = input.path ? input.path->lexically_normal().lexically_relative(
                                         config.shared_root.lexically_normal())
                                   : std::filesystem::path();
    if (input.fetched && (inside.empty() || *inside.begin() == "..")) {
      return fetched_input_unseen(input, "slurm",
                                  "it is not under runner.slurm.shared_root (" +
                                      config.shared_root.string() +
                                      "), the only folder reverify knows the nodes share; put the "
                                      "daemon's work_dir under it");
    }
  }
  ContractPaths paths{(node_dir / "in" / "config.json").string(),
                      (node_dir / "in" / "seeds.json").string(), (node_dir / "out").string(),
                      spec.data_path ? config.node_path(*spec.data_path).string() : "",
                      spec.eval_path ? config.node_path(*spec.eval_path).string() : ""};
  auto env = contract_environment(spec, paths);
  for (const auto& [name, value] : env) {
    if (name.empty() || name.find('=') != std::string::npos || name == "CUDA_VISIBLE_DEVICES") {
      return make_error(ErrorCode::manifest_invalid,
                        "environment.env: \"" + name +
                            "\" cannot be passed to the job (empty, holds '=', or names "
                            "CUDA_VISIBLE_DEVICES, which the allocation sets)");
    }
  }
  return env;
}

// The lines that stop the script before the job when `test` holds: the allocation file says
// which problem, stderr (the job's log) says it in words.
std::string refuse_if(const std::string& test, const std::string& problem,
                      const std::string& words) {
  return "if " + test + "; then\n  report " + problem + "\n  echo \"[reverify] " + words +
         ": the job is not started\" >&2\n  exit " + std::to_string(kSlurmPreflightExit) + "\nfi\n";
}

// The GPU count check and the allocation report, shared by both ways of running the job.
std::string script_preamble(const RebuildSpec& spec, const SlurmBatch& batch,
                            const std::filesystem::path& node_dir) {
  const std::string expected = std::to_string(batch.gpus.count);
  std::string s = "#!/bin/sh\n";
  s += "# reverify: rebuild " + spec.rebuild_id + " of " + spec.manifest.model + "@" +
       spec.manifest.version + " (written by the slurm runner; see runners/slurm_batch.hpp)\n";
  s += "dir=" + shell_word(node_dir.string()) + "\n";
  s += "set -f; IFS=,; set -- ${CUDA_VISIBLE_DEVICES-}; unset IFS; set +f\n";
  s += "devices=$#\n";
  s += "report() {\n";
  s += "  { echo \"node=$(uname -n)\"; echo \"devices=$devices\"; echo \"expected=" + expected +
       "\"\n";
  s += "    echo \"cuda_visible_devices=${CUDA_VISIBLE_DEVICES-}\"; [ -z \"$1\" ] || echo "
       "\"problem=$1\"; } >\"$dir/allocation.tmp\" && mv -f \"$dir/allocation.tmp\" "
       "\"$dir/allocation\"\n";
  s += "}\n";
  s += refuse_if("[ \"$devices\" -ne " + expected + " ]", "gpu_count",
                 "the allocation hands the job $devices GPU device(s) "
                 "(CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}) on $(uname -n); the "
                 "rebuild asked for " +
                     expected);
  return s;
}

// Runs the command line `command` (already quoted), records its exit status and exits with it.
std::string script_run(const std::string& command) {
  return command + "\nstatus=$?\n" +
         "echo \"$status\" >\"$dir/exit_status.tmp\" && mv -f \"$dir/exit_status.tmp\" "
         "\"$dir/exit_status\"\n" +
         "exit \"$status\"\n";
}

// The checkout's way: env -i in run.workdir of the checkout, PATH from the config.
std::string checkout_lines(const RebuildSpec& spec, const SlurmConfig& config,
                           std::map<std::string, std::string> env,
                           const std::filesystem::path& node_dir) {
  const auto& argv = spec.manifest.run.entrypoint;
  env["PATH"] = config.path_env;
  std::string s = refuse_if("! PATH=" + shell_word(config.path_env) + " command -v " +
                                shell_word(argv[0]) + " >/dev/null 2>&1",
                            "entrypoint",
                            "run.entrypoint[0] " + shell_word(argv[0]) +
                                " is not found on $(uname -n) (PATH=" + config.path_env + ")");
  s += "report ''\n";
  s += "gpus=${CUDA_VISIBLE_DEVICES-}\n";
  s += "cd " + shell_word(job_workdir(spec, node_dir / "src").string()) + " || exit 1\n";
  std::string command = "env -i";
  for (const auto& [name, value] : env)
    command += " \\\n  " + shell_word(name + "=" + value);
  command += " \\\n  \"CUDA_VISIBLE_DEVICES=$gpus\"";
  for (const auto& arg : argv)
    command += " " + shell_word(arg);
  return s + script_run(command);
}

// The folders the job reads and writes, bound into the container at the same paths.
std::vector<std::pair<std::string, bool>> container_binds(const RebuildSpec& spec,
                                                          const SlurmConfig& config,
                                                          const std::filesystem::path& node_dir) {
  std::vector<std::pair<std::string, bool>> binds = {{(node_dir / "in").string(), true},
                                                     {(node_dir / "out").string(), false}};
  if (spec.data_path)
    binds.emplace_back(config.node_path(*spec.data_path).string(), true);
  if (spec.eval_path)
    binds.emplace_back(config.node_path(*spec.eval_path).string(), true);
  return binds;
}

// The runtime's argv before its subcommand: runner.slurm.containers.command, or its name.
std::vector<std::string> runtime_command(const SlurmConfig& config) {
  if (!config.containers.command.empty())
    return config.containers.command;
  return {config.containers.runtime == SlurmContainerRuntime::podman ? "podman" : "apptainer"};
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv)
    line += (line.empty() ? "" : " \\\n  ") + shell_word(arg);
  return line;
}

// The runtime is on the node and pulls environment.image by digest (podman into its storage,
// apptainer into image.sif in the rebuild's folder), before anything runs; either missing is the
// platform's (provision), never the job's failure.
std::string pull_lines(const SlurmConfig& config, const std::string& image) {
  const bool podman = config.containers.runtime == SlurmContainerRuntime::podman;
  auto pull = runtime_command(config);
  const std::string runtime = pull[0];
  pull.push_back("pull");
  pull.insert(pull.end(), config.containers.pull_args.begin(), config.containers.pull_args.end());
  if (podman)
    pull.insert(pull.end(), {"--quiet", image});
  std::string s =
      refuse_if("! command -v " + shell_word(runtime) + " >/dev/null 2>&1", "container_runtime",
                "the container runtime " + shell_word(runtime) +
                    " (runner.slurm.containers) is not found on $(uname -n)");
  // apptainer's destination is the rebuild's folder, from the script's $dir.
  const std::string destination =
      podman ? "" : " \\\n  \"$dir/image.sif\" " + shell_word("docker://" + image);
  return s + refuse_if("! " + command_line(pull) + destination + " >&2", "image",
                       "the image " + shell_word(image) + " could not be pulled on $(uname -n)");
}

// The image's way: the runtime runs run.entrypoint in the pulled image with the contract's
// variables only (the image's own PATH), the folders bound at the same paths, and the
// allocation's GPUs (podman: CDI devices by the job's GPU indices; apptainer: --nv with
// CUDA_VISIBLE_DEVICES).
Result<std::string> container_lines(const RebuildSpec& spec, const SlurmConfig& config,
                                    const SlurmBatch& batch,
                                    const std::map<std::string, std::string>& env,
                                    const std::filesystem::path& node_dir) {
  const bool podman = config.containers.runtime == SlurmContainerRuntime::podman;
  const std::string& image = *spec.manifest.environment->image;
  std::string s = pull_lines(config, image) + "report ''\nset --\n";
  if (podman && batch.gpus.count > 0) {
    s += "set -f; IFS=,; for gpu in ${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES-}}; do set -- \"$@\" "
         "--device \"nvidia.com/gpu=$gpu\"; done; unset IFS; set +f\n";
  }
  std::vector<std::string> argv = runtime_command(config);
  argv.push_back(podman ? "run" : "exec");
  argv.insert(argv.end(), config.containers.args.begin(), config.containers.args.end());
  if (podman)
    argv.insert(argv.end(), {"--rm", "--pull=never", "--network=none"});
  else
    argv.insert(argv.end(), {"--containall", "--cleanenv", "--no-home"});
  if (!podman && batch.gpus.count > 0)
    argv.push_back("--nv");
  for (const auto& [path, read_only] : container_binds(spec, config, node_dir)) {
    if (path.find_first_of(":,") != std::string::npos) {
      return make_error(ErrorCode::provision,
                        path +
                            ": a folder whose path holds ':' or ',' cannot be bound into the "
                            "container");
    }
    argv.push_back((podman ? "--volume=" : "--bind=") + path + ":" + path +
                   (read_only ? ":ro" : ""));
  }
  for (const auto& [name, value] : env)
    argv.push_back("--env=" + name + "=" + value);
  const auto& workdir = spec.manifest.run.workdir;
  if (workdir && std::filesystem::path(*workdir).is_absolute())
    argv.push_back((podman ? "--workdir=" : "--pwd=") + *workdir);
  const auto& entrypoint = spec.manifest.run.entrypoint;
  if (podman)
    argv.push_back("--entrypoint=" + nlohmann::json::array({entrypoint[0]}).dump());
  // The allocation's GPUs, as options before the image: podman's CDI devices (above),
  // apptainer's CUDA_VISIBLE_DEVICES.
  std::string command =
      command_line(argv) +
      (podman ? " \\\n  \"$@\"" : " \\\n  \"--env=CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-}\"");
  if (podman)
    command += " \\\n  " + shell_word(image);
  else
    command += " \\\n  \"$dir/image.sif\" \\\n  " + shell_word(entrypoint[0]);
  for (auto arg = entrypoint.begin() + 1; arg != entrypoint.end(); ++arg)
    command += " \\\n  " + shell_word(*arg);
  return s + script_run(command);
}

Result<std::string> job_script(const RebuildSpec& spec, const SlurmConfig& config,
                               const SlurmBatch& batch, const std::filesystem::path& node_dir) {
  auto env = job_environment(spec, config, node_dir);
  if (!env)
    return env.error();
  const std::string preamble = script_preamble(spec, batch, node_dir);
  if (!runs_image(spec, config))
    return preamble + checkout_lines(spec, config, std::move(*env), node_dir);
  auto lines = container_lines(spec, config, batch, *env, node_dir);
  if (!lines)
    return lines.error();
  return preamble + *lines;
}

}  // namespace

bool runs_image(const RebuildSpec& spec, const SlurmConfig& config) {
  return config.containers.runtime != SlurmContainerRuntime::none && spec.manifest.environment &&
         spec.manifest.environment->image;
}

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
