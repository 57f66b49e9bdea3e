#include "runners/kubernetes_api.hpp"

#include "core/secret_file.hpp"
#include "runners/kubernetes_job_status.hpp"

namespace reverify {

std::string KubernetesApi::jobs_path() const {
  return "/apis/batch/v1/namespaces/" + url_encode(endpoint_.namespace_name) + "/jobs";
}

std::string KubernetesApi::pods_path() const {
  return "/api/v1/namespaces/" + url_encode(endpoint_.namespace_name) + "/pods";
}

std::string KubernetesApi::network_policies_path() const {
  return "/apis/networking.k8s.io/v1/namespaces/" + url_encode(endpoint_.namespace_name) +
         "/networkpolicies";
}

Result<HttpResponse> KubernetesApi::call(const std::string& method, const std::string& path,
                                         const std::optional<nlohmann::json>& body,
                                         std::function<bool(std::string_view)> on_body,
                                         long timeout_ms) const {
  HttpRequest request;
  request.method = method;
  request.url = endpoint_.api_server + path;
  request.ca_file = endpoint_.ca_file.string();
  request.timeout_ms = timeout_ms;
  request.on_body = std::move(on_body);
  request.headers.emplace_back("Accept", "application/json");
  if (body) {
    request.headers.emplace_back("Content-Type", "application/json");
    request.body = body->dump();
  }
  if (!endpoint_.token_file.empty()) {
    // Read again for every request: a cluster rotates service-account tokens in place.
    auto token = read_secret_file(endpoint_.token_file, "runner.kubernetes.token_file",
                                  SecretForm::opaque);
    if (!token.ok())
      return make_error(ErrorCode::io, token.error().message);
    request.bearer_token = std::move(token).value();
  }
  return http_request(request);
}

Result<nlohmann::json> KubernetesApi::get_json(const std::string& path, ErrorCode on_error) const {
  auto response = call("GET", path);
  if (!response)
    return make_error(on_error, response.error().message);
  if (response->status / 100 != 2)
    return api_error(on_error, "GET " + path, *response);
  auto doc = nlohmann::json::parse(response->body, nullptr, false);
  if (doc.is_discarded())
    return make_error(on_error, "GET " + path + ": the API server sent a body that is not JSON");
  return doc;
}

Error api_error(ErrorCode code, const std::string& what, const HttpResponse& response) {
  return make_error(code, what + ": HTTP " + std::to_string(response.status) + ": " +
                              status_message(response.body));
}

}  // namespace reverify
