#include <string>

#include "runners/runner.hpp"

namespace reverify {
namespace {

// The last few lines are what a person reads first in a page or a verdict.
std::string last_lines(const std::string& log, int lines) {
  std::size_t start = log.size();
  if (start > 0 && log[start - 1] == '\n')
    --start;
  for (; lines > 0; --lines) {
    const auto newline = start == 0 ? std::string::npos : log.rfind('\n', start - 1);
    if (newline == std::string::npos)
      return log;
    start = newline;
  }
  return log.substr(start + 1);
}

}  // namespace

Status job_exit_status(const JobExit& exit) {
  if (!exit.timed_out && exit.exit_code == 0)
    return {};
  std::string message;
  if (exit.timed_out) {
    message =
        "the job ran past its timeout and was stopped (SIGTERM, then SIGKILL after the grace "
        "period)";
  } else if (exit.exit_code > 128) {
    message = "the job was killed by signal " + std::to_string(exit.exit_code - 128) +
              " (exit status " + std::to_string(exit.exit_code) + ")";
  } else if (exit.exit_code < 0) {
    message = "the job ended with an unknown exit status";
  } else {
    message = "the job exited with status " + std::to_string(exit.exit_code);
  }
  const std::string tail = last_lines(exit.log_tail, 10);
  if (!tail.empty())
    message += "; last log lines:\n" + tail;
  return make_error(ErrorCode::job, message);
}

}  // namespace reverify
