// DaemonImpl's reloads (daemon_impl.hpp): SIGHUP's config, and the pager dispatcher it installs.
#include "daemon/daemon_impl.hpp"
#include "settings/config_check.hpp"

namespace reverify {

namespace {

// What an accepted reload hands back to the loop: the config, and what --check-config would
// report about it (logged as warnings, as at start).
struct Reloaded {
  Result<Config> config;
  std::vector<ConfigProblem> problems;
};

}  // namespace

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
        const auto changed = changed_settings(*config_, *next);
        config_ = std::make_shared<const Config>(std::move(*next));
        if (syncing_)
          sources_stale_ = true;
        else
          rebuild_sources();
        install_dispatcher(config_);
        metrics_.add_sources(source_names(*config_));
        metrics_.config_reloaded(ReloadOutcome::applied, clock_.now());
        // Which settings changed, by name (a value is never logged: it may be a URL with a
        // secret in it).
        std::string names;
        for (const auto& name : changed)
          names += (names.empty() ? "" : ", ") + name;
        log_info(changed.empty() ? "SIGHUP: config reloaded: no setting changed"
                                 : "SIGHUP: config reloaded: " + std::to_string(changed.size()) +
                                       " setting(s) changed: " + names,
                 {{"changed", std::to_string(changed.size())}});
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

}  // namespace reverify
