// The daemon's loop in-process (daemon/daemon.hpp), with fakes for everything it talks to but the
// store (tests/daemon/loop_harness.hpp): a manual trigger, the cycle planned once at its start by
// the clock, a reload applied whole or not at all, the reconciliation of verifications left
// running (the daemon's own, and a `reverify run` whose owner lives, then ends), and what a
// thread's exception does. No test waits for time to pass: the clock moves when a test moves it.

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/daemon/loop_harness.hpp"
#include "verify/verification_service.hpp"

using namespace reverify;
using namespace reverify::test;

namespace {

std::string job(std::int64_t verification_id) {
  return rebuild_id_for(verification_id);
}

std::int64_t verification_id_of(const Result<HttpResponse>& answer) {
  REQUIRE(answer.ok());
  REQUIRE(answer->status == 202);
  return nlohmann::json::parse(answer->body)["verification_id"].get<std::int64_t>();
}

}  // namespace

TEST_CASE("loop: a manual trigger is committed, then run, recorded and paged") {
  LoopHarness h;
  h.release("1");
  h.start();
  // The first cycle plans the one version once the first sync listed it.
  REQUIRE(h.events.wait_for([&] { return h.runner.waiting(job(1)); }));
  // Already running: refused, nothing queued.
  auto busy = h.post_trigger("1");
  REQUIRE(busy.ok());
  CHECK(busy->status == 409);
  h.runner.release(job(1));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(1, "sink"); }));

  const std::int64_t id = verification_id_of(h.post_trigger("1"));
  CHECK(id == 2);
  // The 202 came after the commit: the row is in the store.
  CHECK(h.row(id).trigger == VerificationTrigger::manual);
  REQUIRE(h.events.wait_for([&] { return h.runner.waiting(job(id)); }));
  h.runner.release(job(id));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(id, "sink"); }));
  const VerificationRow done = h.row(id);
  CHECK(done.state == VerificationState::done);
  CHECK(done.cls == VerdictClass::passed);
  CHECK(h.stop() == 0);
}

TEST_CASE("loop: each cycle is planned once, when the clock enters it") {
  LoopHarness h{1'775'001'540};  // 2026-03-31T23:59:00Z
  h.release("1");
  h.start();
  REQUIRE(h.events.wait_for([&] { return h.runner.waiting(job(1)); }));
  h.runner.release(job(1));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(1); }));
  auto period = h.open_store().last_cycle_period();
  REQUIRE(period.ok());
  CHECK(*period == std::optional<UnixSeconds>(1'772'323'200));  // March

  // A minute later it is April: the next tick plans April's cycle, which verifies it again.
  REQUIRE(h.advance_until([&] { return h.runner.waiting(job(2)); }, seconds(30)));
  period = h.open_store().last_cycle_period();
  CHECK(*period == std::optional<UnixSeconds>(1'775'001'600));  // April
  CHECK(h.row(2).trigger == VerificationTrigger::schedule);
  h.runner.release(job(2));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(2); }));

  // Later in April: the ticks plan nothing more. A trigger is answered after the loop ran the
  // ticks those timers queued, so every tick before it has decided.
  for (int i = 0; i < 10; ++i)
    h.clock.advance(std::chrono::hours(24));
  const std::int64_t manual = verification_id_of(h.post_trigger("1"));
  CHECK(manual == 3);
  period = h.open_store().last_cycle_period();
  CHECK(*period == std::optional<UnixSeconds>(1'775'001'600));
  h.runner.release(job(3));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(3); }));
  CHECK(h.stop() == 0);
}

