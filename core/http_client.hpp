#pragma once
// One blocking HTTP client over libcurl for every outgoing request: registry indexes, manifest
// URLs, the Docker Engine API (unix socket), the Kubernetes API server, pagers. Blocking: call
// from a worker thread, never on the event loop.

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace reverify {

struct HttpRequest {
  std::string method = "GET";
  std::string url;  // for a unix socket: "http://localhost/v1.41/..." plus unix_socket
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string unix_socket;   // Docker: path of the engine socket
  std::string ca_file;       // TLS trust anchor (Kubernetes); empty = system store
  std::string bearer_token;  // sent as "Authorization: Bearer ..."; never logged
  long connect_timeout_ms = 5000;
  long timeout_ms = 30000;  // whole request; 0 = none (streams such as watches, waits)
  std::size_t max_body_bytes = 64 * 1024 * 1024;  // a larger body is an error, not a truncation
  // A transfer slower than this many bytes a second for low_speed_time_s seconds is cut (a
  // network error): a download with no whole-request timeout still ends. 0: no such limit.
  long low_speed_bytes_per_s = 0;
  long low_speed_time_s = 0;
  // Streaming: when set, body chunks go here instead of HttpResponse::body. Return false to stop.
  std::function<bool(std::string_view)> on_body;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // names lowercased; last value wins
  std::string body;
  std::string header(const std::string& lowercase_name) const;  // "" when absent
};

// Transport failures are an Error; any HTTP status, including 4xx/5xx, is a response. Code timeout
// means the request was sent whole and no answer came in time (the peer may have acted on it);
// every other failure (refused, DNS, TLS, a timeout while connecting or sending, a body too
// large) has code network.
Result<HttpResponse> http_request(const HttpRequest& request);

// Percent-encodes a query or path component.
std::string url_encode(std::string_view text);

}  // namespace reverify
