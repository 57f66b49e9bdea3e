#include "pager/sender_http.hpp"

#include <algorithm>

#include "core/redact.hpp"

namespace reverify {
namespace {

constexpr std::size_t kMaxDetailChars = 1024;

}  // namespace

DeliveryResult classify_response(const Result<HttpResponse>& response) {
  DeliveryResult result;
  if (!response) {
    result.detail = response.error().message;
    result.unconfirmed = response.error().code == ErrorCode::timeout;
    return result;
  }
  const long status = response->status;
  const std::string& body = response->body;
  result.detail = "HTTP " + std::to_string(status) + (body.empty() ? "" : ": " + body);
  if (status >= 200 && status < 300) {
    result.delivered = true;
  } else if (status == 400 || status == 413 || status == 422) {
    result.permanent_failure = true;
  }
  return result;
}

long answer_timeout_ms(std::chrono::seconds configured, int attempt) {
  const auto cap = std::max(configured, kMaxAnswerTimeout);
  auto timeout = configured;
  for (int i = 1; i < attempt && timeout < cap; ++i)
    timeout *= 2;
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::min(timeout, cap)).count());
}

DeliveryResult post_json(HttpRequest request, const std::vector<std::string>& secrets,
                         const std::string& what) {
  request.method = "POST";
  request.headers.emplace_back("Content-Type", "application/json");
  const std::string url = request.url;
  DeliveryResult result = classify_response(http_request(request));
  // Transport errors name the URL, which is itself secret for Slack: name the receiver instead.
  std::vector<std::string> hidden = secrets;
  hidden.push_back(url);
  // Redact before cutting, so that no fragment of a secret survives the cut.
  result.detail = what + ": " + redact(result.detail, hidden).substr(0, kMaxDetailChars);
  return result;
}

}  // namespace reverify