TEST_CASE("loop: a reload applies a new config whole, or keeps the running one") {
  LoopHarness h;
  h.release("1");
  h.start();
  REQUIRE(h.events.wait_for([&] { return h.runner.waiting(job(1)); }));
  h.runner.release(job(1));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(1, "sink"); }));

  SUBCASE("a change of what applies only at start is refused whole") {
    std::string text = read_file(h.config_path());
    text.replace(text.find("state_dir: state"), 16, "state_dir: elsewhere");
    text.replace(text.find("sink: {"), 4, "hook");
    text.replace(text.find("senders: [sink]"), 15, "senders: [hook]");
    write_file(h.config_path(), text);
    h.daemon->reload();
    REQUIRE(h.notify.wait_for("serving (reload rejected)"));
    // Nothing of it applied: no senders built for it, pages still go to "sink".
    {
      std::lock_guard lock(h.events.mutex);
      CHECK(h.pager.configs_built() == std::vector<std::string>{"sink"});
    }
    const std::int64_t id = verification_id_of(h.post_trigger("1"));
    h.runner.release(job(id));
    REQUIRE(h.events.wait_for([&] { return h.pager.paged(id, "sink"); }));
    CHECK(h.row(id).work_dir->find("/state/work/") != std::string::npos);
    CHECK_FALSE(fs::exists(h.dir.path / "elsewhere"));
  }
  SUBCASE("an empty file is refused") {
    write_file(h.config_path(), "");
    h.daemon->reload();
    REQUIRE(h.notify.wait_for("serving (reload rejected)"));
    const std::int64_t id = verification_id_of(h.post_trigger("1"));  // same token, same port
    h.runner.release(job(id));
    REQUIRE(h.events.wait_for([&] { return h.pager.paged(id, "sink"); }));
  }
  SUBCASE("a valid change applies: new senders, a new source") {
    h.write_config("hook", "");
    std::string text = read_file(h.config_path());
    const std::string sources = "sources: [{name: fake, kind: directory, root: registry}]";
    text.replace(text.find(sources), sources.size(),
                 "sources: [{name: fake, kind: directory, root: registry}, "
                 "{name: second, kind: directory, root: registry}]");
    write_file(h.config_path(), text);
    h.daemon->reload();
    REQUIRE(h.notify.wait_for("serving (reloaded)"));
    REQUIRE(h.events.wait_for([&] {
      return h.pager.configs_built().back() == "hook" && h.registry.made().count("second") > 0;
    }));
    const std::int64_t id = verification_id_of(h.post_trigger("1"));
    h.runner.release(job(id));
    REQUIRE(h.events.wait_for([&] { return h.pager.paged(id, "hook"); }));
    // The new source lists at the next sync (sync_interval 1h).
    REQUIRE(h.advance_until([&] { return h.registry.listings("second") > 0; },
                            std::chrono::minutes(10)));
  }
  CHECK(h.stop() == 0);
}

TEST_CASE("loop: verifications left running are reconciled; a live `reverify run` keeps its row") {
  LoopHarness h;
  // The store as a previous reverifyd and a `reverify run` left it. Nothing is listed by the
  // registry now, so no cycle verifies anything else.
  Store& store = h.open_store();
  for (const char* version : {"1", "2"})
    REQUIRE(store.upsert_model_version(h.manifest(version)).ok());
  const auto left_running = [&](const std::string& version) {
    auto id = store.enqueue(QueuedVerification{"tiny", version});
    REQUIRE(id.ok());
    REQUIRE(store.mark_running(*id, (h.dir.path / "state/work" / job(*id)).string()).ok());
    return *id;
  };
  // reverifyd's own, its job still running at the runner: reattached.
  const std::int64_t reattached = left_running("1");
  RebuildSpec spec;
  spec.rebuild_id = job(reattached);
  spec.work_dir = h.dir.path / "state/work" / job(reattached);
  h.runner.leave_running(spec);
  // reverifyd's own, its job gone: error:runner-lost.
  const std::int64_t lost = left_running("1");
  // A `reverify run` of tiny@2 that still runs: this test holds its lock, as that process would.
  auto taken = StateLock::version(h.dir.path / "state", "tiny", "2", "reverify run");
  REQUIRE(taken.ok());
  std::optional<StateLock> owner(std::move(*taken));
  QueuedVerification cli_run{"tiny", "2", RebuildMode::full, VerificationTrigger::cli};
  const auto owned = store.insert_running(cli_run);
  REQUIRE(owned.ok());

  h.start();
  REQUIRE(h.events.wait_for([&] {
    return h.runner.waiting(job(reattached)) && h.pager.paged(lost) &&
           h.registry.listings("fake") > 0;  // listed: the reconciliation was decided before
  }));
  CHECK(h.row(lost).cls == VerdictClass::error_runner_lost);
  h.runner.release(job(reattached));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(reattached); }));
  CHECK(h.row(reattached).cls == VerdictClass::passed);
  // Ticks go by; the live run's row is left to it: no reattach was tried, no verdict written.
  for (int i = 0; i < 5; ++i)
    h.clock.advance(seconds(5));
  h.loop_caught_up();
  {
    std::lock_guard lock(h.events.mutex);
    const auto& looked = h.runner.looked_for();
    CHECK(std::count(looked.begin(), looked.end(), job(*owned)) == 0);
  }
  CHECK(h.row(*owned).state == VerificationState::running);

  // Its process ends without a verdict (kill -9): a tick finds the lock free and reconciles it.
  owner.reset();
  REQUIRE(h.advance_until([&] { return h.pager.paged(*owned); }));
  const VerificationRow reconciled = h.row(*owned);
  CHECK(reconciled.cls == VerdictClass::error_runner_lost);
  {
    std::lock_guard lock(h.events.mutex);
    const auto& looked = h.runner.looked_for();
    CHECK(std::count(looked.begin(), looked.end(), job(*owned)) == 1);
  }
  CHECK(h.stop() == 0);
}

