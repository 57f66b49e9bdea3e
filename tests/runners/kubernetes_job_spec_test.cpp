#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "runners/kubernetes_job_spec.hpp"
#include "runners/runner_factory.hpp"

using namespace reverify;
using nlohmann::json;

namespace {

const std::string kImage = "registry.example/train@sha256:" + std::string(64, 'a');

KubernetesConfig test_config() {
  KubernetesConfig config;
  config.namespace_name = "ml";
  config.input_volumes = {{"datasets", "/mnt/datasets"}, {"evalsets", "/mnt/eval"}};
  config.outputs.volume = {"reverify-out", "/mnt/out"};
  return config;
}

RebuildSpec test_spec() {
  RebuildSpec spec;
  spec.rebuild_id = "digits-mlp.2026.11.1-r7";
  spec.manifest.model = "digits-mlp";
  spec.manifest.version = "2026.11.1";
  spec.manifest.environment = Environment{};
  spec.manifest.environment->image = kImage;
  spec.manifest.environment->env = {{"PYTHONHASHSEED", "0"}, {"REVERIFY_OUT", "/elsewhere"}};
  spec.manifest.environment->accelerator = Accelerator{};
  spec.manifest.environment->accelerator->model = "NVIDIA H100 80GB HBM3";
  spec.manifest.environment->accelerator->count = 8;
  spec.manifest.run.entrypoint = {"python3", "train.py", "--epochs", "3"};
  spec.manifest.run.workdir = "/src";
  spec.manifest.run.source_date_epoch = 1793000000;
  spec.manifest.seeds = {{"python", 42}};
  spec.manifest.config = json{{"lr", 0.1}};
  spec.mode = RebuildMode::steps;
  spec.max_steps = 50;
  spec.data_path = "/mnt/datasets/digits/2026-11";
  spec.eval_path = "/mnt/eval/eval-v3.npy";
  spec.work_dir = "/var/lib/reverify/scratch/r7";
  spec.timeout = std::chrono::seconds(5400);
  return spec;
}

std::map<std::string, std::string> env_of(const json& job) {
  std::map<std::string, std::string> env;
  for (const auto& e : job["spec"]["template"]["spec"]["containers"][0]["env"])
    env[e["name"]] = e["value"];
  return env;
}

json mount_at(const json& job, const std::string& path) {
  for (const auto& m : job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]) {
    if (m["mountPath"] == path)
      return m;
  }
  return nullptr;
}

std::string claim_of(const json& job, const std::string& volume) {
  for (const auto& v : job["spec"]["template"]["spec"]["volumes"]) {
    if (v["name"] == volume)
      return v["persistentVolumeClaim"]["claimName"];
  }
  return "";
}

}  // namespace

