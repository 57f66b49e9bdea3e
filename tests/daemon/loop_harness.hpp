#pragma once
// The daemon's loop in-process (daemon/daemon.hpp): a real store in a temp dir, and fakes for the
// rest of what it talks to: a manual clock whose timers fire only when the test moves it on, a
// runner whose jobs wait until the test releases them, registry sources listing what the test
// says, a notifier recording every page, and a socket receiving the daemon's sd_notify messages.
// Every wait is on an event (a condition variable the fakes notify, a datagram), bounded by a
// limit that only a failing test reaches: nothing sleeps for time to pass.

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/post.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "core/http_client.hpp"
#include "daemon/daemon.hpp"
#include "store/inventory_row.hpp"
#include "tests/support/files.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/manifest_fixture.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/verify/fake_runner.hpp"
#include "verify/state_dir.hpp"

namespace reverify::test {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// What a failing wait gives up after. Never reached by a passing test.
constexpr seconds kPatience{60};

// One condition variable for everything the fakes see, so a test waits for any predicate over
// them.
class Events {
 public:
  std::mutex mutex;
  void notify() {
    { std::lock_guard lock(mutex); }
    changed_.notify_all();
  }
  // `done` is called with `mutex` held.
  template <class Predicate>
  bool wait_for(Predicate done, milliseconds limit = kPatience) {
    std::unique_lock lock(mutex);
    return changed_.wait_for(lock, limit, done);
  }

 private:
  std::condition_variable changed_;
};

// A LoopClock whose time moves only in advance(): each armed timer whose time came is posted to
// its loop then, earliest first.
class ManualClock final : public LoopClock {
 public:
  explicit ManualClock(UnixSeconds start) : now_ms_(start * 1000) {}

  UnixSeconds now() const override {
    std::lock_guard lock(mutex_);
    return now_ms_ / 1000;
  }
  std::unique_ptr<LoopTimer> timer(boost::asio::io_context& loop) override {
    auto state = std::make_shared<TimerState>();
    state->loop = &loop;
    std::lock_guard lock(mutex_);
    timers_.push_back(state);
    return std::make_unique<Timer>(*this, state);
  }

  void advance(milliseconds by) {
    std::vector<std::pair<std::int64_t, std::shared_ptr<TimerState>>> due;
    std::vector<std::uint64_t> generations;
    {
      std::lock_guard lock(mutex_);
      now_ms_ += by.count();
      for (const auto& state : timers_) {
        if (state->due_ms && *state->due_ms <= now_ms_)
          due.emplace_back(*state->due_ms, state);
      }
      std::sort(due.begin(), due.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& [at, state] : due) {
        state->due_ms.reset();
        generations.push_back(state->generation);
      }
    }
    for (std::size_t i = 0; i < due.size(); ++i) {
      auto state = due[i].second;
      boost::asio::post(*state->loop, [this, state, generation = generations[i]] {
        std::function<void()> fire;
        {
          std::lock_guard lock(mutex_);
          if (state->generation != generation)
            return;  // armed again or cancelled since: that wait never fires
          fire = state->fire;
        }
        fire();
      });
    }
  }

 private:
  struct TimerState {
    boost::asio::io_context* loop = nullptr;
    std::optional<std::int64_t> due_ms;
    std::function<void()> fire;
    std::uint64_t generation = 0;
  };
  class Timer final : public LoopTimer {
   public:
    Timer(ManualClock& clock, std::shared_ptr<TimerState> state)
        : clock_(clock), state_(std::move(state)) {}
    ~Timer() override { cancel(); }
    void arm(milliseconds after, std::function<void()> fire) override {
      std::lock_guard lock(clock_.mutex_);
      ++state_->generation;
      state_->due_ms = clock_.now_ms_ + after.count();
      state_->fire = std::move(fire);
    }
    void cancel() override {
      std::lock_guard lock(clock_.mutex_);
      ++state_->generation;
      state_->due_ms.reset();
    }

   private:
    ManualClock& clock_;
    std::shared_ptr<TimerState> state_;
  };

  mutable std::mutex mutex_;
  std::int64_t now_ms_;
  std::vector<std::shared_ptr<TimerState>> timers_;
};

// FakeRunner for several verification threads at once: every call under one lock, start()
// announced to the test, wait() held until the test releases that job.
class HeldRunner final : public Runner {
 public:
  explicit HeldRunner(Events& events) : events_(events) {}

  bool throw_on_start = false;  // a bug in a runner: start() throws

