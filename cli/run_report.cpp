#include "cli/run_report.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>

#include "policies/headline.hpp"

namespace reverify::cli {
namespace {

std::string number(const std::optional<double>& value, bool signed_value = false) {
  if (!value)
    return "-";
  char buffer[32];
  double v = *value;
  if (v != 0 && std::fabs(v) < 1e-3) {
    std::snprintf(buffer, sizeof buffer, signed_value ? "%+.2e" : "%.2e", v);
  } else {
    std::snprintf(buffer, sizeof buffer, signed_value ? "%+.4f" : "%.4f", v);
  }
  return buffer;
}

// A note (informational, or of a level that enforces nothing) is never marked as a failure.
const char* mark(const Verdict& verdict, const CheckResult& check) {
  switch (reading_of(verdict, check)) {
    case CheckReading::passed:
      return "PASS";
    case CheckReading::failure:
      return "FAIL";
    case CheckReading::uncalibrated:
      return "UNCAL";
    case CheckReading::not_judged:
      return "n/j";
    case CheckReading::note:
      return "note";
  }
  return "?";
}

// Pads to `width` characters (UTF-8: continuation bytes do not count).
std::string pad(std::string text, std::size_t width) {
  std::size_t shown = 0;
  for (unsigned char c : text)
    shown += (c & 0xC0) != 0x80;
  if (shown < width)
    text.append(width - shown, ' ');
  return text;
}

// "[0.9540, 0.9821]" or "≤ 0.0123" (one-sided bounds never read "±").
std::string band_column(const std::optional<CheckBand>& band) {
  if (!band)
    return "-";
  return band->lower ? "[" + number(band->lower) + ", " + number(band->upper) + "]"
                     : "≤ " + number(band->upper);
}

void print_check(std::ostream& out, const Verdict& verdict, const CheckResult& check) {
  out << "  " << pad(mark(verdict, check), 6) << pad(check.name, 34);
  if (check.kind != CheckKind::input) {
    out << pad(number(check.observed), 11) << pad(number(check.reference), 11)
        << pad(band_column(check.band), 22) << pad(number(check.margin, true), 11);
  }
  out << "\n";
  if (!check.explanation.empty())
    out << "        " << check.explanation << "\n";
}

}  // namespace

void print_checks(std::ostream& out, const Verdict& verdict) {
  bool header = false;
  for (const auto* check : reading_order(verdict)) {
    if (check->kind != CheckKind::input && !header) {
      out << "\n  " << pad("", 6) << pad("check", 34) << pad("observed", 11) << pad("reference", 11)
          << pad("band", 22) << pad("margin", 11) << "\n";
      header = true;
    }
    print_check(out, verdict, *check);
  }
}

void print_bands(std::ostream& out, const std::vector<CheckResult>& bands) {
  out << "\n  " << pad("", 6) << pad("check", 34) << pad("seed mean", 11) << pad("band", 22)
      << pad("catches", 11) << pad("detect", 11) << "\n";
  for (const auto& band : bands) {
    if (band.kind == CheckKind::input)
      continue;
    const auto& power = band.power;
    const char* flag = power && power->underpowered                 ? "UNDER"
                       : band.outcome == CheckOutcome::uncalibrated ? "UNCAL"
                       : band.informational                         ? "note"
                       : band.outcome == CheckOutcome::not_judged   ? "n/j"
                                                                    : "";
    // describe_bands observes at the seed runs' mean: the observed value is that mean.
    out << "  " << pad(flag, 6) << pad(band.name, 34) << pad(number(band.observed), 11)
        << pad(band_column(band.band), 22)
        << pad(power && power->shift ? number(power->shift) : "none", 11)
        << pad(power ? number(power->detect) : "-", 11) << "\n";
    // "<name> <mean> is within the band [..] (origin); power": the origin and the power, not a
    // judgement of the mean against its own band.
    std::string_view why = band.explanation;
    if (const auto within = why.find(" within the "); within != std::string_view::npos) {
      if (const auto origin = why.find(" (", within); origin != std::string_view::npos)
        why.remove_prefix(origin + 1);
    }
    if (!why.empty())
      out << "        " << why << "\n";
  }
}

void print_report(std::ostream& out, const VerificationRequest& request, RunnerKind runner_kind,
                  const VerificationOutcome& outcome) {
  const Manifest& m = request.manifest;
  out << "reverify run " << m.id() << " (level " << to_string(m.level) << ", "
      << to_string(runner_kind) << " runner, " << to_string(request.mode) << " rebuild";
  if (request.mode == RebuildMode::steps)
    out << ", first " << request.max_steps << " steps";
  if (request.mode == RebuildMode::subsample && m.subsample) {
    out << " of " << m.subsample->fraction
        << " of the training records, judged against the subsample reference";
  }
  out << ")\n";
  print_checks(out, outcome.verdict);
  const auto& unverified = outcome.evidence.value("inputs", nlohmann::json::object())
                               .value("unverified", nlohmann::json::array());
  for (const auto& note : unverified)
    out << "  NOTE  " << note.get<std::string>() << "\n";
  if (outcome.evidence.contains("outputs") &&
      outcome.evidence["outputs"].contains("tensors_differing")) {
    if (request.mode == RebuildMode::steps) {
      // After N steps the weights cannot be the released ones (those are the full run's).
      out << "  NOTE  the weights after " << request.max_steps
          << " steps differ from the released (fully trained) ones, as they must: steps mode "
             "judges the first steps' curve, not the tensors\n";
    } else {
      out << "  NOTE  tensors that differ from the released weights: "
          << outcome.evidence["outputs"]["tensors_differing"].dump() << "\n";
    }
  }
  if (is_error(outcome.verdict.cls) && !outcome.log_tail.empty()) {
    out << "\njob log (tail):\n" << outcome.log_tail << "\n";
  }
  if (outcome.evidence.contains("durations")) {
    out << "\ntimings:";
    for (const auto& [stage, seconds] : outcome.evidence["durations"].items()) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, " %s %.2fs", stage.c_str(), seconds.get<double>());
      out << buffer;
    }
    out << "\n";
  }
  const Verdict& verdict = outcome.verdict;
  const VerdictSummary summary = verdict_summary(verdict);
  out << "\nverdict: " << to_string(verdict.cls) << ": " << summary.headline << "\n";
  if (!verdict.checks.empty())
    out << "  checks: " << counts_text(summary.counts) << "\n";
  if (!verdict.explanation.empty() && verdict.explanation != summary.headline)
    out << "  " << verdict.explanation << "\n";
}

nlohmann::json report_json(const VerificationRequest& request,
                           std::optional<std::int64_t> verification_id,
                           const VerificationOutcome& outcome) {
  return {{"model", request.manifest.model},
          {"version", request.manifest.version},
          {"verification_id",
           verification_id ? nlohmann::json(*verification_id) : nlohmann::json(nullptr)},
          {"summary", to_json(verdict_summary(outcome.verdict))},
          {"verdict", to_json(outcome.verdict)},
          {"evidence", outcome.evidence},
          {"log_tail", outcome.log_tail}};
}

int exit_status(VerdictClass cls) {
  if (cls == VerdictClass::passed)
    return 0;
  if (is_failure(cls))
    return 1;
  if (cls == VerdictClass::uncalibrated)
    return 3;
  return 2;
}

}  // namespace reverify::cli
