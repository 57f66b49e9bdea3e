#pragma once
// The few Kubernetes REST calls the kubernetes runner makes, over core/http_client (libcurl):
// bearer token (re-read per request, so rotated service-account tokens keep working), CA file,
// JSON bodies. Blocking; call from worker threads.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/http_client.hpp"
#include "core/result.hpp"
#include "runners/kubernetes_config.hpp"

namespace reverify {

class KubernetesApi {
 public:
  explicit KubernetesApi(KubernetesEndpoint endpoint) : endpoint_(std::move(endpoint)) {}

  const std::string& namespace_name() const { return endpoint_.namespace_name; }
  // "/apis/batch/v1/namespaces/<ns>/jobs", "/api/v1/namespaces/<ns>/pods" and
  // "/apis/networking.k8s.io/v1/namespaces/<ns>/networkpolicies".
  std::string jobs_path() const;
  std::string pods_path() const;
  std::string network_policies_path() const;

  // One request. path includes the query. body, when given, is sent as application/json.
  // on_body streams the response (watches); timeout_ms 0 = none. Transport failures and an
  // unreadable token file are errors (network / io); every HTTP status is a response.
  Result<HttpResponse> call(const std::string& method, const std::string& path,
                            const std::optional<nlohmann::json>& body = std::nullopt,
                            std::function<bool(std::string_view)> on_body = nullptr,
                            long timeout_ms = 30000) const;

  // GET returning JSON: a non-2xx status or a non-JSON body is an error with code `on_error`
  // naming the path, the status and the API server's message.
  Result<nlohmann::json> get_json(const std::string& path, ErrorCode on_error) const;

 private:
  KubernetesEndpoint endpoint_;
};

// An Error naming what was attempted, the HTTP status and the API server's Status message.
Error api_error(ErrorCode code, const std::string& what, const HttpResponse& response);

}  // namespace reverify
