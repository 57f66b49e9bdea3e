#include "daemon/daemon.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "api/daemon_metrics.hpp"
#include "api/http_server.hpp"
#include "api/snapshot.hpp"
#include "core/log.hpp"
#include "core/page_links.hpp"
#include "core/redact.hpp"
#include "core/text.hpp"
#include "daemon/registry_source.hpp"
#include "daemon/sd_notify.hpp"
#include "settings/config_check.hpp"
#include "verify/manifest_moves.hpp"
#include "verify/schedule.hpp"
#include "verify/state_dir.hpp"
#include "verify/verification_service.hpp"

namespace reverify {

namespace net = boost::asio;

namespace {

// How often the loop re-checks due work when nothing wakes it (retries, jittered starts).
constexpr std::chrono::seconds kTickInterval{5};
// How often the loop asks SQLite whether another process (`reverify run --config` on the same
// state_dir) committed: its verdicts show in /, /v1 and the gate within this, not at the next
// sync. One PRAGMA on the pool, no I/O.
constexpr std::chrono::seconds kStoreWatchInterval{1};

// The HTTP threads only read the published read model: one per core, each running an io_context
// of its own, serves requests on every core (the gate benchmark, docs/benchmarks.md "Which targets
// are met").
std::vector<std::unique_ptr<net::io_context>> make_api_workers() {
  std::vector<std::unique_ptr<net::io_context>> workers;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
    workers.push_back(std::make_unique<net::io_context>(1));  // 1: run by one thread
  return workers;
}

// The API's part of a config, sharing the config's lifetime.
std::shared_ptr<const ApiConfig> api_config_of(const std::shared_ptr<const Config>& config) {
  return std::shared_ptr<const ApiConfig>(config, &config->api);
}

// One line a registry sync logs, once back on the loop.
struct SyncLine {
  LogLevel level;
  std::string message;
  std::string source;
};

// What a registry sync hands back to the loop: the sources it borrowed, what to log, and
// whether each source's listing was stored.
struct SyncOutcome {
  std::vector<std::unique_ptr<RegistrySource>> sources;
  std::vector<SyncLine> log;
  std::vector<std::pair<std::string, bool>> listed;  // source name, listed and stored
};

// What planning a cycle hands back to the loop: what to log ("" when another run of the
// daemon already planned it).
struct CycleOutcome {
  bool failed = false;
  std::string message;
};

std::vector<std::string> source_names(const Config& config) {
  std::vector<std::string> names;
  for (const auto& source : config.sources)
    names.push_back(source.name);
  return names;
}

LogFields version_fields(const std::string& model, const std::string& version) {
  return {{"model", model}, {"version", version}};
}

// A verdict as one log line: its level says how bad (failed:* a warning, error:* an error,
// uncalibrated a notice, passed info), the fields say which, and the explanation stays on the
// verification's page, linked, with its first sentence as the reason.
void log_verdict(const VerificationRow& row, const Config& config) {
  LogFields fields = version_fields(row.model, row.version);
  fields.push_back({"verification", std::to_string(row.id)});
  LogLevel level = LogLevel::info;
  if (row.cls) {
    fields.push_back({"class", to_string(*row.cls)});
    level = is_failure(*row.cls)               ? LogLevel::warning
            : is_error(*row.cls)               ? LogLevel::error
            : *row.cls == VerdictClass::passed ? LogLevel::info
                                               : LogLevel::notice;
  }
  fields.push_back({"url", verification_page_url(config.pager.public_url, row.id)});
  constexpr std::size_t kReasonBytes = 160;
  fields.push_back({"reason", one_line(redact(row.explanation, config.api.secrets), kReasonBytes)});
  log_line(level,
           "verification " + std::to_string(row.id) + " of " + row.model + "@" + row.version +
               ": " + (row.cls ? to_string(*row.cls) : "no verdict"),
           fields);
}

// What a read-model build hands back to the loop.
struct Refreshed {
  Result<std::int64_t> data_version;
  Result<std::shared_ptr<const ReadModel>> model;
  std::vector<PlannedCalibration> calibrations;  // the cycle's, as planned now
};

// Why the running calibration stops before its next run: written by the loop, read by the
// calibration's thread.
enum class CalibrationStop { none, verification_due, draining };

// What an accepted reload hands back to the loop: the config, and what --check-config would
// report about it (logged as warnings, as at start).
struct Reloaded {
  Result<Config> config;
  std::vector<ConfigProblem> problems;
};

// The verifications found running and not being worked on by this daemon, by who finishes them.
struct LeftRunning {
  std::vector<VerificationRow> own;       // reverifyd's: reattached, or error:runner-lost
  std::vector<VerificationRow> orphaned;  // a `reverify run`'s whose process is gone
  std::vector<std::pair<VerificationRow, std::string>> owned;  // a live `reverify run`'s, owner
};

// Blocking (file locks): sorts running rows by who finishes them (verify/state_dir.hpp).
LeftRunning sort_left_running(const std::vector<VerificationRow>& rows,
                              const std::filesystem::path& state_dir) {
  LeftRunning left;
  for (const auto& row : rows) {
    if (row.state != VerificationState::running)
      continue;
    if (row.trigger != VerificationTrigger::cli) {
      left.own.push_back(row);
    } else if (auto owner = run_owner(state_dir, row.model, row.version); !owner.empty()) {
      left.owned.emplace_back(row, std::move(owner));
    } else {
      left.orphaned.push_back(row);
    }
  }
  return left;
}

// How a verification thread starts (start_verification).
enum class Start {
  run,       // a queued row: execute it
  reattach,  // reverifyd's own row left running by its previous process: recover it
  adopt,     // a `reverify run` row whose process ended: take the version's lock, then recover
};

// A thread failure (daemon.hpp, "Thread failures"): one error line, then exit 70 at once.
[[noreturn]] void fail_fast(const std::string& where, const std::string& what) {
  log_error("internal error on " + where + ": " + what +
            "; exiting with status 70 (running verifications are left to their runners and "
            "reconciled on the next start)");
  std::_Exit(70);
}

// Runs `work` where a thread of the daemon runs it: an exception escaping it is a thread failure.
template <class Work>
auto guarded(const std::string& where, Work&& work) -> decltype(work()) {
  try {
    return work();
  } catch (const std::exception& e) {
    fail_fast(where, e.what());
  } catch (...) {
    fail_fast(where, "an exception that is not a std::exception");
  }
}

// One line on what a daemon calibration did, for the log and the status page.
std::string calibration_summary(const Result<CalibrationOutcome>& result) {
  if (!result.ok())
    return "could not run: " + result.error().message;
  const CalibrationOutcome& outcome = *result;
  std::string text = std::to_string(outcome.added) + " seed-only run(s) added";
  if (outcome.failure) {
    text += "; stopped by " + std::string(to_string(outcome.failure->cls)) + ": " +
            outcome.failure->explanation;
  } else if (!outcome.stopped.empty()) {
    text += "; " + outcome.stopped;
  }
  return text;
}

}  // namespace

class DaemonImpl {
 public:
  DaemonImpl(std::shared_ptr<const Config> config, DaemonCollaborators with, DaemonOptions options)
      : options_(std::move(options)),
        store_(with.store),
        runner_(with.runner),
        clock_(with.clock),
        make_source_(std::move(with.make_source)),
        make_senders_(std::move(with.make_senders)),
        metrics_(clock_.now()),
        config_(std::move(config)) {}

