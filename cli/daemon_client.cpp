#include "cli/daemon_client.hpp"

#include <cstdlib>

#include "settings/config.hpp"

namespace reverify::cli {

Result<std::string> daemon_url(const Args& args) {
  if (auto url = args.option("url")) {
    while (!url->empty() && url->back() == '/')
      url->pop_back();
    return *url;
  }
  if (auto path = args.option("config")) {
    auto config = load_config(*path);
    if (!config.ok())
      return config.error();
    const auto& api = config->api;
    // A daemon listening on every address is reached on loopback from the same machine.
    std::string host = api.address == "0.0.0.0" ? "127.0.0.1"
                       : api.address == "::"    ? "[::1]"
                                                : api.address;
    if (host.find(':') != std::string::npos && host.front() != '[')
      host = "[" + host + "]";
    return "http://" + host + ":" + std::to_string(api.port);
  }
  if (const char* env = std::getenv("REVERIFY_URL"); env && *env)
    return std::string(env);
  return std::string("http://127.0.0.1:8420");
}

Result<HttpResponse> daemon_request(const std::string& base, const std::string& method,
                                    const std::string& path, const std::string& body,
                                    const std::string& token) {
  HttpRequest request;
  request.method = method;
  request.url = base + path;
  request.body = body;
  request.bearer_token = token;
  request.timeout_ms = 30000;
  if (!body.empty())
    request.headers.emplace_back("Content-Type", "application/json");
  return http_request(request);
}

}  // namespace reverify::cli
