#include "verify/source_hold.hpp"

#include <map>
#include <system_error>

#include "core/manifest_parse.hpp"
#include "core/unix_time.hpp"
#include "core/uri.hpp"
#include "pager/platform_alert.hpp"
#include "pager/router.hpp"
#include "policies/verdict.hpp"

namespace reverify {

namespace {

namespace fs = std::filesystem;

// Every other listed, valid version of `source`, probed; stops at the first one that still finds
// its inputs (the rule needs no more to say "not the whole source").
Result<std::vector<InputsFound>> probe_others(Store& store, const std::string& source,
                                              const VerificationRow& row) {
  auto versions = store.model_versions();
  if (!versions.ok())
    return versions.error();
  std::vector<InputsFound> found;
  for (const auto& v : *versions) {
    if (v.source != source || v.removed || v.manifest_error ||
        (v.model == row.model && v.version == row.version)) {
      continue;
    }
    found.push_back(probe_inputs(v.location));
    if (found.back() != InputsFound::some_missing)
      break;
  }
  return found;
}

// Input check name -> the path it resolved its input to (the check's evidence), for `failed_only`
// the failed checks only.
std::map<std::string, std::string> input_paths(const Verdict& verdict, bool failed_only) {
  std::map<std::string, std::string> paths;
  for (const auto& check : verdict.checks) {
    if (check.kind != CheckKind::input || (failed_only && check.outcome != CheckOutcome::failed))
      continue;
    if (check.evidence.is_object() && check.evidence.contains("path") &&
        check.evidence["path"].is_string())
      paths[check.name] = check.evidence["path"].get<std::string>();
  }
  return paths;
}

// Whether the verdict's missing inputs resolve to other paths than where the version's last
// conclusive verdict found them: its manifest's location changed (the registry moved).
bool inputs_relocated(Store& store, const VerificationRow& row, const Verdict& failed) {
  auto earlier = store.verifications(row.model, row.version, 50);
  if (!earlier.ok())
    return false;
  for (const auto& v : *earlier) {
    if (v.id == row.id || !v.cls || is_error(*v.cls) || !v.verdict)
      continue;
    const auto before = input_paths(*v.verdict, false);
    for (const auto& [name, path] : input_paths(failed, true)) {
      if (auto it = before.find(name); it != before.end() && it->second != path)
        return true;
    }
    return false;  // the latest conclusive one says
  }
  return false;
}

PageToRecord routed(const PagerConfig& pager, PageEvent event) {
  auto senders = route_page(pager, event);
  return {std::move(event), senders.ok() ? *senders : std::vector<std::string>{}};
}

PlatformAlertInput alert_input(const SourceConditionRow& condition, const PagerConfig& pager,
                               PageAction action, std::int64_t verification_id, UnixSeconds now) {
  return {condition.source,     condition.condition, action,
          pager.operator_owner, condition.versions,  condition.reason,
          pager.public_url,     verification_id,     rfc3339(now)};
}

}  // namespace

InputsFound probe_inputs(const std::string& manifest_location) {
  auto loaded = load_manifest(manifest_location);
  if (!loaded.ok() || !loaded->parse.ok())
    return InputsFound::not_checked;
  const Manifest& manifest = *loaded->parse.manifest;
  std::vector<std::string> uris;
  // Only a "files" snapshot is a path preflight checks; other kinds name tables or images.
  if (manifest.data && manifest.data->snapshot &&
      manifest.data->snapshot->kind == SnapshotKind::files)
    uris.push_back(manifest.data->snapshot->uri);
  for (const auto& ref : {manifest.evaluation.set, manifest.evaluation.predictions})
    if (ref)
      uris.push_back(ref->uri);
  bool checked = false;
  for (const auto& uri : uris) {
    const std::string resolved = resolve_uri(manifest_location, uri);
    auto path = is_remote_uri(resolved) ? Result<fs::path>(make_error(ErrorCode::io, "remote"))
                                        : local_path(resolved);
    if (!path.ok())
      continue;  // remote, or a scheme preflight refuses: not probed here
    std::error_code ec;
    if (!fs::exists(*path, ec))
      return InputsFound::some_missing;
    checked = true;
  }
  return checked ? InputsFound::all_present : InputsFound::not_checked;
}

std::optional<SourceHold> source_hold(Store& store, const VerificationRow& row,
                                      const VerificationOutcome& outcome,
                                      const PagerConfig& pager) {
  const InputDrift drift = outcome.input_drift;
  if (drift.missing == 0 || drift.changed > 0)
    return std::nullopt;  // the rule's first two answers, without reading anything
  auto version = store.model_version(row.model, row.version);
  if (!version.ok() || !*version)
    return std::nullopt;
  const std::string source = (*version)->source;
  auto open = store.source_condition(source);
  if (!open.ok())
    return std::nullopt;
  const UnixSeconds now = store.now();
  SourceConditionRow condition;
  if (*open) {
    condition = **open;
  } else {
    auto others = probe_others(store, source, row);
    if (!others.ok())
      return std::nullopt;
    const auto decision =
        decide_source_condition({drift, *others, inputs_relocated(store, row, outcome.verdict)});
    if (decision.condition == SourceCondition::none)
      return std::nullopt;
    condition = {source, decision.condition, now, std::int64_t(others->size() + 1),
                 row.id, decision.reason};
  }
  SourceHold hold;
  hold.verdict = verdict_for_error(
      VerdictClass::error_infra,
      "held as a platform condition, not the model's: registry source " + source + " (" +
          std::string(to_string(condition.condition)) + "): " + condition.reason +
          ". No owner is paged and the version keeps its last conclusive verdict; the operator "
          "is alerted once. What preflight found: " +
          outcome.verdict.explanation);
  hold.alert = routed(
      pager, build_platform_alert(alert_input(condition, pager, PageAction::trigger, row.id, now)));
  hold.no_page = "registry source " + source +
                 " moved as a whole (a platform condition): one operator alert, no owner page";
  hold.condition = std::move(condition);
  return hold;
}

Result<bool> clear_source_hold(Store& store, const VerificationRow& row, const PagerConfig& pager) {
  auto version = store.model_version(row.model, row.version);
  if (!version.ok())
    return version.error();
  if (!*version)
    return false;
  auto open = store.source_condition((*version)->source);
  if (!open.ok())
    return open.error();
  if (!*open)
    return false;
  auto resolve = routed(pager, build_platform_alert(alert_input(**open, pager, PageAction::resolve,
                                                                row.id, store.now())));
  return store.close_source_condition((*open)->source, row.id, resolve);
}

}  // namespace reverify
