#include "runners/docker_runner.hpp"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

#include "core/http_client.hpp"
#include "core/names.hpp"
#include "core/unix_time.hpp"
#include "runners/docker_api.hpp"
#include "runners/docker_log_stream.hpp"
#include "runners/job_contract.hpp"
#include "runners/job_outputs.hpp"
#include "runners/log_tail.hpp"
#include "runners/space_watch.hpp"

namespace reverify {
namespace {

using nlohmann::json;

constexpr const char* kWorkDirLabel = "reverify.work-dir";
constexpr const char* kDeadlineLabel = "reverify.deadline-unix-ms";
constexpr const char* kMountRoot = "/reverify";

std::int64_t now_unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct ImageRef {
  std::string repository;  // "127.0.0.1:5000/trainer" (a tag before the digest is dropped)
  std::string digest;      // "sha256:<64 hex>"
  std::string reference() const { return repository + "@" + digest; }
};

// What prepare() and start() both need from the spec: the image by digest and an argv.
Result<ImageRef> parse_image(const RebuildSpec& spec) {
  if (spec.manifest.run.entrypoint.empty()) {
    return make_error(ErrorCode::manifest_invalid,
                      "run.entrypoint: expected a non-empty argv array");
  }
  if (!spec.manifest.environment || !spec.manifest.environment->image) {
    return make_error(ErrorCode::provision, "environment.image: the docker runner needs an image");
  }
  const std::string& image = *spec.manifest.environment->image;
  const auto reference = parse_digest_reference(image);
  if (!reference) {
    return make_error(
        ErrorCode::manifest_invalid,
        "environment.image: must be referenced by digest (name@sha256:<64 hex>), got \"" + image +
            "\"");
  }
  std::string repository = reference->name;
  const auto slash = repository.rfind('/');
  const auto colon = repository.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash))
    repository.erase(colon);
  return ImageRef{repository, reference->digest};
}

Error engine_error(ErrorCode code, const std::string& what, const HttpResponse& response) {
  return make_error(code, what + ": " + DockerApi::message(response));
}

// Scans the pull's progress stream (one JSON object per line) for errorDetail.
class PullProgress {
 public:
  bool feed(std::string_view chunk) {
    pending_.append(chunk);
    std::size_t newline;
    while ((newline = pending_.find('\n')) != std::string::npos) {
      line(pending_.substr(0, newline));
      pending_.erase(0, newline + 1);
    }
    return true;
  }
  std::optional<std::string> error() {
    if (!pending_.empty())
      line(pending_);
    pending_.clear();
    return error_;
  }

 private:
  void line(const std::string& text) {
    const auto doc = json::parse(text, nullptr, false);
    if (!doc.is_object() || error_)
      return;
    if (doc.contains("errorDetail") && doc["errorDetail"].is_object()) {
      error_ = doc["errorDetail"].value("message", std::string("unknown error"));
    } else if (doc.contains("error") && doc["error"].is_string()) {
      error_ = doc["error"].get<std::string>();
    }
  }
  std::string pending_;
  std::optional<std::string> error_;
};

Status pull_image(DockerApi& api, const ImageRef& image, std::chrono::seconds timeout) {
  PullProgress progress;
  DockerApi::Call call;
  call.method = "POST";
  call.path = "/images/create?fromImage=" + url_encode(image.repository) +
              "&tag=" + url_encode(image.digest);
  call.timeout_ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
  std::string body;  // an error status carries a JSON message instead of progress
  call.on_body = [&](std::string_view chunk) {
    if (body.size() < 64 * 1024)
      body.append(chunk);
    return progress.feed(chunk);
  };
  auto response = api.call(call);
  if (!response) {
    return make_error(ErrorCode::provision,
                      "pulling " + image.reference() + ": " + response.error().message);
  }
  if (response->status != 200) {
    response->body = body;
    return engine_error(ErrorCode::provision, "pulling " + image.reference(), *response);
  }
  if (auto error = progress.error())
    return make_error(ErrorCode::provision, "pulling " + image.reference() + ": " + *error);

  auto inspect = api.call({"GET", "/images/" + image.reference() + "/json", "", 30000, {}});
  if (!inspect)
    return make_error(ErrorCode::provision,
                      "inspecting " + image.reference() + ": " + inspect.error().message);
  if (inspect->status != 200)
    return engine_error(ErrorCode::provision, "inspecting " + image.reference(), *inspect);
  const auto doc = json::parse(inspect->body, nullptr, false);
  const json digests = doc.is_object() ? doc.value("RepoDigests", json::array()) : json::array();
  for (const auto& entry : digests) {
    if (entry.is_string() && entry.get<std::string>() == image.reference())
      return {};
  }
  return make_error(ErrorCode::provision, "the pulled image's RepoDigests " + digests.dump() +
                                              " do not contain " + image.reference() +
                                              "; refusing to run it");
}

