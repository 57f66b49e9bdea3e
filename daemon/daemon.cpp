#include "daemon/daemon.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
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

// How often the loop re-checks due work when nothing wakes it (retries, jittered starts).
constexpr std::chrono::seconds kTickInterval{5};

class DaemonImpl {
 public:
  DaemonImpl(std::shared_ptr<const Config> config, DaemonOptions options)
      : options_(std::move(options)),
        config_(std::move(config)),
        signals_(loop_),
        tick_(loop_),
        sync_timer_(loop_),
        watchdog_timer_(loop_),
        drain_timer_(loop_) {}

  Status init();
  int run();
  void stop() {
    net::post(loop_, [this] { begin_drain("stop requested"); });
  }

 private:
  std::shared_ptr<const Config> config() const {
    std::lock_guard lock(config_mutex_);
    return config_;
  }
  void install_dispatcher(const Config& config);

  // --- on the io thread ---
  void on_signal(int signal);
  void begin_drain(const std::string& why);
  void finish_if_drained();
  void schedule_tick(std::chrono::steady_clock::duration after);
  void tick();
  void start_verification(const VerificationRow& row, bool recovering);
  void on_verification_done(std::int64_t id, const Result<VerificationRow>& result);
  void refresh();
  void sync_sources();
  void reload();
  void ping_watchdog();
  ApiResponse handle(const ApiRequest& request);
  Result<nlohmann::json> accept_trigger(const TriggerRequest& trigger);

  DaemonOptions options_;
  mutable std::mutex config_mutex_;
  std::shared_ptr<const Config> config_;

  std::unique_ptr<Store> store_;
  std::unique_ptr<Runner> runner_;
  std::unique_ptr<VerificationService> service_;
  std::mutex dispatcher_mutex_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::vector<std::unique_ptr<RegistrySource>> sources_;  // used on the pool, one sync at a time
  SdNotifier sd_;

  net::io_context io_;
  // The daemon's own state below is touched only on this strand; HTTP connections run on strands
  // of their own, so both threads that run io_ serve requests.
  net::strand<net::io_context::executor_type> loop_{net::make_strand(io_)};
  net::thread_pool pool_{2};
  net::signal_set signals_;
  net::steady_timer tick_, sync_timer_, watchdog_timer_, drain_timer_;
  std::unique_ptr<HttpServer> http_;

  // The read model: replaced on loop_, read by request handlers on any thread.
  std::shared_ptr<const ReadModel> snapshot() const {
    std::lock_guard lock(model_mutex_);
    return model_;
  }
  void publish(std::shared_ptr<const ReadModel> model) {
    std::lock_guard lock(model_mutex_);
    model_ = std::move(model);
  }
  mutable std::mutex model_mutex_;
  std::shared_ptr<const ReadModel> model_;

  // Shared with request handlers (manual triggers).
  std::mutex trigger_mutex_;
  std::set<std::string> triggering_;  // manual triggers not yet visible in the read model
  std::atomic<bool> draining_{false};
  std::atomic<std::size_t> running_count_{0};  // jobs_.size()

  // loop_ state
  std::map<std::int64_t, std::thread> jobs_;  // running verifications
  std::set<std::int64_t> started_;            // started, the read model may still say queued
  std::set<std::string> enqueued_triggers_;   // written; the next read model built shows them
  bool refreshing_ = false, refresh_again_ = false;
  bool drained_ = false;
  bool syncing_ = false, planning_ = false, recovered_ = false;
  bool synced_once_ = false;  // no cycle is planned over an inventory not yet read
  std::optional<UnixSeconds> planned_period_;
  std::mt19937_64 rng_{std::random_device{}()};
};

void DaemonImpl::install_dispatcher(const Config& config) {
  auto senders = make_notifiers(config.pager);
  if (!senders.ok()) {
    log_error("pager: " + senders.error().message + " (pages stay in the outbox)");
    return;
  }
  store_->set_outbox_retry(config.pager.retry);
  auto next = std::make_unique<Dispatcher>(*store_, std::move(*senders));
  next->start();
  std::unique_ptr<Dispatcher> previous;
  {
    std::lock_guard lock(dispatcher_mutex_);
    previous = std::move(dispatcher_);
    dispatcher_ = std::move(next);
  }
  if (previous)
    previous->stop();
}

