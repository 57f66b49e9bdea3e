#pragma once
// The in-memory read model every HTTP request is served from (docs/design.md: "Reads are served
// from memory, never blocked by a running verification"): the store's state and the API's part of
// the config. Built from the store on a worker thread after each commit, then handed to the
// daemon's loop, which publishes it through one atomic shared_ptr; a request loads it once and
// holds the model it started with. Immutable once built, so any number of threads read it without a
// lock.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/unix_time.hpp"
#include "policies/gate.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/cycle_plan.hpp"

namespace reverify {

struct VersionView {
  ModelVersionRow row;
  std::optional<VerdictBrief> latest;                 // the latest verdict of any class
  std::optional<VerdictBrief> conclusive;             // the latest that is not error:*
  std::optional<VerdictBrief> passed;                 // the latest pass
  std::optional<VerdictBrief> decided;                // the latest passed or failed:*
  std::shared_ptr<const AttestationRow> attestation;  // decided's signed summary; null if none
  std::optional<std::int64_t> active_id;              // a queued or running verification
  VerificationState active_state = VerificationState::queued;  // when active_id is set
  // A new release queued (or waiting) to be verified at release: the plan's `at_release` entry.
  std::optional<GateQueued> at_release;
  // The latest conclusive verdict and the latest pass in each mode (the gate's `mode`; the pages'
  // last pass per mode).
  std::map<RebuildMode, VerdictBrief> conclusive_by_mode, passed_by_mode;
  // What moved in the current manifest since the manifest `conclusive` verified; set only while
  // that verdict is the latest conclusive one and the manifest is still the changed one.
  std::optional<ManifestMoved> manifest_moved;
};

struct VersionStatus;  // api/version_status.hpp

struct ReadModel {
  UnixSeconds built_at = 0;
  // True only for the placeholder reverifyd publishes before its first build from the store:
  // the API then answers 503 (Retry-After) instead of "unknown model version" for a version the
  // store does know.
  bool starting = false;
  std::shared_ptr<const ApiConfig> api;  // token, default max_age, secrets to redact
  // model -> version -> view
  std::map<std::string, std::map<std::string, VersionView>> models;
  // The most recent verifications, newest first, complete (log tail, verdict, evidence).
  std::vector<VerificationRow> recent;
  std::vector<VerificationRow> unfinished;  // queued or running, oldest first
  // Signed summaries by verification id: those of `recent` and each version's `decided`.
  std::map<std::int64_t, std::shared_ptr<const AttestationRow>> attestations;
  VerificationStats stats;
  DeliveryCounts deliveries;
  // Registry sources under a platform condition (a registry that moved as a whole): the status
  // page's banner, one per source.
  std::vector<SourceConditionRow> source_conditions;
  // The current cycle's plan as `reverify plan` shows it, with the daemon's calibrations; null
  // when it could not be made (the error is logged).
  std::shared_ptr<const CyclePlan> plan;
  std::string metrics_text;  // /metrics body, rendered once per model
  // Every listed version's standing (gate, attention), most urgent first, worked out at built_at
  // and true until standing_until (when the first fresh pass outgrows max_age): the HTML pages
  // use it while it holds instead of working out 100,000 versions per request.
  std::shared_ptr<const std::vector<VersionStatus>> standing;
  UnixSeconds standing_until = 0;

  const VersionView* find(const std::string& model, const std::string& version) const;
  const VerificationRow* find_verification(std::int64_t id) const;
};

inline constexpr std::size_t kRecentVerifications = 1000;

// Blocking (SQLite): call on a worker thread. `plan` and `api` are attached as they are.
Result<std::shared_ptr<const ReadModel>> build_read_model(Store& store,
                                                          std::shared_ptr<const CyclePlan> plan,
                                                          UnixSeconds now,
                                                          std::shared_ptr<const ApiConfig> api);

}  // namespace reverify
