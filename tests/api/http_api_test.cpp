// The HTTP API as a plain function: gate decisions, names validated, traversal rejected, bearer
// token on POST, secrets redacted, status page escaped. No socket.

#include <doctest/doctest.h>

#include "api/http_api.hpp"
#include "api/page_parts.hpp"
#include "tests/support/check_fixture.hpp"

using namespace reverify;
namespace http = boost::beast::http;

namespace {

constexpr UnixSeconds kNow = 1'800'000'000;
constexpr std::int64_t kDay = 86400;

VerdictBrief brief(std::int64_t id, VerdictClass cls, UnixSeconds at,
                   const std::string& sha = "sha1") {
  VerdictBrief b;
  b.id = id;
  b.model = "m";
  b.version = "1";
  b.cls = cls;
  b.finished_at = at;
  b.explanation = "because";
  b.manifest_sha256 = sha;
  return b;
}

std::shared_ptr<ReadModel> model_with(std::optional<VerdictBrief> latest,
                                      std::optional<VerdictBrief> conclusive,
                                      std::optional<VerdictBrief> passed) {
  auto model = std::make_shared<ReadModel>();
  model->built_at = kNow;
  auto& view = model->models["m"]["1"];
  view.row.model = "m";
  view.row.version = "1";
  view.row.owner = "team-<a>";
  view.row.manifest_sha256 = "sha1";
  view.latest = std::move(latest);
  view.conclusive = std::move(conclusive);
  view.passed = std::move(passed);
  VerificationRow row;
  row.id = 7;
  row.model = "m";
  row.version = "1";
  row.state = VerificationState::done;
  row.cls = VerdictClass::passed;
  row.log_tail = "token=sekrit-token in the log";
  model->recent.push_back(row);
  model->metrics_text = "reverify_queue_depth 0\n";
  return model;
}

struct Api {
  ApiConfig config;
  std::shared_ptr<ReadModel> model;
  std::vector<TriggerRequest> triggered;
  const DaemonMetrics* daemon_metrics = nullptr;  // the daemon's own series and the store's health
  // What the daemon answers a trigger with.
  Result<nlohmann::json> outcome = nlohmann::json{{"status", "queued"}};
  Api() : model(model_with(std::nullopt, std::nullopt, std::nullopt)) {
    config.token = "sekrit-token";
    config.secrets = {config.token};
    model->api = std::make_shared<const ApiConfig>(config);  // what the daemon attaches
  }
  ApiResponse call(http::verb verb, const std::string& target, const std::string& body = "",
                   const std::string& authorization = "",
                   const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    ApiRequest request(verb, target, 11);
    if (!authorization.empty())
      request.set(http::field::authorization, authorization);
    for (const auto& [name, value] : headers)
      request.insert(name, value);
    request.body() = body;
    request.prepare_payload();
    ApiContext context;
    context.model = model;
    context.api = &config;
    context.now = kNow;
    context.daemon_metrics = daemon_metrics;
    context.trigger = [this](const TriggerRequest& t, TriggerDone done) {
      triggered.push_back(t);
      done(outcome);
    };
    std::optional<ApiResponse> answer;
    handle_api_request(request, context, [&answer](ApiResponse r) { answer = std::move(r); });
    REQUIRE(answer.has_value());  // this daemon answers every trigger at once
    return std::move(*answer);
  }
  ApiResponse get(const std::string& target) { return call(http::verb::get, target); }
};

nlohmann::json body_of(const ApiResponse& response) {
  return nlohmann::json::parse(response.body());
}

// The gate's body, parsed. The gate writes its text itself: it must be byte for byte what
// nlohmann's dump(2) prints for the same document (what every other endpoint answers).
nlohmann::json gate_json(const std::string& body) {
  auto parsed = nlohmann::json::parse(body);
  CHECK(body == parsed.dump(2) + "\n");
  return parsed;
}
nlohmann::json gate_json(const ApiResponse& response) {
  return gate_json(response.body());
}

}  // namespace

TEST_CASE("gate: fresh pass is 200, stale or failed or never verified is 412, unknown is 404") {
  Api api;
  api.model = model_with(brief(3, VerdictClass::passed, kNow - 10 * kDay),
                         brief(3, VerdictClass::passed, kNow - 10 * kDay),
                         brief(3, VerdictClass::passed, kNow - 10 * kDay));
  auto fresh = api.get("/v1/gate/m/1?max_age=40d");
  CHECK(fresh.result() == http::status::ok);
  CHECK(gate_json(fresh)["ok"] == true);
  CHECK(gate_json(fresh)["verification_id"] == 3);

  auto stale = api.get("/v1/gate/m/1?max_age=5d");
  CHECK(stale.result() == http::status::precondition_failed);
  CHECK(gate_json(stale)["verified"] == true);
  CHECK(gate_json(stale)["fresh"] == false);
  CHECK(gate_json(stale)["reason"].get<std::string>().find("10d ago") != std::string::npos);

  // Default max_age from the config (40 days).
  CHECK(api.get("/v1/gate/m/1").result() == http::status::ok);
  api.config.default_max_age_s = 2 * kDay;
  CHECK(api.get("/v1/gate/m/1").result() == http::status::precondition_failed);

  CHECK(api.get("/v1/gate/m/2").result() == http::status::not_found);
  CHECK(api.get("/v1/gate/m/1?max_age=soon").result() == http::status::bad_request);
}

TEST_CASE(
    "before the first read of the store every endpoint but /metrics is 503 with Retry-After") {
  Api api;
  api.model = model_with(brief(3, VerdictClass::passed, kNow - 10 * kDay),
                         brief(3, VerdictClass::passed, kNow - 10 * kDay),
                         brief(3, VerdictClass::passed, kNow - 10 * kDay));
  CHECK(api.get("/v1/gate/m/1").result() == http::status::ok);
  api.model->starting = true;  // the placeholder reverifyd publishes before its first build
  for (const char* target :
       {"/healthz", "/", "/v1/models", "/v1/gate/m/1", "/v1/models/m/versions/1"}) {
    CAPTURE(target);
    auto answer = api.get(target);
    CHECK(answer.result() == http::status::service_unavailable);
    CHECK(answer[http::field::retry_after] == "1");
    CHECK(body_of(answer)["status"] == "starting");
  }
  CHECK(api.call(http::verb::post, "/v1/verifications").result() ==
        http::status::service_unavailable);
  CHECK(api.get("/metrics").result() == http::status::ok);
}

