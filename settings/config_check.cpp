#include "settings/config_check.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "pager/senders.hpp"
#include "runners/job_sandbox.hpp"
#include "runners/runner_factory.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

bool has_errors_under(const std::vector<std::string>& errors, const std::string& path) {
  for (const auto& error : errors) {
    if (error.rfind(path, 0) == 0 && (error.size() == path.size() || error[path.size()] == '.' ||
                                      error[path.size()] == ':' || error[path.size()] == '['))
      return true;
  }
  return false;
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// A secret file other users can read: an error naming the key and the fix.
void check_secret(const std::string& key, const fs::path& file,
                  std::vector<ConfigProblem>& problems) {
  if (file.empty())
    return;
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0)
    return;  // the loader (or the sender) reports a file it cannot read
  if (info.st_mode & S_IROTH) {
    problems.push_back(
        {ProblemSeverity::error, key + ": " + file.string() + " is readable by every user (mode " +
                                     octal_mode(info.st_mode) +
                                     "); make it readable by reverifyd only: chmod 0640 "
                                     "and chown root:reverify (or 0600 and reverify:reverify)"});
  }
}

void check_sources(const Config& config, std::vector<ConfigProblem>& problems) {
  for (std::size_t i = 0; i < config.sources.size(); ++i) {
    const auto& source = config.sources[i];
    const std::string path = "sources[" + std::to_string(i) + "]";
    if (source.kind == SourceKind::directory) {
      std::error_code ec;
      if (!fs::is_directory(source.root, ec)) {
        problems.push_back(
            {ProblemSeverity::error,
             path + ".root: " + source.root.string() +
                 (fs::exists(source.root, ec) ? " is not a folder" : " does not exist") +
                 " (the registry must be mounted there before reverifyd starts)"});
      }
    }
    check_secret(path + ".token_file", source.token_file, problems);
  }
}

void check_pager(const Config& config, const std::vector<std::string>& loader_errors,
                 std::vector<ConfigProblem>& problems) {
  for (const auto& [name, sender] : config.pager.senders) {
    const std::string path = "pager.senders." + name;
    check_secret(path + ".routing_key_file", sender.routing_key_file, problems);
    check_secret(path + ".url_file", sender.url_file, problems);
    check_secret(path + ".token_file", sender.token_file, problems);
    if (has_errors_under(loader_errors, path))
      continue;
    if (auto notifier = make_notifier(sender); !notifier.ok())
      problems.push_back({ProblemSeverity::error, notifier.error().message});
  }
}

// The process runner's sandbox: it works on this machine (unless job code is trusted), and what
// the config adds to it shows no job the verifier's own files.
void check_sandbox(const Config& config, std::vector<ConfigProblem>& problems) {
  if (config.runner.kind != RunnerKind::process)
    return;
  const auto& sandbox = config.runner.process.sandbox;
  const auto& own = config.runner.isolation.verifier_paths;
  for (const auto& [key, paths] :
       {std::pair{"runner.process.sandbox.read_only", &sandbox.read_only},
        std::pair{"runner.process.sandbox.writable", &sandbox.writable},
        std::pair{"runner.process.sandbox.devices", &sandbox.devices}}) {
    for (const auto& path : *paths) {
      if (auto shown = check_not_verifier_own(path, key, own); !shown)
        problems.push_back({ProblemSeverity::error, shown.error().message});
    }
  }
  if (config.runner.isolation.trust_job_code) {
    problems.push_back({ProblemSeverity::warning,
                        "runner.trust_job_code: true: the process runner runs jobs unisolated, "
                        "as reverifyd's user; a job can read its secrets and store and sign its "
                        "own verdicts (docs/security.md)"});
  } else if (auto ready = probe_sandbox(sandbox); !ready) {
    problems.push_back({ProblemSeverity::error, ready.error().message});
  }
}

void check_runner(const Config& config, const std::vector<std::string>& loader_errors,
                  std::vector<ConfigProblem>& problems) {
  check_secret("runner.kubernetes.token_file", config.runner.kubernetes.token_file, problems);
  if (has_errors_under(loader_errors, "runner"))
    return;
  if (auto runner = make_runner(config.runner); !runner.ok())
    problems.push_back({ProblemSeverity::error, runner.error().message});
  check_sandbox(config, problems);
  std::error_code ec;
  if (config.runner.kind == RunnerKind::docker && !fs::exists(config.runner.docker.socket, ec)) {
    problems.push_back(
        {ProblemSeverity::warning, "runner.docker.socket: " + config.runner.docker.socket +
                                       " does not exist (is the Docker engine running?)"});
  }
}

void check_code_mirrors(const Config& config, std::vector<ConfigProblem>& problems) {
  for (const auto& [prefix, target] : config.code_mirrors) {
    if (target.find("://") != std::string::npos || target.front() != '/')
      continue;  // another URL, or scp-like host:path
    std::error_code ec;
    if (!fs::exists(target, ec)) {
      problems.push_back(
          {ProblemSeverity::warning, "code_mirrors." + prefix + ": " + target +
                                         " does not exist; rebuilds of that code would end in "
                                         "error:provision"});
    }
  }
}

}  // namespace

std::vector<ConfigProblem> check_deployment(const Config& config,
                                            const std::vector<std::string>& loader_errors) {
  std::vector<ConfigProblem> problems;
  check_secret("api.token_file", config.api.token_file, problems);
  check_sources(config, problems);
  check_code_mirrors(config, problems);
  check_runner(config, loader_errors, problems);
  check_pager(config, loader_errors, problems);
  return problems;
}

}  // namespace reverify
