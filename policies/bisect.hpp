#pragma once
// `reverify bisect MODEL@A MODEL@B`, the decisions: which training inputs differ between two
// releases (from the manifest diff), which of them can be swapped one at a time from A's value to
// B's and which cannot (and why), the mixture manifest each swap rebuilds, what the swaps cost
// and which fit a budget, and how the rebuilt mixtures read against A's bands. Pure: no I/O (the
// CLI rebuilds the mixtures through verify/'s pipeline and prints what this decides).
//
// The inputs, in the order they are swapped: code (repo + commit), data (the snapshot), environment
// (image, lockfile and the job's environment variables: one unit), config (the resolved config the
// contract hands the job as REVERIFY_CONFIG), seeds (REVERIFY_SEEDS). A mixture is A's manifest
// with one input replaced by B's; it is judged as a rebuild of A (A's reference, A's bands, A's
// level), read from A's location, with B's relative URIs made absolute against B's.
//
// Refused as a whole (incomparable metrics): a different frozen eval set (evaluation.set's
// sha256), a different scoring spec, a different primary metric or direction.
// Refused per input (what a mixture could not deliver to the job, or would fail preflight on):
// - code from a dirty tree in B: its diff is the code.diff file beside B's manifest, and a
//   mixture is read beside A's;
// - data that differs only in data.split or data.labels: the contract hands the job the snapshot
//   alone (its split comes from its config or code);
// - environment with a different lockfile: the lockfile is a file of the code checkout that
//   preflight checks against the commit, so it moves with the code: when code moved too, code and
//   environment are swapped together as one mixture (which of the two moved the metric stays
//   open), else the environment is refused;
// - environment whose image differs on a runner that runs no image (process);
// - environment that differs only in recorded facts no runner sets (python, framework,
//   accelerator, determinism, threads, world size): the rebuild would run on A's platform.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/manifest.hpp"
#include "core/result.hpp"
#include "policies/manifest_diff.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {

enum class BisectInput { code, data, environment, config, seeds };
template <>
struct EnumNames<BisectInput> {
  static constexpr EnumName<BisectInput> table[] = {
      {BisectInput::code, "code"},
      {BisectInput::data, "data"},
      {BisectInput::environment, "environment"},
      {BisectInput::config, "config"},
      {BisectInput::seeds, "seeds"},
  };
};

// One mixture: A with these inputs (one, or code and environment together) taken from B.
struct BisectSwap {
  std::vector<BisectInput> inputs;
  std::vector<FieldChange> changes;  // what differs in them, from the manifest diff
  std::string note;                  // why more than one input, or what of B is not delivered
  std::string name() const;          // "code", "code+environment"
};

struct RefusedInput {
  BisectInput input;
  std::string reason;
};

struct BisectPlan {
  std::vector<BisectSwap> swaps;       // in input order
  std::vector<RefusedInput> refused;   // moved, but not swappable alone
  std::vector<BisectInput> unchanged;  // equal in A and B: nothing to rebuild
};

// The swaps between A and B. An error (invalid_argument) when their metrics are incomparable,
// naming the field. runner_runs_images: whether the configured runner runs the manifest's image.
Result<BisectPlan> plan_bisect(const Manifest& a, const Manifest& b, bool runner_runs_images);

// A with the swap's inputs taken from B; B's relative data URI and code.repo path are made
// absolute against b_location (the mixture is read from A's location).
Manifest mixture_manifest(const Manifest& a, const Manifest& b, const std::string& b_location,
                          const BisectSwap& swap);

// What one rebuild of A costs: its recorded run.duration_s on its accelerator.count devices.
struct RebuildCost {
  std::optional<double> duration_s;         // absent: A records none
  std::int64_t devices = 0;                 // 0: CPU only
  std::optional<double> gpu_hours() const;  // duration x devices / 3600
};
RebuildCost rebuild_cost(const Manifest& a);

// --budget: "N" rebuilds, or "Xgpu-h" GPU-hours ("2.5gpu-h").
struct BisectBudget {
  enum class Unit { rebuilds, gpu_hours } unit = Unit::rebuilds;
  double amount = 0;
};
Result<BisectBudget> parse_bisect_budget(const std::string& text);

// How many of `swaps` mixtures (in order) the budget allows; an error when a GPU-hour budget
// cannot be applied because A records no duration.
Result<std::size_t> swaps_within_budget(std::size_t swaps, const RebuildCost& cost,
                                        const std::optional<BisectBudget>& budget);

// One rebuilt mixture read against A: the primary check and the segment checks out of A's band.
struct SwapReading {
  std::string swap;  // BisectSwap::name()
  VerdictClass cls = VerdictClass::uncalibrated;
  std::optional<CheckResult> primary;
  std::vector<CheckResult> segments_out;  // segment checks that failed A's band
  std::string explanation;                // the verdict's, for errors and input drift
  bool conclusive() const;                // the rebuild ran and was judged on its metric
  bool moved() const;                     // conclusive, primary outside A's band
  std::optional<double> delta() const;    // observed - A's reference
};
SwapReading read_swap(const BisectSwap& swap, const Verdict& verdict);

// The whole answer: which swap moved the primary metric (and segments), by how much, in or out
// of A's band, with what was not run, refused or unchanged; and B's own recorded value for scale.
struct BisectReport {
  std::string a, b;  // MODEL@VERSION
  std::string metric;
  double a_value = 0, b_value = 0;  // recorded primary values
  BisectPlan plan;
  RebuildCost cost;
  std::vector<SwapReading> readings;  // the swaps that ran, in order
  std::vector<std::string> not_run;   // swaps the budget left out
  std::vector<std::string> moved() const;
  std::string conclusion() const;  // one or two sentences for people
};

nlohmann::json to_json(const BisectReport& report);

}  // namespace reverify
