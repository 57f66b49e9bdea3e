// Writes the Job objects the kubernetes runner generates for representative rebuilds into a
// folder, one JSON file each, for validate_job.mjs (official schema check).
//   k8s_dump_jobs DIR
#include <fstream>
#include <iostream>

#include "runners/kubernetes_job_spec.hpp"

using namespace reverify;

namespace {

RebuildSpec base_spec(const std::string& id) {
  RebuildSpec spec;
  spec.rebuild_id = id;
  spec.manifest.model = "digits-mlp";
  spec.manifest.version = "2026.11.1";
  spec.manifest.environment = Environment{};
  spec.manifest.environment->image = "registry.example/train@sha256:" + std::string(64, 'c');
  spec.manifest.environment->env = {{"PYTHONHASHSEED", "0"},
                                    {"CUBLAS_WORKSPACE_CONFIG", ":4096:8"}};
  spec.manifest.run.entrypoint = {"python3", "train.py"};
  spec.manifest.seeds = {{"python", 42}, {"numpy", 42}};
  spec.work_dir = "/var/lib/reverify/scratch/" + id;
  return spec;
}

KubernetesConfig base_config() {
  KubernetesConfig config;
  config.namespace_name = "ml-verify";
  config.input_volumes = {{"datasets", "/mnt/datasets"}};
  config.outputs.volume = {"reverify-out", "/mnt/out"};
  return config;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: k8s_dump_jobs DIR\n";
    return 2;
  }
  std::vector<std::pair<RebuildSpec, KubernetesConfig>> cases;

  auto cpu = base_spec("cpu-full-1");  // CPU, full mode, no inputs, minimal config
  cases.emplace_back(cpu, base_config());

  auto gpu = base_spec("digits-mlp.2026.11.1-gpu-steps");  // every option the runner sets
  gpu.manifest.environment->accelerator = Accelerator{};
  gpu.manifest.environment->accelerator->model = "NVIDIA H100 80GB HBM3";
  gpu.manifest.environment->accelerator->count = 8;
  gpu.manifest.run.workdir = "/src";
  gpu.manifest.run.source_date_epoch = 1793000000;
  gpu.manifest.config = nlohmann::json{{"lr", 0.1}, {"layers", {64, 32}}};
  gpu.mode = RebuildMode::steps;
  gpu.max_steps = 100;
  gpu.seed_override = 3;
  gpu.data_path = "/mnt/datasets/digits/2026-11";
  gpu.eval_path = "/mnt/datasets/eval/eval-v3.npy";
  gpu.timeout = std::chrono::seconds(7200);
  auto full = base_config();
  full.service_account = "reverify-trainer";
  full.image_pull_secret = "regcred";
  full.node_selector = {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}};
  full.tolerations = nlohmann::json::array(
      {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  full.resources = {"16", "128Gi"};
  full.run_as_non_root = true;
  full.run_as_user = 1000;
  full.fs_group = 1000;
  cases.emplace_back(gpu, full);

  auto shared = base_spec("-odd.id_" + std::string(80, 'x') + ".");  // derived label, one claim
  shared.data_path = "/mnt/shared/data";
  auto one_claim = base_config();
  one_claim.input_volumes = {{"shared", "/mnt/shared"}};
  one_claim.outputs.volume = {"shared", "/mnt/shared"};
  cases.emplace_back(shared, one_claim);

  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto job = build_kubernetes_job(cases[i].first, cases[i].second);
    if (!job) {
      std::cerr << "k8s_dump_jobs: " << job.error().to_string() << "\n";
      return 1;
    }
    const std::string path = std::string(argv[1]) + "/job-" + std::to_string(i) + ".json";
    std::ofstream out(path);
    out << job->dump(2) << "\n";
    if (!out) {
      std::cerr << "k8s_dump_jobs: cannot write " << path << "\n";
      return 1;
    }
  }
  return 0;
}