TEST_CASE("gate: a later failure wins, a later system error does not, a changed manifest fails") {
  auto failed = model_with(brief(5, VerdictClass::failed_out_of_tolerance, kNow - kDay),
                           brief(5, VerdictClass::failed_out_of_tolerance, kNow - kDay),
                           brief(3, VerdictClass::passed, kNow - 2 * kDay));
  auto answer = answer_gate(*failed, "m", "1", 40 * kDay, kNow);
  CHECK(answer.status == 412);
  CHECK(gate_json(answer.body)["class"] == "failed:out-of-tolerance");

  auto system_error = model_with(brief(6, VerdictClass::error_provision, kNow - kDay),
                                 brief(3, VerdictClass::passed, kNow - 2 * kDay),
                                 brief(3, VerdictClass::passed, kNow - 2 * kDay));
  answer = answer_gate(*system_error, "m", "1", 40 * kDay, kNow);
  CHECK(answer.status == 200);
  CHECK(gate_json(answer.body)["latest_error"]["class"] == "error:provision");

  auto never = model_with(std::nullopt, std::nullopt, std::nullopt);
  answer = answer_gate(*never, "m", "1", 40 * kDay, kNow);
  CHECK(answer.status == 412);
  CHECK(gate_json(answer.body)["reason"] == "never verified");

  auto changed = model_with(brief(3, VerdictClass::passed, kNow - kDay, "old"),
                            brief(3, VerdictClass::passed, kNow - kDay, "old"),
                            brief(3, VerdictClass::passed, kNow - kDay, "old"));
  answer = answer_gate(*changed, "m", "1", 40 * kDay, kNow);
  CHECK(answer.status == 412);
  CHECK(gate_json(answer.body)["reason"].get<std::string>().find("manifest changed") !=
        std::string::npos);

  auto uncalibrated = model_with(brief(4, VerdictClass::uncalibrated, kNow - kDay),
                                 brief(4, VerdictClass::uncalibrated, kNow - kDay), std::nullopt);
  CHECK(answer_gate(*uncalibrated, "m", "1", 40 * kDay, kNow).status == 412);
}

TEST_CASE("gate ?mode=: only a pass in that mode counts; a release queued at release says so") {
  Api api;
  auto steps_pass = brief(8, VerdictClass::passed, kNow - kDay);
  steps_pass.mode = RebuildMode::steps;
  auto full_pass = brief(3, VerdictClass::passed, kNow - 50 * kDay);
  api.model = model_with(steps_pass, steps_pass, steps_pass);
  api.model->api = std::make_shared<const ApiConfig>(api.config);
  auto& view = api.model->models["m"]["1"];
  view.conclusive_by_mode = {{RebuildMode::steps, steps_pass}, {RebuildMode::full, full_pass}};

  CHECK(api.get("/v1/gate/m/1").result() == http::status::ok);  // any mode: the steps pass
  CHECK(api.get("/v1/gate/m/1?mode=steps").result() == http::status::ok);
  // The full pass is 50 days old: not fresh at the default 40d, fresh at 60d.
  auto full = api.get("/v1/gate/m/1?mode=full");
  CHECK(full.result() == http::status::precondition_failed);
  CHECK(gate_json(full)["mode"] == "full");
  CHECK(gate_json(full)["verification_id"] == 3);
  CHECK(gate_json(full)["reason"].get<std::string>().rfind("full mode: verified 50d ago", 0) == 0);
  CHECK_FALSE(gate_json(full).contains("latest_error"));  // the newer steps pass is no error
  CHECK(api.get("/v1/gate/m/1?mode=full&max_age=60d").result() == http::status::ok);
  view.conclusive_by_mode.erase(RebuildMode::full);
  auto never = gate_json(api.get("/v1/gate/m/1?mode=full"));
  CHECK(never["reason"] == "full mode: never verified");
  CHECK(never["status"] == "not-verified");
  auto bad = api.get("/v1/gate/m/1?mode=half");
  CHECK(bad.result() == http::status::bad_request);
  CHECK(body_of(bad)["error"].get<std::string>().rfind("mode: expected one of full, steps", 0) ==
        0);

  // A new release queued at release: "queued", when, and still not verified.
  api.model = model_with(std::nullopt, std::nullopt, std::nullopt);
  api.model->api = std::make_shared<const ApiConfig>(api.config);
  api.model->models["m"]["1"].at_release = GateQueued{kNow + 3600, "first seen at release"};
  auto queued = api.get("/v1/gate/m/1");
  CHECK(queued.result() == http::status::precondition_failed);
  CHECK(gate_json(queued)["status"] == "queued");
  CHECK(gate_json(queued)["verified"] == false);
  CHECK(gate_json(queued)["expected_at"] == rfc3339(kNow + 3600));
}

TEST_CASE("gate: every member in nlohmann's order and escaping, secrets redacted, stale on time") {
  // A pass 10 days old, underpowered, then a system error whose explanation needs escaping and
  // carries the API token.
  auto pass = brief(3, VerdictClass::passed, kNow - 10 * kDay);
  pass.underpowered = true;
  pass.runs_needed = 12;
  auto error = brief(6, VerdictClass::error_provision, kNow - kDay);
  error.explanation = "pull \"img\" failed\\ \x01\t\n\x7f caf\xc3\xa9 token=sekrit-token";
  auto model = model_with(error, pass, pass);
  const std::vector<std::string> secrets = {"sekrit-token"};

  auto answer = answer_gate(*model, "m", "1", 40 * kDay, kNow, std::nullopt, secrets);
  CHECK(answer.status == 200);
  auto body = gate_json(answer.body);
  CHECK(body["status"] == "fresh");
  CHECK(body["age_s"] == 10 * kDay);
  CHECK(body["underpowered"] == true);
  CHECK(body["runs_needed"] == 12);
  CHECK(body["verified_at"] == rfc3339(kNow - 10 * kDay));
  CHECK(body["latest_error"]["explanation"] ==
        "pull \"img\" failed\\ \x01\t\n\x7f caf\xc3\xa9 token=[redacted]");
  CHECK(body["latest_error"]["runs_needed"] == nullptr);
  CHECK(answer.body.find("sekrit") == std::string::npos);
  CHECK(answer.body.find("\\u0001") != std::string::npos);  // escaped as dump() escapes it

  // Fresh up to the second verified_at + max_age, not fresh from the next one on.
  const std::int64_t max_age = 10 * kDay;
  CHECK(answer_gate(*model, "m", "1", max_age, kNow).status == 200);
  auto stale = answer_gate(*model, "m", "1", max_age, kNow + 1);
  CHECK(stale.status == 412);
  CHECK(gate_json(stale.body)["status"] == "not-fresh");
  CHECK(gate_json(stale.body)["age_s"] == 10 * kDay + 1);

  // In a mode with no verdict of its own, unknown, queued: each shape is dump(2)'s text too.
  auto in_mode = gate_json(answer_gate(*model, "m", "1", max_age, kNow, RebuildMode::full).body);
  CHECK(in_mode["mode"] == "full");
  CHECK(in_mode["reason"] == "full mode: never verified");
  auto unknown = answer_gate(*model, "m", "2", max_age, kNow);
  CHECK(unknown.status == 404);
  CHECK(gate_json(unknown.body)["status"] == "unknown");
  model->models["m"]["1"].at_release = GateQueued{kNow + 60, "first seen"};
  model->models["m"]["1"].conclusive.reset();
  CHECK(gate_json(answer_gate(*model, "m", "1", max_age, kNow).body)["status"] == "queued");
}

