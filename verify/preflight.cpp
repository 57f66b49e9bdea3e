#include "verify/preflight.hpp"

#include <algorithm>
#include <system_error>

#include "core/hashing.hpp"
#include "core/manifest_parse.hpp"
#include "core/program_output.hpp"
#include "core/uri.hpp"
#include "policies/verdict.hpp"
#include "verify/pipeline.hpp"
#include "verify/remote_inputs.hpp"

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

// The verification stops before any job; the first reason given stands.
void refuse(PreflightReport& report, VerdictClass cls, std::string message) {
  if (!report.refusal)
    report.refusal = verdict_for_error(cls, std::move(message) + "; no job was started");
}

// A remote input that could not be fetched and checked (verify/remote_inputs.hpp): drift is an
// input check that fails; anything else stops the verification, naming `field`.
void remote_failure(PreflightReport& report, const std::string& check, const std::string& field,
                    const Error& error, nlohmann::json evidence) {
  if (error.code == ErrorCode::input_drift) {
    report.checks.push_back(
        input_check(check, false, field + ": " + error.message, std::move(evidence)));
    return;
  }
  refuse(report,
         error.code == ErrorCode::manifest_invalid ? VerdictClass::error_manifest_invalid
                                                   : VerdictClass::error_provision,
         field + ": " + error.message);
}