// A bind of a host file or folder at /reverify/<name> (a file keeps its name below it).
std::pair<std::string, std::string> bind(const std::filesystem::path& host, const std::string& name,
                                         bool read_only) {
  std::string target = std::string(kMountRoot) + "/" + name;
  std::error_code ec;
  if (std::filesystem::is_regular_file(host, ec))
    target += "/" + host.filename().string();
  return {host.string() + ":" + target + (read_only ? ":ro" : ":rw"), target};
}

json create_body(const RebuildSpec& spec, const ImageRef& image, const DockerRunnerConfig& config,
                 const std::filesystem::path& dir, std::int64_t deadline_ms) {
  json binds = json::array();
  ContractPaths paths;
  paths.config = std::string(kMountRoot) + "/in/config.json";
  paths.seeds = std::string(kMountRoot) + "/in/seeds.json";
  binds.push_back(bind(dir / "in", "in", true).first);
  const auto out = bind(dir / "out", "out", false);
  binds.push_back(out.first);
  paths.out = out.second;
  if (spec.data_path) {
    const auto data = bind(*spec.data_path, "data", true);
    binds.push_back(data.first);
    paths.data = data.second;
  }
  if (spec.eval_path) {
    const auto eval = bind(*spec.eval_path, "eval", true);
    binds.push_back(eval.first);
    paths.eval = eval.second;
  }
  json env = json::array();
  for (const auto& [name, value] : contract_environment(spec, paths))
    env.push_back(name + "=" + value);

  const auto& argv = spec.manifest.run.entrypoint;
  json host = {{"Binds", binds},
               // Only a job whose model declares network gets one (docker_runner.hpp).
               {"NetworkMode", spec.network ? config.network_mode : std::string("none")},
               {"CapDrop", {"ALL"}},
               {"SecurityOpt", {"no-new-privileges"}},
               {"Memory", config.memory_bytes},
               {"NanoCpus", config.nano_cpus},
               {"ReadonlyRootfs", config.read_only_rootfs},
               // The host's OOM killer takes the job before anything else on the host.
               {"OomScoreAdj", 1000}};
  if (config.memory_bytes > 0)
    host["MemorySwap"] = config.memory_bytes;  // memory plus swap: no swap on top of the limit
  if (config.max_pids > 0)
    host["PidsLimit"] = config.max_pids;
  if (config.max_open_files > 0) {
    host["Ulimits"] = {
        {{"Name", "nofile"}, {"Soft", config.max_open_files}, {"Hard", config.max_open_files}}};
  }
  json tmpfs = json::object();
  for (const auto& path : config.tmpfs) {
    // exec: a job may compile and load code there (torch.compile, Triton); any uid may write.
    tmpfs[path] = "rw,exec,nosuid,nodev,mode=1777,size=" + std::to_string(config.tmpfs_bytes);
  }
  if (!tmpfs.empty())
    host["Tmpfs"] = tmpfs;
  const auto& accel = spec.manifest.environment->accelerator;
  if (accel && accel->count > 0) {
    host["DeviceRequests"] = {
        {{"Driver", ""}, {"Count", accel->count}, {"Capabilities", {{"gpu"}}}}};
  }
  json body = {
      {"Image", image.reference()},
      // The whole argv, exactly: the image's own ENTRYPOINT must not wrap it.
      {"Entrypoint", {argv.front()}},
      {"Cmd", json(std::vector<std::string>(argv.begin() + 1, argv.end()))},
      {"Env", env},
      {"User", config.user.empty() ? std::to_string(::getuid()) + ":" + std::to_string(::getgid())
                                   : config.user},
      {"Labels",
       {{kRebuildIdLabel, spec.rebuild_id},
        {kWorkDirLabel, dir.string()},
        {kDeadlineLabel, std::to_string(deadline_ms)}}},
      {"HostConfig", host}};
  if (spec.manifest.run.workdir)
    body["WorkingDir"] = *spec.manifest.run.workdir;
  return body;
}