TEST_CASE("names are validated and traversal is rejected before any lookup") {
  Api api;
  for (const char* target : {"/v1/gate/../etc/passwd", "/v1/gate/m/..", "/v1/gate/%2e%2e/1",
                             "/v1/models/m/versions/..", "/v1/gate/.hidden/1"}) {
    INFO(target);
    auto status = api.get(target).result();
    CHECK((status == http::status::bad_request || status == http::status::not_found));
  }
  CHECK(api.get("/v1/gate/m%2F1/1").result() == http::status::bad_request);
  CHECK(api.get("/v1/models/m/versions/1").result() == http::status::ok);
  CHECK(api.get("/v1/verifications/abc").result() == http::status::bad_request);
  CHECK(api.get("/v1/verifications/999").result() == http::status::not_found);
  CHECK(api.get("/nope").result() == http::status::not_found);
  CHECK(api.call(http::verb::delete_, "/v1/models").result() == http::status::method_not_allowed);
}

TEST_CASE("POST /v1/verifications needs the bearer token") {
  Api api;
  const std::string body = R"({"model": "m", "version": "1"})";
  auto missing = api.call(http::verb::post, "/v1/verifications", body);
  CHECK(missing.result() == http::status::unauthorized);
  CHECK(missing[http::field::www_authenticate] == "Bearer realm=\"reverify\"");
  CHECK(api.call(http::verb::post, "/v1/verifications", body, "Bearer wrong").result() ==
        http::status::unauthorized);
  CHECK(api.call(http::verb::post, "/v1/verifications", body, "Bearer sekrit-tokenX").result() ==
        http::status::unauthorized);
  CHECK(api.call(http::verb::post, "/v1/verifications", body, "Basic sekrit-token").result() ==
        http::status::unauthorized);
  CHECK(api.triggered.empty());
  auto ok = api.call(http::verb::post, "/v1/verifications",
                     R"({"model": "m", "version": "1", "mode": "steps"})", "Bearer sekrit-token");
  CHECK(ok.result() == http::status::accepted);
  REQUIRE(api.triggered.size() == 1);
  CHECK(api.triggered[0].mode == std::optional<RebuildMode>(RebuildMode::steps));

  const auto auth = "Bearer sekrit-token";
  CHECK(api.call(http::verb::post, "/v1/verifications", "not json", auth).result() ==
        http::status::bad_request);
  CHECK(
      api.call(http::verb::post, "/v1/verifications", R"({"model": "../m", "version": "1"})", auth)
          .result() == http::status::bad_request);
  CHECK(api.call(http::verb::post, "/v1/verifications", R"({"model": "m", "version": "2"})", auth)
            .result() == http::status::not_found);
  CHECK(api.call(http::verb::post, "/v1/verifications",
                 R"({"model": "m", "version": "1", "mode": "fast"})", auth)
            .result() == http::status::bad_request);
  CHECK(api.triggered.size() == 1);

  api.config.token.clear();
  CHECK(api.call(http::verb::post, "/v1/verifications", body, "Bearer ").result() ==
        http::status::forbidden);
}

// Found #3: a body naming a key twice was accepted, the last value winning ("model": "a", ...,
// "model": "b" queued b).
TEST_CASE("a POST body that names a key twice is a 400 naming the key, and queues nothing") {
  Api api;
  const auto auth = "Bearer sekrit-token";
  auto twice = api.call(http::verb::post, "/v1/verifications",
                        R"({"model": "a", "version": "1", "model": "m"})", auth);
  CHECK(twice.result() == http::status::bad_request);
  CHECK(body_of(twice)["error"] ==
        "body.model: duplicate key \"model\" (a key may appear once per object)");
  auto nested = api.call(http::verb::post, "/v1/verifications",
                         R"({"model": "m", "version": "1", "x": {"k": 1, "k": 2}})", auth);
  CHECK(nested.result() == http::status::bad_request);
  CHECK(body_of(nested)["error"] ==
        "body.x.k: duplicate key \"k\" (a key may appear once per object)");
  auto broken = api.call(http::verb::post, "/v1/verifications", R"({"model": )", auth);
  CHECK(broken.result() == http::status::bad_request);
  CHECK(body_of(broken)["error"].get<std::string>().rfind("body: invalid JSON at byte offset", 0) ==
        0);
  CHECK(api.triggered.empty());
}

TEST_CASE("a trigger is answered 202 only once the daemon recorded it; its refusal is a 409") {
  Api api;
  const auto auth = "Bearer sekrit-token";
  const std::string body = R"({"model": "m", "version": "1"})";
  // Nothing is answered while the row is being written.
  std::optional<ApiResponse> answer;
  TriggerDone held;
  {
    ApiRequest request(http::verb::post, "/v1/verifications", 11);
    request.set(http::field::authorization, auth);
    request.body() = body;
    request.prepare_payload();
    ApiContext context;
    context.model = api.model;
    context.api = &api.config;
    context.now = kNow;
    context.trigger = [&](const TriggerRequest&, TriggerDone done) { held = std::move(done); };
    handle_api_request(request, context, [&](ApiResponse r) { answer = std::move(r); });
  }
  CHECK_FALSE(answer.has_value());
  REQUIRE(held);
  held(nlohmann::json{{"status", "queued"}, {"verification_id", 12}});
  REQUIRE(answer.has_value());
  CHECK(answer->result() == http::status::accepted);
  CHECK(body_of(*answer)["verification_id"] == 12);
  CHECK((*answer)[http::field::location] == "/v1/models/m/versions/1");

  api.outcome = make_error(ErrorCode::conflict, "m@1 already has a verification queued or running");
  auto duplicate = api.call(http::verb::post, "/v1/verifications", body, auth);
  CHECK(duplicate.result() == http::status::conflict);
  CHECK(body_of(duplicate)["error"] == "m@1 already has a verification queued or running");
  api.outcome = make_error(ErrorCode::io, "disk full");
  CHECK(api.call(http::verb::post, "/v1/verifications", body, auth).result() ==
        http::status::service_unavailable);
}

