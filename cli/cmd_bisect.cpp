// reverify bisect MODEL@A MODEL@B: which input moved the metric between two releases. It rebuilds
// A with one input at a time taken from B (policies/bisect.hpp decides which, refuses what cannot
// be swapped alone, and reads the results), each mixture through verify/'s pipeline on the
// configured runner and judged as a rebuild of A: against A's reference and A's bands (its
// manifest's tolerance and, with --config, its stored calibration). Nothing is recorded, nobody
// is paged. The cost is printed before anything runs; --budget stops early and says what was not
// run. Full mode only: a bisect is about the metric.
// Exit status (kExitStatus, in its --help): 0 every swap ran and was judged, 1 some were not (over
// --budget, an error:* or input-drift rebuild, an uncalibrated A without a band), 2 refused
// (incomparable releases) or a usage or input error, 3 nothing was rebuilt (every input that
// differs was refused, none differs, or --budget allowed none): no answer, which a script must not
// read as "every swap judged".

#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/run_context.hpp"
#include "cli/run_progress.hpp"
#include "policies/bisect.hpp"
#include "policies/number_text.hpp"
#include "verify/pipeline.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kBisectName = "bisect";
constexpr int kNothingRebuilt = 3;
constexpr const char* kExitStatus =
    "Exit status: 0 every swap ran and was judged; 1 some were not (over --budget, an error:* or "
    "input-drift rebuild, an uncalibrated A); 2 refused (incomparable releases) or a usage error; "
    "3 nothing was rebuilt (every input that differs was refused, none differs, or --budget "
    "allowed none).";

struct BisectArguments {
  RunArguments run;  // run.target is A
  std::string b;
  std::optional<std::string> budget;
  bool json = false;
};

// A field's value for one line: long hashes and commits cut to their first 12 characters, long
// paths to their last 28 (where they differ).
std::string value_text(const std::optional<nlohmann::json>& value) {
  if (!value)
    return "(absent)";
  if (value->is_string()) {
    const auto& text = value->get_ref<const std::string&>();
    if (text.size() <= 32)
      return text;
    if (text.find('/') != std::string::npos)
      return "…" + text.substr(text.size() - 28);
    return text.substr(0, 12) + "…";
  }
  const std::string text = value->dump();
  return text.size() > 40 ? text.substr(0, 37) + "…" : text;
}

std::string inputs_text(const std::vector<BisectInput>& inputs) {
  std::string text;
  for (BisectInput input : inputs)
    text += (text.empty() ? "" : ", ") + std::string(to_string(input));
  return text.empty() ? "none" : text;
}

std::string duration_text(double seconds) {
  if (seconds < 120)
    return number_text(seconds) + " s";
  if (seconds < 7200)
    return number_text(seconds / 60) + " min";
  return number_text(seconds / 3600) + " h";
}

// "1.2 s on CPU only (0 GPU-hours)" for `count` rebuilds.
std::string cost_text(const RebuildCost& cost, std::size_t count) {
  if (!cost.duration_s)
    return "unknown (A records no run.duration_s)";
  const double n = static_cast<double>(count);
  std::string text = duration_text(*cost.duration_s * n);
  if (cost.devices == 0)
    return text + " on CPU only (0 GPU-hours)";
  return text + " on " + std::to_string(cost.devices) +
         " GPU(s) = " + number_text(*cost.gpu_hours() * n) + " GPU-hours";
}

std::string band_text(const std::optional<CheckBand>& band) {
  if (!band)
    return "no band";
  if (!band->lower)
    return "≤ " + number_text(band->upper);
  return "[" + number_text(*band->lower) + ", " + number_text(band->upper) + "]";
}

std::string signed_text(double value) {
  return (value >= 0 ? "+" : "") + number_text(value);
}

void print_plan(std::ostream& out, const BisectReport& report, std::size_t to_run) {
  out << "bisect " << report.a << " -> " << report.b << " on " << report.metric << ": A records "
      << number_text(report.a_value) << ", B " << number_text(report.b_value) << "\n";
  out << "equal in A and B, not rebuilt: " << inputs_text(report.plan.unchanged) << "\n";
  for (const auto& refused : report.plan.refused)
    out << "refused: " << to_string(refused.input) << ": " << refused.reason << "\n";
  out << "cost: each mixture is one rebuild of A, " << cost_text(report.cost, 1) << "; "
      << report.plan.swaps.size()
      << " mixture(s): " << cost_text(report.cost, report.plan.swaps.size()) << "\n";
  if (to_run < report.plan.swaps.size())
    out << "--budget allows " << to_run << " of them\n";
  out << "mixtures (A with B's value of one input), each judged against A's bands:\n";
  for (const auto& swap : report.plan.swaps) {
    out << "  " << swap.name() << ":";
    std::size_t shown = 0;
    for (const auto& change : swap.changes) {
      if (shown++ == 4) {
        out << " (+" << swap.changes.size() - 4 << " more)";
        break;
      }
      out << " " << change.path << " " << value_text(change.old_value) << " -> "
          << value_text(change.new_value) << ";";
    }
    out << "\n";
    if (!swap.note.empty())
      out << "    note: " << swap.note << "\n";
  }
}

