// reverify calibrate MODEL@VERSION: reruns that measure the spread later verdicts are judged
// against (verify/calibration.hpp). A full calibration adds seed-only reruns (with
// --until-power, until every declared tolerance.detect is met); --mode subsample adds them to the
// subsample reference's; --mode steps records same-seed reruns of the first --max-steps steps. It
// prints the runs, every band with the smallest shift it catches, and the leave-one-out estimate:
// each seed run judged as a rebuild against the others, and how many of them paged. With --config
// the calibration is stored in the daemon's state, where every later verdict of that reference
// reads it (the release's for full and steps verdicts, the subsample reference's for subsample
// verdicts; it overrides the manifest's tolerance key by key). Without --config nothing is kept:
// a manifest is never edited by hand, so it prints no tolerance to paste (--json still holds it).

#include <iostream>

#include "cli/command.hpp"
#include "cli/run_context.hpp"
#include "cli/run_progress.hpp"
#include "cli/run_report.hpp"
#include "policies/bands.hpp"
#include "policies/headline.hpp"
#include "policies/number_text.hpp"
#include "policies/verdict.hpp"
#include "store/tolerance_json.hpp"
#include "verify/calibration.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kCalibrateName = "calibrate";

struct CalibrateArguments {
  RunArguments run;
  int seeds = 5;
  std::optional<std::int64_t> first_seed;
  bool until_power = false;
  int max_runs = 100;
  bool json = false;
};

void print_leave_one_out(std::ostream& out, const Manifest& m, const LeaveOneOut& loo,
                         const VerdictPolicy& policy) {
  const double false_page_rate = policy.false_page_rate;
  out << "\nleave-one-out: each of the " << loo.runs.size()
      << " seed runs judged as a rebuild against the other " << loo.runs.size() - 1 << ": "
      << loo.paged << " paged (about "
      << number_text(false_page_rate * static_cast<double>(loo.runs.size()))
      << " expected at false_page_rate " << number_text(false_page_rate) << ")\n";
  for (const auto& run : loo.runs) {
    if (is_failure(run.verdict.cls) || run.verdict.cls == VerdictClass::uncalibrated) {
      out << "  seed run " << run.index + 1 << ": " << to_string(run.verdict.cls) << " — "
          << summary_text(verdict_summary(run.verdict)) << "\n";
    }
  }
  if (const auto excess = leave_one_out_excess(loo, false_page_rate))
    out << "WARNING: leave-one-out: "
        << excess_warning(*excess, false_page_rate, m.id(), policy.command_scope) << "\n";
}

nlohmann::json outcome_json(const Manifest& m, const CalibrationOutcome& outcome,
                            const VerdictPolicy& policy) {
  const double false_page_rate = policy.false_page_rate;
  nlohmann::json bands = nlohmann::json::array();
  for (const auto& check : outcome.bands)
    bands.push_back(to_json(check));
  nlohmann::json j = {{"model", m.model},
                      {"version", m.version},
                      {"added", outcome.added},
                      {"runs", outcome.runs},
                      {"bands", bands},
                      {"underpowered", !outcome.power.underpowered.empty()},
                      {"stopped", outcome.stopped},
                      {"tolerance", outcome.spec ? tolerance_to_json(*outcome.spec) : nullptr}};
  if (outcome.leave_one_out) {
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& run : outcome.leave_one_out->runs) {
      const VerdictSummary summary = verdict_summary(run.verdict);
      runs.push_back({{"seed_run", run.index + 1},
                      {"class", to_string(run.verdict.cls)},
                      {"headline", summary.headline},
                      {"failing", summary.failing}});
    }
    j["leave_one_out"] = {{"paged", outcome.leave_one_out->paged}, {"runs", runs}};
    if (const auto excess = leave_one_out_excess(*outcome.leave_one_out, false_page_rate)) {
      nlohmann::json blamed = nlohmann::json::array();
      for (const auto& blame : excess->blamed) {
        blamed.push_back({{"check", blame.check},
                          {"runs", blame.runs},
                          {"floor", blame.floor ? nlohmann::json(*blame.floor) : nullptr}});
      }
      j["leave_one_out"]["warning"] = {
          {"expected", excess->expected},
          {"tail", excess->tail},
          {"blamed", blamed},
          {"action", excess_action(*excess, m.id(), policy.command_scope)},
          {"text", excess_warning(*excess, false_page_rate, m.id(), policy.command_scope)}};
    }
  }
  if (outcome.failure)
    j["failure"] = to_json(*outcome.failure);
  return j;
}

