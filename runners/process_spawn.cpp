#include "runners/process_spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/extend.hpp>
#include <boost/process/group.hpp>
#include <boost/process/start_dir.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "runners/job_log.hpp"
#include "runners/space_watch.hpp"

namespace reverify {
namespace {

namespace bp = boost::process;

// Writes "<word> <n>\n" with async-signal-safe calls only (runs between fork and exit).
void write_status(int fd, const char* word, unsigned long long n) {
  char buf[48];
  int len = 0;
  for (const char* p = word; *p; ++p)
    buf[len++] = *p;
  buf[len++] = ' ';
  char digits[24];
  int d = 0;
  do {
    digits[d++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0);
  while (d > 0)
    buf[len++] = digits[--d];
  buf[len++] = '\n';
  (void)!::write(fd, buf, static_cast<std::size_t>(len));
}

// Closes every descriptor from 3 up except the ones in `keep` (async-signal-safe).
template <std::size_t N>
void close_all_but(int (&keep)[N]) {
  std::sort(std::begin(keep), std::end(keep));
  unsigned next = 3;
  for (int fd : keep) {
    if (fd < 3 || static_cast<unsigned>(fd) < next)
      continue;
    if (static_cast<unsigned>(fd) > next)
      ::close_range(next, static_cast<unsigned>(fd) - 1, 0);
    next = static_cast<unsigned>(fd) + 1;
  }
  ::close_range(next, ~0U, 0);
}

// Reaps every child that ended (the job, or an orphan of it: the supervisor is their subreaper);
// sets *job_status when the job is among them and counts the others in *others. Returns false
// once no child is left.
bool reap_ended(pid_t job, int* job_status, bool* job_done, unsigned long long* others) {
  int status = 0;
  for (;;) {
    const pid_t reaped = ::waitpid(-1, &status, WNOHANG);
    if (reaped > 0) {
      if (reaped == job) {
        *job_status = status;
        *job_done = true;
      } else {
        ++*others;
      }
      continue;
    }
    return !(reaped < 0 && errno == ECHILD);
  }
}

// Copies the job's output from the pipe into the capped log until the job has ended, then what
// is still buffered in the pipe; returns the job's wait status. A descendant that keeps the pipe
// open does not keep the supervisor waiting: the job's own exit ends the copy. Orphans of the job
// that end meanwhile are reaped (at least once a second), so they hold no pid.
int copy_output_until_exit(pid_t job, int pipe_fd, CappedLogWriter& log) {
  char buffer[16 * 1024];
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, job, 0));
  bool pipe_open = true;
  bool job_done = false;
  int status = 0;
  unsigned long long orphans_reaped = 0;
  for (;;) {
    reap_ended(job, &status, &job_done, &orphans_reaped);
    if (job_done)
      break;
    pollfd fds[2];
    nfds_t count = 0;
    if (pipe_open)
      fds[count++] = {pipe_fd, POLLIN, 0};
    if (pidfd >= 0)
      fds[count++] = {pidfd, POLLIN, 0};
    // Without a pidfd (an old kernel) the job's exit is noticed within 100 ms.
    if (::poll(fds, count, pidfd >= 0 ? 1000 : 100) <= 0 || !pipe_open || fds[0].revents == 0)
      continue;
    const ssize_t n = ::read(pipe_fd, buffer, sizeof buffer);
    if (n > 0)
      log.write(buffer, static_cast<std::size_t>(n));
    else if (n == 0 || (errno != EINTR && errno != EAGAIN))
      pipe_open = false;
  }
  if (pipe_open) {
    ::fcntl(pipe_fd, F_SETFL, O_NONBLOCK);
    // Bounded: a descendant still writing cannot keep the supervisor here.
    for (int reads = 0; reads < 1024; ++reads) {
      const ssize_t n = ::read(pipe_fd, buffer, sizeof buffer);
      if (n <= 0)
        break;
      log.write(buffer, static_cast<std::size_t>(n));
    }
  }
  return status;
}

// "/proc/self/task/<pid>/children" for the calling (single-threaded) process.
void children_path(char (&path)[64]) {
  const char prefix[] = "/proc/self/task/";
  int len = 0;
  for (const char* p = prefix; *p; ++p)
    path[len++] = *p;
  char digits[12];
  int d = 0;
  for (unsigned long pid = static_cast<unsigned long>(::getpid()); pid > 0; pid /= 10)
    digits[d++] = static_cast<char>('0' + pid % 10);
  while (d > 0)
    path[len++] = digits[--d];
  const char suffix[] = "/children";
  for (const char* p = suffix; *p; ++p)
    path[len++] = *p;
  path[len] = '\0';
}

long long ms_since(const struct timespec& start) {
  struct timespec now {};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start.tv_sec) * 1000LL + (now.tv_nsec - start.tv_nsec) / 1'000'000;
}

