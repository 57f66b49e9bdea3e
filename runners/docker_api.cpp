#include "runners/docker_api.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

namespace reverify {
namespace {

std::optional<std::pair<int, int>> parse_version(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos)
    return std::nullopt;
  int major = 0, minor = 0;
  const auto r1 = std::from_chars(text.data(), text.data() + dot, major);
  const auto r2 = std::from_chars(text.data() + dot + 1, text.data() + text.size(), minor);
  if (r1.ec != std::errc() || r2.ec != std::errc() || r1.ptr != text.data() + dot ||
      r2.ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return std::make_pair(major, minor);
}

}  // namespace

bool api_version_less(std::string_view a, std::string_view b) {
  const auto va = parse_version(a), vb = parse_version(b);
  return va && vb && *va < *vb;
}

DockerApi::DockerApi(std::string socket, std::string min_version)
    : socket_(std::move(socket)), min_version_(std::move(min_version)) {}

Result<std::string> DockerApi::version() {
  std::lock_guard lock(mutex_);
  if (version_)
    return *version_;
  HttpRequest request;
  request.url = "http://localhost/version";
  request.unix_socket = socket_;
  request.timeout_ms = 10000;
  auto response = http_request(request);
  if (!response) {
    return make_error(ErrorCode::provision, "the Docker engine at " + socket_ +
                                                " is not reachable: " + response.error().message);
  }
  const auto doc = nlohmann::json::parse(response->body, nullptr, false);
  if (response->status != 200 || !doc.is_object() || !doc.contains("ApiVersion") ||
      !doc["ApiVersion"].is_string()) {
    return make_error(ErrorCode::provision, "GET /version on " + socket_ +
                                                ": unexpected answer (HTTP " +
                                                std::to_string(response->status) + ")");
  }
  const std::string server = doc["ApiVersion"].get<std::string>();
  if (api_version_less(server, min_version_)) {
    return make_error(ErrorCode::provision, "the Docker engine at " + socket_ + " speaks API " +
                                                server + ", reverify needs at least " +
                                                min_version_);
  }
  version_ = api_version_less(server, kClientVersion) ? server : std::string(kClientVersion);
  return *version_;
}

Result<HttpResponse> DockerApi::call(const Call& call) {
  auto v = version();
  if (!v)
    return v.error();
  HttpRequest request;
  request.method = call.method;
  request.url = "http://localhost/v" + *v + call.path;
  request.unix_socket = socket_;
  request.body = call.body;
  if (!call.body.empty())
    request.headers.emplace_back("Content-Type", "application/json");
  request.timeout_ms = call.timeout_ms;
  request.on_body = call.on_body;
  return http_request(request);
}

std::string DockerApi::message(const HttpResponse& response) {
  const auto doc = nlohmann::json::parse(response.body, nullptr, false);
  if (doc.is_object() && doc.contains("message") && doc["message"].is_string()) {
    return doc["message"].get<std::string>();
  }
  return "HTTP " + std::to_string(response.status) + " " + response.body.substr(0, 200);
}

}  // namespace reverify
