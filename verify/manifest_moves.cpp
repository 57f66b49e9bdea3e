#include "verify/manifest_moves.hpp"

#include "core/manifest_parse.hpp"
#include "core/text.hpp"
#include "policies/manifest_diff.hpp"

namespace reverify {

namespace {

Result<ManifestMoved> compare(const ManifestToCompare& change) {
  const auto verified = parse_manifest(change.verified_manifest_json);
  if (!verified.ok())
    return make_error(
        ErrorCode::parse,
        "the manifest verification " + std::to_string(change.verification_id) +
            " verified, as kept, does not parse: " + verified.errors.front().to_string());
  auto current = load_manifest(change.location);
  if (!current.ok())
    return current.error();
  if (!current->parse.ok())
    return make_error(ErrorCode::manifest_invalid,
                      change.location + ": " + current->parse.errors.front().to_string());
  if (current->sha256 != change.to_sha256)
    return make_error(ErrorCode::conflict, change.location + " changed again since the sync");
  const DiffSummary summary =
      summarize(diff_manifests(*verified.manifest, *current->parse.manifest));
  ManifestMoved moved{change.model,
                      change.version,
                      change.to_sha256,
                      change.from_sha256,
                      change.verification_id,
                      summary.inputs_moved,
                      {}};
  for (const auto& section : summary.sections)
    for (const auto& line : section.lines)
      moved.lines.push_back(line.path + ": " + line.text);
  if (!summary.relocated.empty())
    moved.lines.push_back(std::to_string(summary.relocated.size()) +
                          " location(s) spelt differently, same content (not a move)");
  return moved;
}

}  // namespace

std::vector<MoveLogLine> describe_manifest_moves(Store& store) {
  std::vector<MoveLogLine> log;
  auto changes = store.manifests_to_compare();
  if (!changes.ok())
    return {{true, "describing changed manifests: " + changes.error().message, "", "", 0}};
  for (const auto& change : *changes) {
    const std::string id = change.model + "@" + change.version;
    auto moved = compare(change);
    if (!moved.ok()) {
      log.push_back({true,
                     id + ": cannot say what moved in its manifest since verification " +
                         std::to_string(change.verification_id) + ": " + moved.error().message,
                     change.model, change.version, change.verification_id});
      continue;
    }
    if (auto put = store.put_manifest_moved(*moved); !put.ok()) {
      log.push_back({true, id + ": " + put.error().message, change.model, change.version,
                     change.verification_id});
      continue;
    }
    const std::string what = moved->inputs_moved.empty()
                                 ? "no input moved"
                                 : "inputs moved: " + joined(moved->inputs_moved);
    log.push_back({false,
                   id + ": the manifest changed since verification " +
                       std::to_string(change.verification_id) + ": " + what + "; " +
                       std::to_string(moved->lines.size()) + " line(s) on its page",
                   change.model, change.version, change.verification_id});
  }
  return log;
}

}  // namespace reverify
