#include "core/http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

namespace reverify {
namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  const HttpRequest* request;
  HttpResponse* response;
  std::size_t received = 0;
  bool too_large = false;
  bool stopped = false;
};

std::size_t on_write(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  t->received += n;
  if (t->request->on_body) {
    if (!t->request->on_body(std::string_view(data, n))) {
      t->stopped = true;
      return 0;
    }
    return n;
  }
  if (t->received > t->request->max_body_bytes) {
    t->too_large = true;
    return 0;  // aborts the transfer with CURLE_WRITE_ERROR
  }
  t->response->body.append(data, n);
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response->headers.clear();  // a new response (after 100-continue or a redirect)
    return n;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos)
    return n;
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
    value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  t->response->headers[name] = std::string(value);
  return n;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

std::string HttpResponse::header(const std::string& lowercase_name) const {
  auto it = headers.find(lowercase_name);
  return it == headers.end() ? std::string() : it->second;
}

Result<HttpResponse> http_request(const HttpRequest& request) {
  init_curl_once();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl)
    return make_error(ErrorCode::network, "curl_easy_init failed");
  CURL* c = curl.get();

  HttpResponse response;
  Transfer transfer{&request, &response};
  char error_buffer[CURL_ERROR_SIZE] = {0};

  curl_slist* raw_headers = nullptr;
  for (const auto& [name, value] : request.headers) {
    raw_headers = curl_slist_append(raw_headers, (name + ": " + value).c_str());
  }
  if (!request.bearer_token.empty()) {
    raw_headers =
        curl_slist_append(raw_headers, ("Authorization: Bearer " + request.bearer_token).c_str());
  }
  // Without this libcurl sends "Expect: 100-continue" on large bodies and waits a second.
  raw_headers = curl_slist_append(raw_headers, "Expect:");
  std::unique_ptr<curl_slist, SlistDeleter> header_list(raw_headers);

  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.method == "HEAD")
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (!request.body.empty() || request.method == "POST" || request.method == "PUT" ||
      request.method == "PATCH") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, header_list.get());
  if (!request.unix_socket.empty()) {
    curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, request.unix_socket.c_str());
  }
  if (!request.ca_file.empty())
    curl_easy_setopt(c, CURLOPT_CAINFO, request.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, request.connect_timeout_ms);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, request.timeout_ms);
  if (request.low_speed_bytes_per_s > 0 && request.low_speed_time_s > 0) {
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, request.low_speed_bytes_per_s);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, request.low_speed_time_s);
  }
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // worker threads: no SIGALRM for timeouts
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);

  CURLcode rc = curl_easy_perform(c);
  const std::string where = request.method + " " + request.url;
  if (transfer.too_large) {
    return make_error(ErrorCode::network, where + ": response body larger than " +
                                              std::to_string(request.max_body_bytes) + " bytes");
  }
  if (rc != CURLE_OK && !(transfer.stopped && rc == CURLE_WRITE_ERROR)) {
    std::string detail = error_buffer[0] ? error_buffer : curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      // Connected and the whole body sent: the peer has the request and was slow to answer.
      curl_off_t pretransfer_us = 0, uploaded = 0;
      curl_easy_getinfo(c, CURLINFO_PRETRANSFER_TIME_T, &pretransfer_us);
      curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &uploaded);
      if (pretransfer_us > 0 && uploaded == static_cast<curl_off_t>(request.body.size())) {
        return make_error(ErrorCode::timeout,
                          where + ": " + detail + " (the request was sent; no answer in time)");
      }
    }
    return make_error(ErrorCode::network, where + ": " + detail);
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

std::string url_encode(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : text) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
      out.push_back(static_cast<char>(ch));
    } else {
      out.push_back('%');
      out.push_back(hex[ch >> 4]);
      out.push_back(hex[ch & 15]);
    }
  }
  return out;
}

}  // namespace reverify
