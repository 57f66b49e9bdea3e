#pragma once
// A verifier for a hostile job (fixtures/hostile_job.py) to attack, played by the test process:
// its secret files (API token, pager keys, webhook and Alertmanager tokens, Slack URL, the
// attestation signing key), its config and store in a state folder, its own pid and
// environment, an HTTP port listening on every address (the API), a unix socket (a container
// engine's), and files the job should never be able to create. targets() is what the job is told
// to try (HOSTILE_TARGETS); expect_blocked() asserts each attempt failed, one CHECK per attempt,
// reading the job's attempts.json and the host's files, never the job's word alone (a write to a
// private /tmp succeeds in the job's own view and must not appear on the host).
#include <doctest/doctest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/hashing.hpp"
#include "tests/support/files.hpp"
#include "tests/support/temp_dir.hpp"

namespace reverify::test {

// A non-loopback IPv4 address of this host ("" when it has none): the job's "outside address",
// reachable from the host's network namespace through the listener on 0.0.0.0.
inline std::string host_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0)
    return "";
  std::string found;
  for (auto* a = list; a && found.empty(); a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET)
      continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (ntohl(in->sin_addr.s_addr) >> 24 == 127)
      continue;
    char text[INET_ADDRSTRLEN];
    found = ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
  }
  ::freeifaddrs(list);
  return found;
}

// The first entry of this process's environment as execve gave it (what /proc/<pid>/environ
// shows of it): proof that a read of that file reached the verifier's process.
inline std::string own_environment_entry() {
  const std::string environ = read_file("/proc/self/environ");
  return environ.substr(0, environ.find('\0'));
}

struct HostileLab {
  TempDir tmp{"reverify-hostile-"};
  std::filesystem::path etc = tmp.path / "etc" / "reverify";
  std::filesystem::path state = tmp.path / "state";
  std::map<std::string, std::filesystem::path> secrets;  // attempt name -> file
  std::filesystem::path config = etc / "reverify.yaml";
  std::filesystem::path store = state / "reverify.db";
  std::filesystem::path host_tmp_file;
  int tcp = -1, unix_socket = -1;
  std::uint16_t port = 0;
  std::filesystem::path socket_path = tmp.path / "engine.sock";
  std::string token;

  HostileLab() {
    std::random_device random;
    const auto secret = [&](const std::string& name, const std::filesystem::path& file) {
      write_file(file, name + " " + std::to_string(random()) + std::to_string(random()) + "\n");
      std::filesystem::permissions(
          file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
      secrets[name] = file;
    };
    secret("read api.token", etc / "api.token");
    secret("read the PagerDuty routing key", etc / "pagerduty.key");
    secret("read the webhook token", etc / "webhook.token");
    secret("read the Alertmanager token", etc / "alertmanager.token");
    secret("read the Slack URL", etc / "slack.url");
    secret("read the attestation key", state / "attest" / "ed25519.pem");
    secret("read the config", config);
    token = read_file(etc / "api.token");
    token.pop_back();
    write_file(store, "SQLite format 3\n");
    host_tmp_file =
        "/tmp/reverify-hostile-" + std::to_string(::getpid()) + "-" + std::to_string(random());
    listen_tcp();
    listen_unix();
  }

  ~HostileLab() {
    ::close(tcp);
    ::close(unix_socket);
    std::error_code ec;
    std::filesystem::remove(host_tmp_file, ec);
  }

  // The verifier's own files, as the config loader lists them for the runners.
  std::vector<std::filesystem::path> verifier_paths() const {
    std::vector<std::filesystem::path> paths = {store, config};
    for (const auto& [name, file] : secrets)
      paths.push_back(file);
    return paths;
  }

  struct Write {
    std::string target;             // what the job is told (hostile_job.py's "@out_parent/")
    std::filesystem::path on_host;  // where it would land on the host
  };
  // Files the job tries to create: beside its out folder (in work_dir, its scratch folder holding
  // the runner's records), in the state folder, in the host's /tmp.
  std::map<std::string, Write> writes(const std::filesystem::path& work_dir) const {
    return {{"write beside the out folder (the scratch records)",
             {"@out_parent/forged_exit_status", work_dir / "forged_exit_status"}},
            {"write into the state folder", {(state / "forged").string(), state / "forged"}},
            {"write into the host's /tmp", {host_tmp_file.string(), host_tmp_file}}};
  }

  // Which of the job's writes reached the host (look before the scratch folder is removed).
  std::map<std::string, bool> written(const std::filesystem::path& work_dir) const {
    std::map<std::string, bool> found;
    for (const auto& [name, write] : writes(work_dir))
      found[name] = std::filesystem::exists(write.on_host);
    return found;
  }

  nlohmann::json targets(const std::filesystem::path& work_dir) const {
    nlohmann::json t;
    for (const auto& [name, file] : secrets)
      t["read"][name] = file.string();
    t["open_rw"]["open the store read-write"] = store.string();
    t["environ"]["read the verifier's /proc/<pid>/environ"] = {::getpid(), own_environment_entry()};
    t["signal"]["signal the verifier (kill -0)"] = ::getpid();
    t["http"]["POST /v1/verifications without a token"] = {"127.0.0.1", port, nullptr};
    t["http"]["POST /v1/verifications with the token"] = {"127.0.0.1", port, token};
    t["connect"]["connect to the verifier's port on 127.0.0.1"] = {"127.0.0.1", port};
    if (const auto address = host_address(); !address.empty())
      t["connect"]["connect to an outside address"] = {address, port};
    else
      MESSAGE("this host has no non-loopback IPv4 address: no outside connect attempt");
    t["unix"]["connect to the container engine's socket"] = socket_path.string();
    for (const auto& [name, write] : writes(work_dir))
      t["write"][name] = write.target;
    return t;
  }

  // Every attempt in the job's attempts.json failed, and none of its writes reached the host
  // (`written`, from written()). Returns how many attempts were checked.
  std::size_t expect_blocked(const nlohmann::json& attempts, const std::filesystem::path& work_dir,
                             const std::map<std::string, bool>& written) const {
    const auto asked = targets(work_dir);
    std::size_t checked = 0;
    for (const auto& [kind, named] : asked.items()) {
      for (const auto& [name, target] : named.items()) {
        CAPTURE(name);
        REQUIRE_MESSAGE(attempts.contains(name), "the job did not report " << name);
        const auto& attempt = attempts[name];
        INFO(attempt["detail"].get<std::string>());
        ++checked;
        if (kind == "write") {
          // Judged on the host: the job's own view may hold a private file of that name.
          CHECK_FALSE(written.at(name));
          continue;
        }
        CHECK_FALSE(attempt["succeeded"].get<bool>());
        if (kind == "read") {
          const std::string secret = read_file(target.get<std::string>());
          CHECK(attempt["detail"].get<std::string>().find(sha256_hex(secret)) == std::string::npos);
        }
      }
    }
    return checked;
  }

 private:
  void listen_tcp() {
    tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    REQUIRE(::bind(tcp, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(tcp, 16) == 0);
    socklen_t length = sizeof address;
    ::getsockname(tcp, reinterpret_cast<sockaddr*>(&address), &length);
    port = ntohs(address.sin_port);
  }

  void listen_unix() {
    unix_socket = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(socket_path.string().size() < sizeof address.sun_path);
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
    REQUIRE(::bind(unix_socket, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(unix_socket, 16) == 0);
    ::chmod(socket_path.c_str(), 0666);
  }
};

}  // namespace reverify::test
