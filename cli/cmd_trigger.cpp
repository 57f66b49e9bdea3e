// reverify trigger MODEL@VERSION: queue a verification now (it jumps the scheduled queue).
// The bearer token comes from --token-file, else the config's api.token_file.

#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/daemon_client.hpp"
#include "core/names.hpp"
#include "settings/config.hpp"

namespace {

reverify::Result<std::string> read_token(const reverify::cli::Args& args) {
  using namespace reverify;
  if (auto file = args.option("token-file")) {
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
  if (auto path = args.option("config")) {
    auto config = load_config(*path);
    if (!config.ok())
      return config.error();
    return config->api.token;
  }
  return std::string();
}

int run_trigger(reverify::cli::Args& args) {
  using namespace reverify;
  if (args.positionals().size() != 1)
    return cli::usage_error("trigger", "expected MODEL@VERSION");
  auto target = parse_model_version(args.positionals()[0]);
  if (!target.ok())
    return cli::usage_error("trigger", target.error().message);
  nlohmann::json body = {{"model", target->model}, {"version", target->version}};
  if (auto mode = args.option("mode")) {
    if (*mode != "full" && *mode != "steps") {
      return cli::usage_error("trigger", "--mode: expected full or steps");
    }
    body["mode"] = *mode;
  }
  auto token = read_token(args);
  if (!token.ok())
    return cli::usage_error("trigger", token.error().message);
  auto base = cli::daemon_url(args);
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

const reverify::cli::Registrar kTrigger{
    {"trigger",
     "MODEL@VERSION [--mode full|steps] [--url URL | --config FILE] [--token-file F]",
     "queue a verification now, ahead of the schedule (exit 1 if one is already queued)",
     {"mode", "url", "config", "token-file"},
     {},
     run_trigger}};

}  // namespace
