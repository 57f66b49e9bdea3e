#include "pager/page_builder.hpp"

#include <cstdio>
#include <utility>

#include "core/page_links.hpp"
#include "policies/bands.hpp"
#include "policies/headline.hpp"
#include "policies/power.hpp"

namespace reverify {
namespace {

constexpr std::size_t kMaxChangedInSummary = 3;

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

std::string short_hash(const std::string& hash) {
  return hash.size() > 12 ? hash.substr(0, 12) + "…" : (hash.empty() ? "(missing)" : hash);
}

// "primary:accuracy 0.9412 vs 0.9611 band [0.948, 0.9742] (margin -0.0068)", "distribution:psi
// 0.31 band ≤ 0.12 (margin -0.19)": one-sided bounds read "≤", never "±".
std::string describe_check(const CheckResult& check) {
  if (!check.observed || !check.reference) {
    return check.name + (check.explanation.empty() ? "" : ": " + check.explanation);
  }
  std::string text = check.name + " " + number(*check.observed) + " vs " + number(*check.reference);
  if (check.band)
    text += " band " + band_text(*check.band);
  if (check.margin)
    text += " (margin " + number(*check.margin) + ")";
  return text;
}

std::string describe_moved(const MovedInput& moved) {
  std::string text = moved.input + " moved: recorded " + short_hash(moved.recorded) + ", now " +
                     short_hash(moved.observed);
  if (!moved.changed.empty()) {
    text += "; changed ";
    for (std::size_t i = 0; i < moved.changed.size() && i < kMaxChangedInSummary; ++i) {
      text += (i ? ", " : "") + moved.changed[i];
    }
    if (moved.changed.size() > kMaxChangedInSummary) {
      text += " +" + std::to_string(moved.changed.size() - kMaxChangedInSummary) + " more";
    }
  }
  return text;
}

std::string tail_utf8(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes)
    return text;
  std::size_t start = text.size() - max_bytes;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
    ++start;
  return "[…truncated…]" + text.substr(start);
}

// What moved, for a failure: each moved input with its changed files (the headline names only
// the input), then each failed check after the first with its numbers (the headline has the
// first's), in reading order. Notes are not failures and are not listed.
std::string failure_details(const PageInput& input) {
  std::vector<std::string> reasons;
  for (const auto& moved : input.moved_inputs)
    reasons.push_back(describe_moved(moved));
  bool first = true;
  for (const auto* check : reading_order(input.verdict)) {
    if (reading_of(input.verdict, *check) != CheckReading::failure)
      continue;
    if (check->kind == CheckKind::input)
      continue;  // the moved inputs above, or the headline, name it
    if (!std::exchange(first, false))
      reasons.push_back(describe_check(*check));
  }
  std::string text;
  for (const auto& reason : reasons)
    text += (text.empty() ? "" : "; ") + reason;
  return text;
}

// docs/design.md property 2: a verdict judged against bands that cannot catch the declared shift
// says so.
std::string power_note(const Verdict& verdict) {
  if (verdict.power.underpowered.empty())
    return "";
  return " [UNDERPOWERED: " + std::to_string(verdict.power.underpowered.size()) +
         " band(s) cannot catch the shift tolerance.detect asks" +
         (verdict.power.runs_needed
              ? "; " + std::to_string(*verdict.power.runs_needed) + " seed runs in all would"
              : std::string()) +
         "]";
}

// "<id> <class> — <headline> Checks: <counted, notes apart>." and what a reader acts on: the
// moved inputs and further failures, the calibrate command, the power note; for an error, whose
// fault it is and the explanation.
std::string build_summary(const PageInput& input) {
  const std::string id = input.model + "@" + input.version;
  const Verdict& verdict = input.verdict;
  const VerdictClass cls = verdict.cls;
  const VerdictSummary summary = verdict_summary(verdict);
  if (is_error(cls))  // error:job's explanation ends with the job's last lines
    return id + " " + to_string(cls) + " — " + summary.headline + " " + verdict.explanation;
  std::string text = id + " " + to_string(cls) + " — " + summary_text(summary);
  if (cls == VerdictClass::uncalibrated)
    return text + " To judge it, " + how_to_calibrate(id, input.command_scope) + ".";
  if (is_failure(cls)) {
    if (const std::string details = failure_details(input); !details.empty())
      text += " " + details + ".";
  }
  return text + power_note(verdict);
}

std::vector<PageLink> build_links(const PageInput& input) {
  if (input.public_url.empty())
    return {};
  std::vector<PageLink> links;
  // The pages people read (the JSON twins are linked from them).
  if (input.verification_id > 0) {
    links.push_back({"verification " + std::to_string(input.verification_id),
                     verification_page_url(input.public_url, input.verification_id)});
  }
  links.push_back(
      {"model version", version_page_url(input.public_url, input.model, input.version)});
  links.push_back({"status page", input.public_url + "/"});
  return links;
}

nlohmann::json build_details(const PageInput& input) {
  nlohmann::json failed = nlohmann::json::array();
  for (const auto* check : reading_order(input.verdict)) {
    if (reading_of(input.verdict, *check) == CheckReading::failure)
      failed.push_back(to_json(*check));
  }
  nlohmann::json moved = nlohmann::json::array();
  for (const auto& m : input.moved_inputs) {
    moved.push_back({{"input", m.input},
                     {"recorded", m.recorded},
                     {"observed", m.observed},
                     {"changed", m.changed}});
  }
  nlohmann::json details = {{"model_version", input.model + "@" + input.version},
                            {"owner", input.owner},
                            {"class", to_string(input.verdict.cls)},
                            {"fault", to_string(page_fault(input.verdict))},
                            {"explanation", input.verdict.explanation},
                            {"failed_checks", failed},
                            {"underpowered", !input.verdict.power.underpowered.empty()},
                            {"moved_inputs", moved},
                            {"verdict", to_json(input.verdict)},
                            {"log_tail", tail_utf8(input.log_tail, kMaxLogTailChars)}};
  if (input.verification_id > 0)
    details["verification_id"] = input.verification_id;
  if (!input.evidence.is_null())
    details["evidence"] = input.evidence;
  return details;
}

}  // namespace

std::string page_dedup_key(const std::string& model, const std::string& version) {
  return "reverify/" + model + "/" + version;
}

PageAction page_action_for(VerdictClass cls) {
  if (cls == VerdictClass::passed)
    return PageAction::resolve;
  if (cls == VerdictClass::uncalibrated)
    return PageAction::notice;
  return PageAction::trigger;
}

PageFault page_fault(const Verdict& verdict) {
  if (is_failure(verdict.cls))
    return PageFault::model;
  if (verdict.job_exit_status || verdict.job_output_fault)
    return PageFault::job;
  if (is_error(verdict.cls))
    return PageFault::system;
  return PageFault::none;
}

PageEvent build_page(const PageInput& input) {
  PageEvent event;
  event.dedup_key = page_dedup_key(input.model, input.version);
  event.action = page_action_for(input.verdict.cls);
  event.model = input.model;
  event.version = input.version;
  event.owner = input.owner;
  event.verification_id = input.verification_id;
  event.cls = input.verdict.cls;
  event.fault = page_fault(input.verdict);
  event.explanation = input.verdict.explanation;
  std::string summary = build_summary(input);
  for (char& c : summary) {
    if (c == '\n' || c == '\r' || c == '\t')
      c = ' ';  // one line, phone-sized
  }
  event.summary = truncate_utf8(summary, kMaxSummaryChars);
  event.details = build_details(input);
  event.links = build_links(input);
  event.created_at = input.created_at;
  return event;
}

}  // namespace reverify
