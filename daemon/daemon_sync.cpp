// DaemonImpl's registry syncs (daemon_impl.hpp): the sources go to the pool with each sync and
// come back with its result.
#include "daemon/daemon_impl.hpp"
#include "verify/manifest_moves.hpp"
#include "verify/schedule.hpp"

namespace reverify {

namespace {

// What a registry sync hands back to the loop: the sources it borrowed, what to log, and
// whether each source's listing was stored.
struct SyncOutcome {
  std::vector<std::unique_ptr<RegistrySource>> sources;
  std::vector<PendingLine> log;
  std::vector<std::pair<std::string, bool>> listed;  // source name, listed and stored
};

// One source's listing, stored; what to log goes to `outcome`.
void sync_one(RegistrySource& source, Store& store, const Config& config, SyncOutcome& outcome) {
  auto& log = outcome.log;
  const std::string& name = source.name();
  const LogFields fields{{"source", name}};
  auto listing = source.list();
  if (!listing.ok()) {
    log.push_back({LogLevel::error, "source " + name + ": " + listing.error().message, fields});
    outcome.listed.emplace_back(name, false);
    return;
  }
  for (const auto& w : listing->warnings)
    log.push_back({LogLevel::warning, "source " + name + ": " + w, fields});
  if (listing->unchanged) {
    log.push_back(
        {LogLevel::debug, "source " + name + ": unchanged since the last listing", fields});
    outcome.listed.emplace_back(name, true);
    return;
  }
  std::set<std::string> owners;
  for (const auto& row : listing->rows) {
    if (!row.owner.empty())
      owners.insert(row.owner);
  }
  for (const auto& owner : owners) {
    if (config.pager.routes.empty())
      break;
    if (auto routed = check_owner_routed(config.pager, owner); !routed.ok())
      log.push_back({LogLevel::warning, "pager: " + routed.error().message, fields});
  }
  auto changed = store.sync_model_versions(name, listing->rows);
  // A listing that changed nothing is the sync's routine: debug, so info stays news.
  log.push_back(
      changed.ok() ? PendingLine{*changed > 0 ? LogLevel::info : LogLevel::debug,
                                 "source " + name + ": " + std::to_string(listing->rows.size()) +
                                     " version(s), " + std::to_string(*changed) + " new or changed",
                                 fields}
                   : PendingLine{LogLevel::error, "source " + name + ": " + changed.error().message,
                                 fields});
  outcome.listed.emplace_back(name, changed.ok());
}

// Blocking (the pool): lists every source, stores what changed, says what moved since the
// verified manifests and queues new releases. The sources keep their ETags between listings.
SyncOutcome sync_all(std::vector<std::unique_ptr<RegistrySource>> sources, Store& store,
                     const Config& config, UnixSeconds now) {
  SyncOutcome outcome{std::move(sources), {}, {}};
  auto& log = outcome.log;
  for (auto& source : outcome.sources)
    sync_one(*source, store, config, outcome);
  // A manifest that changed since its verdict: what moved, for the pages.
  for (auto& line : describe_manifest_moves(store)) {
    log.push_back({line.failed ? LogLevel::warning : LogLevel::info, std::move(line.text),
                   line.model.empty()
                       ? LogFields{}
                       : verification_fields(line.model, line.version, line.verification_id)});
  }
  // New releases are queued as soon as a sync sees them, on the at-release budget; one
  // the budget has no room for today is queued by a later sync (or the next cycle).
  auto queued = queue_releases(store, config, now);
  if (!queued.ok()) {
    log.push_back({LogLevel::error, "queueing new releases: " + queued.error().message, {}});
  } else {
    for (const auto& r : *queued) {
      LogFields fields = verification_fields(r.model, r.version, r.verification_id);
      fields.push_back({"mode", to_string(r.mode)});
      log.push_back({LogLevel::info,
                     "at release: queued verification " + std::to_string(r.verification_id) +
                         " of " + r.model + "@" + r.version + ": " + r.reason,
                     std::move(fields)});
    }
  }
  return outcome;
}

}  // namespace

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
      [this, config = config_, sources = std::move(sources_), now = clock_.now()]() mutable {
        return sync_all(std::move(sources), store_, *config, now);
      },
      [this](SyncOutcome outcome) {
        sources_ = std::move(outcome.sources);
        if (sources_stale_)
          rebuild_sources();  // a reload during the sync: the next sync uses the new sources
        log_all(outcome.log);
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

}  // namespace reverify
