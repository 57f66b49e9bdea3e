// DaemonImpl's calibrations (daemon_impl.hpp): in spare capacity, one at a time, on a thread of
// their own that stops before its next run when the loop asks.
#include <algorithm>

#include "core/unix_time.hpp"
#include "daemon/daemon_impl.hpp"

namespace reverify {

namespace {

// One line on what a daemon calibration did, for the log and the status page.
std::string calibration_summary(const Result<CalibrationOutcome>& result) {
  if (!result.ok())
    return "could not run: " + result.error().message;
  const CalibrationOutcome& outcome = *result;
  std::string text = std::to_string(outcome.added) + " seed-only run(s) added";
  if (outcome.failure) {
    text += "; stopped by " + std::string(to_string(outcome.failure->cls)) + ": " +
            outcome.failure->explanation;
  } else if (!outcome.stopped.empty()) {
    text += "; " + outcome.stopped;
  }
  return text;
}

}  // namespace

void DaemonImpl::start_calibration_if_planned() {
  if (!planned_period_ || planning_)
    return;  // after the cycle's verifications are queued
  auto planned = std::find_if(planned_calibrations_.begin(), planned_calibrations_.end(),
                              [&](const PlannedCalibration& c) {
                                return !calibrated_.count({c.model, c.version});
                              });
  if (planned == planned_calibrations_.end())
    return;
  log_info("calibrating " + planned->model + "@" + planned->version + ": " + planned->reason,
           version_fields(planned->model, planned->version));
  metrics_.calibration_started();
  calibration_stop_ = CalibrationStop::none;
  CalibrationJob job{planned->model, planned->version, static_cast<int>(planned->max_runs),
                     [this]() -> std::optional<std::string> {
                       switch (calibration_stop_.load()) {
                         case CalibrationStop::none:
                           return std::nullopt;
                         case CalibrationStop::verification_due:
                           return "a verification needs the slot; it resumes when one is free";
                         case CalibrationStop::draining:
                           return "reverifyd is stopping; it resumes after the restart";
                       }
                       return std::nullopt;
                     }};
  auto settings = verification_settings(*config_, planned->model);
  const std::string where =
      "the calibration thread (" + planned->model + "@" + planned->version + ")";
  calibration_.emplace(RunningCalibration{
      planned->model, planned->version, clock_.now(),
      std::thread([this, where, job = std::move(job), settings = std::move(settings),
                   guard = net::make_work_guard(loop_)] {
        Result<CalibrationOutcome> result =
            guarded(where, [&] { return service_->calibrate(job, settings); });
        net::post(loop_, [this, result = std::move(result)] { on_calibration_done(result); });
      })});
  refresh();
}

void DaemonImpl::on_calibration_done(const Result<CalibrationOutcome>& result) {
  RunningCalibration done = std::move(*calibration_);
  calibration_.reset();
  done.thread.join();  // it posted this as its last act
  const std::string summary = calibration_summary(result);
  const std::string line = "calibration of " + done.model + "@" + done.version + ": " + summary;
  const bool failed = !result.ok() || result->failure;
  log_line(failed ? LogLevel::error : LogLevel::info, line,
           version_fields(done.model, done.version));
  metrics_.calibration_ended(failed                ? CalibrationOutcomeKind::failed
                             : result->interrupted ? CalibrationOutcomeKind::interrupted
                                                   : CalibrationOutcomeKind::complete);
  // An interrupted one stays planned and resumes; any other is done for this cycle.
  if (!result.ok() || !result->interrupted)
    calibrated_[{done.model, done.version}] = summary;
  refresh();
  finish_if_drained();
  if (!draining_or_stopped())
    net::post(loop_, [this] { tick(); });
}

LoopCalibrations DaemonImpl::calibration_state() const {
  LoopCalibrations state;
  for (const auto& [version, summary] : calibrated_)
    state.done.push_back({version.first, version.second, summary});
  if (calibration_)
    state.running =
        CalibrationRunning{calibration_->model, calibration_->version, calibration_->since};
  return state;
}

}  // namespace reverify