namespace {

// Runs `body` in a child process whose stderr goes to `log`; the child's exit status, or 128 + the
// signal that ended it. A child that outlives kPatience is ended by SIGALRM.
int in_child(const fs::path& log, const std::function<void()>& body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(fd, STDERR_FILENO);
    ::alarm(static_cast<unsigned>(kPatience.count()));
    try {
      body();
    } catch (...) {
      ::_exit(99);  // a REQUIRE failed in the child
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("loop: an exception on any of the daemon's threads ends it with status 70, logged") {
  TempDir logs;
  const fs::path log = logs.path / "stderr.log";
  struct Case {
    const char* thread;
    std::function<void(LoopHarness&)> arrange;
    std::string logged;
  };
  const Case cases[] = {
      {"a verification's", [](LoopHarness& h) { h.runner.throw_on_start = true; },
       "internal error on the thread of verification 1 (tiny@1): the fake runner's start() "
       "threw; exiting with status 70"},
      {"a pool thread", [](LoopHarness& h) { h.registry.throw_on_list = true; },
       "internal error on a pool thread (syncing the registry sources): the fake source's list() "
       "threw"},
      {"the pager dispatcher's",
       [](LoopHarness& h) {
         install_crash_handler();  // as reverifyd's main does
         h.pager.throw_on_deliver = true;
         h.runner.release_all();
       },
       "internal error on a thread reverifyd does not run itself (the pager dispatcher's): the "
       "fake sender's deliver() threw"},
  };
  for (const auto& c : cases) {
    INFO("an exception on " << c.thread << " thread");
    const int status = in_child(log, [&] {
      ::setenv("TMPDIR", logs.path.c_str(), 1);  // its temp folders go with `logs`
      LoopHarness h;
      h.release("1");
      c.arrange(h);
      h.start();
      h.events.wait_for([] { return false; });  // the failure ends this process first
    });
    const std::string written = read_file(log);
    INFO(written);
    CHECK(status == 70);
    CHECK(written.find(c.logged) != std::string::npos);
  }
}

namespace {

Result<HttpResponse> get(const LoopHarness& h, const std::string& path) {
  HttpRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(h.port) + path;
  return http_request(request);
}

nlohmann::json gate_of(const LoopHarness& h, const std::string& version) {
  auto answer = get(h, "/v1/gate/tiny/" + version);
  REQUIRE(answer.ok());
  return nlohmann::json::parse(answer->body);
}

// The gate says queued from a snapshot whose plan saw the sync's verification queued at release
// (a snapshot built between the sync's inventory and its queueing says queued too, from the plan's
// "to queue" decision, with no verification row yet).
bool queued_in_store(const nlohmann::json& gate) {
  return gate.value("status", "") == "queued" &&
         gate.value("reason", "").find(") queued at release") != std::string::npos;
}

// The harness's config with schedule.at_release set to `policy` (a YAML flow mapping).
void set_at_release(LoopHarness& h, const std::string& policy) {
  std::string text = read_file(h.config_path());
  const std::string retry = "retry: {max_attempts: 1}}";
  text.replace(text.find(retry), retry.size(),
               "retry: {max_attempts: 1}, at_release: " + policy + "}");
  write_file(h.config_path(), text);
}

}  // namespace

TEST_CASE(
    "loop: a version released while the daemon runs is verified at release, and the gate "
    "says queued until then") {
  LoopHarness h;
  set_at_release(h, "{delay: 10m}");
  h.release("1");
  h.start();
  // The first sync of the empty store: its version is the inventory, verified by the cycle.
  REQUIRE(h.events.wait_for([&] { return h.runner.waiting(job(1)); }));
  CHECK(h.row(1).trigger == VerificationTrigger::schedule);
  h.runner.release(job(1));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(1); }));
  const auto march = h.open_store().last_cycle_period();

