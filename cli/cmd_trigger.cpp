// reverify trigger MODEL@VERSION: queue a verification now (it jumps the scheduled queue), print
// its id and its page, and with --wait follow it to its verdict and exit as `reverify run` would
// for that verdict. The bearer token comes from --token-file, else the config's api.token_file.

#include <chrono>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/daemon_client.hpp"
#include "cli/run_report.hpp"
#include "cli/verdict_lines.hpp"
#include "core/command_line.hpp"
#include "core/names.hpp"
#include "core/page_links.hpp"
#include "core/rebuild_mode.hpp"
#include "core/secret_file.hpp"
#include "core/text.hpp"
#include "settings/config.hpp"

namespace {

// --wait polls every second at first, then every kSlowPoll: a rebuild takes minutes to hours.
constexpr std::chrono::seconds kFastPoll{1}, kSlowPoll{5};
constexpr std::chrono::seconds kFastPollFor{60};
// How long --wait keeps trying a daemon that stopped answering (a restart) before giving up.
constexpr std::chrono::seconds kUnreachableLimit{120};
// How long a just-queued verification may be missing from the daemon's answers.
constexpr std::chrono::seconds kNotShownLimit{30};

struct TriggerArguments {
  std::string target;
  std::optional<reverify::RebuildMode> mode;
  std::optional<std::string> token_file;
  reverify::cli::DaemonAddress daemon;
  bool wait = false;
  bool json = false;
};

reverify::Result<std::string> read_token(const TriggerArguments& options) {
  using namespace reverify;
  if (auto file = options.token_file)
    return read_secret_file(*file, "--token-file", SecretForm::bearer_token);
  if (auto path = options.daemon.config) {
    auto config = load_config(*path);
    if (!config.ok())
      return config.error();
    return config->api.token;
  }
  return std::string();
}

// What to do about a 401: where the token is expected, and how to give it.
std::string unauthorized_hint(const TriggerArguments& options, bool sent_token) {
  std::string hint =
      sent_token ? "the daemon refused the token" : "no token was given (a trigger needs one)";
  hint +=
      ": give --token-file FILE (the file reverifyd's api.token_file names, e.g. "
      "/etc/reverify/api.token) or --config FILE (its api.token_file is read)";
  if (options.token_file)
    hint += "; " + *options.token_file + " holds a different token than the daemon's";
  else if (options.daemon.config)
    hint += "; the api.token_file of " + *options.daemon.config + " is not the daemon's";
  return hint;
}

// The verification's page: the daemon's answer names it, relative to the daemon unless its
// public_url is set.
std::string page_url(const nlohmann::json& answer, const std::string& base, std::int64_t id) {
  const std::string page = answer.is_object() ? answer.value("page", std::string()) : "";
  if (page.empty())
    return reverify::verification_page_url(base, id);
  return page.front() == '/' ? base + page : page;
}

// Follows verification `id` until it has a verdict; returns its JSON, or an error status.
reverify::Result<nlohmann::json> wait_for_verdict(const std::string& base, std::int64_t id) {
  using namespace reverify;
  const auto started = std::chrono::steady_clock::now();
  auto unreachable_since = std::optional<std::chrono::steady_clock::time_point>();
  std::string shown_state;
  for (;;) {
    auto response = cli::daemon_request(base, "GET", "/v1/verifications/" + std::to_string(id));
    const auto now = std::chrono::steady_clock::now();
    if (!response.ok() || response->status >= 500) {
      // A daemon restarting answers again within seconds; the verification survives it.
      if (!unreachable_since)
        unreachable_since = now;
      if (now - *unreachable_since > kUnreachableLimit) {
        return make_error(ErrorCode::network, response.ok()
                                                  ? "HTTP " + std::to_string(response->status)
                                                  : response.error().message);
      }
    } else if (response->status == 404 && now - started < kNotShownLimit) {
      // The 202 came once the row was committed; the daemon's read model shows it a moment
      // later (it is rebuilt after each commit).
    } else if (response->status != 200) {
      return make_error(ErrorCode::not_found, "verification " + std::to_string(id) + ": HTTP " +
                                                  std::to_string(response->status) + " " +
                                                  response->body);
    } else {
      unreachable_since.reset();
      auto row = nlohmann::json::parse(response->body, nullptr, false);
      if (!row.is_object())
        return make_error(ErrorCode::parse, "the daemon answered something that is not JSON");
      const std::string state = row.value("state", "");
      if (state == "done")
        return row;
      if (state != shown_state) {
        std::cerr << "verification " << id << ": " << state << "\n";
        shown_state = state;
      }
    }
    std::this_thread::sleep_for(now - started < kFastPollFor ? kFastPoll : kSlowPoll);
  }
}

int run_trigger(const TriggerArguments& options) {
  using namespace reverify;
  auto target = parse_model_version(options.target);
  if (!target.ok())
    return cli::usage_error("trigger", target.error().message);
  nlohmann::json body = {{"model", target->model}, {"version", target->version}};
  if (options.mode)
    body["mode"] = to_string(*options.mode);
  auto token = read_token(options);
  if (!token.ok())
    return cli::usage_error("trigger", token.error().message);
  auto base = cli::daemon_url(options.daemon);
  if (!base.ok())
    return cli::usage_error("trigger", base.error().message);
  auto response = cli::daemon_request(*base, "POST", "/v1/verifications", body.dump(), *token);
  if (!response.ok()) {
    std::cerr << "reverify trigger: cannot reach " << *base << ": " << response.error().message
              << "\n";
    return 2;
  }
  auto answer = nlohmann::json::parse(response->body, nullptr, false);
  if (response->status != 202) {
    std::cerr << "reverify trigger: HTTP " << response->status << ": "
              << (answer.is_object() ? answer.value("error", response->body) : response->body);
    if (response->status == 401)
      std::cerr << "\n  " << unauthorized_hint(options, !token->empty());
    std::cerr << "\n";
    return response->status == 409 ? 1 : 2;
  }
  const std::int64_t id = answer.is_object() ? answer.value("verification_id", 0) : 0;
  const std::string url = page_url(answer, *base, id);
  if (options.json && !options.wait) {
    answer["url"] = url;
    std::cout << answer.dump(2) << "\n";
    return 0;
  }
  if (!options.json)
    std::cout << "queued verification " << id << " of " << target->id() << ": " << url << "\n";
  if (!options.wait)
    return 0;
  auto verdict = wait_for_verdict(*base, id);
  if (!verdict.ok()) {
    std::cerr << "reverify trigger: stopped waiting for verification " << id << ": "
              << verdict.error().message << "\n";
    return 2;
  }
  const auto cls = enum_from_string<VerdictClass>(verdict->value("class", ""));
  if (options.json) {
    (*verdict)["url"] = url;
    std::cout << verdict->dump(2) << "\n";
  } else {
    std::cout << "verification " << id << " of " << target->id() << ": "
              << cli::verdict_line(*verdict) << "\n";
  }
  return cls ? cli::exit_status(*cls) : 2;
}

reverify::cli::Action define_trigger(CLI::App& app) {
  auto o = std::make_shared<TriggerArguments>();
  app.add_option("MODEL@VERSION", o->target, "the model version to verify now")->required();
  reverify::add_enum_option(
      app, "--mode", o->mode,
      "full: the whole training run; steps: its first models.<name>.max_steps steps; "
      "subsample: the job on the release's recorded subsample, judged against its subsample "
      "reference (refused for a version without one); without it: steps for a model configured "
      "large, else full");
  app.add_option("--token-file", o->token_file,
                 "file holding the API's bearer token (reverifyd's api.token_file); without it "
                 "the token_file of --config")
      ->type_name("FILE");
  app.add_flag("--wait", o->wait,
               "follow the verification to its verdict (state changes on stderr) and exit as "
               "`reverify run` does for it: 0 passed, 1 failed:*, 2 error:*, 3 uncalibrated");
  reverify::cli::add_daemon_options(app, o->daemon);
  reverify::cli::add_json_flag(app, o->json);
  return [o] { return run_trigger(*o); };
}

const reverify::cli::Registrar kTrigger{
    {"trigger",
     "queue a verification now, ahead of the schedule; print its id and page (--wait: follow it "
     "to its verdict)",
     define_trigger}};

}  // namespace
