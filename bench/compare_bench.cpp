// compare_bench: the full distribution comparison (KS + PSI + W1 + quantiles + paired) of 10M vs
// 10M float64 predictions, in process and end to end through the CLI (`reverify compare` of the
// two .npy files: process start, both loads, the comparison, the report), against
// scipy.stats.ks_2samp alone and scipy.stats.wasserstein_distance alone on the same arrays in the
// same run (bench/compare_bench.py, Debian's /usr/bin/python3). Also prints the sorting floor
// (std::sort of one array vs the radix sort), the machine's CPU model and its load average.
//
// Usage: compare_bench [N] [SOURCE_DIR] [REVERIFY]   (defaults: 10000000, "." and
// build/release/cli/reverify; run from the repository root)

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "bench/bench_process.hpp"
#include "bench/bench_timing.hpp"
#include "core/predictions.hpp"
#include "policies/radix_sort.hpp"
#include "policies/stats.hpp"

namespace {

using reverify::bench::best_of;

std::string first_line_with(const std::filesystem::path& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0)
      return line;
  return "";
}

// "model name : Intel(R) Xeon(R) ..." -> "Intel(R) Xeon(R) ..."
std::string cpu_model() {
  const std::string line = first_line_with("/proc/cpuinfo", "model name");
  const auto colon = line.find(':');
  return colon == std::string::npos ? "unknown"
                                    : line.substr(line.find_first_not_of(' ', colon + 1));
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::stoul(argv[1]) : 10'000'000;
  const std::filesystem::path source = argc > 2 ? argv[2] : ".";
  const std::filesystem::path cli =
      std::filesystem::absolute(argc > 3 ? argv[3] : "build/release/cli/reverify");
  const auto dir = std::filesystem::temp_directory_path() /
                   ("reverify_compare_bench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);

  // Predictions-like data: probabilities, and a rebuild that moved each one a little.
  std::mt19937_64 rng(42);
  std::normal_distribution<double> logit(0, 2), noise(0, 0.05);
  reverify::Predictions original, rebuilt;
  original.rows = rebuilt.rows = n;
  original.values.resize(n);
  rebuilt.values.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = logit(rng);
    original.values[i] = 1 / (1 + std::exp(-z));
    rebuilt.values[i] = 1 / (1 + std::exp(-(z + noise(rng))));
  }
  if (!reverify::write_npy(dir / "original.npy", original).ok() ||
      !reverify::write_npy(dir / "rebuilt.npy", rebuilt).ok()) {
    std::cerr << "compare_bench: cannot write arrays under " << dir << "\n";
    return 2;
  }

  std::printf("compare_bench: n = %zu float64 per side; CPU %s, %u hardware threads, %s\n", n,
              cpu_model().c_str(), std::thread::hardware_concurrency(),
              first_line_with("/proc/loadavg", "").c_str());
  reverify::stats::Comparison result;
  const double ours = best_of(3, [&] {
    result = reverify::stats::compare(original.values, rebuilt.values, 1, 1, false, 0.5, 2);
  });
  const double ours_one_core = best_of(
      1, [&] { reverify::stats::compare(original.values, rebuilt.values, 1, 1, false, 0.5, 1); });
  const double std_sort = best_of(1, [&] {
    auto copy = original.values;
    std::sort(copy.begin(), copy.end());
  });
  const double radix_one = best_of(3, [&] {
    auto copy = original.values;
    reverify::stats::radix_sort(copy, 1);
  });

  // The CLI end to end; its first run also brings the binary into the page cache.
  int cli_rc = 0;
  const double through_cli = best_of(3, [&] {
    cli_rc = reverify::bench::run_to_file(
        {cli.string(), "compare", "--json", (dir / "original.npy").string(),
         (dir / "rebuilt.npy").string()},
        dir / "cli.json");
  });
  nlohmann::json cli_result;
  if (cli_rc == 0) {
    std::ifstream in(dir / "cli.json");
    cli_result = nlohmann::json::parse(in, nullptr, false);
  }
  if (cli_rc != 0 || cli_result.is_discarded()) {
    std::cerr << "compare_bench: " << cli << " compare failed (exit " << cli_rc << ")\n";
    std::filesystem::remove_all(dir);
    return 2;
  }

  const auto script = source / "bench/compare_bench.py";
  const int rc = reverify::bench::run_to_file(
      {"/usr/bin/python3", script.string(), (dir / "original.npy").string(),
       (dir / "rebuilt.npy").string()},
      dir / "scipy.json");
  nlohmann::json scipy_result;
  if (rc == 0) {
    std::ifstream in(dir / "scipy.json");
    scipy_result = nlohmann::json::parse(in, nullptr, false);
  }
  std::filesystem::remove_all(dir);
  if (rc != 0 || scipy_result.is_discarded()) {
    std::cerr << "compare_bench: " << script << " failed (exit " << rc << ")\n";
    return 2;
  }

  const double ks_s = scipy_result["ks_seconds"], w1_s = scipy_result["wasserstein_seconds"];
  const double load_s = scipy_result["load_seconds"];
  std::printf(
      "reverify compare through the CLI, end to end (start, 2 loads, report): %8.3f s"
      "  -> %.1fx scipy's ks_2samp alone, %.1fx np.load x2 + ks_2samp\n",
      through_cli, ks_s / through_cli, (load_s + ks_s) / through_cli);
  std::printf("reverify full comparison (KS+PSI+W1+quantiles+paired), 2 threads: %8.3f s\n", ours);
  std::printf("reverify full comparison, 1 thread:                                %8.3f s\n",
              ours_one_core);
  std::printf("scipy %s ks_2samp alone:                                      %8.3f s  -> %.1fx\n",
              scipy_result["scipy"].get<std::string>().c_str(), ks_s, ks_s / ours);
  std::printf(
      "scipy wasserstein_distance alone:                                  %8.3f s  -> %.1fx\n",
      w1_s, w1_s / ours);
  std::printf("sorting floor, one array: std::sort %.3f s, radix sort %.3f s (%.1fx)\n", std_sort,
              radix_one, std_sort / radix_one);
  std::printf("scipy: np.load of both files %.3f s\n", load_s);
  std::printf("agreement: ks %.17g vs scipy %.17g; wasserstein %.17g vs scipy %.17g\n", result.ks,
              scipy_result["ks"].get<double>(), result.wasserstein,
              scipy_result["wasserstein"].get<double>());
  std::printf("psi %.6g, p50 %.6g / %.6g, max_abs_diff %.6g, flip_rate %.6g\n", result.psi,
              result.quantiles_original[3], result.quantiles_rebuilt[3],
              result.paired->max_abs_diff, result.paired->flip_rate);
  const bool agrees = std::abs(result.ks - scipy_result["ks"].get<double>()) <= 1e-12 &&
                      std::abs(result.wasserstein - scipy_result["wasserstein"].get<double>()) <=
                          1e-9 * std::abs(scipy_result["wasserstein"].get<double>()) &&
                      cli_result["ks"].get<double>() == result.ks &&
                      cli_result["wasserstein"].get<double>() == result.wasserstein;
  std::printf(
      "target (>= 10x faster than scipy's KS alone): in process %s, through the CLI %s; "
      "statistics agree (scipy, in process, CLI): %s\n",
      ks_s / ours >= 10 ? "met" : "NOT met", ks_s / through_cli >= 10 ? "met" : "NOT met",
      agrees ? "yes" : "NO");
  return agrees ? 0 : 1;
}