// A start that fails because no device driver handles GPUs names what is missing.
Error start_error(const HttpResponse& response, const RebuildSpec& spec) {
  const std::string message = DockerApi::message(response);
  if (message.find("could not select device driver") != std::string::npos) {
    return make_error(ErrorCode::provision,
                      "environment.accelerator.count is " +
                          std::to_string(spec.manifest.environment->accelerator->count) +
                          " but the Docker engine has no GPU runtime (no device driver for "
                          "capabilities [[\"gpu\"]]: "
                          "install the NVIDIA Container Toolkit, nvidia-container-runtime-hook): " +
                          message);
  }
  return make_error(ErrorCode::provision, "starting the container: " + message);
}

struct ContainerState {
  bool running = false;
  int exit_code = -1;
  bool oom_killed = false;
  std::int64_t deadline_unix_ms = 0;
  std::optional<double> run_seconds;  // the engine's StartedAt to FinishedAt, once finished
};

// A State time: RFC 3339 with up to nanoseconds, or "0001-01-01T00:00:00Z" for never.
struct EngineTime {
  UnixSeconds whole = 0;
  double fraction = 0;
};

std::optional<EngineTime> engine_time(const json& state, const char* key) {
  if (!state.contains(key) || !state[key].is_string())
    return std::nullopt;
  const auto text = state[key].get<std::string>();
  auto whole = parse_rfc3339(text);
  if (!whole.ok() || *whole <= 0)
    return std::nullopt;
  EngineTime time{*whole, 0};
  const auto dot = text.find('.');
  double scale = 0.1;
  for (auto i = dot == std::string::npos ? text.size() : dot + 1;
       i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, scale /= 10)
    time.fraction += (text[i] - '0') * scale;
  return time;
}

// The job's own run time as the engine measured it: wait()'s wall time includes its polling.
std::optional<double> run_seconds(const json& state) {
  const auto started = engine_time(state, "StartedAt");
  const auto finished = engine_time(state, "FinishedAt");
  if (!started || !finished)
    return std::nullopt;
  const double seconds = static_cast<double>(finished->whole - started->whole) +
                         (finished->fraction - started->fraction);
  return seconds >= 0 ? std::optional(seconds) : std::nullopt;
}

// One DockerApi per operation: negotiating the version again is cheap on a local socket, and a
// runner holds no connection state that could go stale across an engine restart.
DockerApi api_for(const DockerRunnerConfig& config) {
  return DockerApi(config.socket, config.min_api_version);
}

Result<ContainerState> inspect_container(DockerApi& api, const std::string& id) {
  auto response = api.call({"GET", "/containers/" + id + "/json", "", 30000, {}});
  if (!response)
    return response.error();
  if (response->status == 404) {
    return make_error(ErrorCode::runner_lost,
                      "container " + id + " no longer exists on " + api.socket());
  }
  if (response->status != 200)
    return engine_error(ErrorCode::runner_lost, "inspecting container " + id, *response);
  const auto doc = json::parse(response->body, nullptr, false);
  ContainerState state;
  if (!doc.is_object() || !doc.contains("State") || !doc["State"].is_object()) {
    return make_error(ErrorCode::runner_lost,
                      "inspecting container " + id + ": no State in the answer");
  }
  state.running = doc["State"].value("Running", false) || doc["State"].value("Restarting", false);
  state.exit_code = doc["State"].value("ExitCode", -1);
  state.oom_killed = doc["State"].value("OOMKilled", false);
  if (!state.running)
    state.run_seconds = run_seconds(doc["State"]);
  if (doc.contains("Config") && doc["Config"].is_object() && doc["Config"].contains("Labels") &&
      doc["Config"]["Labels"].is_object()) {
    const auto& labels = doc["Config"]["Labels"];
    if (labels.contains(kDeadlineLabel) && labels[kDeadlineLabel].is_string()) {
      const auto text = labels[kDeadlineLabel].get<std::string>();
      const auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), state.deadline_unix_ms);
      if (error != std::errc() || end != text.data() + text.size()) {
        return make_error(ErrorCode::runner_lost, "container " + id + ": label " + kDeadlineLabel +
                                                      " is not a number of milliseconds: \"" +
                                                      text + "\"");
      }
    }
  }
  return state;
}

