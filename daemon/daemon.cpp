#include "daemon/daemon.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "core/page_links.hpp"
#include "core/redact.hpp"
#include "core/suggested_command.hpp"
#include "core/text.hpp"
#include "daemon/daemon_impl.hpp"
#include "settings/config_check.hpp"
#include "verify/schedule.hpp"
#include "verify/state_dir.hpp"

namespace reverify {

std::vector<std::unique_ptr<net::io_context>> make_api_workers() {
  std::vector<std::unique_ptr<net::io_context>> workers;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
    workers.push_back(std::make_unique<net::io_context>(1));  // 1: run by one thread
  return workers;
}

std::vector<std::string> source_names(const Config& config) {
  std::vector<std::string> names;
  for (const auto& source : config.sources)
    names.push_back(source.name);
  return names;
}

// A thread failure (daemon.hpp, "Thread failures"): one error line, then exit 70 at once.
[[noreturn]] void fail_fast(const std::string& where, const std::string& what) {
  log_error("internal error on " + where + ": " + what +
            "; exiting with status 70 (running verifications are left to their runners and "
            "reconciled on the next start)");
  std::_Exit(70);
}

namespace {

// How often the loop re-checks due work when nothing wakes it (retries, jittered starts).
constexpr std::chrono::seconds kTickInterval{5};
// How often the loop asks SQLite whether another process (`reverify run --config` on the same
// state_dir) committed: its verdicts show in /, /v1 and the gate within this, not at the next
// sync. One PRAGMA on the pool, no I/O.
constexpr std::chrono::seconds kStoreWatchInterval{1};
// How often the loop checks that the store still works (Store::check_health: a stat of its file
// and a write of one page), for /healthz and reverify_store_ok: a store cut, replaced or on a
// file system gone read-only is seen within this even when nothing else writes.
constexpr std::chrono::seconds kStoreCheckInterval{10};

// The API's part of a config, sharing the config's lifetime.
std::shared_ptr<const ApiConfig> api_config_of(const std::shared_ptr<const Config>& config) {
  return std::shared_ptr<const ApiConfig>(config, &config->api);
}

// Planning a cycle: what to log (nothing when another run of the daemon already planned it): the
// cycle, each verification it queued, each cadence period it cannot keep; or why it failed.
std::vector<PendingLine> start_cycle(Store& store, const Config& config, UnixSeconds period,
                                     UnixSeconds now, std::mt19937_64& rng) {
  auto last = store.last_cycle_period();
  if (last.ok() && *last && **last >= period)
    return {};  // already planned by an earlier run of the daemon
  auto plan = plan_current_cycle(store, config, now);
  if (!plan.ok())
    return {{LogLevel::error, "planning the cycle: " + plan.error().message, {}}};
  auto queue = plan_entries_to_queue(*plan, now, config.schedule.jitter_s, rng);
  auto ids = store.start_cycle(period, plan_to_json(*plan), std::move(queue));
  if (!ids.ok())
    return {{LogLevel::error, "starting the cycle: " + ids.error().message, {}}};
  const std::string cycle = "cycle " + rfc3339(period);
  std::vector<PendingLine> lines{
      {LogLevel::info, cycle + ": queued " + std::to_string(ids->size()) + " verification(s)", {}}};
  for (std::size_t i = 0; i < ids->size() && i < plan->entries.size(); ++i) {
    const PlanEntry& e = plan->entries[i];
    LogFields fields = verification_fields(e.model, e.version, (*ids)[i]);
    fields.push_back({"mode", to_string(e.mode)});
    lines.push_back({LogLevel::info,
                     cycle + ": queued verification " + std::to_string((*ids)[i]) + " of " +
                         e.model + "@" + e.version + " (" + to_string(e.mode) + "): " + e.reason,
                     std::move(fields)});
  }
  for (const auto& w : plan->cadence_warnings)
    lines.push_back({LogLevel::warning, cycle + ": " + w.text, {{"model", w.model}}});
  return lines;
}

// A verdict as one log line: its level says how bad (failed:* a warning, error:* an error,
// uncalibrated a notice, passed info), the fields say which, and the explanation stays on the
// verification's page, linked, with its first line, whole, as the reason: never cut. A command
// the reason suggests is repeated in the message, where logfmt escapes nothing, so it runs as
// copied from the line (in reason= a path's quotes come escaped).
void log_verdict(const VerificationRow& row, const Config& config) {
  LogFields fields = verification_fields(row.model, row.version, row.id);
  LogLevel level = LogLevel::info;
  if (row.cls) {
    fields.push_back({"class", to_string(*row.cls)});
    level = is_failure(*row.cls)               ? LogLevel::warning
            : is_error(*row.cls)               ? LogLevel::error
            : *row.cls == VerdictClass::passed ? LogLevel::info
                                               : LogLevel::notice;
  }
  fields.push_back({"url", verification_page_url(config.pager.public_url, row.id)});
  const std::string explanation = redact(row.explanation, config.api.secrets);
  const std::string reason = explanation.substr(0, explanation.find('\n'));
  std::string message = "verification " + std::to_string(row.id) + " of " + row.model + "@" +
                        row.version + ": " + (row.cls ? to_string(*row.cls) : "no verdict");
  for (const auto& command : suggested_commands_in(reason))
    message += "; run `" + command + "`";
  fields.push_back({"reason", reason});
  log_line(level, message, fields);
}

// What a read-model build hands back to the loop.
struct Refreshed {
  Result<std::int64_t> data_version;
  Result<std::shared_ptr<const ReadModel>> model;
  std::vector<PlannedCalibration> calibrations;  // the cycle's, as planned now
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

}  // namespace

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
  check_store();
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
      start_verification(row, VerificationStart::reattach);
    for (const auto& row : left->orphaned)
      start_verification(row, VerificationStart::adopt);
    for (const auto& [row, owner] : left->owned) {
      log_info("verification " + std::to_string(row.id) + " of " + row.model + "@" + row.version +
                   " is a `reverify run` that still runs (" + owner +
                   "): left to it; reconciled here if it ends without a verdict",
               verification_fields(row.model, row.version, row.id));
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
  store_check_->cancel();
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
        std::mt19937_64 rng(seed);
        return start_cycle(store_, *config, period, now, rng);
      },
      [this, period](std::vector<PendingLine> lines) {
        planning_ = false;
        if (planned_period_ != period)
          calibrated_.clear();  // a new cycle: its calibrations are planned afresh
        planned_period_ = period;
        log_all(lines);
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
    start_verification(*next, VerificationStart::run);
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
          start_verification(row, VerificationStart::adopt);
      });
}

