// reverify compare ORIGINAL REBUILT: the distribution and paired checks on two prediction files,
// for pipeline owners investigating a page. With --tolerances MANIFEST they are judged exactly as
// a verification judges them (verify/pipeline.hpp `judge_rebuild`: the manifest's seed runs, the
// stored calibration and detect of --config, the false-page rate split over every banded check
// of the verification), so an owner reproduces a verdict's bounds and alpha. A file of bounds
// alone has no other checks: its rate is split over its own statistics. A statistic the
// manifest's task leaves out (a ranking's flip rate) is left out here too, with the verdict's line.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/command.hpp"
#include "cli/manifest_input.hpp"
#include "core/hashing_pool.hpp"
#include "core/predictions.hpp"
#include "policies/bands.hpp"
#include "policies/checks.hpp"
#include "policies/headline.hpp"
#include "policies/stats.hpp"
#include "policies/verdict.hpp"
#include "settings/config.hpp"
#include "store/store.hpp"
#include "verify/pipeline.hpp"

namespace {

using reverify::DistributionBands;
using reverify::Error;
using reverify::ErrorCode;
using reverify::Result;

// --tolerances FILE (not a manifest): {"ks": 0.05, "psi": [values...]} or
// {"distribution_seed_runs": {...}}, or a calibration whose "tolerance" holds
// "distribution_seed_runs". A number is an explicit
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

// The statistics of both files, then every check judged on them (the distribution statistics,
// and with a manifest its parity checks), in the words a verdict uses (reading_text); a statistic
// no check judges reads "not judged", one the task leaves out (`ranking`) has no row.
void print_table(const std::string& original_path, const std::string& rebuilt_path,
                 const reverify::PredictionsView& o, const reverify::PredictionsView& r,
                 const reverify::stats::Comparison& c, const reverify::Verdict& judged,
                 bool ranking) {
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
  const auto& checks = judged.checks;
  std::printf("\n%-34s %-16s %-16s %-12s %s\n", "check", "value", "bound", "alpha", "outcome");
  const auto row = [](const std::string& name, std::optional<double> value,
                      const reverify::CheckResult* check, const std::string& outcome) {
    char number[32] = "-", bound[32] = "-", alpha[32] = "-";
    if (value)
      std::snprintf(number, sizeof number, "%.8g", *value);
    if (check && check->band) {
      std::snprintf(bound, sizeof bound, "<= %.8g", check->band->upper);
      if (auto a = check->evidence.find("alpha"); a != check->evidence.end() && a->is_number())
        std::snprintf(alpha, sizeof alpha, "%.3g", a->get<double>());
    }
    std::printf("%-34s %-16s %-16s %-12s %s\n", name.c_str(), number, bound, alpha,
                outcome.c_str());
  };
  for (const auto& [statistic, value] : reverify::stats::banded_statistics(c)) {
    if (reverify::left_out(statistic, ranking))
      continue;
    const std::string full = std::string("distribution:") + reverify::to_string(statistic);
    auto check =
        std::find_if(checks.begin(), checks.end(), [&](const auto& x) { return x.name == full; });
    if (check == checks.end())
      row(full, value, nullptr, "not judged");
  }
  for (const auto& check : checks)
    row(check.name, check.observed, &check, reverify::reading_text(judged, check));
  if (!c.paired)
    std::printf("(paired statistics need the same shape on both sides)\n");
  if (checks.empty()) {
    std::printf(
        "\nnot judged: no bounds were given (--tolerances FILE), so nothing above passed "
        "or failed; exit status 0 says only that both files were read\n");
  } else {
    std::printf("\nchecks: %s\n", reverify::counts_text(reverify::count_checks(judged)).c_str());
  }
  if (ranking)
    std::printf("%s\n", reverify::kFlipRateLeftOut);
}

struct CompareArguments {
  std::string original, rebuilt;
  std::optional<std::string> tolerances, config;
  std::optional<double> false_page_rate, threshold;
  bool json = false;
};

// --tolerances names a manifest when its JSON object has the manifest's "schema" key.
bool names_manifest(const std::string& path) {
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() && j.contains("schema");
}

// The verdict policy of --config (or the daemon's defaults), with --false-page-rate and
// --threshold over it.
reverify::VerdictPolicy verdict_policy(const CompareArguments& options,
                                       const reverify::Config* config) {
  reverify::VerdictPolicy policy = config ? config->verdict : reverify::VerdictPolicy{};
  if (options.false_page_rate)
    policy.false_page_rate = *options.false_page_rate;
  if (options.threshold)
    policy.flip_threshold = *options.threshold;
  return policy;
}

// What a verification of the manifest's model version would be judged with: the manifest, the
// stored calibration and detect of --config (none without it, or before reverifyd has a store).
Result<reverify::VerificationRequest> verification_request(const std::string& path,
                                                           const reverify::Config* config) {
  auto input = reverify::cli::read_manifest_input(path);
  if (!input.manifest) {
    reverify::cli::print_problems(std::cerr, "compare", input);
    return reverify::make_error(ErrorCode::manifest_invalid, path + ": not a valid manifest");
  }
  reverify::VerificationRequest request;
  request.manifest = std::move(*input.manifest);
  request.manifest_location = input.location;
  if (!config)
    return request;
  request.detect = config->model_policy(request.manifest.model).detect;
  if (!std::filesystem::exists(config->db_path()))
    return request;
  auto store = reverify::Store::open(config->db_path(), reverify::system_now, /*read_only=*/true);
  if (!store.ok())
    return store.error();
  auto calibration = (*store)->calibration(request.manifest.model, request.manifest.version);
  if (!calibration.ok())
    return calibration.error();
  request.calibration = *calibration;
  return request;
}

bool judged_here(const reverify::CheckResult& check) {
  return check.kind == reverify::CheckKind::distribution ||
         check.kind == reverify::CheckKind::parity;
}

// The checks judged on the two files: against --tolerances' bounds, or as a verification of the
// manifest's model version judges these predictions (only its distribution and parity checks
// are about them: the rebuild's metrics are not known here); none without --tolerances.
Result<std::vector<reverify::CheckResult>> checks_judged(
    const CompareArguments& options, std::optional<DistributionBands> bands,
    const std::optional<reverify::VerificationRequest>& request,
    const reverify::stats::Comparison& c, const reverify::VerdictPolicy& policy) {
  std::vector<reverify::CheckResult> checks;
  if (bands) {
    const reverify::AlphaSplit alpha(
        policy.false_page_rate, policy.alpha_shares,
        {{reverify::CheckFamily::distribution, reverify::banded_distribution_checks(c, *bands)}});
    bands->alpha = alpha.per_check(reverify::CheckFamily::distribution);
    return reverify::distribution_checks(c, *bands);
  }
  if (!request)
    return checks;
  auto release = reverify::read_predictions(options.original);
  if (!release.ok())
    return release.error();
  auto rebuild = reverify::read_predictions(options.rebuilt);
  if (!rebuild.ok())
    return rebuild.error();
  reverify::RebuildObservation observation;
  observation.predictions = &*rebuild;
  observation.comparison = c;
  const auto verdict = reverify::judge_rebuild(*request, observation, &*release, policy);
  if (reverify::is_error(verdict.cls) || verdict.cls == reverify::VerdictClass::failed_input_drift)
    return reverify::make_error(ErrorCode::invalid_argument, verdict.explanation);
  std::copy_if(verdict.checks.begin(), verdict.checks.end(), std::back_inserter(checks),
               judged_here);
  return checks;
}

// The manifest's task is ranking: its flip rate is left out (reverify::left_out).
bool ranking_task(const std::optional<reverify::VerificationRequest>& request) {
  const auto& scoring = request ? request->manifest.evaluation.scoring : std::nullopt;
  return scoring && scoring->task == reverify::ScoringTask::ranking;
}

// --json's statistics of the two files (the checks are added by the caller); a ranking's has no
// flip rate and says why in "left_out".
nlohmann::json comparison_json(const CompareArguments& options, const reverify::PredictionsView& o,
                               const reverify::PredictionsView& r,
                               const reverify::stats::Comparison& c, double threshold,
                               bool ranking) {
  nlohmann::json out = {{"original", shape_json(options.original, o)},
                        {"rebuilt", shape_json(options.rebuilt, r)},
                        {"ks", c.ks},
                        {"psi", c.psi},
                        {"psi_smoothing", reverify::stats::kPsiSmoothing},
                        {"wasserstein", c.wasserstein},
                        {"quantiles", reverify::quantiles_json(c)},
                        {"threshold", threshold},
                        {"paired", nullptr}};
  if (c.paired) {
    out["paired"] = {{"max_abs_diff", c.paired->max_abs_diff},
                     {"mean_abs_diff", c.paired->mean_abs_diff}};
    if (!reverify::left_out(reverify::Statistic::flip_rate, ranking))
      out["paired"]["flip_rate"] = c.paired->flip_rate;
  }
  if (ranking)
    out["left_out"] = {reverify::kFlipRateLeftOut};
  return out;
}

int run_compare(const CompareArguments& options) {
  const auto& original_path = options.original;
  const auto& rebuilt_path = options.rebuilt;
  std::optional<reverify::Config> config;
  if (options.config) {
    auto loaded = reverify::load_config(*options.config);
    if (!loaded.ok())
      return reverify::cli::usage_error("compare", loaded.error().message);
    config = std::move(loaded).value();
  }
  const auto policy = verdict_policy(options, config ? &*config : nullptr);
  std::optional<DistributionBands> bands;
  std::optional<reverify::VerificationRequest> request;
  if (options.tolerances && names_manifest(*options.tolerances)) {
    auto made = verification_request(*options.tolerances, config ? &*config : nullptr);
    if (!made.ok())
      return reverify::cli::usage_error("compare", made.error().message);
    request = std::move(made).value();
  } else if (options.tolerances) {
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
  const double threshold = policy.flip_threshold;
  const auto c = reverify::stats::compare(o.view(), r.view(), o.cols, r.cols, o.two_d && r.two_d,
                                          threshold, std::max(2u, reverify::usable_cores()));

  // The checks judged here, as a verdict holds them (its class for the reading of each: a level
  // that enforces nothing reads its failures as notes).
  reverify::Verdict judged;
  auto made = checks_judged(options, bands, request, c, policy);
  if (!made.ok())
    return reverify::cli::usage_error("compare", made.error().message);
  judged.checks = std::move(made).value();
  const auto& checks = judged.checks;
  // Judged as a verdict reads its checks: a deciding failure fails, except at a level that
  // enforces nothing (rerunnable), where every check is a note.
  const bool enforced = !request || request->manifest.level != reverify::ReproLevel::rerunnable;
  const bool any_failed = std::any_of(checks.begin(), checks.end(), [](const auto& x) {
    return x.decides() && x.outcome == reverify::CheckOutcome::failed;
  });
  judged.cls = enforced && any_failed ? reverify::VerdictClass::failed_distribution_shift
                                      : reverify::VerdictClass::passed;
  const bool failed = enforced && any_failed;
  const bool ranking = ranking_task(request);
  if (options.json) {
    nlohmann::json out = comparison_json(options, o, r, c, threshold, ranking);
    out["checks"] = nlohmann::json::array();
    for (const auto& check : checks)
      out["checks"].push_back(reverify::to_json(check));
    out["false_page_rate"] = policy.false_page_rate;
    out["judged_as"] = request ? "verification" : bands ? "bounds" : "not judged";
    out["outcome"] = !options.tolerances ? "not judged" : failed ? "failed" : "passed";
    std::cout << out.dump(2) << "\n";
  } else {
    print_table(original_path, rebuilt_path, o, r, c, judged, ranking);
    for (const auto* check : reverify::reading_order(judged))
      if (reverify::reading_of(judged, *check) != reverify::CheckReading::passed)
        std::cout << "  " << check->explanation << "\n";
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
                 "what to judge against: a manifest (judged as a verification of its model "
                 "version judges them: the same bounds and alpha), or JSON with a number (upper "
                 "bound) or an array of seed-run values per statistic (ks, psi, wasserstein, "
                 "max_abs_diff, mean_abs_diff, flip_rate); without it nothing is judged")
      ->type_name("FILE");
  app.add_option("--config", o->config,
                 "the daemon's config: its verdict policy (false_page_rate, alpha shares, "
                 "flip_threshold), the model's detect and the stored calibration of the "
                 "manifest's version, as its verifications use them")
      ->type_name("FILE");
  app.add_option("--false-page-rate", o->false_page_rate,
                 "the false-page rate to split over the checks, over the config's "
                 "(verdict.false_page_rate; 0.01 without a config)")
      ->type_name("RATE")
      ->check(CLI::Validator(
          [](const std::string& text) {
            const double rate = std::strtod(text.c_str(), nullptr);
            return rate > 0 && rate < 1 ? std::string()
                                        : "must be in (0, 1), e.g. 0.01, not " + text;
          },
          "in (0, 1)"));
  app.add_option("--threshold", o->threshold,
                 "1-D scores: a decision flips when one side is >= X and the other is not "
                 "(2-D scores flip on the argmax); over the config's verdict.flip_threshold, "
                 "0.5 without one")
      ->type_name("X")
      ->check(reverify::finite_number());
  reverify::cli::add_json_flag(app, o->json);
  return [o] { return run_compare(*o); };
}

const reverify::cli::Registrar kCompare{
    {"compare",
     "distribution and paired checks between two prediction files (.npy or CSV); exit 1 if a "
     "check fails",
     define_compare}};

}  // namespace
