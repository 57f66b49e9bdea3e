#include "policies/bisect.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "core/text.hpp"
#include "core/uri.hpp"
#include "policies/number_text.hpp"

namespace reverify {
namespace {
using nlohmann::json;

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// The field paths of `section`'s changes that start with one of `prefixes`.
std::vector<std::string> paths_under(const SectionDiff& section,
                                     const std::vector<std::string>& prefixes) {
  std::vector<std::string> paths;
  for (const auto& change : section.changes) {
    for (const auto& prefix : prefixes) {
      if (change.path == prefix || starts_with(change.path, prefix + ".") ||
          starts_with(change.path, prefix + "[")) {
        paths.push_back(change.path);
        break;
      }
    }
  }
  return paths;
}

// Fields that make A's and B's metrics incomparable: an error naming them.
Status check_comparable(const ManifestDiff& diff) {
  for (const auto& section : diff.sections) {
    if (section.section != "evaluation")
      continue;
    const auto set = paths_under(section, {"evaluation.set.sha256"});
    if (!set.empty() ||
        std::any_of(section.changes.begin(), section.changes.end(),
                    [](const FieldChange& c) { return c.path == "evaluation.set"; })) {
      return make_error(ErrorCode::invalid_argument,
                        "A and B are scored on different frozen eval sets (evaluation.set.sha256 "
                        "differs): their metrics are incomparable, so no swap can be judged "
                        "against A's bands");
    }
    if (const auto spec = paths_under(section, {"evaluation.scoring"}); !spec.empty()) {
      return make_error(ErrorCode::invalid_argument,
                        "A and B score their predictions differently (" + joined(spec) +
                            "): their metrics are incomparable");
    }
    if (const auto primary = paths_under(
            section, {"evaluation.primary.name", "evaluation.primary.higher_is_better"});
        !primary.empty()) {
      return make_error(ErrorCode::invalid_argument, "A and B have different primary metrics (" +
                                                         joined(primary) +
                                                         "): there is no one metric to bisect");
    }
  }
  return {};
}

const SectionDiff* section_of(const ManifestDiff& diff, BisectInput input) {
  for (const auto& section : diff.sections) {
    if (section.section == to_string(input))
      return &section;
  }
  return nullptr;
}

// Why swapping B's data in would mix nothing (only what the job is not handed differs); else
// nullopt, with a note on `swap` for what differs besides the snapshot.
std::optional<std::string> data_refusal(const SectionDiff& section, BisectSwap& swap) {
  const auto rest = paths_under(section, {"data.split", "data.labels"});
  if (paths_under(section, {"data.snapshot"}).empty()) {
    return "only " + joined(rest) +
           " differ: the contract hands the job the snapshot alone (its split comes from its "
           "config or code), so the mixture would rebuild A";
  }
  if (!rest.empty())
    swap.note = joined(rest) + " also differ: not handed to the job (the snapshot is)";
  return std::nullopt;
}

// Why B's environment (its lockfile unchanged) cannot be swapped in: an image the runner does not
// run, or only platform facts no runner sets; nullopt when it can.
std::optional<std::string> environment_refusal(const SectionDiff& section,
                                               bool runner_runs_images) {
  const bool image = !paths_under(section, {"environment.image"}).empty();
  if (image && !runner_runs_images) {
    return "environment.image differs, and the configured runner runs the job on this machine, "
           "not in an image: swap it with --runner docker or kubernetes";
  }
  if (!image && paths_under(section, {"environment.env"}).empty()) {
    return "only recorded platform facts differ (" + joined(paths_under(section, {"environment"})) +
           "): no runner sets them, so the mixture would rebuild A's platform";
  }
  return std::nullopt;
}

}  // namespace

std::string BisectSwap::name() const {
  std::string text;
  for (BisectInput input : inputs)
    text += (text.empty() ? "" : "+") + std::string(to_string(input));
  return text;
}

Result<BisectPlan> plan_bisect(const Manifest& a, const Manifest& b, bool runner_runs_images) {
  const ManifestDiff diff = diff_manifests(a, b);
  if (Status comparable = check_comparable(diff); !comparable.ok())
    return comparable.error();
  BisectPlan plan;
  const SectionDiff* env = section_of(diff, BisectInput::environment);
  const SectionDiff* code = section_of(diff, BisectInput::code);
  const bool lockfile_moved = env && !paths_under(*env, {"environment.lockfile"}).empty();
  bool code_refused = false;
  if (code && b.code.dirty) {
    plan.refused.push_back(
        {BisectInput::code,
         "B's code is a dirty tree: its diff is the code.diff file beside B's manifest, and a "
         "mixture is read beside A's; release B from a commit to swap its code"});
    code_refused = true;
  }
  for (const auto& entry : EnumNames<BisectInput>::table) {
    const BisectInput input = entry.value;
    const SectionDiff* section = section_of(diff, input);
    if (!section) {
      plan.unchanged.push_back(input);
      continue;
    }
    BisectSwap swap{{input}, section->changes, {}};
    switch (input) {
      case BisectInput::code:
        if (code_refused)
          continue;
        if (lockfile_moved) {
          swap.inputs.push_back(BisectInput::environment);
          swap.changes.insert(swap.changes.end(), env->changes.begin(), env->changes.end());
          swap.note =
              "code and environment are swapped together: the lockfile (environment.lockfile) "
              "is a file of the code checkout, checked against the commit before the job runs, "
              "so it moves with the code; which of the two moved the metric stays open";
        }
        break;
      case BisectInput::data:
        if (auto refusal = data_refusal(*section, swap)) {
          plan.refused.push_back({input, std::move(*refusal)});
          continue;
        }
        break;
      case BisectInput::environment: {
        if (lockfile_moved) {
          if (!code || code_refused) {
            plan.refused.push_back(
                {input,
                 "environment.lockfile differs, and the lockfile is a file of the code "
                 "checkout checked against the commit: it cannot move without the code"});
          }
          continue;  // swapped with the code, above
        }
        if (auto refusal = environment_refusal(*section, runner_runs_images)) {
          plan.refused.push_back({input, std::move(*refusal)});
          continue;
        }
        break;
      }
      case BisectInput::config:
      case BisectInput::seeds:
        break;  // the contract hands both to the job (REVERIFY_CONFIG, REVERIFY_SEEDS)
    }
    plan.swaps.push_back(std::move(swap));
  }
  return plan;
}

Manifest mixture_manifest(const Manifest& a, const Manifest& b, const std::string& b_location,
                          const BisectSwap& swap) {
  Manifest mixed = a;
  for (BisectInput input : swap.inputs) {
    switch (input) {
      case BisectInput::code:
        mixed.code = b.code;
        if (b.code.repo)
          mixed.code.repo = repo_location(*b.code.repo, b_location);
        break;
      case BisectInput::data:
        mixed.data = b.data;
        if (mixed.data && mixed.data->snapshot && mixed.data->snapshot->kind == SnapshotKind::files)
          mixed.data->snapshot->uri = resolve_uri(b_location, mixed.data->snapshot->uri);
        break;
      case BisectInput::environment:
        mixed.environment = b.environment;
        break;
      case BisectInput::config:
        mixed.config = b.config;
        break;
      case BisectInput::seeds:
        mixed.seeds = b.seeds;
        break;
    }
  }
  return mixed;
}

std::optional<double> RebuildCost::gpu_hours() const {
  if (!duration_s)
    return std::nullopt;
  return *duration_s * static_cast<double>(devices) / 3600.0;
}

RebuildCost rebuild_cost(const Manifest& a) {
  RebuildCost cost;
  cost.duration_s = a.run.duration_s;
  if (a.environment && a.environment->accelerator)
    cost.devices = a.environment->accelerator->count;
  return cost;
}

Result<BisectBudget> parse_bisect_budget(const std::string& text) {
  static const std::string kGpuHours = "gpu-h";
  const bool gpu = text.size() > kGpuHours.size() &&
                   text.compare(text.size() - kGpuHours.size(), kGpuHours.size(), kGpuHours) == 0;
  const std::string number = gpu ? text.substr(0, text.size() - kGpuHours.size()) : text;
  double amount = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), amount);
  const bool whole = std::floor(amount) == amount;
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(amount) || amount < 0 || (!gpu && !whole)) {
    return make_error(
        ErrorCode::invalid_argument,
        "--budget: expected a count of rebuilds (3) or GPU-hours (2.5gpu-h), got \"" + text + "\"");
  }
  return BisectBudget{gpu ? BisectBudget::Unit::gpu_hours : BisectBudget::Unit::rebuilds, amount};
}

