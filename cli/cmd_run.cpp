// reverify run MODEL@VERSION: one verification in the foreground, through the daemon's own
// VerificationService (store, pipeline, outbox), with a readable report of every check. With
// --config the verdict is recorded in the state_dir, where `gate` and reverifyd see it.
// Exit status: 0 passed, 1 failed:*, 2 error:* or usage, 3 uncalibrated.

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/run_context.hpp"
#include "cli/run_pages.hpp"
#include "cli/run_progress.hpp"
#include "cli/run_report.hpp"
#include "core/suggested_command.hpp"
#include "policies/calibration.hpp"
#include "policies/verdict.hpp"
#include "policies/verdict_model.hpp"
#include "verify/pipeline.hpp"
#include "verify/state_dir.hpp"
#include "verify/verification_service.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kRunName = "run";

// The row's verdict, evidence and log, for the report.
VerificationOutcome outcome_of(const VerificationRow& row) {
  VerificationOutcome outcome;
  if (!row.verdict)
    throw std::logic_error("the store returned verification " + std::to_string(row.id) +
                           " without its verdict");
  outcome.verdict = *row.verdict;
  if (row.evidence.is_object())
    outcome.evidence = row.evidence;
  outcome.log_tail = row.log_tail;
  return outcome;
}

struct RunCommandArguments {
  RunArguments run;
  bool json = false;
  std::optional<std::int64_t> seed_override;
};

// Rows of this version that an earlier `reverify run` left running: their owner is gone (this
// process owns the version now), so each is reattached and finished, or error:runner-lost.
Status reconcile_orphans(VerificationService& service, Store& store, const Manifest& manifest,
                         const VerificationSettings& settings) {
  auto unfinished = store.unfinished();
  if (!unfinished.ok())
    return unfinished.error();
  for (const auto& row : *unfinished) {
    if (row.state != VerificationState::running || row.trigger != VerificationTrigger::cli ||
        row.model != manifest.model || row.version != manifest.version) {
      continue;
    }
    auto done = service.recover(row, settings);
    if (!done.ok())
      return done.error();
    std::cout << "verification " << row.id << " was left running by a reverify run that ended; "
              << "reconciled: " << (done->cls ? to_string(*done->cls) : "?") << "\n";
  }
  return {};
}

// "1..5, 8, 10..12": the seeds in order, each run of consecutive ones as a range.
std::string seed_ranges(std::vector<std::int64_t> seeds) {
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  std::string text;
  for (std::size_t i = 0; i < seeds.size();) {
    std::size_t last = i;
    while (last + 1 < seeds.size() && seeds[last + 1] == seeds[last] + 1)
      ++last;
    text += (text.empty() ? "" : ", ") + std::to_string(seeds[i]) +
            (last > i ? ".." + std::to_string(seeds[last]) : "");
    i = last + 1;
  }
  return text;
}

// A fresh-seed rerun is judged against bands it must not be part of: its seed may not be one the
// seed runs they come from used. Those are the request's as make_run_context judges it: in
// subsample mode the subsample reference's (subsample.tolerance; the stored calibration, of
// full-mode runs, is dropped), else the manifest's tolerance with the stored calibration over it
// (which holds the whole list). A list holds every seed tried, those left out of the bands too.
Status check_fresh_seed(std::int64_t seed, const VerificationRequest& request) {
  const ToleranceSpec* calibration = request.calibration ? &*request.calibration : nullptr;
  const ToleranceSpec merged = merged_tolerance(request.manifest, calibration);
  const std::vector<std::int64_t>& taken = merged.seed_overrides;
  if (std::find(taken.begin(), taken.end(), seed) == taken.end())
    return {};
  const std::string list = request.mode == RebuildMode::subsample
                               ? "the subsample reference's subsample.tolerance.seed_overrides"
                           : calibration && !calibration->seed_overrides.empty()
                               ? "the stored calibration's tolerance.seed_overrides"
                               : "the manifest's tolerance.seed_overrides";
  const std::size_t runs = seed_run_count(merged, request.manifest.evaluation.primary.name);
  return make_error(ErrorCode::invalid_argument,
                    "--seed-override " + std::to_string(seed) + ": seed " + std::to_string(seed) +
                        " is taken: " + list + " lists the " + std::to_string(taken.size()) +
                        " seeds its seed runs used (" + seed_ranges(taken) +
                        "), and the bands come from " + std::to_string(runs) +
                        " seed runs; a fresh-seed rerun needs a seed not among them, e.g. " +
                        std::to_string(*std::max_element(taken.begin(), taken.end()) + 1));
}

// The daemon's settings for the context's model, with this command's options on top.
VerificationSettings run_settings(const RunContext& ctx,
                                  std::optional<std::int64_t> seed_override) {
  const VerificationRequest& request = ctx.request;
  VerificationSettings settings = verification_settings(ctx.config, request.manifest.model);
  settings.max_steps = request.max_steps;
  settings.timeout_s = request.timeout.count();
  settings.work_root = request.work_root;
  settings.code_mirrors = request.code_mirrors;
  settings.retry_max_attempts = 1;  // a foreground run reports its error; it queues no retry
  settings.seed_override = seed_override;
  return settings;
}