  RunnerKind kind() const override { return RunnerKind::process; }
  Status prepare(const RebuildSpec& spec) override {
    std::lock_guard lock(events_.mutex);
    return inner_.prepare(spec);
  }
  Result<JobHandle> start(const RebuildSpec& spec) override {
    if (throw_on_start)
      throw std::runtime_error("the fake runner's start() threw");
    auto handle = [&] {
      std::lock_guard lock(events_.mutex);
      return inner_.start(spec);
    }();
    events_.notify();
    return handle;
  }
  Result<JobExit> wait(const JobHandle& job, const LogSink& logs) override {
    {
      std::unique_lock lock(events_.mutex);
      waiting_.insert(job.rebuild_id);
    }
    events_.notify();
    events_.wait_for([&] { return all_released_ || released_.count(job.rebuild_id) > 0; },
                     kPatience);
    std::lock_guard lock(events_.mutex);
    waiting_.erase(job.rebuild_id);
    return inner_.wait(job, logs);
  }
  Result<JobOutputs> collect(const JobHandle& job, const fs::path& dest) override {
    std::lock_guard lock(events_.mutex);
    return inner_.collect(job, dest);
  }
  void cleanup(const JobHandle& job) override {
    std::lock_guard lock(events_.mutex);
    inner_.cleanup(job);
  }
  void cancel(const JobHandle& job) override {
    std::lock_guard lock(events_.mutex);
    inner_.cancel(job);
  }
  Result<std::optional<JobHandle>> find_running(const std::string& rebuild_id) override {
    std::lock_guard lock(events_.mutex);
    found_.push_back(rebuild_id);
    return inner_.find_running(rebuild_id);
  }

  // --- the test's side; call with events.mutex held where a predicate reads them ---
  bool waiting(const std::string& rebuild_id) const { return waiting_.count(rebuild_id) > 0; }
  const std::vector<std::string>& looked_for() const { return found_; }  // find_running's ids
  void leave_running(const RebuildSpec& spec) {
    std::lock_guard lock(events_.mutex);
    inner_.running = spec;
  }
  void release(const std::string& rebuild_id) {
    {
      std::lock_guard lock(events_.mutex);
      released_.insert(rebuild_id);
    }
    events_.notify();
  }
  void release_all() {  // every job, now and from now on
    {
      std::lock_guard lock(events_.mutex);
      all_released_ = true;
    }
    events_.notify();
  }

 private:
  Events& events_;
  FakeRunner inner_;
  std::set<std::string> waiting_, released_;
  bool all_released_ = false;
  std::vector<std::string> found_;
};

// What every fake registry source lists (the factory makes one per config source, at start and
// on each reload): the versions the test published, under the source's name.
class FakeRegistry {
 public:
  explicit FakeRegistry(Events& events) : events_(events) {}

  bool throw_on_list = false;  // a bug in a source: list() throws

  void publish(const ModelVersionRow& row) {
    std::lock_guard lock(events_.mutex);
    rows_.push_back(row);
  }
  // Sources made so far, and listings done, by source name (events.mutex held).
  const std::map<std::string, int>& made() const { return made_; }
  int listings(const std::string& name) const {
    auto it = listed_.find(name);
    return it == listed_.end() ? 0 : it->second;
  }

  std::function<std::unique_ptr<RegistrySource>(const RegistrySourceConfig&)> factory() {
    return [this](const RegistrySourceConfig& config) -> std::unique_ptr<RegistrySource> {
      std::lock_guard lock(events_.mutex);
      ++made_[config.name];
      return std::make_unique<Source>(*this, config.name);
    };
  }

 private:
  class Source final : public RegistrySource {
   public:
    Source(FakeRegistry& registry, std::string name)
        : registry_(registry), name_(std::move(name)) {}
    const std::string& name() const override { return name_; }
    Result<SourceListing> list() override {
      if (registry_.throw_on_list)
        throw std::runtime_error("the fake source's list() threw");
      SourceListing listing;
      {
        std::lock_guard lock(registry_.events_.mutex);
        listing.rows = registry_.rows_;
        ++registry_.listed_[name_];
      }
      for (auto& row : listing.rows)
        row.source = name_;
      registry_.events_.notify();
      return listing;
    }

   private:
    FakeRegistry& registry_;
    std::string name_;
  };

  Events& events_;
  std::vector<ModelVersionRow> rows_;
  std::map<std::string, int> made_, listed_;
};

// Records every page it is given, by sender name; the factory makes one set of senders per
// config (at start and on each reload) named as the config names them.
class FakePager {
 public:
  explicit FakePager(Events& events) : events_(events) {}

