// reverify gate MODEL@VERSION --max-age D: the release gate for CI jobs. Exit 0 verified and
// fresh, 1 not (the reason is printed), 2 unknown model version, unreachable daemon or usage.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/daemon_client.hpp"
#include "core/names.hpp"
#include "core/unix_time.hpp"

namespace {

struct GateArguments {
  std::string target;
  std::optional<std::string> max_age;
  reverify::cli::DaemonAddress daemon;
  bool json = false;
};

int run_gate(const GateArguments& options) {
  using namespace reverify;
  auto target = parse_model_version(options.target);
  if (!target.ok())
    return cli::usage_error("gate", target.error().message);
  std::string query;
  if (options.max_age)
    query = "?max_age=" + url_encode(*options.max_age);
  auto base = cli::daemon_url(options.daemon);
  if (!base.ok())
    return cli::usage_error("gate", base.error().message);
  auto response = cli::daemon_request(*base, "GET",
                                      "/v1/gate/" + target->model + "/" + target->version + query);
  if (!response.ok()) {
    std::cerr << "reverify gate: cannot reach " << *base << ": " << response.error().message
              << "\n";
    return 2;
  }
  auto body = nlohmann::json::parse(response->body, nullptr, false);
  const std::string reason = body.is_object() && body.contains("reason")
                                 ? body["reason"].get<std::string>()
                             : body.is_object() ? body.value("error", response->body)
                                                : response->body;
  if (options.json)
    std::cout << response->body;
  switch (response->status) {
    case 200:
      if (!options.json)
        std::cout << target->id() << ": verified and fresh: " << reason << "\n";
      return 0;
    case 412:
      if (!options.json)
        std::cout << target->id() << ": NOT verified: " << reason << "\n";
      return 1;
    case 404:
      std::cerr << "reverify gate: " << target->id() << ": unknown: " << reason << "\n";
      return 2;
    default:
      std::cerr << "reverify gate: HTTP " << response->status << ": " << reason << "\n";
      return 2;
  }
}

reverify::cli::Action define_gate(CLI::App& app) {
  auto o = std::make_shared<GateArguments>();
  app.add_option("MODEL@VERSION", o->target, "the model version a release wants to ship")
      ->required();
  app.add_option(
         "--max-age", o->max_age,
         "the last pass must be at most this old: a duration with unit s, m, h or d "
         "(e.g. 40d); without it the daemon's api.default_max_age applies (40d unless configured)")
      ->type_name("DURATION")
      ->check(reverify::duration());
  reverify::cli::add_daemon_options(app, o->daemon);
  reverify::cli::add_json_flag(app, o->json);
  return [o] { return run_gate(*o); };
}

const reverify::cli::Registrar kGate{
    {"gate", "release gate: exit 0 if verified and fresh, 1 if not, 2 if unknown", define_gate}};

}  // namespace