// Options that contradict --mode steps: its reruns use the release's own seeds (a same-seed
// comparison, docs/design.md) and replace the stored ones; seeds to choose and power to reach
// belong to the seed-only reruns of full mode.
std::optional<std::string> steps_mode_conflict(const CalibrateArguments& args) {
  if (args.run.mode != RebuildMode::steps)
    return std::nullopt;
  if (args.first_seed) {
    return "--first-seed cannot be used with --mode steps: its reruns keep the release's own "
           "seeds (a same-seed comparison); drop --first-seed, or add seed-only reruns with "
           "--mode full";
  }
  if (args.until_power) {
    return "--until-power cannot be used with --mode steps: it adds seed-only reruns until "
           "tolerance.detect is met, which only --mode full records; steps mode records --seeds "
           "same-seed reruns";
  }
  if (static_cast<std::size_t>(args.seeds) < kMinSeedRuns) {
    return "--seeds " + std::to_string(args.seeds) +
           " with --mode steps: these same-seed reruns replace the stored ones, and a steps band "
           "needs at least " +
           std::to_string(kMinSeedRuns);
  }
  return std::nullopt;
}

// The calibration's runs, its bands with their power, leave-one-out and what --until-power did.
void print_calibration(std::ostream& out, const RunContext& ctx,
                       const CalibrationOutcome& outcome) {
  const Manifest& m = ctx.request.manifest;
  const bool steps = ctx.request.mode == RebuildMode::steps;
  if (outcome.added == 0) {
    out << "the calibration of " << m.id() << " as it stands, judged again (--seeds 0): "
        << seed_run_count(*outcome.spec, m.evaluation.primary.name) << " seed runs\n";
  } else {
    out << "calibrated " << m.id() << ": " << outcome.added
        << (steps ? " same-seed reruns of the first " + std::to_string(ctx.request.max_steps) +
                        " steps"
                  : " seed-only reruns added")
        << "\n";
  }
  for (const auto& run : outcome.runs) {
    out << "  " << run["run"].get<std::string>();
    if (run.contains("primary"))
      out << ": " << m.evaluation.primary.name << " " << run["primary"];
    out << "\n";
  }
  out << "\nbands and their power (false_page_rate " << ctx.config.verdict.false_page_rate
      << ", split over the families of checks):\n";
  print_bands(out, outcome.bands);
  if (outcome.leave_one_out)
    print_leave_one_out(out, m, *outcome.leave_one_out, ctx.config.verdict);
  if (!outcome.stopped.empty())
    out << "\n--until-power: " << outcome.stopped << "\n";
  if (!outcome.power.underpowered.empty()) {
    out << "UNDERPOWERED: " << outcome.power.underpowered.size()
        << " band(s) cannot catch the shift tolerance.detect asks"
        << (outcome.power.runs_needed
                ? "; " + std::to_string(*outcome.power.runs_needed) + " seed runs in all would"
                : std::string())
        << "\n";
  }
}

// Stores the calibration in --config's state_dir, where verdicts read it, saying so; without
// --config, says how to keep one.
Status keep_calibration(std::ostream& out, const RunContext& ctx,
                        const CalibrationOutcome& outcome) {
  const Manifest& m = ctx.request.manifest;
  if (!ctx.store_is_throwaway) {
    auto stored = ctx.store->put_calibration(
        m.model, m.version, *outcome.spec,
        static_cast<int>(seed_run_count(*outcome.spec, m.evaluation.primary.name)),
        CalibrationEnd::complete, {},
        outcome.leave_one_out ? std::optional(leave_one_out_finding(
                                    *outcome.leave_one_out, ctx.config.verdict.false_page_rate))
                              : std::nullopt,
        calibrated_reference(ctx.request.mode));
    if (!stored.ok())
      return make_error(stored.error().code, "storing the calibration: " + stored.error().message);
    out << "stored in " << ctx.config.db_path().string() << "; later "
        << (ctx.request.mode == RebuildMode::subsample ? "subsample verdicts of " + m.id()
                                                       : "verdicts of " + m.id())
        << " use it\n";
  } else {
    out << "measured, not kept: without --config there is no state to keep it in. Rerun with "
           "--config FILE to store it where the daemon's and `reverify run --config`'s verdicts "
           "read it, or record seed runs at release (`reverify capture "
        << (ctx.request.mode == RebuildMode::subsample ? "--subsample-seed-runs" : "--seed-runs")
        << " DIR`)\n";
  }
  return {};
}

