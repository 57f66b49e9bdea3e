#include "cli/run_context.hpp"

#include <unistd.h>

#include <cstdlib>
#include <limits>
#include <system_error>

#include "core/manifest_parse.hpp"
#include "core/names.hpp"
#include "core/text.hpp"
#include "core/unix_time.hpp"
#include "policies/calibration.hpp"
#include "runners/runner_factory.hpp"
#include "verify/state_dir.hpp"
#include "verify/subsample_reference.hpp"

namespace reverify::cli {
namespace {

namespace fs = std::filesystem;

Result<fs::path> find_manifest(const RunArguments& args, const Config& config,
                               const ModelVersion& id) {
  if (auto manifest = args.manifest)
    return fs::absolute(*manifest);
  std::vector<fs::path> roots;
  if (auto registry = args.registry)
    roots.emplace_back(*registry);
  for (const auto& source : config.sources) {
    if (source.kind == SourceKind::directory)
      roots.push_back(source.root);
  }
  if (roots.empty()) {
    return make_error(ErrorCode::invalid_argument,
                      "no registry: give --registry DIR, --manifest FILE or a --config with a "
                      "directory source");
  }
  for (const auto& root : roots) {
    fs::path candidate = root / id.model / id.version / "manifest.json";
    std::error_code ec;
    if (fs::exists(candidate, ec))
      return fs::absolute(candidate);
  }
  return make_error(ErrorCode::not_found, id.id() + ": no manifest.json under " +
                                              roots[0].string() +
                                              (roots.size() > 1 ? " or the other registries" : ""));
}

// A "URL=PATH" item as URL and PATH, a relative PATH made absolute.
std::pair<std::string, std::string> mirror_pair(const std::string& item) {
  const std::size_t eq = item.find('=');
  std::string target = item.substr(eq + 1);
  std::error_code ec;
  if (target.find("://") == std::string::npos)
    target = fs::absolute(target, ec).string();
  return {item.substr(0, eq), target};
}

// "URL=PATH" items added to `mirrors`, over the config's.
void add_mirrors(const std::vector<std::string>& items, CodeMirrors& mirrors) {
  for (const auto& item : items) {
    auto [url, target] = mirror_pair(item);
    mirrors[url] = target;
  }
}

CLI::Validator mirror_item() {
  return CLI::Validator(
      [](std::string& item) -> std::string {
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
          return "must be URL=PATH, got \"" + item + "\"";
        return {};
      },
      "");
}

// VerdictPolicy::command_scope of this command: the --config, --registry, --manifest, --runner
// and --code-mirror it was given (paths made absolute), so a command its verdict suggests finds
// the same manifest, code, runner and state.
std::string command_scope(const RunArguments& args) {
  std::string scope;
  auto add = [&](const char* flag, const std::string& value) {
    scope += (scope.empty() ? "" : " ") + std::string(flag) + " " + shell_word(value);
  };
  std::error_code ec;
  if (args.config)
    add("--config", fs::absolute(*args.config, ec).string());
  if (args.registry)
    add("--registry", fs::absolute(*args.registry, ec).string());
  if (args.manifest)
    add("--manifest", fs::absolute(*args.manifest, ec).string());
  if (args.runner)
    add("--runner", to_string(*args.runner));
  for (const auto& item : args.code_mirrors) {
    const auto [url, target] = mirror_pair(item);
    add("--code-mirror", url + "=" + target);
  }
  return scope;
}

Status apply_options(const RunArguments& args, VerificationRequest& request) {
  request.mode = args.mode;
  if (args.max_steps)
    request.max_steps = *args.max_steps;
  if (request.mode == RebuildMode::steps && request.max_steps < 1) {
    return make_error(ErrorCode::invalid_argument, "--mode steps needs --max-steps N");
  }
  if (args.timeout) {
    auto seconds = parse_duration_s(*args.timeout);  // checked by duration() already
    if (!seconds.ok())
      return make_error(ErrorCode::invalid_argument, "--timeout: " + seconds.error().message);
    request.timeout = std::chrono::seconds(*seconds);
  }
  add_mirrors(args.code_mirrors, request.code_mirrors);
  return {};
}

Result<fs::path> make_temp_dir(RunContext& ctx, const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data()))
    return make_error(ErrorCode::io,
                      "cannot create a folder in " + fs::temp_directory_path().string());
  ctx.temp_dirs.emplace_back(pattern);
  return ctx.temp_dirs.back();
}

