#include "daemon/daemon.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "api/http_server.hpp"
#include "api/snapshot.hpp"
#include "daemon/daemon_log.hpp"
#include "daemon/registry_source.hpp"
#include "daemon/sd_notify.hpp"
#include "pager/dispatcher.hpp"
#include "pager/senders.hpp"
#include "runners/runner_factory.hpp"
#include "store/store.hpp"
#include "verify/schedule.hpp"
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

// The HTTP threads only read the published read model: one per core serves requests on every
// core (the gate benchmark, README "Benchmarks").
unsigned api_thread_count() {
  return std::max(1u, std::thread::hardware_concurrency());
}

// The API's part of a config, sharing the config's lifetime.
std::shared_ptr<const ApiConfig> api_config_of(const std::shared_ptr<const Config>& config) {
  return std::shared_ptr<const ApiConfig>(config, &config->api);
}

// What a registry sync hands back to the loop: the sources it borrowed, and what to log.
struct SyncOutcome {
  std::vector<std::unique_ptr<RegistrySource>> sources;
  std::vector<std::string> log;
};

// What a read-model build hands back to the loop.
struct Refreshed {
  Result<std::int64_t> data_version;
  Result<std::shared_ptr<const ReadModel>> model;
  std::vector<PlannedCalibration> calibrations;  // the cycle's, as planned now
};

// Why the running calibration stops before its next run: written by the loop, read by the
// calibration's thread.
enum class CalibrationStop { none, verification_due, draining };

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
  DaemonImpl(std::shared_ptr<const Config> config, DaemonOptions options)
      : options_(std::move(options)), config_(std::move(config)) {}

  Status init();  // on the caller's thread, before run(): no other thread exists yet
  int run();
  void stop() {
    net::post(loop_, [this] { begin_drain("stop requested"); });
  }

 private:
  // Runs `work` on the pool, then `then(result)` on the loop. The loop counts the pair as
  // outstanding work, so it cannot run out of work (and run() return) in between.
  template <class Work, class Then>
  void off_loop(Work work, Then then) {
    net::post(pool_, [this, guard = net::make_work_guard(loop_), work = std::move(work),
                      then = std::move(then)]() mutable {
      auto result = work();
      net::post(loop_, [then = std::move(then), result = std::move(result)]() mutable {
        then(std::move(result));
      });
    });
  }

  // --- on an API thread ---
  void serve(const ApiRequest& request, ApiReply reply);

  // --- on the loop ---
  void publish(std::shared_ptr<const ReadModel> model);
  void on_signal(int signal);
  void begin_drain(const std::string& why);
  void finish_if_drained();
  void schedule_tick(std::chrono::steady_clock::duration after);
  void tick();
  void plan_cycle_if_due(UnixSeconds now);
  void start_verification(const VerificationRow& row, bool recovering);
  void on_verification_done(std::int64_t id, const Result<VerificationRow>& result);
  void start_calibration_if_planned();
  void on_calibration_done(const Result<CalibrationOutcome>& result);
  nlohmann::json calibration_state() const;
  void refresh();
  void watch_store();
  void sync_sources();
  void rebuild_sources();
  void reload();
  void install_dispatcher(std::shared_ptr<const Config> config);
  void kick_dispatcher();
  void ping_watchdog();
  void accept_trigger(const TriggerRequest& trigger, const TriggerDone& done);

  DaemonOptions options_;

  // The executors. Declared first, destroyed last: everything below may hold work on them.
  net::io_context loop_;      // run by ONE thread, the caller of run()
  net::io_context api_;       // run by api_thread_count() threads
  net::thread_pool pool_{2};  // blocking work; joined before the members below go

  // Shared with the pool and the verification threads; each is thread-safe on its own.
  std::unique_ptr<Store> store_;
  std::unique_ptr<Runner> runner_;
  std::unique_ptr<VerificationService> service_;
  std::unique_ptr<HttpServer> http_;  // on api_

  // What the API threads read: swapped by the loop, loaded by every request.
  std::atomic<std::shared_ptr<const ReadModel>> published_;

  // --- loop state: read and written on the loop thread only ---
  std::shared_ptr<const Config> config_;
  std::shared_ptr<const ReadModel> model_;  // the latest published
  std::unique_ptr<Dispatcher> dispatcher_;
  bool installing_ = false;  // a new dispatcher is being built; install_next_ waits for it
  std::shared_ptr<const Config> install_next_;
  std::vector<std::unique_ptr<RegistrySource>> sources_;  // lent to the pool while syncing_
  bool sources_stale_ = false;  // the config's sources changed while they were lent
  SdNotifier sd_;
  net::signal_set signals_{loop_};
  net::steady_timer tick_{loop_}, sync_timer_{loop_}, watchdog_timer_{loop_}, drain_timer_{loop_};
  net::steady_timer store_watch_{loop_};
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
  bool refreshing_ = false, refresh_again_ = false;
  bool draining_ = false, drained_ = false;
  bool syncing_ = false, planning_ = false, recovered_ = false;
  bool synced_once_ = false;  // no cycle is planned over an inventory not yet read
  std::optional<UnixSeconds> planned_period_;
  std::mt19937_64 rng_{std::random_device{}()};  // jitter: seeds each plan's own generator
};

