// Registry sync at scale: a directory registry of 100,000 model versions (generated in a temp
// dir: 1,000 models x 100 versions, one realistic manifest each) synced into a fresh store, the
// way reverifyd does at start (list + validate every manifest + one upsert transaction).
// Prints wall time and the peak RSS of the syncing process (measured in a child, so generating
// the files does not count), against the targets: <= 10 s and <= 300 MiB.
// Usage: registry_sync_bench [VERSIONS]   (default 100000)

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/registry_source.hpp"
#include "store/store.hpp"

namespace fs = std::filesystem;
using namespace reverify;

namespace {

std::string hex64(std::mt19937_64& rng) {
  static const char* digits = "0123456789abcdef";
  std::string out(64, '0');
  for (auto& c : out)
    c = digits[rng() % 16];
  return out;
}

void generate(const fs::path& root, int versions) {
  std::mt19937_64 rng(1);
  const int per_model = 100;
  for (int i = 0; i < versions; ++i) {
    const std::string model = "model-" + std::to_string(i / per_model);
    const std::string version = "2026." + std::to_string(i % per_model);
    nlohmann::json m = {
        {"schema", "reverify.manifest/v1"},
        {"model", model},
        {"version", version},
        {"owner", "team-" + std::to_string(i % 17)},
        {"level", "equivalent"},
        {"code",
         {{"repo", "https://git.example/" + model + ".git"},
          {"commit", hex64(rng).substr(0, 40)},
          {"dirty", false}}},
        {"environment",
         {{"image", "registry.example/train@sha256:" + hex64(rng)},
          {"accelerator", {{"model", "NVIDIA H100 80GB HBM3"}, {"count", 8}}},
          {"env", {{"PYTHONHASHSEED", "0"}}},
          {"world_size", 8}}},
        {"data",
         {{"snapshot",
           {{"kind", "files"}, {"uri", "file:///data/" + model}, {"sha256", hex64(rng)}}}}},
        {"seeds", {{"python", 42}, {"numpy", 42}}},
        {"run",
         {{"entrypoint", {"python3", "train.py"}},
          {"started_at", "2026-11-02T03:00:00Z"},
          {"duration_s", 5400},
          {"runner", "ci-17"}}},
        {"evaluation",
         {{"primary", {{"name", "accuracy"}, {"value", 0.9611}, {"higher_is_better", true}}},
          {"segments", {{"digit=8", {{"accuracy", 0.93}}}}}}},
        {"tolerance", {{"seed_runs", {{"accuracy", {0.9605, 0.9622, 0.9611, 0.9598, 0.9617}}}}}}};
    const auto dir = root / model / version;
    fs::create_directories(dir);
    std::ofstream(dir / "manifest.json") << m.dump(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int versions = argc > 1 ? std::atoi(argv[1]) : 100000;
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("reverify-sync-bench-" + std::to_string(rd()));
  fs::create_directories(dir);
  std::printf("generating %d manifests in %s ...\n", versions, dir.c_str());
  generate(dir / "registry", versions);
  // The generator's writeback is not the sync's cost: flush it first (the files stay cached, as a
  // registry the daemon syncs every few minutes would be). stdout too, or the child repeats it.
  ::sync();
  std::fflush(stdout);

  pid_t child = fork();
  if (child == 0) {
    auto start = std::chrono::steady_clock::now();
    auto store = Store::open(dir / "reverify.db", system_now);
    if (!store.ok())
      std::_Exit(3);
    RegistrySourceConfig config;
    config.name = "bench";
    config.root = dir / "registry";
    auto source = make_registry_source(config);
    auto listing = source->list();
    if (!listing.ok())
      std::_Exit(4);
    auto listed = std::chrono::steady_clock::now();
    auto changed = (*store)->sync_model_versions("bench", listing->rows);
    if (!changed.ok())
      std::_Exit(5);
    auto done = std::chrono::steady_clock::now();
    std::size_t invalid = 0;
    for (const auto& row : listing->rows)
      invalid += row.manifest_error ? 1 : 0;
    std::printf("listed+validated %zu manifests (%zu invalid) in %.2f s; store upsert %.2f s\n",
                listing->rows.size(), invalid,
                std::chrono::duration<double>(listed - start).count(),
                std::chrono::duration<double>(done - listed).count());
    std::printf("sync time: %.2f s (target <= 10 s)\n",
                std::chrono::duration<double>(done - start).count());
    std::fflush(stdout);
    std::_Exit(*changed == std::int64_t(versions) ? 0 : 6);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  std::printf("peak RSS of the syncing process: %.1f MiB (target <= 300 MiB)\n",
              double(usage.ru_maxrss) / 1024.0);
  std::printf("exit status of the sync: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  fs::remove_all(dir);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
