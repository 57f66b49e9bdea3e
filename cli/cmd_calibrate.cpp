// reverify calibrate MODEL@VERSION --seeds 5: seed-only rebuilds (REVERIFY_SEED_OVERRIDE) whose
// spread becomes the tolerance of later verdicts. With --config the result is stored in the
// daemon's state (it overrides the manifest's tolerance key by key); it is always printed as the
// manifest's `tolerance` JSON.

#include <cstdlib>
#include <iostream>

#include "cli/command.hpp"
#include "cli/run_context.hpp"
#include "cli/run_report.hpp"
#include "policies/verdict.hpp"
#include "store/tolerance_json.hpp"
#include "verify/calibration.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kName = "calibrate";

Result<int> positive(const Args& args, const std::string& name, int fallback, int min) {
  auto text = args.option(name);
  if (!text)
    return fallback;
  char* end = nullptr;
  long value = std::strtol(text->c_str(), &end, 10);
  if (end == text->c_str() || *end != '\0' || value < min || value > 1000) {
    return make_error(ErrorCode::invalid_argument, "--" + name + ": expected an integer from " +
                                                       std::to_string(min) + " to 1000");
  }
  return static_cast<int>(value);
}

int run_calibrate(Args& args) {
  auto seeds = positive(args, "seeds", 5, 3);
  if (!seeds.ok())
    return usage_error(kName, seeds.error().message);
  auto first = positive(args, "first-seed", 1, 0);
  if (!first.ok())
    return usage_error(kName, first.error().message);
  auto ctx = make_run_context(args);
  if (!ctx.ok())
    return usage_error(kName, ctx.error().message);
  PipelineDeps deps{
      *ctx->runner, ctx->config.verdict, stage_printer(args.flag("progress")), {}, {}};
  CalibrationRequest request{ctx->request, *seeds, *first};
  CalibrationOutcome outcome = run_calibration(request, deps);
  const Manifest& m = ctx->request.manifest;
  if (!outcome.spec) {
    std::cout << "calibration of " << m.id() << " failed: " << to_string(outcome.failure->cls)
              << "\n  " << outcome.failure->explanation << "\n";
    if (!outcome.log_tail.empty())
      std::cout << "job log (tail):\n" << outcome.log_tail << "\n";
    return exit_status(outcome.failure->cls);
  }
  nlohmann::json spec = tolerance_to_json(*outcome.spec);
  std::cout << "calibrated " << m.id() << " from " << *seeds << " seed-only rebuilds (seeds "
            << *first << ".." << *first + *seeds - 1 << "):\n";
  for (const auto& run : outcome.runs) {
    std::cout << "  seed " << run["seed"] << ": " << m.evaluation.primary.name << " "
              << run["primary"] << "\n";
  }
  std::cout << nlohmann::json{{"tolerance", spec}}.dump(2) << "\n";
  if (!ctx->store_is_throwaway) {
    Status stored = ctx->store->put_calibration(m.model, m.version, *outcome.spec, *seeds);
    if (!stored.ok())
      return usage_error(kName, "storing the calibration: " + stored.error().message);
    std::cout << "stored in " << ctx->config.db_path().string() << "; later verdicts use it\n";
  } else {
    std::cout << "not stored (no --config): put it in the manifest's `tolerance`, or rerun with "
                 "--config to keep it in the daemon's state\n";
  }
  return 0;
}

std::vector<std::string> calibrate_options() {
  auto options = run_context_options();
  options.insert(options.end(), {"seeds", "first-seed"});
  return options;
}

const Registrar kCalibrate{{kName,
                            "MODEL@VERSION [--seeds N (5)] [--first-seed S (1)] [--config FILE | "
                            "--registry DIR | --manifest FILE] [--runner KIND] [--mode full|steps "
                            "--max-steps N] [--code-mirror URL=PATH] [--progress]",
                            "measure seed-to-seed spread with N seed-only rebuilds and store it "
                            "as the model version's tolerance",
                            calibrate_options(),
                            {"progress"},
                            run_calibrate}};

}  // namespace
}  // namespace reverify::cli