void remove_container(DockerApi& api, const std::string& id) {
  (void)api.call({"DELETE", "/containers/" + id + "?force=1&v=1", "", 60000, {}});
}

// After a failed call: waits for the engine to answer /_ping again, up to grace.
bool engine_back(const DockerRunnerConfig& config, std::chrono::milliseconds grace) {
  const auto until = std::chrono::steady_clock::now() + grace;
  while (true) {
    HttpRequest ping;
    ping.url = "http://localhost/_ping";
    ping.unix_socket = config.socket;
    ping.timeout_ms = 2000;
    if (auto r = http_request(ping); r && r->status == 200)
      return true;
    if (std::chrono::steady_clock::now() >= until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

// While a container runs, samples what its exit alone does not say: how many tasks it had
// against its pids limit (the engine's stats; a fork bomb sits at the limit) and the space the
// job needs (space_watch.hpp). One thread per wait(), stopped and joined by the destructor.
class ContainerMonitor {
 public:
  ContainerMonitor(const DockerRunnerConfig& config, std::string id, SpaceWatch& space)
      : config_(config), id_(std::move(id)), space_(space), thread_([this] { run(); }) {}
  ~ContainerMonitor() { stop(); }
  ContainerMonitor(const ContainerMonitor&) = delete;
  ContainerMonitor& operator=(const ContainerMonitor&) = delete;

  // Joins the thread; the samples are final from here on.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
      thread_.join();
  }
  std::int64_t peak_pids() const { return peak_pids_; }

 private:
  void run() {
    auto api = DockerApi(config_.socket, config_.min_api_version);
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      space_.sample();
      if (config_.max_pids > 0) {
        auto stats = api.call(
            {"GET", "/containers/" + id_ + "/stats?stream=false&one-shot=true", "", 10000, {}});
        if (stats && stats->status == 200) {
          const auto doc = json::parse(stats->body, nullptr, false);
          if (doc.is_object() && doc.contains("pids_stats") && doc["pids_stats"].is_object()) {
            const auto current = doc["pids_stats"].value("current", std::int64_t{0});
            peak_pids_ = std::max<std::int64_t>(peak_pids_, current);
          }
        }
      }
      lock.lock();
      wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stopping_; });
    }
  }

  const DockerRunnerConfig& config_;
  std::string id_;
  SpaceWatch& space_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<std::int64_t> peak_pids_{0};
  std::thread thread_;  // last: it runs on the members above
};

// The host side of the space a container's job needs: its scratch folder (the out folder's
// bind), the scratch root and config.space.paths.
SpaceWatch space_for(const DockerRunnerConfig& config, const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> paths = {dir, config.scratch_root};
  paths.insert(paths.end(), config.space.paths.begin(), config.space.paths.end());
  return SpaceWatch(paths, config.space);
}

