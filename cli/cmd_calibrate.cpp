// reverify calibrate MODEL@VERSION --seeds 5: seed-only rebuilds (REVERIFY_SEED_OVERRIDE) whose
// spread becomes the tolerance of later verdicts. With --config the result is stored in the
// daemon's state (it overrides the manifest's tolerance key by key); it is always printed as the
// manifest's `tolerance` JSON.

#include <cstdlib>
#include <iostream>

#include "cli/command.hpp"
#include "cli/run_context.hpp"
#include "cli/run_progress.hpp"
#include "cli/run_report.hpp"
#include "policies/verdict.hpp"
#include "store/tolerance_json.hpp"
#include "verify/calibration.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kName = "calibrate";

struct CalibrateArguments {
  RunArguments run;
  int seeds = 5;
  int first_seed = 1;
};

int run_calibrate(const CalibrateArguments& args) {
  auto ctx = make_run_context(args.run);
  if (!ctx.ok())
    return usage_error(kName, ctx.error().message);
  CalibrationRequest request{ctx->request, args.seeds, args.first_seed};
  CalibrationOutcome outcome = [&] {
    RunProgress progress;  // its status line is erased before the results print
    PipelineDeps deps{*ctx->runner, ctx->config.verdict, progress.stages(), progress.started(),
                      progress.logs()};
    return run_calibration(request, deps);
  }();
  const Manifest& m = ctx->request.manifest;
  if (!outcome.spec) {
    std::cout << "calibration of " << m.id() << " failed: " << to_string(outcome.failure->cls)
              << "\n  " << outcome.failure->explanation << "\n";
    if (!outcome.log_tail.empty())
      std::cout << "job log (tail):\n" << outcome.log_tail << "\n";
    return exit_status(outcome.failure->cls);
  }
  nlohmann::json spec = tolerance_to_json(*outcome.spec);
  std::cout << "calibrated " << m.id() << " from " << args.seeds << " seed-only rebuilds (seeds "
            << args.first_seed << ".." << args.first_seed + args.seeds - 1 << "):\n";
  for (const auto& run : outcome.runs) {
    std::cout << "  seed " << run["seed"] << ": " << m.evaluation.primary.name << " "
              << run["primary"] << "\n";
  }
  std::cout << nlohmann::json{{"tolerance", spec}}.dump(2) << "\n";
  if (!ctx->store_is_throwaway) {
    Status stored = ctx->store->put_calibration(m.model, m.version, *outcome.spec, args.seeds);
    if (!stored.ok())
      return usage_error(kName, "storing the calibration: " + stored.error().message);
    std::cout << "stored in " << ctx->config.db_path().string() << "; later verdicts use it\n";
  } else {
    std::cout << "not stored (no --config): put it in the manifest's `tolerance`, or rerun with "
                 "--config to keep it in the daemon's state\n";
  }
  return 0;
}

Action define_calibrate(CLI::App& app) {
  auto o = std::make_shared<CalibrateArguments>();
  add_run_arguments(app, o->run);
  app.add_option("--seeds", o->seeds, "how many seed-only rebuilds to run (3-1000)")
      ->type_name("N")
      ->check(integer_in(3, 1000))
      ->capture_default_str();
  app.add_option("--first-seed", o->first_seed,
                 "REVERIFY_SEED_OVERRIDE of the first rebuild; the others count up from it")
      ->type_name("S")
      ->check(integer_in(0, 1000))
      ->capture_default_str();
  return [o] { return run_calibrate(*o); };
}

const Registrar kCalibrate{{kName,
                            "measure seed-to-seed spread with N seed-only rebuilds and store it "
                            "as the model version's tolerance",
                            define_calibrate}};

}  // namespace
}  // namespace reverify::cli
