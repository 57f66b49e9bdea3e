#pragma once
// Shared by the daemon's integration tests: an isolated reverifyd on a temp state dir and a free
// loopback port, a registry of slow fake-trainer model versions in a real git repository, and
// small HTTP/socket helpers. Every daemon a test starts is killed by its pid (SIGKILL) when its
// DaemonUnderTest goes, whatever state the test left it in; a test that checks a clean stop sends
// SIGTERM itself and checks the exit status (wait_exit).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/http_client.hpp"
#include "tests/support/files.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/run_program.hpp"
#include "tests/support/temp_dir.hpp"

namespace reverify::test {

namespace fs = std::filesystem;

inline int run_command(const std::string& command) {
  return std::system(command.c_str());
}

// A git repository holding a trainer (a path in the source tree; the slow trainer by default) as
// train.py, committed with fixed identities and dates.
inline std::string make_trainer_repo(
    const fs::path& repo, const std::string& script = "tests/daemon/fixtures/slow_trainer.py") {
  fs::create_directories(repo);
  fs::copy_file(source_dir() / script, repo / "train.py");
  const std::string git = "cd " + repo.string() +
                          " && GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t "
                          "GIT_COMMITTER_EMAIL=t@t GIT_AUTHOR_DATE=2026-01-01T00:00:00Z "
                          "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z ";
  if (run_command(git + "git init -q . && " + git + "git add train.py && " + git +
                  "git commit -q -m trainer") != 0) {
    throw std::runtime_error("git commit of the trainer failed");
  }
  std::string head_file = (repo / "head.txt").string();
  run_command("cd " + repo.string() + " && git rev-parse HEAD > " + head_file);
  const std::string commit = read_file(head_file).substr(0, 40);
  fs::remove(head_file);
  return commit;
}

inline nlohmann::json slow_manifest(const std::string& model, const std::string& version,
                                    const fs::path& repo, const std::string& commit,
                                    double seconds) {
  return {{"schema", "reverify.manifest/v1"},
          {"model", model},
          {"version", version},
          {"owner", "team-test"},
          {"level", "rerunnable"},
          {"code", {{"repo", repo.string()}, {"commit", commit}, {"dirty", false}}},
          {"environment", {{"env", {{"SLOW_SECONDS", std::to_string(seconds)}}}}},
          {"run",
           {{"entrypoint", {"python3", "train.py"}},
            {"started_at", "2026-01-01T00:00:00Z"},
            {"runner", "test"}}},
          {"evaluation",
           {{"primary", {{"name", "accuracy"}, {"value", 0.9}, {"higher_is_better", true}}}}},
          {"tolerance", {{"seed_runs", {{"accuracy", {0.89, 0.9, 0.91, 0.9, 0.905}}}}}}};
}

// An isolated daemon: config in dir, state in dir/state, pages appended to dir/pages.jsonl.
struct DaemonUnderTest {
  fs::path dir;
  fs::path config;
  std::uint16_t port = 0;
  pid_t pid = -1;
  // Announce the log file as the journal stream (JOURNAL_STREAM = its device:inode), as systemd
  // does for a unit's stderr: the daemon then writes syslog priorities (core/log.hpp).
  bool as_journal = false;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }

  void start() {
    pid = ::fork();
    if (pid == 0) {
      const std::string binary = (build_dir() / "daemon/reverifyd").string();
      const std::string log = (dir / "daemon.log").string();
      FILE* out = std::freopen(log.c_str(), "a", stderr);
      (void)out;
      struct stat info {};
      if (as_journal && ::fstat(STDERR_FILENO, &info) == 0) {
        const std::string stream = std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino);
        ::setenv("JOURNAL_STREAM", stream.c_str(), 1);
      }
      ::execl(binary.c_str(), binary.c_str(), "--config", config.c_str(), nullptr);
      std::_Exit(127);
    }
  }

  bool wait_ready(std::chrono::seconds limit = std::chrono::seconds(30)) const {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      HttpRequest request;
      request.url = url() + "/healthz";
      request.timeout_ms = 1000;
      auto response = http_request(request);
      if (response.ok() && response->status == 200)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  // Waits for exit; returns the exit status, or -1 if it did not exit within the limit.
  int wait_exit(std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

  void kill9() {
    if (pid <= 0)
      return;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }

  ~DaemonUnderTest() { kill9(); }

  std::string log() const { return read_file(dir / "daemon.log"); }

  // Waits until the log holds `text` after its first `from` bytes (its size before the action
  // whose line is awaited), or `limit` passes.
  bool wait_log(const std::string& text, std::size_t from,
                std::chrono::seconds limit = std::chrono::seconds(30)) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    do {
      const auto text_now = log();
      if (text_now.size() > from && text_now.find(text, from) != std::string::npos)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
  }
};

inline Result<HttpResponse> get(const std::string& url) {
  HttpRequest request;
  request.url = url;
  request.timeout_ms = 5000;
  return http_request(request);
}

// Sends raw bytes on a new connection and returns whatever comes back before the peer closes
// or `wait` passes.
inline std::string raw_exchange(std::uint16_t port, const std::string& bytes,
                                std::chrono::milliseconds wait) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return "<connect failed>";
  }
  timeval tv{};
  tv.tv_sec = wait.count() / 1000;
  tv.tv_usec = (wait.count() % 1000) * 1000;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0)
      break;
    answer.append(buffer, std::size_t(n));
  }
  ::close(fd);
  return answer;
}

}  // namespace reverify::test