  Status init();  // on the caller's thread, before run(): no other thread exists yet
  int run();
  void stop() {
    net::post(loop_, [this] { begin_drain("stop requested"); });
  }
  void reload() {
    net::post(loop_, [this] { reload_config(); });
  }

 private:
  // Runs `work` on the pool, then `then(result)` on the loop. The loop counts the pair as
  // outstanding work, so it cannot run out of work (and run() return) in between. `what` names
  // the task when it fails (daemon.hpp, "Thread failures").
  template <class Work, class Then>
  void off_loop(const char* what, Work work, Then then) {
    net::post(pool_, [this, what, guard = net::make_work_guard(loop_), work = std::move(work),
                      then = std::move(then)]() mutable {
      auto result = guarded(std::string("a pool thread (") + what + ")", work);
      net::post(loop_, [then = std::move(then), result = std::move(result)]() mutable {
        then(std::move(result));
      });
    });
  }
  // A timer of the loop's clock, armed to call `fire` on the loop.
  std::unique_ptr<LoopTimer> make_timer() { return clock_.timer(loop_); }
  // Reconciliation is done and draining has not begun: work may start.
  bool starts_work() const {
    return lifecycle_ == DaemonLifecycle::first_sync || lifecycle_ == DaemonLifecycle::serving;
  }
  bool draining_or_stopped() const {
    return lifecycle_ == DaemonLifecycle::draining || lifecycle_ == DaemonLifecycle::stopped;
  }

  // --- on an API thread ---
  void serve(const ApiRequest& request, ApiReply reply);

  // --- on the loop ---
  void publish(std::shared_ptr<const ReadModel> model);
  void on_signal(int signal);
  void wait_for_signal();
  void reconcile(Result<LeftRunning> left);
  void begin_drain(const std::string& why);
  void finish_if_drained();
  void schedule_tick(std::chrono::milliseconds after);
  void tick();
  void plan_cycle_if_due(UnixSeconds now);
  void reconcile_ended_cli_runs();
  void start_verification(const VerificationRow& row, Start how);
  void on_verification_done(std::int64_t id, const Result<std::optional<VerificationRow>>& result);
  void start_calibration_if_planned();
  void on_calibration_done(const Result<CalibrationOutcome>& result);
  nlohmann::json calibration_state() const;
  void refresh();
  void watch_store();
  void sync_sources();
  void rebuild_sources();
  void reload_config();
  void install_dispatcher(std::shared_ptr<const Config> config);
  LogLineFn dispatcher_log();
  void kick_dispatcher();
  void ping_watchdog();
  void accept_trigger(const TriggerRequest& trigger, const TriggerDone& done);

  DaemonOptions options_;
  // The collaborators (daemon.hpp); each is thread-safe on its own.
  Store& store_;
  Runner& runner_;
  LoopClock& clock_;
  std::function<std::unique_ptr<RegistrySource>(const RegistrySourceConfig&)> make_source_;
  std::function<Result<Dispatcher::Senders>(const PagerConfig&)> make_senders_;
  DaemonMetrics metrics_;  // the daemon's own /metrics series; any thread

  // The executors. Declared first, destroyed last: everything below may hold work on them.
  net::io_context loop_;  // run by ONE thread, the caller of run()
  // One per core, each run by one API thread.
  std::vector<std::unique_ptr<net::io_context>> api_ = make_api_workers();
  net::thread_pool pool_{2};  // blocking work; joined before the members below go

  // Shared with the pool and the verification threads; thread-safe on its own.
  std::unique_ptr<VerificationService> service_;
  std::unique_ptr<HttpServer> http_;  // on the api_ io_contexts

  // What the API threads read: swapped by the loop, loaded by every request.
  std::atomic<std::shared_ptr<const ReadModel>> published_;