  bool throw_on_deliver = false;  // a bug in a sender: deliver() throws

  struct Delivered {
    std::string sender;
    PageEvent event;
  };
  // events.mutex held:
  const std::vector<Delivered>& delivered() const { return delivered_; }
  bool paged(std::int64_t verification_id, const std::string& sender = "") const {
    return std::any_of(delivered_.begin(), delivered_.end(), [&](const Delivered& d) {
      return d.event.details.value("verification_id", std::int64_t{0}) == verification_id &&
             (sender.empty() || d.sender == sender);
    });
  }
  const std::vector<std::string>& configs_built() const { return built_; }  // sender names

  std::function<Result<Dispatcher::Senders>(const PagerConfig&)> factory() {
    return [this](const PagerConfig& config) -> Result<Dispatcher::Senders> {
      Dispatcher::Senders senders;
      std::string names;
      for (const auto& [name, sender] : config.senders) {
        senders[name] = std::make_shared<Recorder>(*this, name);
        names += (names.empty() ? "" : ",") + name;
      }
      {
        std::lock_guard lock(events_.mutex);
        built_.push_back(names);
      }
      events_.notify();
      return senders;
    };
  }

 private:
  class Recorder final : public Notifier {
   public:
    Recorder(FakePager& pager, std::string name) : pager_(pager), name_(std::move(name)) {}
    DeliveryResult deliver(const PageEvent& event, int) override {
      if (pager_.throw_on_deliver)
        throw std::runtime_error("the fake sender's deliver() threw");
      {
        std::lock_guard lock(pager_.events_.mutex);
        pager_.delivered_.push_back({name_, event});
      }
      pager_.events_.notify();
      return {true, false, "recorded"};
    }

   private:
    FakePager& pager_;
    std::string name_;
  };

  Events& events_;
  std::vector<Delivered> delivered_;
  std::vector<std::string> built_;
};

// A unix datagram socket standing in for systemd's $NOTIFY_SOCKET: a thread of its own reads
// the daemon's READY=1, RELOADING=1 and STATUS= messages as they come (the daemon's send would
// block on a full queue), and a test waits for the next one that says something.
class NotifySocket {
 public:
  NotifySocket(fs::path path, Events& events) : path_(std::move(path)), events_(events) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path_.string().size() < sizeof(address.sun_path));
    std::strcpy(address.sun_path, path_.c_str());
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    timeval tick{0, 100'000};  // how soon the reader notices it should stop
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof tick);
    reader_ = std::thread([this] { read(); });
  }
  ~NotifySocket() {
    stopping_ = true;
    reader_.join();
    ::close(fd_);
  }
  const fs::path& path() const { return path_; }

  // Waits for a message, after the last one a wait found, that contains `text`.
  bool wait_for(const std::string& text) {
    return events_.wait_for([&] {
      for (; seen_ < messages_.size(); ++seen_) {
        if (messages_[seen_].find(text) != std::string::npos) {
          ++seen_;
          return true;
        }
      }
      return false;
    });
  }

 private:
  void read() {
    char buffer[4096];
    while (!stopping_) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0)
        continue;
      {
        std::lock_guard lock(events_.mutex);
        messages_.emplace_back(buffer, std::size_t(n));
      }
      events_.notify();
    }
  }

  fs::path path_;
  Events& events_;
  int fd_ = -1;
  std::vector<std::string> messages_;  // events.mutex
  std::size_t seen_ = 0;               // events.mutex
  std::atomic<bool> stopping_{false};
  std::thread reader_;
};

// The API token every in-process daemon is started with.
inline constexpr const char* kLoopToken = "loop-token-0123456789abcdef0123456789";

// One daemon on its own thread, over a state_dir in a temp folder, with the fakes above. The
// config is YAML in dir/reverify.yaml (reload() reads it again), on a free port.
struct LoopHarness {
  TempDir dir;
  Events events;
  ManualClock clock;
  HeldRunner runner{events};
  FakeRegistry registry{events};
  FakePager pager{events};
  NotifySocket notify{dir.path / "notify.sock", events};
  std::unique_ptr<Store> store;
  std::unique_ptr<Daemon> daemon;
  std::thread loop;
  std::uint16_t port = free_port();
  int exit_status = -1;

