#include "runners/process_checkout.hpp"

#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <boost/process/start_dir.hpp>
#include <fstream>

#include "core/child_descriptors.hpp"
#include "core/hashing.hpp"
#include "core/uri.hpp"
#include "runners/process_spawn.hpp"

namespace reverify {
namespace {

namespace bp = boost::process;

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

class Git {
 public:
  Git(const std::string& path_env, const std::filesystem::path& home) {
    if (auto exe = find_executable("git", path_env, home))
      exe_ = exe->string();
    // Nothing from the daemon's environment: no user or system git config, never a prompt.
    env_["PATH"] = path_env;
    env_["HOME"] = home.string();
    env_["GIT_CONFIG_NOSYSTEM"] = "1";
    env_["GIT_TERMINAL_PROMPT"] = "0";
    env_["LC_ALL"] = "C";
    // A stalled remote must not hang a verification before its job even starts: ssh gives up on
    // an unanswered connect or a silent server, HTTP on a transfer under 1 KB/s for 60 s.
    env_["GIT_SSH_COMMAND"] =
        "ssh -o BatchMode=yes -o ConnectTimeout=30 -o ServerAliveInterval=15 "
        "-o ServerAliveCountMax=4";
  }

  bool found() const { return !exe_.empty(); }

  Result<CommandResult> run(const std::vector<std::string>& args,
                            const std::filesystem::path& cwd) const {
    std::error_code ec;
    bp::ipstream out;
    bp::child child(exe_, bp::args(args), bp::env(env_), bp::start_dir(cwd.string()),
                    bp::std_in<bp::null, (bp::std_out & bp::std_err)> out,
                    only_standard_descriptors{}, ec);
    if (ec)
      return make_error(ErrorCode::provision, "running git: " + ec.message());
    CommandResult result;
    std::string line;
    while (std::getline(out, line)) {
      if (result.output.size() < 64 * 1024)
        result.output += line + "\n";
    }
    child.wait(ec);
    result.exit_code = ec ? -1 : child.exit_code();
    return result;
  }

 private:
  boost::filesystem::path exe_;
  bp::environment env_;
};

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

std::string repo_location(const RebuildSpec& spec) {
  return reverify::repo_location(*spec.manifest.code.repo, spec.manifest_location);
}

Status apply_diff(const RebuildSpec& spec, const Git& git, const std::filesystem::path& dest) {
  const auto& code = spec.manifest.code;
  if (!code.diff_sha256) {
    return make_error(
        ErrorCode::manifest_invalid,
        "code.diff_sha256: required when code.dirty is true (the rebuild must apply the exact "
        "uncommitted changes)");
  }
  const std::string diff_uri = resolve_uri(spec.manifest_location, "code.diff");
  auto diff = read_uri(diff_uri);
  if (!diff) {
    return make_error(ErrorCode::input_drift, "code.dirty is true but the diff " + diff_uri +
                                                  " cannot be read: " + diff.error().message);
  }
  const std::string actual = sha256_hex(*diff);
  if (actual != *code.diff_sha256) {
    return make_error(ErrorCode::input_drift, "code.diff_sha256: " + diff_uri + " has sha256 " +
                                                  actual + ", the manifest recorded " +
                                                  *code.diff_sha256);
  }
  const auto diff_file = dest.parent_path() / "code.diff";
  std::ofstream(diff_file, std::ios::binary) << *diff;
  auto applied = git.run({"apply", "--whitespace=nowarn", diff_file.string()}, dest);
  if (!applied)
    return applied.error();
  if (applied->exit_code != 0) {
    return make_error(ErrorCode::input_drift, "code.diff does not apply to commit " + code.commit +
                                                  ": " + trimmed(applied->output));
  }
  return {};
}

}  // namespace

Status checkout_code(const RebuildSpec& spec, const std::filesystem::path& dest,
                     const std::string& path_env) {
  const auto& code = spec.manifest.code;
  if (!code.repo || code.repo->empty()) {
    return make_error(ErrorCode::provision,
                      "code.repo: the process runner needs the repository to check out");
  }
  const auto parent = dest.parent_path();
  const Git git(path_env, parent);
  if (!git.found())
    return make_error(ErrorCode::provision, "git: not found on PATH " + path_env);
  const std::string repo = repo_location(spec);
  // "--" keeps a repo that starts with '-' from being read as an option.
  auto cloned = git.run(
      {"-c", "safe.directory=*", "-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=60",
       "clone", "--quiet", "--no-checkout", "--", repo, dest.string()},
      parent);
  if (!cloned)
    return cloned.error();
  if (cloned->exit_code != 0) {
    return make_error(ErrorCode::provision,
                      "code.repo: cannot clone " + repo + ": " + trimmed(cloned->output));
  }
  auto has_commit = git.run({"cat-file", "-e", code.commit + "^{commit}"}, dest);
  if (!has_commit)
    return has_commit.error();
  if (has_commit->exit_code != 0) {
    return make_error(ErrorCode::input_drift, "code.commit: " + code.commit + " is not in " + repo +
                                                  " (rewritten history or wrong repository?)");
  }
  auto checked_out = git.run(
      {"-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", code.commit}, dest);
  if (!checked_out)
    return checked_out.error();
  if (checked_out->exit_code != 0) {
    return make_error(ErrorCode::provision,
                      "checking out " + code.commit + ": " + trimmed(checked_out->output));
  }
  if (code.dirty)
    return apply_diff(spec, git, dest);
  return {};
}

}  // namespace reverify
