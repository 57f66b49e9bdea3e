#include "verify/preflight.hpp"

#include <algorithm>
#include <system_error>

#include "core/hashing.hpp"
#include "core/program_output.hpp"
#include "core/uri.hpp"
#include "verify/pipeline.hpp"

namespace reverify {
namespace {

namespace fs = std::filesystem;

std::string short_hash(const std::string& hash) {
  return hash.substr(0, 12) + "…";
}

CheckResult input_check(std::string name, bool passed, std::string explanation,
                        nlohmann::json evidence) {
  CheckResult check;
  check.name = std::move(name);
  check.kind = CheckKind::input;
  check.outcome = passed ? CheckOutcome::passed : CheckOutcome::failed;
  check.explanation = std::move(explanation);
  check.evidence = std::move(evidence);
  return check;
}

// The local path of a manifest URI, or why there is none.
Result<fs::path> local_input(const std::string& location, const std::string& uri) {
  std::string resolved = resolve_uri(location, uri);
  if (is_remote_uri(resolved)) {
    return make_error(ErrorCode::invalid_argument, resolved + " is remote: not re-hashed here");
  }
  return local_path(resolved);
}

// Names the files that moved, from the file manifest recorded at capture time. That file is
// trusted only if its own root is the recorded root hash.
nlohmann::json moved_files(const std::string& location, const std::string& recorded_root,
                           const FileManifest& actual) {
  auto text = read_uri(resolve_uri(location, kSnapshotFileManifestName));
  if (!text.ok()) {
    return {{"unavailable", std::string(kSnapshotFileManifestName) +
                                " (the recorded file manifest) is not beside the manifest"}};
  }
  auto recorded = parse_file_manifest(*text);
  if (!recorded.ok() || recorded->root != recorded_root) {
    return {{"unavailable", std::string(kSnapshotFileManifestName) +
                                " does not match data.snapshot.sha256: not trusted"}};
  }
  FileManifestDiff diff = diff_file_manifests(*recorded, actual);
  return {{"changed", diff.changed}, {"added", diff.added}, {"removed", diff.removed}};
}

std::string describe_moves(const nlohmann::json& moved) {
  if (moved.contains("unavailable"))
    return "changed files unknown: " + moved["unavailable"].get<std::string>();
  std::string text;
  for (const char* kind : {"changed", "added", "removed"}) {
    for (const auto& name : moved[kind]) {
      text += (text.empty() ? "" : ", ") + name.get<std::string>() + " (" + kind + ")";
    }
  }
  return text;
}

void check_dataset(const Manifest& manifest, const std::string& location, PreflightReport& report) {
  if (!manifest.data || !manifest.data->snapshot) {
    report.unverified.push_back("data.snapshot: not recorded in the manifest");
    return;
  }
  const Snapshot& snapshot = *manifest.data->snapshot;
  auto path = local_input(location, snapshot.uri);
  std::error_code ec;
  if (snapshot.kind != SnapshotKind::files) {
    if (path.ok() && fs::exists(*path, ec))
      report.data_path = *path;
    report.unverified.push_back(std::string("data.snapshot: kind \"") + to_string(snapshot.kind) +
                                "\" is passed through to the job, not re-hashed");
    return;
  }
  if (!path.ok()) {
    report.unverified.push_back("data.snapshot.uri: " + path.error().message);
    return;
  }
  nlohmann::json evidence = {{"uri", snapshot.uri}, {"path", path->string()}};
  if (snapshot.sha256)
    evidence["recorded"] = *snapshot.sha256;
  if (!fs::is_directory(*path, ec)) {
    report.checks.push_back(input_check("input:dataset", false,
                                        "dataset snapshot " + path->string() + " no longer exists",
                                        evidence));
    return;
  }
  report.data_path = *path;
  auto actual = hash_directory(*path);
  if (!actual.ok()) {
    report.checks.push_back(
        input_check("input:dataset", false,
                    "dataset snapshot cannot be hashed: " + actual.error().message, evidence));
    return;
  }
  evidence["actual"] = actual->root;
  evidence["files"] = actual->files.size();
  evidence["bytes"] = actual->total_bytes;
  if (!snapshot.sha256) {
    report.unverified.push_back(
        "data.snapshot.sha256: not recorded, the dataset cannot be verified");
    report.evidence["dataset"] = evidence;
    return;
  }
  bool same = actual->root == *snapshot.sha256;
  std::string explanation = "dataset snapshot root " + short_hash(actual->root) +
                            " equals the recorded one (" + std::to_string(actual->files.size()) +
                            " files)";
  if (!same) {
    nlohmann::json moved = moved_files(location, *snapshot.sha256, *actual);
    evidence["moved"] = moved;
    explanation = "dataset snapshot changed since release: " + describe_moves(moved) + "; root " +
                  short_hash(actual->root) + ", recorded " + short_hash(*snapshot.sha256);
  }
  report.evidence["dataset"] = evidence;
  report.checks.push_back(input_check("input:dataset", same, std::move(explanation), evidence));
}

// A recorded file (eval set, reference predictions) must still hash to its recorded sha256.
void check_file(const std::string& name, const std::string& what, const std::optional<FileRef>& ref,
                const std::string& location, PreflightReport& report,
                std::optional<fs::path>* path_out) {
  if (!ref)
    return;
  auto path = local_input(location, ref->uri);
  if (!path.ok()) {
    report.unverified.push_back(what + ": " + path.error().message);
    return;
  }
  std::error_code ec;
  nlohmann::json evidence = {{"uri", ref->uri}, {"path", path->string()}};
  if (!fs::exists(*path, ec)) {
    report.checks.push_back(
        input_check(name, false, what + " " + path->string() + " no longer exists", evidence));
    return;
  }
  if (path_out)
    *path_out = *path;
  if (!ref->sha256) {
    report.unverified.push_back(what + ": no sha256 recorded");
    return;
  }
  evidence["recorded"] = *ref->sha256;
  auto actual = hash_input(*path);
  if (!actual.ok()) {
    report.checks.push_back(
        input_check(name, false, what + " cannot be hashed: " + actual.error().message, evidence));
    return;
  }
  evidence["actual"] = *actual;
  bool same = *actual == *ref->sha256;
  report.evidence[name.substr(name.find(':') + 1)] = evidence;
  report.checks.push_back(input_check(
      name, same,
      same ? what + " hash " + short_hash(*actual) + " equals the recorded one"
           : what + " " + path->filename().string() + " changed since release: sha256 " +
                 short_hash(*actual) + ", recorded " + short_hash(*ref->sha256),
      evidence));
}

// The lockfile is read from the recorded commit, when the code repository is a local one (a path,
// relative to the manifest as the checkout resolves it, or file://).
void check_lockfile(const Manifest& manifest, const std::string& manifest_location,
                    PreflightReport& report) {
  if (!manifest.environment || !manifest.environment->lockfile)
    return;
  const Lockfile& lockfile = *manifest.environment->lockfile;
  if (!lockfile.sha256) {
    report.unverified.push_back("environment.lockfile: no sha256 recorded");
    return;
  }
  const std::string repo =
      manifest.code.repo ? repo_location(*manifest.code.repo, manifest_location) : "";
  // code.repo as recorded, and where it resolved when that differs (a path relative to the
  // manifest): the notes and failures below name both.
  const std::string named = "code.repo " + manifest.code.repo.value_or("") +
                            (repo == manifest.code.repo.value_or("") ? "" : " (" + repo + ")");
  std::error_code ec;
  if (repo.empty() || repo[0] != '/' || !fs::exists(repo, ec)) {
    report.unverified.push_back("environment.lockfile: " +
                                (repo.empty()     ? std::string("no code.repo recorded")
                                 : repo[0] != '/' ? named + " is not a local repository"
                                                  : named + " does not exist on this machine") +
                                "; the lockfile is read by the runner's checkout only");
    return;
  }
  nlohmann::json evidence = {{"path", lockfile.path}, {"recorded", *lockfile.sha256}};
  // The repository itself, as `git clone` takes it (PATH/.git, else PATH when bare): git must not
  // walk up to a repository that holds the folder.
  const fs::path git_dir =
      fs::exists(fs::path(repo) / ".git", ec) ? fs::path(repo) / ".git" : fs::path(repo);
  const std::string git_dir_option = "--git-dir=" + git_dir.string();
  if (!command_output({"git", git_dir_option, "rev-parse", "--git-dir"}).ok()) {
    report.checks.push_back(input_check("input:lockfile", false,
                                        named + " is not a git repository: lockfile " +
                                            lockfile.path + " cannot be read at commit " +
                                            manifest.code.commit,
                                        evidence));
    return;
  }
  auto text =
      command_output({"git", git_dir_option, "show", manifest.code.commit + ":" + lockfile.path});
  if (!text.ok()) {
    report.checks.push_back(input_check(
        "input:lockfile", false,
        "lockfile " + lockfile.path + " is not readable at commit " + manifest.code.commit +
            " in " + named + " (the commit or the file is missing there)",
        evidence));
    return;
  }
  std::string actual = sha256_hex(*text);
  evidence["actual"] = actual;
  bool same = actual == *lockfile.sha256;
  report.evidence["lockfile"] = evidence;
  report.checks.push_back(input_check(
      "input:lockfile", same,
      same ? "lockfile " + lockfile.path + " hash equals the recorded one"
           : "lockfile " + lockfile.path + " at commit " + manifest.code.commit.substr(0, 12) +
                 " hashes to " + short_hash(actual) + ", recorded " + short_hash(*lockfile.sha256),
      evidence));
}

}  // namespace

Result<std::string> hash_input(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    auto manifest = hash_directory(path);
    if (!manifest.ok())
      return manifest.error();
    return manifest->root;
  }
  return sha256_file(path);
}

bool PreflightReport::drifted() const {
  return std::any_of(checks.begin(), checks.end(),
                     [](const CheckResult& c) { return c.outcome == CheckOutcome::failed; });
}

PreflightReport run_preflight(const Manifest& manifest, const std::string& manifest_location) {
  PreflightReport report;
  check_dataset(manifest, manifest_location, report);
  check_file("input:eval-set", "eval set", manifest.evaluation.set, manifest_location, report,
             &report.eval_path);
  check_file("input:reference-predictions", "released predictions", manifest.evaluation.predictions,
             manifest_location, report, nullptr);
  check_lockfile(manifest, manifest_location, report);
  report.evidence["unverified"] = report.unverified;
  return report;
}

}  // namespace reverify