// Once the job ended: SIGKILLs every process still below the supervisor (the job's orphans are
// its children, as their subreaper; their own children become its children as they die) and
// reaps them, until none is left or limit_ms passed (a process stuck in the kernel is not worth
// holding the job's status for: the daemon kills its cgroup again). Returns how many processes
// it reaped: each one once, so never more than ever existed (a kill() of a process that is
// already dying succeeds again, and counting kills counted it twice).
unsigned long long kill_leftovers(long long limit_ms) {
  char path[64];
  children_path(path);
  struct timespec start {};
  ::clock_gettime(CLOCK_MONOTONIC, &start);
  unsigned long long reaped = 0;
  char list[8192];
  int ignored = 0;
  bool ignored_done = false;
  while (reap_ended(-1, &ignored, &ignored_done, &reaped) && ms_since(start) < limit_ms) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return reaped;  // no children file (CONFIG_PROC_CHILDREN): the cgroup is the safety net
    ssize_t size = 0;
    for (ssize_t n;
         size < static_cast<ssize_t>(sizeof list) &&
         (n = ::read(fd, list + size, sizeof list - static_cast<std::size_t>(size))) > 0;)
      size += n;
    ::close(fd);
    pid_t pid = 0;
    for (ssize_t i = 0; i <= size; ++i) {
      if (i < size && list[i] >= '0' && list[i] <= '9') {
        pid = pid * 10 + (list[i] - '0');
        continue;
      }
      if (pid > 0)
        ::kill(pid, SIGKILL);
      pid = 0;
    }
    struct timespec pause {
      0, 1'000'000
    };
    ::nanosleep(&pause, nullptr);
  }
  return reaped;
}

// clone3(2)'s arguments up to `cgroup` (the kernel's struct clone_args, version 2).
struct CloneArgs {
  std::uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
      set_tid_size, cgroup;
};
constexpr std::uint64_t kCloneIntoCgroup = 0x200000000ULL;  // CLONE_INTO_CGROUP, Linux 5.7

// Forks the job straight into the cgroup v2 folder `cgroup_dir` (an open descriptor; -1 = none):
// a process created there needs no migration, and migrating one into a v2 cgroup waits out an
// RCU grace period (about 20 ms here). *cloned_in says whether it worked; a kernel without
// clone3 or CLONE_INTO_CGROUP gets a plain fork() and the job joins by writing cgroup.procs.
pid_t fork_job(int cgroup_dir, bool* cloned_in) {
  *cloned_in = false;
  if (cgroup_dir >= 0) {
    CloneArgs args{};
    args.flags = kCloneIntoCgroup;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<std::uint64_t>(cgroup_dir);
    const long pid = ::syscall(SYS_clone3, &args, sizeof args);
    if (pid >= 0) {
      *cloned_in = true;
      return static_cast<pid_t>(pid);
    }
  }
  return ::fork();
}

