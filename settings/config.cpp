#include "settings/config.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "core/names.hpp"
#include "core/suggested_command.hpp"
#include "policies/cron.hpp"
#include "runners/job_log.hpp"
#include "settings/pager_section.hpp"
#include "settings/slurm_section.hpp"
#include "settings/yaml_duplicates.hpp"
#include "settings/yaml_section.hpp"

namespace reverify {

const ModelPolicy& Config::model_policy(const std::string& model) const {
  auto it = models.find(model);
  return it == models.end() ? model_defaults : it->second;
}

namespace {

// Where the secret named by `key` was read from ("" when the key is not set), for the permission
// check of --check-config.
std::filesystem::path secret_file_path(Section& s, const std::string& key,
                                       const std::filesystem::path& base) {
  std::string file;
  s.read(key, file);
  return file.empty() ? std::filesystem::path() : base / file;
}

void read_api(Section s, const std::filesystem::path& base, ApiConfig& api) {
  s.read("address", api.address);
  int port = api.port;
  s.read("port", port);
  if (port < 1 || port > 65535)
    s.fail(s.child_path("port"), "must be 1..65535");
  api.port = std::uint16_t(port);
  s.read_secret_file("token_file", base, SecretForm::bearer_token, api.token);
  api.token_file = secret_file_path(s, "token_file", base);
  s.read("max_header_bytes", api.max_header_bytes);
  s.read("max_body_bytes", api.max_body_bytes);
  std::int64_t timeout_s = api.request_timeout_ms / 1000;
  s.read_duration("request_timeout", timeout_s);
  api.request_timeout_ms = timeout_s * 1000;
  s.read_duration("default_max_age", api.default_max_age_s);
  s.at_least<std::size_t>("max_header_bytes", api.max_header_bytes, 1024);
  s.at_least<std::size_t>("max_body_bytes", api.max_body_bytes, 256);
  s.at_least<std::int64_t>("request_timeout", timeout_s, 1);
  s.reject_unknown();
}

void read_sources(Section& parent, const std::filesystem::path& base,
                  std::vector<RegistrySourceConfig>& sources) {
  auto node = parent.get("sources");
  if (!node || node.IsNull())
    return;
  const std::string path = parent.child_path("sources");
  if (!node.IsSequence())
    return parent.fail(path, "must be a list of sources");
  std::set<std::string> names;
  for (std::size_t i = 0; i < node.size(); ++i) {
    Section s(node[i], path + "[" + std::to_string(i) + "]", parent.errors());
    RegistrySourceConfig source;
    s.read("name", source.name);
    if (!is_valid_name(source.name)) {
      s.fail(s.child_path("name"),
             "must match [A-Za-z0-9][A-Za-z0-9._-]{0,127}, got \"" + source.name + "\"");
    } else if (!names.insert(source.name).second) {
      s.fail(s.child_path("name"), "duplicate source name \"" + source.name + "\"");
    }
    const std::size_t errors_before = s.errors().size();
    if (!s.has("kind"))
      s.fail(s.child_path("kind"), "required: one of " + enum_names<SourceKind>());
    s.read_enum("kind", source.kind);
    const bool kind_read = s.errors().size() == errors_before;  // else nothing depends on it
    std::string root;
    s.read("root", root);
    s.read("url", source.url);
    std::string ca_file;
    s.read("ca_file", ca_file);
    if (!ca_file.empty())
      source.ca_file = (base / ca_file).string();
    s.read_secret_file("token_file", base, SecretForm::opaque, source.token);
    source.token_file = secret_file_path(s, "token_file", base);
    std::int64_t timeout_s = source.timeout_ms / 1000;
    s.read_duration("timeout", timeout_s);
    source.timeout_ms = timeout_s * 1000;
    if (kind_read && source.kind == SourceKind::directory) {
      if (root.empty())
        s.fail(s.child_path("root"), "required for kind directory");
      source.root = base / root;
    } else if (kind_read && source.url.rfind("http://", 0) != 0 &&
               source.url.rfind("https://", 0) != 0) {
      s.fail(s.child_path("url"), "required for kind http-index: an http:// or https:// URL");
    }
    s.reject_unknown();
    sources.push_back(std::move(source));
  }
}

void read_schedule(Section s, ScheduleConfig& schedule) {
  s.read_optional("cron", schedule.cron);
  if (schedule.cron) {
    if (auto parsed = CronSchedule::parse(*schedule.cron); !parsed.ok()) {
      s.fail(s.child_path("cron"), parsed.error().message);
    }
  }
  s.read("per_cycle", schedule.per_cycle);
  s.read("max_concurrent", schedule.max_concurrent);
  s.read_optional("gpu_budget_hours", schedule.gpu_budget_hours);
  s.read("full_every_n_cycles", schedule.full_every_n_cycles);
  s.read("large_gpu_hours", schedule.large_gpu_hours);
  s.read("steps_cost_fraction", schedule.steps_cost_fraction);
  s.read_duration("jitter", schedule.jitter_s);
  s.read("calibrations_per_cycle", schedule.calibrations_per_cycle);
  s.read("calibration_max_runs", schedule.calibration_max_runs);
  s.at_least<std::size_t>("calibration_max_runs", schedule.calibration_max_runs, 3);
  auto retry = s.section("retry");
  retry.read_duration("initial", schedule.retry_initial_s);
  retry.read_duration("max", schedule.retry_max_s);
  retry.read("max_attempts", schedule.retry_max_attempts);
  retry.at_least("max_attempts", schedule.retry_max_attempts, 1);
  retry.at_least<std::int64_t>("initial", schedule.retry_initial_s, 1);
  retry.reject_unknown();
  auto release = s.section("at_release");
  release.read("enabled", schedule.at_release.enabled);
  release.read_enum("mode", schedule.at_release.mode);
  release.read_duration("delay", schedule.at_release.delay_s);
  release.read("per_day", schedule.at_release.per_day);
  release.read_optional("gpu_budget_hours", schedule.at_release.gpu_budget_hours);
  release.at_least<std::size_t>("per_day", schedule.at_release.per_day, 1);
  if (schedule.at_release.gpu_budget_hours)
    release.at_least("gpu_budget_hours", *schedule.at_release.gpu_budget_hours, 0.0);
  release.reject_unknown();
  s.at_least<std::size_t>("per_cycle", schedule.per_cycle, 1);
  s.at_least<std::size_t>("max_concurrent", schedule.max_concurrent, 1);
  s.at_least<std::size_t>("full_every_n_cycles", schedule.full_every_n_cycles, 1);
  if (schedule.gpu_budget_hours)
    s.at_least("gpu_budget_hours", *schedule.gpu_budget_hours, 0.0);
  if (schedule.steps_cost_fraction <= 0 || schedule.steps_cost_fraction > 1) {
    s.fail(s.child_path("steps_cost_fraction"), "must be in (0, 1]");
  }
  s.reject_unknown();
}

void read_verdict(Section s, VerdictPolicy& policy) {
  s.read("false_page_rate", policy.false_page_rate);
  if (!(policy.false_page_rate > 0 && policy.false_page_rate < 1)) {
    s.fail(s.child_path("false_page_rate"), "must be in (0, 1), e.g. 0.01");
  }
  s.read("fallback", policy.allow_fallback);
  s.read("flip_threshold", policy.flip_threshold);
  auto split = s.section("alpha_split");
  for (auto [name, share] : {std::pair{"primary", &policy.alpha_shares.primary},
                             std::pair{"segments", &policy.alpha_shares.segments},
                             std::pair{"distribution", &policy.alpha_shares.distribution},
                             std::pair{"steps", &policy.alpha_shares.steps}}) {
    split.read(name, *share);
    if (!(*share > 0))
      split.fail(split.child_path(name),
                 "must be a share > 0 (shares are normalised over the "
                 "families a verification has)");
  }
  split.reject_unknown();
  auto bands = s.get("fallback_tolerance");
  if (bands && !bands.IsNull()) {
    Section b(bands, s.child_path("fallback_tolerance"), s.errors());
    policy.fallback_tolerance.clear();
    if (bands.IsMap()) {
      for (const auto& item : bands) {
        auto name = item.first.as<std::string>();
        b.read(name, policy.fallback_tolerance[name]);
      }
    }
  }
  s.reject_unknown();
}

// models.<name>.cadence: {<mode>: <duration>, ..., at_release: <mode>}, any mode RebuildMode
// names. Given, it replaces the inherited cadence whole (at_release included).
void read_cadence(Section& s, ModelPolicy& policy) {
  auto cadence = s.get("cadence");
  if (!cadence || cadence.IsNull())
    return;
  const std::string expected = "a map of mode (" + enum_names<RebuildMode>() +
                               ") -> how often, and at_release: <mode> (e.g. {steps: 1mo, "
                               "full: 3mo, at_release: full})";
  if (!cadence.IsMap())
    return s.fail(s.child_path("cadence"), "must be " + expected);
  Section c(cadence, s.child_path("cadence"), s.errors());
  policy.cadence_s.clear();
  policy.at_release_mode.reset();
  for (const auto& item : cadence) {
    const auto key = item.first.as<std::string>();
    if (key == "at_release") {
      std::string text;
      c.read("at_release", text);
      if (auto mode = enum_from_string<RebuildMode>(text))
        policy.at_release_mode = *mode;
      else
        c.fail(c.child_path("at_release"),
               "expected one of " + enum_names<RebuildMode>() + ", got \"" + text + "\"");
      continue;
    }
    const auto mode = enum_from_string<RebuildMode>(key);
    if (!mode) {
      c.fail_key(key, "unknown mode: expected " + expected);
      continue;
    }
    std::int64_t every = 0;
    const std::size_t errors_before = c.errors().size();
    c.read_duration(key, every);
    if (c.errors().size() != errors_before)
      continue;
    if (every <= 0)
      c.fail(c.child_path(key), "must be a duration longer than 0s (e.g. 1mo, 90d)");
    else
      policy.cadence_s[*mode] = every;
  }
}

void read_model_policy(Section s, ModelPolicy& policy) {
  s.read("criticality", policy.criticality);
  s.read_optional("large", policy.large);
  s.read("max_steps", policy.max_steps);
  s.read_duration("timeout", policy.timeout_s);
  s.read_enum("network", policy.network);
  if (auto detect = s.get("detect"); detect && detect.IsMap()) {
    Section d(detect, s.child_path("detect"), s.errors());
    for (const auto& item : detect) {
      const auto key = item.first.as<std::string>();
      double shift = policy.detect.count(key) ? policy.detect.at(key) : 0;
      d.read(key, shift);
      if (!(shift > 0))
        d.fail(d.child_path(key), "must be a shift > 0 in the metric's units");
      policy.detect[key] = shift;
    }
  } else if (detect && !detect.IsNull()) {
    s.fail(s.child_path("detect"), "must be a map of check key -> shift (e.g. {accuracy: 0.01})");
  }
  read_cadence(s, policy);
  s.at_least<std::int64_t>("max_steps", policy.max_steps, 1);
  s.at_least<std::int64_t>("timeout", policy.timeout_s, 1);
  s.reject_unknown();
}

// models.default first, then each models.<name> starting from those defaults.
void read_models(Section s, Config& config) {
  read_model_policy(s.section("default"), config.model_defaults);
  if (!s.node() || !s.node().IsMap())
    return;
  for (const auto& item : s.node()) {
    auto name = item.first.as<std::string>();
    if (name == "default")
      continue;
    if (!is_valid_name(name)) {
      s.fail(s.child_path(name), "not a valid model name ([A-Za-z0-9][A-Za-z0-9._-]{0,127})");
      continue;
    }
    ModelPolicy policy = config.model_defaults;
    read_model_policy(s.section(name), policy);
    config.models[name] = policy;
  }
}

void read_ms(Section& s, const std::string& key, std::chrono::milliseconds& out) {
  std::int64_t seconds = out.count() / 1000;
  s.read_duration(key, seconds);
  out = std::chrono::milliseconds(seconds * 1000);
}

// runner.kubernetes: maps onto KubernetesConfig (runners/kubernetes_config.hpp).
void read_kubernetes(Section s, KubernetesConfig& k) {
  s.read("api_server", k.api_server);
  s.read("namespace", k.namespace_name);
  std::string path;
  s.read("token_file", path);
  k.token_file = path;
  path.clear();
  s.read("ca_file", path);
  k.ca_file = path;
  s.read("in_cluster", k.in_cluster);
  s.read("service_account", k.service_account);
  s.read("image_pull_secret", k.image_pull_secret);
  s.read("network_policy", k.network_policy);
  s.read("node_selector", k.node_selector);
  s.read_optional("cpu", k.resources.cpu);
  s.read_optional("memory", k.resources.memory);
  s.read_optional("run_as_user", k.run_as_user);
  s.read("run_as_non_root", k.run_as_non_root);
  s.read_optional("fs_group", k.fs_group);
  auto read_volume = [](Section& v, KubernetesVolume& volume) {
    v.read("claim", volume.claim_name);
    std::string daemon_path;
    v.read("daemon_path", daemon_path);
    volume.daemon_path = daemon_path;
    if (volume.claim_name.empty() || !volume.daemon_path.is_absolute())
      v.fail(v.child_path("claim"), "needs claim and an absolute daemon_path");
  };
  auto inputs = s.get("input_volumes");
  if (inputs && inputs.IsSequence()) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      Section v(inputs[i], s.child_path("input_volumes[" + std::to_string(i) + "]"), s.errors());
      read_volume(v, k.input_volumes.emplace_back());
      v.reject_unknown();
    }
  } else if (inputs && !inputs.IsNull()) {
    s.fail(s.child_path("input_volumes"), "must be a list of {claim, daemon_path}");
  }
  auto outputs = s.section("outputs");
  if (outputs.node() && !outputs.node().IsNull()) {
    read_volume(outputs, k.outputs.volume);
    outputs.read("sub_dir", k.outputs.sub_dir);
  }
  outputs.reject_unknown();
  s.read_duration("ttl_after_finished", k.ttl_seconds_after_finished);
  s.read_duration("termination_grace", k.termination_grace_period_s);
  s.read_duration("watch_timeout", k.watch_timeout_s);
  s.read("log_tail_lines", k.log_tail_lines);
  s.read("log_cap_bytes", k.log_cap_bytes);
  read_ms(s, "reconnect_grace", k.reconnect_grace);
  s.reject_unknown();
}

