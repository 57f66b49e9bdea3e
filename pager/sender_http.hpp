#pragma once
// What every HTTP sender shares: one POST classified into a
// DeliveryResult, and redaction so that no secret reaches a detail, a log line or the API.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/http_client.hpp"
#include "pager/notifier.hpp"

namespace reverify {

// How a receiver's answer is treated: 2xx delivered; 400, 413, 422 (the event itself is bad)
// rejected for good; a request sent whole with no answer in time is unconfirmed; everything else
// (408, 429, 5xx, 401/403/404 that a config reload fixes, and transport errors) tried again later.
DeliveryResult classify_response(const Result<HttpResponse>& response);

// How long attempt `attempt` (from 1) waits for the receiver's answer: the configured timeout,
// doubled on every later attempt up to max(configured, kMaxAnswerTimeout). A receiver that is
// merely slower than the configured timeout is answered within a few attempts instead of getting
// a copy on every attempt until the last.
inline constexpr std::chrono::seconds kMaxAnswerTimeout{300};
long answer_timeout_ms(std::chrono::seconds configured, int attempt);

// POSTs a JSON body and classifies the answer; `what` names the receiver in details (never the
// URL when the URL is secret). Blocking.
DeliveryResult post_json(HttpRequest request, const std::vector<std::string>& secrets,
                         const std::string& what);

}  // namespace reverify
