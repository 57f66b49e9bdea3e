#pragma once
// The runs `reverify check-job` makes of a job, each the way a verification makes a rebuild
// (verify/pipeline_rebuild.hpp execute_rebuild) on the process runner (runners/process_runner.hpp:
// a clean checkout of the commit with the working tree's diff, a cleared environment holding only
// environment.env and the contract's variables, a fresh empty REVERIFY_OUT, a timeout), read back
// into what policies/job_check.hpp judges. Blocking: each run is the job's whole run.

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/manifest.hpp"
#include "policies/job_check.hpp"
#include "runners/runner.hpp"

namespace reverify::cli {

// What every run shares: the job as a draft manifest (code, config, seeds, environment.env,
// run.entrypoint; subsample's fraction and salt when subsample mode is checked), its inputs and
// check-job's own folder (work/runs/<name>/ keeps each run's outputs and log).
struct CheckJobSetup {
  Manifest draft;
  std::string manifest_location;  // work/manifest.json: code.diff lies beside it
  std::optional<std::filesystem::path> data, eval;
  std::filesystem::path work;
  std::chrono::seconds timeout{3600};
};

struct CheckJobRun {
  std::string name;  // "full", "same-seed", "seed:dataloader", ...
  RebuildMode mode = RebuildMode::full;
  std::int64_t max_steps = 0;
  std::optional<std::int64_t> seed_override;
  std::map<std::string, std::int64_t> seeds_changed;  // seed name -> the value it gets instead
  bool traced = false;  // under strace: the trace goes to work/trace.log
};

// strace's argv prefix for a traced run, writing to `log`; nullopt when strace is not on `path`.
std::optional<std::vector<std::string>> strace_prefix(const std::filesystem::path& log,
                                                      const std::string& path);

// Runs the job once and reads its outputs: result.json (as the runner validates it), the
// predictions, the weights' tensor hash, the subsample keys file; a failure to run or to read
// them is the record's error, with the log's last lines. `progress` gets one line as it starts.
JobRunRecord run_job_once(const CheckJobSetup& setup, const CheckJobRun& run, Runner& runner,
                          const std::optional<std::vector<std::string>>& trace_prefix,
                          const std::function<void(const std::string&)>& progress);

}  // namespace reverify::cli
