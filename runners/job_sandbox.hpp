#pragma once
// A job's sandbox, for the runners that start a job as a local process (the process runner; a
// runner that starts one on another machine may reuse it there): Debian's bubblewrap (bwrap)
// shows the job /usr and the /bin, /lib* links read-only, a few /etc files (the loader's cache,
// time zone, users, certificates), its checkout and contract inputs read-only, its out folder
// writable, a private /tmp and /dev/shm, a fresh /proc of its own PID namespace and a minimal
// /dev, in a root that is read-only everywhere else. Nothing of the verifier is in that view:
// not its config, secrets, state directory, store, scratch records (job.json, exit_status) or
// process. Its network namespace is its own, with no interface but a loopback of its own, unless
// the job's model declares network (models.<name>.network: allow); an undeclared network read
// would be a hidden live input.
//
// Why bubblewrap: it builds the view from nothing (only what is bound exists), it needs no
// daemon, no setuid helper and no systemd at run time (a transient unit needs a bus and a
// manager, which `reverify run` and the tests do not have), and it is Debian's. A second uid
// alone would still show the job the whole host file system and network.
//
// Two modes, by the daemon's uid (sandbox_argv()):
// - an unprivileged daemon (the shipped unit's User=reverify): bwrap makes a user namespace that
//   maps the daemon's uid to itself, and forbids the job any further one (--disable-userns). It
//   needs unprivileged user namespaces, and under systemd the namespaces and mount calls the unit
//   allows (systemd/reverifyd.service), and a /proc that nothing is mounted over (the kernel
//   refuses a fresh /proc in a user namespace where part of the old one is hidden, as systemd's
//   ProtectKernelTunables= hides /proc/sys).
// - root: bwrap runs privileged (no user namespace needed) and the job runs as job_uid:job_gid,
//   with no groups, no capabilities and no_new_privs, through setpriv(1): a job running as uid 0
//   could write kernel settings through the fresh /proc/sys.
//
// Lifetime and signals: the PID namespace's init is bwrap's own. When the job's first process
// ends, the kernel kills whatever is left in the namespace (setsid() and double forks included);
// --die-with-parent ends the namespace when the job's supervisor dies, so no descendant outlives
// a killed supervisor, with or without cgroups. The two bwrap processes above the job (the
// monitor, which is the supervisor's child, and the namespace's init below it) forward no signal
// and the monitor dies of a SIGTERM: a SIGTERM meant for the job skips them (job_processes.hpp).
// bwrap exits with the job's status (128 + N for a signal N); its own failures to build the
// sandbox exit 1 before the job runs, told apart by the status it writes to a file
// (sandbox_job_exit()).

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace reverify {

// runner.process.sandbox in reverify.yaml.
struct SandboxConfig {
  std::filesystem::path bwrap = "/usr/bin/bwrap";
  // More host paths the job sees read-only, at the same path: an interpreter or libraries outside
  // /usr (/opt/conda), a shared read-only cache. Never the verifier's own files (checked).
  std::vector<std::filesystem::path> read_only;
  // Host folders the job may write, at the same path (a shared cache). Never the verifier's own.
  std::vector<std::filesystem::path> writable;
  // Device nodes the job may use (bound with device access). A job whose manifest asks for GPUs
  // gets every /dev/nvidia* present and /sys read-only besides.
  std::vector<std::filesystem::path> devices;
  std::uint64_t tmp_bytes = 1024ULL * 1024 * 1024;  // the job's /tmp (memory-backed)
  // When reverifyd runs as root: the uid and gid the job runs as (nobody by default).
  std::uint32_t job_uid = 65534;
  std::uint32_t job_gid = 65534;

  bool operator==(const SandboxConfig&) const = default;
};

// The read-only system paths every sandbox shows when they exist: /usr and the /etc files that
// programs read without asking (dynamic loader, time zone, user names, certificates, Python's
// site configuration). /bin, /sbin and /lib* are mirrored as the host has them (links or folders).
const std::vector<std::filesystem::path>& sandbox_system_paths();

enum class SandboxAccess { read_only, writable, device };

// A host path shown to the job at the same path.
struct SandboxBind {
  std::filesystem::path path;  // absolute, normal
  SandboxAccess access = SandboxAccess::read_only;
  bool optional = false;  // skipped when missing (system paths)
};

struct SandboxLink {
  std::filesystem::path link;    // /bin
  std::filesystem::path target;  // usr/bin
};

// Everything one sandboxed start needs; sandbox_argv() turns it into bwrap's argv.
struct SandboxPlan {
  std::filesystem::path bwrap;
  std::vector<SandboxLink> links;
  std::vector<SandboxBind> binds;  // system paths first, then the job's (sorted by the argv)
  std::filesystem::path workdir;   // the job's working folder (inside a bind)
  bool network = false;            // keep the host's network namespace
  bool as_root = false;            // the daemon is root: bwrap privileged, the job as job_uid
  std::uint32_t job_uid = 65534, job_gid = 65534;
  std::uint64_t tmp_bytes = 0;
  int status_fd = -1;                // bwrap's --json-status-fd; -1 = none
  std::vector<std::string> command;  // the job's absolute executable, then its arguments
};

// bwrap's argv (argv[0] included) for a plan. Pure: no file is looked at. bwrap mounts in argv
// order: the links, /proc, /dev, the tmpfs folders, every folder above a bind's path that no bind
// provides (0755: bwrap running as root would make them 0700, out of the job's uid's reach), the
// system binds, the job's binds (parents before children), then the root made read-only.
std::vector<std::string> sandbox_argv(const SandboxPlan& plan);

// What a job shows through its sandbox besides the system paths: its binds, working folder,
// network, command, and whether it asked for GPUs.
struct SandboxJob {
  std::vector<SandboxBind> binds;
  std::filesystem::path workdir;
  bool network = false;
  bool gpus = false;
  std::vector<std::string> command;
};

// The plan for a job under `config`: the system paths and links as this host has them, the
// job's binds, the config's read_only, writable and devices, GPU devices when asked for.
// error:provision when a bind is not absolute, missing (other than a system path), would show the
// job one of `verifier_paths` (check_not_verifier_own()), or when the command's executable is
// outside everything the sandbox shows (it names the config key that would show it).
Result<SandboxPlan> plan_sandbox(const SandboxConfig& config, const SandboxJob& job,
                                 const std::vector<std::filesystem::path>& verifier_paths);

// error:provision when showing `shown` to a job would show it one of the verifier's own paths
// (`verifier_paths`: the config file, the secret files, the store, the state directory's
// records): `shown` is, contains or lies inside one of them. `what` names the field or key that
// asked for it. Shared by the runners that show a job host paths (process, docker, kubernetes).
Status check_not_verifier_own(const std::filesystem::path& shown, const std::string& what,
                              const std::vector<std::filesystem::path>& verifier_paths);

// Runs a trivial command in a sandbox like a job's (the same namespaces, /proc, mode), once:
// {} when it works, else error:provision with bwrap's own words, what they most likely mean on
// this host (bubblewrap missing, user namespaces off, a /proc partly hidden, a unit's namespace
// or system call filter), and that runner.trust_job_code is the way to run jobs unisolated.
// Blocks for about 30 ms.
Status probe_sandbox(const SandboxConfig& config);

// The job's exit status bwrap recorded in its --json-status-fd file, when the job ran; nullopt
// when the file holds none: bwrap failed before the job started (its message is in the job's
// log), or it was killed first.
std::optional<int> sandbox_job_exit(const std::filesystem::path& status_file);

}  // namespace reverify
