#include "cli/verdict_lines.hpp"

#include "core/text.hpp"
#include "core/verdict_class.hpp"
#include "policies/headline.hpp"
#include "store/stored_verdict.hpp"

namespace reverify::cli {
namespace {

std::optional<VerdictClass> class_of(const nlohmann::json& j) {
  return j.is_object() ? enum_from_string<VerdictClass>(j.value("class", std::string()))
                       : std::nullopt;
}

// What a verdict (a brief or a verification) says in at most `bytes`: its summary, and for an
// error (or a daemon that serves no summary) its explanation.
std::string said(const nlohmann::json& j, std::size_t bytes) {
  if (!j.is_object())
    return "";
  const auto cls = class_of(j);
  const auto summary = summary_from_json(j.value("summary", nlohmann::json()));
  const std::string explanation = one_line(j.value("explanation", std::string()), bytes);
  if (!summary)
    return explanation;
  if (cls && is_error(*cls))
    return explanation.empty() ? summary->headline : explanation;
  return summary_text(*summary, bytes);
}

}  // namespace

std::string verdict_age(const nlohmann::json& brief, UnixSeconds now) {
  if (!brief.is_object())
    return "";
  auto at = parse_rfc3339(brief.value("finished_at", ""));
  return at.ok() ? duration_text(now - *at) + " ago" : "";
}

std::string status_reason(const nlohmann::json& v, Attention attention, UnixSeconds now) {
  const auto& conclusive = v["last_conclusive_verdict"];
  const auto& latest = v["last_verdict"];
  switch (attention) {
    case Attention::manifest_invalid:
      return one_line(
          v["manifest_error"].is_string() ? v["manifest_error"].get<std::string>() : std::string(),
          kReasonBytes);
    case Attention::failed:
    case Attention::uncalibrated:
      if (auto text = said(conclusive, kReasonBytes); !text.empty())
        return text;
      break;
    case Attention::error:
      return said(latest, kReasonBytes);
    case Attention::fresh_with_error:
      return "newest attempt " + latest.value("class", "") + " " + verdict_age(latest, now) + ": " +
             said(latest, kReasonBytes);
    default:
      break;
  }
  return v["gate"].is_object() ? one_line(v["gate"].value("reason", ""), kReasonBytes)
                               : std::string();
}

std::string verdict_line(const nlohmann::json& verification) {
  const auto cls = class_of(verification);
  if (!cls)
    return "no verdict";
  constexpr std::size_t kLineBytes = 400;
  std::string text = std::string(to_string(*cls)) + ": ";
  const auto summary = summary_from_json(verification.value("summary", nlohmann::json()));
  if (summary)
    text += summary_text(*summary);
  if (!summary || is_error(*cls)) {
    text += (summary ? " " : "") + one_line(verification.value("explanation", ""), kLineBytes);
  }
  return text;
}

}  // namespace reverify::cli
