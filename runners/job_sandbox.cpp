#include "runners/job_sandbox.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/io.hpp>
#include <boost/process/pipe.hpp>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/child_descriptors.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;
namespace bp = boost::process;

constexpr const char* kSetpriv = "/usr/bin/setpriv";

// `inner` is `outer` or lies below it (both normal and absolute).
bool is_within(const fs::path& inner, const fs::path& outer) {
  const auto rel = inner.lexically_relative(outer);
  return !rel.empty() && *rel.begin() != "..";
}

fs::path resolved(const fs::path& path) {
  std::error_code ec;
  const auto canonical = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : canonical;
}

// Folders the argv mounts itself: nothing is made above or inside them with --dir.
bool is_own_mount(const fs::path& dir) {
  for (const char* mount : {"/proc", "/dev"}) {
    if (is_within(dir, mount))
      return true;
  }
  return dir == "/tmp" || dir == "/";
}

void add_bind(std::vector<std::string>& argv, const SandboxBind& bind) {
  const char* option = nullptr;
  switch (bind.access) {
    case SandboxAccess::read_only:
      option = bind.optional ? "--ro-bind-try" : "--ro-bind";
      break;
    case SandboxAccess::writable:
      option = bind.optional ? "--bind-try" : "--bind";
      break;
    case SandboxAccess::device:
      option = bind.optional ? "--dev-bind-try" : "--dev-bind";
      break;
  }
  argv.insert(argv.end(), {option, bind.path.string(), bind.path.string()});
}

// --perms 0755 --dir for every folder above a bind that the sandbox's own root (a tmpfs) must
// hold: bwrap would make them 0700 when it runs as root, out of reach of the job's uid.
// Folders inside another bind are that bind's own (bwrap makes a missing one there itself).
void add_parent_folders(std::vector<std::string>& argv, const std::vector<SandboxBind>& binds) {
  std::set<fs::path> parents;
  for (const auto& bind : binds) {
    for (fs::path dir = bind.path.parent_path(); dir != dir.root_path(); dir = dir.parent_path())
      parents.insert(dir);
  }
  for (const auto& dir : parents) {  // std::set: a parent sorts before its children
    const bool inside_bind = std::any_of(
        binds.begin(), binds.end(), [&](const SandboxBind& b) { return is_within(dir, b.path); });
    if (!inside_bind && !is_own_mount(dir))
      argv.insert(argv.end(), {"--perms", "0755", "--dir", dir.string()});
  }
}

// System paths (and /sys for GPUs) are the optional read-only binds; the job's are the rest.
bool is_system_bind(const SandboxBind& bind) {
  return bind.optional && bind.access == SandboxAccess::read_only;
}

// The job's binds, parents before children.
std::vector<SandboxBind> job_binds(const SandboxPlan& plan) {
  std::vector<SandboxBind> binds;
  for (const auto& bind : plan.binds) {
    if (!is_system_bind(bind))
      binds.push_back(bind);
  }
  std::stable_sort(binds.begin(), binds.end(),
                   [](const SandboxBind& a, const SandboxBind& b) { return a.path < b.path; });
  return binds;
}

// The /bin, /sbin and /lib* of this host: links (merged /usr, as on Debian 12) or folders.
void mirror_top_level(SandboxPlan& plan) {
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    std::error_code ec;
    const auto status = fs::symlink_status(top, ec);
    if (fs::is_symlink(status)) {
      plan.links.push_back({top, fs::read_symlink(top, ec)});
    } else if (fs::is_directory(status)) {
      plan.binds.push_back({top, SandboxAccess::read_only, true});
    }
  }
}

// Every /dev/nvidia* node (and the nvidia-caps folder) present, and /sys read-only: what the
// NVIDIA driver's user-space libraries open.
void add_gpus(SandboxPlan& plan) {
  std::error_code ec;
  std::vector<fs::path> nodes;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    if (entry.path().filename().string().rfind("nvidia", 0) == 0)
      nodes.push_back(entry.path());
  }
  std::sort(nodes.begin(), nodes.end());
  for (const auto& node : nodes)
    plan.binds.push_back({node, SandboxAccess::device, true});
  plan.binds.push_back({"/sys", SandboxAccess::read_only, true});
}

// The config key that would show `path` to the job.
std::string visibility_error(const fs::path& executable) {
  return "run.entrypoint[0] resolves to " + executable.string() +
         ", which the job's sandbox does not show: add its folder to "
         "runner.process.sandbox.read_only";
}

