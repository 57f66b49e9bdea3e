#include "runners/process_spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

#include "runners/job_log.hpp"

namespace reverify {
namespace {

namespace bp = boost::process;

// Writes "<word> <n>\n" with async-signal-safe calls only (runs between fork and exit).
void write_status(int fd, const char* word, int n) {
  char buf[32];
  int len = 0;
  for (const char* p = word; *p; ++p)
    buf[len++] = *p;
  buf[len++] = ' ';
  char digits[12];
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
void close_all_but(int (&keep)[3]) {
  std::sort(std::begin(keep), std::end(keep));
  unsigned next = 3;
  for (int fd : keep) {
    if (fd < 3)
      continue;
    if (static_cast<unsigned>(fd) > next)
      ::close_range(next, static_cast<unsigned>(fd) - 1, 0);
    next = static_cast<unsigned>(fd) + 1;
  }
  ::close_range(next, ~0U, 0);
}

// Copies the job's output from the pipe into the capped log until the job has ended, then what
// is still buffered in the pipe; returns the job's wait status. A descendant that keeps the pipe
// open does not keep the supervisor waiting: the job's own exit ends the copy.
int copy_output_until_exit(pid_t job, int pipe_fd, CappedLogWriter& log) {
  char buffer[16 * 1024];
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, job, 0));
  bool pipe_open = true;
  int status = 0;
  for (;;) {
    if (::waitpid(job, &status, WNOHANG) == job)
      break;
    if (!pipe_open && pidfd < 0) {
      while (::waitpid(job, &status, 0) < 0 && errno == EINTR) {
      }
      break;
    }
    pollfd fds[2];
    nfds_t count = 0;
    if (pipe_open)
      fds[count++] = {pipe_fd, POLLIN, 0};
    if (pidfd >= 0)
      fds[count++] = {pidfd, POLLIN, 0};
    // Without a pidfd (an old kernel) the job's exit is noticed within 100 ms.
    if (::poll(fds, count, pidfd >= 0 ? -1 : 100) <= 0 || !pipe_open || fds[0].revents == 0)
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

// Runs in Boost.Process's forked child just before execve: from here on only async-signal-safe
// calls (the daemon is multi-threaded). The child becomes the supervisor; its fork goes on to
// execve the job with stdout and stderr on a pipe that the supervisor copies into the capped log.
struct supervise : bp::extend::handler {
  CappedLogWriter* log;
  int log_fd;
  int status_fd;

  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::setpgid(0, 0);  // own group, whatever order the handlers run in
    int output[2];
    if (::pipe2(output, O_CLOEXEC) < 0)
      ::_exit(127);
    const int null_fd = ::open("/dev/null", O_RDWR);
    ::dup2(null_fd, 0);
    struct timespec started {};
    ::clock_gettime(CLOCK_MONOTONIC, &started);  // async-signal-safe
    const pid_t job = ::fork();
    if (job == 0) {
      // The job: nothing of the daemon's survives execve except stdin/stdout/stderr.
      ::dup2(output[1], 1);
      ::dup2(output[1], 2);
      ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
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
    int keep[3] = {log_fd, status_fd, output[0]};
    close_all_but(keep);
    const int status = copy_output_until_exit(job, output[0], *log);
    struct timespec ended {};
    ::clock_gettime(CLOCK_MONOTONIC, &ended);
    const long long ms =
        (ended.tv_sec - started.tv_sec) * 1000LL + (ended.tv_nsec - started.tv_nsec) / 1'000'000;
    const int job_ms = ms > 2'000'000'000LL ? 2'000'000'000 : static_cast<int>(ms);
    if (WIFSIGNALED(status)) {
      write_status(status_fd, "signal", WTERMSIG(status));
      write_status(status_fd, "ms", job_ms);
      ::_exit(128 + WTERMSIG(status));
    }
    write_status(status_fd, "exit", WEXITSTATUS(status));
    write_status(status_fd, "ms", job_ms);
    ::_exit(WEXITSTATUS(status));
  }
};

struct FdCloser {
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
  fields >> stat_fields.state;  // field 3
  std::string skip;
  for (int field = 4; field < 22; ++field)
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
  FdCloser status{
      ::open(request.status_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640)};
  if (status.fd < 0) {
    return make_error(ErrorCode::io,
                      request.status_file.string() + ": cannot open: " + std::strerror(errno));
  }
  CappedLogWriter log_writer(log.fd, request.log_cap_bytes);
  bp::environment env;
  for (const auto& [name, value] : request.env)
    env[name] = value;
  std::error_code ec;
  bp::group group;
  bp::child child(boost::filesystem::path(request.executable.string()), bp::args(request.args),
                  bp::env(env), bp::start_dir(request.working_dir.string()), group,
                  supervise{{}, &log_writer, log.fd, status.fd}, ec);
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

std::optional<double> read_job_seconds(const std::filesystem::path& status_file) {
  std::ifstream in(status_file);
  std::string word;
  long long n = 0;
  while (in >> word >> n) {
    if (word == "ms")
      return static_cast<double>(n) / 1000;
  }
  return std::nullopt;
}

std::optional<int> read_exit_status(const std::filesystem::path& status_file) {
  std::ifstream in(status_file);
  std::string word;
  int n = 0;
  if (!(in >> word >> n))
    return std::nullopt;
  if (word == "exit")
    return n;
  if (word == "signal")
    return 128 + n;
  return std::nullopt;
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
