#pragma once
// A failed:input-drift verdict whose whole registry source moved is held as a platform condition
// (policies/source_condition.hpp decides; docs/operating.md "When a registry moves"): instead of
// the owner's failed verdict the verification records error:infra, which the gate never counts
// (the version keeps its last conclusive standing), pages no owner, and the source's condition is
// opened with ONE operator alert (pager/platform_alert.hpp). The first verification of the source
// that finds its inputs again closes it, with the alert's resolve.
// Called by VerificationService::finish. Blocking: reads manifests, stats files, SQLite.

#include <optional>
#include <string>

#include "pager/pager_config.hpp"
#include "policies/source_condition.hpp"
#include "store/store.hpp"
#include "verify/pipeline.hpp"

namespace reverify {

// How the local inputs a manifest records (its dataset snapshot, eval set and released
// predictions) stand where it resolves them now: a presence check, no hashing.
InputsFound probe_inputs(const std::string& manifest_location);

// What the verification records instead of the owner's failed verdict.
struct SourceHold {
  Verdict verdict;               // error:infra, saying what happened and what preflight found
  SourceConditionRow condition;  // opened with `alert` unless it is open already
  PageToRecord alert;            // the one operator alert (trigger)
  std::string no_page;           // why the verdict pages no owner (its evidence says so)
};

// For a verification whose preflight failed (`outcome.input_drift`): the hold, when its source
// moved as a whole. While the source's condition is open, a verdict that only misses inputs is
// held without probing again (a verification that found its inputs would have closed it).
// nullopt when the rule finds no condition, or when the store cannot say: fail closed, the owner
// is paged as before.
std::optional<SourceHold> source_hold(Store& store, const VerificationRow& row,
                                      const VerificationOutcome& outcome, const PagerConfig& pager);

// After a verdict that found the version's inputs (passed, failed:*, uncalibrated; not held):
// closes its source's condition, if one is open, recording the alert's resolve. Returns whether
// one was closed.
Result<bool> clear_source_hold(Store& store, const VerificationRow& row, const PagerConfig& pager);

}  // namespace reverify
