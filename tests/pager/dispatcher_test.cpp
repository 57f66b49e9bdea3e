#include <doctest/doctest.h>

#include <deque>
#include <future>

#include "pager/dispatcher.hpp"
#include "tests/pager/memory_outbox.hpp"

using namespace reverify;
using reverify::test::MemoryOutbox;

namespace {

// Answers each attempt from a script (default: delivered) and records what it was given.
class ScriptedNotifier final : public Notifier {
 public:
  explicit ScriptedNotifier(std::optional<std::chrono::seconds> resend = std::nullopt,
                            ReceiverDedup dedup = ReceiverDedup::merges_copies)
      : resend_(resend), dedup_(dedup) {}
  std::deque<DeliveryResult> script;
  std::vector<PageEvent> seen;
  std::vector<int> attempts;

  DeliveryResult deliver(const PageEvent& event, int attempt) override {
    seen.push_back(event);
    attempts.push_back(attempt);
    if (script.empty())
      return {true, false, "ok"};
    DeliveryResult next = script.front();
    script.pop_front();
    return next;
  }
  std::optional<std::chrono::seconds> resend_interval() const override { return resend_; }
  ReceiverDedup dedup() const override { return dedup_; }

 private:
  std::optional<std::chrono::seconds> resend_;
  ReceiverDedup dedup_;
};

const DeliveryResult kTransient{false, false, "HTTP 503"};
const DeliveryResult kRejected{false, true, "HTTP 400: invalid event"};
const DeliveryResult kUnconfirmed{false, false,
                                  "timed out (the request was sent; no answer in time)", true};

PageEvent page(const std::string& key, PageAction action) {
  PageEvent e;
  e.dedup_key = key;
  e.action = action;
  e.owner = "team";
  return e;
}

const auto t0 = PageClock::time_point{} + std::chrono::hours(1000);

struct Fixture {
  MemoryOutbox outbox{RetryPolicy{std::chrono::seconds(30), std::chrono::seconds(100), 6}};
  std::shared_ptr<ScriptedNotifier> pd = std::make_shared<ScriptedNotifier>();
  std::vector<std::string> log;   // each line's message...
  std::vector<LogLevel> levels;   // ...its level...
  std::vector<LogFields> fields;  // ...and its fields
  Dispatcher dispatcher{
      outbox, {{"pd", pd}}, [this](LogLevel level, const std::string& l, const LogFields& f) {
        log.push_back(l);
        levels.push_back(level);
        fields.push_back(f);
      }};

  // The value of `key` among the fields of line i ("" if absent).
  std::string field(std::size_t i, const std::string& key) const {
    for (const auto& f : fields.at(i)) {
      if (f.key == key)
        return f.value;
    }
    return {};
  }

  DrainStats drain(std::int64_t at_s) {
    outbox.now = at_s;
    auto stats = dispatcher.drain_once(t0 + std::chrono::seconds(at_s));
    REQUIRE(stats.ok());
    return *stats;
  }
};

}  // namespace