// The verdict on stdout: the JSON document with --json, else the report, where it was recorded
// and how to export its signed summary.
void print_outcome(const RunCommandArguments& args, const RunContext& ctx, std::int64_t row_id,
                   const VerificationOutcome& outcome) {
  const VerificationRequest& request = ctx.request;
  if (args.json) {
    std::cout << report_json(request, ctx.store_is_throwaway ? std::nullopt : std::optional(row_id),
                             outcome)
                     .dump(2)
              << "\n";
    return;
  }
  print_report(std::cout, request, ctx.runner->kind(), outcome);
  if (!ctx.store_is_throwaway) {
    std::cout << "recorded as verification " << row_id << " in " << ctx.config.db_path().string()
              << "\n";
  }
  if (const auto& summary = outcome.evidence.value("attestation", nlohmann::json());
      summary.is_object()) {
    std::cout << "signed summary: " << summary.value("result", "") << ", key "
              << summary.value("key_id", "").substr(0, 16) << "…; export it with "
              << suggested_command("attest export " + request.manifest.id(),
                                   config_scope(args.run.config.value_or("")))
              << "\n";
  }
}

int run_run(const RunCommandArguments& args) {
  if (args.seed_override && args.run.mode == RebuildMode::steps) {
    return usage_error(kRunName,
                       "--seed-override cannot be used with --mode steps: steps mode compares the "
                       "release's own seeds' first steps with its recorded curve, and another "
                       "seed diverges from step 0; judge a fresh-seed rerun with --mode full");
  }
  RunArguments run_args = args.run;
  run_args.record = !args.seed_override;
  auto ctx = make_run_context(run_args);
  if (!ctx.ok()) {
    if (ctx.error().code == ErrorCode::manifest_invalid) {
      std::cout << "verdict: error:manifest-invalid\n  " << ctx.error().message << "\n";
    }
    return usage_error(kRunName, ctx.error().message);
  }
  if (args.seed_override) {
    if (Status fresh = check_fresh_seed(*args.seed_override, ctx->request); !fresh.ok())
      return usage_error(kRunName, fresh.error().message);
  }
  const VerificationRequest& request = ctx->request;
  const VerificationSettings settings = run_settings(*ctx, args.seed_override);
  // A throwaway store numbers from 1 in every process: two `reverify run` at once would share
  // rebuild ids (the runner's labels and scratch links); this process's id keeps them apart.
  VerificationService service(*ctx->store, *ctx->runner, {},
                              ctx->store_is_throwaway ? "run-" + std::to_string(::getpid()) + "-" +
                                                            std::to_string(system_now()) + "-"
                                                      : std::string(kRebuildIdPrefix));
  // Recorded in a state_dir, the run owns its version there while this process lives
  // (verify/state_dir.hpp): a reverifyd on the same state_dir leaves its row alone meanwhile.
  // What an earlier run of it left running when it died is reconciled first, so no row outlives
  // its process without a verdict.
  std::optional<StateLock> ownership;
  if (!ctx->store_is_throwaway) {
    auto owned = StateLock::version(ctx->config.state_dir, request.manifest.model,
                                    request.manifest.version, "reverify run");
    if (!owned.ok()) {
      std::cerr << "reverify run: " << owned.error().message << "\n";
      return 2;
    }
    ownership.emplace(std::move(*owned));
    if (auto s = reconcile_orphans(service, *ctx->store, request.manifest, settings); !s.ok()) {
      std::cerr << "reverify run: " << s.error().message << "\n";
      return 2;
    }
  }
  auto row = [&] {
    RunProgress progress;  // its status line is erased before the report prints
    return service.run_now(request.manifest_location, request.mode, VerificationTrigger::cli,
                           settings, progress.stages(), {progress.started(), progress.logs()});
  }();
  if (!row.ok()) {
    std::cerr << "reverify run: " << row.error().message << "\n";
    return 2;
  }
  VerificationOutcome outcome = outcome_of(*row);
  print_outcome(args, *ctx, row->id, outcome);
  if (args.seed_override) {
    std::cerr << "fresh-seed rerun (REVERIFY_SEED_OVERRIDE=" << *args.seed_override
              << ") judged as a rebuild: not recorded, nobody paged\n";
  } else {
    // Stdout carries only the JSON document with --json.
    deliver_recorded_pages(args.json ? std::cerr : std::cout, *ctx->store, ctx->config.pager,
                           ctx->store_is_throwaway);
  }
  return exit_status(outcome.verdict.cls);
}

Action define_run(CLI::App& app) {
  auto o = std::make_shared<RunCommandArguments>();
  add_run_arguments(app, o->run);
  add_json_flag(app, o->json);
  app.add_option(
         "--seed-override", o->seed_override,
         "judge a fresh-seed rerun as a rebuild: REVERIFY_SEED_OVERRIDE=N replaces every "
         "seed (as calibration does), so the rebuild is an honest draw from the "
         "distribution the bands describe and should pass about 1 - false_page_rate of "
         "the time (docs/design.md property 1, measured: bench/fresh_seed_reruns.sh); the verdict "
         "is printed, never recorded, and pages nobody. Full or subsample mode (steps mode "
         "is a same-seed comparison); N must not be one of the seeds the seed runs of the "
         "bands used (tolerance.seed_overrides; in subsample mode the subsample reference's)")
      ->type_name("N")
      ->check(integer_in(0, 1'000'000'000));
  return [o] { return run_run(*o); };
}

const Registrar kRun{{kRunName,
                      "verify one model version in the foreground (exit 0 passed, 1 failed, 2 "
                      "error, 3 uncalibrated)",
                      define_run}};

}  // namespace
}  // namespace reverify::cli
