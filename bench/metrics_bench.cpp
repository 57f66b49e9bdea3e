// /metrics at the registry benchmark's scale: a store seeded with 100,000 listed model versions
// (1,000 models x 100 versions; 70% passed, 10% failed:*, 10% only error:*, 10% never verified),
// then the read model built from it as reverifyd builds one after every commit, and a scrape
// served from it as an API thread serves one (the read model's series plus the daemon's own).
// Prints the exposition's size, lines per version, and times, against the baseline measured in
// the same run: the rest of the read-model build (without rendering /metrics) and the
// /v1/models body (the JSON a `reverify status` reads), with the ratios.
// Usage: metrics_bench [VERSIONS]   (default 100000)

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "api/daemon_metrics.hpp"
#include "api/http_api.hpp"
#include "api/metrics.hpp"
#include "api/page_parts.hpp"
#include "api/snapshot.hpp"
#include "bench/bench_timing.hpp"
#include "store/store.hpp"

namespace fs = std::filesystem;
using namespace reverify;

namespace {

using reverify::bench::best_of;
using reverify::bench::Clock;
using reverify::bench::seconds_since;

bool seed(Store& store, int versions) {
  std::vector<ModelVersionRow> rows;
  for (int i = 0; i < versions; ++i) {
    ModelVersionRow row;
    row.model = "model-" + std::to_string(i / 100);
    row.version = "2026." + std::to_string(i % 100);
    row.owner = "team-" + std::to_string(i % 17);
    row.level = "equivalent";
    row.source = "bench";
    row.location = "/srv/registry/" + row.model + "/" + row.version + "/manifest.json";
    row.manifest_sha256 = std::string(64, 'a');
    rows.push_back(std::move(row));
  }
  if (!store.sync_model_versions("bench", rows).ok())
    return false;
  for (int i = 0; i < versions; ++i) {
    const int kind = i % 10;  // 0-6 passed, 7 failed, 8 error only, 9 never
    if (kind == 9)
      continue;
    auto id = store.insert_running(QueuedVerification{rows[i].model, rows[i].version});
    if (!id.ok())
      return false;
    Verdict verdict;
    verdict.cls = kind < 7    ? VerdictClass::passed
                  : kind == 7 ? VerdictClass::failed_out_of_tolerance
                              : VerdictClass::error_provision;
    verdict.explanation = "primary:accuracy 0.9611 inside its band [0.9548, 0.9821]";
    if (!store.record_verdict(*id, verdict, {}, "", {}).ok())
      return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const int versions = argc > 1 ? std::atoi(argv[1]) : 100000;
  std::random_device rd;
  const fs::path dir =
      fs::temp_directory_path() / ("reverify-metrics-bench-" + std::to_string(rd()));
  fs::create_directories(dir);
  auto store = Store::open(dir / "reverify.db", system_now);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.error().message.c_str());
    return 1;
  }
  auto start = Clock::now();
  if (!seed(**store, versions)) {
    std::fprintf(stderr, "seeding the store failed\n");
    return 1;
  }
  std::printf("seeded %d listed versions (%d with a verdict) in %.1f s\n", versions,
              versions - versions / 10, seconds_since(start));

  const UnixSeconds now = system_now();
  auto api = std::make_shared<ApiConfig>();
  std::shared_ptr<const ReadModel> model;
  const double build_s = best_of(3, [&] {
    auto built = build_read_model(**store, nullptr, now, api);
    if (built.ok())
      model = *built;
  });
  if (!model) {
    std::fprintf(stderr, "building the read model failed\n");
    return 1;
  }
  const double render_s = best_of(5, [&] { (void)render_metrics(*model); });
  const std::string& text = model->metrics_text;
  std::size_t lines = 0;
  for (char c : text)
    lines += c == '\n';

  // A scrape as an API thread serves it: the read model's text and the daemon's own series.
  DaemonMetrics daemon(now);
  daemon.add_sources({"bench"});
  daemon.registry_synced("bench", true, now);
  ApiContext context;
  context.model = model;
  context.api = api.get();
  context.now = now;
  context.daemon_metrics = &daemon;
  const auto serve = [&](const std::string& target) {
    ApiRequest request(boost::beast::http::verb::get, target, 11);
    std::size_t bytes = 0;
    handle_api_request(request, context,
                       [&](ApiResponse response) { bytes = response.body().size(); });
    return bytes;
  };
  std::size_t scrape_bytes = 0, models_bytes = 0;
  const double scrape_s = best_of(5, [&] { scrape_bytes = serve("/metrics"); });
  const double models_s = best_of(3, [&] { models_bytes = serve("/v1/models"); });

  std::printf("/metrics: %.1f MiB, %zu lines (%.2f per listed version)\n",
              double(scrape_bytes) / (1024.0 * 1024.0), lines, double(lines) / versions);
  std::printf(
      "rendering the read model's series: %.3f s, once per read model; the whole build "
      "(baseline, rendering included): %.3f s; ratio %.2f\n",
      render_s, build_s, render_s / build_s);
  std::printf(
      "serving a scrape from it: %.3f s for %.1f MiB; /v1/models (baseline): %.3f s for "
      "%.1f MiB; ratio %.2f in time, %.2f in size\n",
      scrape_s, double(scrape_bytes) / (1024.0 * 1024.0), models_s,
      double(models_bytes) / (1024.0 * 1024.0), scrape_s / models_s,
      double(scrape_bytes) / double(models_bytes));
  fs::remove_all(dir);
  return 0;
}