void print_results(std::ostream& out, const BisectReport& report) {
  out << "\nresults, against A's reference and A's band:\n";
  for (const auto& reading : report.readings) {
    out << "  " << std::left << std::setw(18) << reading.swap << std::setw(26)
        << to_string(reading.cls);
    if (!reading.conclusive()) {
      out << "not judged";
      if (reading.primary && reading.primary->observed)
        out << " (" << report.metric << " " << number_text(*reading.primary->observed) << ")";
      out << ": " << reading.explanation.substr(0, reading.explanation.find('\n')) << "\n";
      continue;
    }
    const CheckResult& primary = *reading.primary;
    out << report.metric << " " << number_text(*primary.observed);
    if (auto delta = reading.delta())
      out << " (" << signed_text(*delta) << " vs A's " << number_text(*primary.reference) << ")";
    out << ", A's band " << band_text(primary.band);
    if (primary.seed_runs)
      out << " (" << *primary.seed_runs << " seed runs)";
    out << ": " << (reading.moved() ? "OUT of band" : "in band") << "\n";
    for (const auto& segment : reading.segments_out) {
      out << "      segment out of band: " << segment.name << " " << number_text(*segment.observed)
          << " vs A's " << number_text(*segment.reference) << ", band " << band_text(segment.band)
          << "\n";
    }
  }
  for (const auto& name : report.not_run)
    out << "  " << std::left << std::setw(18) << name << "not run: over --budget\n";
  out << "\nconclusion: " << report.conclusion() << "\n";
}

int run_bisect(const BisectArguments& args) {
  if (args.run.target == args.b)
    return usage_error(kBisectName, "A and B are the same version (" + args.b + ")");
  std::optional<BisectBudget> budget;
  if (args.budget) {
    auto parsed = parse_bisect_budget(*args.budget);
    if (!parsed.ok())
      return usage_error(kBisectName, parsed.error().message);
    budget = *parsed;
  }
  RunArguments a_args = args.run;
  a_args.record = false;  // a mixture is no verification of A: nothing is recorded
  auto ctx = make_run_context(a_args);
  if (!ctx.ok())
    return usage_error(kBisectName, "A: " + ctx.error().message);
  auto b = load_release(args.run, ctx->config, args.b);
  if (!b.ok())
    return usage_error(kBisectName, "B: " + b.error().message);
  const VerificationRequest& a = ctx->request;
  auto plan = plan_bisect(a.manifest, b->manifest, ctx->runner->kind() != RunnerKind::process);
  if (!plan.ok())
    return usage_error(kBisectName, "refused: " + plan.error().message);

  BisectReport report;
  report.a = a.manifest.id();
  report.b = b->manifest.id();
  report.metric = a.manifest.evaluation.primary.name;
  report.a_value = a.manifest.evaluation.primary.value;
  report.b_value = b->manifest.evaluation.primary.value;
  report.plan = std::move(plan).value();
  report.cost = rebuild_cost(a.manifest);
  auto to_run = swaps_within_budget(report.plan.swaps.size(), report.cost, budget);
  if (!to_run.ok())
    return usage_error(kBisectName, to_run.error().message);

  std::ostream& out = args.json ? std::cerr : std::cout;
  print_plan(out, report, *to_run);
  for (std::size_t i = 0; i < report.plan.swaps.size(); ++i) {
    const BisectSwap& swap = report.plan.swaps[i];
    if (i >= *to_run) {
      report.not_run.push_back(swap.name());
      continue;
    }
    VerificationRequest request = a;
    request.manifest = mixture_manifest(a.manifest, b->manifest, b->location, swap);
    request.verification_id = a.verification_id + "-swap" + std::to_string(i + 1);
    VerificationOutcome outcome = [&] {
      RunProgress progress;  // its status line is erased before the next line prints
      PipelineDeps deps{*ctx->runner, ctx->config.verdict, progress.stages(), progress.started(),
                        progress.logs()};
      return run_verification(request, deps);
    }();
    report.readings.push_back(read_swap(swap, outcome.verdict));
    const SwapReading& reading = report.readings.back();
    out << "rebuilt A with B's " << swap.name() << ": " << to_string(reading.cls);
    if (reading.conclusive())
      out << ", " << report.metric << " " << number_text(*reading.primary->observed);
    out << "\n";
  }
  if (args.json)
    std::cout << to_json(report).dump(2) << "\n";
  else
    print_results(std::cout, report);
  if (report.readings.empty())
    return kNothingRebuilt;
  const bool all_judged =
      report.not_run.empty() &&
      std::all_of(report.readings.begin(), report.readings.end(),
                  [](const SwapReading& reading) { return reading.conclusive(); });
  return all_judged ? 0 : 1;
}

Action define_bisect(CLI::App& app) {
  auto o = std::make_shared<BisectArguments>();
  app.add_option("MODEL@A", o->run.target, "the release the metric is judged against")->required();
  app.add_option("MODEL@B", o->b, "the release whose inputs are swapped into A one at a time")
      ->required();
  add_rebuild_options(app, o->run);
  app.get_option("--config")
      ->description(
          "reverifyd's config file: its sources find both manifests, its runner rebuilds "
          "the mixtures, and A's calibration stored in its state_dir makes A's bands; "
          "nothing is recorded there; without it: the process runner and A's manifest "
          "tolerance");
  app.add_option("--budget", o->budget,
                 "the most to spend: a count of rebuilds (3), or GPU-hours (2.5gpu-h) at A's "
                 "recorded run.duration_s and accelerator.count per rebuild; swaps past it are "
                 "not run, and the report names them")
      ->type_name("N|Xgpu-h");
  add_json_flag(app, o->json);
  app.footer(kExitStatus);
  return [o] { return run_bisect(*o); };
}

const Registrar kBisect{{kBisectName,
                         "rebuild A with one input at a time from B (code, data, environment, "
                         "config, seeds), judged against A's bands: which input moved the metric",
                         define_bisect}};

}  // namespace
}  // namespace reverify::cli
