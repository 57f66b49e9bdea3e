#include "cli/capture_context.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "cli/capture_facts.hpp"
#include "cli/capture_release.hpp"
#include "core/manifest_parse.hpp"
#include "core/unix_time.hpp"
#include "verify/preflight.hpp"

namespace reverify::cli {

namespace fs = std::filesystem;

namespace {

// The environment the release ran in: its image, lockfile hash, Python and framework versions,
// accelerator, determinism variables and world size.
Result<Environment> capture_environment(const CaptureArguments& args, const fs::path& code) {
  Environment env;
  env.image = args.image;
  if (auto lockfile = args.lockfile) {
    auto digest = sha256_file(code / *lockfile);
    if (!digest.ok())
      return make_error(ErrorCode::io, "--lockfile: " + digest.error().message);
    env.lockfile = Lockfile{*lockfile, *digest};
  }
  const std::string& python = args.python;
  if (auto version = python_version(python); version.ok())
    env.python = *version;
  if (auto framework = args.framework) {
    auto version = module_version(python, *framework);
    if (!version.ok())
      return make_error(ErrorCode::invalid_argument,
                        "--framework " + *framework + ": " + version.error().message);
    env.framework = Framework{*framework, *version};
  }
  env.accelerator = read_accelerator();  // none on a machine without a GPU
  env.env = determinism_env();
  env.world_size = args.world_size;
  return env;
}

// --config's document (the manifest's config) and --seeds' (each seed an integer).
Status read_config_and_seeds(const CaptureArguments& args, Manifest& m) {
  if (auto config = args.config) {
    auto doc = read_json_file(*config);
    if (!doc.ok())
      return make_error(doc.error().code, "--config: " + doc.error().message);
    m.config = *doc;
  }
  if (auto seeds = args.seeds) {
    auto doc = read_json_file(*seeds);
    if (!doc.ok())
      return make_error(doc.error().code, "--seeds: " + doc.error().message);
    for (const auto& [name, value] : doc->items()) {
      if (!value.is_number_integer())
        return make_error(ErrorCode::invalid_argument,
                          "--seeds: \"" + name + "\" must be an integer");
      m.seeds[name] = value.get<std::int64_t>();
    }
  }
  return {};
}

}  // namespace

Result<Captured> capture_context(const CaptureArguments& args) {
  Captured c;
  Manifest& m = c.manifest;
  m.model = args.model;
  m.version = args.version;
  m.owner = args.owner;
  m.level = args.level;

  fs::path code = args.code;
  auto git = read_git_facts(code);
  if (!git.ok())
    return git.error();
  m.code.commit = git->commit;
  m.code.dirty = git->dirty;
  m.code.repo = args.repo ? args.repo : git->remote;
  if (!m.code.repo)
    m.code.repo = fs::absolute(code).lexically_normal().string();
  if (git->diff) {
    m.code.diff_sha256 = sha256_hex(*git->diff);
    c.diff = git->diff;
  }

  auto env = capture_environment(args, code);
  if (!env.ok())
    return env.error();
  m.environment = std::move(env).value();

  Data data;
  if (auto dir = args.data) {
    auto files = hash_directory(*dir);
    if (!files.ok())
      return make_error(files.error().code, "--data: " + files.error().message);
    data.snapshot = Snapshot{SnapshotKind::files, args.data_uri.value_or(file_uri(*dir)),
                             files->root, std::nullopt};
    c.snapshot = std::move(files).value();
  }
  if (auto rule = args.split_rule)
    data.split = Split{*rule, args.split_salt};
  if (data.snapshot || data.split)
    m.data = data;
  if (auto eval = args.eval) {
    auto digest = hash_input(*eval);
    if (!digest.ok())
      return make_error(digest.error().code, "--eval: " + digest.error().message);
    m.evaluation.set = FileRef{args.eval_uri.value_or(file_uri(*eval)), *digest};
  }
  if (Status read = read_config_and_seeds(args, m); !read.ok())
    return read.error();

  m.run.entrypoint = args.entrypoint;
  m.run.workdir = args.workdir;
  m.run.started_at = args.started_at.value_or(rfc3339(system_now()));
  if (args.duration_s)
    m.run.duration_s = *args.duration_s;
  m.run.runner = args.ci_runner.value_or(host_name());
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    const std::string_view text(epoch);
    std::int64_t seconds = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return make_error(ErrorCode::invalid_argument,
                        "SOURCE_DATE_EPOCH: expected whole seconds since 1970, got \"" +
                            std::string(text) + "\"");
    }
    m.run.source_date_epoch = seconds;
  }
  return c;
}

}  // namespace reverify::cli
