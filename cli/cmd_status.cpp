// reverify status: every model version, most urgent first (policies/attention.hpp, the status
// page's order): the verdict the release gate goes by (a newer error:* is named beside it, never
// in its place), when, where it stands and what runs for it now; from the daemon's API.

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/daemon_client.hpp"
#include "policies/attention.hpp"

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
  // Most urgent first, as on the status page: what the gate goes by, not the newest verdict.
  struct Line {
    Attention rank;
    std::string id, verdict, at, standing, now;
  };
  std::vector<Line> lines;
  for (const auto& model : body["models"]) {
    for (const auto& v : model["versions"]) {
      if (v.value("removed", false))
        continue;
      Line line;
      line.id = model.value("model", "") + "@" + v.value("version", "");
      const std::string attention = v.value("attention", "");
      line.rank = enum_from_string<Attention>(attention).value_or(Attention::fresh);
      line.standing = attention;
      line.verdict = "none yet";
      if (const auto& c = v["last_conclusive_verdict"]; c.is_object()) {
        line.verdict = c.value("class", "");
        line.at = c.value("finished_at", "");
      }
      if (!v["manifest_error"].is_null())
        line.verdict = "manifest invalid";
      const auto& latest = v["last_verdict"];
      if (latest.is_object() && latest.value("class", "").rfind("error:", 0) == 0 &&
          (!v["last_conclusive_verdict"].is_object() ||
           latest.value("id", 0) != v["last_conclusive_verdict"].value("id", 0))) {
        line.standing += " (newest: " + latest.value("class", "") + ")";
      }
      line.now = v["active"].is_object() ? v["active"].value("state", "") : "";
      lines.push_back(std::move(line));
    }
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.rank < b.rank; });
  std::cout << std::left << std::setw(40) << "MODEL@VERSION" << std::setw(28) << "GATE GOES BY"
            << std::setw(22) << "AT" << std::setw(42) << "STANDING"
            << "NOW\n";
  for (const auto& line : lines) {
    std::cout << std::setw(40) << line.id << std::setw(28) << line.verdict << std::setw(22)
              << line.at << std::setw(42) << line.standing << line.now << "\n";
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
    {"status",
     "model versions, most urgent first: the verdict the gate goes by, where each stands (from "
     "reverifyd)",
     define_status}};

}  // namespace