  // --- loop state: read and written on the loop thread only ---
  DaemonLifecycle lifecycle_ = DaemonLifecycle::reconciling;
  // Keeps loop_.run() running while nothing is queued (its timers need not be Asio's); let go
  // once stopped.
  std::optional<net::executor_work_guard<net::io_context::executor_type>> running_;
  std::shared_ptr<const Config> config_;
  std::shared_ptr<const ReadModel> model_;  // the latest published
  std::unique_ptr<Dispatcher> dispatcher_;
  std::vector<std::unique_ptr<RegistrySource>> sources_;  // lent to the pool while syncing_
  SdNotifier& sd_ = options_.notifier;
  net::signal_set signals_{loop_};
  std::unique_ptr<LoopTimer> tick_ = make_timer(), sync_timer_ = make_timer(),
                             watchdog_timer_ = make_timer(), drain_timer_ = make_timer(),
                             store_watch_ = make_timer();
  std::optional<std::int64_t> data_version_;  // the store's, as the latest read model read it
  std::map<std::int64_t, std::thread> jobs_;  // running verifications
  std::set<std::int64_t> started_;            // started, the read model may still say queued
  // Calibrations of underpowered versions, in spare capacity: the cycle's plan as last built, the
  // one running (it takes one of max_concurrent's slots), and what each finished one of this
  // cycle did (not planned again this cycle; an interrupted one is not listed and resumes).
  struct RunningCalibration {
    std::string model, version;
    UnixSeconds since = 0;
    std::thread thread;
  };
  std::vector<PlannedCalibration> planned_calibrations_;
  std::optional<RunningCalibration> calibration_;
  std::map<std::pair<std::string, std::string>, std::string> calibrated_;
  std::atomic<CalibrationStop> calibration_stop_{CalibrationStop::none};  // + its thread
  // Work in flight, one of each kind at a time (each is independent of the lifecycle):
  bool refreshing_ = false, refresh_again_ = false;  // a read-model build; another one after it
  bool syncing_ = false, sources_stale_ = false;  // a registry sync; the config's sources changed
  bool planning_ = false;                         // a cycle plan
  bool checking_owners_ = false;                  // who owns the `reverify run` rows left running
  bool installing_ = false;  // a new dispatcher is being built; install_next_ waits for it
  std::shared_ptr<const Config> install_next_;
  std::optional<UnixSeconds> planned_period_;
  std::mt19937_64 rng_{std::random_device{}()};  // jitter: seeds each plan's own generator
};

Status DaemonImpl::init() {
  std::error_code ec;
  std::filesystem::create_directories(config_->work_root(), ec);
  // What --check-config calls errors only warns here: see settings/config_check.hpp.
  for (const auto& problem : check_deployment(*config_))
    log_warning(problem.message);
  store_.set_outbox_retry(config_->pager.retry);
  if (auto senders = make_senders_(config_->pager); senders.ok()) {
    dispatcher_ = std::make_unique<Dispatcher>(store_, std::move(*senders), dispatcher_log());
    dispatcher_->start();
  } else {
    log_error("pager: " + senders.error().message + " (pages stay in the outbox)");
  }
  metrics_.add_sources(source_names(*config_));
  // Called on a verification's thread once its pages are committed: the loop kicks.
  service_ = std::make_unique<VerificationService>(
      store_, runner_, [this] { net::post(loop_, [this] { kick_dispatcher(); }); });
  rebuild_sources();

  std::vector<net::io_context*> api_workers;
  for (const auto& worker : api_)
    api_workers.push_back(worker.get());
  http_ = std::make_unique<HttpServer>(
      std::move(api_workers), config_->api,
      [this](const ApiRequest& r, ApiReply reply) { serve(r, std::move(reply)); });
  auto bound = http_->listen(config_->api.address, config_->api.port);
  if (!bound.ok())
    return bound.error();
  log_info("listening on " + bound->address().to_string() + ":" + std::to_string(bound->port()));
  if (config_->pager.public_url_is_default && bound->address().is_loopback()) {
    log_notice("pager.public_url is not set: pages link " + config_->pager.public_url +
               ", this daemon's own address, which only this machine can open; set "
               "pager.public_url to the address people reach the status page at");
  }
  if (options_.on_listening)
    options_.on_listening(bound->port());
  return Status::success();
}

int DaemonImpl::run() {
  running_.emplace(loop_.get_executor());
  if (options_.handle_signals) {
    signals_.add(SIGTERM);
    signals_.add(SIGINT);
    signals_.add(SIGHUP);
    wait_for_signal();
  }
  // A placeholder until the first build, so every endpoint answers from the first request (503
  // while starting); the first build reads what the store already holds, before recovery.
  auto empty = std::make_shared<ReadModel>();
  empty->built_at = clock_.now();
  empty->api = api_config_of(config_);
  empty->starting = true;
  publish(std::move(empty));
  ping_watchdog();
  watch_store();
  refresh();
  // Reconcile first: verifications left running by a previous process get their verdict
  // (reattached or runner-lost) before anything new starts.
  off_loop(
      "reading the verifications left running",
      [this, state_dir = config_->state_dir]() -> Result<LeftRunning> {
        auto unfinished = store_.unfinished();
        if (!unfinished.ok())
          return unfinished.error();
        return sort_left_running(*unfinished, state_dir);
      },
      [this](Result<LeftRunning> left) { reconcile(std::move(left)); });
  std::vector<std::thread> api_threads;
  for (const auto& worker : api_) {
    api_threads.emplace_back(
        [this, &worker] { guarded("an API thread", [&worker] { worker->run(); }); });
  }
  guarded("the loop thread", [&] {
    loop_.run();
    // Drained: the HTTP server was stopped, so its connections close and the API threads return.
    for (auto& thread : api_threads)
      thread.join();
    // A trigger that raced the drain may have reached the loop after it stopped: answer it
    // (refused, shutting down), and let its connection go before the server is destroyed.
    loop_.restart();
    loop_.poll();
    for (const auto& worker : api_) {
      worker->restart();
      worker->run();
    }
  });
  pool_.join();
  if (dispatcher_)
    dispatcher_->stop();
  return 0;
}

void DaemonImpl::reconcile(Result<LeftRunning> left) {
  if (draining_or_stopped())
    return;  // left running: reconciled on the next start
  if (!left.ok()) {
    log_error("recovery: " + left.error().message);
  } else {
    for (const auto& row : left->own)
      start_verification(row, Start::reattach);
    for (const auto& row : left->orphaned)
      start_verification(row, Start::adopt);
    for (const auto& [row, owner] : left->owned) {
      log_info("verification " + std::to_string(row.id) + " of " + row.model + "@" + row.version +
               " is a `reverify run` that still runs (" + owner +
               "): left to it; reconciled here if it ends without a verdict");
    }
  }
  lifecycle_ = DaemonLifecycle::first_sync;
  sync_sources();
}

void DaemonImpl::publish(std::shared_ptr<const ReadModel> model) {
  model_ = model;
  published_.store(std::move(model));
}

void DaemonImpl::serve(const ApiRequest& request, ApiReply reply) {
  ApiContext context;
  context.model = published_.load();
  context.api = context.model->api.get();
  context.now = clock_.now();
  context.daemon_metrics = &metrics_;
  context.trigger = [this](const TriggerRequest& trigger, TriggerDone done) {
    net::post(loop_, [this, trigger, done = std::move(done)] { accept_trigger(trigger, done); });
  };
  handle_api_request(request, context, std::move(reply));
}

void DaemonImpl::ping_watchdog() {
  (void)sd_.watchdog();
  metrics_.heartbeat(clock_.now());
  const auto interval = sd_.watchdog_interval().value_or(std::chrono::seconds(30));
  watchdog_timer_->arm(std::chrono::duration_cast<std::chrono::milliseconds>(interval),
                       [this] { ping_watchdog(); });
}

void DaemonImpl::wait_for_signal() {
  if (!draining_or_stopped()) {
    signals_.async_wait([this](auto ec, int signal) {
      if (!ec)
        on_signal(signal);
    });
  } else if (lifecycle_ == DaemonLifecycle::draining) {
    // A second signal while draining exits at once (sample-controller: first cancels, second
    // exits).
    signals_.async_wait([this](auto ec, int) {
      if (!ec) {
        log_warning("second signal: exiting without waiting for running verifications");
        std::_Exit(0);
      }
    });
  }
}

void DaemonImpl::on_signal(int signal) {
  if (signal == SIGHUP) {
    reload_config();
  } else {
    begin_drain(signal == SIGTERM ? "SIGTERM" : "SIGINT");
  }
  wait_for_signal();
}

void DaemonImpl::begin_drain(const std::string& why) {
  if (draining_or_stopped())
    return;
  lifecycle_ = DaemonLifecycle::draining;
  (void)sd_.stopping();
  log_info(why + ": draining " + std::to_string(jobs_.size()) + " running verification(s)" +
           (calibration_ ? " and the calibration of " + calibration_->model + "@" +
                               calibration_->version + " (it stops before its next run)"
                         : std::string()));
  calibration_stop_ = CalibrationStop::draining;
  tick_->cancel();
  sync_timer_->cancel();
  store_watch_->cancel();
  drain_timer_->arm(std::chrono::seconds(config_->stop_timeout_s), [this] {
    // Still running at the stop timeout: left to their runner (a process group, a container, a
    // Job keeps going) and reconciled on the next start, which reattaches or records
    // error:runner-lost; a crash is what we are built for.
    log_warning("stop timeout: exiting with " + std::to_string(jobs_.size()) +
                " verification(s) still running; they are reconciled on the next start");
    std::_Exit(0);
  });
  finish_if_drained();
}

void DaemonImpl::finish_if_drained() {
  if (lifecycle_ != DaemonLifecycle::draining || !jobs_.empty() || calibration_)
    return;
  lifecycle_ = DaemonLifecycle::stopped;  // nothing may re-arm a wait now, or run() never returns
  running_.reset();
  drain_timer_->cancel();
  watchdog_timer_->cancel();
  signals_.cancel();
  http_->stop();
  log_info("drained; exiting");
}

void DaemonImpl::schedule_tick(std::chrono::milliseconds after) {
  if (draining_or_stopped())
    return;
  tick_->arm(after, [this] { tick(); });
}

void DaemonImpl::plan_cycle_if_due(UnixSeconds now) {
  // Plan the current cycle once: the store refuses a second start of the same period. Never
  // over an inventory not yet read: only once the first sync is in (serving).
  auto bounds = cycle_bounds(std::chrono::sys_seconds{std::chrono::seconds{now}},
                             rotation_config(config_->schedule));
  if (!bounds.ok() || planning_ || lifecycle_ != DaemonLifecycle::serving)
    return;
  const UnixSeconds period = bounds->first.time_since_epoch().count();
  if (planned_period_ && *planned_period_ >= period)
    return;
  planning_ = true;
  off_loop(
      "planning the cycle",
      [this, config = config_, period, now, seed = rng_()] {
        auto last = store_.last_cycle_period();
        if (last.ok() && *last && **last >= period)
          return CycleOutcome{};  // already planned by an earlier run of the daemon
        auto plan = plan_current_cycle(store_, *config, now);
        if (!plan.ok())
          return CycleOutcome{true, "planning the cycle: " + plan.error().message};
        std::mt19937_64 rng(seed);
        auto queue = plan_entries_to_queue(*plan, now, config->schedule.jitter_s, rng);
        auto started = store_.start_cycle(period, plan_to_json(*plan), std::move(queue));
        return started.ok() ? CycleOutcome{false, "cycle " + rfc3339(period) + ": queued " +
                                                      std::to_string(plan->entries.size()) +
                                                      " verification(s)"}
                            : CycleOutcome{true, "starting the cycle: " + started.error().message};
      },
      [this, period](CycleOutcome outcome) {
        planning_ = false;
        if (planned_period_ != period)
          calibrated_.clear();  // a new cycle: its calibrations are planned afresh
        planned_period_ = period;
        if (outcome.failed)
          log_error(outcome.message);
        else if (!outcome.message.empty())
          log_info(outcome.message);
        refresh();
      });
}

void DaemonImpl::tick() {
  if (!starts_work())
    return;
  const UnixSeconds now = clock_.now();
  metrics_.heartbeat(now);
  plan_cycle_if_due(now);
  // Start due verifications up to max_concurrent, manual triggers first.
  std::vector<VerificationRow> queued;
  for (const auto& row : model_->unfinished) {
    if (row.state == VerificationState::queued && !started_.count(row.id))
      queued.push_back(row);
  }
  const auto busy = [this] { return jobs_.size() + (calibration_ ? 1 : 0); };
  while (busy() < config_->schedule.max_concurrent) {
    auto next = next_to_start(queued, now);
    if (!next)
      break;
    std::erase_if(queued, [&](const VerificationRow& r) { return r.id == next->id; });
    start_verification(*next, Start::run);
  }
  // Calibrations use spare capacity only: one starts when no verification is waiting for a
  // slot, and a running one gives its slot back (after its current run) when one is.
  const bool waiting = next_to_start(queued, now).has_value();
  if (calibration_ && waiting) {
    calibration_stop_ = CalibrationStop::verification_due;
  } else if (!calibration_ && !waiting && busy() < config_->schedule.max_concurrent) {
    start_calibration_if_planned();
  }
  reconcile_ended_cli_runs();
  schedule_tick(kTickInterval);
}

void DaemonImpl::reconcile_ended_cli_runs() {
  // A `reverify run` row still running in the store, with nobody here working on it: its owner
  // may have ended (kill -9) without recording a verdict.
  std::vector<VerificationRow> candidates;
  for (const auto& row : model_->unfinished) {
    if (row.state == VerificationState::running && row.trigger == VerificationTrigger::cli &&
        !jobs_.count(row.id))
      candidates.push_back(row);
  }
  if (candidates.empty() || checking_owners_)
    return;
  checking_owners_ = true;
  off_loop(
      "checking who owns the `reverify run` rows left running",
      [candidates = std::move(candidates), state_dir = config_->state_dir] {
        return sort_left_running(candidates, state_dir).orphaned;
      },
      [this](std::vector<VerificationRow> orphaned) {
        checking_owners_ = false;
        if (!starts_work())
          return;
        for (const auto& row : orphaned)
          start_verification(row, Start::adopt);
      });
}

void DaemonImpl::start_verification(const VerificationRow& row, Start how) {
  if (jobs_.count(row.id))
    return;
  started_.insert(row.id);
  LogFields fields = version_fields(row.model, row.version);
  fields.push_back({"verification", std::to_string(row.id)});
  fields.push_back({"mode", to_string(row.mode)});
  log_info(std::string(how == Start::run ? "starting" : "reconciling") + " verification " +
           std::to_string(row.id) + " of " + row.model + "@" + row.version + " (" +
           to_string(row.mode) + ")" +
           (how == Start::adopt ? ", left running by a `reverify run` that ended" : ""));
  // The settings as the config says now; the thread keeps its own copy.
  auto settings = verification_settings(*config_, row.model);
  const std::string where = "the thread of verification " + std::to_string(row.id) + " (" +
                            row.model + "@" + row.version + ")";
  jobs_.emplace(
      row.id, std::thread([this, row, how, where, settings = std::move(settings),
                           state_dir = config_->state_dir, guard = net::make_work_guard(loop_)] {
        auto result = guarded(where, [&]() -> Result<std::optional<VerificationRow>> {
          switch (how) {
            case Start::run: {
              // The first stage means the row is committed as running: show it.
              auto shown = std::make_shared<std::once_flag>();
              auto on_stage = [this, shown](std::string_view, std::string_view) {
                std::call_once(*shown, [this] { net::post(loop_, [this] { refresh(); }); });
              };
              auto done = service_->execute(row.id, settings, on_stage);
              if (!done.ok())
                return done.error();
              return std::optional(*done);
            }
            case Start::reattach: {
              auto done = service_->recover(row, settings);
              if (!done.ok())
                return done.error();
              return std::optional(*done);
            }
            case Start::adopt: {
              // The version's lock first: a `reverify run` of it that started since
              // reconciles the row itself (verify/state_dir.hpp).
              auto owned = StateLock::version(
                  state_dir, row.model, row.version,
                  "reverifyd, reconciling verification " + std::to_string(row.id),
                  std::chrono::milliseconds(0));
              if (!owned.ok())
                return std::optional<VerificationRow>();
              auto now = store_.verification(row.id);
              if (!now.ok())
                return now.error();
              if (!*now || (*now)->state != VerificationState::running)
                return std::optional<VerificationRow>();  // it ended meanwhile
              auto done = service_->recover(**now, settings);
              if (!done.ok())
                return done.error();
              return std::optional(*done);
            }
          }
          return std::optional<VerificationRow>();
        });
        net::post(loop_, [this, id = row.id, result = std::move(result)] {
          on_verification_done(id, result);
        });
      }));
  refresh();
}

void DaemonImpl::start_calibration_if_planned() {
  if (!planned_period_ || planning_)
    return;  // after the cycle's verifications are queued
  auto planned = std::find_if(planned_calibrations_.begin(), planned_calibrations_.end(),
                              [&](const PlannedCalibration& c) {
                                return !calibrated_.count({c.model, c.version});
                              });
  if (planned == planned_calibrations_.end())
    return;
  log_info("calibrating " + planned->model + "@" + planned->version + ": " + planned->reason,
           version_fields(planned->model, planned->version));
  metrics_.calibration_started();
  calibration_stop_ = CalibrationStop::none;
  CalibrationJob job{planned->model, planned->version, static_cast<int>(planned->max_runs),
                     [this]() -> std::optional<std::string> {
                       switch (calibration_stop_.load()) {
                         case CalibrationStop::none:
                           return std::nullopt;
                         case CalibrationStop::verification_due:
                           return "a verification needs the slot; it resumes when one is free";
                         case CalibrationStop::draining:
                           return "reverifyd is stopping; it resumes after the restart";
                       }
                       return std::nullopt;
                     }};
  auto settings = verification_settings(*config_, planned->model);
  const std::string where =
      "the calibration thread (" + planned->model + "@" + planned->version + ")";
  calibration_.emplace(RunningCalibration{
      planned->model, planned->version, clock_.now(),
      std::thread([this, where, job = std::move(job), settings = std::move(settings),
                   guard = net::make_work_guard(loop_)] {
        Result<CalibrationOutcome> result =
            guarded(where, [&] { return service_->calibrate(job, settings); });
        net::post(loop_, [this, result = std::move(result)] { on_calibration_done(result); });
      })});
  refresh();
}

void DaemonImpl::on_calibration_done(const Result<CalibrationOutcome>& result) {
  RunningCalibration done = std::move(*calibration_);
  calibration_.reset();
  done.thread.join();  // it posted this as its last act
  const std::string summary = calibration_summary(result);
  const std::string line = "calibration of " + done.model + "@" + done.version + ": " + summary;
  const bool failed = !result.ok() || result->failure;
  log_line(failed ? LogLevel::error : LogLevel::info, line,
           version_fields(done.model, done.version));
  metrics_.calibration_ended(failed                ? CalibrationOutcomeKind::failed
                             : result->interrupted ? CalibrationOutcomeKind::interrupted
                                                   : CalibrationOutcomeKind::complete);
  // An interrupted one stays planned and resumes; any other is done for this cycle.
  if (!result.ok() || !result->interrupted)
    calibrated_[{done.model, done.version}] = summary;
  refresh();
  finish_if_drained();
  if (!draining_or_stopped())
    net::post(loop_, [this] { tick(); });
}

nlohmann::json DaemonImpl::calibration_state() const {
  nlohmann::json done = nlohmann::json::array();
  for (const auto& [version, summary] : calibrated_)
    done.push_back({{"model", version.first}, {"version", version.second}, {"outcome", summary}});
  nlohmann::json running;
  if (calibration_) {
    running = {{"model", calibration_->model},
               {"version", calibration_->version},
               {"since", rfc3339(calibration_->since)}};
  }
  return {{"running", std::move(running)}, {"done", std::move(done)}};
}

void DaemonImpl::on_verification_done(std::int64_t id,
                                      const Result<std::optional<VerificationRow>>& result) {
  auto it = jobs_.find(id);
  if (it != jobs_.end()) {
    it->second.join();  // it posted this as its last act
    jobs_.erase(it);
  }
  if (!result.ok()) {
    log_error("verification " + std::to_string(id) + ": " + result.error().message,
              {{"verification", std::to_string(id)}});
  } else if (const auto& row = *result) {
    log_verdict(*row, *config_);
    metrics_.verification_finished(
        row->runner_kind,
        row->evidence.is_object() && row->evidence.contains("durations")
            ? row->evidence["durations"]
            : nlohmann::json(),
        row->started_at && row->finished_at
            ? std::optional<double>(double(*row->finished_at - *row->started_at))
            : std::nullopt);
  } else {
    log_info("verification " + std::to_string(id) +
                 ": left alone, its `reverify run` ended it or another took it over",
             {{"verification", std::to_string(id)}});
  }
  refresh();
  finish_if_drained();
  if (!draining_or_stopped())
    net::post(loop_, [this] { tick(); });
}

void DaemonImpl::refresh() {
  if (refreshing_) {
    refresh_again_ = true;
    return;
  }
  refreshing_ = true;
  off_loop(
      "building the read model",
      [this, config = config_, calibrations = calibration_state()] {
        // Read first: whatever another process commits after this shows in a later build.
        auto version = store_.data_version();
        const UnixSeconds now = clock_.now();
        auto plan = plan_current_cycle(store_, *config, now);
        nlohmann::json shown;
        if (plan.ok()) {
          shown = plan_to_json(*plan);
          shown["calibrating"] = calibrations;  // the loop's: running now, done this cycle
        }
        return Refreshed{version,
                         build_read_model(store_, std::move(shown), now, api_config_of(config)),
                         plan.ok() ? plan->calibrations : std::vector<PlannedCalibration>()};
      },
      [this](Refreshed result) {
        refreshing_ = false;
        auto& [version, built, calibrations] = result;
        if (version.ok())
          data_version_ = *version;
        planned_calibrations_ = std::move(calibrations);
        if (built.ok()) {
          publish(*built);
          // A started row leaves started_ once a read model no longer shows it queued: a build
          // can read the store before the job's thread marks the row running.
          std::erase_if(started_, [&](std::int64_t id) {
            return std::none_of(model_->unfinished.begin(), model_->unfinished.end(),
                                [&](const VerificationRow& row) {
                                  return row.id == id && row.state == VerificationState::queued;
                                });
          });
          (void)sd_.ready(std::string(to_string(lifecycle_)) + "; " + std::to_string(jobs_.size()) +
                          " running");
        } else {
          log_error("refreshing the read model: " + built.error().message);
        }
        if (refresh_again_) {
          refresh_again_ = false;
          refresh();
        } else if (!draining_or_stopped()) {
          tick();
        }
      });
}

void DaemonImpl::watch_store() {
  if (draining_or_stopped())
    return;
  store_watch_->arm(kStoreWatchInterval, [this] {
    off_loop(
        "watching the store", [this] { return store_.data_version(); },
        [this](Result<std::int64_t> version) {
          if (!version.ok()) {
            log_error("watching the store: " + version.error().message);
          } else if (!data_version_ || *data_version_ != *version) {
            refresh();  // another process committed since the last build: show it now
          }
          watch_store();
        });
  });
}

void DaemonImpl::rebuild_sources() {
  sources_.clear();
  for (const auto& source : config_->sources)
    sources_.push_back(make_source_(source));
  sources_stale_ = false;
}

void DaemonImpl::sync_sources() {
  if (syncing_ || !starts_work())
    return;
  syncing_ = true;
  // The sources (they keep ETags between listings) go to the pool and come back with the result.
  off_loop(
      "syncing the registry sources",
      [this, config = config_, sources = std::move(sources_)]() mutable {
        SyncOutcome outcome{std::move(sources), {}, {}};
        auto& log = outcome.log;
        for (auto& source : outcome.sources) {
          const std::string& name = source->name();
          auto listing = source->list();
          if (!listing.ok()) {
            log.push_back(
                {LogLevel::error, "source " + name + ": " + listing.error().message, name});
            outcome.listed.emplace_back(name, false);
            continue;
          }
          for (const auto& w : listing->warnings)
            log.push_back({LogLevel::warning, "source " + name + ": " + w, name});
          if (listing->unchanged) {
            outcome.listed.emplace_back(name, true);
            continue;
          }
          std::set<std::string> owners;
          for (const auto& row : listing->rows) {
            if (!row.owner.empty())
              owners.insert(row.owner);
          }
          for (const auto& owner : owners) {
            if (config->pager.routes.empty())
              break;
            if (auto routed = check_owner_routed(config->pager, owner); !routed.ok())
              log.push_back({LogLevel::warning, "pager: " + routed.error().message, name});
          }
          auto changed = store_.sync_model_versions(name, listing->rows);
          log.push_back(changed.ok()
                            ? SyncLine{LogLevel::info,
                                       "source " + name + ": " +
                                           std::to_string(listing->rows.size()) + " version(s), " +
                                           std::to_string(*changed) + " new or changed",
                                       name}
                            : SyncLine{LogLevel::error,
                                       "source " + name + ": " + changed.error().message, name});
          outcome.listed.emplace_back(name, changed.ok());
        }
        // A manifest that changed since its verdict: what moved, for the pages.
        for (auto& line : describe_manifest_moves(store_))
          log.push_back(
              {line.failed ? LogLevel::warning : LogLevel::info, std::move(line.text), ""});
        // New releases are queued as soon as a sync sees them, on the at-release budget; one
        // the budget has no room for today is queued by a later sync (or the next cycle).
        auto queued = queue_releases(store_, *config, clock_.now());
        if (!queued.ok())
          log.push_back({LogLevel::error, "queueing new releases: " + queued.error().message, ""});
        else
          for (auto& line : *queued)
            log.push_back({LogLevel::info, std::move(line), ""});
        return outcome;
      },
      [this](SyncOutcome outcome) {
        sources_ = std::move(outcome.sources);
        if (sources_stale_)
          rebuild_sources();  // a reload during the sync: the next sync uses the new sources
        for (const auto& line : outcome.log)
          log_line(line.level, line.message,
                   line.source.empty() ? LogFields{} : LogFields{{"source", line.source}});
        for (const auto& [source, listed] : outcome.listed)
          metrics_.registry_synced(source, listed, clock_.now());
        syncing_ = false;
        if (lifecycle_ == DaemonLifecycle::first_sync)
          lifecycle_ = DaemonLifecycle::serving;  // the inventory is read: cycles may be planned
        refresh();
        if (draining_or_stopped())
          return;  // a sync that finishes after SIGTERM must not keep the loop alive
        sync_timer_->arm(std::chrono::seconds(config_->sync_interval_s),
                         [this] { sync_sources(); });
      });
}

void DaemonImpl::reload_config() {
  (void)sd_.reloading();
  off_loop(
      "loading the config",
      [path = options_.config_path] {
        Reloaded reloaded{load_daemon_config(path), {}};
        if (reloaded.config.ok())
          reloaded.problems = check_deployment(*reloaded.config);
        return reloaded;
      },
      [this](Reloaded reloaded) {
        auto& next = reloaded.config;
        if (!next.ok()) {
          metrics_.config_reloaded(ReloadOutcome::invalid, clock_.now());
          log_error("SIGHUP: keeping the running config; the new one is invalid:\n" +
                    next.error().message);
          (void)sd_.ready("serving (reload rejected)");
          return;
        }
        // Address, state_dir, work_dir and runner apply only at start: a reload that changes
        // them is refused whole, so the daemon never half-applies a config.
        if (const auto changed = restart_only_changes(*config_, *next); !changed.empty()) {
          std::string names;
          for (const auto& name : changed)
            names += (names.empty() ? "" : ", ") + name;
          metrics_.config_reloaded(ReloadOutcome::restart_required, clock_.now());
          log_error("SIGHUP: keeping the running config; the new one changes " + names +
                    ", which apply only when reverifyd starts: restart it to change them");
          (void)sd_.ready("serving (reload rejected)");
          return;
        }
        // What --check-config calls errors only warns, as at start (settings/config_check.hpp).
        for (const auto& problem : reloaded.problems)
          log_warning(problem.message);
        config_ = std::make_shared<const Config>(std::move(*next));
        if (syncing_)
          sources_stale_ = true;
        else
          rebuild_sources();
        install_dispatcher(config_);
        metrics_.add_sources(source_names(*config_));
        metrics_.config_reloaded(ReloadOutcome::applied, clock_.now());
        log_info("SIGHUP: config reloaded");
        (void)sd_.ready("serving (reloaded)");
        refresh();
      });
}

void DaemonImpl::install_dispatcher(std::shared_ptr<const Config> config) {
  if (installing_) {
    install_next_ = std::move(config);  // the latest reload wins once this one is in
    return;
  }
  installing_ = true;
  const auto installed = [this] {
    installing_ = false;
    if (install_next_)
      install_dispatcher(std::exchange(install_next_, nullptr));
  };
  // The senders read their secret files (pool); a config whose senders fail keeps the old ones.
  off_loop(
      "building the pager's senders", [this, config] { return make_senders_(config->pager); },
      [this, config, installed](Result<Dispatcher::Senders> senders) {
        if (!senders.ok()) {
          log_error("pager: " + senders.error().message + " (pages stay in the outbox)");
          return installed();
        }
        // The old dispatcher finishes its attempt in flight and stops before the new one
        // starts, so no outbox row is ever attempted by two at once.
        std::shared_ptr<Dispatcher> previous = std::move(dispatcher_);
        off_loop(
            "stopping the previous pager dispatcher",
            [this, config, previous] {
              if (previous)
                previous->stop();
              store_.set_outbox_retry(config->pager.retry);
              return true;
            },
            [this, senders = std::move(*senders), installed](bool) mutable {
              dispatcher_ =
                  std::make_unique<Dispatcher>(store_, std::move(senders), dispatcher_log());
              dispatcher_->start();
              installed();
            });
      });
}

// Every delivery outcome is one log line and a change to the outbox's counts: logged, and the
// loop rebuilds the read model so /metrics counts it (the dispatcher's commits are on the
// daemon's own connection, which the store watch does not see).
LogLineFn DaemonImpl::dispatcher_log() {
  return [this](LogLevel level, const std::string& message, const LogFields& fields) {
    log_line(level, message, fields);
    net::post(loop_, [this] { refresh(); });
  };
}

void DaemonImpl::kick_dispatcher() {
  if (dispatcher_)
    dispatcher_->kick();
}

void DaemonImpl::accept_trigger(const TriggerRequest& trigger, const TriggerDone& done) {
  if (draining_or_stopped())
    return done(make_error(ErrorCode::conflict, "the daemon is shutting down"));
  const bool large = config_->model_policy(trigger.model).large.value_or(false);
  QueuedVerification item{trigger.model, trigger.version,
                          trigger.mode.value_or(large ? RebuildMode::steps : RebuildMode::full),
                          VerificationTrigger::manual};
  item.not_before = clock_.now();
  // The store decides, in the transaction that writes the row, whether one is already queued or
  // running; the 202 goes out only once that transaction committed.
  off_loop(
      "recording a manual trigger", [this, item] { return store_.enqueue_unless_active(item); },
      [this, item, done](Result<std::int64_t> id) {
        const std::string key = item.model + "@" + item.version;
        LogFields fields = version_fields(item.model, item.version);
        if (!id.ok()) {
          if (id.error().code != ErrorCode::conflict)
            log_error("manual trigger of " + key + ": " + id.error().message, fields);
          return done(id.error());
        }
        fields.push_back({"verification", std::to_string(*id)});
        log_info("manual trigger of " + key + ": verification " + std::to_string(*id), fields);
        refresh();
        done(nlohmann::json{{"status", "queued"},
                            {"verification_id", *id},
                            {"page", verification_page_url(config_->pager.public_url, *id)},
                            {"model", item.model},
                            {"version", item.version},
                            {"mode", to_string(item.mode)},
                            {"running_now", jobs_.size()},
                            {"detail", "manual triggers start before scheduled work"}});
      });
}

Result<std::unique_ptr<Daemon>> Daemon::create(Config config, DaemonCollaborators with,
                                               DaemonOptions options) {
  auto impl = std::make_unique<DaemonImpl>(std::make_shared<const Config>(std::move(config)),
                                           std::move(with), std::move(options));
  if (auto s = impl->init(); !s.ok())
    return s.error();
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

Daemon::Daemon(std::unique_ptr<DaemonImpl> impl) : impl_(std::move(impl)) {}
Daemon::~Daemon() = default;
int Daemon::run() {
  return impl_->run();
}
void Daemon::stop() {
  impl_->stop();
}
void Daemon::reload() {
  impl_->reload();
}

void install_crash_handler() {
  std::set_terminate([] {
    std::string what = "std::terminate without an exception";
    if (const auto current = std::current_exception()) {
      try {
        std::rethrow_exception(current);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
        what = "an exception that is not a std::exception";
      }
    }
    fail_fast("a thread reverifyd does not run itself (the pager dispatcher's)", what);
  });
}

}  // namespace reverify