  // tiny@2 is released; the next registry sync (an hour on) sees it and queues it at release.
  h.release("2");
  h.clock.advance(std::chrono::hours(1));
  nlohmann::json gate;
  REQUIRE(h.advance_until(
      [&] {
        gate = gate_of(h, "2");
        return queued_in_store(gate);
      },
      milliseconds(0)));
  auto seen = h.open_store().model_version("tiny", "2");
  REQUIRE(seen.ok());
  REQUIRE(seen->has_value());
  const UnixSeconds expected = (*seen)->first_seen_at + 600;
  CHECK(gate["ok"] == false);
  CHECK(gate["verified"] == false);
  CHECK(gate["expected_at"] == rfc3339(expected));
  CHECK(gate["reason"].get<std::string>().rfind("queued: a new release", 0) == 0);
  const VerificationRow queued = h.row(2);
  CHECK(queued.trigger == VerificationTrigger::release);
  CHECK(queued.state == VerificationState::queued);
  CHECK(queued.not_before == expected);
  CHECK(queued.mode == RebuildMode::full);
  // The status page's plan says what is queued at release, and when.
  auto page = get(h, "/");
  REQUIRE(page.ok());
  CHECK(page->body.find("id=\"at-release\"") != std::string::npos);
  CHECK(page->body.find(rfc3339(expected)) != std::string::npos);
  {
    std::lock_guard lock(h.events.mutex);
    CHECK_FALSE(h.runner.waiting(job(2)));  // its delay is not over
  }

  // Ten minutes on it runs, in the same cycle: no waiting for the next period.
  REQUIRE(h.advance_until([&] { return h.runner.waiting(job(2)); }, seconds(30)));
  h.runner.release(job(2));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(2); }));
  const VerificationRow done = h.row(2);
  CHECK(done.state == VerificationState::done);
  CHECK(done.cls == VerdictClass::passed);
  CHECK(h.open_store().last_cycle_period()->value() == march->value());
  REQUIRE(h.advance_until([&] { return gate_of(h, "2").value("status", "") == "fresh"; },
                          milliseconds(0)));
  CHECK(h.stop() == 0);
}

TEST_CASE("loop: beyond the at-release budget a release waits for the next day, and says so") {
  LoopHarness h;  // 2026-03-01T00:00:00Z
  set_at_release(h, "{per_day: 1}");
  h.release("1");
  h.start();
  REQUIRE(h.events.wait_for([&] { return h.runner.waiting(job(1)); }));
  h.runner.release(job(1));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(1); }));

  h.release("2");
  h.release("3");
  h.clock.advance(std::chrono::hours(1));
  REQUIRE(h.advance_until(
      [&] { return queued_in_store(gate_of(h, "2")) && queued_in_store(gate_of(h, "3")); },
      milliseconds(0)));
  // tiny@2 took today's one at-release verification; tiny@3 is expected tomorrow.
  const auto third = gate_of(h, "3");
  CHECK(third["expected_at"] == "2026-03-02T00:00:00Z");
  CHECK(third["reason"].get<std::string>().find(
            "(the at-release budget of the days before was spent)") != std::string::npos);
  CHECK(h.row(3).not_before == 1'772'409'600);  // queued now, to start tomorrow
  REQUIRE(h.advance_until([&] { return h.runner.waiting(job(2)); }, seconds(5)));
  h.runner.release(job(2));
  REQUIRE(h.events.wait_for([&] { return h.pager.paged(2); }));
  CHECK(h.row(2).trigger == VerificationTrigger::release);
  CHECK(h.stop() == 0);
}
