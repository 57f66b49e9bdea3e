// reverify gate MODEL@VERSION --max-age D: the release gate for CI jobs. Exit 0 verified and
// fresh, 1 not (the reason is printed), 2 unknown model version, unreachable daemon or usage.

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/daemon_client.hpp"
#include "core/names.hpp"
#include "core/unix_time.hpp"

namespace {

int run_gate(reverify::cli::Args& args) {
  using namespace reverify;
  if (args.positionals().size() != 1)
    return cli::usage_error("gate", "expected MODEL@VERSION");
  auto target = parse_model_version(args.positionals()[0]);
  if (!target.ok())
    return cli::usage_error("gate", target.error().message);
  std::string query;
  if (auto max_age = args.option("max-age")) {
    if (auto parsed = parse_duration_s(*max_age); !parsed.ok()) {
      return cli::usage_error("gate", "--max-age: " + parsed.error().message);
    }
    query = "?max_age=" + url_encode(*max_age);
  }
  auto base = cli::daemon_url(args);
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
  if (args.flag("json"))
    std::cout << response->body;
  switch (response->status) {
    case 200:
      if (!args.flag("json"))
        std::cout << target->id() << ": verified and fresh: " << reason << "\n";
      return 0;
    case 412:
      if (!args.flag("json"))
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

const reverify::cli::Registrar kGate{
    {"gate",
     "MODEL@VERSION [--max-age 40d] [--url URL | --config FILE] [--json]",
     "release gate: exit 0 if verified and fresh, 1 if not, 2 if unknown",
     {"max-age", "url", "config"},
     {"json"},
     run_gate}};

}  // namespace
