// reverify status: every model version with its latest verdict, from the daemon's API.

#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/daemon_client.hpp"

namespace {

struct StatusArguments {
  reverify::cli::DaemonAddress daemon;
  bool json = false;
};

int run_status(const StatusArguments& options) {
  using namespace reverify;
  auto base = cli::daemon_url(options.daemon);
  if (!base.ok())
    return cli::usage_error("status", base.error().message);
  auto response = cli::daemon_request(*base, "GET", "/v1/models");
  if (!response.ok() || response->status != 200) {
    std::cerr << "reverify status: cannot read " << *base << "/v1/models: "
              << (response.ok() ? "HTTP " + std::to_string(response->status)
                                : response.error().message)
              << "\n";
    return 2;
  }
  if (options.json) {
    std::cout << response->body;
    return 0;
  }
  auto body = nlohmann::json::parse(response->body, nullptr, false);
  if (body.is_discarded()) {
    std::cerr << "reverify status: the daemon answered something that is not JSON\n";
    return 2;
  }
  std::cout << std::left << std::setw(40) << "MODEL@VERSION" << std::setw(28) << "LATEST"
            << std::setw(22) << "AT"
            << "NOW\n";
  for (const auto& model : body["models"]) {
    for (const auto& v : model["versions"]) {
      if (v.value("removed", false))
        continue;
      std::string latest = "never verified", at;
      if (v["last_verdict"].is_object()) {
        latest = v["last_verdict"].value("class", "");
        at = v["last_verdict"].value("finished_at", "");
      }
      if (!v["manifest_error"].is_null())
        latest = "manifest invalid";
      std::string now = v["active"].is_object() ? v["active"].value("state", "") : "";
      std::cout << std::setw(40) << (model.value("model", "") + "@" + v.value("version", ""))
                << std::setw(28) << latest << std::setw(22) << at << now << "\n";
    }
  }
  return 0;
}

reverify::cli::Action define_status(CLI::App& app) {
  auto o = std::make_shared<StatusArguments>();
  reverify::cli::add_daemon_options(app, o->daemon);
  reverify::cli::add_json_flag(app, o->json);
  return [o] { return run_status(*o); };
}

const reverify::cli::Registrar kStatus{
    {"status", "model versions and their latest verdicts (from reverifyd)", define_status}};

}  // namespace