// runner.process.sandbox (runners/job_sandbox.hpp): paths are absolute host paths.
void read_sandbox(Section s, SandboxConfig& sandbox) {
  std::string bwrap = sandbox.bwrap.string();
  s.read("bwrap", bwrap);
  sandbox.bwrap = bwrap;
  for (auto [key, paths] :
       {std::pair{"read_only", &sandbox.read_only}, std::pair{"writable", &sandbox.writable},
        std::pair{"devices", &sandbox.devices}}) {
    std::vector<std::string> listed;
    s.read(key, listed);
    for (const auto& path : listed) {
      if (path.empty() || path[0] != '/' || std::filesystem::path(path).lexically_normal() == "/")
        s.fail(s.child_path(key), "expected absolute host paths below /, got \"" + path + "\"");
      paths->push_back(path);
    }
  }
  s.read("tmp_bytes", sandbox.tmp_bytes);
  s.at_least<std::uint64_t>("tmp_bytes", sandbox.tmp_bytes, 1024 * 1024);
  std::string user;
  s.read("job_user", user);
  if (!user.empty()) {
    unsigned uid = 0, gid = 0;
    char rest = 0;
    if (std::sscanf(user.c_str(), "%u:%u%c", &uid, &gid, &rest) != 2 || uid == 0 || gid == 0)
      s.fail(s.child_path("job_user"),
             "expected \"uid:gid\", both numbers above 0, got \"" + user + "\"");
    sandbox.job_uid = uid;
    sandbox.job_gid = gid;
  }
  s.reject_unknown();
}