Result<std::size_t> swaps_within_budget(std::size_t swaps, const RebuildCost& cost,
                                        const std::optional<BisectBudget>& budget) {
  if (!budget)
    return swaps;
  if (budget->unit == BisectBudget::Unit::rebuilds)
    return std::min(swaps, static_cast<std::size_t>(budget->amount));
  const auto each = cost.gpu_hours();
  if (!each) {
    return make_error(ErrorCode::invalid_argument,
                      "--budget " + number_text(budget->amount) +
                          "gpu-h: A records no run.duration_s, so a rebuild's GPU-hours are "
                          "unknown; give the budget as a count of rebuilds");
  }
  if (*each <= 0)
    return swaps;  // CPU only: no rebuild spends GPU-hours
  return std::min(swaps, static_cast<std::size_t>(std::floor(budget->amount / *each + 1e-9)));
}

bool SwapReading::conclusive() const {
  // An uncalibrated A has no band to be in or out of; an error or drifted input has no metric.
  return primary.has_value() && primary->band.has_value() &&
         (primary->outcome == CheckOutcome::passed || primary->outcome == CheckOutcome::failed) &&
         !is_error(cls) && cls != VerdictClass::failed_input_drift;
}

bool SwapReading::moved() const {
  return conclusive() && primary->outcome == CheckOutcome::failed;
}

