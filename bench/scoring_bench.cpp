// scoring_bench: policies/scoring's full metric set of one task, over the whole eval set and 20
// segments, on N predictions, against scikit-learn computing the same metrics on the same
// arrays in the same run (bench/scoring_bench.py, Debian's /usr/bin/python3). Tasks: binary
// (1-D probabilities, float32-rounded so that scores tie as real outputs do), multiclass (10
// softmax columns), regression. Only the scoring is timed on both sides, never the file reads.
// Prints the CPU model and the load, both sides' CPU time (the figure the ratio is taken on: it
// holds on a machine other work shares, where wall time does not) and wall time, the ratios, and
// how far the whole set's values agree.
//
// Usage: scoring_bench [N] [SOURCE_DIR] [TASK...]   (defaults: 1000000, "." and binary
// multiclass regression; run from the repository root)

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include <nlohmann/json.hpp>

#include "bench/bench_process.hpp"
#include "core/predictions.hpp"
#include "policies/scoring.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr std::size_t kSegments = 20;
constexpr std::size_t kClasses = 10;

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Timing {
  double cpu = 1e300, wall = 1e300;  // the best of the runs
};

template <class Fn>
Timing best_of(int runs, Fn fn) {
  Timing best;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    const double start_cpu = thread_cpu_seconds();
    fn();
    best.cpu = std::min(best.cpu, thread_cpu_seconds() - start_cpu);
    best.wall = std::min(best.wall, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

struct Data {
  reverify::ScoringInputs inputs;
  reverify::Predictions predictions;
};

Data generate(reverify::ScoringTask task, std::size_t n) {
  std::mt19937_64 rng(20261201);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_int_distribution<std::size_t> segment(0, kSegments - 1);
  reverify::ScoringSpec spec;
  spec.task = task;
  if (task == reverify::ScoringTask::multiclass)
    spec.classes = kClasses;
  Data d{reverify::scoring_settings(spec), {}};
  auto& in = d.inputs;
  auto& p = d.predictions;
  p.rows = n;
  reverify::SegmentKey key{"segment", {}};
  for (std::size_t v = 0; v < kSegments; ++v)
    key.keys.values.push_back(std::to_string(v));
  for (std::size_t i = 0; i < n; ++i) {
    key.keys.codes.push_back(static_cast<std::uint32_t>(segment(rng)));
    if (task == reverify::ScoringTask::binary) {
      const double y = normal(rng) < -0.5 ? 1 : 0;
      in.labels.push_back(y);
      p.values.push_back(static_cast<float>(1 / (1 + std::exp(-(normal(rng) + 2 * y - 1)))));
    } else if (task == reverify::ScoringTask::multiclass) {
      const auto y = static_cast<std::size_t>(rng() % kClasses);
      in.labels.push_back(static_cast<double>(y));
      double row[kClasses], sum = 0;
      for (std::size_t c = 0; c < kClasses; ++c)
        sum += row[c] = std::exp(normal(rng) + (c == y ? 2.0 : 0.0));
      for (double v : row)
        p.values.push_back(v / sum);
    } else {
      const double y = 10 + 3 * normal(rng);
      in.labels.push_back(y);
      p.values.push_back(y + normal(rng));
    }
  }
  if (task == reverify::ScoringTask::multiclass) {
    p.cols = kClasses;
    p.two_d = true;
  }
  in.segment_keys.push_back(std::move(key));
  return d;
}

reverify::Predictions column(const std::vector<double>& values) {
  reverify::Predictions p;
  p.rows = values.size();
  p.values = values;
  return p;
}

// One task: returns whether the target (>= 10x) was met and the values agree.
bool bench(reverify::ScoringTask task, std::size_t n, const fs::path& source) {
  const Data d = generate(task, n);
  const fs::path dir =
      fs::temp_directory_path() / ("reverify_scoring_bench_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<double> segments;
  for (std::uint32_t code : d.inputs.segment_keys[0].keys.codes)
    segments.push_back(code);
  if (!reverify::write_npy(dir / "labels.npy", column(d.inputs.labels)).ok() ||
      !reverify::write_npy(dir / "predictions.npy", d.predictions).ok() ||
      !reverify::write_npy(dir / "segments.npy", column(segments)).ok()) {
    std::cerr << "scoring_bench: cannot write arrays under " << dir << "\n";
    return false;
  }
  reverify::Result<reverify::scoring::Scores> scores = reverify::scoring::Scores{};
  const Timing ours =
      best_of(3, [&] { scores = reverify::scoring::score(d.inputs, d.predictions); });
  if (!scores.ok()) {
    std::cerr << "scoring_bench: " << scores.error().message << "\n";
    return false;
  }
  const std::string name = reverify::to_string(task);
  const int rc = reverify::bench::run_to_file(
      {"/usr/bin/python3", (source / "bench/scoring_bench.py").string(), name, dir.string()},
      dir / "sklearn.json");
  nlohmann::json baseline;
  if (rc == 0) {
    std::ifstream in(dir / "sklearn.json");
    baseline = nlohmann::json::parse(in, nullptr, false);
  }
  fs::remove_all(dir);
  if (rc != 0 || baseline.is_discarded()) {
    std::cerr << "scoring_bench: bench/scoring_bench.py failed (exit " << rc << ")\n";
    return false;
  }
  double worst = 0;
  std::string worst_metric;
  for (const auto& [metric, value] : baseline["overall"].items()) {
    const auto* m = scores->overall.find(metric);
    const double got = m && m->value ? *m->value : NAN;
    const double relative = std::abs(got - value.get<double>()) / std::abs(value.get<double>());
    if (!(relative <= worst)) {
      worst = relative;
      worst_metric = metric;
    }
  }
  const double theirs_cpu = baseline["cpu_seconds"].get<double>();
  const double theirs_wall = baseline["seconds"].get<double>();
  const bool agrees = worst <= 1e-9;
  std::printf(
      "%-10s %zu metrics x (whole set + %zu segments): CPU reverify %7.3f s, "
      "scikit-learn %s %8.3f s -> %5.1fx (wall %.3f s vs %.3f s -> %.1fx); largest "
      "relative difference %.2g (%s)\n",
      name.c_str(), d.inputs.metrics.size(), scores->segments.size(), ours.cpu,
      baseline["sklearn"].get<std::string>().c_str(), theirs_cpu, theirs_cpu / ours.cpu, ours.wall,
      theirs_wall, theirs_wall / ours.wall, worst, worst_metric.c_str());
  return theirs_cpu / ours.cpu >= 10 && agrees;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 1'000'000;
  const fs::path source = argc > 2 ? argv[2] : ".";
  std::printf(
      "scoring_bench: n = %zu records, %zu segments, one thread; CPU: %s; load average "
      "%s\n",
      n, kSegments, cpu_model().c_str(), load_average().c_str());
  std::vector<reverify::ScoringTask> tasks;
  for (int i = 3; i < argc; ++i) {
    const auto task = reverify::enum_from_string<reverify::ScoringTask>(argv[i]);
    if (!task || *task == reverify::ScoringTask::ranking) {
      std::cerr << "scoring_bench: " << argv[i] << ": expected binary, multiclass or regression\n";
      return 2;
    }
    tasks.push_back(*task);
  }
  if (tasks.empty())
    tasks = {reverify::ScoringTask::binary, reverify::ScoringTask::multiclass,
             reverify::ScoringTask::regression};
  bool met = true;
  for (auto task : tasks)
    met = bench(task, n, source) && met;
  std::printf("target (>= 10x less CPU time than scikit-learn, values equal to 1e-9): %s\n",
              met ? "met" : "NOT met");
  return met ? 0 : 1;
}
