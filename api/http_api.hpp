#pragma once
// api/: the HTTP API: the listener (http_server.hpp), the routes below, the status page, the
// Prometheus exposition and the immutable read model every GET is served from (snapshot.hpp).
// Includes core/ to verify/ (it serves what the store recorded and orders the queue as the
// scheduler does; it never runs a verification);
// never daemon/: the daemon hands it a read model and a trigger callback.
//
// The HTTP API as a plain function from request to response (docs/design.md, "Code conventions":
// the Asio example's request_handler), so every endpoint is unit-tested without a socket. Endpoints
// (docs/design.md):
//   GET /, /models, /models/{m}/{v}, /verifications, /verifications/{id}
//                                           HTML pages for people (api/pages.hpp)
//   GET /healthz                            readiness: 200 once the daemon serves a read model
//                                           built from the store, 503 "starting" before
//   GET /metrics                            Prometheus text format (api/metrics.hpp)
//   GET /v1/models                          every model version and its latest verdicts
//   GET /v1/models/{model}/versions/{version}
//   GET /v1/gate/{model}/{version}?max_age=40d
//         200 verified and fresh, 412 known but not (reason in the body), 404 unknown
//   GET /v1/attestations/{model}/{version}[?verification=ID]
//         the signed summary (DSSE envelope of a SLSA VSA) of the latest passed or failed:*
//         verdict, or of that verification (among the recent ones); 404 with the reason if none
//   GET /v1/attestations/{model}/{version}/policy[?verification=ID]
//         the tolerance policy document whose sha256 that summary's policy digest names
//   GET /v1/verifications[?model=&version=&limit=]   newest first, from the recent window
//   GET /v1/verifications/{id}
//   POST /v1/verifications  {"model","version","mode"?}  bearer token; 202 once the queued
//         verification is committed to the store, 409 when one is already running or a manual
//         one is queued; a queued row that only waits for its time (a retry backing off, a
//         jittered scheduled start) is folded into the trigger, runs now as a manual one, and
//         the answer is 202 with its id (store/store.hpp, enqueue_unless_active)
// Reads come from the immutable ReadModel given in the context; the handler never blocks. Every
// request is answered through its reply function: at once, except a POST that passed its checks,
// which the daemon answers once its loop has recorded (or refused) the trigger.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "api/daemon_metrics.hpp"
#include "api/snapshot.hpp"
#include "core/result.hpp"
#include "runners/runner.hpp"
#include "settings/config.hpp"

namespace reverify {

using ApiRequest = boost::beast::http::request<boost::beast::http::string_body>;
using ApiResponse = boost::beast::http::response<boost::beast::http::string_body>;

struct TriggerRequest {
  std::string model, version;
  std::optional<RebuildMode> mode;  // absent: the rotation policy's choice
};

// Sends the response of one request; called exactly once, from any thread.
using ApiReply = std::function<void(ApiResponse response)>;
// The outcome of a manual trigger: what to tell the caller (the verification's id, ...), or why
// it was refused (conflict: already queued or running, or shutting down).
using TriggerDone = std::function<void(Result<nlohmann::json> outcome)>;

struct ApiContext {
  std::shared_ptr<const ReadModel> model;
  const ApiConfig* api = nullptr;
  UnixSeconds now = 0;
  // The daemon's own series, rendered after the read model's at each scrape; null: none.
  const DaemonMetrics* daemon_metrics = nullptr;
  // Records a manual trigger and calls `done` exactly once, from any thread, when the row is
  // committed or refused. Returns at once (the daemon hands it to its loop).
  std::function<void(const TriggerRequest& trigger, TriggerDone done)> trigger;
};

void handle_api_request(const ApiRequest& request, const ApiContext& context, ApiReply reply);

// The gate's answer: its HTTP status and its body, the JSON document as json_response would print
// it (dump(2), a newline, every string value redacted of `secrets`), written without building a
// document: the gate is the endpoint CI pipelines poll. Worked out from the read model and `now` on
// every call, so a fresh answer turns stale the second verified_at + max_age passes.
struct GateAnswer {
  unsigned status = 404;  // 200, 412 or 404
  std::string body;
};
// With `mode`, only a verdict of that mode counts (GET /v1/gate/...?mode=full).
GateAnswer answer_gate(const ReadModel& model, const std::string& model_name,
                       const std::string& version, std::int64_t max_age_s, UnixSeconds now,
                       std::optional<RebuildMode> mode = std::nullopt,
                       const std::vector<std::string>& secrets = {});

// Constant-time comparison of a presented bearer token with the configured one.
bool bearer_token_matches(std::string_view authorization_header, const std::string& token);

// "reverifyd/0.1.0": the Server header of every response (built once).
const std::string& server_header();

nlohmann::json verification_json(const VerificationRow& row);

}  // namespace reverify
