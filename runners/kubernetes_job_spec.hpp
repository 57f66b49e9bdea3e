#pragma once
// Pure construction of the batch/v1 Job that runs one rebuild (no I/O): names, labels, the pod
// template under the rebuild contract. Tested by unit tests and validated against the official
// OpenAPI schema (tests/k8s).

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.hpp"
#include "runners/kubernetes_config.hpp"
#include "runners/runner.hpp"

namespace reverify {

inline constexpr const char* kKubernetesContainerName = "rebuild";
inline constexpr const char* kRebuildIdAnnotation = "reverify.rebuild-id";
inline constexpr const char* kWorkDirAnnotation = "reverify/work-dir";
inline constexpr const char* kConfigAnnotation = "reverify/config.json";
inline constexpr const char* kSeedsAnnotation = "reverify/seeds.json";
// Where the contract's files appear inside the container.
inline constexpr const char* kPodContractDir = "/reverify/contract";
inline constexpr const char* kPodDataDir = "/reverify/data";
inline constexpr const char* kPodEvalDir = "/reverify/eval";
inline constexpr const char* kPodOutDir = "/reverify/out";

// A label value for the rebuild id: the id itself when it is a valid label value (<= 63 chars,
// alphanumeric at both ends, [-_.A-Za-z0-9] inside), otherwise a deterministic derivation
// (trimmed, shortened, with a hash of the full id). The full id is kept in an annotation.
std::string rebuild_id_label_value(std::string_view rebuild_id);

// The Job name: "rv-<lowercased, sanitised id prefix>-<hash>", a DNS-1123 label of <= 52 chars
// (so the pods' generated names and the job-name label stay valid). Deterministic per id.
std::string kubernetes_job_name(std::string_view rebuild_id);

// "reverify.rebuild-id=<label value>", for list and watch calls.
std::string rebuild_id_selector(std::string_view rebuild_id);

// The rebuild's folder on the outputs claim, relative to the claim root ("reverify/<id>").
std::filesystem::path rebuild_sub_path(const KubernetesConfig& config, std::string_view rebuild_id);

// The pod label saying whether the job may use the network ("none" or "allow").
inline constexpr const char* kNetworkLabel = "reverify.network";

// The Job object. Errors (invalid_argument/provision) name the field: no image or an image by
// tag, an invalid rebuild id, a data/eval path outside every configured input volume, contract
// files larger than the annotation limit.
Result<nlohmann::json> build_kubernetes_job(const RebuildSpec& spec,
                                            const KubernetesConfig& config);

// The networking.k8s.io/v1 NetworkPolicy that cuts the rebuild's pod off the network: it selects
// the pod by its rebuild-id label and allows no ingress and no egress. Named as the Job is.
nlohmann::json build_network_policy(const RebuildSpec& spec, const KubernetesConfig& config);

}  // namespace reverify