TEST_CASE("the Job carries the rebuild contract, the image by digest and the GPU limit") {
  auto job = build_kubernetes_job(test_spec(), test_config());
  REQUIRE(job.ok());
  const json& spec = (*job)["spec"];
  CHECK((*job)["apiVersion"] == "batch/v1");
  CHECK((*job)["metadata"]["namespace"] == "ml");
  CHECK(spec["backoffLimit"] == 0);
  CHECK(spec["activeDeadlineSeconds"] == 5400);
  CHECK(spec["ttlSecondsAfterFinished"] == 86400);
  CHECK(spec["podFailurePolicy"]["rules"][0]["action"] == "Ignore");
  CHECK(spec["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["type"] == "DisruptionTarget");
  const json& pod = spec["template"]["spec"];
  CHECK(pod["restartPolicy"] == "Never");
  CHECK(pod["automountServiceAccountToken"] == false);
  const json& c = pod["containers"][0];
  CHECK(c["image"] == kImage);
  CHECK(c["command"] == json({"python3", "train.py", "--epochs", "3"}));
  CHECK_FALSE(c.contains("args"));
  CHECK(c["workingDir"] == "/src");
  CHECK(c["resources"]["limits"]["nvidia.com/gpu"] == 8);
  CHECK(c["securityContext"]["allowPrivilegeEscalation"] == false);
  CHECK(c["securityContext"]["capabilities"]["drop"] == json({"ALL"}));

  const auto env = env_of(*job);
  CHECK(env.at("PYTHONHASHSEED") == "0");
  CHECK(env.at("SOURCE_DATE_EPOCH") == "1793000000");
  CHECK(env.at("REVERIFY_MODE") == "steps");
  CHECK(env.at("REVERIFY_MAX_STEPS") == "50");
  CHECK(env.at("REVERIFY_OUT") == "/reverify/out");  // the manifest cannot redirect it
  CHECK(env.at("REVERIFY_DATA") == "/reverify/data/2026-11");
  CHECK(env.at("REVERIFY_EVAL") == "/reverify/eval/eval-v3.npy");
  CHECK(env.at("REVERIFY_CONFIG") == "/reverify/contract/config.json");
  CHECK(env.count("REVERIFY_SEED_OVERRIDE") == 0);

  const json data = mount_at(*job, "/reverify/data/2026-11");
  CHECK(data["readOnly"] == true);
  CHECK(data["subPath"] == "digits/2026-11");
  CHECK(claim_of(*job, data["name"]) == "datasets");
  const json eval = mount_at(*job, "/reverify/eval/eval-v3.npy");
  CHECK(eval["readOnly"] == true);
  CHECK(eval["subPath"] == "eval-v3.npy");
  CHECK(claim_of(*job, eval["name"]) == "evalsets");
  const json out = mount_at(*job, "/reverify/out");
  CHECK(out["readOnly"] == false);
  CHECK(out["subPath"] == "reverify/digits-mlp.2026.11.1-r7/out");
  CHECK(claim_of(*job, out["name"]) == "reverify-out");
  CHECK(mount_at(*job, "/reverify/contract")["readOnly"] == true);

  const json& annotations = spec["template"]["metadata"]["annotations"];
  CHECK(json::parse(annotations[kConfigAnnotation].get<std::string>()) == json{{"lr", 0.1}});
  CHECK(json::parse(annotations[kSeedsAnnotation].get<std::string>()) == json{{"python", 42}});
  CHECK((*job)["metadata"]["annotations"][kWorkDirAnnotation] == "/var/lib/reverify/scratch/r7");
}

TEST_CASE("a CPU job asks for no GPU; config options reach the pod") {
  auto spec = test_spec();
  spec.manifest.environment->accelerator->count = 0;
  spec.mode = RebuildMode::full;
  spec.seed_override = 7;
  spec.eval_path.reset();
  auto config = test_config();
  config.service_account = "trainer";
  config.image_pull_secret = "regcred";
  config.node_selector = {{"pool", "cpu"}};
  config.resources.memory = "8Gi";
  config.run_as_non_root = true;
  config.run_as_user = 1000;
  auto job = build_kubernetes_job(spec, config);
  REQUIRE(job.ok());
  const json& pod = (*job)["spec"]["template"]["spec"];
  const json& c = pod["containers"][0];
  CHECK_FALSE(c["resources"]["limits"].contains("nvidia.com/gpu"));
  CHECK(c["resources"]["limits"]["memory"] == "8Gi");
  CHECK(c["resources"]["requests"]["memory"] == "8Gi");
  CHECK(pod["serviceAccountName"] == "trainer");
  CHECK(pod["imagePullSecrets"][0]["name"] == "regcred");
  CHECK(pod["nodeSelector"]["pool"] == "cpu");
  CHECK(pod["securityContext"]["runAsNonRoot"] == true);
  CHECK(pod["securityContext"]["runAsUser"] == 1000);
  const auto env = env_of(*job);
  CHECK(env.at("REVERIFY_MODE") == "full");
  CHECK(env.count("REVERIFY_MAX_STEPS") == 0);
  CHECK(env.at("REVERIFY_SEED_OVERRIDE") == "7");
  CHECK(env.count("REVERIFY_EVAL") == 0);
}

TEST_CASE("inputs on one claim share one read-only volume; the out claim stays writable") {
  auto config = test_config();
  config.input_volumes = {{"shared", "/mnt/shared"}};
  config.outputs.volume = {"shared", "/mnt/shared"};
  auto spec = test_spec();
  spec.data_path = "/mnt/shared/data/";
  spec.eval_path = "/mnt/shared/eval.npy";
  auto job = build_kubernetes_job(spec, config);
  REQUIRE(job.ok());
  const json& volumes = (*job)["spec"]["template"]["spec"]["volumes"];
  int pvcs = 0;
  for (const auto& v : volumes) {
    if (!v.contains("persistentVolumeClaim"))
      continue;
    ++pvcs;
    CHECK(v["persistentVolumeClaim"]["readOnly"] == false);  // one mount of it writes
  }
  CHECK(pvcs == 1);
  CHECK(mount_at(*job, "/reverify/data/data")["readOnly"] == true);
  CHECK(env_of(*job).at("REVERIFY_DATA") == "/reverify/data/data");
}

TEST_CASE(
    "a remote input's fetched copy: mounted from the claim holding the work folder, or refused") {
  auto config = test_config();
  config.input_volumes.push_back({"reverify-work", "/var/lib/reverify/work"});
  auto spec = test_spec();
  spec.data_fetched = spec.eval_fetched = true;
  spec.data_path = "/var/lib/reverify/work/7/inputs/data";
  spec.eval_path = "/var/lib/reverify/work/7/inputs/eval/eval-v3.npy";
  auto job = build_kubernetes_job(spec, config);
  REQUIRE(job.ok());
  CHECK(env_of(*job).at("REVERIFY_DATA") == "/reverify/data/data");
  CHECK(mount_at(*job, "/reverify/data/data")["subPath"] == "7/inputs/data");
  CHECK(mount_at(*job, "/reverify/eval/eval-v3.npy")["subPath"] == "7/inputs/eval/eval-v3.npy");

  config.input_volumes.pop_back();
  job = build_kubernetes_job(spec, config);
  REQUIRE_FALSE(job.ok());
  CHECK(job.error().code == ErrorCode::provision);
  CHECK(job.error().message.find("data.snapshot.uri: the kubernetes runner cannot show the job "
                                 "(REVERIFY_DATA) the copy preflight fetched") == 0);
  CHECK(job.error().message.find("kubernetes.input_volumes[].daemon_path") != std::string::npos);
}

TEST_CASE("invalid inputs are errors naming the field") {
  auto config = test_config();
  SUBCASE("image by tag") {
    auto spec = test_spec();
    spec.manifest.environment->image = "python:3.11-slim";
    auto job = build_kubernetes_job(spec, config);
    REQUIRE_FALSE(job.ok());
    CHECK(job.error().code == ErrorCode::provision);
    CHECK(job.error().message.find("environment.image") != std::string::npos);
    CHECK(job.error().message.find("python:3.11-slim") != std::string::npos);
  }
  SUBCASE("no image") {
    auto spec = test_spec();
    spec.manifest.environment.reset();
    auto job = build_kubernetes_job(spec, config);
    REQUIRE_FALSE(job.ok());
    CHECK(job.error().message.find("environment.image") != std::string::npos);
  }
  SUBCASE("data outside every input claim") {
    auto spec = test_spec();
    spec.data_path = "/home/me/data";
    auto job = build_kubernetes_job(spec, config);
    REQUIRE_FALSE(job.ok());
    CHECK(job.error().message.find("data_path") != std::string::npos);
    CHECK(job.error().message.find("input_volumes") != std::string::npos);
  }
  SUBCASE("a path that climbs out of a claim") {
    auto spec = test_spec();
    spec.eval_path = "/mnt/eval/../secrets/key";
    auto job = build_kubernetes_job(spec, config);
    REQUIRE_FALSE(job.ok());
    CHECK(job.error().message.find("eval_path") != std::string::npos);
  }
  SUBCASE("no outputs claim") {
    config.outputs.volume.claim_name.clear();
    auto job = build_kubernetes_job(test_spec(), config);
    REQUIRE_FALSE(job.ok());
    CHECK(job.error().message.find("kubernetes.outputs.claim_name") != std::string::npos);
  }
  SUBCASE("a rebuild id with a slash") {
    auto spec = test_spec();
    spec.rebuild_id = "a/b";
    auto job = build_kubernetes_job(spec, config);
    REQUIRE_FALSE(job.ok());
    CHECK(job.error().message.find("rebuild_id") != std::string::npos);
  }
  SUBCASE("a config too large for annotations") {
    auto spec = test_spec();
    spec.manifest.config = json{{"blob", std::string(300 * 1024, 'x')}};
    auto job = build_kubernetes_job(spec, config);
    REQUIRE_FALSE(job.ok());
    CHECK(job.error().message.find("annotations") != std::string::npos);
  }
}

TEST_CASE("label values and Job names are valid and stable for any rebuild id") {
  const std::regex label_value("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
  const std::regex dns_label("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  const std::vector<std::string> ids = {"r1",
                                        "-starts-with-dash",
                                        "ends.with.dot.",
                                        "UPPER_and.dots-",
                                        std::string(200, 'x'),
                                        "..",
                                        "a" + std::string(70, '-') + "b"};
  std::set<std::string> labels, names;
  for (const auto& id : ids) {
    const auto label = rebuild_id_label_value(id);
    const auto name = kubernetes_job_name(id);
    CAPTURE(id);
    CHECK(label.size() <= 63);
    CHECK(std::regex_match(label, label_value));
    CHECK_FALSE(label.empty());
    CHECK(name.size() <= 52);
    CHECK(std::regex_match(name, dns_label));
    CHECK(label == rebuild_id_label_value(id));
    CHECK(name == kubernetes_job_name(id));
    labels.insert(label);
    names.insert(name);
  }
  CHECK(labels.size() == ids.size());
  CHECK(names.size() == ids.size());
  CHECK(rebuild_id_label_value("digits-mlp.2026.11.1-r7") ==
        "digits-mlp.2026.11.1-r7");  // kept as is
  CHECK(rebuild_id_selector("r1") == "reverify.rebuild-id=r1");
  // Ids differing only in case still get different Job names.
  CHECK(kubernetes_job_name("Run-A") != kubernetes_job_name("run-a"));
}

TEST_CASE("make_runner builds the kubernetes runner; a bad api_server names the field") {
  RunnerConfig config;
  config.kind = RunnerKind::kubernetes;
  config.kubernetes = test_config();
  config.kubernetes.api_server = "https://10.0.0.1:6443/";
  auto runner = make_runner(config);
  REQUIRE(runner.ok());
  CHECK((*runner)->kind() == RunnerKind::kubernetes);
  config.kubernetes.api_server = "10.0.0.1:6443";
  auto bad = make_runner(config);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("kubernetes.api_server") != std::string::npos);
}

TEST_CASE("a job without declared network gets a deny-all NetworkPolicy selecting its pod") {
  auto spec = test_spec();
  auto job = build_kubernetes_job(spec, test_config());
  REQUIRE(job.ok());
  const json& labels = (*job)["spec"]["template"]["metadata"]["labels"];
  CHECK(labels[kNetworkLabel] == "none");
  const json policy = build_network_policy(spec, test_config());
  CHECK(policy["apiVersion"] == "networking.k8s.io/v1");
  CHECK(policy["kind"] == "NetworkPolicy");
  CHECK(policy["metadata"]["name"] == (*job)["metadata"]["name"]);
  CHECK(policy["metadata"]["namespace"] == "ml");
  CHECK(policy["spec"]["podSelector"]["matchLabels"][kRebuildIdLabel] == labels[kRebuildIdLabel]);
  CHECK(policy["spec"]["policyTypes"] == json::array({"Ingress", "Egress"}));
  CHECK_FALSE(policy["spec"].contains("ingress"));  // no rule: nothing in
  CHECK_FALSE(policy["spec"].contains("egress"));   // nothing out
  spec.network = true;
  CHECK((*build_kubernetes_job(
            spec, test_config()))["spec"]["template"]["metadata"]["labels"][kNetworkLabel] ==
        "allow");
}

TEST_CASE("without NetworkPolicies the kubernetes runner needs runner.trust_job_code") {
  RunnerConfig config;
  config.kind = RunnerKind::kubernetes;
  config.kubernetes = test_config();
  config.kubernetes.api_server = "https://10.0.0.1:6443";
  config.kubernetes.network_policy = false;
  auto refused = make_runner(config);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("runner.kubernetes.network_policy: false") == 0);
  CHECK(refused.error().message.find("runner.trust_job_code: true") != std::string::npos);
  config.isolation.trust_job_code = true;
  auto trusted = make_runner(config);
  REQUIRE(trusted.ok());
  CHECK((*trusted)->job_code_trusted());
}
