// reverify compare ORIGINAL REBUILT: the distribution and paired checks on two prediction files,
// for pipeline owners investigating a page.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/command.hpp"
#include "core/hashing_pool.hpp"
#include "core/predictions.hpp"
#include "policies/bands.hpp"
#include "policies/checks.hpp"
#include "policies/stats.hpp"

namespace {

using reverify::CheckOutcome;
using reverify::DistributionBands;
using reverify::Error;
using reverify::ErrorCode;
using reverify::Result;

constexpr double kFalsePageRate =
    0.01;  // the daemon's default, split over the calibrated statistics

// --tolerances FILE: {"ks": 0.05, "psi": [values...]} or {"distribution_seed_runs": {...}}, or a
// manifest/calibration whose "tolerance" holds "distribution_seed_runs". A number is an explicit
// upper bound; an array holds the statistic between ORIGINAL and each seed run's predictions (a
// calibrated bound, policies/bands.hpp; >= 3 values).
Result<DistributionBands> read_tolerances(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return reverify::make_error(ErrorCode::io, path + ": cannot open");
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return reverify::make_error(ErrorCode::parse, path + ": not a JSON object");
  if (j.contains("tolerance"))
    j = j["tolerance"];
  if (j.is_object() && j.contains("distribution_seed_runs"))
    j = j["distribution_seed_runs"];
  DistributionBands bands;
  bands.fixed_source = "from " + path;
  bands.how_to_calibrate = "add it to " + path;
  for (const auto& [key, value] : j.items()) {
    const auto statistic = reverify::enum_from_string<reverify::Statistic>(key);
    if (!statistic) {
      return reverify::make_error(ErrorCode::parse,
                                  path + ": \"" + key + "\" is not a statistic (expected one of " +
                                      reverify::enum_names<reverify::Statistic>() + ")");
    }
    if (value.is_number()) {
      bands.fixed[*statistic] = value.get<double>();
    } else if (value.is_array() && std::all_of(value.begin(), value.end(),
                                               [](const auto& v) { return v.is_number(); })) {
      bands.seed_runs[*statistic] = value.get<std::vector<double>>();
    } else {
      return reverify::make_error(ErrorCode::parse,
                                  path + ": \"" + key +
                                      "\" must be a number (upper bound) or an array of numbers "
                                      "(the statistic against each seed run)");
    }
  }
  return bands;
}

nlohmann::json shape_json(const std::string& path, const reverify::PredictionsView& p) {
  return {{"path", path}, {"rows", p.rows}, {"cols", p.cols}};
}

void print_table(const std::string& original_path, const std::string& rebuilt_path,
                 const reverify::PredictionsView& o, const reverify::PredictionsView& r,
                 const reverify::stats::Comparison& c,
                 const std::vector<reverify::CheckResult>& checks) {
  std::printf("%-14s %-24s %-24s\n", "", "original", "rebuilt");
  std::printf("%-14s %-24s %-24s\n", "file", original_path.c_str(), rebuilt_path.c_str());
  std::printf("%-14s %-24s %-24s\n", "shape",
              (std::to_string(o.rows) + " x " + std::to_string(o.cols)).c_str(),
              (std::to_string(r.rows) + " x " + std::to_string(r.cols)).c_str());
  for (std::size_t k = 0; k < reverify::stats::kQuantileLevels.size(); ++k) {
    std::printf("p%-13d %-24.10g %-24.10g\n",
                static_cast<int>(reverify::stats::kQuantileLevels[k] * 100 + 0.5),
                c.quantiles_original[k], c.quantiles_rebuilt[k]);
  }
  std::printf("\n%-14s %-16s %-16s %s\n", "statistic", "value", "bound", "outcome");
  for (const auto& [statistic, value] : reverify::stats::banded_statistics(c)) {
    const char* name = reverify::to_string(statistic);
    const std::string full = std::string("distribution:") + name;
    auto check =
        std::find_if(checks.begin(), checks.end(), [&](const auto& x) { return x.name == full; });
    const bool judged = check != checks.end() && check->band.has_value();
    char bound[32] = "-";
    if (judged)
      std::snprintf(bound, sizeof bound, "<= %.8g", check->band->upper);
    std::printf("%-14s %-16.8g %-16s %s\n", name, value, bound,
                check == checks.end() ? "not judged" : reverify::to_string(check->outcome));
  }
  if (!c.paired)
    std::printf("(paired statistics need the same shape on both sides)\n");
  if (checks.empty()) {
    std::printf(
        "\nnot judged: no bounds were given (--tolerances FILE), so nothing above passed "
        "or failed; exit status 0 says only that both files were read\n");
  }
}

struct CompareArguments {
  std::string original, rebuilt;
  std::optional<std::string> tolerances;
  double threshold = 0.5;
  bool json = false;
};

int run_compare(const CompareArguments& options) {
  const auto& original_path = options.original;
  const auto& rebuilt_path = options.rebuilt;
  const double threshold = options.threshold;
  std::optional<DistributionBands> bands;
  if (options.tolerances) {
    auto read = read_tolerances(*options.tolerances);
    if (!read.ok())
      return reverify::cli::usage_error("compare", read.error().message);
    bands = std::move(read).value();
  }
  // The two files are read at once, the rebuild's on a helper thread; .npy files of float64 are
  // read in place (mapped), a short-lived command being the place for that.
  std::optional<Result<reverify::PredictionsView>> rebuilt;
  std::thread reader([&] { rebuilt.emplace(reverify::view_predictions(rebuilt_path)); });
  auto original = reverify::view_predictions(original_path);
  reader.join();
  if (!original.ok())
    return reverify::cli::usage_error("compare", original.error().message);
  if (!rebuilt->ok())
    return reverify::cli::usage_error("compare", rebuilt->error().message);
  const auto& o = *original;
  const auto& r = **rebuilt;
  const auto c = reverify::stats::compare(o.view(), r.view(), o.cols, r.cols, o.two_d && r.two_d,
                                          threshold, std::max(2u, reverify::usable_cores()));

  std::vector<reverify::CheckResult> checks;
  if (bands) {
    bands->alpha = kFalsePageRate / static_cast<double>(std::max<std::size_t>(
                                        1, reverify::banded_distribution_checks(c, *bands)));
    checks = reverify::distribution_checks(c, *bands);
  }
  const bool failed = std::any_of(checks.begin(), checks.end(),
                                  [](const auto& x) { return x.outcome == CheckOutcome::failed; });
  if (options.json) {
    nlohmann::json out = {{"original", shape_json(original_path, o)},
                          {"rebuilt", shape_json(rebuilt_path, r)},
                          {"ks", c.ks},
                          {"psi", c.psi},
                          {"psi_smoothing", reverify::stats::kPsiSmoothing},
                          {"wasserstein", c.wasserstein},
                          {"quantiles", reverify::quantiles_json(c)},
                          {"threshold", threshold},
                          {"paired", nullptr}};
    if (c.paired) {
      out["paired"] = {{"max_abs_diff", c.paired->max_abs_diff},
                       {"mean_abs_diff", c.paired->mean_abs_diff},
                       {"flip_rate", c.paired->flip_rate}};
    }
    out["checks"] = nlohmann::json::array();
    for (const auto& check : checks)
      out["checks"].push_back(reverify::to_json(check));
    out["outcome"] = !bands ? "not judged" : failed ? "failed" : "passed";
    std::cout << out.dump(2) << "\n";
  } else {
    print_table(original_path, rebuilt_path, o, r, c, checks);
    for (const auto& check : checks)
      if (check.outcome != CheckOutcome::passed)
        std::cout << "  " << check.explanation << "\n";
  }
  return failed ? 1 : 0;
}

reverify::cli::Action define_compare(CLI::App& app) {
  auto o = std::make_shared<CompareArguments>();
  app.add_option("ORIGINAL", o->original,
                 "the released predictions: .npy (float32/float64, 1-D, or 2-D class scores) or "
                 "CSV, one row per eval record")
      ->required();
  app.add_option("REBUILT", o->rebuilt, "the rebuild's predictions, same formats and order")
      ->required();
  app.add_option("--tolerances", o->tolerances,
                 "bounds to judge against: JSON with a number (upper bound) or an array of "
                 "seed-run pair values per statistic (ks, psi, wasserstein, max_abs_diff, "
                 "mean_abs_diff, flip_rate), or a manifest whose tolerance.distribution_pairs "
                 "holds them; without it nothing is judged")
      ->type_name("FILE");
  app.add_option("--threshold", o->threshold,
                 "1-D scores: a decision flips when one side is >= X and the other is not "
                 "(2-D scores flip on the argmax)")
      ->type_name("X")
      ->check(reverify::finite_number())
      ->capture_default_str();
  reverify::cli::add_json_flag(app, o->json);
  return [o] { return run_compare(*o); };
}

const reverify::cli::Registrar kCompare{
    {"compare",
     "distribution and paired checks between two prediction files (.npy or CSV); exit 1 if a "
     "check fails",
     define_compare}};

}  // namespace