// The verifier's own files, never shown to a job (runners/runner_config.hpp, JobIsolation): the
// store and its companions, the state directory's locks, every secret file the config names.
void collect_verifier_paths(Config& config) {
  auto& paths = config.runner.isolation.verifier_paths;
  const auto db = config.db_path().string();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    paths.push_back(db + suffix);
  paths.push_back(config.state_dir / "reverifyd.lock");
  paths.push_back(config.state_dir / "owners");
  std::vector<std::filesystem::path> secrets = {config.api.token_file, config.attestation.key_file,
                                                config.runner.kubernetes.token_file};
  for (const auto& source : config.sources)
    secrets.push_back(source.token_file);
  for (const auto& [name, sender] : config.pager.senders) {
    for (const auto& file : {sender.routing_key_file, sender.url_file, sender.token_file})
      secrets.push_back(file);
  }
  for (const auto& secret : secrets) {
    if (!secret.empty())
      paths.push_back(secret);
  }
}

// runner: maps onto the runners' RunnerConfig. Scratch folders default to <state_dir>/scratch so
// the unit's StateDirectory is the only writable place the daemon needs.
void read_runner(Section s, Config& config) {
  RunnerConfig& runner = config.runner;
  s.read("trust_job_code", runner.isolation.trust_job_code);
  runner.process.scratch_root = config.state_dir / "scratch";
  runner.docker.scratch_root = config.state_dir / "scratch";
  s.read_enum("kind", runner.kind);
  auto process = s.section("process");
  process.read("path_env", runner.process.path_env);
  std::string scratch;
  process.read("scratch_root", scratch);
  if (!scratch.empty())
    runner.process.scratch_root = config.state_dir / scratch;
  process.read("log_cap_bytes", runner.process.log_cap_bytes);
  process.read("job_log_cap_bytes", runner.process.job_log_cap_bytes);
  process.at_least<std::uint64_t>("job_log_cap_bytes", runner.process.job_log_cap_bytes,
                                  kMinJobLogCapBytes);
  read_ms(process, "kill_grace", runner.process.kill_grace);
  process.read("cgroups", runner.process.cgroups);
  process.read("max_pids", runner.process.max_pids);
  process.read("max_open_files", runner.process.max_open_files);
  process.read("memory_bytes", runner.process.memory_bytes);
  read_sandbox(process.section("sandbox"), runner.process.sandbox);
  process.reject_unknown();
  auto docker = s.section("docker");
  docker.read("socket", runner.docker.socket);
  docker.read("network_mode", runner.docker.network_mode);
  docker.read("memory_bytes", runner.docker.memory_bytes);
  docker.read("nano_cpus", runner.docker.nano_cpus);
  docker.read("max_pids", runner.docker.max_pids);
  docker.at_least<std::int64_t>("max_pids", runner.docker.max_pids, 0);
  docker.read("max_open_files", runner.docker.max_open_files);
  docker.at_least<std::int64_t>("max_open_files", runner.docker.max_open_files, 0);
  docker.read("read_only_rootfs", runner.docker.read_only_rootfs);
  docker.read("tmpfs", runner.docker.tmpfs);
  for (const auto& path : runner.docker.tmpfs) {
    if (path.empty() || path[0] != '/' || path.find(',') != std::string::npos)
      docker.fail(docker.child_path("tmpfs"),
                  "expected absolute container paths without commas, got \"" + path + "\"");
  }
  docker.read("tmpfs_bytes", runner.docker.tmpfs_bytes);
  docker.at_least<std::int64_t>("tmpfs_bytes", runner.docker.tmpfs_bytes, 1);
  docker.read("user", runner.docker.user);
  scratch.clear();
  docker.read("scratch_root", scratch);
  if (!scratch.empty())
    runner.docker.scratch_root = config.state_dir / scratch;
  docker.read("log_cap_bytes", runner.docker.log_cap_bytes);
  std::int64_t grace = runner.docker.kill_grace.count();
  docker.read_duration("kill_grace", grace);
  runner.docker.kill_grace = std::chrono::seconds(grace);
  std::int64_t pull = runner.docker.pull_timeout.count();
  docker.read_duration("pull_timeout", pull);
  runner.docker.pull_timeout = std::chrono::seconds(pull);
  docker.reject_unknown();
  read_kubernetes(s.section("kubernetes"), runner.kubernetes);
  read_slurm(s.section("slurm"), config.state_dir, runner.slurm);
  // runner.space: shared by the process and docker runners, which watch state_dir too.
  SpaceWatchConfig space;
  space.paths = {config.state_dir};
  auto space_section = s.section("space");
  space_section.read("min_free_bytes", space.min_free_bytes);
  space_section.read("min_free_inodes", space.min_free_inodes);
  space_section.reject_unknown();
  runner.process.space = space;
  runner.docker.space = space;
  s.reject_unknown();
}