VerificationService::Progress DaemonImpl::show_stages() {
  // The first stage means the row is committed as running: show it. Where its job stands in its
  // runner's queue (kQueueStage) shows each time it changes.
  auto shown = std::make_shared<std::once_flag>();
  return [this, shown](std::string_view stage, std::string_view) {
    if (stage == kQueueStage)
      net::post(loop_, [this] { refresh(); });
    else
      std::call_once(*shown, [this] { net::post(loop_, [this] { refresh(); }); });
  };
}

void DaemonImpl::start_verification(const VerificationRow& row, VerificationStart how) {
  if (jobs_.count(row.id))
    return;
  started_.insert(row.id);
  LogFields fields = verification_fields(row.model, row.version, row.id);
  fields.push_back({"mode", to_string(row.mode)});
  fields.push_back({"trigger", to_string(row.trigger)});
  log_info(
      std::string(how == VerificationStart::run ? "starting" : "reconciling") + " verification " +
          std::to_string(row.id) + " of " + row.model + "@" + row.version + " (" +
          to_string(row.mode) + ")" +
          (how == VerificationStart::adopt ? ", left running by a `reverify run` that ended" : ""),
      fields);
  // The settings as the config says now; the thread keeps its own copy.
  auto settings = verification_settings(*config_, row.model);
  const std::string where = "the thread of verification " + std::to_string(row.id) + " (" +
                            row.model + "@" + row.version + ")";
  auto& job = jobs_[row.id];
  job.model = row.model;
  job.version = row.version;
  job.thread = std::thread([this, row, how, where, settings = std::move(settings),
                            state_dir = config_->state_dir, guard = net::make_work_guard(loop_)] {
    auto result = guarded(where, [&]() -> Result<std::optional<VerificationRow>> {
      switch (how) {
        case VerificationStart::run: {
          auto done = service_->execute(row.id, settings, show_stages());
          if (!done.ok())
            return done.error();
          return std::optional(*done);
        }
        case VerificationStart::reattach: {
          auto done = service_->recover(row, settings, show_stages());
          if (!done.ok())
            return done.error();
          return std::optional(*done);
        }
        case VerificationStart::adopt: {
          // The version's lock first: a `reverify run` of it that started since
          // reconciles the row itself (verify/state_dir.hpp).
          auto owned =
              StateLock::version(state_dir, row.model, row.version,
                                 "reverifyd, reconciling verification " + std::to_string(row.id),
                                 std::chrono::milliseconds(0));
          if (!owned.ok())
            return std::optional<VerificationRow>();
          auto now = store_.verification(row.id);
          if (!now.ok())
            return now.error();
          if (!*now || (*now)->state != VerificationState::running)
            return std::optional<VerificationRow>();  // it ended meanwhile
          auto done = service_->recover(**now, settings, show_stages());
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
  });
  refresh();
}

void DaemonImpl::on_verification_done(std::int64_t id,
                                      const Result<std::optional<VerificationRow>>& result) {
  LogFields fields = {{"verification", std::to_string(id)}};
  if (auto it = jobs_.find(id); it != jobs_.end()) {
    it->second.thread.join();  // it posted this as its last act
    fields = verification_fields(it->second.model, it->second.version, id);
    jobs_.erase(it);
  }
  if (!result.ok()) {
    log_error("verification " + std::to_string(id) + ": " + result.error().message, fields);
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
             fields);
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
        std::shared_ptr<const CyclePlan> shown;
        std::vector<PlannedCalibration> planned;
        if (plan.ok()) {
          // The loop's calibrations: the one running now, those done this cycle.
          plan->calibrating = calibrations.running;
          plan->calibrated = calibrations.done;
          planned = plan->calibrations;
          shown = std::make_shared<const CyclePlan>(std::move(plan).value());
        }
        return Refreshed{version,
                         build_read_model(store_, std::move(shown), now, api_config_of(config)),
                         std::move(planned)};
      },
      [this](Refreshed result) {
        refreshing_ = false;
        auto& [version, built, calibrations] = result;
        if (version.ok())
          data_version_ = *version;
        planned_calibrations_ = std::move(calibrations);
        store_used(StoreUse::read, built.ok() ? Status::success() : Status(built.error()));
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
            store_used(StoreUse::read, version.error());
          } else if (!data_version_ || *data_version_ != *version) {
            refresh();  // another process committed since the last build: show it now
          }
          watch_store();
        });
  });
}

