#include "cli/capture_facts.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/hashing.hpp"
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

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      return trim(line.substr(line.find(':') + 1));
    }
  }
  return "unknown CPU";
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

Accelerator read_accelerator() {
  Accelerator accelerator;
  auto gpus =
      command_output({"nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"});
  if (gpus.ok() && !trim(*gpus).empty()) {
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
  accelerator.model = cpu_model();
  accelerator.count = 0;
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