// What the container's end and the samples say about its bounds and the platform.
void judge_container_end(const DockerRunnerConfig& config, const ContainerState& state,
                         std::int64_t peak_pids, JobExit& exit) {
  std::vector<std::string> hits;
  if (config.max_pids > 0 && peak_pids >= config.max_pids) {
    hits.push_back("the job hit its pids limit of " + std::to_string(config.max_pids) +
                   " (runner.docker.max_pids, HostConfig.PidsLimit): " + std::to_string(peak_pids) +
                   " tasks at the peak, and its next forks refused");
  }
  if (state.oom_killed && config.memory_bytes > 0) {
    hits.push_back("the job hit its memory limit of " + std::to_string(config.memory_bytes) +
                   " bytes (runner.docker.memory_bytes): the kernel's OOM killer ended it "
                   "(OOMKilled)");
  } else if (state.oom_killed) {
    exit.platform_fault = PlatformFault{
        "the host ran out of memory: the container has no memory limit of its own "
        "(runner.docker.memory_bytes 0) and the kernel's OOM killer ended it (OOMKilled)",
        {{"kind", "host_oom"}, {"container_oom_killed", true}}};
  }
  for (std::size_t i = 0; i < hits.size(); ++i)
    exit.limit_hit = (i ? *exit.limit_hit + "; " : std::string()) + hits[i];
}

}  // namespace

DockerRunner::DockerRunner(DockerRunnerConfig config, JobIsolation isolation)
    : config_(std::move(config)), isolation_(std::move(isolation)) {}

Status DockerRunner::prepare(const RebuildSpec& spec) {
  auto image = parse_image(spec);
  if (!image)
    return image.error();
  auto dir = scratch_dir(spec.rebuild_id, spec.work_dir, config_.scratch_root);
  if (!dir)
    return dir.error();
  if (auto space = space_for(config_, *dir).check_before_start(); !space)
    return space;
  auto api = api_for(config_);
  if (auto v = api.version(); !v)
    return v.error();
  return pull_image(api, *image, config_.pull_timeout);
}

Result<JobHandle> DockerRunner::start(const RebuildSpec& spec) {
  auto dir = scratch_dir(spec.rebuild_id, spec.work_dir, config_.scratch_root);
  if (!dir)
    return dir.error();
  auto image = parse_image(spec);
  if (!image)
    return image.error();
  if (auto space = space_for(config_, *dir).check_before_start(); !space)
    return space.error();
  std::error_code ec;
  std::filesystem::remove_all(*dir / "out", ec);
  std::filesystem::create_directories(*dir / "out", ec);
  if (ec)
    return make_error(ErrorCode::io, (*dir / "out").string() + ": cannot create: " + ec.message());
  if (auto s = write_contract_inputs(spec, *dir / "in"); !s)
    return s.error();
  if (auto own = check_inputs_not_verifier_own(spec, isolation_.verifier_paths); !own)
    return own.error();

  auto api = api_for(config_);
  const std::int64_t deadline =
      now_unix_ms() + std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout).count();
  const json body = create_body(spec, *image, config_, *dir, deadline);
  auto created = api.call(
      {"POST", "/containers/create?name=reverify-" + spec.rebuild_id, body.dump(), 60000, {}});
  if (!created)
    return make_error(ErrorCode::provision, "creating the container: " + created.error().message);
  if (created->status == 409) {
    return engine_error(ErrorCode::conflict,
                        "rebuild " + spec.rebuild_id + " already has a container", *created);
  }
  if (created->status != 201)
    return engine_error(ErrorCode::provision, "creating the container", *created);
  const auto doc = json::parse(created->body, nullptr, false);
  if (!doc.is_object() || !doc.contains("Id") || !doc["Id"].is_string()) {
    return make_error(ErrorCode::provision, "creating the container: no Id in the answer");
  }
  const std::string id = doc["Id"].get<std::string>();
  auto started = api.call({"POST", "/containers/" + id + "/start", "", 60000, {}});
  if (!started || (started->status != 204 && started->status != 304)) {
    remove_container(api, id);
    if (!started)
      return make_error(ErrorCode::provision, "starting the container: " + started.error().message);
    return start_error(*started, spec);
  }
  return JobHandle{spec.rebuild_id, kind(), id, *dir};
}

