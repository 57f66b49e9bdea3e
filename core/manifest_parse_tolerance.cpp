// Manifest validation: the tolerance section, the seed spread every band is made from.
#include <algorithm>
#include <array>
#include <functional>
#include <initializer_list>

#include "core/manifest_fields.hpp"
#include "core/manifest_path.hpp"
#include "core/names.hpp"
#include "core/statistic.hpp"

namespace reverify::manifest_fields {
namespace {

// Whether `name` names a parity check (policies/own_scores.hpp): "parity:<statistic>", optionally
// scoped to a segment; the per-class ones are made for the whole eval set only.
bool is_parity_check(std::string_view name) {
  auto consume = [&name](std::string_view prefix) {
    if (!name.starts_with(prefix))
      return false;
    name.remove_prefix(prefix.size());
    return true;
  };
  auto is_class = [](std::string_view c) { return !c.empty() && all_digits(c); };
  if (!consume("parity:"))
    return false;
  if (const auto scope = name.find(":segment:"); scope != std::string_view::npos) {
    const std::string_view segment = name.substr(scope + 9);
    const auto eq = segment.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == segment.size())
      return false;
    name = name.substr(0, scope);
    if (name.find(":class=") != std::string_view::npos || name.starts_with("class="))
      return false;
  }
  if (name == "argmax" || name == "top-k-set" || name == "top-k-order" || name == "tau-distance")
    return true;
  if (consume("class="))
    return is_class(name);
  if (!consume("threshold="))
    return false;
  const auto cls = name.find(":class=");
  if (cls != std::string_view::npos && !is_class(name.substr(cls + 7)))
    return false;
  return cls != 0 && !name.empty();
}

// Calls `element` with each element of the optional array `key` and its path; anything else
// there is a finding naming `expected`.
void for_each_element(ObjectReader& r, const char* key, std::string_view expected,
                      const std::function<void(const json&, const std::string&)>& element) {
  const json* v = r.optional(key);
  if (v == nullptr)
    return;
  const std::string at = r.path(key);
  if (!v->is_array()) {
    r.findings().mismatch(at, expected, *v);
    return;
  }
  for (std::size_t i = 0; i < v->size(); ++i)
    element((*v)[i], at + "[" + std::to_string(i) + "]");
}

// One same-seed rerun's scores: its predictions' hash, primary and segment values.
std::optional<SameSeedScore> read_same_seed_score(Findings& f, const json& v,
                                                  const std::string& at) {
  if (!is_object(f, v, at))
    return std::nullopt;
  ObjectReader run(f, v, at);
  SameSeedScore score;
  if (const json* sha = run.required("predictions_sha256", kSha256))
    score.predictions_sha256 =
        read_hex(f, *sha, run.path("predictions_sha256"), 64, kSha256).value_or("");
  if (const json* primary = run.optional("primary"))
    score.primary = read_number(f, *primary, run.path("primary"));
  score.segments = optional_map<std::map<std::string, double>>(run, "segments", metric_values(f));
  run.warn_unknown_keys();
  return score;
}

}  // namespace

