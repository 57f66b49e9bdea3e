#include "cli/daemon_client.hpp"

#include <cstdlib>

#include "settings/config.hpp"

namespace reverify::cli {

namespace {
constexpr const char* kDefaultUrl = "http://127.0.0.1:8420";
}  // namespace

void add_daemon_options(CLI::App& app, DaemonAddress& address) {
  app.add_option("--url", address.url,
                 "the daemon's API, e.g. http://127.0.0.1:8420; without it: the api.address and "
                 "api.port of --config, else $REVERIFY_URL, else http://127.0.0.1:8420")
      ->type_name("URL");
  app.add_option("--config", address.config,
                 "reverifyd's config file: reach the daemon at its api.address and api.port")
      ->type_name("FILE");
}

Result<std::string> daemon_url(const DaemonAddress& address) {
  if (auto url = address.url) {
    while (!url->empty() && url->back() == '/')
      url->pop_back();
    return *url;
  }
  if (address.config) {
    auto config = load_config(*address.config);
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
  return std::string(kDefaultUrl);
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
  auto response = http_request(request);
  if (!response.ok()) {
    return make_error(response.error().code,
                      response.error().message +
                          " (is reverifyd running and listening there? `systemctl status "
                          "reverifyd`; the URL comes from --url, --config, $REVERIFY_URL or the "
                          "default " +
                          kDefaultUrl + ")");
  }
  return response;
}

}  // namespace reverify::cli
