#pragma once
// How much of the original training a rebuild re-runs: all of it (`full`), the first max_steps
// steps compared step by step (`steps`), or all of it on a fixed, hash-defined subsample of the
// training records, judged against the manifest's subsample reference (`subsample`;
// docs/job-guide.md "Subsample mode"). Shared by runners, the store's rows, the
// scheduler, the API and the CLI.

#include "core/enum_names.hpp"

namespace reverify {

enum class RebuildMode { full, steps, subsample };

template <>
struct EnumNames<RebuildMode> {
  static constexpr EnumName<RebuildMode> table[] = {
      {RebuildMode::full, "full"},
      {RebuildMode::steps, "steps"},
      {RebuildMode::subsample, "subsample"},
  };
};

// Whose seed spread a calibration measures: the release's (full-mode seed runs, and the steps
// band's same-seed reruns) or the subsample reference's (subsample-mode seed runs, a model of its
// own). A verification judges against the calibration of its mode's reference.
enum class CalibratedReference { release, subsample };

template <>
struct EnumNames<CalibratedReference> {
  static constexpr EnumName<CalibratedReference> table[] = {
      {CalibratedReference::release, "release"},
      {CalibratedReference::subsample, "subsample"},
  };
};

inline CalibratedReference calibrated_reference(RebuildMode mode) {
  return mode == RebuildMode::subsample ? CalibratedReference::subsample
                                        : CalibratedReference::release;
}

}  // namespace reverify
