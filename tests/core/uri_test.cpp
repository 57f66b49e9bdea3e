// URI resolution against a manifest's location, local reads, and http(s) fetches (through a
// one-shot HTTP server on loopback inside the test).

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/manifest_parse.hpp"
#include "core/uri.hpp"
#include "tests/support/manifest_fixture.hpp"
#include "tests/support/temp_dir.hpp"

using reverify::local_path;
using reverify::path_stays_inside;
using reverify::percent_decode;
using reverify::read_uri;
using reverify::resolve_uri;

namespace {
// Serves one canned HTTP response to the first connection, then closes.
class OneShotServer {
 public:
  explicit OneShotServer(std::string response) : response_(std::move(response)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(listener_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
    socklen_t length = sizeof addr;
    REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &length) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~OneShotServer() {
    thread_.join();
    ::close(listener_);
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

 private:
  void serve() {
    const int client = ::accept(listener_, nullptr, nullptr);
    if (client < 0)
      return;
    std::string request;
    char buffer[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::read(client, buffer, sizeof buffer);
      if (n <= 0)
        break;
      request.append(buffer, static_cast<std::size_t>(n));
    }
    std::size_t sent = 0;
    while (sent < response_.size()) {
      const ssize_t n = ::write(client, response_.data() + sent, response_.size() - sent);
      if (n <= 0)
        break;
      sent += static_cast<std::size_t>(n);
    }
    ::close(client);
  }

  std::string response_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

std::string http_response(int status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         body;
}

}  // namespace

TEST_CASE("relative URIs resolve against the manifest's location") {
  CHECK(resolve_uri("/reg/m/v/manifest.json", "predictions.npy") == "/reg/m/v/predictions.npy");
  CHECK(resolve_uri("/reg/m/v/manifest.json", "../common/eval.npy") == "/reg/m/common/eval.npy");
  CHECK(resolve_uri("/reg/m/v/manifest.json", "/data/eval.npy") == "/data/eval.npy");
  CHECK(resolve_uri("reg/v/manifest.json", "./w.safetensors") == "reg/v/w.safetensors");
  CHECK(resolve_uri("manifest.json", "w.safetensors") == "w.safetensors");
  CHECK(resolve_uri("file:///reg/m/v/manifest.json", "p.npy") == "file:///reg/m/v/p.npy");
  CHECK(resolve_uri("https://h/m/v/manifest.json", "predictions.npy") ==
        "https://h/m/v/predictions.npy");
  CHECK(resolve_uri("https://h/m/v/manifest.json?sig=1", "../w.bin") == "https://h/m/w.bin");
  CHECK(resolve_uri("https://h:8443/m/v/manifest.json", "/top.npy") == "https://h:8443/top.npy");
  CHECK(resolve_uri("https://h", "a.npy") == "https://h/a.npy");
  CHECK(resolve_uri("https://h/m/manifest.json", "//cdn/x.npy") == "https://cdn/x.npy");
  // Absolute URIs stay as they are, whatever the base.
  CHECK(resolve_uri("/reg/manifest.json", "s3://bucket/x") == "s3://bucket/x");
  CHECK(resolve_uri("https://h/manifest.json", "file:///data/x") == "file:///data/x");
  CHECK(resolve_uri("", "x.npy") == "x.npy");
}

TEST_CASE("local paths from plain paths and file URIs") {
  CHECK(local_path("/a/b").value() == "/a/b");
  CHECK(local_path("file:///a/b%20c").value() == "/a/b c");
  CHECK(local_path("file://localhost/a").value() == "/a");
  CHECK(local_path("file://otherhost/a").error().message ==
        "\"file://otherhost/a\": file URIs must name a local absolute path (file:///path)");
  CHECK(local_path("file:///a%2").error().message == "bad percent-escape in \"/a%2\"");
  CHECK(local_path("https://h/x").error().message == "\"https://h/x\" is remote, not a local path");
  CHECK(local_path("s3://b/x").error().message ==
        "\"s3://b/x\": unsupported URI scheme (expected a path, file://, http:// or https://)");
  CHECK(reverify::is_remote_uri("HTTPS://h/x"));
  CHECK_FALSE(reverify::is_remote_uri("file:///x"));
}

TEST_CASE("local files are read whole, within the size cap") {
  const reverify::test::TempDir temp;
  const auto& dir = temp.path;
  const auto file = temp.write("m.json", "0123456789");
  CHECK(read_uri(file.string()).value() == "0123456789");
  CHECK(read_uri("file://" + file.string()).value() == "0123456789");
  auto capped = read_uri(file.string(), reverify::FetchLimits{4, 60});
  REQUIRE_FALSE(capped.ok());
  CHECK(capped.error().message == file.string() + ": 10 bytes exceeds the limit of 4 bytes");
  auto missing = read_uri((dir / "nope").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == reverify::ErrorCode::not_found);
  std::filesystem::remove_all(dir);
}

TEST_CASE("http URIs are fetched; HTTP errors and oversized bodies are errors") {
  {
    OneShotServer server(http_response(200, "{\"x\": 1}"));
    CHECK(read_uri(server.url("/m/manifest.json")).value() == "{\"x\": 1}");
  }
  {
    OneShotServer server(http_response(404, "no"));
    auto result = read_uri(server.url("/missing.json"));
    REQUIRE_FALSE(result.ok());
    CHECK(result.error().code == reverify::ErrorCode::not_found);
    CHECK(result.error().message == "GET " + server.url("/missing.json") + ": HTTP 404");
  }
  {
    OneShotServer server(http_response(200, std::string(5000, 'x')));
    auto result = read_uri(server.url("/big"), reverify::FetchLimits{1000, 60});
    CHECK_FALSE(result.ok());
  }
}

TEST_CASE("load_manifest reads a local file and records its absolute location") {
  const std::string source = reverify::test::source_dir().string();
  const std::string path = source + "/tests/core/manifests/valid_minimal.json";
  auto loaded = reverify::load_manifest(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->parse.ok());
  CHECK(loaded->location == std::filesystem::path(path).lexically_normal().string());
  CHECK(resolve_uri(loaded->location, "model.safetensors") ==
        source + "/tests/core/manifests/model.safetensors");
}

TEST_CASE("load_manifest fetches over http") {
  const std::string body = reverify::test::manifest_fixture_text("valid_minimal.json");
  OneShotServer server(http_response(200, body));
  auto loaded = reverify::load_manifest(server.url("/tiny/1/manifest.json"));
  REQUIRE(loaded.ok());
  CHECK(loaded->parse.ok());
  CHECK(loaded->location == server.url("/tiny/1/manifest.json"));
}

TEST_CASE("path_stays_inside: relative, no '..' segment; percent_decode is strict") {
  for (const char* inside : {"a", "a/b.npy", "./a", "a/./b", "a..b/c", "...", "sub dir/x"})
    CHECK(path_stays_inside(inside));
  for (const char* outside :
       {"", "/etc/passwd", "..", "../a", "a/../b", "a/..", "file:///x", "https://h/x"})
    CHECK_FALSE(path_stays_inside(outside));
  CHECK(percent_decode("max%5Fage").value() == "max_age");
  CHECK(percent_decode("%2E%2e").value() == "..");
  CHECK_FALSE(percent_decode("a%").ok());
  CHECK_FALSE(percent_decode("a%zz").ok());
  CHECK_FALSE(percent_decode("a%00").ok());
}