Status DaemonImpl::init() {
  std::error_code ec;
  std::filesystem::create_directories(config_->state_dir, ec);
  if (ec) {
    return make_error(ErrorCode::io,
                      "state_dir " + config_->state_dir.string() + ": " + ec.message());
  }
  std::filesystem::create_directories(config_->work_root(), ec);
  auto store = Store::open(config_->db_path(), options_.clock);
  if (!store.ok())
    return store.error();
  store_ = std::move(*store);
  auto runner = make_runner(config_->runner);
  if (!runner.ok())
    return runner.error();
  runner_ = std::move(*runner);
  store_->set_outbox_retry(config_->pager.retry);
  if (auto senders = make_notifiers(config_->pager); senders.ok()) {
    dispatcher_ = std::make_unique<Dispatcher>(*store_, std::move(*senders));
    dispatcher_->start();
  } else {
    log_error("pager: " + senders.error().message + " (pages stay in the outbox)");
  }
  // Called on a verification's thread once its pages are committed: the loop kicks.
  service_ = std::make_unique<VerificationService>(
      *store_, *runner_, [this] { net::post(loop_, [this] { kick_dispatcher(); }); });
  rebuild_sources();

  http_ = std::make_unique<HttpServer>(
      api_, config_->api,
      [this](const ApiRequest& r, ApiReply reply) { serve(r, std::move(reply)); });
  auto bound = http_->listen(config_->api.address, config_->api.port);
  if (!bound.ok())
    return bound.error();
  log_info("listening on " + bound->address().to_string() + ":" + std::to_string(bound->port()));
  if (options_.on_listening)
    options_.on_listening(bound->port());
  return Status::success();
}

int DaemonImpl::run() {
  signals_.add(SIGTERM);
  signals_.add(SIGINT);
  signals_.add(SIGHUP);
  signals_.async_wait([this](auto ec, int signal) {
    if (!ec)
      on_signal(signal);
  });
  // A placeholder until the first build, so every endpoint answers from the first request (503
  // while starting); the first build reads what the store already holds, before recovery.
  auto empty = std::make_shared<ReadModel>();
  empty->built_at = options_.clock();
  empty->api = api_config_of(config_);
  empty->starting = true;
  publish(std::move(empty));
  ping_watchdog();
  watch_store();
  refresh();
  // Reconcile first: verifications left running by a previous process get their verdict
  // (reattached or runner-lost) before anything new starts.
  off_loop([this] { return store_->unfinished(); },
           [this](Result<std::vector<VerificationRow>> unfinished) {
             if (!unfinished.ok()) {
               log_error("recovery: " + unfinished.error().message);
             } else {
               for (const auto& row : *unfinished) {
                 if (row.state == VerificationState::running)
                   start_verification(row, true);
               }
             }
             recovered_ = true;
             sync_sources();
           });
  std::vector<std::thread> api_threads;
  for (unsigned i = 0; i < api_thread_count(); ++i)
    api_threads.emplace_back([this] { api_.run(); });
  loop_.run();
  // Drained: the HTTP server was stopped, so its connections close and the API threads return.
  for (auto& thread : api_threads)
    thread.join();
  // A trigger that raced the drain may have reached the loop after it stopped: answer it
  // (refused, shutting down), and let its connection go before the server is destroyed.
  loop_.restart();
  loop_.poll();
  api_.restart();
  api_.run();
  pool_.join();
  if (dispatcher_)
    dispatcher_->stop();
  return 0;
}

void DaemonImpl::publish(std::shared_ptr<const ReadModel> model) {
  model_ = model;
  published_.store(std::move(model));
}

void DaemonImpl::serve(const ApiRequest& request, ApiReply reply) {
  ApiContext context;
  context.model = published_.load();
  context.api = context.model->api.get();
  context.now = options_.clock();
  context.trigger = [this](const TriggerRequest& trigger, TriggerDone done) {
    net::post(loop_, [this, trigger, done = std::move(done)] { accept_trigger(trigger, done); });
  };
  handle_api_request(request, context, std::move(reply));
}