Result<JobExit> DockerRunner::wait(const JobHandle& job, const LogSink& logs) {
  auto api = api_for(config_);
  SpaceWatch space = space_for(config_, job.work_dir);
  ContainerMonitor monitor(config_, job.ref, space);
  LogTail tail(config_.log_cap_bytes);
  DockerLogStream frames([&](int, std::string_view payload) {
    tail.append(payload);
    if (logs)
      logs(payload);
  });
  JobExit exit;
  bool followed_before = false;
  while (true) {
    auto state = inspect_container(api, job.ref);
    if (state && !state->running && followed_before) {
      exit.exit_code = state->exit_code;
      exit.job_seconds = state->run_seconds;
      if (state->oom_killed)
        tail.append("\n[reverify] the kernel's OOM killer ended the container (OOMKilled)\n");
      monitor.stop();
      judge_container_end(config_, *state, monitor.peak_pids(), exit);
      break;
    }
    if (!state && state.error().code == ErrorCode::runner_lost)
      return state.error();
    if (state) {
      // No deadline label (a container not started by reverify): no timeout.
      const std::int64_t remaining = state->deadline_unix_ms > 0
                                         ? state->deadline_unix_ms - now_unix_ms()
                                         : std::numeric_limits<std::int64_t>::max() / 2;
      if (remaining <= 0 && state->running) {
        exit.timed_out = true;
        cancel(job);
        continue;
      }
      // Follow the logs until the container stops; after a reconnect only new lines (tail=0).
      DockerApi::Call follow;
      follow.path = "/containers/" + job.ref + "/logs?follow=1&stdout=1&stderr=1" +
                    (followed_before ? "&tail=0" : "");
      follow.timeout_ms = state->running ? std::max<std::int64_t>(remaining, 1) : 60000;
      follow.on_body = [&](std::string_view chunk) {
        frames.feed(chunk);
        return true;
      };
      auto streamed = api.call(follow);
      followed_before = true;
      if (streamed || streamed.error().code == ErrorCode::timeout)
        continue;
    }
    // The engine did not answer: give it reconnect_grace to come back, else the job is lost.
    if (!engine_back(config_, config_.reconnect_grace)) {
      return make_error(ErrorCode::runner_lost, "the Docker engine at " + config_.socket +
                                                    " stopped answering while container " +
                                                    job.ref.substr(0, 12) + " of rebuild " +
                                                    job.rebuild_id + " was running");
    }
  }
  exit.log_tail = tail.text();
  space.sample();
  if (auto disk = space.fault(exit.log_tail, std::nullopt))
    exit.platform_fault = std::move(disk);
  return exit;
}

Result<JobOutputs> DockerRunner::collect(const JobHandle& job, const std::filesystem::path& dest) {
  return collect_outputs(job.work_dir / "out", dest);
}

void DockerRunner::cancel(const JobHandle& job) {
  auto api = api_for(config_);
  const auto grace = config_.kill_grace.count();
  (void)api.call({"POST",
                  "/containers/" + job.ref + "/stop?t=" + std::to_string(grace),
                  "",
                  (grace + 60) * 1000,
                  {}});
}

void DockerRunner::cleanup(const JobHandle& job) {
  auto api = api_for(config_);
  remove_container(api, job.ref);
  std::error_code ec;
  std::filesystem::remove_all(job.work_dir, ec);
}

Result<std::optional<JobHandle>> DockerRunner::find_running(const std::string& rebuild_id) {
  auto api = api_for(config_);
  const json filters = {{"label", {std::string(kRebuildIdLabel) + "=" + rebuild_id}}};
  auto response = api.call(
      {"GET", "/containers/json?all=1&filters=" + url_encode(filters.dump()), "", 30000, {}});
  if (!response)
    return make_error(ErrorCode::provision, "listing containers: " + response.error().message);
  if (response->status != 200)
    return engine_error(ErrorCode::provision, "listing containers", *response);
  const auto doc = json::parse(response->body, nullptr, false);
  if (!doc.is_array() || doc.empty())
    return std::optional<JobHandle>();
  const auto& container = doc.front();
  const auto labels = container.value("Labels", json::object());
  return std::optional<JobHandle>(JobHandle{rebuild_id, kind(),
                                            container.value("Id", std::string()),
                                            labels.value(kWorkDirLabel, std::string())});
}

}  // namespace reverify