TEST_CASE("a recorded page is delivered once and then never again") {
  Fixture f;
  const auto id = f.outbox.record(page("reverify/m/1", PageAction::trigger), {"pd"});
  CHECK(f.drain(0).delivered == 1);
  CHECK(f.drain(1).delivered == 0);
  CHECK(f.drain(10'000).delivered == 0);
  CHECK(f.pd->seen.size() == 1);
  CHECK(f.pd->seen[0].id == id);
  CHECK(f.outbox.row(id, "pd").state == "sent");
}

TEST_CASE("transient failures back off exponentially up to the cap, then deliver") {
  Fixture f;
  const auto id = f.outbox.record(page("reverify/m/1", PageAction::trigger), {"pd"});
  f.pd->script = {kTransient, kTransient, kTransient, kTransient};
  // Attempts at 0, 30, 90 (30+60), 190 (90+100 capped), 290: the fifth succeeds.
  CHECK(f.drain(0).retrying == 1);
  CHECK(f.outbox.row(id, "pd").next_attempt_at == 30);
  CHECK(f.drain(29).retrying == 0);  // not due yet: no attempt
  CHECK(f.drain(30).retrying == 1);
  CHECK(f.outbox.row(id, "pd").next_attempt_at == 90);
  CHECK(f.drain(90).retrying == 1);
  CHECK(f.outbox.row(id, "pd").next_attempt_at == 190);
  CHECK(f.drain(190).retrying == 1);
  CHECK(f.outbox.row(id, "pd").next_attempt_at == 290);
  CHECK(f.drain(290).delivered == 1);
  CHECK(f.pd->seen.size() == 5);
  CHECK(f.outbox.row(id, "pd").state == "sent");
  // Four failed attempts, each an error with its attempt number, then the delivery (info).
  REQUIRE(f.log.size() == 5);
  CHECK(f.log[0] == "page 1 (reverify/m/1 trigger) to pd: attempt 1 failed, will retry: HTTP 503");
  CHECK(f.levels[0] == LogLevel::error);
  CHECK(f.field(0, "sender") == "pd");
  CHECK(f.field(0, "page") == "1");
  CHECK(f.field(0, "attempt") == "1");
  CHECK(f.field(3, "attempt") == "4");
  CHECK(f.log[4] == "page 1 (reverify/m/1 trigger) to pd: delivered");
  CHECK(f.levels[4] == LogLevel::info);
  CHECK(f.field(4, "attempt") == "5");
}

TEST_CASE("a rejected event is never retried and its answer is logged") {
  Fixture f;
  const auto id = f.outbox.record(page("reverify/m/1", PageAction::trigger), {"pd"});
  f.pd->script = {kRejected};
  CHECK(f.drain(0).failed == 1);
  CHECK(f.drain(10'000).failed == 0);
  CHECK(f.pd->seen.size() == 1);
  CHECK(f.outbox.row(id, "pd").state == "failed");
  REQUIRE(f.log.size() == 1);
  CHECK(f.log[0] ==
        "page 1 (reverify/m/1 trigger) to pd: rejected for good: HTTP 400: invalid event");
  CHECK(f.levels[0] == LogLevel::critical);  // it will never be delivered
}

TEST_CASE("a resolve never overtakes the trigger it resolves") {
  Fixture f;
  f.outbox.record(page("reverify/m/1", PageAction::trigger), {"pd"});
  f.pd->script = {kTransient};
  f.drain(0);  // trigger fails, due again at 30
  f.outbox.record(page("reverify/m/1", PageAction::resolve), {"pd"});
  f.outbox.record(page("reverify/other/1", PageAction::trigger), {"pd"});
  CHECK(f.drain(10).delivered == 1);  // only the unrelated page
  CHECK(f.drain(30).delivered == 1);  // the trigger...
  CHECK(f.drain(30).delivered == 1);  // ...then its resolve
  REQUIRE(f.pd->seen.size() == 4);
  CHECK(f.pd->seen[1].dedup_key == "reverify/other/1");
  CHECK(f.pd->seen[2].action == PageAction::trigger);
  CHECK(f.pd->seen[3].action == PageAction::resolve);
}

TEST_CASE("after max attempts the delivery fails for good") {
  Fixture f;
  const auto id = f.outbox.record(page("reverify/m/1", PageAction::trigger), {"pd"});
  for (int i = 0; i < 6; ++i)
    f.pd->script.push_back(kTransient);
  for (std::int64_t t : {0, 30, 90, 190, 290, 390})
    f.drain(t);
  CHECK(f.outbox.row(id, "pd").state == "failed");
  CHECK(f.drain(100'000).retrying == 0);
  CHECK(f.pd->seen.size() == 6);
  CHECK(f.pd->attempts == std::vector<int>{1, 2, 3, 4, 5, 6});
  // Found #6: the last attempt logged "will retry" and no give-up line followed.
  REQUIRE(f.log.size() == 6);
  CHECK(f.log[4] == "page 1 (reverify/m/1 trigger) to pd: attempt 5 failed, will retry: HTTP 503");
  CHECK(f.log[5] ==
        "page 1 (reverify/m/1 trigger) to pd: attempt 6 failed; giving up, it was the "
        "last attempt: HTTP 503");
  CHECK(f.levels[4] == LogLevel::error);
  CHECK(f.levels[5] == LogLevel::critical);
}

// Found #6: a receiver slower than the sender's timeout got a copy on every attempt.
TEST_CASE("an unconfirmed delivery is retried only where the receiver merges copies") {
  Fixture f;
  const auto id = f.outbox.record(page("reverify/m/1", PageAction::trigger), {"pd"});
  f.pd->script = {kUnconfirmed};
  CHECK(f.drain(0).retrying == 1);
  CHECK(f.outbox.row(id, "pd").state == "pending");
  CHECK(f.log.at(0).find("attempt 1 unconfirmed (the receiver merges copies of one page), will "
                         "retry") != std::string::npos);
  CHECK(f.drain(30).delivered == 1);
  CHECK(f.pd->attempts == std::vector<int>{1, 2});  // the second waits longer for its answer

  MemoryOutbox outbox;
  auto chat = std::make_shared<ScriptedNotifier>(std::nullopt, ReceiverDedup::posts_copies);
  chat->script = {kUnconfirmed};
  std::vector<std::string> log;
  Dispatcher dispatcher(
      outbox, {{"chat", chat}},
      [&](LogLevel, const std::string& l, const LogFields&) { log.push_back(l); });
  const auto posted = outbox.record(page("reverify/m/1", PageAction::trigger), {"chat"});
  REQUIRE(dispatcher.drain_once(t0).ok());
  for (std::int64_t t : {30, 1000, 100'000}) {
    outbox.now = t;
    REQUIRE(dispatcher.drain_once(t0 + std::chrono::seconds(t)).ok());
  }
  CHECK(chat->seen.size() == 1);  // never a second post
  CHECK(outbox.row(posted, "chat").state == "sent");
  REQUIRE(log.size() == 1);
  CHECK(log[0].find("sent, unconfirmed") != std::string::npos);
}

TEST_CASE("a row for a sender removed from the config fails for good, logged") {
  Fixture f;
  const auto id = f.outbox.record(page("reverify/m/1", PageAction::trigger), {"gone"});
  CHECK(f.drain(0).failed == 1);
  CHECK(f.outbox.row(id, "gone").state == "failed");
  CHECK(f.log.at(0).find("sender \"gone\" is not configured") != std::string::npos);
  CHECK(f.levels.at(0) == LogLevel::critical);
}

TEST_CASE("each sender of a page has its own delivery and backoff") {
  MemoryOutbox outbox;
  auto a = std::make_shared<ScriptedNotifier>();
  auto b = std::make_shared<ScriptedNotifier>();
  b->script = {kTransient};
  Dispatcher dispatcher(outbox, {{"a", a}, {"b", b}},
                        [](LogLevel, const std::string&, const LogFields&) {});
  const auto id = outbox.record(page("reverify/m/1", PageAction::trigger), {"a", "b"});
  auto stats = dispatcher.drain_once(t0);
  REQUIRE(stats.ok());
  CHECK(stats->delivered == 1);
  CHECK(stats->retrying == 1);
  CHECK(outbox.row(id, "a").state == "sent");
  CHECK(outbox.row(id, "b").state == "pending");
  outbox.now = 30;
  REQUIRE(dispatcher.drain_once(t0 + std::chrono::seconds(30)).ok());
  CHECK(outbox.row(id, "b").state == "sent");
  CHECK(a->seen.size() == 1);
  CHECK(b->seen.size() == 2);
}

TEST_CASE("open alerts are re-sent every resend interval until resolved") {
  MemoryOutbox outbox;
  auto am = std::make_shared<ScriptedNotifier>(std::chrono::seconds(60));
  Dispatcher dispatcher(outbox, {{"am", am}},
                        [](LogLevel, const std::string&, const LogFields&) {});
  outbox.record(page("reverify/m/1", PageAction::trigger), {"am"});
  auto at = [&](int s) {
    auto stats = dispatcher.drain_once(t0 + std::chrono::seconds(s));
    REQUIRE(stats.ok());
    return *stats;
  };
  CHECK(at(0).delivered == 1);
  CHECK(at(59).resent == 0);
  CHECK(at(60).resent == 1);
  CHECK(at(100).resent == 0);
  CHECK(at(120).resent == 1);
  outbox.record(page("reverify/m/1", PageAction::resolve), {"am"});
  CHECK(at(130).delivered == 1);
  CHECK(at(1000).resent == 0);
  CHECK(am->seen.size() == 4);
}

TEST_CASE("after a restart, alerts still open are re-sent at once") {
  MemoryOutbox outbox;
  auto first = std::make_shared<ScriptedNotifier>(std::chrono::seconds(60));
  {
    Dispatcher before(outbox, {{"am", first}},
                      [](LogLevel, const std::string&, const LogFields&) {});
    outbox.record(page("reverify/open/1", PageAction::trigger), {"am"});
    outbox.record(page("reverify/closed/1", PageAction::trigger), {"am"});
    REQUIRE(before.drain_once(t0).ok());
    outbox.record(page("reverify/closed/1", PageAction::resolve), {"am"});
    REQUIRE(before.drain_once(t0).ok());
  }
  auto second = std::make_shared<ScriptedNotifier>(std::chrono::seconds(60));
  Dispatcher after(outbox, {{"am", second}}, [](LogLevel, const std::string&, const LogFields&) {});
  auto stats = after.drain_once(t0 + std::chrono::seconds(1));
  REQUIRE(stats.ok());
  CHECK(stats->resent == 1);
  REQUIRE(second->seen.size() == 1);
  CHECK(second->seen[0].dedup_key == "reverify/open/1");
}

TEST_CASE("the background worker drains a trigger and the resolve queued behind it") {
  // Signals once it has delivered `expected` events, so the test waits on an event, not a clock.
  class CountingNotifier final : public Notifier {
   public:
    explicit CountingNotifier(std::size_t expected) : expected_(expected) {}
    std::future<void> done() { return done_.get_future(); }
    DeliveryResult deliver(const PageEvent& event, int) override {
      actions.push_back(event.action);
      if (actions.size() == expected_)
        done_.set_value();
      return {true, false, "ok"};
    }
    std::vector<PageAction> actions;

   private:
    std::size_t expected_;
    std::promise<void> done_;
  };
  MemoryOutbox outbox;
  auto pd = std::make_shared<CountingNotifier>(2);
  auto done = pd->done();
  Dispatcher dispatcher(outbox, {{"pd", pd}},
                        [](LogLevel, const std::string&, const LogFields&) {});
  outbox.record(page("reverify/m/1", PageAction::trigger), {"pd"});
  outbox.record(page("reverify/m/1", PageAction::resolve), {"pd"});
  // An hour-long poll: only the first pass, and the re-drain after a delivery, can send both.
  dispatcher.start(std::chrono::hours(1));
  dispatcher.kick();
  REQUIRE(done.wait_for(std::chrono::minutes(1)) == std::future_status::ready);
  dispatcher.stop();
  CHECK(pd->actions == std::vector<PageAction>{PageAction::trigger, PageAction::resolve});
  CHECK(outbox.row(1, "pd").state == "sent");
  CHECK(outbox.row(2, "pd").state == "sent");
}