// What the job's first process does before execve (async-signal-safe calls only): joins its
// cgroups, takes its bounds, and offers itself first to the host's OOM killer.
struct JobSetup {
  int v2_dir = -1;    // the job's v2 cgroup folder, to be forked into
  int v2_procs = -1;  // its cgroup.procs, to join when that fork could not
  const int* v1_procs = nullptr;
  std::size_t v1_count = 0;
  std::uint64_t max_open_files = 0;
  std::uint64_t max_processes = 0;
  int status_fd = -1;
  const int* inherited = nullptr;  // kept open across execve
  std::size_t inherited_count = 0;

  // Returns false (after reporting "setup <errno>") when the job may not run.
  bool apply(bool cloned_in) const {
    const auto join = [&](int procs) {
      if (procs < 0 || ::write(procs, "0", 1) == 1)
        return true;
      write_status(status_fd, "setup", static_cast<unsigned long long>(errno));
      return false;
    };
    if (!cloned_in && !join(v2_procs))
      return false;
    for (std::size_t i = 0; i < v1_count; ++i) {
      if (!join(v1_procs[i]))
        return false;
    }
    const auto bound = [](int resource, std::uint64_t value) {
      if (value == 0)
        return;
      struct rlimit limit {
        static_cast<rlim_t>(value), static_cast<rlim_t>(value)
      };
      if (::setrlimit(resource, &limit) == 0 || ::getrlimit(resource, &limit) != 0)
        return;
      // An unprivileged daemon cannot raise its hard limit: the job gets the lower of the two.
      limit.rlim_cur = limit.rlim_max;
      (void)::setrlimit(resource, &limit);
    };
    bound(RLIMIT_NOFILE, max_open_files);
    bound(RLIMIT_NPROC, max_processes);
    const int adj = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (adj >= 0) {
      (void)!::write(adj, "1000", 4);
      ::close(adj);
    }
    return true;
  }
};

// Runs in Boost.Process's forked child just before execve: from here on only async-signal-safe
// calls (the daemon is multi-threaded). The child becomes the supervisor; its fork goes on to
// execve the job with stdout and stderr on a pipe that the supervisor copies into the capped log.
struct supervise : bp::extend::handler {
  CappedLogWriter* log;
  int log_fd;
  int status_fd;
  int tail_fd;
  JobSetup setup;

  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::setpgid(0, 0);  // own group, whatever order the handlers run in
    // Orphans of the job come here, never to init; waitpid must see them (and the job).
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &default_action, nullptr);
    int output[2];
    if (::pipe2(output, O_CLOEXEC) < 0)
      ::_exit(127);
    const int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(null_fd, 0);
    struct timespec started {};
    ::clock_gettime(CLOCK_MONOTONIC, &started);  // async-signal-safe
    bool cloned_in = false;
    const pid_t job = fork_job(setup.v2_dir, &cloned_in);
    if (job == 0) {
      // The job: nothing of the daemon's survives execve except stdin/stdout/stderr.
      if (!setup.apply(cloned_in))
        ::_exit(127);
      ::dup2(output[1], 1);
      ::dup2(output[1], 2);
      ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
      for (std::size_t i = 0; i < setup.inherited_count; ++i)
        ::fcntl(setup.inherited[i], F_SETFD, 0);
      return;
    }
    if (job < 0)
      ::_exit(127);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE})
      ::sigaction(sig, &ignore, nullptr);
    // The supervisor keeps none of the daemon's descriptors (closing them also closes Boost's
    // error pipe, so the daemon stops waiting for execve here; the job's own copy still reports
    // an execve failure), and only the job holds the pipe's write end.
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    int keep[4] = {log_fd, status_fd, tail_fd, output[0]};
    close_all_but(keep);
    const int status = copy_output_until_exit(job, output[0], *log);
    const long long ms = ms_since(started);
    const unsigned long long job_ms =
        ms > 2'000'000'000LL ? 2'000'000'000ULL : static_cast<unsigned long long>(ms);
    const unsigned long long leftovers = kill_leftovers(10'000);
    if (WIFSIGNALED(status))
      write_status(status_fd, "signal", static_cast<unsigned long long>(WTERMSIG(status)));
    else
      write_status(status_fd, "exit", static_cast<unsigned long long>(WEXITSTATUS(status)));
    write_status(status_fd, "ms", job_ms);
    write_status(status_fd, "leftovers", leftovers);
    if (log->write_errno() != 0) {
      write_status(status_fd, "log_error", static_cast<unsigned long long>(log->write_errno()));
      write_status(status_fd, "log_written", log->written_before_error());
      write_status(status_fd, "tail", log->save_tail(tail_fd));
    }
    ::_exit(WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status));
  }
};

