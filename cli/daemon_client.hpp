#pragma once
// What `reverify status|gate|trigger` share: where the daemon's API is (--url, else the
// config's api.address/port via --config, else $REVERIFY_URL, else http://127.0.0.1:8420) and
// one GET/POST against it, with a hint when no daemon answers.

#include <optional>
#include <string>

#include "cli/command.hpp"
#include "core/http_client.hpp"
#include "core/result.hpp"

namespace reverify::cli {

struct DaemonAddress {
  std::optional<std::string> url;
  std::optional<std::string> config;
};

// Declares --url and --config (with the lookup order in their help).
void add_daemon_options(CLI::App& app, DaemonAddress& address);

Result<std::string> daemon_url(const DaemonAddress& address);

// GET/POST <base><path>; bearer token optional. Transport failures are errors whose message
// says how the URL was chosen and that reverifyd may not be running.
Result<HttpResponse> daemon_request(const std::string& base, const std::string& method,
                                    const std::string& path, const std::string& body = "",
                                    const std::string& token = "");

}  // namespace reverify::cli
