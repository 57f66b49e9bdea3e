#include "runners/kubernetes_job_spec.hpp"

#include "core/names.hpp"
#include "runners/job_contract.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>

namespace reverify {
namespace {

using nlohmann::json;

// Kubernetes' TotalAnnotationSizeLimitB: every annotation key and value together.
constexpr std::size_t kAnnotationLimitBytes = 256 * 1024;
constexpr std::size_t kMaxLabelValue = 63;
constexpr std::size_t kMaxJobName = 52;

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// FNV-1a: a short, stable disambiguator for shortened names, not a security boundary (the full
// id is checked in an annotation on reattach).
std::string short_hash(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(h ^ (h >> 32)));
  return buf;
}

bool is_valid_label_value(std::string_view v) {
  if (v.empty())
    return true;
  if (v.size() > kMaxLabelValue || !is_alnum(v.front()) || !is_alnum(v.back()))
    return false;
  for (char c : v) {
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.')
      return false;
  }
  return true;
}

// Keeps at most `keep` characters of `text` that satisfy `allowed`, trimmed so that both ends
// are alphanumeric.
std::string trimmed_prefix(std::string_view text, std::size_t keep, bool (*allowed)(char)) {
  std::string out;
  for (char c : text) {
    if (out.size() == keep)
      break;
    if (allowed(c))
      out.push_back(c);
  }
  while (!out.empty() && !is_alnum(out.back()))
    out.pop_back();
  std::size_t start = 0;
  while (start < out.size() && !is_alnum(out[start]))
    ++start;
  return out.substr(start);
}

std::string join_name(const std::string& prefix, const std::string& hash) {
  return prefix.empty() ? hash : prefix + "-" + hash;
}

bool is_valid_rebuild_id(std::string_view id) {
  if (id.empty() || id.size() > 200)
    return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

bool is_image_digest(const std::string& image) {
  return parse_digest_reference(image).has_value();
}

// The claim holding a daemon-side path and the path relative to the claim's root.
struct ClaimPath {
  std::string claim_name;
  std::string sub_path;  // "" = the claim's root
};

Result<ClaimPath> claim_for(const std::filesystem::path& path, const KubernetesConfig& config,
                            const char* what) {
  if (!path.is_absolute()) {
    return make_error(
        ErrorCode::invalid_argument,
        std::string(what) + ": must be an absolute path, got \"" + path.string() + "\"");
  }
  const auto normal = path.lexically_normal();
  for (const auto& volume : config.input_volumes) {
    const auto rel = normal.lexically_relative(volume.daemon_path.lexically_normal());
    if (rel.empty() || *rel.begin() == "..")
      continue;
    return ClaimPath{volume.claim_name, rel == "." ? std::string() : rel.generic_string()};
  }
  return make_error(ErrorCode::provision,
                    std::string(what) + ": \"" + path.string() +
                        "\" is not under any kubernetes.input_volumes[].daemon_path, so the job "
                        "cannot mount it");
}

json volume_mount(const std::string& volume, const std::string& mount_path,
                  const std::string& sub_path, bool read_only) {
  json mount = {{"name", volume}, {"mountPath", mount_path}, {"readOnly", read_only}};
  if (!sub_path.empty())
    mount["subPath"] = sub_path;
  return mount;
}

// Volumes keyed by claim name, so that data and eval on one claim share one volume.
class PodVolumes {
 public:
  std::string name_for(const std::string& claim, bool read_only) {
    auto it =
        claims_.try_emplace(claim, Entry{"pvc-" + std::to_string(claims_.size()), true}).first;
    it->second.read_only = it->second.read_only && read_only;
    return it->second.volume_name;
  }
  json to_json() const {
    json volumes = json::array();
    for (const auto& [claim, entry] : claims_) {
      volumes.push_back(
          {{"name", entry.volume_name},
           {"persistentVolumeClaim", {{"claimName", claim}, {"readOnly", entry.read_only}}}});
    }
    return volumes;
  }

 private:
  struct Entry {
    std::string volume_name;
    bool read_only;
  };
  std::map<std::string, Entry> claims_;
};

json env_list(const std::map<std::string, std::string>& env) {
  json list = json::array();
  for (const auto& [name, value] : env)
    list.push_back({{"name", name}, {"value", value}});
  return list;
}

json contract_volume() {
  auto item = [](const char* file, const char* annotation) {
    return json{
        {"path", file},
        {"fieldRef", {{"fieldPath", std::string("metadata.annotations['") + annotation + "']"}}}};
  };
  return {{"name", "contract"},
          {"downwardAPI",
           {{"items", json::array({item("config.json", kConfigAnnotation),
                                   item("seeds.json", kSeedsAnnotation)})}}}};
}

json security_context() {
  return {{"allowPrivilegeEscalation", false},
          {"privileged", false},
          {"capabilities", {{"drop", json::array({"ALL"})}}}};
}

json pod_security_context(const KubernetesConfig& config) {
  json ctx = {{"seccompProfile", {{"type", "RuntimeDefault"}}}};
  if (config.run_as_non_root)
    ctx["runAsNonRoot"] = true;
  if (config.run_as_user)
    ctx["runAsUser"] = *config.run_as_user;
  if (config.fs_group)
    ctx["fsGroup"] = *config.fs_group;
  return ctx;
}

json resources(const RebuildSpec& spec, const KubernetesConfig& config) {
  json limits = json::object();
  json requests = json::object();
  const auto& environment = spec.manifest.environment;
  if (environment && environment->accelerator && environment->accelerator->count > 0) {
    limits["nvidia.com/gpu"] = environment->accelerator->count;
  }
  if (config.resources.cpu)
    limits["cpu"] = requests["cpu"] = *config.resources.cpu;
  if (config.resources.memory)
    limits["memory"] = requests["memory"] = *config.resources.memory;
  json out = json::object();
  if (!limits.empty())
    out["limits"] = limits;
  if (!requests.empty())
    out["requests"] = requests;
  return out;
}

std::string basename_of(const std::filesystem::path& path) {
  auto name = path.lexically_normal().filename();
  if (name.empty())
    name = path.lexically_normal().parent_path().filename();
  return name.string();
}

}  // namespace

std::string rebuild_id_label_value(std::string_view rebuild_id) {
  if (is_valid_label_value(rebuild_id))
    return std::string(rebuild_id);
  auto allowed = [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; };
  return join_name(trimmed_prefix(rebuild_id, kMaxLabelValue - 9, allowed), short_hash(rebuild_id));
}

std::string kubernetes_job_name(std::string_view rebuild_id) {
  std::string lowered;
  for (char c : rebuild_id) {
    lowered.push_back(is_alnum(c) ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                                  : '-');
  }
  auto allowed = [](char c) { return is_alnum(c) || c == '-'; };
  const std::size_t room = kMaxJobName - 3 - 9;  // "rv-" and "-<8 hex>"
  return "rv-" + join_name(trimmed_prefix(lowered, room, allowed), short_hash(rebuild_id));
}

std::string rebuild_id_selector(std::string_view rebuild_id) {
  return std::string(kRebuildIdLabel) + "=" + rebuild_id_label_value(rebuild_id);
}

std::filesystem::path rebuild_sub_path(const KubernetesConfig& config,
                                       std::string_view rebuild_id) {
  return std::filesystem::path(config.outputs.sub_dir) / std::string(rebuild_id);
}

namespace {

// What the Job cannot be built without: a valid rebuild id, an image by digest, an entrypoint,
// a timeout and the outputs claim.
Status check_job_request(const RebuildSpec& spec, const KubernetesConfig& config) {
  if (!is_valid_rebuild_id(spec.rebuild_id)) {
    return make_error(
        ErrorCode::invalid_argument,
        "rebuild_id: expected [A-Za-z0-9._-]{1,200}, got \"" + spec.rebuild_id + "\"");
  }
  const auto& m = spec.manifest;
  if (!m.environment || !m.environment->image) {
    return make_error(
        ErrorCode::provision,
        "environment.image: the kubernetes runner needs an image, the manifest has none");
  }
  const std::string& image = *m.environment->image;
  if (!is_image_digest(image)) {
    return make_error(
        ErrorCode::provision,
        "environment.image: must be referenced by digest (name@sha256:<64 hex>), got \"" + image +
            "\"");
  }
  if (m.run.entrypoint.empty()) {
    return make_error(ErrorCode::invalid_argument,
                      "run.entrypoint: must be a non-empty argv array");
  }
  if (spec.timeout.count() <= 0) {
    return make_error(ErrorCode::invalid_argument, "timeout: must be at least one second");
  }
  if (config.outputs.volume.claim_name.empty()) {
    return make_error(ErrorCode::invalid_argument,
                      "kubernetes.outputs.claim_name: required (the job writes its outputs there)");
  }
  return {};
}

// The job's one container: the image, the contract's environment and paths, its input and
// output volumes (added to `volumes`).
Result<json> job_container(const RebuildSpec& spec, const KubernetesConfig& config,
                           PodVolumes& volumes) {
  const auto& m = spec.manifest;
  const std::string& image = *m.environment->image;
  json mounts = json::array();
  ContractPaths paths{std::string(kPodContractDir) + "/config.json",
                      std::string(kPodContractDir) + "/seeds.json", kPodOutDir, "", ""};
  mounts.push_back(volume_mount("contract", kPodContractDir, "", true));

  struct Input {
    const JobInput& job;
    const char* field;
    const char* pod_dir;
    std::string& in_pod;
  };
  const auto inputs = job_inputs(spec);
  for (const Input& input : {Input{inputs[0], "data_path", kPodDataDir, paths.data},
                             Input{inputs[1], "eval_path", kPodEvalDir, paths.eval}}) {
    if (!input.job.path)
      continue;
    auto claim = claim_for(*input.job.path, config, input.field);
    if (!claim && input.job.fetched) {
      return fetched_input_unseen(input.job, "kubernetes",
                                  claim.error().message +
                                      "; put the daemon's work_dir under a "
                                      "kubernetes.input_volumes[].daemon_path");
    }
    if (!claim)
      return claim.error();
    // Keep the file or folder name: jobs look at extensions (eval-v3.npy).
    input.in_pod = std::string(input.pod_dir) + "/" + basename_of(*input.job.path);
    mounts.push_back(volume_mount(volumes.name_for(claim->claim_name, true), input.in_pod,
                                  claim->sub_path, true));
  }
  const auto out_sub = (rebuild_sub_path(config, spec.rebuild_id) / "out").generic_string();
  mounts.push_back(volume_mount(volumes.name_for(config.outputs.volume.claim_name, false),
                                kPodOutDir, out_sub, false));

  json container = {{"name", kKubernetesContainerName},
                    {"image", image},
                    {"imagePullPolicy", "IfNotPresent"},
                    {"command", m.run.entrypoint},
                    {"env", env_list(contract_environment(spec, paths))},
                    {"volumeMounts", mounts},
                    {"securityContext", security_context()},
                    {"resources", resources(spec, config)}};
  if (m.run.workdir)
    container["workingDir"] = *m.run.workdir;
  return container;
}

// The pod around it: no service-account token, no service links, the config's scheduling keys.
json job_pod_spec(const json& container, const PodVolumes& volumes,
                  const KubernetesConfig& config) {
  json pod_volumes = volumes.to_json();
  pod_volumes.push_back(contract_volume());

  json pod_spec = {{"restartPolicy", "Never"},
                   {"automountServiceAccountToken", false},
                   {"enableServiceLinks", false},  // no service env vars beyond the contract
                   {"terminationGracePeriodSeconds", config.termination_grace_period_s},
                   {"securityContext", pod_security_context(config)},
                   {"containers", json::array({container})},
                   {"volumes", pod_volumes}};
  if (!config.service_account.empty())
    pod_spec["serviceAccountName"] = config.service_account;
  if (!config.image_pull_secret.empty()) {
    pod_spec["imagePullSecrets"] = json::array({{{"name", config.image_pull_secret}}});
  }
  if (!config.node_selector.empty())
    pod_spec["nodeSelector"] = config.node_selector;
  if (!config.tolerations.empty())
    pod_spec["tolerations"] = config.tolerations;
  return pod_spec;
}

// The job's labels and annotations; the pod's carry the resolved config and seeds, within the
// annotation size limit.
struct JobMetadata {
  json labels, job_annotations, pod_annotations;
};
Result<JobMetadata> job_metadata(const RebuildSpec& spec) {
  const auto& m = spec.manifest;
  const std::string config_json = (m.config ? *m.config : json::object()).dump();
  const std::string seeds_json = json(m.seeds).dump();
  JobMetadata meta;
  meta.labels = {{kRebuildIdLabel, rebuild_id_label_value(spec.rebuild_id)},
                 {"app.kubernetes.io/managed-by", "reverify"},
                 {kNetworkLabel, spec.network ? "allow" : "none"}};
  meta.job_annotations = {{kRebuildIdAnnotation, spec.rebuild_id},
                          {kWorkDirAnnotation, spec.work_dir.string()},
                          {"reverify/model-version", m.id()}};
  meta.pod_annotations = {{kRebuildIdAnnotation, spec.rebuild_id},
                          {kConfigAnnotation, config_json},
                          {kSeedsAnnotation, seeds_json}};
  std::size_t annotation_bytes = 0;
  for (const auto& [key, value] : meta.pod_annotations.items()) {
    annotation_bytes += key.size() + value.get_ref<const std::string&>().size();
  }
  if (annotation_bytes > kAnnotationLimitBytes) {
    return make_error(
        ErrorCode::provision,
        "config: the resolved config and seeds take " + std::to_string(annotation_bytes) +
            " bytes; the kubernetes runner passes them as pod annotations, limited to " +
            std::to_string(kAnnotationLimitBytes) + " bytes");
  }
  return meta;
}

}  // namespace

Result<json> build_kubernetes_job(const RebuildSpec& spec, const KubernetesConfig& config) {
  if (auto request = check_job_request(spec, config); !request)
    return request.error();
  PodVolumes volumes;
  auto container = job_container(spec, config, volumes);
  if (!container)
    return container.error();
  const json pod_spec = job_pod_spec(*container, volumes, config);
  auto meta = job_metadata(spec);
  if (!meta)
    return meta.error();
  const json& labels = meta->labels;
  const json& pod_annotations = meta->pod_annotations;
  const json& job_annotations = meta->job_annotations;
  json job_spec = {
      {"backoffLimit", 0},
      {"activeDeadlineSeconds", static_cast<std::int64_t>(spec.timeout.count())},
      {"ttlSecondsAfterFinished", config.ttl_seconds_after_finished},
      // A preempted or evicted pod does not count as a failure: the Job makes a new pod. Only
      // once the old one has fully terminated ("Failed"), so two attempts never share the out
      // folder at the same time (required value when podFailurePolicy is set).
      {"podFailurePolicy",
       {{"rules", json::array({{{"action", "Ignore"},
                                {"onPodConditions", json::array({{{"type", "DisruptionTarget"},
                                                                  {"status", "True"}}})}}})}}},
      {"podReplacementPolicy", "Failed"},
      {"template",
       {{"metadata", {{"labels", labels}, {"annotations", pod_annotations}}}, {"spec", pod_spec}}}};

  return json{{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata",
               {{"name", kubernetes_job_name(spec.rebuild_id)},
                {"namespace", config.namespace_name},
                {"labels", labels},
                {"annotations", job_annotations}}},
              {"spec", job_spec}};
}

nlohmann::json build_network_policy(const RebuildSpec& spec, const KubernetesConfig& config) {
  const std::string label = rebuild_id_label_value(spec.rebuild_id);
  return json{
      {"apiVersion", "networking.k8s.io/v1"},
      {"kind", "NetworkPolicy"},
      {"metadata",
       {{"name", kubernetes_job_name(spec.rebuild_id)},
        {"namespace", config.namespace_name},
        {"labels", {{kRebuildIdLabel, label}, {"app.kubernetes.io/managed-by", "reverify"}}}}},
      // Both policy types and no rules: nothing in, nothing out.
      {"spec",
       {{"podSelector", {{"matchLabels", {{kRebuildIdLabel, label}}}}},
        {"policyTypes", json::array({"Ingress", "Egress"})}}}};
}

}  // namespace reverify