struct FdCloser {
  explicit FdCloser(int descriptor) : fd(descriptor) {}
  FdCloser(FdCloser&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

}  // namespace

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close_paren = stat.rfind(')');
  if (close_paren == std::string::npos)
    return std::nullopt;
  std::istringstream fields(stat.substr(close_paren + 2));
  ProcStat stat_fields;
  fields >> stat_fields.state >> stat_fields.parent;  // fields 3 and 4
  std::string skip;
  for (int field = 5; field < 22; ++field)
    fields >> skip;
  if (!(fields >> stat_fields.start_ticks))
    return std::nullopt;
  return stat_fields;
}

bool is_alive(const ProcessIdentity& process) {
  if (process.pid <= 0)
    return false;
  const auto stat = read_proc_stat(process.pid);
  return stat && stat->start_ticks == process.start_ticks && stat->state != 'Z' &&
         stat->state != 'X';
}

// Opens (creating, emptied) a file the supervisor writes at the end, with `bytes` reserved
// beyond its end: its writes then need no new block on a disk the job has filled meanwhile.
Result<int> reserved_file(const std::filesystem::path& path, std::size_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0)
    return make_error(ErrorCode::io, path.string() + ": cannot open: " + std::strerror(errno));
  if (::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(bytes)) != 0 &&
      (errno == ENOSPC || errno == EDQUOT)) {
    const int error = errno;
    ::close(fd);
    return make_error(ErrorCode::infra,
                      path.string() + ": cannot reserve " + std::to_string(bytes) +
                          " bytes before the job starts: " + describe_errno(error));
  }
  return fd;  // a file system without fallocate (EOPNOTSUPP) is written as it comes
}