void read_attestation(Section s, const std::filesystem::path& base, AttestationConfig& a) {
  std::string key_file;
  s.read("key_file", key_file);
  s.read("verifier_id", a.identity.verifier_id);
  s.read("resource_uri", a.identity.resource_uri_template);
  s.reject_unknown();
  if (!a.identity.verifier_id.empty()) {
    if (auto problem = in_toto_uri_problem(a.identity.verifier_id))
      s.fail(s.child_path("verifier_id"), *problem);
  }
  if (auto problem =
          in_toto_uri_problem(resource_uri_for(a.identity.resource_uri_template, "m", "v")))
    s.fail(s.child_path("resource_uri"), *problem);
  if (key_file.empty()) {
    if (!a.identity.verifier_id.empty())
      s.fail(s.child_path("key_file"), "required when verifier_id is set (the summaries' key)");
    return;
  }
  if (a.identity.verifier_id.empty()) {
    s.fail(s.child_path("verifier_id"),
           "required with key_file: a URI naming this verifier in every summary");
  }
  a.key_file = base / key_file;
  auto key = Ed25519SigningKey::read_pem_file(a.key_file);
  if (!key.ok())
    return s.fail(s.child_path("key_file"), key.error().message);
  a.key = std::make_shared<const Ed25519SigningKey>(std::move(*key));
}

