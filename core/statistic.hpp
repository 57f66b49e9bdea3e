#pragma once
// The distribution statistics a rebuild's predictions are compared with the release's by
// (policies/stats.hpp defines each), by the names the manifest's tolerance.distribution_seed_runs,
// the checks ("distribution:<name>") and `reverify compare` use.

#include "core/enum_names.hpp"

namespace reverify {

enum class Statistic { ks, psi, wasserstein, max_abs_diff, mean_abs_diff, flip_rate };

template <>
struct EnumNames<Statistic> {
  static constexpr EnumName<Statistic> table[] = {
      {Statistic::ks, "ks"},
      {Statistic::psi, "psi"},
      {Statistic::wasserstein, "wasserstein"},
      {Statistic::max_abs_diff, "max_abs_diff"},
      {Statistic::mean_abs_diff, "mean_abs_diff"},
      {Statistic::flip_rate, "flip_rate"},
  };
};

}  // namespace reverify
