// reverify status: every model version, most urgent first (policies/attention.hpp, the status
// page's order): where it stands, the verdict the release gate goes by and how old it is, the
// owner, what runs for it now and the one-line reason; from the daemon's API. --owner, --state
// and --model keep only the matching versions (in the table and in --json).

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/daemon_client.hpp"
#include "cli/verdict_lines.hpp"
#include "core/unix_time.hpp"
#include "policies/attention.hpp"

namespace {

struct StatusArguments {
  reverify::cli::DaemonAddress daemon;
  std::optional<std::string> owner, model;
  std::optional<reverify::Attention> state;
  bool json = false;
};

bool keep(const StatusArguments& options, const std::string& model, const nlohmann::json& v) {
  if (v.value("removed", false))
    return false;
  if (options.model && model != *options.model)
    return false;
  if (options.owner && v.value("owner", "") != *options.owner)
    return false;
  return !options.state || v.value("attention", "") == to_string(*options.state);
}

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
  auto body = nlohmann::json::parse(response->body, nullptr, false);
  if (!body.is_object() || !body["models"].is_array()) {
    std::cerr << "reverify status: the daemon answered something that is not its /v1/models\n";
    return 2;
  }
  const UnixSeconds now = system_now();
  // Most urgent first, as on the status page: what the gate goes by, not the newest verdict.
  struct Line {
    Attention rank;
    std::vector<std::string> cells;
  };
  std::vector<Line> lines;
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& model : body["models"]) {
    const std::string name = model.value("model", "");
    nlohmann::json versions = nlohmann::json::array();
    for (const auto& v : model["versions"]) {
      if (!keep(options, name, v))
        continue;
      versions.push_back(v);
      const std::string attention = v.value("attention", "");
      const Attention rank = enum_from_string<Attention>(attention).value_or(Attention::fresh);
      const auto& conclusive = v["last_conclusive_verdict"];
      std::string verdict = conclusive.is_object() ? conclusive.value("class", "") : "none yet";
      if (!v["manifest_error"].is_null())
        verdict = "manifest invalid";
      const std::string now_running = v["active"].is_object() ? v["active"].value("state", "") : "";
      lines.push_back(
          {rank,
           {name + "@" + v.value("version", ""), attention, verdict,
            cli::verdict_age(conclusive, now), v.value("owner", ""),
            now_running.empty() ? "-" : now_running, cli::status_reason(v, rank, now)}});
    }
    if (!versions.empty())
      kept.push_back({{"model", name}, {"versions", std::move(versions)}});
  }
  if (options.json) {
    std::cout << nlohmann::json{{"models", std::move(kept)}}.dump(2) << "\n";
    return 0;
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.rank < b.rank; });
  const std::vector<std::string> headings = {"MODEL@VERSION", "STATE", "GATE GOES BY", "AGE",
                                             "OWNER",         "NOW",   "REASON"};
  std::vector<std::size_t> width(headings.size());
  for (std::size_t c = 0; c < headings.size(); ++c) {
    width[c] = headings[c].size();
    for (const auto& line : lines)
      width[c] = std::max(width[c], line.cells[c].size());
  }
  const auto print = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      text += cells[c];
      if (c + 1 < cells.size())
        text += std::string(width[c] - cells[c].size() + 2, ' ');
    }
    std::cout << text << "\n";
  };
  print(headings);
  for (const auto& line : lines)
    print(line.cells);
  if (lines.empty())
    std::cout << "(no model version matches)\n";
  return 0;
}

reverify::cli::Action define_status(CLI::App& app) {
  auto o = std::make_shared<StatusArguments>();
  reverify::cli::add_daemon_options(app, o->daemon);
  app.add_option("--owner", o->owner, "only the versions of this owner (the manifest's owner)")
      ->type_name("OWNER");
  reverify::add_enum_option(app, "--state", o->state,
                            "only the versions in this state (the STATE column): failed lists "
                            "exactly the failing ones");
  app.add_option("--model", o->model, "only the versions of this model")->type_name("MODEL");
  reverify::cli::add_json_flag(app, o->json);
  return [o] { return run_status(*o); };
}

const reverify::cli::Registrar kStatus{
    {"status",
     "model versions, most urgent first: where each stands, the verdict the gate goes by and its "
     "age, owner, reason (from reverifyd)",
     define_status}};

}  // namespace