// The "tolerance" section maps onto ToleranceSpec; every key is optional:
//   "tolerance": {
//     "seed_runs": {"accuracy": [0.9605, 0.9622, ...]},       metric -> its value in each seed run
//     "segment_seed_runs": {"digit=8": {"accuracy": [...]}},  segment -> metric -> values
//     "seed_overrides": [1, 2, ...],                          each seed run's seed override
//     "distribution_seed_runs": {"ks": [...], "psi": [...]},  statistic -> its value between the
//                                 release's predictions and each seed run's (ks, psi, wasserstein,
//                                 max_abs_diff, mean_abs_diff, flip_rate)
//     "parity_seed_runs": {"parity:threshold=0.5": [...]},   parity check -> the share of its
//                                 scope's records whose decision differs from the release's in
//                                 each seed run (keys start with "parity:threshold=")
//     "steps_same_seed_runs": [[2.30, 2.11, ...], ...],       same-seed reruns' step values
//     "same_seed_scores": [{"predictions_sha256": "<64 hex>",  same-seed reruns' predictions:
//                           "primary": 0.97,                    their values' hash (required),
//                           "segments": {"digit=3":             the primary metric and segment
//                                        {"accuracy": 0.95}}}], metrics reverify scored
//     "floor": {"accuracy": 0.0005},                          metric -> smallest band (>= 0)
//     "detect": {"accuracy": 0.01}                            check key -> shift to catch (> 0)
//   }
// Keys of earlier releases (distribution_pairs, steps_pairs_max_abs: statistics between pairs
// of different-seed runs) are warned about and dropped: they cannot give an honest band.
ToleranceSpec read_tolerance(ObjectReader& r) {
  ToleranceSpec t;
  Findings& f = r.findings();
  auto runs = [&f](const json& v, const std::string& at) { return read_numbers(f, v, at); };
  t.seed_runs = optional_map<std::vector<double>>(r, "seed_runs", runs);
  t.segment_seed_runs = optional_map<std::map<std::string, std::vector<double>>>(
      r, "segment_seed_runs", [&f, &runs](const json& v, const std::string& at) {
        return std::optional(read_map<std::vector<double>>(f, v, at, runs));
      });
  for_each_element(
      r, "seed_overrides", "an array of integers", [&](const json& v, const std::string& at) {
        if (auto seed =
                read_integer(f, v, at, std::numeric_limits<std::int64_t>::min(), "an integer"))
          t.seed_overrides.push_back(*seed);
      });
  t.distribution_seed_runs = optional_map<std::vector<double>>(
      r, "distribution_seed_runs",
      [&f, &runs](const json& v, const std::string& at) { return runs(v, at); });
  for (const auto& [stat, values] : t.distribution_seed_runs) {
    if (!enum_from_string<Statistic>(stat)) {
      f.error(json_path_key(r.path("distribution_seed_runs"), stat),
              "unknown statistic (must be one of " + enum_names<Statistic>() + ")");
    }
  }
  t.parity_seed_runs = optional_map<std::vector<double>>(
      r, "parity_seed_runs",
      [&f, &runs](const json& v, const std::string& at) { return runs(v, at); });
  for (const auto& [check, values] : t.parity_seed_runs) {
    if (!is_parity_check(check)) {
      f.error(json_path_key(r.path("parity_seed_runs"), check),
              "not a parity check (expected \"parity:<statistic>\" or "
              "\"parity:<statistic>:segment:<key>=<value>\", the statistic one of "
              "threshold=<t>, threshold=<t>:class=<c>, argmax, class=<c>, top-k-set, "
              "top-k-order, tau-distance)");
    }
  }
  for_each_element(r, "steps_same_seed_runs", "an array of arrays of numbers",
                   [&](const json& v, const std::string& at) {
                     if (auto values = read_numbers(f, v, at))
                       t.steps_same_seed_runs.push_back(std::move(*values));
                   });
  for_each_element(r, "same_seed_scores", "an array of objects (one per same-seed rerun)",
                   [&](const json& v, const std::string& at) {
                     if (auto score = read_same_seed_score(f, v, at))
                       t.same_seed_scores.push_back(std::move(*score));
                   });
  auto bounded_below = [&f](std::string_view expected, bool strict) {
    return [&f, expected, strict](const json& v, const std::string& at) {
      auto n = read_number(f, v, at, expected);
      if (n && (strict ? *n <= 0 : *n < 0)) {
        f.mismatch(at, expected, v);
        return std::optional<double>();
      }
      return n;
    };
  };
  t.floor = optional_map<double>(r, "floor", bounded_below("a non-negative number", false));
  t.detect = optional_map<double>(r, "detect", bounded_below("a positive number", true));
  for (const char* legacy : {"distribution_pairs", "steps_pairs_max_abs"}) {
    if (r.optional(legacy)) {
      f.warn(r.path(legacy) +
             ": dropped: statistics between pairs of different-seed runs give no honest band "
             "(calibrate this version again: a calibration records distribution_seed_runs and "
             "steps_same_seed_runs)");
    }
  }
  return t;
}

}  // namespace reverify::manifest_fields