int run_calibrate(const CalibrateArguments& args) {
  if (auto conflict = steps_mode_conflict(args))
    return usage_error(kCalibrateName, *conflict);
  auto ctx = make_run_context(args.run);
  if (!ctx.ok())
    return usage_error(kCalibrateName, ctx.error().message);
  CalibrationRequest request;
  request.base = ctx->request;
  request.runs = args.seeds;
  request.first_seed = args.first_seed;
  request.until_power = args.until_power;
  request.max_runs = args.max_runs;
  request.detect = ctx->request.detect;
  CalibrationOutcome outcome = [&] {
    RunProgress progress;  // its status line is erased before the results print
    PipelineDeps deps{*ctx->runner, ctx->config.verdict, progress.stages(), progress.started(),
                      progress.logs()};
    return run_calibration(request, deps);
  }();
  const Manifest& m = ctx->request.manifest;
  std::ostream& out = args.json ? std::cerr : std::cout;
  if (outcome.failure) {
    out << "calibration of " << m.id() << " stopped: " << to_string(outcome.failure->cls) << "\n  "
        << outcome.failure->explanation << "\n";
    if (!outcome.log_tail.empty())
      out << "job log (tail):\n" << outcome.log_tail << "\n";
  }
  if (!outcome.spec) {
    if (args.json)
      std::cout << outcome_json(m, outcome, ctx->config.verdict).dump(2) << "\n";
    return outcome.failure ? exit_status(outcome.failure->cls) : 2;
  }
  print_calibration(out, *ctx, outcome);
  if (args.json)
    std::cout << outcome_json(m, outcome, ctx->config.verdict).dump(2) << "\n";
  if (Status kept = keep_calibration(out, *ctx, outcome); !kept.ok())
    return usage_error(kCalibrateName, kept.error().message);
  return outcome.failure ? exit_status(outcome.failure->cls) : 0;
}

Action define_calibrate(CLI::App& app) {
  auto o = std::make_shared<CalibrateArguments>();
  add_run_arguments(app, o->run);
  app.add_option("--seeds", o->seeds,
                 "reruns to add: seed-only reruns (full mode; with --until-power, the first "
                 "batch; 0: none, the calibration as it stands is printed and judged by "
                 "leave-one-out again), or same-seed reruns of the first --max-steps steps, which "
                 "replace the stored ones, at least " +
                     std::to_string(kMinSeedRuns) + " (--mode steps)")
      ->type_name("N")
      ->check(integer_in(0, 1000))
      ->capture_default_str();
  app.add_option("--first-seed", o->first_seed,
                 "REVERIFY_SEED_OVERRIDE of the first seed-only rerun, the others counting up "
                 "(default: one past the largest seed the calibration already used); full mode "
                 "only")
      ->type_name("S")
      ->check(integer_in(0, 1000000));
  app.add_flag("--until-power", o->until_power,
               "full mode: keep adding seed-only reruns until every band with a declared "
               "tolerance.detect catches that shift with 80% probability, or the calibration "
               "holds --max-runs seed runs, or a rerun fails, or no number of runs would even "
               "with a spread at the low end of what the runs so far allow (95% lower "
               "confidence limit). Each batch is what the projection from the spread measured "
               "so far needs; when it says no number of runs would do but the low end says some "
               "would, that spread is itself an estimate, so half as many runs again (at least "
               "5) are added and it looks again");
  app.add_option("--max-runs", o->max_runs,
                 "--until-power: the most seed runs the calibration may hold in all")
      ->type_name("N")
      ->check(integer_in(3, 10000))
      ->capture_default_str();
  add_json_flag(app, o->json);
  return [o] { return run_calibrate(*o); };
}

const Registrar kCalibrate{{kCalibrateName,
                            "measure seed-to-seed spread with seed-only reruns (or same-seed steps "
                            "reruns), report each band's power and a leave-one-out estimate, and "
                            "store it as the model version's tolerance",
                            define_calibrate}};

}  // namespace
}  // namespace reverify::cli
