// What a platform team operates, against one real reverifyd (process runner, slow fake trainer,
// a webhook receiver that refuses every connection): its log under the journal (a failed verdict
// is a warning, each failed delivery attempt an error, the give-up critical, every line with its
// priority and key=value fields), its /metrics (per-version state, every failed attempt counted,
// stage durations, registry syncs; accepted by promtool), the shipped alert rules and dashboard
// using only metric names it exposes, and the CLI conventions (`trigger --wait` exits with the
// verdict's code, `status --state failed` lists exactly the failing versions, `plan` says what it
// skipped and why).

#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "store/store.hpp"
#include "tests/daemon/daemon_fixture.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

constexpr const char* kOperationsToken = "ops-test-token-0123456789abcdef0123456789";

// Lines of `text` that `journalctl -p LEVEL` would show: priority <N> with N <= max_priority.
std::vector<std::string> at_most(const std::string& text, int max_priority) {
  std::vector<std::string> shown;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 3 && line[0] == '<' && line[2] == '>' && line[1] - '0' <= max_priority)
      shown.push_back(line);
  }
  return shown;
}

bool any_line_has(const std::vector<std::string>& lines, const std::vector<std::string>& parts) {
  for (const auto& line : lines) {
    bool all = true;
    for (const auto& part : parts)
      all = all && line.find(part) != std::string::npos;
    if (all)
      return true;
  }
  return false;
}

// Every metric name a scrape exposes: sample names and the families its # TYPE lines declare.
std::set<std::string> exposed_names(const std::string& scrape) {
  std::set<std::string> names;
  std::istringstream lines(scrape);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      names.insert(line.substr(7, line.find(' ', 7) - 7));
    } else if (!line.empty() && line[0] != '#') {
      names.insert(line.substr(0, line.find_first_of("{ ")));
    }
  }
  return names;
}

std::set<std::string> names_used_in(const std::string& text) {
  std::set<std::string> names;
  const std::regex name(R"(reverify_[a-z0-9_]+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator();
       ++it) {
    names.insert(it->str());
  }
  return names;
}

// The first column of each line after the header of `reverify status`.
std::vector<std::string> listed_versions(const std::string& table) {
  std::vector<std::string> ids;
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != '(')
      ids.push_back(line.substr(0, line.find(' ')));
  }
  return ids;
}

struct Operated {
  TempDir temp;
  DaemonUnderTest daemon;

  Operated() {
    const auto commit = make_trainer_repo(temp.path / "trainer");
    // Two versions whose recorded accuracy (0.5, tight seed runs) the trainer's 0.9 cannot match
    // at level equivalent: failed:*; one at level rerunnable: passed.
    for (const char* version : {"1.0", "2.0"}) {
      auto manifest = slow_manifest("fail", version, temp.path / "trainer", commit, 0.2);
      manifest["level"] = "equivalent";
      manifest["evaluation"]["primary"]["value"] = 0.5;
      manifest["tolerance"]["seed_runs"]["accuracy"] = {0.5, 0.501, 0.499, 0.5, 0.502};
      write_file(temp.path / "registry/fail" / version / "manifest.json", manifest.dump(2));
    }
    write_file(temp.path / "registry/ok/1.0/manifest.json",
               slow_manifest("ok", "1.0", temp.path / "trainer", commit, 0.2).dump(2));
    write_file(temp.path / "api.token", std::string(kOperationsToken) + "\n");
    fs::permissions(temp.path / "api.token", fs::perms::owner_read | fs::perms::owner_write);
    daemon.dir = temp.path;
    daemon.port = free_port();
    daemon.config = temp.path / "reverify.yaml";
    daemon.as_journal = true;
    // Nothing listens on the receiver's port: every delivery attempt is refused.
    const auto refusing = free_port();
    write_file(daemon.config, R"(state_dir: state
api: {port: )" + std::to_string(daemon.port) +
                                  R"(, token_file: api.token}
sources: [{name: local, kind: directory, root: registry}]
sync_interval: 1s
schedule: {per_cycle: 10, max_concurrent: 2, jitter: 0s}
models: {default: {timeout: 2m}}
runner: {kind: process, process: {path_env: /usr/bin:/bin, kill_grace: 1s}}
pager:
  public_url: https://reverify.example
  retry: {initial: 1s, max_backoff: 1s, max_attempts: 2}
  senders: {hook: {kind: webhook, timeout: 2s, url: 'http://127.0.0.1:)" +
                                  std::to_string(refusing) + R"(/hook'}}
  routes: [{owner: "*", senders: [hook]}]
)");
  }

  std::unique_ptr<Store> store() const {
    auto opened = Store::open(temp.path / "state/reverify.db", system_now, true);
    REQUIRE(opened.ok());
    return std::move(*opened);
  }

  // Polls until `done()` holds or `limit` passes.
  template <class Done>
  bool wait_for(Done done, std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done())
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return done();
  }

  // Every verification has its verdict and every page delivery has given up.
  bool settled(std::size_t verifications) const {
    if (!fs::exists(temp.path / "state/reverify.db"))
      return false;
    auto s = store();
    auto all = s->verifications("", "", 1000);
    auto unfinished = s->unfinished();
    auto pages = s->delivery_counts();
    return all.ok() && unfinished.ok() && pages.ok() && all->size() >= verifications &&
           unfinished->empty() && pages->pending == 0 && pages->failed >= 1;
  }

  std::string scrape() const {
    auto metrics = get(daemon.url() + "/metrics");
    REQUIRE(metrics.ok());
    REQUIRE(metrics->status == 200);
    return metrics->body;
  }
};

}  // namespace