std::optional<double> SwapReading::delta() const {
  if (!primary || !primary->observed || !primary->reference)
    return std::nullopt;
  return *primary->observed - *primary->reference;
}

SwapReading read_swap(const BisectSwap& swap, const Verdict& verdict) {
  SwapReading reading;
  reading.swap = swap.name();
  reading.cls = verdict.cls;
  reading.explanation = verdict.explanation;
  if (const CheckResult* primary = verdict.primary())
    reading.primary = *primary;
  for (const auto& check : verdict.checks) {
    if (check.kind == CheckKind::segment && check.outcome == CheckOutcome::failed &&
        check.decides())
      reading.segments_out.push_back(check);
  }
  return reading;
}

std::vector<std::string> BisectReport::moved() const {
  std::vector<std::string> names;
  for (const auto& reading : readings) {
    if (reading.moved())
      names.push_back(reading.swap);
  }
  return names;
}

std::string BisectReport::conclusion() const {
  if (plan.swaps.empty())
    return "no input A and B differ in can be swapped: nothing was rebuilt";
  const std::vector<std::string> names = moved();
  std::string text;
  std::vector<std::string> in_band, segments_only, open;
  for (const auto& reading : readings) {
    if (!reading.conclusive())
      open.push_back(reading.swap + " (" + to_string(reading.cls) + ")");
    else if (!reading.moved() && reading.segments_out.empty())
      in_band.push_back(reading.swap);
    else if (!reading.moved())
      segments_only.push_back(reading.swap + " (" + std::to_string(reading.segments_out.size()) +
                              " segment(s))");
    if (reading.moved() && names.size() == 1) {
      text = "the " + reading.swap + " swap moved " + metric +
             " outside A's band: " + number_text(*reading.primary->observed);
      if (const auto delta = reading.delta()) {
        text += " against A's reference " + number_text(*reading.primary->reference) + " (" +
                (*delta >= 0 ? "+" : "") + number_text(*delta) + ")";
      }
    }
  }
  if (names.size() > 1) {
    text = std::to_string(names.size()) + " swaps each moved " + metric +
           " outside A's band: " + joined(names);
  } else if (names.empty()) {
    text = "no single swap moved " + metric + " outside A's band";
  }
  if (!segments_only.empty())
    text += "; segments moved outside their bands with " + joined(segments_only);
  if (!in_band.empty())
    text += "; in A's band: " + joined(in_band);
  for (const auto& name : not_run)
    open.push_back(name + " (not run)");
  for (const auto& refused_input : plan.refused)
    open.push_back(std::string(to_string(refused_input.input)) + " (refused)");
  if (!open.empty())
    text += "; not judged: " + joined(open);
  else if (names.empty())
    text += "; what moved needs more than one input together, or nothing moved";
  text += ". B records " + number_text(b_value) + ", A " + number_text(a_value);
  return text;
}