// What bwrap's failure most likely means on this host.
std::string probe_hint(const std::string& output, int status) {
  if (output.find("Can't mount proc") != std::string::npos) {
    return "/proc is partly hidden here (systemd's ProtectKernelTunables= or ProtectKernelLogs=, "
           "or a container's masked /proc), and the kernel then refuses a fresh /proc to a user "
           "namespace";
  }
  if (output.find("namespace") != std::string::npos || output.find("uid map") != std::string::npos)
    return "unprivileged user namespaces are off (sysctl user.max_user_namespaces, "
           "kernel.unprivileged_userns_clone) or forbidden (systemd's RestrictNamespaces=)";
  if (status == 128 + SIGSYS)
    return "a system call filter (systemd's SystemCallFilter=) forbids what bwrap needs "
           "(unshare, mount, pivot_root: @mount)";
  return "";
}

}  // namespace

const std::vector<fs::path>& sandbox_system_paths() {
  static const std::vector<fs::path> paths = {
      "/usr",
      "/etc/alternatives",
      "/etc/ld.so.cache",
      "/etc/ld.so.conf",
      "/etc/ld.so.conf.d",
      "/etc/localtime",
      "/etc/timezone",
      "/etc/passwd",
      "/etc/group",
      "/etc/nsswitch.conf",
      "/etc/host.conf",
      "/etc/hosts",
      "/etc/resolv.conf",
      "/etc/gai.conf",
      "/etc/protocols",
      "/etc/services",
      "/etc/mime.types",
      "/etc/ssl",
      "/etc/ca-certificates",
      "/etc/ca-certificates.conf",
      "/etc/python3",
      "/etc/python3.11",
  };
  return paths;
}

std::vector<std::string> sandbox_argv(const SandboxPlan& plan) {
  std::vector<std::string> argv = {plan.bwrap.string()};
  if (!plan.as_root)
    argv.insert(argv.end(), {"--unshare-user", "--disable-userns"});
  argv.insert(argv.end(), {"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup"});
  if (!plan.network)
    argv.push_back("--unshare-net");
  argv.push_back("--die-with-parent");
  if (plan.status_fd >= 0)
    argv.insert(argv.end(), {"--json-status-fd", std::to_string(plan.status_fd)});
  for (const auto& link : plan.links)
    argv.insert(argv.end(), {"--symlink", link.target.string(), link.link.string()});
  const std::string tmp_bytes = std::to_string(plan.tmp_bytes);
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev"});
  argv.insert(argv.end(), {"--perms", "1777", "--size", tmp_bytes, "--tmpfs", "/dev/shm"});
  argv.insert(argv.end(), {"--perms", "1777", "--size", tmp_bytes, "--tmpfs", "/tmp"});
  add_parent_folders(argv, plan.binds);
  for (const auto& bind : plan.binds) {
    if (is_system_bind(bind))
      add_bind(argv, bind);
  }
  for (const auto& bind : job_binds(plan))
    add_bind(argv, bind);
  argv.insert(argv.end(), {"--remount-ro", "/", "--chdir", plan.workdir.string(), "--"});
  if (plan.as_root) {
    argv.insert(argv.end(), {kSetpriv, "--reuid=" + std::to_string(plan.job_uid),
                             "--regid=" + std::to_string(plan.job_gid), "--clear-groups",
                             "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"});
  }
  argv.insert(argv.end(), plan.command.begin(), plan.command.end());
  return argv;
}

Status check_not_verifier_own(const fs::path& shown, const std::string& what,
                              const std::vector<fs::path>& verifier_paths) {
  const fs::path view = resolved(shown);
  for (const auto& own : verifier_paths) {
    const fs::path kept = resolved(own);
    if (is_within(kept, view) || is_within(view, kept)) {
      return make_error(ErrorCode::provision,
                        what + ": " + shown.string() + " would show the job " + own.string() +
                            ", which is the verifier's own (its config, a secret or its store); "
                            "a job is never shown those");
    }
  }
  return {};
}