Result<ProcessIdentity> spawn_supervised(const SpawnRequest& request) {
  if (request.log_cap_bytes < kMinJobLogCapBytes) {
    return make_error(ErrorCode::invalid_argument,
                      "job.log cap of " + std::to_string(request.log_cap_bytes) +
                          " bytes: must be at least " + std::to_string(kMinJobLogCapBytes));
  }
  // Read and write, not O_APPEND: the writer moves the tail down when it cuts the log.
  FdCloser log{::open(request.log_file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0640)};
  if (log.fd < 0)
    return make_error(ErrorCode::io,
                      request.log_file.string() + ": cannot open: " + std::strerror(errno));
  auto status_fd = reserved_file(request.status_file, 4096);
  if (!status_fd)
    return status_fd.error();
  FdCloser status{*status_fd};
  auto tail_fd = reserved_file(request.tail_file, kJobTailBytes);
  if (!tail_fd)
    return tail_fd.error();
  FdCloser tail{*tail_fd};
  // Descriptors the job's first process uses before execve (O_CLOEXEC: gone after it).
  std::vector<FdCloser> cgroups;
  const auto open_cgroup_file = [&](const std::filesystem::path& path, int flags) -> Status {
    cgroups.emplace_back(::open(path.c_str(), flags | O_CLOEXEC));
    if (cgroups.back().fd < 0) {
      return make_error(ErrorCode::provision,
                        path.string() + ": cannot open the job's cgroup: " + std::strerror(errno));
    }
    return {};
  };
  JobSetup setup;
  if (!request.cgroup_v2.empty()) {
    if (auto opened = open_cgroup_file(request.cgroup_v2, O_RDONLY | O_DIRECTORY); !opened)
      return opened.error();
    setup.v2_dir = cgroups.back().fd;
    if (auto opened = open_cgroup_file(request.cgroup_v2 / "cgroup.procs", O_WRONLY); !opened)
      return opened.error();
    setup.v2_procs = cgroups.back().fd;
  }
  std::vector<int> v1_procs;
  for (const auto& dir : request.cgroups_v1) {
    if (auto opened = open_cgroup_file(dir / "cgroup.procs", O_WRONLY); !opened)
      return opened.error();
    v1_procs.push_back(cgroups.back().fd);
  }
  CappedLogWriter log_writer(log.fd, request.log_cap_bytes);
  setup.v1_procs = v1_procs.data();
  setup.v1_count = v1_procs.size();
  setup.max_open_files = request.max_open_files;
  setup.max_processes = request.max_processes;
  setup.status_fd = status.fd;
  setup.inherited = request.inherited_fds.data();
  setup.inherited_count = request.inherited_fds.size();
  bp::environment env;
  for (const auto& [name, value] : request.env)
    env[name] = value;
  std::error_code ec;
  bp::group group;
  bp::child child(boost::filesystem::path(request.executable.string()), bp::args(request.args),
                  bp::env(env), bp::start_dir(request.working_dir.string()), group,
                  supervise{{}, &log_writer, log.fd, status.fd, tail.fd, setup}, ec);
  if (ec) {
    return make_error(ErrorCode::provision, "starting " + request.executable.string() + " in " +
                                                request.working_dir.string() + ": " + ec.message());
  }
  const pid_t pid = child.id();
  // The job outlives this object and, after a restart, this daemon: wait() reaps and kills it.
  child.detach();
  group.detach();
  // Not reaped yet, so even a job that already ended still has its /proc entry (a zombie).
  const auto stat = read_proc_stat(pid);
  if (!stat)
    return make_error(ErrorCode::runner_lost,
                      "the job's supervisor " + std::to_string(pid) + " vanished");
  return ProcessIdentity{pid, stat->start_ticks};
}

SupervisorReport read_supervisor_report(const std::filesystem::path& status_file) {
  SupervisorReport report;
  std::ifstream in(status_file);
  std::string word;
  long long n = 0;
  while (in >> word >> n) {
    if (n < 0)
      continue;
    const auto value = static_cast<std::uint64_t>(n);
    if (word == "exit" && !report.exit_status)
      report.exit_status = static_cast<int>(n);
    else if (word == "signal" && !report.exit_status)
      report.exit_status = 128 + static_cast<int>(n);
    else if (word == "ms")
      report.job_seconds = static_cast<double>(n) / 1000;
    else if (word == "leftovers")
      report.leftovers_killed = value;
    else if (word == "log_error")
      report.log_errno = static_cast<int>(n);
    else if (word == "log_written")
      report.log_bytes_before_error = value;
    else if (word == "tail")
      report.tail_bytes = value;
    else if (word == "setup")
      report.setup_errno = static_cast<int>(n);
  }
  return report;
}

Result<std::filesystem::path> find_executable(const std::string& argv0, const std::string& path_env,
                                              const std::filesystem::path& workdir) {
  const auto is_executable_file = [](const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
  };
  if (argv0.find('/') != std::string::npos) {
    const std::filesystem::path path =
        std::filesystem::path(argv0).is_absolute() ? std::filesystem::path(argv0) : workdir / argv0;
    if (is_executable_file(path))
      return path;
    return make_error(ErrorCode::provision, path.string() + " is not an executable file");
  }
  std::string::size_type start = 0;
  while (start <= path_env.size()) {
    const auto end = std::min(path_env.find(':', start), path_env.size());
    const auto path = std::filesystem::path(path_env.substr(start, end - start)) / argv0;
    if (end > start && is_executable_file(path))
      return path;
    start = end + 1;
  }
  return make_error(ErrorCode::provision, argv0 + ": not found on the PATH " + path_env);
}

void reap_if_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) < 0 && errno == EINTR) {
  }
}

}  // namespace reverify