TEST_CASE("secrets are redacted from responses; the status page escapes what it shows") {
  Api api;
  auto verification = api.get("/v1/verifications/7");
  CHECK(verification.result() == http::status::ok);
  CHECK(verification.body().find("sekrit-token") == std::string::npos);
  CHECK(verification.body().find("[redacted]") != std::string::npos);
  auto page = api.get("/");
  CHECK(page.result() == http::status::ok);
  CHECK(page[http::field::content_type] == "text/html; charset=utf-8");
  CHECK(page.body().find("team-&lt;a&gt;") != std::string::npos);
  CHECK(page.body().find("team-<a>") == std::string::npos);
  CHECK(api.get("/metrics").body() == "reverify_queue_depth 0\n");
  CHECK(body_of(api.get("/healthz"))["status"] == "ok");
  auto list = body_of(api.get("/v1/verifications?limit=5"));
  CHECK(list["verifications"].size() == 1);
  CHECK_FALSE(list["verifications"][0].contains("log_tail"));
  CHECK(api.get("/v1/verifications?limit=0").result() == http::status::bad_request);
  CHECK(body_of(api.get("/v1/models"))["models"][0]["versions"][0]["version"] == "1");
}

// Found #4: redaction replaced the token as a substring of the serialized body, so a token `"`
// made every body invalid JSON and a token "ok" turned "status": "ok" into "[redacted]".
TEST_CASE("redaction works on string values: a secret can neither break JSON nor touch keys") {
  Api api;
  for (const std::string secret : {"\"", "status", "{", "\\", "\n"}) {
    CAPTURE(secret);
    api.config.secrets = {secret};
    for (const char* target : {"/healthz", "/v1/verifications/7", "/v1/models", "/v1/nothing"}) {
      CAPTURE(target);
      const auto body = nlohmann::json::parse(api.get(target).body(), nullptr, false);
      CHECK_FALSE(body.is_discarded());
    }
    CHECK(body_of(api.get("/healthz")).contains("status"));  // a key is never redacted
  }
  api.config.secrets = {"sekrit-token"};
  const auto verification = body_of(api.get("/v1/verifications/7"));
  CHECK(verification["log_tail"] == "token=[redacted] in the log");
  CHECK(body_of(api.get("/healthz"))["status"] == "ok");
}

TEST_CASE("/healthz answers 503 with the reason while the store fails, 200 once it works") {
  Api api;
  DaemonMetrics daemon(kNow);
  api.daemon_metrics = &daemon;
  CHECK(api.get("/healthz").result() == http::status::ok);
  const std::string reason =
      "/var/lib/reverify/reverify.db was cut from 118784 to 0 bytes while reverifyd ran";
  daemon.store_used(StoreUse::check, make_error(ErrorCode::io, reason), kNow - 30);
  daemon.store_used(StoreUse::read, make_error(ErrorCode::io, "malformed"), kNow);
  const auto failing = api.get("/healthz");
  CHECK(failing.result() == http::status::service_unavailable);
  const auto body = body_of(failing);
  CHECK(body["status"] == "store_failing");
  CHECK(body["error"] == reason);  // the earliest failing use
  CHECK(body["since"] == rfc3339(kNow - 30));
  // Each kind of use recovers on its own: a read that works again does not end a failed check.
  daemon.store_used(StoreUse::read, Status::success(), kNow);
  CHECK(api.get("/healthz").result() == http::status::service_unavailable);
  daemon.store_used(StoreUse::check, Status::success(), kNow);
  CHECK(api.get("/healthz").result() == http::status::ok);
  // A check that commits a write also ends a failed write (a trigger that could not be recorded).
  daemon.store_used(StoreUse::write, make_error(ErrorCode::io, "readonly"), kNow);
  CHECK(api.get("/healthz").result() == http::status::service_unavailable);
  daemon.store_used(StoreUse::check, Status::success(), kNow);
  CHECK(api.get("/healthz").result() == http::status::ok);
  const std::string metrics = daemon.render();
  CHECK(metrics.find("reverify_store_ok 1\n") != std::string::npos);
  CHECK(metrics.find("reverify_store_errors_total{operation=\"check\"} 1\n") != std::string::npos);
  CHECK(metrics.find("reverify_store_errors_total{operation=\"write\"} 1\n") != std::string::npos);
}

TEST_CASE("bearer comparison") {
  CHECK(bearer_token_matches("Bearer abc", "abc"));
  CHECK_FALSE(bearer_token_matches("Bearer abd", "abc"));
  CHECK_FALSE(bearer_token_matches("Bearer ab", "abc"));
  CHECK_FALSE(bearer_token_matches("Bearer ", ""));
  CHECK_FALSE(bearer_token_matches("", "abc"));
  // RFC 7235: the scheme is case-insensitive, then one or more spaces.
  CHECK(bearer_token_matches("bearer abc", "abc"));
  CHECK(bearer_token_matches("BEARER abc", "abc"));
  CHECK(bearer_token_matches("Bearer   abc", "abc"));
  CHECK_FALSE(bearer_token_matches("Bearerabc", "abc"));
  CHECK_FALSE(bearer_token_matches("Bearer\tabc", "abc"));
  CHECK_FALSE(bearer_token_matches("Bearers abc", "abc"));
  CHECK_FALSE(bearer_token_matches("Basic abc", "abc"));
}