// code_mirrors: {URL prefix: folder or URL}. A replacement without a scheme ("://") or an scp-like
// host ("git@host:path") is a local folder, relative to the config file; its trailing slash is
// kept, since the rest of the URL is appended to it.
void read_code_mirrors(Section s, const std::filesystem::path& base, CodeMirrors& mirrors) {
  if (!s.node() || !s.node().IsMap())
    return;
  for (const auto& item : s.node()) {
    const auto prefix = item.first.as<std::string>();
    std::string target;
    s.read(prefix, target);
    if (prefix.empty() || target.empty()) {
      s.fail(s.child_path(prefix), "expected a URL prefix mapped to a folder or URL");
      continue;
    }
    const bool remote =
        target.find("://") != std::string::npos ||
        (target.find('@') != std::string::npos && target.find(':') != std::string::npos);
    mirrors[prefix] = remote ? target : (base / target).lexically_normal().string();
  }
}

// pager.public_url unset: the daemon's own API address, so every page still links its
// verification page. An address that listens on every interface is named by the host's name.
void default_public_url(const ApiConfig& api, PagerConfig& pager) {
  if (!pager.public_url.empty() || api.port == 0)
    return;
  std::string host = api.address;
  if (host == "0.0.0.0" || host == "::") {
    char name[256] = {};
    host = ::gethostname(name, sizeof name - 1) == 0 && name[0] ? name : "localhost";
  } else if (host.find(':') != std::string::npos) {
    host = "[" + host + "]";
  }
  pager.public_url = "http://" + host + ":" + std::to_string(api.port);
  pager.public_url_is_default = true;
}

