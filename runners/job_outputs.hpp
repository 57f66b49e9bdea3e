#pragma once
// Collecting a job's outputs, shared by the runners that see the out folder as a local path.

#include <filesystem>

#include "core/result.hpp"
#include "runners/runner.hpp"

namespace reverify {

// Copies the regular files and folders of out_dir into dest (symlinks are skipped, so a job
// cannot make the daemon copy a file from outside its out folder), then read_job_outputs(dest).
// The job's errors (code job) name what it left wrong: a special file or an unreadable entry in
// out_dir, result.json or a file it names being a symbolic link; io errors are the copy's.
Result<JobOutputs> collect_outputs(const std::filesystem::path& out_dir,
                                   const std::filesystem::path& dest);

}  // namespace reverify