// Found by trying the API as an attacker would: `?max-age=1s` (the CLI flag's spelling) was
// ignored and the gate answered 200 "fresh" where `?max_age=1s` answers 412; unknown parameters
// were ignored everywhere; with two Authorization headers the first one won.
TEST_CASE(
    "fail closed: unknown, misspelled or repeated query parameters are 400 naming the "
    "accepted ones, on every endpoint") {
  Api api;
  api.model = model_with(brief(3, VerdictClass::passed, kNow - 10 * kDay),
                         brief(3, VerdictClass::passed, kNow - 10 * kDay),
                         brief(3, VerdictClass::passed, kNow - 10 * kDay));
  CHECK(api.get("/v1/gate/m/1").result() == http::status::ok);
  CHECK(api.get("/v1/gate/m/1?max_age=1s").result() == http::status::precondition_failed);
  const auto misspelled = api.get("/v1/gate/m/1?max-age=1s");
  CHECK(misspelled.result() == http::status::bad_request);
  CHECK(body_of(misspelled)["error"] ==
        "unknown query parameter \"max-age\" (did you mean \"max_age\"?); this endpoint accepts "
        "max_age, mode");
  const auto twice = api.get("/v1/gate/m/1?max_age=400d&max_age=1s");
  CHECK(twice.result() == http::status::bad_request);
  CHECK(body_of(twice)["error"].get<std::string>().find("\"max_age\" given twice") !=
        std::string::npos);
  // Percent-encoded names are the names they encode; a bad escape is refused.
  CHECK(api.get("/v1/gate/m/1?max%5Fage=1s").result() == http::status::precondition_failed);
  CHECK(api.get("/v1/gate/m/1?max_age=1%").result() == http::status::bad_request);
  // Empty pairs are nothing.
  CHECK(api.get("/v1/gate/m/1?&max_age=40d&").result() == http::status::ok);
  const auto far = api.get("/v1/models?owner=team-a");
  CHECK(far.result() == http::status::bad_request);
  CHECK(body_of(far)["error"] ==
        "unknown query parameter \"owner\"; this endpoint accepts no query parameters");
  for (const char* target :
       {"/v1/models/m/versions/1?x=1", "/v1/verifications?modle=m", "/v1/verifications/7?limit=1",
        "/v1/attestations/m/1?verificaton=7", "/v1/attestations/m/1/policy?id=7",
        "/healthz?verbose=1", "/metrics?format=json", "/?refresh=30&x=1", "/models?pag=2",
        "/models/m/1?page=2", "/verifications/7?page=2"}) {
    CAPTURE(target);
    CHECK(api.get(target).result() == http::status::bad_request);
  }
  const auto suggestion = body_of(api.get("/v1/verifications?modle=m"))["error"].get<std::string>();
  CHECK(suggestion.find("(did you mean \"model\"?); this endpoint accepts limit, model, version") !=
        std::string::npos);
  CHECK(api.get("/v1/verifications?model=m&version=1&limit=5").result() == http::status::ok);
  CHECK(api.get("/models?page=1&refresh=30").result() == http::status::ok);
  // A POST takes no query parameters: nothing is queued.
  CHECK(api.call(http::verb::post, "/v1/verifications?mode=full",
                 R"({"model": "m", "version": "1"})", "Bearer sekrit-token")
            .result() == http::status::bad_request);
  CHECK(api.triggered.empty());
  // A path that names no endpoint is still a 404, whatever its query.
  CHECK(api.get("/v1/nothing?x=1").result() == http::status::not_found);
}

TEST_CASE("fail closed: a header read given twice, a misspelt one or an X-Reverify- one is 400") {
  Api api;
  const std::string body = R"({"model": "m", "version": "1"})";
  auto send = [&](const std::vector<std::pair<std::string, std::string>>& headers) {
    return api.call(http::verb::post, "/v1/verifications", body, "", headers);
  };
  // Two tokens: whichever counted, the answer would be a guess.
  auto two = send({{"Authorization", "Bearer sekrit-token"}, {"Authorization", "Bearer wrong"}});
  CHECK(two.result() == http::status::bad_request);
  CHECK(body_of(two)["error"] ==
        "header Authorization given twice: which one counts would be a guess");
  CHECK(send({{"Authorization", "Bearer wrong"}, {"authorization", "Bearer sekrit-token"}})
            .result() == http::status::bad_request);
  const auto misspelt = send({{"Authorisation", "Bearer sekrit-token"}});
  CHECK(misspelt.result() == http::status::bad_request);
  CHECK(body_of(misspelt)["error"] == "unknown header Authorisation (did you mean Authorization?)");
  CHECK(send({{"X-Reverify-Mode", "full"}, {"Authorization", "Bearer sekrit-token"}}).result() ==
        http::status::bad_request);
  CHECK(api.triggered.empty());
  // Headers reverify does not read pass (clients and proxies add their own); the scheme's case
  // does not matter.
  CHECK(send({{"Authorization", "bearer sekrit-token"},
              {"User-Agent", "curl/7.88"},
              {"X-Forwarded-For", "10.0.0.1"},
              {"X-Request-Id", "abc"}})
            .result() == http::status::accepted);
  CHECK(api.triggered.size() == 1);
  // On a GET too.
  CHECK(
      api.call(http::verb::get, "/v1/gate/m/1", "", "", {{"Host", "a"}, {"Host", "b"}}).result() ==
      http::status::bad_request);
}

