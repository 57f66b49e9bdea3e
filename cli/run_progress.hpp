#pragma once
// What `reverify run` and `reverify calibrate` show on stderr while they work, so a long training
// never goes silent. Every stage is a line with the time since the command started:
//   [0:00] preflight: digits-mlp@2026.11.1
//   [0:02] run: job 41237:90210; log /var/lib/reverify/work/verification-7/job/job.log
// On a terminal a status line under them is redrawn every second, and at once when the job logs a
// new line, with the stage, its elapsed time and the job's latest log line ("[run 1:23] epoch 3
// loss 0.41"); elsewhere (a pipe, a CI log) only the plain lines are written. The log path is where
// the job's log is while it runs: the job.log the process and slurm runners write, or, for runners
// that stream it, a file this class writes there. It goes when the runner cleans up; the report
// shows its tail when the job fails. On a runner that queues jobs (slurm), a "queue" line says
// where the job stands each time that changes ("slurm job 12 pending in partition gpu
// (Resources)").

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "cli/status_line.hpp"
#include "runners/runner.hpp"

namespace reverify::cli {

class RunProgress {
 public:
  RunProgress();   // on stderr; starts the once-a-second redraw when stderr is a terminal
  ~RunProgress();  // stops it and erases the status line
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;

  // For PipelineDeps::progress / VerificationService's Progress.
  std::function<void(std::string_view stage, std::string_view detail)> stages();
  // For PipelineDeps::on_started: prints the job and where its log is.
  std::function<void(const JobHandle&)> started();
  // For PipelineDeps::logs: keeps the latest line for the status line (and writes the log file
  // for runners that only stream it).
  LogSink logs();

 private:
  void stage(std::string_view stage, std::string_view detail);
  void job_started(const JobHandle& job);
  void log_chunk(std::string_view chunk);
  void redraw_every_second();
  std::string since_start() const;
  std::string status_text_locked() const;  // REQUIRES: mutex_ held

  StatusLine line_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::string stage_ = "start";
  std::chrono::steady_clock::time_point stage_start_;
  std::string partial_;     // log text after the last newline
  std::string last_line_;   // the job's latest complete, non-empty log line
  std::ofstream log_file_;  // only for runners without a job.log of their own
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread ticker_;
};

}  // namespace reverify::cli