void read_root(const YAML::Node& root, const std::filesystem::path& base, ConfigReading& reading) {
  std::vector<std::string>& errors = reading.errors;
  Config& config = reading.config;
  Section s(root, "", errors);
  const bool names_state_dir = s.has("state_dir");
  std::string state_dir = config.state_dir.string();
  s.read("state_dir", state_dir);
  config.state_dir = base / state_dir;
  std::string work_dir;
  s.read("work_dir", work_dir);
  if (!work_dir.empty())
    config.work_dir = base / work_dir;
  read_api(s.section("api"), base, config.api);
  read_sources(s, base, config.sources);
  s.read_duration("sync_interval", config.sync_interval_s);
  s.at_least<std::int64_t>("sync_interval", config.sync_interval_s, 1);
  read_schedule(s.section("schedule"), config.schedule);
  auto gate = s.section("gate");
  gate.read("require_power", config.api.gate_require_power);
  gate.reject_unknown();
  read_verdict(s.section("verdict"), config.verdict);
  read_models(s.section("models"), config);
  read_runner(s.section("runner"), config);
  read_code_mirrors(s.section("code_mirrors"), base, config.code_mirrors);
  s.read_duration("stop_timeout", config.stop_timeout_s);
  read_attestation(s.section("attestation"), base, config.attestation);
  read_pager(s.section("pager"), base, config.pager);
  default_public_url(config.api, config.pager);
  s.reject_unknown();
  // Where state lives is never a default: a config that does not name it (an empty file, a
  // truncated write) must not start writing to /var/lib/reverify.
  if (!names_state_dir) {
    s.fail("state_dir",
           "required: the folder of reverify.db, work/ and scratch/ (e.g. "
           "/var/lib/reverify)");
  }
  collect_verifier_paths(config);
  config.api.secrets = {config.api.token};
  for (const auto& source : config.sources)
    config.api.secrets.push_back(source.token);
}