TEST_CASE(
    "attestations: the latest decided verdict's summary, byte for byte, or why there is none") {
  Api api;
  auto& view = api.model->models["m"]["1"];
  CHECK(api.get("/v1/attestations/m/2").result() == http::status::not_found);
  CHECK(api.get("/v1/attestations/m/1%2F..").result() == http::status::bad_request);
  auto none = api.get("/v1/attestations/m/1");
  CHECK(none.result() == http::status::not_found);
  CHECK(body_of(none)["error"] == "no passed or failed verdict yet, so no signed summary");

  view.decided = brief(7, VerdictClass::passed, kNow - kDay);
  auto unsigned_ = api.get("/v1/attestations/m/1");
  CHECK(unsigned_.result() == http::status::not_found);
  CHECK(body_of(unsigned_)["error"].get<std::string>().find("attestation was not configured") !=
        std::string::npos);

  // The envelope goes out exactly as stored, even where it holds text a redaction would touch.
  auto row = std::make_shared<AttestationRow>();
  row->verification_id = 7;
  row->model = "m";
  row->version = "1";
  row->result = "PASSED";
  row->key_id = "abc";
  row->envelope_json = R"({"payload":"sekrit-token","payloadType":"application/vnd.in-toto+json"})";
  row->policy_json = R"({"schema":"reverify.tolerance-policy/v1"})";
  view.attestation = row;
  api.model->attestations[7] = row;
  auto latest = api.get("/v1/attestations/m/1");
  CHECK(latest.result() == http::status::ok);
  CHECK(latest.body() == row->envelope_json + "\n");
  CHECK(latest[http::field::content_type] == "application/vnd.in-toto.vsa+dsse");
  CHECK(latest["X-Reverify-Verification-Id"] == "7");
  CHECK(latest["X-Reverify-Key-Id"] == "abc");
  auto policy = api.get("/v1/attestations/m/1/policy");
  CHECK(policy.result() == http::status::ok);
  CHECK(policy.body() == row->policy_json + "\n");

  CHECK(api.get("/v1/attestations/m/1?verification=7").body() == row->envelope_json + "\n");
  CHECK(api.get("/v1/attestations/m/1?verification=8").result() == http::status::not_found);
  CHECK(api.get("/v1/attestations/m/1?verification=x").result() == http::status::bad_request);
  CHECK(api.get("/v1/attestations/m/1/other").result() == http::status::not_found);

  // The version's JSON and the status page link to it.
  CHECK(body_of(api.get("/v1/models/m/versions/1"))["signed_summary"]["url"] ==
        "/v1/attestations/m/1");
  CHECK(api.get("/models/m/1")
            .body()
            .find("<a href=\"/v1/attestations/m/1\">PASSED (verification 7)</a>") !=
        std::string::npos);
}

namespace {

// A second version beside m@1: its conclusive verdict is a failure, then a newer system error.
void add_failed_then_error(ReadModel& model) {
  auto& view = model.models["m"]["2"];
  view.row.model = "m";
  view.row.version = "2";
  view.row.owner = "team";
  view.row.manifest_sha256 = "sha1";
  auto failed = brief(11, VerdictClass::failed_input_drift, kNow - 2 * kDay);
  failed.version = "2";
  auto error = brief(12, VerdictClass::error_provision, kNow - kDay);
  error.version = "2";
  view.conclusive = failed;
  view.decided = failed;
  view.latest = error;
  VerificationRow retry;
  retry.id = 13;
  retry.model = "m";
  retry.version = "2";
  retry.trigger = VerificationTrigger::retry;
  retry.attempt = 2;
  retry.not_before = kNow + 600;
  model.unfinished.push_back(retry);
  model.stats.queued = 1;
  view.active_id = 13;
}

}  // namespace

TEST_CASE("status page: what blocks the gate first, the next verifications, HTML for people") {
  Api api;
  // m@1 passed a day ago and is fresh; m@2 failed, then errored (the newest verdict).
  auto& fresh = api.model->models["m"]["1"];
  fresh.conclusive = fresh.passed = fresh.latest = brief(7, VerdictClass::passed, kNow - kDay);
  add_failed_then_error(*api.model);
  const auto page = api.get("/");
  REQUIRE(page.result() == http::status::ok);
  CHECK(page[http::field::content_type] == "text/html; charset=utf-8");
  CHECK(std::string(page[http::field::server]).rfind("reverifyd/", 0) == 0);
  const std::string& html = page.body();
  for (const char* expected :
       {"<html lang=\"en\">", "<main>", "name=\"viewport\"", "<a href=\"/?refresh=30\">",
        "data-version=\"m@2\" data-attention=\"failed\"", "failed:input-drift",
        "retry, attempt 2 after error:provision", "<a href=\"/models/m/2\">"}) {
    INFO(expected);
    CHECK(html.find(expected) != std::string::npos);
  }
  // The failure leads, although the newest verdict is the error; the fresh version is not listed.
  CHECK(html.find("data-version=\"m@1\"") == std::string::npos);
  CHECK(html.find("http-equiv=\"refresh\"") == std::string::npos);  // opt-in only
  CHECK(html.find("href=\"/v1/verifications/") == std::string::npos);

  // The JSON says the same: where each version stands, and the gate's answer.
  const auto listed = body_of(api.get("/v1/models"))["models"][0]["versions"];
  CHECK(listed[0]["attention"] == "fresh");
  CHECK(listed[0]["gate"]["ok"] == true);
  CHECK(listed[1]["attention"] == "failed");
  CHECK(listed[1]["gate"]["reason"].get<std::string>().find("failed:input-drift") !=
        std::string::npos);

  const auto reloading = api.get("/?refresh=30");
  CHECK(reloading.body().find("<meta http-equiv=\"refresh\" content=\"30; url=/?refresh=30\">") !=
        std::string::npos);
  CHECK(api.get("/?refresh=1").result() == http::status::bad_request);
  CHECK(api.get("/models?page=0").result() == http::status::bad_request);

  // Each page of the set answers, and unknown ones are HTML 404s.
  CHECK(api.get("/models").body().find("data-version=\"m@1\" data-attention=\"fresh\"") !=
        std::string::npos);
  const auto version = api.get("/models/m/2");
  CHECK(version.result() == http::status::ok);
  CHECK(version.body().find("data-gate=\"blocked\"") != std::string::npos);
  CHECK(version.body().find("id=\"newer-error\"") != std::string::npos);
  CHECK(api.get("/verifications").result() == http::status::ok);
  CHECK(api.get("/verifications/7").result() == http::status::ok);
  CHECK(api.get("/verifications/99").result() == http::status::not_found);
  CHECK(api.get("/models/m/9").result() == http::status::not_found);
  CHECK(api.get("/models/m/9")[http::field::content_type] == "text/html; charset=utf-8");
}