Result<SandboxPlan> plan_sandbox(const SandboxConfig& config, const SandboxJob& job,
                                 const std::vector<fs::path>& verifier_paths) {
  SandboxPlan plan;
  plan.bwrap = config.bwrap;
  plan.workdir = job.workdir;
  plan.network = job.network;
  plan.as_root = ::geteuid() == 0;
  plan.job_uid = config.job_uid;
  plan.job_gid = config.job_gid;
  plan.tmp_bytes = config.tmp_bytes;
  plan.command = job.command;
  mirror_top_level(plan);
  for (const auto& path : sandbox_system_paths())
    plan.binds.push_back({path, SandboxAccess::read_only, true});
  plan.binds.insert(plan.binds.end(), job.binds.begin(), job.binds.end());
  for (const auto& path : config.read_only)
    plan.binds.push_back({path, SandboxAccess::read_only, false});
  for (const auto& path : config.writable)
    plan.binds.push_back({path, SandboxAccess::writable, false});
  for (const auto& path : config.devices)
    plan.binds.push_back({path, SandboxAccess::device, false});
  if (job.gpus)
    add_gpus(plan);
  for (auto& bind : plan.binds) {
    bind.path = bind.path.lexically_normal();
    std::error_code ec;
    if (!bind.path.is_absolute() || bind.path == "/") {
      return make_error(ErrorCode::provision,
                        bind.path.string() + ": a sandbox shows absolute paths below /, got this");
    }
    if (!bind.optional && !fs::exists(bind.path, ec)) {
      return make_error(ErrorCode::provision,
                        bind.path.string() + ": the job's sandbox should show it; it is missing");
    }
    if (auto own = check_not_verifier_own(bind.path, "the job's sandbox", verifier_paths); !own)
      return own.error();
  }
  if (job.command.empty() || !fs::path(job.command.front()).is_absolute())
    return make_error(ErrorCode::provision, "the sandboxed command needs an absolute executable");
  const fs::path executable = resolved(job.command.front());
  const bool visible = std::any_of(plan.binds.begin(), plan.binds.end(), [&](const auto& bind) {
    return bind.access != SandboxAccess::device && is_within(executable, resolved(bind.path));
  });
  if (!visible)
    return make_error(ErrorCode::provision, visibility_error(executable));
  return plan;
}

Status probe_sandbox(const SandboxConfig& config) {
  std::error_code ec;
  if (!fs::exists(config.bwrap, ec)) {
    return make_error(ErrorCode::provision,
                      "runner.process.sandbox.bwrap: " + config.bwrap.string() +
                          " is missing (install Debian's bubblewrap); without it the process "
                          "runner cannot keep jobs from the verifier. runner.trust_job_code: "
                          "true runs them unisolated (docs/security.md says what that costs)");
  }
  auto plan = plan_sandbox(config, {{}, "/", false, false, {"/usr/bin/true"}}, {});
  if (!plan)
    return plan.error();
  const auto argv = sandbox_argv(*plan);
  bp::ipstream output;
  bp::child child(argv.front(), bp::args(std::vector<std::string>(argv.begin() + 1, argv.end())),
                  bp::env(bp::environment()),
                  bp::std_in<bp::null, (bp::std_out & bp::std_err)> output,
                  only_standard_descriptors{}, ec);
  if (ec)
    return make_error(ErrorCode::provision, "starting " + argv.front() + ": " + ec.message());
  std::string said;
  for (std::string line; std::getline(output, line);) {
    if (said.size() < 4096)
      said += (said.empty() ? "" : "; ") + line;
  }
  child.wait(ec);
  const int native = child.native_exit_code();
  const int status = WIFSIGNALED(native) ? 128 + WTERMSIG(native) : WEXITSTATUS(native);
  if (!ec && status == 0)
    return {};
  const std::string hint = probe_hint(said, status);
  return make_error(
      ErrorCode::provision,
      "the process runner cannot sandbox jobs on this host: bwrap " +
          (said.empty() ? "exited with status " + std::to_string(status)
                        : "said \"" + said + "\"") +
          (hint.empty() ? "" : " (" + hint + ")") +
          ". Without the sandbox a job could read the verifier's secrets and store; "
          "runner.trust_job_code: true runs jobs unisolated (docs/security.md says what that "
          "costs)");
}

std::optional<int> sandbox_job_exit(const fs::path& status_file) {
  std::ifstream in(status_file);
  std::optional<int> exit;
  for (std::string line; std::getline(in, line);) {
    const auto doc = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (doc.is_object() && doc.contains("exit-code") && doc["exit-code"].is_number_integer())
      exit = doc["exit-code"].get<int>();
  }
  return exit;
}

}  // namespace reverify
