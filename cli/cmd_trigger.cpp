// reverify trigger MODEL@VERSION: queue a verification now (it jumps the scheduled queue).
// The bearer token comes from --token-file, else the config's api.token_file.

#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/daemon_client.hpp"
#include "core/command_line.hpp"
#include "core/names.hpp"
#include "core/rebuild_mode.hpp"
#include "settings/config.hpp"

namespace {

struct TriggerArguments {
  std::string target;
  std::optional<std::string> mode;
  std::optional<std::string> token_file;
  reverify::cli::DaemonAddress daemon;
};

reverify::Result<std::string> read_token(const TriggerArguments& options) {
  using namespace reverify;
  if (auto file = options.token_file) {
    std::ifstream in(*file);
    if (!in)
      return make_error(ErrorCode::not_found, "--token-file: cannot read " + *file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    auto token = buffer.str();
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r'))
      token.pop_back();
    return token;
  }
  if (auto path = options.daemon.config) {
    auto config = load_config(*path);
    if (!config.ok())
      return config.error();
    return config->api.token;
  }
  return std::string();
}

int run_trigger(const TriggerArguments& options) {
  using namespace reverify;
  auto target = parse_model_version(options.target);
  if (!target.ok())
    return cli::usage_error("trigger", target.error().message);
  nlohmann::json body = {{"model", target->model}, {"version", target->version}};
  if (options.mode)
    body["mode"] = *options.mode;
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
  if (response->status == 202) {
    std::cout << target->id() << ": queued\n";
    return 0;
  }
  auto answer = nlohmann::json::parse(response->body, nullptr, false);
  std::cerr << "reverify trigger: HTTP " << response->status << ": "
            << (answer.is_object() ? answer.value("error", response->body) : response->body)
            << "\n";
  return response->status == 409 ? 1 : 2;
}

reverify::cli::Action define_trigger(CLI::App& app) {
  auto o = std::make_shared<TriggerArguments>();
  app.add_option("MODEL@VERSION", o->target, "the model version to verify now")->required();
  app.add_option("--mode", o->mode,
                 "full: the whole training run; steps: its first models.<name>.max_steps steps; "
                 "without it: steps for a model configured large, else full")
      ->type_name(reverify::enum_names<reverify::RebuildMode>("|"))
      ->check(reverify::one_of(reverify::enum_choices<reverify::RebuildMode>()));
  app.add_option("--token-file", o->token_file,
                 "file holding the API's bearer token (reverifyd's api.token_file); without it "
                 "the token_file of --config")
      ->type_name("FILE");
  reverify::cli::add_daemon_options(app, o->daemon);
  return [o] { return run_trigger(*o); };
}

const reverify::cli::Registrar kTrigger{
    {"trigger", "queue a verification now, ahead of the schedule (exit 1 if one is already queued)",
     define_trigger}};

}  // namespace