// A store in a temporary folder the context removes: nothing it records outlives the command.
Result<std::unique_ptr<Store>> throwaway_store(RunContext& ctx) {
  auto dir = make_temp_dir(ctx, "reverify-state");
  if (!dir.ok())
    return dir.error();
  return Store::open(*dir / "reverify.db", system_now);
}

}  // namespace

void add_run_arguments(CLI::App& app, RunArguments& args) {
  app.add_option("MODEL@VERSION", args.target, "the released model version")->required();
  add_rebuild_options(app, args);
  app.add_option("--manifest", args.manifest,
                 "the manifest file itself, instead of looking it up in a registry")
      ->type_name("FILE");
  add_enum_option(app, "--mode", args.mode,
                  "full: the whole training run; steps: its first --max-steps steps; subsample: "
                  "the whole run on the manifest's fixed subsample of the training data, judged "
                  "against its subsample reference");
  app.add_option("--max-steps", args.max_steps,
                 "steps mode: REVERIFY_MAX_STEPS for the job, in training steps; without it: the "
                 "config's models.<name>.max_steps (100 by default)")
      ->type_name("N")
      ->check(integer_in(1, std::numeric_limits<std::int32_t>::max()));
}

void add_rebuild_options(CLI::App& app, RunArguments& args) {
  app.add_option("--config", args.config,
                 "reverifyd's config file: its sources find the manifest, its state_dir records "
                 "the result (gate and a running reverifyd see it), its runner and pager apply; "
                 "without it: the process runner and a throwaway store")
      ->type_name("FILE");
  app.add_option("--registry", args.registry,
                 "a directory registry (<DIR>/<model>/<version>/manifest.json), searched before "
                 "the config's sources")
      ->type_name("DIR");
  add_enum_option(app, "--runner", args.runner,
                  "where the rebuild runs; without it: the config's runner.kind, else process");
  app.add_option("--timeout", args.timeout,
                 std::string("the whole rebuild's time limit, with unit ") + kDurationUnits +
                     " (e.g. 90m); then the job is killed (error:job); without it: the config's "
                     "models.<name>.timeout (6h by default)")
      ->type_name("DURATION")
      ->check(duration());
  app.add_option("--work-dir", args.work_dir,
                 "scratch folder for checkouts and job outputs; without it: the config's work "
                 "folder, else a temporary folder removed afterwards")
      ->type_name("DIR");
  app.add_option("--code-mirror", args.code_mirrors,
                 "fetch code.repo URLs starting with URL from PATH (a local folder or another "
                 "URL) instead; repeat it or separate pairs with commas")
      ->type_name("URL=PATH")
      ->delimiter(',')
      ->take_all()
      ->check(mirror_item());
}

Result<ReleaseManifest> load_release(const RunArguments& args, const Config& config,
                                     const std::string& target) {
  auto id = parse_model_version(target);
  if (!id.ok())
    return id.error();
  auto manifest_path = find_manifest(args, config, *id);
  if (!manifest_path.ok())
    return manifest_path.error();
  auto loaded = load_manifest(manifest_path->string());
  if (!loaded.ok())
    return loaded.error();
  if (!loaded->parse.ok()) {
    std::string message = manifest_path->string() + " is invalid:";
    for (const auto& error : loaded->parse.errors)
      message += "\n  " + error.to_string();
    return make_error(ErrorCode::manifest_invalid, message);
  }
  ReleaseManifest release{*loaded->parse.manifest, loaded->location};
  if (release.manifest.model != id->model || release.manifest.version != id->version) {
    return make_error(ErrorCode::manifest_invalid, manifest_path->string() + " describes " +
                                                       release.manifest.id() + ", not " + id->id());
  }
  return release;
}