// The local path of a manifest URI resolved against its location: a local path or file:// URI.
// Another scheme is refused, naming the field: reverify could not check the input.
std::optional<fs::path> local_input(const std::string& resolved, const std::string& field,
                                    PreflightReport& report) {
  auto path = local_path(resolved);
  if (!path.ok()) {
    refuse(report, VerdictClass::error_manifest_invalid,
           field + ": " + path.error().message +
               " (reverify checks inputs at a local path, file:// or http(s)://)");
    return std::nullopt;
  }
  return *path;
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

// A "files" snapshot at an http(s) URI: its file manifest, then each file, fetched into `into`
// and checked against the recorded root (verify/remote_inputs.hpp); the job gets that copy.
void check_remote_dataset(const Snapshot& snapshot, const std::string& url, const fs::path& into,
                          PreflightReport& report) {
  nlohmann::json evidence = {{"uri", snapshot.uri}, {"url", url}, {"path", into.string()}};
  evidence["recorded"] = snapshot.sha256.value_or("");
  auto fetched = fetch_file_snapshot(url, snapshot.sha256.value_or(""), into);
  if (!fetched) {
    remote_failure(report, "input:dataset", "data.snapshot.uri", fetched.error(), evidence);
    report.evidence["dataset"] = evidence;
    return;
  }
  report.data_path = fetched->folder;
  evidence["actual"] = fetched->listing.root;
  evidence["files"] = fetched->listing.files.size();
  evidence["bytes"] = fetched->listing.total_bytes;
  report.evidence["dataset"] = evidence;
  report.checks.push_back(input_check("input:dataset", true,
                                      "dataset snapshot root " + short_hash(fetched->listing.root) +
                                          " equals the recorded one (" +
                                          std::to_string(fetched->listing.files.size()) +
                                          " files fetched from " + url + ", each hashed)",
                                      evidence));
}

void check_dataset(const Manifest& manifest, const std::string& location, const fs::path& fetch_dir,
                   PreflightReport& report) {
  if (!manifest.data || !manifest.data->snapshot) {
    report.unverified.push_back("data.snapshot: not recorded in the manifest");
    return;
  }
  const Snapshot& snapshot = *manifest.data->snapshot;
  const std::string resolved = resolve_uri(location, snapshot.uri);
  std::error_code ec;
  if (snapshot.kind != SnapshotKind::files) {
    auto path = local_path(resolved);
    if (path.ok() && fs::exists(*path, ec))
      report.data_path = *path;
    report.unverified.push_back(std::string("data.snapshot: kind \"") + to_string(snapshot.kind) +
                                "\" is passed through to the job, not re-hashed");
    return;
  }
  if (is_remote_uri(resolved)) {
    check_remote_dataset(snapshot, resolved, fetch_dir / "data", report);
    return;
  }
  auto path = local_input(resolved, "data.snapshot.uri", report);
  if (!path)
    return;
  nlohmann::json evidence = {{"uri", snapshot.uri}, {"path", path->string()}};
  if (snapshot.sha256)
    evidence["recorded"] = *snapshot.sha256;
  if (!fs::is_directory(*path, ec)) {
    report.missing.push_back("input:dataset");
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

// A recorded file (eval set, reference predictions) must still hash to its recorded sha256; one
// at an http(s) URI is fetched into `fetch_dir` first. `field` names it ("evaluation.set").
void check_file(const std::string& name, const std::string& what, const std::string& field,
                const std::optional<FileRef>& ref, const std::string& location,
                const fs::path& fetch_dir, PreflightReport& report,
                std::optional<fs::path>* path_out) {
  if (!ref)
    return;
  const std::string resolved = resolve_uri(location, ref->uri);
  nlohmann::json evidence = {{"uri", ref->uri}};
  std::optional<fs::path> path;
  if (is_remote_uri(resolved)) {
    evidence["url"] = resolved;
    auto fetched = fetch_remote_file(resolved, fetch_dir);
    if (!fetched) {
      remote_failure(report, name, field + ".uri", fetched.error(), evidence);
      return;
    }
    path = *fetched;
  } else {
    path = local_input(resolved, field + ".uri", report);
  }
  if (!path)
    return;
  std::error_code ec;
  evidence["path"] = path->string();
  if (!fs::exists(*path, ec)) {
    // A fetched copy that is not there is the fetch's failure, named above: only a local one.
    if (!is_remote_uri(resolved))
      report.missing.push_back(name);
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

// The released weights at an http(s) URI, where the verification compares weights (level
// bitwise with a recorded tensor hash): fetched into `fetch_dir` and their tensor hash checked
// against weights.tensor_sha256, so that the tensors a rebuild differs in are named from a copy
// somebody checked. Elsewhere nothing reads them: recorded as not fetched. A URI that is neither a
// local path nor http(s) cannot be checked: a refusal naming weights.uri.
void check_weights(const Manifest& manifest, const std::string& location, const fs::path& fetch_dir,
                   PreflightReport& report) {
  if (!manifest.weights)
    return;
  const Weights& weights = *manifest.weights;
  const std::string resolved = resolve_uri(location, weights.uri);
  const bool compared = manifest.level == ReproLevel::bitwise && weights.tensor_sha256;
  if (!is_remote_uri(resolved)) {
    if (compared)
      local_input(resolved, "weights.uri", report);
    return;
  }
  if (!compared) {
    report.unverified.push_back("weights.uri: " + resolved +
                                " not fetched: no check at this level reads the released weights");
    return;
  }
  nlohmann::json evidence = {{"uri", weights.uri}, {"url", resolved}};
  auto fetched = fetch_remote_file(resolved, fetch_dir);
  if (!fetched) {
    remote_failure(report, "input:weights", "weights.uri", fetched.error(), evidence);
    return;
  }
  evidence["path"] = fetched->string();
  evidence["recorded"] = *weights.tensor_sha256;
  auto tensors = hash_safetensors(*fetched);
  if (!tensors.ok()) {
    report.checks.push_back(input_check(
        "input:weights", false,
        "released weights " + resolved + " cannot be hashed: " + tensors.error().message,
        evidence));
    return;
  }
  evidence["actual"] = tensors->root;
  const bool same = tensors->root == *weights.tensor_sha256;
  report.evidence["weights"] = evidence;
  report.checks.push_back(input_check(
      "input:weights", same,
      same ? "released weights tensor hash " + short_hash(tensors->root) +
                 " equals the recorded one (fetched from " + resolved + ")"
           : "released weights " + resolved + " changed since release: tensor hash " +
                 short_hash(tensors->root) + ", recorded " + short_hash(*weights.tensor_sha256),
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

InputDrift PreflightReport::drift() const {
  InputDrift drift;
  for (const auto& check : checks) {
    if (check.outcome != CheckOutcome::failed)
      continue;
    const bool absent = std::find(missing.begin(), missing.end(), check.name) != missing.end();
    ++(absent ? drift.missing : drift.changed);
  }
  return drift;
}

PreflightReport run_preflight(const Manifest& manifest, const std::string& manifest_location,
                              const fs::path& fetch_dir) {
  PreflightReport report;
  if (const auto paths = path_containment_errors(manifest); !paths.empty()) {
    refuse(report, VerdictClass::error_manifest_invalid, paths.front().to_string());
    return report;
  }
  check_dataset(manifest, manifest_location, fetch_dir, report);
  if (!report.refusal) {
    check_file("input:eval-set", "eval set", "evaluation.set", manifest.evaluation.set,
               manifest_location, fetch_dir / "eval", report, &report.eval_path);
  }
  std::optional<fs::path> predictions;
  if (!report.refusal) {
    check_file("input:reference-predictions", "released predictions", "evaluation.predictions",
               manifest.evaluation.predictions, manifest_location, fetch_dir / "predictions",
               report, &predictions);
  }
  // Read whole before any job: a release whose predictions cannot be read cannot be judged.
  if (predictions && !report.refusal && !report.drifted()) {
    if (auto read = read_released_predictions(manifest, manifest_location, fetch_dir); !read.ok())
      refuse(report, VerdictClass::error_manifest_invalid, read.error().message);
  }
  if (!report.refusal)
    check_weights(manifest, manifest_location, fetch_dir / "weights", report);
  if (!report.refusal)
    check_lockfile(manifest, manifest_location, report);
  report.evidence["unverified"] = report.unverified;
  return report;
}

Result<std::optional<Predictions>> read_released_predictions(const Manifest& manifest,
                                                             const std::string& manifest_location,
                                                             const fs::path& fetch_dir) {
  const auto& ref = manifest.evaluation.predictions;
  if (!ref)
    return std::optional<Predictions>();
  const std::string resolved = resolve_uri(manifest_location, ref->uri);
  auto path = is_remote_uri(resolved)
                  ? Result<fs::path>(fetched_file_path(resolved, fetch_dir / "predictions"))
                  : local_path(resolved);
  auto read = path.ok() ? read_predictions(*path) : Result<Predictions>(path.error());
  if (!read.ok()) {
    return make_error(ErrorCode::manifest_invalid,
                      "evaluation.predictions: the released predictions " + ref->uri +
                          " cannot be read whole, so the checks on predictions the release "
                          "defines cannot be computed: " +
                          read.error().message);
  }
  return std::optional<Predictions>(std::move(read).value());
}

std::optional<fs::path> released_weights(const Manifest& manifest,
                                         const std::string& manifest_location,
                                         const fs::path& fetch_dir) {
  if (!manifest.weights)
    return std::nullopt;
  const std::string resolved = resolve_uri(manifest_location, manifest.weights->uri);
  auto path = is_remote_uri(resolved)
                  ? Result<fs::path>(fetched_file_path(resolved, fetch_dir / "weights"))
                  : local_path(resolved);
  std::error_code ec;
  if (!path.ok() || !fs::exists(*path, ec))
    return std::nullopt;
  return *path;
}

}  // namespace reverify
