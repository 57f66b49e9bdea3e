#pragma once
// The human report of one verification (`reverify run`): every check with observed value,
// reference, tolerance and margin, failures first, then the verdict's headline and its checks
// counted (notes apart: policies/headline.hpp's summary, as every surface shows it) and its full
// explanation; its JSON twin; and a calibration's bands as `reverify calibrate` prints them.

#include <functional>
#include <ostream>
#include <string_view>

#include "verify/pipeline.hpp"

namespace reverify::cli {

void print_report(std::ostream& out, const VerificationRequest& request, RunnerKind runner_kind,
                  const VerificationOutcome& outcome);

// `reverify run --json`: {"model", "version", "verification_id" (null when not recorded),
// "summary" (policies/headline.hpp, as /v1 serves it), "verdict", "evidence", "log_tail"}.
nlohmann::json report_json(const VerificationRequest& request,
                           std::optional<std::int64_t> verification_id,
                           const VerificationOutcome& outcome);

// A verdict's checks as the report prints them, failures first (policies/headline.hpp): mark (a
// note is marked "note", never FAIL), name, observed, reference, band, margin, then the
// explanation.
void print_checks(std::ostream& out, const Verdict& verdict);

// A calibration's bands (`reverify calibrate`): nothing was judged, so no outcome, observation or
// margin: name, seed mean, band, the shift it catches with 80% probability, the declared detect
// (UNDER when the band does not meet it), then the explanation.
void print_bands(std::ostream& out, const std::vector<CheckResult>& bands);

// `reverify run` exit status: 0 passed, 1 failed:*, 2 error:*, 3 uncalibrated.
int exit_status(VerdictClass cls);

}  // namespace reverify::cli