RunContext::~RunContext() {
  store.reset();  // closed before its folder goes
  for (const auto& dir : temp_dirs) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
}

namespace {

// Swaps the context's store for a throwaway one holding a copy of the request's calibration:
// what the command does is not recorded in the config's state_dir (RunArguments::record).
Status use_throwaway_store(RunContext& ctx) {
  const VerificationRequest& request = ctx.request;
  auto store = throwaway_store(ctx);
  if (!store.ok())
    return store.error();
  if (request.calibration) {
    if (auto s = (*store)->put_calibration(
            request.manifest.model, request.manifest.version, *request.calibration,
            static_cast<int>(
                seed_run_count(*request.calibration, request.manifest.evaluation.primary.name)),
            CalibrationEnd::complete, {}, std::nullopt, calibrated_reference(request.mode));
        !s.ok())
      return s.error();
  }
  ctx.store = std::move(store).value();
  ctx.store_is_throwaway = true;
  return {};
}

}  // namespace

Result<RunContext> make_run_context(const RunArguments& args) {
  auto id = parse_model_version(args.target);
  if (!id.ok())
    return id.error();
  RunContext ctx;
  if (auto path = args.config) {
    auto config = load_config(*path);
    if (!config.ok())
      return config.error();
    ctx.config = std::move(config).value();
    // Refused where the state_dir shows history but its store is gone (verify/state_dir.hpp).
    auto store = open_state_store(ctx.config, system_now);
    if (!store.ok())
      return make_error(store.error().code, "state_dir: " + store.error().message);
    ctx.store = std::move(store).value();
  } else {
    auto store = throwaway_store(ctx);
    if (!store.ok())
      return store.error();
    ctx.store = std::move(store).value();
    ctx.store_is_throwaway = true;
  }
  if (args.runner)
    ctx.config.runner.kind = *args.runner;
  ctx.config.verdict.command_scope = command_scope(args);

  auto release = load_release(args, ctx.config, args.target);
  if (!release.ok())
    return release.error();
  VerificationRequest& request = ctx.request;
  request.manifest = std::move(release->manifest);
  request.manifest_location = std::move(release->location);
  const ModelPolicy& policy = ctx.config.model_policy(id->model);
  request.max_steps = policy.max_steps;
  request.detect = policy.detect;
  request.timeout = std::chrono::seconds(policy.timeout_s);
  request.network = policy.network == JobNetwork::allow;
  request.code_mirrors = ctx.config.code_mirrors;
  if (Status applied = apply_options(args, request); !applied.ok())
    return applied.error();

  auto stored = ctx.store->calibration(id->model, id->version, calibrated_reference(request.mode));
  if (!stored.ok())
    return stored.error();
  request.calibration = *stored;
  if (Status judged = judge_against_mode_reference(request); !judged.ok())
    return judged.error();
  if (!args.record && !ctx.store_is_throwaway) {
    if (Status swapped = use_throwaway_store(ctx); !swapped.ok())
      return swapped.error();
  }
  if (auto dir = args.work_dir) {
    request.work_root = *dir;
  } else if (args.config) {
    request.work_root = ctx.config.work_root();
  } else {
    auto dir = make_temp_dir(ctx, "reverify-run");
    if (!dir.ok())
      return dir.error();
    request.work_root = *dir;
  }
  // Unique among the runner's jobs while this process lives: two commands in the same second
  // must not share rebuild ids (labels, scratch links).
  request.verification_id = "cli-" + id->model + "-" + id->version + "-" +
                            std::to_string(system_now()) + "-" + std::to_string(::getpid());

  auto runner = make_runner(ctx.config.runner);
  if (!runner.ok())
    return runner.error();
  ctx.runner = std::move(runner).value();
  return ctx;
}

}  // namespace reverify::cli