  explicit LoopHarness(UnixSeconds start = 1'772'323'200)  // 2026-03-01T00:00:00Z
      : clock(start) {
    write_file(dir.path / "api.token", std::string(kLoopToken) + "\n");
    fs::permissions(dir.path / "api.token", fs::perms::owner_read | fs::perms::owner_write);
    fs::create_directories(dir.path / "registry");
    write_config();
  }

  fs::path config_path() const { return dir.path / "reverify.yaml"; }
  // The config: one source "fake", pages to the sender `sender` for every owner.
  void write_config(const std::string& sender = "sink", const std::string& extra = "") {
    write_file(config_path(),
               "state_dir: state\n"
               "api: {address: 127.0.0.1, port: " +
                   std::to_string(port) +
                   ", token_file: api.token}\n"
                   "sources: [{name: fake, kind: directory, root: registry}]\n"
                   "sync_interval: 1h\n"
                   "schedule: {per_cycle: 1, max_concurrent: 2, jitter: 0s, "
                   "retry: {max_attempts: 1}}\n"
                   "runner: {kind: process}\n"
                   "pager:\n"
                   "  senders: {" +
                   sender + ": {kind: file, path: pages.jsonl}}\n" +
                   "  routes: [{owner: \"*\", senders: [" + sender + "]}]\n" + extra);
  }

  // tiny@<version>: the fixture manifest (the fake job's accuracy passes it) written into the
  // registry folder, and its inventory row.
  ModelVersionRow manifest(const std::string& version) {
    std::string text = manifest_fixture_text("valid_minimal.json");
    text.replace(text.find("\"loss\""), 6, "\"accuracy\"");
    text.replace(text.find("\"version\": \"1\""), 14, "\"version\": \"" + version + "\"");
    const fs::path path = dir.path / "registry/tiny" / version / "manifest.json";
    write_file(path, text);
    auto row = describe_manifest("tiny", version, path.string(), text);
    REQUIRE_FALSE(row.manifest_error.has_value());
    row.source = "fake";
    return row;
  }
  // tiny@<version> released: listed by every fake source from now on.
  void release(const std::string& version) { registry.publish(manifest(version)); }

  Config config() const {
    auto loaded = load_daemon_config(config_path());
    REQUIRE(loaded.ok());
    return std::move(*loaded);
  }
  // The state_dir's store, as reverifyd's main opens it (before start(), to seed it).
  Store& open_store() {
    if (!store) {
      auto opened = open_state_store(config(), [this] { return clock.now(); });
      REQUIRE(opened.ok());
      store = std::move(*opened);
    }
    return *store;
  }

  // Creates the daemon and runs its loop on a thread of its own; returns once it serves its
  // first read model (READY=1).
  void start() {
    open_store();
    DaemonOptions options;
    options.config_path = config_path();
    options.handle_signals = false;
    options.notifier = SdNotifier(notify.path().string());
    auto created = Daemon::create(
        config(), DaemonCollaborators{*store, runner, clock, registry.factory(), pager.factory()},
        std::move(options));
    REQUIRE(created.ok());
    daemon = std::move(*created);
    loop = std::thread([this] { exit_status = daemon->run(); });
    REQUIRE(notify.wait_for("READY=1"));
  }

  // Stops the daemon (every job released first) and waits for run() to return.
  int stop() {
    if (!daemon)
      return exit_status;
    runner.release_all();
    daemon->stop();
    loop.join();
    daemon.reset();
    return exit_status;
  }
  ~LoopHarness() { stop(); }

  // Waits for `done` (called with events.mutex held); when it does not hold yet, moves the clock
  // on by `step` (the daemon's timers fire) and waits again.
  template <class Predicate>
  bool advance_until(Predicate done, milliseconds step = seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < deadline) {
      if (events.wait_for(done, milliseconds(200)))
        return true;
      clock.advance(step);
    }
    return false;
  }

  // Returns once the loop has run everything posted to it before this call (the timers
  // advance() fired among it): a reload of the same config is posted behind them, and its
  // STATUS= comes after.
  void loop_caught_up() {
    daemon->reload();
    REQUIRE(notify.wait_for("serving (reloaded)"));
  }

  Result<HttpResponse> post_trigger(const std::string& version) const {
    HttpRequest request;
    request.method = "POST";
    request.url = "http://127.0.0.1:" + std::to_string(port) + "/v1/verifications";
    request.body = R"({"model": "tiny", "version": ")" + version + R"("})";
    request.bearer_token = kLoopToken;
    return http_request(request);
  }

  VerificationRow row(std::int64_t id) {
    auto found = open_store().verification(id);
    REQUIRE(found.ok());
    REQUIRE(found->has_value());
    return **found;
  }
};

}  // namespace reverify::test
