#pragma once
// settings/: reverify.yaml read into a typed Config, shared by reverifyd and the CLI's --config.
// The only layer that reads YAML (yaml-cpp). Includes core/, policies/, attest/ (the signing
// key, read at load), runners/ and pager/ for the typed structs it fills; never store/ or above.
//
// reverify.yaml as a typed struct with defaults (docs/design.md, "Code conventions": options
// sanitized in one place). yaml-cpp is used only inside settings/ (config.cpp, the `pager:`
// section's reader and the two YAML helpers, yaml_section.hpp and yaml_duplicates.hpp), never in
// this header or by another layer. Every validation error names its YAML path
// ("schedule.per_cycle: must be >= 1, got 0"). Secrets are never inline: only `*_file` keys,
// read at load. The commented template with every key is config/production.yaml.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attest/ed25519.hpp"
#include "attest/summary.hpp"
#include "core/code_mirrors.hpp"
#include "core/result.hpp"
#include "pager/pager_config.hpp"
#include "policies/release_plan.hpp"
#include "policies/verdict.hpp"
#include "runners/runner_config.hpp"

namespace reverify {

enum class SourceKind { directory, http_index };

template <>
struct EnumNames<SourceKind> {
  static constexpr EnumName<SourceKind> table[] = {
      {SourceKind::directory, "directory"},
      {SourceKind::http_index, "http-index"},
  };
};

struct RegistrySourceConfig {
  std::string name;  // [A-Za-z0-9._-]; recorded on each model version
  SourceKind kind = SourceKind::directory;
  std::filesystem::path root;        // directory: <root>/<model>/<version>/manifest.json
  std::string url;                   // http-index: JSON index of manifest URLs
  std::string ca_file;               // http-index: TLS trust anchor; "" = system store
  std::string token;                 // http-index: bearer token, read from token_file
  std::filesystem::path token_file;  // where it was read from; "" = none
  std::int64_t timeout_ms = 30'000;  // http-index: per request
};

// models.<name>.network: whether the model's jobs may use the network. none (the default) cuts
// them off it: an undeclared network read is a hidden live input.
enum class JobNetwork { none, allow };
template <>
struct EnumNames<JobNetwork> {
  static constexpr EnumName<JobNetwork> table[] = {
      {JobNetwork::none, "none"},
      {JobNetwork::allow, "allow"},
  };
};

// Per-model metadata the rotation policy needs and manifests do not carry.
struct ModelPolicy {
  int criticality = 0;                // higher breaks ties first
  std::optional<bool> large;          // absent: large when a full rebuild costs >= large_gpu_hours
  std::int64_t max_steps = 100;       // steps mode: REVERIFY_MAX_STEPS
  std::int64_t timeout_s = 6 * 3600;  // one rebuild, whole job
  // tolerance.detect overrides (check key -> shift to catch with 80% probability), over the
  // manifest's and the stored calibration's
  std::map<std::string, double> detect;
  // cadence: mode -> how often it runs ({steps: 1mo, full: 3mo}); empty = the large-model rule
  // (schedule.full_every_n_cycles). A model's cadence replaces the default's whole.
  std::map<RebuildMode, std::int64_t> cadence_s;
  // cadence.at_release: the mode a new release of the model is verified in; absent =
  // schedule.at_release.mode.
  std::optional<RebuildMode> at_release_mode;
  JobNetwork network = JobNetwork::none;
};

struct ScheduleConfig {
  std::optional<std::string> cron;         // absent: calendar month (UTC)
  std::size_t per_cycle = 10;              // scheduled verifications per cycle
  std::size_t max_concurrent = 2;          // verifications running at once
  std::optional<double> gpu_budget_hours;  // per cycle; absent = unlimited
  std::size_t full_every_n_cycles = 4;     // large models: full rebuild every Nth verification
  double large_gpu_hours = 8;              // a full rebuild this costly makes a model large
  double steps_cost_fraction = 0.05;       // cost of a steps rebuild relative to a full one
  std::int64_t jitter_s = 600;             // scheduled starts spread over [0, jitter]
  std::int64_t retry_initial_s = 600;      // error:* verdicts retry after this, doubling...
  std::int64_t retry_max_s = 86'400;       // ...up to this
  int retry_max_attempts = 5;              // attempts per verification, the first included
  // Underpowered versions calibrated per cycle in the budget the verifications leave, and the
  // seed runs such a calibration may hold in all (calibrate --until-power --max-runs).
  std::size_t calibrations_per_cycle = 1;
  std::size_t calibration_max_runs = 100;
  // schedule.at_release: a version first seen by a sync after its source's first listing is
  // verified promptly, on this budget of its own (per UTC day), apart from per_cycle and
  // gpu_budget_hours (policies/release_plan.hpp).
  AtReleaseConfig at_release;
};

struct ApiConfig {
  std::string address = "127.0.0.1";  // loopback unless configured
  std::uint16_t port = 8420;
  std::string token;                 // bearer token for POST, read from token_file
  std::filesystem::path token_file;  // where it was read from; "" = none
  std::size_t max_header_bytes = 8 * 1024;
  std::size_t max_body_bytes = 16 * 1024;
  std::int64_t request_timeout_ms = 10'000;      // whole request read, per request
  std::int64_t default_max_age_s = 40 * 86'400;  // gate, when the query gives no max_age
  // gate.require_power: a pass judged against a band that cannot catch its declared
  // tolerance.detect (underpowered) does not count as verified.
  bool gate_require_power = false;
  // "--config <this file>" (VerdictPolicy::command_scope): the pages' suggested commands carry it.
  std::string command_scope;
  // Every token this config read (the API's and the sources'): redacted from every response.
  std::vector<std::string> secrets;
};

// Signed verification summaries (attest/): one per passed or failed:* verdict when key_file is
// set. Rotation: point key_file at a new key and reload; keep the old public key where summaries
// are verified.
struct AttestationConfig {
  std::filesystem::path key_file;  // Ed25519 PKCS#8 PEM, no group/other access; "" = off
  std::shared_ptr<const Ed25519SigningKey> key;  // read from key_file at load
  SummaryIdentity identity;  // verifier_id (required with key_file), resource_uri template
  bool enabled() const { return key != nullptr; }
};

struct Config {
  std::filesystem::path state_dir = "/var/lib/reverify";  // reverify.db and work/ live here
  std::filesystem::path work_dir;                         // "" = <state_dir>/work
  ApiConfig api;
  std::vector<RegistrySourceConfig> sources;
  std::int64_t sync_interval_s = 300;
  ScheduleConfig schedule;
  VerdictPolicy verdict;
  ModelPolicy model_defaults;                 // models.default
  std::map<std::string, ModelPolicy> models;  // models.<name>, merged over the defaults
  RunnerConfig runner;                        // runner: (scratch roots default under state_dir)
  // code_mirrors: code.repo URL prefix -> local folder (resolved against the config's folder) or
  // another URL, git insteadOf semantics (core/code_mirrors.hpp); the CLI's --code-mirror adds on
  // top.
  CodeMirrors code_mirrors;
  PagerConfig pager;
  AttestationConfig attestation;
  std::int64_t stop_timeout_s = 60;  // SIGTERM: running jobs get this long to finish
  // Every setting as the file wrote it: YAML path ("schedule.per_cycle", "sources[0].root") ->
  // its scalar, so a reload can say which settings changed (changed_settings).
  std::map<std::string, std::string> written;

