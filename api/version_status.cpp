#include "api/version_status.hpp"

#include "policies/headline.hpp"

namespace reverify {

GatePolicy gate_policy(const ReadModel& model) {
  if (!model.api)
    return {};
  return {model.api->gate_require_power, model.api->command_scope};
}

const VerdictBrief* conclusive_in(const VersionView& view, std::optional<RebuildMode> mode) {
  if (!mode)
    return view.conclusive ? &*view.conclusive : nullptr;
  auto it = view.conclusive_by_mode.find(*mode);
  return it == view.conclusive_by_mode.end() ? nullptr : &it->second;
}

GateFacts gate_facts(const VersionView& view, const GatePolicy& policy,
                     std::optional<RebuildMode> mode) {
  GateFacts facts;
  facts.require_power = policy.require_power;
  facts.command_scope = policy.command_scope;
  facts.model = view.row.model;
  facts.version = view.row.version;
  facts.listed = !view.row.removed;
  facts.manifest_error = view.row.manifest_error;
  facts.manifest_sha256 = view.row.manifest_sha256;
  facts.mode = mode;
  if (const auto* c = conclusive_in(view, mode))
    facts.conclusive = GateVerdict{c->id,
                                   c->cls,
                                   c->finished_at,
                                   summary_text(c->summary()),
                                   c->manifest_sha256,
                                   c->underpowered,
                                   c->runs_needed};
  if (view.active_id)
    facts.active = GateActive{*view.active_id, view.active_state};
  facts.at_release = view.at_release;
  return facts;
}

RecentIndex::RecentIndex(const ReadModel& model) {
  rows_.reserve(model.recent.size());
  for (const auto& row : model.recent)
    rows_.emplace(row.id, &row);
}

const VerificationRow* RecentIndex::find(std::int64_t id) const {
  auto it = rows_.find(id);
  return it == rows_.end() ? nullptr : it->second;
}

VersionStatus version_status(const VersionView& view, std::int64_t max_age_s, UnixSeconds now,
                             const GatePolicy& policy) {
  VersionStatus status;
  status.view = &view;
  status.gate = decide_gate(gate_facts(view, policy), max_age_s, now);
  const auto& latest = view.latest;
  const auto& conclusive = view.conclusive;
  if (latest && is_error(latest->cls) && (!conclusive || latest->id != conclusive->id))
    status.newer_error = &*latest;
  AttentionFacts facts;
  facts.gate = status.gate.status;
  facts.manifest_invalid = view.row.manifest_error.has_value();
  facts.latest_is_newer_error = status.newer_error != nullptr;
  if (conclusive) {
    facts.conclusive = conclusive->cls;
    facts.underpowered = conclusive->underpowered;
    if (conclusive->cls != VerdictClass::passed)
      status.headline = summary_text(conclusive->summary());
  }
  status.underpowered = facts.underpowered;
  status.attention = rank_attention(facts);
  return status;
}

}  // namespace reverify
