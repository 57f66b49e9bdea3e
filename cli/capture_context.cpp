#include "cli/capture_context.hpp"

#include <cstdlib>

#include "cli/capture_facts.hpp"
#include "cli/capture_release.hpp"
#include "core/manifest_parse.hpp"
#include "core/unix_time.hpp"
#include "verify/preflight.hpp"

namespace reverify::cli {

namespace fs = std::filesystem;

Result<Captured> capture_context(const CaptureArguments& args) {
  Captured c;
  Manifest& m = c.manifest;
  m.model = args.model;
  m.version = args.version;
  m.owner = args.owner;
  m.level = *enum_from_string<ReproLevel>(args.level);  // checked by one_of()

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
  m.environment = env;

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

  m.run.entrypoint = args.entrypoint;
  m.run.workdir = args.workdir;
  m.run.started_at = args.started_at.value_or(rfc3339(system_now()));
  if (args.duration_s)
    m.run.duration_s = *args.duration_s;
  m.run.runner = args.ci_runner.value_or(host_name());
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"))
    m.run.source_date_epoch = std::stoll(epoch);
  return c;
}

}  // namespace reverify::cli