namespace {

json check_json(const CheckResult& check) {
  json j = {{"name", check.name},
            {"outcome", to_string(check.outcome)},
            {"observed", check.observed ? json(*check.observed) : json(nullptr)},
            {"reference", check.reference ? json(*check.reference) : json(nullptr)},
            {"band", to_json(check.band)},
            {"margin", check.margin ? json(*check.margin) : json(nullptr)},
            {"seed_runs", check.seed_runs ? json(*check.seed_runs) : json(nullptr)}};
  if (check.observed && check.reference)
    j["delta"] = *check.observed - *check.reference;
  return j;
}

json changes_json(const std::vector<FieldChange>& changes) {
  json list = json::array();
  for (const auto& change : changes) {
    json c = {{"path", change.path}};
    c["a"] = change.old_value ? *change.old_value : json(nullptr);
    c["b"] = change.new_value ? *change.new_value : json(nullptr);
    list.push_back(std::move(c));
  }
  return list;
}

}  // namespace

json to_json(const BisectReport& report) {
  json swaps = json::array();
  for (const auto& swap : report.plan.swaps) {
    json s = {{"swap", swap.name()}, {"changes", changes_json(swap.changes)}};
    if (!swap.note.empty())
      s["note"] = swap.note;
    const auto reading =
        std::find_if(report.readings.begin(), report.readings.end(),
                     [&swap](const SwapReading& r) { return r.swap == swap.name(); });
    if (reading == report.readings.end()) {
      s["ran"] = false;
    } else {
      s["ran"] = true;
      s["class"] = to_string(reading->cls);
      s["conclusive"] = reading->conclusive();
      s["moved"] = reading->moved();
      s["primary"] = reading->primary ? check_json(*reading->primary) : json(nullptr);
      json segments = json::array();
      for (const auto& check : reading->segments_out)
        segments.push_back(check_json(check));
      s["segments_out_of_band"] = std::move(segments);
      if (!reading->conclusive())
        s["explanation"] = reading->explanation;
    }
    swaps.push_back(std::move(s));
  }
  json refused = json::array();
  for (const auto& r : report.plan.refused)
    refused.push_back({{"input", to_string(r.input)}, {"reason", r.reason}});
  json unchanged = json::array();
  for (BisectInput input : report.plan.unchanged)
    unchanged.push_back(to_string(input));
  const auto duration = report.cost.duration_s;
  const auto gpu_hours = report.cost.gpu_hours();
  return {{"a", report.a},
          {"b", report.b},
          {"metric", report.metric},
          {"a_value", report.a_value},
          {"b_value", report.b_value},
          {"cost_per_rebuild",
           {{"duration_s", duration ? json(*duration) : json(nullptr)},
            {"devices", report.cost.devices},
            {"gpu_hours", gpu_hours ? json(*gpu_hours) : json(nullptr)}}},
          {"swaps", std::move(swaps)},
          {"not_run", report.not_run},
          {"refused", std::move(refused)},
          {"unchanged", std::move(unchanged)},
          {"moved", report.moved()},
          {"conclusion", report.conclusion()}};
}

}  // namespace reverify
