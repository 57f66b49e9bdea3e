// Seeds a state dir for gate_bench.sh: one model version with a passed verification, so that
// GET /v1/gate/digits-mlp/2026.11.1?max_age=40d answers 200 from reverifyd's memory.
// Usage: gate_bench_seed STATE_DIR

#include <cstdio>
#include <filesystem>

#include "store/store.hpp"

using namespace reverify;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gate_bench_seed STATE_DIR\n");
    return 2;
  }
  std::filesystem::create_directories(argv[1]);
  auto store = Store::open(std::filesystem::path(argv[1]) / "reverify.db", system_now);
  if (!store.ok())
    return 1;
  ModelVersionRow row;
  row.model = "digits-mlp";
  row.version = "2026.11.1";
  row.owner = "team-vision";
  row.level = "equivalent";
  row.source = "bench";
  row.location = "/srv/models/digits-mlp/2026.11.1/manifest.json";
  row.manifest_sha256 = std::string(64, 'a');
  if (!(*store)->upsert_model_version(row).ok())
    return 1;
  auto id = (*store)->enqueue(QueuedVerification{row.model, row.version});
  if (!id.ok() || !(*store)->mark_running(*id, "/tmp/w").ok())
    return 1;
  Verdict verdict;
  verdict.cls = VerdictClass::passed;
  verdict.explanation = "primary accuracy within its band";
  if (!(*store)->record_verdict(*id, verdict, {}, "", {}).ok())
    return 1;
  return 0;
}
