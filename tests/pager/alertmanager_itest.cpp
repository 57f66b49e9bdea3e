// A real Alertmanager (Debian's prometheus-alertmanager), started by the test on 127.0.0.1 at a
// free port with its storage in a temp folder, routing to this test's webhook receiver: a failure
// arrives with its labels and annotations, is visible at GET /api/v2/alerts, and resolves after a
// later pass. Waits poll with bounded loops; nothing depends on timing for correctness.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/http_client.hpp"
#include "pager/dispatcher.hpp"
#include "pager/page_builder.hpp"
#include "pager/senders.hpp"
#include "tests/pager/http_receiver.hpp"
#include "tests/pager/memory_outbox.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/temp_dir.hpp"

extern char** environ;

using namespace reverify;
using reverify::test::HttpReceiver;
using reverify::test::MemoryOutbox;
using reverify::test::ReceivedRequest;
using reverify::test::Reply;
namespace fs = std::filesystem;
using reverify::test::free_port;
using reverify::test::TempDir;

namespace {

// Polls `ready` up to ~60 s (bounded), sleeping between tries only to avoid spinning.
bool eventually(const std::function<bool()>& ready) {
  for (int i = 0; i < 600; ++i) {
    if (ready())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

class Alertmanager {
 public:
  Alertmanager(const fs::path& dir, const std::string& webhook_url) : port_(free_port()) {
    std::ofstream(dir / "am.yml") << "route:\n"
                                     "  receiver: hook\n"
                                     "  group_by: [alertname, model, version]\n"
                                     "  group_wait: 0s\n"
                                     "  group_interval: 1s\n"
                                     "  repeat_interval: 1h\n"
                                     "receivers:\n"
                                     "  - name: hook\n"
                                     "    webhook_configs:\n"
                                     "      - url: "
                                  << webhook_url << "\n        send_resolved: true\n";
    const std::vector<std::string> args{
        "/usr/bin/prometheus-alertmanager", "--config.file=" + (dir / "am.yml").string(),
        "--storage.path=" + (dir / "am").string(),
        "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--cluster.listen-address="};
    std::vector<char*> argv;
    for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const std::string log = (dir / "am.log").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(rc == 0);
  }
  ~Alertmanager() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  nlohmann::json alerts() const {
    HttpRequest get;
    get.url = url("/api/v2/alerts");
    auto response = http_request(get);
    if (!response || response->status != 200)
      return nlohmann::json::array();
    return nlohmann::json::parse(response->body, nullptr, false);
  }

 private:
  std::uint16_t port_;
  pid_t pid_ = 0;
};

PageInput input(VerdictClass cls, CheckOutcome outcome) {
  PageInput in;
  in.model = "digits-mlp";
  in.version = "2026.11.1";
  in.owner = "team-vision";
  in.verdict.cls = cls;
  CheckResult c;
  c.name = "primary:accuracy";
  c.outcome = outcome;
  c.observed = 0.90;
  c.reference = 0.96;
  c.band = CheckBand{0.957, 0.963};
  c.margin = -0.057;
  in.verdict.checks = {c};
  in.verdict.explanation = "primary:accuracy is 0.06 below the seed-run mean, band [0.957, 0.963]";
  in.public_url = "http://127.0.0.1:8420";
  in.verification_id = 5;
  in.created_at = "2026-11-29T08:00:00Z";
  return in;
}

}  // namespace

TEST_CASE("Alertmanager: a failure fires with labels and annotations, a later pass resolves it") {
  const TempDir temp("pager-am-");
  const fs::path& dir = temp.path;
  {
    HttpReceiver hook([](const ReceivedRequest&) { return Reply{200, "{}"}; });
    Alertmanager am(dir, hook.url("/am"));
    REQUIRE(eventually([&] {
      HttpRequest get;
      get.url = am.url("/-/ready");
      auto r = http_request(get);
      return r.ok() && r->status == 200;
    }));

    PagerConfig config;
    auto& sender = config.senders["am"];
    sender.name = "am";
    sender.kind = SenderKind::alertmanager;
    sender.url = am.url();
    sender.resend_interval = std::chrono::minutes(1);
    auto notifiers = make_notifiers(config);
    REQUIRE(notifiers.ok());
    MemoryOutbox outbox;
    std::vector<std::string> log;
    Dispatcher dispatcher(outbox, *notifiers,
                          [&](LogLevel level, const std::string& l, const LogFields&) {
                            if (level != LogLevel::info)  // problems only: deliveries are info
                              log.push_back(l);
                          });

    outbox.record(build_page(input(VerdictClass::failed_out_of_tolerance, CheckOutcome::failed)),
                  {"am"});
    auto fired = dispatcher.drain_once(PageClock::now());
    REQUIRE(fired.ok());
    CHECK(fired->delivered == 1);
    CHECK(log.empty());

    // Visible at GET /api/v2/alerts with its labels and annotations.
    nlohmann::json alert;
    REQUIRE(eventually([&] {
      auto alerts = am.alerts();
      if (alerts.size() != 1)
        return false;
      alert = alerts[0];
      return true;
    }));
    CHECK(alert["labels"] == nlohmann::json{{"alertname", "ReverifyVerificationFailed"},
                                            {"model", "digits-mlp"},
                                            {"version", "2026.11.1"},
                                            {"owner", "team-vision"},
                                            {"class", "failed:out-of-tolerance"},
                                            {"severity", "error"}});
    CHECK(alert["annotations"]["summary"].get<std::string>().starts_with(
        "digits-mlp@2026.11.1 failed:out-of-tolerance"));
    CHECK(alert["annotations"]["description"] ==
          "primary:accuracy is 0.06 below the seed-run mean, band [0.957, 0.963]");
    CHECK(alert["annotations"]["links"].get<std::string>().find(
              "http://127.0.0.1:8420/verifications/5") != std::string::npos);
    CHECK(alert["status"]["state"] == "active");

    // Alertmanager notified the receiver, firing.
    auto webhook_with = [&](const std::string& status) {
      for (const auto& r : hook.requests()) {
        auto body = nlohmann::json::parse(r.body, nullptr, false);
        if (body.is_object() && body.value("status", "") == status)
          return body;
      }
      return nlohmann::json();
    };
    REQUIRE(eventually([&] { return !webhook_with("firing").is_null(); }));
    auto firing = webhook_with("firing");
    CHECK(firing["alerts"][0]["labels"]["model"] == "digits-mlp");
    CHECK(firing["alerts"][0]["annotations"]["summary"] == alert["annotations"]["summary"]);

    // A later pass resolves it.
    outbox.record(build_page(input(VerdictClass::passed, CheckOutcome::passed)), {"am"});
    auto resolved = dispatcher.drain_once(PageClock::now());
    REQUIRE(resolved.ok());
    CHECK(resolved->delivered == 1);
    REQUIRE(eventually([&] { return am.alerts().empty(); }));
    REQUIRE(eventually([&] { return !webhook_with("resolved").is_null(); }));
    auto done = webhook_with("resolved");
    CHECK(done["alerts"][0]["labels"]["version"] == "2026.11.1");
    CHECK(done["alerts"][0]["status"] == "resolved");
    CHECK(log.empty());
  }
}
