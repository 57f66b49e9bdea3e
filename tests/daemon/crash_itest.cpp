// Crash safety (docs/design.md "State, crash safety"): reverifyd is killed with SIGKILL at 12
// random points while a batch of slow verifications runs (process runner). After a final restart:
// every verification has exactly one verdict, none is lost (every model version ends with a
// verdict that is not a runner loss), and no page was delivered twice.

#include <doctest/doctest.h>

#include <map>
#include <set>

#include "store/store.hpp"
#include "tests/daemon/daemon_fixture.hpp"

using namespace reverify;
using namespace reverify::test;

TEST_CASE("kill -9 at random points: one verdict each, none lost, no page twice") {
  TempDir temp;
  const auto commit = make_trainer_repo(temp.path / "trainer");
  constexpr int kVersions = 6;
  for (int i = 1; i <= kVersions; ++i) {
    const std::string version = "2." + std::to_string(i);
    write_file(temp.path / "registry/slow" / version / "manifest.json",
               slow_manifest("slow", version, temp.path / "trainer", commit, 1.5).dump(2));
  }
  DaemonUnderTest daemon;
  daemon.dir = temp.path;
  daemon.port = free_port();
  daemon.config = temp.path / "reverify.yaml";
  write_file(daemon.config, "state_dir: state\napi: {port: " + std::to_string(daemon.port) + R"(}
sources: [{name: local, kind: directory, root: registry}]
schedule: {per_cycle: 6, max_concurrent: 2, jitter: 0s, retry: {initial: 1s, max: 1s, max_attempts: 50}}
models: {default: {timeout: 2m}}
runner: {kind: process, process: {path_env: /usr/bin:/bin, kill_grace: 1s}}
pager:
  senders: {sink: {kind: file, path: pages.jsonl}}
  routes: [{owner: "*", senders: [sink]}]
)");

  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int> delay_ms(200, 2500);
  constexpr int kKills = 12;
  for (int kill = 0; kill < kKills; ++kill) {
    daemon.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    daemon.kill9();
  }
  // Final run: let it reconcile and finish everything.
  daemon.start();
  REQUIRE(daemon.wait_ready());
  const auto db = temp.path / "state/reverify.db";
  auto open_store = [&] {
    auto opened = Store::open(db, system_now, true);
    REQUIRE(opened.ok());
    return std::move(*opened);
  };
  bool settled = false;
  for (int i = 0; i < 900 && !settled; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto s = open_store();
    auto unfinished = s->unfinished();
    auto latest = s->latest_verdicts(VerdictFilter::conclusive);
    auto counts = s->delivery_counts();
    settled = unfinished.ok() && unfinished->empty() && latest.ok() &&
              latest->size() == kVersions && counts.ok() && counts->pending == 0;
  }
  INFO(daemon.log());
  REQUIRE(settled);
  ::kill(daemon.pid, SIGTERM);
  CHECK(daemon.wait_exit(std::chrono::seconds(30)) == 0);

  auto s = open_store();
  auto all = s->verifications("", "", 1000);
  REQUIRE(all.ok());
  std::map<std::string, int> conclusive_per_version;
  for (const auto& v : *all) {
    INFO("verification " << v.id << " " << v.model << "@" << v.version);
    CHECK(v.state == VerificationState::done);
    REQUIRE(v.cls.has_value());  // exactly one verdict: the store refuses a second
    CHECK(v.verdict.has_value());
    if (!is_error(*v.cls))
      ++conclusive_per_version[v.version];
  }
  // None lost: each version of the cycle reached a conclusive verdict.
  CHECK(conclusive_per_version.size() == std::size_t(kVersions));
  MESSAGE(all->size() << " verifications for " << kVersions << " versions after " << kKills
                      << " kills");

  // No page twice: each page row was delivered to the file sink at most once.
  std::ifstream in(temp.path / "pages.jsonl");
  std::map<std::int64_t, int> deliveries;
  std::string line;
  while (std::getline(in, line)) {
    auto event = nlohmann::json::parse(line, nullptr, false);
    REQUIRE_FALSE(event.is_discarded());
    ++deliveries[event.value("id", std::int64_t(0))];
  }
  auto counts = s->delivery_counts();
  REQUIRE(counts.ok());
  CHECK(counts->sent == std::int64_t(deliveries.size()));
  for (const auto& [id, n] : deliveries) {
    INFO("page " << id);
    CHECK(n == 1);
  }
}
