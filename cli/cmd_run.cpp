// reverify run MODEL@VERSION: one verification in the foreground, through the same pipeline as
// the daemon, with a readable report of every check.
// Exit status: 0 passed, 1 failed:*, 2 error:* or usage, 3 uncalibrated.

#include <iostream>

#include "cli/command.hpp"
#include "cli/run_context.hpp"
#include "cli/run_pages.hpp"
#include "cli/run_report.hpp"
#include "daemon/pipeline.hpp"
#include "policies/check.hpp"
#include "policies/verdict.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kName = "run";

int run_run(Args& args) {
  auto ctx = make_run_context(args);
  if (!ctx.ok()) {
    if (ctx.error().code == ErrorCode::manifest_invalid) {
      std::cout << "verdict: error:manifest-invalid\n  " << ctx.error().message << "\n";
    }
    return usage_error(kName, ctx.error().message);
  }
  PipelineDeps deps{
      *ctx->runner, ctx->config.verdict, stage_printer(args.flag("progress")), {}, {}};
  VerificationOutcome outcome = run_verification(ctx->request, deps);
  if (args.flag("json")) {
    std::cout << nlohmann::json{{"model", ctx->request.manifest.model},
                                {"version", ctx->request.manifest.version},
                                {"verdict", to_json(outcome.verdict)},
                                {"evidence", outcome.evidence},
                                {"log_tail", outcome.log_tail}}
                     .dump(2)
              << "\n";
  } else {
    print_report(std::cout, ctx->request, ctx->runner->kind(), outcome);
  }
  deliver_pages(std::cout, ctx->config.pager, ctx->request.manifest, outcome);
  return exit_status(outcome.verdict.cls);
}

std::vector<std::string> run_options() {
  return run_context_options();
}

const Registrar kRun{{kName,
                      "MODEL@VERSION [--config FILE | --registry DIR | --manifest FILE] "
                      "[--runner process|docker] [--mode full|steps --max-steps N] [--timeout D] "
                      "[--work-dir DIR] [--code-mirror URL=PATH[,...]] [--json] [--progress]",
                      "verify one model version in the foreground (exit 0 passed, 1 failed, 2 "
                      "error, 3 uncalibrated)",
                      run_options(),
                      {"json", "progress"},
                      run_run}};

}  // namespace
}  // namespace reverify::cli