void DaemonImpl::ping_watchdog() {
  (void)sd_.watchdog();
  auto interval = sd_.watchdog_interval().value_or(std::chrono::seconds(30));
  watchdog_timer_.expires_after(interval);
  watchdog_timer_.async_wait([this](auto ec) {
    if (!ec)
      ping_watchdog();
  });
}

void DaemonImpl::on_signal(int signal) {
  if (signal == SIGHUP) {
    reload();
  } else {
    begin_drain(signal == SIGTERM ? "SIGTERM" : "SIGINT");
  }
  if (!draining_) {
    signals_.async_wait([this](auto ec, int next) {
      if (!ec)
        on_signal(next);
    });
  } else if (!drained_) {
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

void DaemonImpl::begin_drain(const std::string& why) {
  if (draining_)
    return;
  draining_ = true;
  (void)sd_.stopping();
  log_info(why + ": draining " + std::to_string(jobs_.size()) + " running verification(s)" +
           (calibration_ ? " and the calibration of " + calibration_->model + "@" +
                               calibration_->version + " (it stops before its next run)"
                         : std::string()));
  calibration_stop_ = CalibrationStop::draining;
  tick_.cancel();
  sync_timer_.cancel();
  store_watch_.cancel();
  drain_timer_.expires_after(std::chrono::seconds(config_->stop_timeout_s));
  drain_timer_.async_wait([this](auto ec) {
    if (ec)
      return;
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
  if (!draining_ || !jobs_.empty() || calibration_)
    return;
  drained_ = true;  // nothing may re-arm a wait now, or loop_.run() never returns
  drain_timer_.cancel();
  watchdog_timer_.cancel();
  signals_.cancel();
  http_->stop();
  log_info("drained; exiting");
}

void DaemonImpl::schedule_tick(std::chrono::steady_clock::duration after) {
  if (draining_)
    return;
  tick_.expires_after(after);
  tick_.async_wait([this](auto ec) {
    if (!ec)
      tick();
  });
}

void DaemonImpl::plan_cycle_if_due(UnixSeconds now) {
  // Plan the current cycle once: the store refuses a second start of the same period.
  auto bounds = cycle_bounds(std::chrono::sys_seconds{std::chrono::seconds{now}},
                             rotation_config(config_->schedule));
  if (!bounds.ok() || planning_ || !synced_once_)
    return;
  const UnixSeconds period = bounds->first.time_since_epoch().count();
  if (planned_period_ && *planned_period_ >= period)
    return;
  planning_ = true;
  off_loop(
      [this, config = config_, period, now, seed = rng_()] {
        auto last = store_->last_cycle_period();
        if (last.ok() && *last && **last >= period)
          return std::string();  // already planned by an earlier run of the daemon
        auto plan = plan_current_cycle(*store_, *config, now);
        if (!plan.ok())
          return "planning the cycle: " + plan.error().message;
        std::mt19937_64 rng(seed);
        auto queue = plan_entries_to_queue(*plan, now, config->schedule.jitter_s, rng);
        auto started = store_->start_cycle(period, plan_to_json(*plan), std::move(queue));
        return started.ok() ? "cycle " + rfc3339(period) + ": queued " +
                                  std::to_string(plan->entries.size()) + " verification(s)"
                            : "starting the cycle: " + started.error().message;
      },
      [this, period](std::string outcome) {
        planning_ = false;
        if (planned_period_ != period)
          calibrated_.clear();  // a new cycle: its calibrations are planned afresh
        planned_period_ = period;
        if (!outcome.empty())
          log_info(outcome);
        refresh();
      });
}

void DaemonImpl::tick() {
  if (draining_ || !recovered_)
    return;
  const UnixSeconds now = options_.clock();
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
    start_verification(*next, false);
  }
  // Calibrations use spare capacity only: one starts when no verification is waiting for a
  // slot, and a running one gives its slot back (after its current run) when one is.
  const bool waiting = next_to_start(queued, now).has_value();
  if (calibration_ && waiting) {
    calibration_stop_ = CalibrationStop::verification_due;
  } else if (!calibration_ && !waiting && busy() < config_->schedule.max_concurrent) {
    start_calibration_if_planned();
  }
  schedule_tick(kTickInterval);
}

void DaemonImpl::start_verification(const VerificationRow& row, bool recovering) {
  if (jobs_.count(row.id))
    return;
  started_.insert(row.id);
  log_info(std::string(recovering ? "reconciling" : "starting") + " verification " +
           std::to_string(row.id) + " of " + row.model + "@" + row.version + " (" +
           to_string(row.mode) + ")");
  // The settings as the config says now; the thread keeps its own copy.
  auto settings = verification_settings(*config_, row.model);
  jobs_.emplace(row.id, std::thread([this, row, recovering, settings = std::move(settings),
                                     guard = net::make_work_guard(loop_)] {
                  // The first stage means the row is committed as running: show it in /v1.
                  auto shown = std::make_shared<std::once_flag>();
                  auto on_stage = [this, shown](std::string_view, std::string_view) {
                    std::call_once(*shown, [this] { net::post(loop_, [this] { refresh(); }); });
                  };
                  Result<VerificationRow> result =
                      recovering ? service_->recover(row, settings)
                                 : service_->execute(row.id, settings, on_stage);
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
  log_info("calibrating " + planned->model + "@" + planned->version + ": " + planned->reason);
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
  calibration_.emplace(RunningCalibration{
      planned->model, planned->version, options_.clock(),
      std::thread([this, job = std::move(job), settings = std::move(settings),
                   guard = net::make_work_guard(loop_)] {
        Result<CalibrationOutcome> result = service_->calibrate(job, settings);
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
  if (!result.ok() || result->failure)
    log_error(line);
  else
    log_info(line);
  // An interrupted one stays planned and resumes; any other is done for this cycle.
  if (!result.ok() || !result->interrupted)
    calibrated_[{done.model, done.version}] = summary;
  refresh();
  finish_if_drained();
  if (!draining_)
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

void DaemonImpl::on_verification_done(std::int64_t id, const Result<VerificationRow>& result) {
  auto it = jobs_.find(id);
  if (it != jobs_.end()) {
    it->second.join();  // it posted this as its last act
    jobs_.erase(it);
  }
  if (result.ok()) {
    const std::string line = "verification " + std::to_string(id) + ": " +
                             (result->cls ? to_string(*result->cls) : "?") + " " +
                             result->explanation;
    // The platform failed under the job (a full disk, the host's OOM killer): the operator acts.
    if (result->cls == VerdictClass::error_infra)
      log_warning(line);
    else
      log_info(line);
  } else {
    log_error("verification " + std::to_string(id) + ": " + result.error().message);
  }
  refresh();
  finish_if_drained();
  if (!draining_)
    net::post(loop_, [this] { tick(); });
}

void DaemonImpl::refresh() {
  if (refreshing_) {
    refresh_again_ = true;
    return;
  }
  refreshing_ = true;
  off_loop(
      [this, config = config_, calibrations = calibration_state()] {
        // Read first: whatever another process commits after this shows in a later build.
        auto version = store_->data_version();
        const UnixSeconds now = options_.clock();
        auto plan = plan_current_cycle(*store_, *config, now);
        nlohmann::json shown;
        if (plan.ok()) {
          shown = plan_to_json(*plan);
          shown["calibrating"] = calibrations;  // the loop's: running now, done this cycle
        }
        return Refreshed{version,
                         build_read_model(*store_, std::move(shown), now, api_config_of(config)),
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
          (void)sd_.ready("serving; " + std::to_string(jobs_.size()) + " running");
        } else {
          log_error("refreshing the read model: " + built.error().message);
        }
        if (refresh_again_) {
          refresh_again_ = false;
          refresh();
        } else if (!draining_) {
          tick();
        }
      });
}

void DaemonImpl::watch_store() {
  if (draining_)
    return;
  store_watch_.expires_after(kStoreWatchInterval);
  store_watch_.async_wait([this](auto ec) {
    if (ec)
      return;
    off_loop([this] { return store_->data_version(); },
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
    sources_.push_back(make_registry_source(source));
  sources_stale_ = false;
}

void DaemonImpl::sync_sources() {
  if (syncing_ || draining_)
    return;
  syncing_ = true;
  // The sources (they keep ETags between listings) go to the pool and come back with the result.
  off_loop(
      [this, config = config_, sources = std::move(sources_)]() mutable {
        SyncOutcome outcome{std::move(sources), {}};
        auto& log = outcome.log;
        for (auto& source : outcome.sources) {
          auto listing = source->list();
          if (!listing.ok()) {
            log.push_back("source " + source->name() + ": " + listing.error().message);
            continue;
          }
          for (const auto& w : listing->warnings)
            log.push_back("source " + source->name() + ": " + w);
          if (listing->unchanged)
            continue;
          std::set<std::string> owners;
          for (const auto& row : listing->rows) {
            if (!row.owner.empty())
              owners.insert(row.owner);
          }
          for (const auto& owner : owners) {
            if (config->pager.routes.empty())
              break;
            if (auto routed = check_owner_routed(config->pager, owner); !routed.ok())
              log.push_back("pager: " + routed.error().message);
          }
          auto changed = store_->sync_model_versions(source->name(), listing->rows);
          log.push_back(changed.ok() ? "source " + source->name() + ": " +
                                           std::to_string(listing->rows.size()) + " version(s), " +
                                           std::to_string(*changed) + " new or changed"
                                     : "source " + source->name() + ": " + changed.error().message);
        }
        return outcome;
      },
      [this](SyncOutcome outcome) {
        sources_ = std::move(outcome.sources);
        if (sources_stale_)
          rebuild_sources();  // a reload during the sync: the next sync uses the new sources
        for (const auto& line : outcome.log)
          log_info(line);
        syncing_ = false;
        synced_once_ = true;
        refresh();
        if (draining_)
          return;  // a sync that finishes after SIGTERM must not keep the loop alive
        sync_timer_.expires_after(std::chrono::seconds(config_->sync_interval_s));
        sync_timer_.async_wait([this](auto ec) {
          if (!ec)
            sync_sources();
        });
      });
}

void DaemonImpl::reload() {
  (void)sd_.reloading();
  off_loop([path = options_.config_path] { return load_daemon_config(path); },
           [this](Result<Config> next) {
             if (!next.ok()) {
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
               log_error("SIGHUP: keeping the running config; the new one changes " + names +
                         ", which apply only when reverifyd starts: restart it to change them");
               (void)sd_.ready("serving (reload rejected)");
               return;
             }
             config_ = std::make_shared<const Config>(std::move(*next));
             if (syncing_)
               sources_stale_ = true;
             else
               rebuild_sources();
             install_dispatcher(config_);
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
  off_loop([config] { return make_notifiers(config->pager); },
           [this, config, installed](Result<Dispatcher::Senders> senders) {
             if (!senders.ok()) {
               log_error("pager: " + senders.error().message + " (pages stay in the outbox)");
               return installed();
             }
             // The old dispatcher finishes its attempt in flight and stops before the new one
             // starts, so no outbox row is ever attempted by two at once.
             std::shared_ptr<Dispatcher> previous = std::move(dispatcher_);
             off_loop(
                 [this, config, previous] {
                   if (previous)
                     previous->stop();
                   store_->set_outbox_retry(config->pager.retry);
                   return true;
                 },
                 [this, senders = std::move(*senders), installed](bool) mutable {
                   dispatcher_ = std::make_unique<Dispatcher>(*store_, std::move(senders));
                   dispatcher_->start();
                   installed();
                 });
           });
}

void DaemonImpl::kick_dispatcher() {
  if (dispatcher_)
    dispatcher_->kick();
}

void DaemonImpl::accept_trigger(const TriggerRequest& trigger, const TriggerDone& done) {
  if (draining_)
    return done(make_error(ErrorCode::conflict, "the daemon is shutting down"));
  const bool large = config_->model_policy(trigger.model).large.value_or(false);
  QueuedVerification item{trigger.model, trigger.version,
                          trigger.mode.value_or(large ? RebuildMode::steps : RebuildMode::full),
                          VerificationTrigger::manual};
  item.not_before = options_.clock();
  // The store decides, in the transaction that writes the row, whether one is already queued or
  // running; the 202 goes out only once that transaction committed.
  off_loop([this, item] { return store_->enqueue_unless_active(item); },
           [this, item, done](Result<std::int64_t> id) {
             const std::string key = item.model + "@" + item.version;
             if (!id.ok()) {
               if (id.error().code != ErrorCode::conflict)
                 log_error("manual trigger of " + key + ": " + id.error().message);
               return done(id.error());
             }
             log_info("manual trigger of " + key + ": verification " + std::to_string(*id));
             refresh();
             done(nlohmann::json{{"status", "queued"},
                                 {"verification_id", *id},
                                 {"model", item.model},
                                 {"version", item.version},
                                 {"mode", to_string(item.mode)},
                                 {"running_now", jobs_.size()},
                                 {"detail", "manual triggers start before scheduled work"}});
           });
}

Result<std::unique_ptr<Daemon>> Daemon::create(Config config, DaemonOptions options) {
  auto impl = std::make_unique<DaemonImpl>(std::make_shared<const Config>(std::move(config)),
                                           std::move(options));
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

}  // namespace reverify
