#include "cli/run_context.hpp"

#include <cstdlib>
#include <system_error>

#include "core/manifest_parse.hpp"
#include "core/names.hpp"
#include "core/unix_time.hpp"
#include "runners/runner_factory.hpp"

namespace reverify::cli {
namespace {

namespace fs = std::filesystem;

Result<fs::path> find_manifest(const Args& args, const Config& config, const ModelVersion& id) {
  if (auto manifest = args.option("manifest"))
    return fs::absolute(*manifest);
  std::vector<fs::path> roots;
  if (auto registry = args.option("registry"))
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

// "URL=PATH,URL=PATH" -> mirrors.
Result<std::map<std::string, std::string>> parse_mirrors(const std::string& text) {
  std::map<std::string, std::string> mirrors;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    std::string item =
        text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      return make_error(ErrorCode::invalid_argument,
                        "--code-mirror: expected URL=PATH[,URL=PATH...], got \"" + item + "\"");
    }
    std::string target = item.substr(eq + 1);
    std::error_code ec;
    if (target.find("://") == std::string::npos)
      target = fs::absolute(target, ec).string();
    mirrors[item.substr(0, eq)] = target;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return mirrors;
}

Status apply_options(const Args& args, VerificationRequest& request) {
  std::string mode = args.option("mode").value_or("full");
  if (mode != "full" && mode != "steps") {
    return make_error(ErrorCode::invalid_argument,
                      "--mode: expected full or steps, got \"" + mode + "\"");
  }
  request.mode = mode == "steps" ? RebuildMode::steps : RebuildMode::full;
  if (auto steps = args.option("max-steps")) {
    char* end = nullptr;
    request.max_steps = std::strtoll(steps->c_str(), &end, 10);
    if (end == steps->c_str() || *end != '\0' || request.max_steps < 1) {
      return make_error(ErrorCode::invalid_argument, "--max-steps: expected a positive integer");
    }
  }
  if (request.mode == RebuildMode::steps && request.max_steps < 1) {
    return make_error(ErrorCode::invalid_argument, "--mode steps needs --max-steps N");
  }
  if (auto timeout = args.option("timeout")) {
    auto seconds = parse_duration_s(*timeout);
    if (!seconds.ok())
      return make_error(ErrorCode::invalid_argument, "--timeout: " + seconds.error().message);
    request.timeout = std::chrono::seconds(*seconds);
  }
  if (auto mirrors = args.option("code-mirror")) {
    auto parsed = parse_mirrors(*mirrors);
    if (!parsed.ok())
      return parsed.error();
    request.code_mirrors = std::move(parsed).value();
  }
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

}  // namespace

std::vector<std::string> run_context_options() {
  return {"config",    "registry", "manifest", "runner",     "mode",
          "max-steps", "timeout",  "work-dir", "code-mirror"};
}

RunContext::~RunContext() {
  store.reset();  // closed before its folder goes
  for (const auto& dir : temp_dirs) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
}

Result<RunContext> make_run_context(const Args& args) {
  if (args.positionals().size() != 1) {
    return make_error(ErrorCode::invalid_argument, "expected exactly one MODEL@VERSION");
  }
  auto id = parse_model_version(args.positionals()[0]);
  if (!id.ok())
    return id.error();
  RunContext ctx;
  if (auto path = args.option("config")) {
    auto config = load_config(*path);
    if (!config.ok())
      return config.error();
    ctx.config = std::move(config).value();
    auto store = Store::open(ctx.config.db_path(), system_now);
    if (!store.ok())
      return make_error(store.error().code, "state_dir: " + store.error().message);
    ctx.store = std::move(store).value();
  } else {
    auto dir = make_temp_dir(ctx, "reverify-state");
    if (!dir.ok())
      return dir.error();
    auto store = Store::open(*dir / "reverify.db", system_now);
    if (!store.ok())
      return store.error();
    ctx.store = std::move(store).value();
    ctx.store_is_throwaway = true;
  }
  if (auto kind = args.option("runner"))
    ctx.config.runner.kind = *kind;

  auto manifest_path = find_manifest(args, ctx.config, *id);
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
  VerificationRequest& request = ctx.request;
  request.manifest = *loaded->parse.manifest;
  request.manifest_location = loaded->location;
  if (request.manifest.model != id->model || request.manifest.version != id->version) {
    return make_error(ErrorCode::manifest_invalid, manifest_path->string() + " describes " +
                                                       request.manifest.id() + ", not " + id->id());
  }
  const ModelPolicy& policy = ctx.config.model_policy(id->model);
  request.max_steps = policy.max_steps;
  request.timeout = std::chrono::seconds(policy.timeout_s);
  if (Status applied = apply_options(args, request); !applied.ok())
    return applied.error();

  auto stored = ctx.store->calibration(id->model, id->version);
  if (!stored.ok())
    return stored.error();
  request.calibration = *stored;
  if (auto dir = args.option("work-dir")) {
    request.work_root = *dir;
  } else if (args.option("config")) {
    request.work_root = ctx.config.work_root();
  } else {
    auto dir = make_temp_dir(ctx, "reverify-run");
    if (!dir.ok())
      return dir.error();
    request.work_root = *dir;
  }
  request.verification_id =
      "cli-" + id->model + "-" + id->version + "-" + std::to_string(system_now());

  auto runner = make_runner(ctx.config.runner);
  if (!runner.ok())
    return runner.error();
  ctx.runner = std::move(runner).value();
  return ctx;
}

}  // namespace reverify::cli
