// "Daemon killed between recording and sending -> sent after restart, once", with the daemon's
// own SQLite store as the outbox: a child process records a verdict and its page in one
// transaction and is SIGKILLed before any delivery; a fresh process (this one) opens the store,
// dispatches, and the receiver sees the page exactly once. Also the harder window: killed after
// the receiver got the page but before it was marked sent -> the file sink still holds one line.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "pager/dispatcher.hpp"
#include "pager/file_sender.hpp"
#include "pager/page_builder.hpp"
#include "pager/webhook_sender.hpp"
#include "store/store.hpp"
#include "tests/pager/http_receiver.hpp"
#include "tests/support/temp_dir.hpp"

using namespace reverify;
using reverify::test::HttpReceiver;
using reverify::test::ReceivedRequest;
using reverify::test::Reply;
using reverify::test::TempDir;
namespace fs = std::filesystem;

namespace {

PageEvent failing_page() {
  PageInput in;
  in.model = "digits-mlp";
  in.version = "2026.11.1";
  in.owner = "team-vision";
  in.verdict.cls = VerdictClass::failed_input_drift;
  in.moved_inputs = {{"dataset", "aa", "bb", {"shard-3.csv"}}};
  in.created_at = "2026-11-29T08:00:00Z";
  return build_page(in);
}

// In a forked child: record a failed verdict with its page for `senders`, optionally hand the
// page to `deliver_first` (the receiver gets it), then die by SIGKILL before marking anything.
[[noreturn]] void record_then_die(const fs::path& db, const std::vector<std::string>& senders,
                                  Notifier* deliver_first) {
  auto store = Store::open(db, system_now);
  if (!store)
    _exit(3);
  ModelVersionRow known;  // verifications refer to a registered model version
  known.model = "digits-mlp";
  known.version = "2026.11.1";
  known.owner = "team-vision";
  known.source = "test";
  known.location = "manifest.json";
  if (!(*store)->upsert_model_version(known).ok())
    _exit(8);
  auto id = (*store)->enqueue(QueuedVerification("digits-mlp", "2026.11.1"));
  if (!id)
    _exit(4);
  Verdict verdict;
  verdict.cls = VerdictClass::failed_input_drift;
  auto pages = (*store)->record_verdict(*id, verdict, nlohmann::json::object(), "",
                                        {PageToRecord{failing_page(), senders}});
  if (!pages || pages->size() != 1)
    _exit(5);
  if (deliver_first) {
    auto due = (*store)->pending(10);
    if (!due || due->size() != 1 || !deliver_first->deliver(due->front().event, 1).delivered)
      _exit(6);
  }
  ::raise(SIGKILL);
  _exit(7);  // unreachable
}

void run_child(const std::function<void()>& child) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0)
    child();
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  INFO("child exit status ", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
}

SenderConfig sender(SenderKind kind, const std::string& name) {
  SenderConfig c;
  c.kind = kind;
  c.name = name;
  return c;
}

}  // namespace

TEST_CASE("killed after recording, before sending: sent after restart, once") {
  TempDir dir{"pager-crash-"};
  const fs::path db = dir.path / "reverify.db";
  run_child([&] { record_then_die(db, {"hook"}, nullptr); });

  HttpReceiver hook([](const ReceivedRequest&) { return Reply{200, "{}"}; });
  auto store = Store::open(db, system_now);
  REQUIRE(store.ok());
  auto config = sender(SenderKind::webhook, "hook");
  config.url = hook.url("/pages");
  std::vector<std::string> log;
  Dispatcher dispatcher(**store, {{"hook", std::make_shared<WebhookNotifier>(config, "")}},
                        [&](LogLevel level, const std::string& l, const LogFields&) {
                          if (level != LogLevel::info)  // problems only: deliveries are info
                            log.push_back(l);
                        });
  auto first = dispatcher.drain_once(PageClock::now());
  REQUIRE(first.ok());
  CHECK(first->delivered == 1);
  for (int i = 0; i < 3; ++i) {
    auto again = dispatcher.drain_once(PageClock::now());
    REQUIRE(again.ok());
    CHECK(again->delivered == 0);
  }
  REQUIRE(hook.requests().size() == 1);
  const auto body = nlohmann::json::parse(hook.requests()[0].body);
  CHECK(body["dedup_key"] == "reverify/digits-mlp/2026.11.1");
  CHECK(body["action"] == "trigger");
  CHECK(body["class"] == "failed:input-drift");
  CHECK(log.empty());
}

TEST_CASE("killed after the sink got the page, before it was marked sent: still one line") {
  TempDir dir{"pager-crash-"};
  const fs::path db = dir.path / "reverify.db";
  auto config = sender(SenderKind::file, "sink");
  config.path = (dir.path / "pages.jsonl").string();
  run_child([&] {
    FileNotifier sink(config);
    record_then_die(db, {"sink"}, &sink);
  });

  auto store = Store::open(db, system_now);
  REQUIRE(store.ok());
  Dispatcher dispatcher(**store, {{"sink", std::make_shared<FileNotifier>(config)}},
                        [](LogLevel, const std::string&, const LogFields&) {});
  auto redelivered = dispatcher.drain_once(PageClock::now());
  REQUIRE(redelivered.ok());
  CHECK(redelivered->delivered == 1);  // at least once: the row was still pending...
  std::ifstream in(config.path);
  int lines = 0;
  for (std::string line; std::getline(in, line);)
    ++lines;
  CHECK(lines == 1);  // ...and the sink kept exactly one line
  auto counts = (*store)->delivery_counts();
  REQUIRE(counts.ok());
  CHECK(counts->sent == 1);
  CHECK(counts->pending == 0);
}