TEST_CASE("verification page: each check drawn against its band, the log tail redacted") {
  Api api;
  auto& row = api.model->recent.front();
  Verdict verdict;
  verdict.cls = VerdictClass::failed_out_of_tolerance;
  verdict.explanation = "x";
  CheckResult primary =
      test::banded_check("primary:accuracy", CheckKind::primary, CheckOutcome::failed, 0.8, 0.9,
                         CheckBand{0.9 - 0.05, 0.9 + 0.05});
  primary.margin = -0.05;
  primary.explanation = "out";
  CheckResult psi =
      test::banded_check("distribution:psi", CheckKind::distribution, CheckOutcome::passed, 0.01,
                         std::nullopt, CheckBand{std::nullopt, 0.1});
  psi.explanation = "in";
  verdict.checks = {primary, psi};
  row.verdict = verdict;
  const std::string html = api.get("/verifications/7").body();
  CHECK(html.find("data-observed=\"0.80000000000000004\" data-upper=\"0.95000000000000007\" "
                  "data-lower=\"0.84999999999999998\" data-reference=\"0.90000000000000002\" "
                  "data-inside=\"false\"") != std::string::npos);
  CHECK(html.find("aria-label=\"distribution:psi: observed 0.01, inside the accepted band at most "
                  "0.1 (psi)\"") != std::string::npos);
  // Each band chart has a value axis: round ticks and the check's unit.
  CHECK(html.find("<text class=\"tick\"") != std::string::npos);
  CHECK(html.find(
            "<text class=\"unit\" x=\"228.0\" y=\"56.0\" text-anchor=\"end\">accuracy</text>") !=
        std::string::npos);
  // On a narrow screen the checks table is a stack of cards, each cell labelled with its column.
  CHECK(html.find("<table id=\"checks\" class=\"cards\">") != std::string::npos);
  CHECK(html.find("<td class=\"why\" data-label=\"Explanation\">out</td>") != std::string::npos);
  CHECK(html.find("token=[redacted] in the log") != std::string::npos);
  CHECK(html.find("sekrit-token") == std::string::npos);
}

TEST_CASE("a manifest changed since its verdict: both pages say what moved, field by field") {
  Api api;
  api.model = model_with(brief(7, VerdictClass::passed, kNow - kDay, "old"),
                         brief(7, VerdictClass::passed, kNow - kDay, "old"),
                         brief(7, VerdictClass::passed, kNow - kDay, "old"));
  auto& view = api.model->models["m"]["1"];
  view.manifest_moved =
      ManifestMoved{"m", "1", "sha1", "old", 7, {"code"}, {"code.commit: \"aa\" -> \"bb<\""}};
  for (const char* path : {"/models/m/1", "/verifications/7"}) {
    CAPTURE(path);
    const std::string html = api.get(path).body();
    CHECK(html.find("What moved in the manifest since verification 7") != std::string::npos);
    CHECK(html.find("<p id=\"manifest-moved\">Inputs moved: code. The new manifest is not "
                    "verified yet.</p>") != std::string::npos);
    CHECK(html.find("code.commit: &quot;aa&quot; -&gt; &quot;bb&lt;&quot;") != std::string::npos);
  }
  // Another verification of the version is not the one it moved from: its page says nothing.
  api.model->recent.front().id = 8;
  CHECK(api.get("/verifications/8").body().find("manifest-moved") == std::string::npos);
}

TEST_CASE("status page: 100,000 versions stay readable (the list is capped, the rest paginated)") {
  Api api;
  auto& versions = api.model->models["big"];
  for (int i = 0; i < 100'000; ++i) {
    const std::string name = "1." + std::to_string(i);
    auto& view = versions[name];
    view.row.model = "big";
    view.row.version = name;
    view.row.manifest_sha256 = "sha1";
    // Every 10th failed; the rest passed, half of them too long ago for the gate.
    auto verdict =
        brief(i + 100, i % 10 == 0 ? VerdictClass::failed_out_of_tolerance : VerdictClass::passed,
              kNow - (i % 2 ? 50 : 1) * kDay);
    verdict.model = "big";
    verdict.version = name;
    view.latest = view.conclusive = verdict;
    if (verdict.cls == VerdictClass::passed)
      view.passed = verdict;
  }
  attach_standing(*api.model, kNow);  // as build_read_model does: once, not per request
  const std::string page = api.get("/").body();
  const auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  CHECK(count(page, "<tr data-version=") == 200);
  CHECK(count(page, "data-attention=\"failed\"") == 200);  // the failures lead
  CHECK(page.find("First 200 of 60001 shown") != std::string::npos);
  CHECK(page.size() < 1'000'000);
  const std::string second = api.get("/models?page=2").body();
  CHECK(count(second, "<tr data-version=") == 500);
  CHECK(second.find("Page 2 of 201.") != std::string::npos);
  CHECK(api.get("/models?page=201").body().find("data-attention=\"fresh\"") != std::string::npos);
}

TEST_CASE("status page of an empty inventory says where versions come from") {
  Api api;
  api.model->models.clear();
  CHECK(api.get("/").body().find("No model versions yet") != std::string::npos);
}

TEST_CASE("the read model's standing serves pages until the first fresh pass outgrows max_age") {
  Api api;
  auto& view = api.model->models["m"]["1"];
  view.conclusive = view.passed = view.latest = brief(7, VerdictClass::passed, kNow - kDay);
  attach_standing(*api.model, kNow);
  const std::int64_t max_age = api.config.default_max_age_s;
  CHECK(api.model->standing_until == kNow - kDay + max_age + 1);
  CHECK(standing_at(*api.model, kNow + 60) == api.model->standing);  // reused
  const auto later = standing_at(*api.model, api.model->standing_until);
  CHECK(later != api.model->standing);  // worked out again: the pass is too old now
  REQUIRE(later->size() == 1);
  CHECK(later->front().attention == Attention::outdated);
  CHECK(api.model->standing->front().attention == Attention::fresh);
}

TEST_CASE("status page: an underpowered pass is listed as underpowered, after failures") {
  Api api;
  auto& view = api.model->models["m"]["1"];
  auto pass = brief(7, VerdictClass::passed, kNow - kDay);
  pass.underpowered = true;
  view.conclusive = view.passed = view.latest = pass;
  add_failed_then_error(*api.model);
  const std::string html = api.get("/").body();
  const auto underpowered = html.find("data-version=\"m@1\" data-attention=\"uncalibrated\"");
  REQUIRE(underpowered != std::string::npos);
  CHECK(html.find("<span class=\"tag warn\">underpowered</span>", underpowered) !=
        std::string::npos);
  CHECK(html.find("data-version=\"m@2\"") < underpowered);  // the failure first
  // Under gate.require_power the pages and /v1/models answer as /v1/gate does: not passing.
  auto gate_of_1 = [&] {
    const auto models = body_of(api.get("/v1/models"));
    for (const auto& entry : models["models"]) {
      for (const auto& version : entry["versions"]) {
        if (version["model"] == "m" && version["version"] == "1")
          return version["gate"];
      }
    }
    return nlohmann::json();
  };
  CHECK(gate_of_1()["ok"] == true);
  CHECK(api.get("/v1/gate/m/1").result() == http::status::ok);
  ApiConfig strict = *api.model->api;
  strict.gate_require_power = true;
  api.model->api = std::make_shared<const ApiConfig>(strict);
  CHECK(api.get("/v1/gate/m/1").result() == http::status::precondition_failed);
  CHECK(gate_of_1()["ok"] == false);
}