// Every scalar of the document by its YAML path ("schedule.per_cycle", "sources[0].root"; an
// empty mapping or list as "{}" or "[]"). Depth-first with an explicit stack, as
// duplicate_key_errors walks, and only over a document that read without errors (so within its
// node limit).
std::map<std::string, std::string> written_settings(const YAML::Node& root) {
  std::map<std::string, std::string> written;
  std::vector<std::pair<YAML::Node, std::string>> pending{{root, ""}};
  while (!pending.empty()) {
    auto [node, path] = std::move(pending.back());
    pending.pop_back();
    if (node.IsMap()) {
      if (node.size() == 0 && !path.empty())
        written[path] = "{}";
      for (const auto& entry : node) {
        const std::string key = entry.first.as<std::string>();
        pending.emplace_back(entry.second, path.empty() ? key : path + "." + key);
      }
    } else if (node.IsSequence()) {
      if (node.size() == 0)
        written[path] = "[]";
      for (std::size_t i = 0; i < node.size(); ++i)
        pending.emplace_back(node[i], path + "[" + std::to_string(i) + "]");
    } else {
      written[path] = node.IsScalar() ? node.Scalar() : "null";
    }
  }
  return written;
}

// Every error on its own line, as one Error.
Error joined(ErrorCode code, const std::vector<std::string>& errors) {
  std::string message;
  for (const auto& e : errors)
    message += (message.empty() ? "" : "\n") + e;
  return make_error(code, message);
}

}  // namespace

