#pragma once
// What every HTTP sender shares: one POST classified into a
// DeliveryResult, and redaction so that no secret reaches a detail, a log line or the API.

#include <string>
#include <string_view>
#include <vector>

#include "core/http_client.hpp"
#include "pager/notifier.hpp"

namespace reverify {

// How a receiver's answer is treated: 2xx delivered; 400, 413, 422 (the event itself is bad)
// rejected for good; everything else (408, 429, 5xx, 401/403/404 that a config reload fixes, and
// transport errors) tried again later.
DeliveryResult classify_response(const Result<HttpResponse>& response);

// POSTs a JSON body and classifies the answer; `what` names the receiver in details (never the
// URL when the URL is secret). Blocking.
DeliveryResult post_json(HttpRequest request, const std::vector<std::string>& secrets,
                         const std::string& what);

}  // namespace reverify
