#include "runners/kubernetes_config.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace reverify {
namespace {

Result<std::string> read_trimmed(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return make_error(ErrorCode::io, path.string() + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  return s;
}

}  // namespace

Result<KubernetesEndpoint> resolve_endpoint(const KubernetesConfig& config) {
  KubernetesEndpoint endpoint{config.api_server, config.namespace_name, config.token_file,
                              config.ca_file};
  if (config.in_cluster) {
    const auto& dir = config.service_account_dir;
    if (endpoint.token_file.empty())
      endpoint.token_file = dir / "token";
    if (endpoint.ca_file.empty())
      endpoint.ca_file = dir / "ca.crt";
    auto ns = read_trimmed(dir / "namespace");
    if (!ns)
      return make_error(ErrorCode::io, "kubernetes.in_cluster: " + ns.error().message);
    endpoint.namespace_name = *ns;
    if (endpoint.api_server.empty()) {
      const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
      const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
      if (!host || !*host) {
        return make_error(ErrorCode::invalid_argument,
                          "kubernetes.api_server: empty and KUBERNETES_SERVICE_HOST is not set "
                          "(not running in a pod?)");
      }
      const std::string h = host;
      const bool ipv6 = h.find(':') != std::string::npos;
      endpoint.api_server =
          "https://" + (ipv6 ? "[" + h + "]" : h) + ":" + (port && *port ? port : "443");
    }
  }
  while (!endpoint.api_server.empty() && endpoint.api_server.back() == '/')
    endpoint.api_server.pop_back();
  if (endpoint.api_server.rfind("https://", 0) != 0 &&
      endpoint.api_server.rfind("http://", 0) != 0) {
    return make_error(
        ErrorCode::invalid_argument,
        "kubernetes.api_server: expected an http(s):// URL, got \"" + config.api_server + "\"");
  }
  if (endpoint.namespace_name.empty()) {
    return make_error(ErrorCode::invalid_argument, "kubernetes.namespace: must not be empty");
  }
  return endpoint;
}

}  // namespace reverify