TEST_CASE("a failed verdict and a failing receiver show at warning level; metrics count both") {
  Operated ops;
  ops.daemon.start();
  REQUIRE(ops.daemon.wait_ready());
  REQUIRE(ops.wait_for([&] { return ops.settled(3); }, std::chrono::seconds(120)));
  const std::string log = ops.daemon.log();
  INFO(log);

  // Every line carries its priority: nothing reaches the journal at the default level. Debug
  // (<7>) holds only the routine: a registry sync that found nothing new.
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    CHECK(std::regex_search(line, std::regex(R"(^<[2-7]>reverifyd: [a-z]+: )")));
    // `journalctl -g 'model=fail'` finds every line about a verification of it: queued,
    // started, finished, paged.
    if (std::regex_search(line,
                          std::regex(R"(: (starting |reconciling |queued )?verification \d)")) ||
        line.find(" page=") != std::string::npos) {
      CHECK(line.find(" model=") != std::string::npos);
      CHECK(line.find(" version=") != std::string::npos);
      CHECK(line.find(" verification=") != std::string::npos);
    }
    if (line.rfind("<7>", 0) == 0)
      CHECK(std::regex_search(line, std::regex(R"(^<7>reverifyd: debug: source local: )")));
    if (line.find("new or changed") != std::string::npos &&
        line.find(", 0 new") != std::string::npos)
      CHECK(line.rfind("<7>", 0) == 0);
  }
  // `journalctl -p warning` (priority <= 4) shows the failed verdict, with its fields and its
  // page's link, and the failed delivery attempts and the give-up.
  const auto warnings = at_most(log, 4);
  auto failed = ops.store()->latest_verdicts(VerdictFilter::any);
  REQUIRE(failed.ok());
  for (const auto& brief : *failed) {
    const std::string id = std::to_string(brief.id);
    if (brief.model == "fail") {
      CHECK(is_failure(brief.cls));
      CHECK(any_line_has(warnings,
                         {"<4>reverifyd: warning: verification " + id + " of fail@", " model=fail ",
                          " verification=" + id + " ", " class=failed:",
                          " url=https://reverify.example/verifications/" + id, " reason="}));
    } else {
      CHECK(brief.cls == VerdictClass::passed);
      CHECK(!any_line_has(warnings, {"verification " + id + " of ok@1.0"}));
      CHECK(any_line_has(at_most(log, 6), {"<6>reverifyd: info: verification " + id}));
    }
  }
  CHECK(
      any_line_has(warnings, {"<3>reverifyd: error: page ", "to hook: attempt 1 failed, will retry",
                              " sender=hook", " attempt=1"}));
  CHECK(any_line_has(warnings, {"<2>reverifyd: critical: page ", "attempt 2 failed; giving up",
                                " sender=hook", " attempt=2"}));
  // One line per event: no verdict line carries the long explanation.
  for (const auto& line : warnings)
    CHECK(line.size() < 600);

  // /metrics: each version's state, every failed attempt (not only the give-ups), the stages.
  std::string scrape;
  REQUIRE(ops.wait_for(
      [&] {
        scrape = ops.scrape();
        return scrape.find("reverify_pages_pending{sender=\"hook\"} 0") != std::string::npos &&
               scrape.find(
                   "reverify_stage_duration_seconds_count{stage=\"total\",runner=\"process\"} 3") !=
                   std::string::npos;
      },
      std::chrono::seconds(20)));
  INFO(scrape);
  for (const char* expected :
       {"reverify_version_state{model=\"fail\",version=\"1.0\",owner=\"team-test\",state="
        "\"failed\"} 1",
        "reverify_version_state{model=\"fail\",version=\"2.0\",owner=\"team-test\",state="
        "\"failed\"} 1",
        "reverify_version_state{model=\"ok\",version=\"1.0\",owner=\"team-test\",state=\"passed\"} "
        "1",
        "reverify_versions{state=\"failed\"} 2", "reverify_versions{state=\"passed\"} 1",
        "reverify_registry_syncs_total{source=\"local\",outcome=\"error\"} 0",
        "reverify_config_reloads_total{outcome=\"applied\"} 0",
        "reverify_calibrations_started_total 0",
        "reverify_stage_duration_seconds_count{stage=\"preflight\",runner=\"process\"} 3"}) {
    CHECK(scrape.find(expected) != std::string::npos);
  }
  // Three pages, two attempts each, none delivered: six failed attempts, three give-ups.
  const auto counts = ops.store()->delivery_counts();
  REQUIRE(counts.ok());
  const auto& hook = counts->by_sender.at("hook");
  CHECK(hook.failed == 3);
  CHECK(hook.failed_attempts == 6);
  CHECK(scrape.find("reverify_page_delivery_failures_total{sender=\"hook\"} 6") !=
        std::string::npos);
  CHECK(scrape.find("reverify_page_delivery_attempts_total{sender=\"hook\"} 6") !=
        std::string::npos);
  CHECK(scrape.find("reverify_pages_failed_total{sender=\"hook\"} 3") != std::string::npos);
  CHECK(std::regex_search(
      scrape, std::regex(R"(reverify_registry_syncs_total\{source="local",outcome="ok"\} [1-9])")));

  // promtool accepts the whole exposition, the daemon's own series included.
  const auto file = ops.temp.write("metrics.txt", scrape);
  const Ran promtool =
      run_program({"sh", "-c", "promtool check metrics < " + file.string()}, ops.temp.path);
  INFO(promtool.out << promtool.err);
  CHECK(promtool.exit_code == 0);

  // The shipped rules and dashboard use only names this daemon exposes.
  const auto exposed = exposed_names(scrape);
  for (const char* shipped :
       {"contrib/prometheus/reverify.rules.yml", "contrib/grafana/reverify-dashboard.json"}) {
    const auto used = names_used_in(read_file(source_dir() / shipped));
    CHECK(used.size() >= 10);
    for (const auto& name : used) {
      INFO(shipped << " uses " << name);
      CHECK(exposed.count(name) == 1);
    }
  }
}