Status DaemonImpl::init() {
  auto config = this->config();
  std::error_code ec;
  std::filesystem::create_directories(config->state_dir, ec);
  if (ec) {
    return make_error(ErrorCode::io,
                      "state_dir " + config->state_dir.string() + ": " + ec.message());
  }
  std::filesystem::create_directories(config->work_root(), ec);
  auto store = Store::open(config->db_path(), options_.clock);
  if (!store.ok())
    return store.error();
  store_ = std::move(*store);
  auto runner = make_runner(config->runner);
  if (!runner.ok())
    return runner.error();
  runner_ = std::move(*runner);
  install_dispatcher(*config);
  service_ = std::make_unique<VerificationService>(
      *store_, *runner_,
      [this](const std::string& model) { return verification_settings(*this->config(), model); },
      [this] {
        std::lock_guard lock(dispatcher_mutex_);
        if (dispatcher_)
          dispatcher_->kick();
      });
  for (const auto& source : config->sources)
    sources_.push_back(make_registry_source(source));

  http_ = std::make_unique<HttpServer>(io_, config->api,
                                       [this](const ApiRequest& r) { return handle(r); });
  auto bound = http_->listen(config->api.address, config->api.port);
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
  // An empty model until the first build, so every endpoint answers from the first request.
  auto empty = std::make_shared<ReadModel>();
  empty->built_at = options_.clock();
  publish(empty);
  ping_watchdog();
  net::post(loop_, [this] {
    // Reconcile first: verifications left running by a previous process get their verdict
    // (reattached or runner-lost) before anything new starts.
    net::post(pool_, [this] {
      auto unfinished = store_->unfinished();
      net::post(loop_, [this, unfinished = std::move(unfinished)] {
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
    });
  });
  std::thread second_loop_thread([this] { io_.run(); });
  io_.run();
  second_loop_thread.join();
  pool_.join();
  {
    std::lock_guard lock(dispatcher_mutex_);
    if (dispatcher_)
      dispatcher_->stop();
  }
  return 0;
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
  log_info(why + ": draining " + std::to_string(jobs_.size()) + " running verification(s)");
  tick_.cancel();
  sync_timer_.cancel();
  drain_timer_.expires_after(std::chrono::seconds(config()->stop_timeout_s));
  drain_timer_.async_wait([this](auto ec) {
    if (ec)
      return;
    // Still running at the stop timeout: leave them to the next start's reconciliation (the
    // runner keeps them or they become error:runner-lost); a crash is what we are built for.
    log_warning("stop timeout: exiting with " + std::to_string(jobs_.size()) +
                " verification(s) still running; they are reconciled on the next start");
    std::_Exit(0);
  });
  finish_if_drained();
}

void DaemonImpl::finish_if_drained() {
  if (!draining_ || !jobs_.empty())
    return;
  drained_ = true;  // nothing may re-arm a wait now, or io_.run() never returns
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

void DaemonImpl::tick() {
  if (draining_ || !recovered_)
    return;
  auto config = this->config();
  const UnixSeconds now = options_.clock();
  // Plan the current cycle once: the store refuses a second start of the same period.
  auto bounds = cycle_bounds(std::chrono::sys_seconds{std::chrono::seconds{now}},
                             rotation_config(config->schedule));
  if (bounds.ok() && !planning_ && synced_once_) {
    const UnixSeconds period = bounds->first.time_since_epoch().count();
    if (!planned_period_ || *planned_period_ < period) {
      planning_ = true;
      net::post(pool_, [this, config, period, now] {
        auto last = store_->last_cycle_period();
        std::string outcome;
        if (last.ok() && *last && **last >= period) {
          outcome = "";  // already planned by an earlier run of the daemon
        } else if (auto plan = plan_current_cycle(*store_, *config, now); !plan.ok()) {
          outcome = "planning the cycle: " + plan.error().message;
        } else {
          auto queue = plan_entries_to_queue(*plan, now, config->schedule.jitter_s, rng_);
          auto started = store_->start_cycle(period, plan_to_json(*plan), std::move(queue));
          outcome = started.ok() ? "cycle " + rfc3339(period) + ": queued " +
                                       std::to_string(plan->entries.size()) + " verification(s)"
                                 : "starting the cycle: " + started.error().message;
        }
        net::post(loop_, [this, period, outcome] {
          planning_ = false;
          planned_period_ = period;
          if (!outcome.empty())
            log_info(outcome);
          refresh();
        });
      });
    }
  }
  // Start due verifications up to max_concurrent, manual triggers first.
  std::vector<VerificationRow> queued;
  for (const auto& row : snapshot()->unfinished) {
    if (row.state == VerificationState::queued && !started_.count(row.id))
      queued.push_back(row);
  }
  while (jobs_.size() < config->schedule.max_concurrent) {
    auto next = next_to_start(queued, now);
    if (!next)
      break;
    std::erase_if(queued, [&](const VerificationRow& r) { return r.id == next->id; });
    start_verification(*next, false);
  }
  schedule_tick(kTickInterval);
}

void DaemonImpl::start_verification(const VerificationRow& row, bool recovering) {
  if (jobs_.count(row.id))
    return;
  started_.insert(row.id);
  log_info(std::string(recovering ? "reconciling" : "starting") + " verification " +
           std::to_string(row.id) + " of " + row.model + "@" + row.version + " (" + row.mode + ")");
  running_count_ = jobs_.size() + 1;
  jobs_.emplace(row.id, std::thread([this, row, recovering] {
                  // The first stage means the row is committed as running: show it in /v1.
                  auto shown = std::make_shared<std::once_flag>();
                  auto on_stage = [this, shown](std::string_view, std::string_view) {
                    std::call_once(*shown, [this] { net::post(loop_, [this] { refresh(); }); });
                  };
                  Result<VerificationRow> result =
                      recovering ? service_->recover(row) : service_->execute(row.id, on_stage);
                  net::post(loop_, [this, id = row.id, result = std::move(result)] {
                    on_verification_done(id, result);
                  });
                }));
  refresh();
}

void DaemonImpl::on_verification_done(std::int64_t id, const Result<VerificationRow>& result) {
  auto it = jobs_.find(id);
  if (it != jobs_.end()) {
    it->second.join();  // it posted this as its last act
    jobs_.erase(it);
    running_count_ = jobs_.size();
  }
  if (result.ok()) {
    log_info("verification " + std::to_string(id) + ": " + result->cls.value_or("?") + " " +
             result->explanation);
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
  // Triggers written before this build are in it: they can be released once it is published.
  std::set<std::string> triggers_before = std::move(enqueued_triggers_);
  enqueued_triggers_.clear();
  net::post(pool_, [this, triggers_before] {
    auto config = this->config();
    auto plan = plan_current_cycle(*store_, *config, options_.clock());
    auto built = build_read_model(*store_, plan.ok() ? plan_to_json(*plan) : nlohmann::json(),
                                  options_.clock());
    net::post(loop_, [this, built = std::move(built), triggers_before] {
      refreshing_ = false;
      if (built.ok()) {
        publish(*built);
        // A started row leaves started_ once a read model no longer shows it queued: a build
        // can read the store before the job's thread marks the row running.
        std::erase_if(started_, [&](std::int64_t id) {
          return std::none_of((*built)->unfinished.begin(), (*built)->unfinished.end(),
                              [&](const VerificationRow& row) {
                                return row.id == id && row.state == VerificationState::queued;
                              });
        });
        std::lock_guard lock(trigger_mutex_);
        for (const auto& key : triggers_before)
          triggering_.erase(key);
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
  });
}

void DaemonImpl::sync_sources() {
  if (syncing_ || draining_)
    return;
  syncing_ = true;
  auto config = this->config();
  net::post(pool_, [this, config] {
    std::vector<std::string> log;
    for (auto& source : sources_) {
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
        if (auto routed = check_owner_routed(config->pager, owner); !routed.ok()) {
          log.push_back("pager: " + routed.error().message);
        }
      }
      auto changed = store_->sync_model_versions(source->name(), listing->rows);
      log.push_back(changed.ok()
                        ? "source " + source->name() + ": " + std::to_string(listing->rows.size()) +
                              " version(s), " + std::to_string(*changed) + " new or changed"
                        : "source " + source->name() + ": " + changed.error().message);
    }
    net::post(loop_, [this, log = std::move(log)] {
      for (const auto& line : log)
        log_info(line);
      syncing_ = false;
      synced_once_ = true;
      refresh();
      if (draining_)
        return;  // a sync that finishes after SIGTERM must not keep the loop alive
      sync_timer_.expires_after(std::chrono::seconds(this->config()->sync_interval_s));
      sync_timer_.async_wait([this](auto ec) {
        if (!ec)
          sync_sources();
      });
    });
  });
}

void DaemonImpl::reload() {
  (void)sd_.reloading();
  net::post(pool_, [this] {
    auto next = load_config(options_.config_path);
    if (!next.ok()) {
      log_error("SIGHUP: keeping the running config; the new one is invalid:\n" +
                next.error().message);
      (void)sd_.ready("serving (reload rejected)");
      return;
    }
    auto config = std::make_shared<const Config>(std::move(*next));
    install_dispatcher(*config);
    net::post(loop_, [this, config] {
      // Sources are rebuilt between syncs; address, state_dir and runner need a restart.
      if (!syncing_) {
        sources_.clear();
        for (const auto& source : config->sources)
          sources_.push_back(make_registry_source(source));
      }
      {
        std::lock_guard lock(config_mutex_);
        config_ = config;
      }
      log_info("SIGHUP: config reloaded (api address, state_dir and runner apply on restart)");
      (void)sd_.ready("serving (reloaded)");
      refresh();
    });
  });
}

Result<nlohmann::json> DaemonImpl::accept_trigger(const TriggerRequest& trigger) {
  if (draining_)
    return make_error(ErrorCode::conflict, "the daemon is shutting down");
  const auto key = trigger.model + "@" + trigger.version;
  const auto model = snapshot();
  const auto* view = model->find(trigger.model, trigger.version);
  std::unique_lock lock(trigger_mutex_);
  if (triggering_.count(key) || (view && view->active_id)) {
    return make_error(ErrorCode::conflict,
                      key + " already has a verification queued or running" +
                          (view && view->active_id ? " (" + std::to_string(*view->active_id) + ")"
                                                   : std::string()));
  }
  auto config = this->config();
  const bool large = config->model_policy(trigger.model).large.value_or(false);
  QueuedVerification item{
      trigger.model, trigger.version,
      to_string(trigger.mode.value_or(large ? RebuildMode::steps : RebuildMode::full)), "manual"};
  item.not_before = options_.clock();
  triggering_.insert(key);
  lock.unlock();
  net::post(pool_, [this, item, key] {
    auto id = store_->enqueue(item);
    net::post(loop_, [this, id, key] {
      if (!id.ok()) {
        std::lock_guard erase_lock(trigger_mutex_);
        triggering_.erase(key);
        log_error("manual trigger of " + key + ": " + id.error().message);
      } else {
        // Refused as a duplicate until a read model shows the queued row.
        enqueued_triggers_.insert(key);
        log_info("manual trigger of " + key + ": verification " + std::to_string(*id));
      }
      refresh();
    });
  });
  const std::size_t running = running_count_;
  return nlohmann::json{
      {"status", "queued"},      {"model", item.model},
      {"version", item.version}, {"mode", item.mode},
      {"running_now", running},  {"detail", "manual triggers start before scheduled work"}};
}

ApiResponse DaemonImpl::handle(const ApiRequest& request) {
  auto config = this->config();
  ApiContext context;
  context.model = snapshot();
  context.api = &config->api;
  context.now = options_.clock();
  context.trigger = [this](const TriggerRequest& t) { return accept_trigger(t); };
  return handle_api_request(request, context);
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