namespace {

// A plan of January 2027 with nothing in it: each test adds what it shows.
CyclePlan january_plan() {
  CyclePlan plan;
  plan.cycle_start = std::chrono::sys_days(std::chrono::year(2027) / 1 / 1);
  plan.cycle_end = std::chrono::sys_days(std::chrono::year(2027) / 2 / 1);
  return plan;
}

std::shared_ptr<const CyclePlan> shared(CyclePlan plan) {
  return std::make_shared<const CyclePlan>(std::move(plan));
}

}  // namespace

TEST_CASE("status page: the calibrations of underpowered versions, planned, running and done") {
  Api api;
  CyclePlan plan = january_plan();
  plan.calibrations.push_back({"m", "1", 100, 17, 0,
                               "underpowered: primary:accuracy cannot catch tolerance.detect; ~57 "
                               "seed runs in all would (40 so far)"});
  plan.calibrating = CalibrationRunning{"m", "1", *parse_rfc3339("2027-01-03T10:00:00Z")};
  plan.calibrated.push_back({"m", "<2>", "5 seed-only run(s) added; stopped at --max-runs 45"});
  api.model->plan = shared(plan);
  const std::string html = api.get("/").body();
  for (const char* expected :
       {"<h3 id=\"calibrations-h\">Calibrations of underpowered versions</h3>",
        "<p id=\"calibrating\">Calibrating <a href=\"/models/m/1\">m@1</a> since "
        "2027-01-03T10:00:00Z.</p>",
        "<table id=\"calibrations\" class=\"cards\">", "~57 seed runs in all would (40 so far)",
        "<table id=\"calibrated\" class=\"cards\">", "m@&lt;2&gt;",
        "5 seed-only run(s) added; stopped at --max-runs 45"}) {
    INFO(expected);
    CHECK(html.find(expected) != std::string::npos);
  }
  // The same plan as `reverify plan --json` writes it.
  const auto json = plan_to_json(plan);
  CHECK(json["calibrations"][0]["runs_to_add"] == 17);
  CHECK(json["calibrating"]["running"]["since"] == "2027-01-03T10:00:00Z");
  CHECK(json["calibrating"]["done"][0]["version"] == "<2>");
  // Nothing planned, running or done: no calibrations part at all.
  api.model->plan = shared(january_plan());
  CHECK(api.get("/").body().find("calibrations-h") == std::string::npos);
}

TEST_CASE("status page: the large versions without a subsample reference, and each mode's cost") {
  Api api;
  CyclePlan plan = january_plan();
  ModeDue subsample;
  subsample.mode = RebuildMode::subsample;
  subsample.every_s = 30 * 86'400;
  subsample.gpu_hours = 20;
  subsample.cost_basis = CostBasis::subsample_fraction;
  subsample.due = true;  // never run
  ModeDue full = subsample;
  full.mode = RebuildMode::full;
  full.every_s = 90 * 86'400;
  full.cost_basis = CostBasis::full_run;
  full.last_completed = plan.cycle_start - std::chrono::days(10);
  full.next_due = *full.last_completed + std::chrono::days(90);
  full.due = false;
  plan.cadence.push_back({"m", "1", {full, subsample}});
  plan.cadence_warnings.push_back(
      {"m", RebuildMode::steps, 7 * 86'400, "m's cadence runs steps every 7 d, but this cycle"});
  plan.missing_subsample.push_back({"m", "2", "its cadence runs subsample every 30 d",
                                    "a subsample rebuild of it is refused (nothing to judge it "
                                    "against); record one when releasing it"});
  api.model->plan = shared(plan);
  const std::string html = api.get("/").body();
  for (const char* expected :
       {"<h3 id=\"missing-subsample-h\">Large versions without a subsample reference</h3>",
        "<table id=\"missing-subsample\" class=\"cards\">", "<a href=\"/models/m/2\">m@2</a>",
        "its cadence runs subsample every 30 d", "a subsample rebuild of it is refused",
        "data-label=\"Cost from\">subsample.fraction</td>",
        "data-label=\"Next due\">never run</td>",
        "data-label=\"Next due\">2027-03-22T00:00:00Z</td>",
        "<li>Warning: m&#39;s cadence runs steps every 7 d, but this cycle</li>"}) {
    INFO(expected);
    CHECK(html.find(expected) != std::string::npos);
  }
  // What the status page reads, `reverify plan --json` writes: a mode never run has no date.
  const auto json = plan_to_json(plan);
  CHECK(json["cadence"][0]["modes"][1]["next_due"].is_null());
  CHECK(json["cadence"][0]["modes"][1]["due"] == true);
  CHECK(json["cadence"][0]["modes"][0]["next_due"] == "2027-03-22T00:00:00Z");
  CHECK(json["cadence_warnings"][0]["mode"] == "steps");
  CHECK(json["missing_subsample"][0]["large"] == "its cadence runs subsample every 30 d");
  plan.missing_subsample.clear();
  api.model->plan = shared(plan);
  CHECK(api.get("/").body().find("missing-subsample-h") == std::string::npos);
}

TEST_CASE(
    "status page: a calibration whose leave-one-out pages too often, and the check to blame") {
  Api api;
  CyclePlan plan = january_plan();
  plan.calibration_warnings.push_back(
      {"m",
       "1",
       "2 of 24 seed runs paged where 0.24 are expected at false_page_rate 0.01",
       {{"parity:threshold=0.5:segment:radius=low", 2}}});
  api.model->plan = shared(plan);
  const std::string html = api.get("/").body();
  for (const char* expected :
       {"<h3 id=\"calibration-warnings-h\">Calibrations that page honest reruns</h3>",
        "<table id=\"calibration-warnings\" class=\"cards\">", "<a href=\"/models/m/1\">m@1</a>",
        "parity:threshold=0.5:segment:radius=low (2 runs)",
        "2 of 24 seed runs paged where 0.24 are expected at false_page_rate 0.01"}) {
    INFO(std::string(expected));
    CHECK(html.find(expected) != std::string::npos);
  }
  CHECK(plan_to_json(plan)["calibration_warnings"][0]["blamed"][0]["runs"] == 2);
  // No warning: no part at all.
  api.model->plan = shared(january_plan());
  CHECK(api.get("/").body().find("calibration-warnings-h") == std::string::npos);
}