void DaemonImpl::check_store() {
  if (draining_or_stopped())
    return;
  store_check_->arm(kStoreCheckInterval, [this] {
    off_loop(
        "checking the store", [this] { return store_.check_health(); },
        [this](Status checked) {
          store_used(StoreUse::check, checked);
          check_store();
        });
  });
}

void DaemonImpl::store_used(StoreUse use, const Status& outcome) {
  const bool was_failing = metrics_.store_fault().has_value();
  metrics_.store_used(use, outcome, clock_.now());
  const auto fault = metrics_.store_fault();
  if (fault && !was_failing) {
    log_error("the store is failing (/healthz answers 503 until it works again): " + fault->reason);
  } else if (!fault && was_failing) {
    log_info("the store works again");
  }
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
          if (id.error().code != ErrorCode::conflict) {
            log_error("manual trigger of " + key + ": " + id.error().message, fields);
            store_used(StoreUse::write, id.error());
          }
          return done(id.error());
        }
        store_used(StoreUse::write, Status::success());
        fields.push_back({"verification", std::to_string(*id)});
        fields.push_back({"mode", to_string(item.mode)});
        log_info("manual trigger of " + key + ": verification " + std::to_string(*id) +
                     " queued (" + to_string(item.mode) + ")",
                 fields);
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
