#include <string>

#include "runners/log_tail.hpp"
#include "runners/runner.hpp"

namespace reverify {

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
  if (exit.limit_hit)
    message = *exit.limit_hit + "; " + message;
  if (exit.platform_fault)
    message = exit.platform_fault->reason + "; " + message;
  const std::string tail(last_lines(exit.log_tail, 10));
  if (!tail.empty())
    message += "; last log lines:\n" + tail;
  return make_error(exit.platform_fault ? ErrorCode::infra : ErrorCode::job, message);
}

}  // namespace reverify
