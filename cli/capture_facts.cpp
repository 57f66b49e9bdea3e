#include "cli/capture_facts.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/hashing.hpp"
#include "core/manifest_parse.hpp"
#include "core/program_output.hpp"

namespace reverify::cli {
namespace {

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  std::size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? "" : text.substr(start);
}

}  // namespace

Result<GitFacts> read_git_facts(const std::filesystem::path& checkout) {
  CommandOptions in_checkout{checkout};
  auto head = command_output({"git", "rev-parse", "HEAD"}, in_checkout);
  if (!head.ok()) {
    return make_error(ErrorCode::invalid_argument, "--code " + checkout.string() +
                                                       ": not a git checkout with a commit (" +
                                                       head.error().message + ")");
  }
  GitFacts facts;
  facts.commit = trim(*head);
  auto status =
      command_output({"git", "status", "--porcelain", "--untracked-files=no"}, in_checkout);
  if (!status.ok())
    return status.error();
  facts.dirty = !trim(*status).empty();
  if (facts.dirty) {
    auto diff = command_output({"git", "diff", "--binary", "HEAD"}, in_checkout);
    if (!diff.ok())
      return diff.error();
    facts.diff = *diff;
  }
  auto remote = command_output({"git", "config", "--get", "remote.origin.url"}, in_checkout);
  if (remote.ok() && !trim(*remote).empty())
    facts.remote = trim(*remote);
  return facts;
}

std::optional<Accelerator> read_accelerator() {
  Accelerator accelerator;
  auto gpus =
      command_output({"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"});
  if (!gpus.ok() || trim(*gpus).empty())
    return std::nullopt;  // a CPU job: no accelerator (the CPU is no accelerator model)
  std::istringstream lines(*gpus);
  std::string line;
  while (std::getline(lines, line)) {
    if (trim(line).empty())
      continue;
    if (accelerator.count++ == 0) {
      std::size_t comma = line.rfind(',');
      accelerator.model = trim(line.substr(0, comma));
      if (comma != std::string::npos)
        accelerator.driver = trim(line.substr(comma + 1));
    }
  }
  return accelerator;
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0)
    return "unknown-host";
  return name.data();
}

Result<std::string> python_version(const std::string& python) {
  auto out = command_output({python, "-c", "import platform; print(platform.python_version())"});
  if (!out.ok())
    return out.error();
  return trim(*out);
}

Result<std::string> module_version(const std::string& python, const std::string& module) {
  auto out = command_output({python, "-c",
                             "import sys, importlib; "
                             "print(importlib.import_module(sys.argv[1]).__version__)",
                             module});
  if (!out.ok())
    return out.error();
  return trim(*out);
}

Result<std::vector<std::string>> merge_job_environment(const nlohmann::json& result,
                                                       Environment& env) {
  std::vector<std::string> notes;
  auto reported = result.find("environment");
  if (reported == result.end() || reported->is_null())
    return notes;
  EnvironmentParse facts = parse_environment(*reported, "result.json: environment");
  for (const char* hashed : {"image", "lockfile"}) {
    if (reported->is_object() && reported->contains(hashed)) {
      facts.errors.push_back({std::string("result.json: environment.") + hashed,
                              "is recorded by capture itself (it hashes it), not by the job"});
    }
  }
  if (!facts.errors.empty()) {
    std::string message;
    for (const auto& error : facts.errors)
      message += (message.empty() ? "" : "; ") + error.to_string();
    return make_error(ErrorCode::invalid_argument, message);
  }
  for (const auto& warning : facts.warnings)
    notes.push_back("warning: " + warning);
  Environment& job = *facts.environment;
  auto take = [](auto& target, auto& value) {
    if (value)
      target = std::move(value);
  };
  take(env.python, job.python);
  take(env.framework, job.framework);
  take(env.determinism, job.determinism);
  take(env.threads, job.threads);
  take(env.world_size, job.world_size);
  for (auto& [name, value] : job.env)
    env.env[name] = value;
  if (job.accelerator && job.accelerator->count > 0) {
    // The job names the devices it used; the driver is the machine's (nvidia-smi).
    if (!job.accelerator->driver && env.accelerator && env.accelerator->count > 0)
      job.accelerator->driver = env.accelerator->driver;
    env.accelerator = std::move(job.accelerator);
    notes.push_back("accelerator: " + std::to_string(env.accelerator->count) + " x " +
                    env.accelerator->model + ", CUDA " + env.accelerator->cuda.value_or("?") +
                    ", cuDNN " + env.accelerator->cudnn.value_or("?") + " (as the job used them)");
  } else if (env.framework) {
    env.accelerator.reset();  // nvidia-smi's GPUs are the machine's; this job used none of them
    notes.push_back("accelerator: the job used none (" + env.framework->name + " " +
                    env.framework->version +
                    " reported no GPU): no GPU model, CUDA or cuDNN version recorded");
  }
  if (env.threads) {
    auto text = [](const std::optional<std::int64_t>& n) {
      return n ? std::to_string(*n) : std::string("not reported");
    };
    notes.push_back("threads: intra-op " + text(env.threads->intra_op) + ", inter-op " +
                    text(env.threads->inter_op) + ", data-loader workers " +
                    text(env.threads->dataloader_workers));
  }
  return notes;
}

std::map<std::string, std::string> determinism_env() {
  static constexpr const char* kNames[] = {
      "PYTHONHASHSEED",         "CUBLAS_WORKSPACE_CONFIG", "OMP_NUM_THREADS",
      "OPENBLAS_NUM_THREADS",   "MKL_NUM_THREADS",         "TF_DETERMINISTIC_OPS",
      "TF_CUDNN_DETERMINISTIC", "CUDA_LAUNCH_BLOCKING",    "NCCL_ALGO"};
  std::map<std::string, std::string> env;
  for (const char* name : kNames) {
    if (const char* value = std::getenv(name))
      env[name] = value;
  }
  return env;
}

}  // namespace reverify::cli