ConfigReading read_config_text(const std::string& yaml_text,
                               const std::filesystem::path& base_dir) {
  ConfigReading reading;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    reading.code = ErrorCode::parse;
    reading.errors.push_back("not valid YAML: " + std::string(e.what()));
    return reading;
  }
  if (!root || root.IsNull()) {
    reading.errors.push_back(
        "the config is empty (no settings at all): it must set at least state_dir and one source");
    return reading;
  }
  if (!root.IsMap()) {
    reading.code = ErrorCode::parse;
    reading.errors.push_back("the document must be a mapping of settings");
    return reading;
  }
  try {
    reading.errors = duplicate_key_errors(root);  // reported first, with every other error
    reading.settings_read = true;
    read_root(root, base_dir, reading);
    if (reading.errors.empty())  // a config with errors is never applied, so never compared
      reading.config.written = written_settings(root);
  } catch (const YAML::Exception& e) {
    // A key that is not a string, an alias loop: still the file's fault, not a crash.
    reading.code = ErrorCode::parse;
    reading.errors.push_back("unexpected YAML structure: " + std::string(e.what()));
  }
  return reading;
}

Result<Config> parse_config(const std::string& yaml_text, const std::filesystem::path& base_dir) {
  ConfigReading reading = read_config_text(yaml_text, base_dir);
  if (!reading.errors.empty())
    return joined(reading.code, reading.errors);
  return std::move(reading.config);
}

ConfigReading read_config_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status) ||
      (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))) {
    ConfigReading reading;
    reading.names_the_file = true;
    reading.errors.push_back(path.string() +
                             (std::filesystem::is_directory(status)
                                  ? " is a directory, not a config file: name the YAML file"
                                  : " is not a regular file"));
    return reading;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ConfigReading reading;
    reading.code = ErrorCode::not_found;
    reading.names_the_file = true;
    reading.errors.push_back("cannot read config file " + path.string());
    return reading;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  ConfigReading reading =
      read_config_text(buffer.str(), std::filesystem::absolute(path).parent_path());
  // Every command a verdict or page suggests names this file, so it runs as printed.
  const std::string scope = config_scope(path);
  reading.config.verdict.command_scope = scope;
  reading.config.api.command_scope = scope;
  reading.config.runner.isolation.verifier_paths.push_back(std::filesystem::absolute(path));
  return reading;
}

ConfigReading read_daemon_config_file(const std::filesystem::path& path) {
  ConfigReading reading = read_config_file(path);
  // Once: not again when the sources key already has an error of its own.
  if (reading.settings_read && reading.config.sources.empty() &&
      std::none_of(reading.errors.begin(), reading.errors.end(),
                   [](const std::string& e) { return e.rfind("sources", 0) == 0; })) {
    reading.errors.push_back(
        "sources: required: at least one registry source ({name, kind: directory | "
        "http-index, ...}); without one reverifyd has nothing to verify");
  }
  return reading;
}

namespace {

// The reading as a Result: the errors, after the file's name unless they name it themselves.
Result<Config> config_or_errors(ConfigReading reading, const std::filesystem::path& path) {
  if (reading.errors.empty())
    return std::move(reading.config);
  if (reading.names_the_file)
    return joined(reading.code, reading.errors);
  Error error = joined(reading.code, reading.errors);
  return make_error(error.code, path.string() + ":\n" + error.message);
}

}  // namespace

Result<Config> load_config(const std::filesystem::path& path) {
  return config_or_errors(read_config_file(path), path);
}

Result<Config> load_daemon_config(const std::filesystem::path& path) {
  return config_or_errors(read_daemon_config_file(path), path);
}

}  // namespace reverify
