#include "api/http_api.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "api/metrics.hpp"
#include "api/pages.hpp"
#include "api/request_checks.hpp"
#include "api/version_status.hpp"
#include "attest/vsa.hpp"
#include "core/hashing.hpp"
#include "core/json_text.hpp"
#include "core/manifest_strict_json.hpp"
#include "core/names.hpp"
#include "core/redact.hpp"
#include "core/version.hpp"
#include "policies/gate.hpp"

namespace reverify {

namespace http = boost::beast::http;

namespace {

constexpr const char* kJson = "application/json";

unsigned gate_http_status(GateStatus status) {
  switch (status) {
    case GateStatus::fresh:
      return 200;
    case GateStatus::unknown:
      return 404;
    case GateStatus::not_fresh:
    case GateStatus::not_verified:
    case GateStatus::queued:
      return 412;
  }
  return 412;
}

constexpr const char* kHtml = "text/html; charset=utf-8";

ApiResponse respond(const ApiRequest& request, http::status status, std::string body,
                    const char* content_type) {
  ApiResponse response(status, request.version());
  response.set(http::field::server, server_header());
  response.set(http::field::content_type, content_type);
  response.set(http::field::cache_control, "no-store");
  response.keep_alive(request.keep_alive());
  response.body() = std::move(body);
  response.prepare_payload();
  if (request.method() == http::verb::head)
    response.body().clear();
  return response;
}

ApiResponse json_response(const ApiRequest& request, http::status status, const nlohmann::json& j,
                          const ApiContext& context) {
  nlohmann::json redacted = j;
  redact_strings(redacted, context.api->secrets);
  return respond(request, status, redacted.dump(2) + "\n", kJson);
}

ApiResponse error_response(const ApiRequest& request, http::status status,
                           const std::string& message, const ApiContext& context) {
  return json_response(request, status, {{"error", message}}, context);
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 1;
  while (start <= path.size()) {
    auto end = path.find('/', start);
    if (end == std::string_view::npos)
      end = path.size();
    parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  if (!parts.empty() && parts.back().empty())
    parts.pop_back();  // trailing slash
  return parts;
}

// The query parameters each endpoint accepts (api/request_checks.hpp), by its path; null for a
// path that names no endpoint (its 404 says so, whatever the query).
const std::vector<std::string>* accepted_parameters(const std::vector<std::string_view>& parts) {
  static const std::vector<std::string> none, refresh{"refresh"}, listing{"page", "refresh"},
      gate{"max_age", "mode"}, attestation{"verification"},
      verifications{"limit", "model", "version"};
  const std::size_t n = parts.size();
  if (n == 0)
    return &refresh;
  if ((parts[0] == "models" || parts[0] == "verifications") && n == 1)
    return &listing;
  if ((parts[0] == "models" && n == 3) || (parts[0] == "verifications" && n == 2))
    return &refresh;
  if (n == 1 && (parts[0] == "healthz" || parts[0] == "metrics"))
    return &none;
  if (parts[0] != "v1" || n < 2)
    return nullptr;
  if (parts[1] == "models" && (n == 2 || (n == 5 && parts[3] == "versions")))
    return &none;
  if (parts[1] == "gate" && n == 4)
    return &gate;
  if (parts[1] == "attestations" && (n == 4 || (n == 5 && parts[4] == "policy")))
    return &attestation;
  if (parts[1] == "verifications" && (n == 2 || n == 3))
    return n == 2 ? &verifications : &none;
  return nullptr;
}

nlohmann::json brief_json(const std::optional<VerdictBrief>& brief) {
  if (!brief)
    return nullptr;
  return {{"id", brief->id},
          {"class", to_string(brief->cls)},
          {"mode", to_string(brief->mode)},
          {"finished_at", rfc3339(brief->finished_at)},
          {"explanation", brief->explanation},
          {"summary", to_json(brief->summary())},
          {"underpowered", brief->underpowered},
          {"runs_needed", brief->runs_needed ? nlohmann::json(*brief->runs_needed) : nullptr}};
}

// The version with where it stands: the gate's answer at the default max_age and its attention
// rank (what `reverify status` sorts by, as the status page does).
nlohmann::json version_json(const VersionView& view, const VersionStatus& status,
                            std::int64_t max_age_s) {
  const auto& row = view.row;
  nlohmann::json j = {{"model", row.model},
                      {"version", row.version},
                      {"owner", row.owner},
                      {"level", row.level},
                      {"source", row.source},
                      {"location", row.location},
                      {"manifest_sha256", row.manifest_sha256},
                      {"manifest_error", row.manifest_error ? nlohmann::json(*row.manifest_error)
                                                            : nlohmann::json(nullptr)},
                      {"removed", row.removed},
                      {"last_verdict", brief_json(view.latest)},
                      {"last_conclusive_verdict", brief_json(view.conclusive)},
                      {"last_passed", brief_json(view.passed)}};
  j["signed_summary"] =
      view.attestation
          ? nlohmann::json{{"verification_id", view.attestation->verification_id},
                           {"result", view.attestation->result},
                           {"key_id", view.attestation->key_id},
                           {"url", "/v1/attestations/" + row.model + "/" + row.version}}
          : nlohmann::json(nullptr);
  j["released_at"] = row.released_at ? nlohmann::json(rfc3339(*row.released_at)) : nullptr;
  if (view.active_id) {
    j["active"] = {{"id", *view.active_id}, {"state", to_string(view.active_state)}};
  } else {
    j["active"] = nullptr;
  }
  j["attention"] = to_string(status.attention);
  j["gate"] = {{"ok", status.gate.status == GateStatus::fresh},
               {"max_age_s", max_age_s},
               {"reason", status.gate.reason}};
  return j;
}

std::optional<std::int64_t> parse_id(std::string_view text) {
  std::int64_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0)
    return std::nullopt;
  return id;
}

// Both names must pass core/names.hpp before they are used as keys; the message says which.
std::optional<std::string> invalid_names(std::string_view model, std::string_view version) {
  if (!is_valid_name(model))
    return "invalid model name (expected [A-Za-z0-9][A-Za-z0-9._-]{0,127})";
  if (!is_valid_name(version))
    return "invalid version (expected [A-Za-z0-9][A-Za-z0-9._-]{0,127})";
  return std::nullopt;
}

// Answers through `reply`: at once when the request is refused here, else when the daemon's
// loop has recorded the trigger.
void handle_trigger(const ApiRequest& request, std::string_view query, const ApiContext& context,
                    ApiReply reply) {
  if (auto parsed = parse_query(query, {}); !parsed)
    return reply(
        error_response(request, http::status::bad_request, parsed.error().message, context));
  if (context.api->token.empty()) {
    return reply(error_response(request, http::status::forbidden,
                                "manual triggers are disabled: set api.token_file in the config",
                                context));
  }
  const auto authorization = request[http::field::authorization];
  if (!bearer_token_matches(std::string_view(authorization.data(), authorization.size()),
                            context.api->token)) {
    auto response = error_response(request, http::status::unauthorized,
                                   "missing or wrong bearer token", context);
    response.set(http::field::www_authenticate, "Bearer realm=\"reverify\"");
    return reply(std::move(response));
  }
  // The strict reader: a key given twice (nlohmann would keep the last) is an error naming it.
  auto parsed = parse_strict_json(request.body(), ManifestLimits{});
  if (parsed.error) {
    const auto& e = *parsed.error;
    return reply(error_response(
        request, http::status::bad_request,
        (e.path.empty() ? std::string("body") : "body." + e.path) + ": " + e.message, context));
  }
  const nlohmann::json& body = parsed.value;
  if (!body.is_object()) {
    return reply(error_response(request, http::status::bad_request,
                                "body: expected a JSON object {\"model\", \"version\", \"mode\"?}",
                                context));
  }
  for (const char* key : {"model", "version"}) {
    if (!body.contains(key) || !body[key].is_string()) {
      return reply(error_response(request, http::status::bad_request,
                                  std::string("body.") + key + ": required string", context));
    }
  }
  TriggerRequest trigger{body["model"].get<std::string>(), body["version"].get<std::string>(), {}};
  if (auto why = invalid_names(trigger.model, trigger.version)) {
    return reply(error_response(request, http::status::bad_request, "body: " + *why, context));
  }
  if (body.contains("mode")) {
    const auto& mode = body["mode"];
    trigger.mode =
        mode.is_string() ? enum_from_string<RebuildMode>(mode.get<std::string>()) : std::nullopt;
    if (!trigger.mode) {
      return reply(error_response(request, http::status::bad_request,
                                  "body.mode: expected " + enum_names<RebuildMode>(" or "),
                                  context));
    }
  }
  const auto* view = context.model->find(trigger.model, trigger.version);
  if (!view || view->row.removed) {
    return reply(error_response(request, http::status::not_found,
                                "unknown model version " + trigger.model + "@" + trigger.version,
                                context));
  }
  if (view->row.manifest_error) {
    return reply(error_response(request, http::status::conflict,
                                "manifest does not validate: " + *view->row.manifest_error,
                                context));
  }
  // Answered once the daemon has the row committed (or refused it): a 202 is never lost.
  ApiRequest head;
  head.version(request.version());
  head.keep_alive(request.keep_alive());
  context.trigger(trigger, [head = std::move(head), model = context.model, api = context.api,
                            trigger, reply = std::move(reply)](Result<nlohmann::json> accepted) {
    ApiContext answer;
    answer.model = model;
    answer.api = api;
    if (!accepted.ok()) {
      const auto code = accepted.error().code;
      return reply(error_response(head,
                                  code == ErrorCode::conflict ? http::status::conflict
                                  : code == ErrorCode::not_found
                                      ? http::status::not_found
                                      : http::status::service_unavailable,
                                  accepted.error().message, answer));
    }
    auto response = json_response(head, http::status::accepted, *accepted, answer);
    response.set(http::field::location,
                 "/v1/models/" + trigger.model + "/versions/" + trigger.version);
    response.prepare_payload();
    reply(std::move(response));
  });
}

ApiResponse handle_verifications(const ApiRequest& request, const QueryParameters& query,
                                 const ApiContext& context) {
  auto model = query.get("model").value_or("");
  auto version = query.get("version").value_or("");
  if ((!model.empty() && !is_valid_name(model)) || (!version.empty() && !is_valid_name(version))) {
    return error_response(request, http::status::bad_request,
                          "model/version: expected [A-Za-z0-9][A-Za-z0-9._-]{0,127}", context);
  }
  std::int64_t limit = 100;
  if (auto text = query.get("limit")) {
    auto parsed = parse_id(*text);
    if (!parsed || *parsed > std::int64_t(kRecentVerifications)) {
      return error_response(request, http::status::bad_request,
                            "limit: expected 1.." + std::to_string(kRecentVerifications), context);
    }
    limit = *parsed;
  }
  auto list = nlohmann::json::array();
  for (const auto& row : context.model->recent) {
    if (std::int64_t(list.size()) >= limit)
      break;
    if ((!model.empty() && row.model != model) || (!version.empty() && row.version != version)) {
      continue;
    }
    auto j = verification_json(row);
    j.erase("log_tail");  // lists stay small; the detail endpoint has it
    j.erase("evidence");
    list.push_back(std::move(j));
  }
  return json_response(request, http::status::ok, {{"verifications", list}}, context);
}

ApiResponse handle_models(const ApiRequest& request, const ApiContext& context) {
  auto models = nlohmann::json::array();
  const std::int64_t max_age = context.api->default_max_age_s;
  const GatePolicy policy = gate_policy(*context.model);
  for (const auto& [name, versions] : context.model->models) {
    auto list = nlohmann::json::array();
    for (const auto& [version, view] : versions)
      list.push_back(
          version_json(view, version_status(view, max_age, context.now, policy), max_age));
    models.push_back({{"model", name}, {"versions", std::move(list)}});
  }
  return json_response(request, http::status::ok, {{"models", models}}, context);
}

// GET /v1/attestations/{model}/{version}[/policy][?verification=ID]: the signed summary of the
// latest passed or failed:* verdict (or of the given verification), byte for byte as signed, or
// the tolerance policy document its digest names.
ApiResponse handle_attestation(const ApiRequest& request, std::string_view model_name,
                               std::string_view version, bool policy, const QueryParameters& query,
                               const ApiContext& context) {
  if (auto why = invalid_names(model_name, version))
    return error_response(request, http::status::bad_request, *why, context);
  const auto& model = *context.model;
  const auto* view = model.find(std::string(model_name), std::string(version));
  if (!view)
    return error_response(request, http::status::not_found, "unknown model version", context);
  std::shared_ptr<const AttestationRow> found;
  if (auto text = query.get("verification")) {
    auto id = parse_id(*text);
    if (!id) {
      return error_response(request, http::status::bad_request,
                            "verification: expected a positive integer", context);
    }
    auto it = model.attestations.find(*id);
    if (it == model.attestations.end() || it->second->model != model_name ||
        it->second->version != version) {
      return error_response(
          request, http::status::not_found,
          "no signed summary of verification " + std::to_string(*id) +
              " of this model version "
              "among the " +
              std::to_string(kRecentVerifications) +
              " most recent verifications (older ones: reverify attest export --verification)",
          context);
    }
    found = it->second;
  } else if (!view->decided) {
    return error_response(request, http::status::not_found,
                          "no passed or failed verdict yet, so no signed summary", context);
  } else if (!view->attestation) {
    return error_response(request, http::status::not_found,
                          "the latest decided verification (" + std::to_string(view->decided->id) +
                              ", " + to_string(view->decided->cls) +
                              ") has no signed summary: attestation was not configured when it "
                              "was recorded",
                          context);
  } else {
    found = view->attestation;
  }
  // Served exactly as stored: the signature covers these bytes, so nothing is redacted or
  // re-serialised.
  auto response = policy ? respond(request, http::status::ok, found->policy_json + "\n", kJson)
                         : respond(request, http::status::ok, found->envelope_json + "\n",
                                   kVsaEnvelopeMediaType);
  response.set("X-Reverify-Verification-Id", std::to_string(found->verification_id));
  response.set("X-Reverify-Key-Id", found->key_id);
  return response;
}

// The human pages (api/pages.hpp); nullopt when `parts` names none of them.
std::optional<ApiResponse> route_page(const ApiRequest& request,
                                      const std::vector<std::string_view>& parts,
                                      const QueryParameters& query, const ApiContext& context) {
  if (!parts.empty() && parts[0] != "models" && parts[0] != "verifications")
    return std::nullopt;  // before the frame is built: the gate and /v1 pass here on every call
  const auto& model = *context.model;
  const auto html = [&](std::string body) {
    return respond(request, http::status::ok, std::move(body), kHtml);
  };
  const auto not_found = [&](const std::string& what) {
    return respond(request, http::status::not_found,
                   "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Not "
                   "found · reverify</title></head><body><main><h1>Not found</h1><p>" +
                       what + "</p><p><a href=\"/\">Status</a></p></main></body></html>\n",
                   kHtml);
  };
  PageFrame frame;
  frame.path = "/";
  for (std::size_t i = 0; i < parts.size(); ++i)
    frame.path += std::string(parts[i]) + (i + 1 < parts.size() ? "/" : "");
  if (auto text = query.get("refresh")) {
    auto parsed = parse_id(*text);
    if (!parsed || *parsed < kMinRefreshS || *parsed > kMaxRefreshS) {
      return error_response(request, http::status::bad_request,
                            "refresh: expected seconds, " + std::to_string(kMinRefreshS) + ".." +
                                std::to_string(kMaxRefreshS),
                            context);
    }
    frame.refresh_s = int(*parsed);
  }
  std::size_t page = 1;
  if (auto text = query.get("page")) {
    auto parsed = parse_id(*text);
    if (!parsed)
      return error_response(request, http::status::bad_request, "page: expected a positive integer",
                            context);
    page = std::size_t(*parsed);
  }
  if (parts.empty())
    return html(render_status_page(frame, model, context.now));
  if (parts[0] == "models" && parts.size() == 1)
    return html(render_versions_page(frame, model, context.now, page));
  if (parts[0] == "models" && parts.size() == 3) {
    if (invalid_names(parts[1], parts[2]))
      return not_found("No such model version.");
    const auto* view = model.find(std::string(parts[1]), std::string(parts[2]));
    if (!view)
      return not_found("No registry source lists this model version.");
    return html(render_version_page(frame, model, *view, context.now));
  }
  if (parts[0] == "verifications" && parts.size() == 1)
    return html(render_verifications_page(frame, model, context.now, page));
  if (parts[0] == "verifications" && parts.size() == 2) {
    const auto id = parse_id(parts[1]);
    const auto* row = id ? model.find_verification(*id) : nullptr;
    if (!row) {
      return not_found("No such verification among the " + std::to_string(kRecentVerifications) +
                       " most recent.");
    }
    return html(render_verification_page(frame, model, *row, context.now));
  }
  return std::nullopt;
}

ApiResponse route_get(const ApiRequest& request, std::string_view path, std::string_view query_text,
                      const ApiContext& context) {
  const auto parts = split_path(path);
  const auto& model = *context.model;
  QueryParameters query;
  if (const auto* accepted = accepted_parameters(parts)) {
    auto parsed = parse_query(query_text, *accepted);
    if (!parsed)
      return error_response(request, http::status::bad_request, parsed.error().message, context);
    query = std::move(parsed).value();
  }
  if (auto page = route_page(request, parts, query, context))
    return std::move(*page);
  if (parts.size() == 1 && parts[0] == "healthz") {
    const auto fault =
        context.daemon_metrics ? context.daemon_metrics->store_fault() : std::nullopt;
    if (fault) {
      return json_response(request, http::status::service_unavailable,
                           {{"status", "store_failing"},
                            {"error", fault->reason},
                            {"since", rfc3339(fault->since)},
                            {"state_age_s", context.now - model.built_at}},
                           context);
    }
    return json_response(request, http::status::ok,
                         {{"status", "ok"}, {"state_age_s", context.now - model.built_at}},
                         context);
  }
  if (parts.size() == 1 && parts[0] == "metrics") {
    return respond(request, http::status::ok,
                   context.daemon_metrics ? model.metrics_text + context.daemon_metrics->render()
                                          : model.metrics_text,
                   kMetricsContentType);
  }
  if (parts.size() < 2 || parts[0] != "v1") {
    return error_response(request, http::status::not_found, "no such endpoint", context);
  }
  if (parts[1] == "models" && parts.size() == 2)
    return handle_models(request, context);
  if (parts[1] == "models" && parts.size() == 5 && parts[3] == "versions") {
    if (auto why = invalid_names(parts[2], parts[4])) {
      return error_response(request, http::status::bad_request, *why, context);
    }
    const auto* view = model.find(std::string(parts[2]), std::string(parts[4]));
    if (!view) {
      return error_response(request, http::status::not_found, "unknown model version", context);
    }
    const std::int64_t max_age = context.api->default_max_age_s;
    auto j = version_json(*view, version_status(*view, max_age, context.now, gate_policy(model)),
                          max_age);
    auto history = nlohmann::json::array();
    for (const auto& row : model.recent) {
      if (row.model == parts[2] && row.version == parts[4]) {
        history.push_back({{"id", row.id},
                           {"state", to_string(row.state)},
                           {"class", row.cls ? nlohmann::json(to_string(*row.cls)) : nullptr},
                           {"mode", to_string(row.mode)},
                           {"queued_at", rfc3339(row.queued_at)}});
      }
    }
    j["recent_verifications"] = std::move(history);
    return json_response(request, http::status::ok, j, context);
  }
  if (parts[1] == "gate" && parts.size() == 4) {
    if (auto why = invalid_names(parts[2], parts[3])) {
      return error_response(request, http::status::bad_request, *why, context);
    }
    std::int64_t max_age = context.api->default_max_age_s;
    if (auto text = query.get("max_age")) {
      auto parsed = parse_duration_s(*text);
      if (!parsed.ok()) {
        return error_response(request, http::status::bad_request,
                              "max_age: " + parsed.error().message, context);
      }
      max_age = *parsed;
    }
    std::optional<RebuildMode> mode;
    if (auto text = query.get("mode")) {
      mode = enum_from_string<RebuildMode>(*text);
      if (!mode) {
        return error_response(request, http::status::bad_request,
                              "mode: expected one of " + enum_names<RebuildMode>() + ", got \"" +
                                  std::string(*text) + "\"",
                              context);
      }
    }
    auto answer = answer_gate(model, std::string(parts[2]), std::string(parts[3]), max_age,
                              context.now, mode, context.api->secrets);
    return respond(request, http::status(answer.status), std::move(answer.body), kJson);
  }
  if (parts[1] == "attestations" &&
      (parts.size() == 4 || (parts.size() == 5 && parts[4] == "policy"))) {
    return handle_attestation(request, parts[2], parts[3], parts.size() == 5, query, context);
  }
  if (parts[1] == "verifications" && parts.size() == 2) {
    return handle_verifications(request, query, context);
  }
  if (parts[1] == "verifications" && parts.size() == 3) {
    auto id = parse_id(parts[2]);
    if (!id) {
      return error_response(request, http::status::bad_request,
                            "verification id: expected a positive integer", context);
    }
    const auto* row = model.find_verification(*id);
    if (!row) {
      return error_response(
          request, http::status::not_found,
          "no such verification among the " + std::to_string(kRecentVerifications) + " most recent",
          context);
    }
    return json_response(request, http::status::ok, verification_json(*row), context);
  }
  return error_response(request, http::status::not_found, "no such endpoint", context);
}

}  // namespace

const std::string& server_header() {
  static const std::string header = std::string("reverifyd/") + reverify_version();
  return header;
}

bool bearer_token_matches(std::string_view authorization_header, const std::string& token) {
  // RFC 7235: the scheme is case-insensitive ("bearer", "BEARER") and followed by 1*SP.
  constexpr std::string_view kScheme = "bearer";
  const std::string_view scheme = authorization_header.substr(0, kScheme.size());
  const bool is_bearer =
      scheme.size() == kScheme.size() &&
      std::equal(scheme.begin(), scheme.end(), kScheme.begin(),
                 [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  std::string_view credentials = authorization_header.substr(scheme.size());
  if (token.empty() || !is_bearer || credentials.empty() || credentials.front() != ' ')
    return false;
  credentials.remove_prefix(std::min(credentials.find_first_not_of(' '), credentials.size()));
  // Compare fixed-size digests with CRYPTO_memcmp: no early exit, and no length leak.
  const auto presented = sha256_hex(credentials);
  const auto expected = sha256_hex(token);
  return CRYPTO_memcmp(presented.data(), expected.data(), expected.size()) == 0;
}

nlohmann::json verification_json(const VerificationRow& row) {
  auto optional_time = [](const std::optional<UnixSeconds>& t) {
    return t ? nlohmann::json(rfc3339(*t)) : nlohmann::json(nullptr);
  };
  return {{"id", row.id},
          {"model", row.model},
          {"version", row.version},
          {"state", to_string(row.state)},
          {"class", row.cls ? nlohmann::json(to_string(*row.cls)) : nullptr},
          {"mode", to_string(row.mode)},
          {"trigger", to_string(row.trigger)},
          {"attempt", row.attempt},
          {"runner",
           {{"kind", row.runner_kind ? nlohmann::json(to_string(*row.runner_kind)) : nullptr},
            {"ref", row.runner_ref ? nlohmann::json(*row.runner_ref) : nullptr},
            {"standing", row.runner_standing ? row.runner_standing->to_json() : nullptr}}},
          {"explanation", row.explanation},
          {"summary", row.cls ? to_json(summary_of(row)) : nlohmann::json(nullptr)},
          {"verdict", row.verdict ? to_json(*row.verdict) : nlohmann::json(nullptr)},
          {"evidence", row.evidence},
          {"log_tail", row.log_tail},
          {"queued_at", rfc3339(row.queued_at)},
          {"started_at", optional_time(row.started_at)},
          {"finished_at", optional_time(row.finished_at)}};
}

GateAnswer answer_gate(const ReadModel& model, const std::string& model_name,
                       const std::string& version, std::int64_t max_age_s, UnixSeconds now,
                       std::optional<RebuildMode> mode, const std::vector<std::string>& secrets) {
  const auto* view = model.find(model_name, version);
  const GatePolicy policy = gate_policy(model);
  GateFacts facts;
  if (view) {
    facts = gate_facts(*view, policy, mode);
  } else {  // not listed: what the request names, under the same policy
    facts.model = model_name;
    facts.version = version;
    facts.mode = mode;
    facts.require_power = policy.require_power;
    facts.command_scope = policy.command_scope;
  }
  const GateDecision decision = decide_gate(facts, max_age_s, now);
  const bool listed = facts.listed;
  // The system's failure after the conclusive verdict is shown, never counted.
  const VerdictBrief* conclusive = listed ? conclusive_in(*view, mode) : nullptr;
  const bool latest_error = listed && view->latest && is_error(view->latest->cls) &&
                            (!conclusive || view->latest->id != conclusive->id);
  const bool show_verdict = conclusive && !facts.manifest_error;

  GateAnswer answer;
  answer.status = gate_http_status(decision.status);
  answer.body.reserve(512);
  JsonTextWriter json(answer.body);
  // Every string value is redacted, as json_response redacts a document's.
  const auto text = [&](std::string_view value) {
    const bool carries_secret = std::any_of(secrets.begin(), secrets.end(), [&](const auto& s) {
      return !s.empty() && value.find(s) != std::string_view::npos;
    });
    if (carries_secret)
      json.string(redact(std::string(value), secrets));
    else
      json.string(value);
  };
  const auto optional_integer = [&](const std::optional<std::int64_t>& number) {
    number ? json.integer(*number) : json.null();
  };
  // Members in the order nlohmann's dump() prints them: keys sorted bytewise.
  json.begin_object();
  if (decision.age_s) {
    json.key("age_s");
    json.integer(*decision.age_s);
  }
  if (show_verdict) {
    json.key("class");
    text(to_string(conclusive->cls));
  }
  if (decision.expected_at) {
    json.key("expected_at");
    text(rfc3339(*decision.expected_at));
  }
  json.key("fresh");
  json.boolean(decision.status == GateStatus::fresh);
  if (latest_error) {
    const VerdictBrief& error = *view->latest;
    json.key("latest_error");
    json.begin_object();
    json.key("class");
    text(to_string(error.cls));
    json.key("explanation");
    text(error.explanation);
    json.key("finished_at");
    text(rfc3339(error.finished_at));
    json.key("id");
    json.integer(error.id);
    json.key("mode");
    text(to_string(error.mode));
    json.key("runs_needed");
    optional_integer(error.runs_needed);
    json.key("underpowered");
    json.boolean(error.underpowered);
    json.end_object();
  }
  json.key("max_age_s");
  json.integer(max_age_s);
  if (mode) {
    json.key("mode");
    text(to_string(*mode));
  }
  json.key("model");
  text(model_name);
  json.key("ok");
  json.boolean(decision.status == GateStatus::fresh);
  json.key("reason");
  text(decision.reason);
  // A pass against bands that cannot catch the declared shift says so (docs/design.md property 2).
  if (show_verdict && conclusive->underpowered) {
    json.key("runs_needed");
    optional_integer(conclusive->runs_needed);
  }
  json.key("status");
  text(to_string(decision.status));
  if (show_verdict) {
    json.key("underpowered");
    json.boolean(conclusive->underpowered);
    // When the verdict the answer goes by was made, whatever it says; verified_at below only
    // when it verified the version.
    json.key("verdict_finished_at");
    text(rfc3339(conclusive->finished_at));
    json.key("verification_id");
    json.integer(conclusive->id);
  }
  json.key("verified");
  json.boolean(decision.verified());
  if (show_verdict && decision.verified()) {
    json.key("verified_at");
    text(rfc3339(conclusive->finished_at));
  }
  json.key("version");
  text(version);
  json.end_object();
  answer.body += '\n';
  return answer;
}

void handle_api_request(const ApiRequest& request, const ApiContext& context, ApiReply reply) {
  const std::string_view target(request.target().data(), request.target().size());
  if (target.empty() || target.front() != '/') {
    return reply(error_response(request, http::status::bad_request, "request target must be a path",
                                context));
  }
  const auto question = target.find('?');
  const auto path = target.substr(0, question);
  const auto query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  for (auto segment : split_path(path)) {
    if (segment == "." || segment == "..") {
      return reply(error_response(request, http::status::bad_request,
                                  "path traversal is not allowed", context));
    }
  }
  if (Status headers = check_headers(request); !headers.ok())
    return reply(
        error_response(request, http::status::bad_request, headers.error().message, context));
  if (context.model->starting && path != "/metrics") {
    // Before the first read of the store an empty inventory would be a wrong answer (a known
    // version "unknown", a gate "never verified", a trigger refused): say so, and when to ask
    // again. /metrics stays up: its scrape says when the state was read.
    auto response = json_response(
        request, http::status::service_unavailable,
        {{"status", "starting"},
         {"error", "reverifyd is starting: its state has not been read from the store yet"}},
        context);
    response.set(http::field::retry_after, "1");
    return reply(std::move(response));
  }
  if (path == "/v1/verifications" && request.method() == http::verb::post) {
    return handle_trigger(request, query, context, std::move(reply));
  }
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    auto response =
        error_response(request, http::status::method_not_allowed, "method not allowed", context);
    response.set(http::field::allow, path == "/v1/verifications" ? "GET, HEAD, POST" : "GET, HEAD");
    return reply(std::move(response));
  }
  reply(route_get(request, path, query, context));
}

}  // namespace reverify
