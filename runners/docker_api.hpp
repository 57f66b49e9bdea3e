#pragma once
// A thin Docker Engine API client over the engine's unix socket (core/http_client.hpp).
// Thread-safe: the negotiated version is guarded; every call is an independent request.

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "core/http_client.hpp"
#include "core/result.hpp"

namespace reverify {

// "1.41" < "1.43" compared as numbers; false for text that is not major.minor.
bool api_version_less(std::string_view a, std::string_view b);

class DockerApi {
 public:
  // The newest API this client speaks (Docker 20.10); older engines down to min_version are used
  // at their own version.
  static constexpr const char* kClientVersion = "1.41";

  DockerApi(std::string socket, std::string min_version);

  // GET /version once (again after a failure): the version used in every later path.
  // provision error when the engine is unreachable or too old.
  Result<std::string> version();

  struct Call {
    std::string method = "GET";
    std::string path;         // after the version prefix: "/containers/create?name=x"
    std::string body;         // JSON, sent with Content-Type: application/json
    long timeout_ms = 30000;  // 0 = none
    std::function<bool(std::string_view)> on_body;  // streaming
  };
  // Transport failures are network/timeout errors; every HTTP status is a response.
  Result<HttpResponse> call(const Call& call);

  // The engine's explanation of a failed call: {"message": ...} or the raw body.
  static std::string message(const HttpResponse& response);
  const std::string& socket() const { return socket_; }

 private:
  std::string socket_;
  std::string min_version_;
  std::mutex mutex_;
  std::optional<std::string> version_;
};

}  // namespace reverify