  std::filesystem::path db_path() const { return state_dir / "reverify.db"; }
  std::filesystem::path work_root() const {
    return work_dir.empty() ? state_dir / "work" : work_dir;
  }
  const ModelPolicy& model_policy(const std::string& model) const;
};

// Parses YAML text; `origin` names the file in errors. Relative paths resolve against base_dir.
Result<Config> parse_config(const std::string& yaml_text, const std::filesystem::path& base_dir);
// A config is refused when empty (no settings at all), when it does not name state_dir, when a
// mapping names a key twice, and when `path` is a directory or not a regular file.
Result<Config> load_config(const std::filesystem::path& path);
// reverifyd's config (at start, --check-config and every SIGHUP): load_config, and at least one
// registry source. The CLI's --config may do without one (--registry, --manifest).
Result<Config> load_daemon_config(const std::filesystem::path& path);

// What a reload may not change, because reverifyd applies it only at start: the keys of `next`
// that differ from `running` among state_dir, work_dir, api.address, api.port and runner (the
// whole section). Empty = the reload may be applied.
std::vector<std::string> restart_only_changes(const Config& running, const Config& next);

// What a reload changes: the YAML paths of the settings `next` writes differently from `running`
// (set, changed or removed, in path order), and "api.token_file (its token)" when the file now
// holds another token. Names only: a value is never logged. Empty = nothing changed.
std::vector<std::string> changed_settings(const Config& running, const Config& next);

// The file read as far as it goes, for --check-config: the Config with every valid value applied
// (defaults where a value was wrong) and every error, one per line ("<yaml path>: <message>").
struct ConfigReading {
  Config config;
  std::vector<std::string> errors;
  ErrorCode code = ErrorCode::invalid_argument;  // of the errors, when there are any
  bool settings_read = false;   // a mapping of settings was read (not: unreadable, empty, no YAML)
  bool names_the_file = false;  // the file could not be read as a config; the error names it
};
ConfigReading read_config_text(const std::string& yaml_text, const std::filesystem::path& base_dir);
ConfigReading read_config_file(const std::filesystem::path& path);
// read_config_file, and reverifyd's own requirement: at least one registry source.
ConfigReading read_daemon_config_file(const std::filesystem::path& path);

}  // namespace reverify