TEST_CASE(
    "trigger --wait exits with the verdict's code; status --state failed lists exactly them") {
  Operated ops;
  ops.daemon.start();
  REQUIRE(ops.daemon.wait_ready());
  REQUIRE(ops.wait_for([&] { return ops.settled(3); }, std::chrono::seconds(120)));
  const auto& dir = ops.temp.path;
  const std::string url = ops.daemon.url();
  const std::string token = (dir / "api.token").string();

  // A failing version: exit 1, as `reverify run` gives failed:*; its id and its page printed.
  const Ran fail =
      run_cli({"trigger", "fail@1.0", "--wait", "--token-file", token, "--url", url}, dir);
  INFO(fail.out << fail.err);
  CHECK(fail.exit_code == 1);
  CHECK(std::regex_search(
      fail.out,
      std::regex(
          R"(^queued verification (\d+) of fail@1\.0: https://reverify\.example/verifications/\d+\n)")));
  CHECK(std::regex_search(fail.out,
                          std::regex(R"(\nverification \d+ of fail@1\.0: failed:[a-z-]+: )")));
  // A passing one: exit 0; with --json, the verification as JSON with its page.
  const Ran pass =
      run_cli({"trigger", "ok@1.0", "--wait", "--json", "--token-file", token, "--url", url}, dir);
  INFO(pass.out << pass.err);
  CHECK(pass.exit_code == 0);
  const auto verdict = nlohmann::json::parse(pass.out, nullptr, false);
  REQUIRE(verdict.is_object());
  CHECK(verdict["class"] == "passed");
  CHECK(verdict["url"].get<std::string>().starts_with("https://reverify.example/verifications/"));
  // Without a token: the 401 says where the token is expected.
  const Ran refused = run_cli({"trigger", "ok@1.0", "--url", url}, dir);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("HTTP 401") != std::string::npos);
  CHECK(refused.err.find("--token-file FILE") != std::string::npos);
  CHECK(refused.err.find("--config FILE") != std::string::npos);
  CHECK(refused.err.find("api.token_file") != std::string::npos);

  // status --state failed: exactly the two failing versions; the table has ages and owners.
  const Ran failing = run_cli({"status", "--state", "failed", "--url", url}, dir);
  INFO(failing.out << failing.err);
  CHECK(failing.exit_code == 0);
  auto ids = listed_versions(failing.out);
  std::sort(ids.begin(), ids.end());
  CHECK(ids == std::vector<std::string>{"fail@1.0", "fail@2.0"});
  CHECK(failing.out.find(" ago ") != std::string::npos);
  CHECK(failing.out.find("team-test") != std::string::npos);
  const Ran all = run_cli({"status", "--url", url}, dir);
  CHECK(listed_versions(all.out).size() == 3);
  CHECK(listed_versions(all.out).front().starts_with("fail@"));  // most urgent first
  const Ran passing =
      run_cli({"status", "--state", "fresh", "--model", "ok", "--json", "--url", url}, dir);
  const auto filtered = nlohmann::json::parse(passing.out, nullptr, false);
  REQUIRE(filtered.is_object());
  REQUIRE(filtered["models"].size() == 1);
  CHECK(filtered["models"][0]["model"] == "ok");
  CHECK(filtered["models"][0]["versions"].size() == 1);
  const Ran nobody = run_cli({"status", "--owner", "nobody", "--url", url}, dir);
  CHECK(listed_versions(nobody.out).empty());
  CHECK(run_cli({"status", "--state", "broken", "--url", url}, dir).exit_code == 2);

  // plan: nothing left to run this cycle, and it says why, naming each skipped version.
  const Ran plan = run_cli({"plan", "--config", ops.daemon.config.string()}, dir);
  INFO(plan.out << plan.err);
  CHECK(plan.exit_code == 0);
  CHECK(plan.out.find(": 0 to run, 0 deferred, 3 skipped") != std::string::npos);
  CHECK(plan.out.find("nothing to run: 3 version(s) already verified in this cycle") !=
        std::string::npos);
  CHECK(plan.out.find("skipped fail@1.0: verified ") != std::string::npos);
  const auto plan_json = nlohmann::json::parse(
      run_cli({"plan", "--config", ops.daemon.config.string(), "--json"}, dir).out, nullptr, false);
  REQUIRE(plan_json.is_object());
  CHECK(plan_json["skipped"].size() == 3);
  CHECK(plan_json["skipped_counts"]["verified-this-cycle"] == 3);
  CHECK(plan_json["nothing_to_run"].get<std::string>().find("already verified") !=
        std::string::npos);
}
