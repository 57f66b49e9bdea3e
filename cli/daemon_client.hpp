#pragma once
// What `reverify status|gate|trigger` share: where the daemon's API is (--url, else the
// config's api.address/port via --config, else $REVERIFY_URL, else http://127.0.0.1:8420) and
// one GET/POST against it.

#include <optional>
#include <string>

#include "cli/command.hpp"
#include "core/http_client.hpp"
#include "core/result.hpp"

namespace reverify::cli {

Result<std::string> daemon_url(const Args& args);

// GET/POST <base><path>; bearer token optional. Transport failures are errors.
Result<HttpResponse> daemon_request(const std::string& base, const std::string& method,
                                    const std::string& path, const std::string& body = "",
                                    const std::string& token = "");

}  // namespace reverify::cli
