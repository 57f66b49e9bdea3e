#include "api/snapshot.hpp"

#include "api/metrics.hpp"
#include "api/page_parts.hpp"

namespace reverify {

const VersionView* ReadModel::find(const std::string& model, const std::string& version) const {
  auto m = models.find(model);
  if (m == models.end())
    return nullptr;
  auto v = m->second.find(version);
  return v == m->second.end() ? nullptr : &v->second;
}

const VerificationRow* ReadModel::find_verification(std::int64_t id) const {
  for (const auto& row : recent) {
    if (row.id == id)
      return &row;
  }
  return nullptr;
}

namespace {

VersionView* view_of(ReadModel& model, const std::string& name, const std::string& version) {
  auto m = model.models.find(name);
  if (m == model.models.end())
    return nullptr;
  auto v = m->second.find(version);
  return v == m->second.end() ? nullptr : &v->second;
}

// The signed summaries of the recent verifications and of each version's latest decided one.
Status attach_attestations(Store& store, ReadModel& model) {
  std::vector<std::int64_t> ids;
  for (const auto& row : model.recent)
    ids.push_back(row.id);
  for (const auto& [name, versions] : model.models) {
    for (const auto& [version, view] : versions) {
      if (view.decided)
        ids.push_back(view.decided->id);
    }
  }
  auto rows = store.attestations(ids);
  if (!rows.ok())
    return rows.error();
  for (auto& row : *rows) {
    const auto id = row.verification_id;
    model.attestations[id] = std::make_shared<const AttestationRow>(std::move(row));
  }
  for (auto& [name, versions] : model.models) {
    for (auto& [version, view] : versions) {
      if (!view.decided)
        continue;
      auto it = model.attestations.find(view.decided->id);
      if (it != model.attestations.end())
        view.attestation = it->second;
    }
  }
  return Status::success();
}

}  // namespace

Result<std::shared_ptr<const ReadModel>> build_read_model(Store& store,
                                                          std::shared_ptr<const CyclePlan> plan,
                                                          UnixSeconds now,
                                                          std::shared_ptr<const ApiConfig> api) {
  auto model = std::make_shared<ReadModel>();
  model->built_at = now;
  model->api = std::move(api);
  model->plan = std::move(plan);
  auto rows = store.model_versions();
  if (!rows.ok())
    return rows.error();
  for (auto& row : *rows) {
    auto& view = model->models[row.model][row.version];
    view.row = std::move(row);
  }
  const std::pair<VerdictFilter, std::optional<VerdictBrief> VersionView::*> slots[] = {
      {VerdictFilter::any, &VersionView::latest},
      {VerdictFilter::conclusive, &VersionView::conclusive},
      {VerdictFilter::passed, &VersionView::passed},
      {VerdictFilter::decided, &VersionView::decided},
  };
  for (auto [filter, slot] : slots) {
    auto briefs = store.latest_verdicts(filter);
    if (!briefs.ok())
      return briefs.error();
    for (auto& brief : *briefs) {
      auto m = model->models.find(brief.model);
      if (m == model->models.end())
        continue;
      auto v = m->second.find(brief.version);
      if (v != m->second.end())
        v->second.*slot = std::move(brief);
    }
  }
  const std::pair<VerdictFilter, std::map<RebuildMode, VerdictBrief> VersionView::*> by_mode[] = {
      {VerdictFilter::conclusive, &VersionView::conclusive_by_mode},
      {VerdictFilter::passed, &VersionView::passed_by_mode},
  };
  for (auto [filter, slot] : by_mode) {
    auto briefs = store.latest_verdicts(filter, /*per_mode=*/true);
    if (!briefs.ok())
      return briefs.error();
    for (auto& brief : *briefs) {
      if (auto* view = view_of(*model, brief.model, brief.version))
        (view->*slot)[brief.mode] = std::move(brief);
    }
  }
  auto moves = store.manifests_moved();
  if (!moves.ok())
    return moves.error();
  for (auto& moved : *moves) {
    auto* view = view_of(*model, moved.model, moved.version);
    if (view && view->conclusive && view->conclusive->id == moved.verification_id &&
        view->conclusive->manifest_sha256 == moved.from_sha256)
      view->manifest_moved = std::move(moved);
  }
  auto active = store.unfinished();
  if (!active.ok())
    return active.error();
  for (const auto& row : *active) {
    auto m = model->models.find(row.model);
    if (m == model->models.end())
      continue;
    auto v = m->second.find(row.version);
    if (v == m->second.end() || v->second.active_id)
      continue;
    v->second.active_id = row.id;
    v->second.active_state = row.state;
  }
  model->unfinished = std::move(*active);
  // The plan's new releases, for the gate ("queued" with when, instead of "never verified").
  if (model->plan) {
    for (const auto& r : model->plan->at_release) {
      if (auto* view = view_of(*model, r.model, r.version))
        view->at_release = GateQueued{model->plan->expected_at(r), r.reason};
    }
  }
  auto recent = store.verifications("", "", kRecentVerifications);
  if (!recent.ok())
    return recent.error();
  model->recent = std::move(*recent);
  if (auto s = attach_attestations(store, *model); !s.ok())
    return s.error();
  auto stats = store.verification_stats();
  if (!stats.ok())
    return stats.error();
  model->stats = std::move(*stats);
  auto deliveries = store.delivery_counts();
  if (!deliveries.ok())
    return deliveries.error();
  model->deliveries = *deliveries;
  auto conditions = store.source_conditions();
  if (!conditions.ok())
    return conditions.error();
  model->source_conditions = std::move(*conditions);
  model->metrics_text = render_metrics(*model);
  attach_standing(*model, now);
  return std::shared_ptr<const ReadModel>(std::move(model));
}

}  // namespace reverify
