#include "attest/vsa.hpp"

#include <algorithm>
#include <cctype>

#include "core/manifest_strict_json.hpp"
#include "policies/verdict_model.hpp"

namespace reverify {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

bool is_hex64(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

ordered_json number_or_null(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

ordered_json descriptor_json(const ResourceDescriptor& d) {
  ordered_json j = ordered_json::object();
  if (!d.name.empty())
    j["name"] = d.name;
  if (!d.uri.empty())
    j["uri"] = d.uri;
  if (!d.digest.empty())
    j["digest"] = d.digest;
  return j;
}

// --- reading ---------------------------------------------------------------------------------

Error bad(const std::string& path, const std::string& message) {
  return make_error(ErrorCode::parse, "statement: " + path + ": " + message);
}

// A typed view of one JSON object at a path; every getter names the path in its error.
class Fields {
 public:
  Fields(const json& object, std::string path) : object_(object), path_(std::move(path)) {}

  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  const json* find(const std::string& key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  Result<std::string> string(const std::string& key) const {
    const json* v = find(key);
    if (v == nullptr)
      return bad(at(key), "required field is missing");
    if (!v->is_string())
      return bad(at(key), "must be a string, got " + v->dump());
    return v->get<std::string>();
  }
  Result<std::optional<std::string>> optional_string(const std::string& key) const {
    const json* v = find(key);
    if (v == nullptr || v->is_null())
      return std::optional<std::string>();
    if (!v->is_string())
      return bad(at(key), "must be a string, got " + v->dump());
    return std::optional<std::string>(v->get<std::string>());
  }
  Result<const json*> object(const std::string& key, bool required) const {
    const json* v = find(key);
    if (v == nullptr || (!required && v->is_null())) {
      if (required)
        return bad(at(key), "required field is missing");
      return static_cast<const json*>(nullptr);
    }
    if (!v->is_object())
      return bad(at(key), "must be an object");
    return v;
  }

 private:
  const json& object_;
  std::string path_;
};

Result<std::map<std::string, std::string>> string_map(const json& j, const std::string& path) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string())
      return bad(path + "[\"" + key + "\"]", "must be a string");
    out[key] = value.get<std::string>();
  }
  return out;
}

// digest_set.md: lowercase hex for the standard algorithms; ours is documented the same way.
Result<DigestSet> digest_set(const json& j, const std::string& path) {
  if (!j.is_object())
    return bad(path, "must be an object (a DigestSet)");
  auto digest = string_map(j, path);
  if (!digest)
    return digest.error();
  if (digest->empty())
    return bad(path, "must hold at least one digest");
  for (const auto& [algorithm, value] : *digest) {
    if ((algorithm == "sha256" || algorithm == kTensorDigestKey) && !is_hex64(value))
      return bad(path + "." + algorithm, "must be 64 lowercase hex digits, got \"" + value + "\"");
  }
  return digest;
}

Result<ResourceDescriptor> descriptor(const json& j, const std::string& path) {
  if (!j.is_object())
    return bad(path, "must be an object (a ResourceDescriptor)");
  Fields f(j, path);
  ResourceDescriptor d;
  auto name = f.optional_string("name");
  auto uri = f.optional_string("uri");
  if (!name)
    return name.error();
  if (!uri)
    return uri.error();
  d.name = name->value_or("");
  d.uri = uri->value_or("");
  if (const json* digest = f.find("digest")) {
    auto set = digest_set(*digest, f.at("digest"));
    if (!set)
      return set.error();
    d.digest = std::move(*set);
  }
  return d;
}

Result<std::int64_t> integer(const Fields& f, const std::string& key) {
  const json* v = f.find(key);
  if (v == nullptr)
    return bad(f.at(key), "required field is missing");
  if (!v->is_number_integer())
    return bad(f.at(key), "must be an integer");
  return v->get<std::int64_t>();
}

Result<ReverifyDetails> read_details(const json& j, const std::string& path) {
  if (!j.is_object())
    return bad(path, "must be an object");
  Fields f(j, path);
  ReverifyDetails d;
  for (auto [key, out] : {std::pair{"model", &d.model}, std::pair{"version", &d.version},
                          std::pair{"explanation", &d.explanation}}) {
    auto value = f.string(key);
    if (!value)
      return value.error();
    *out = std::move(*value);
  }
  auto id = integer(f, "verificationId");
  if (!id)
    return id.error();
  d.verification_id = *id;
  auto verdict = f.string("verdict");
  if (!verdict)
    return verdict.error();
  auto cls = enum_from_string<VerdictClass>(*verdict);
  if (!cls)
    return bad(f.at("verdict"), "not a verdict class: \"" + *verdict + "\"");
  d.verdict = *cls;
  auto level = f.string("level");
  if (!level)
    return level.error();
  auto parsed_level = enum_from_string<ReproLevel>(*level);
  if (!parsed_level)
    return bad(f.at("level"), "must be rerunnable, equivalent or bitwise, got \"" + *level + "\"");
  d.level = *parsed_level;
  auto mode = f.string("mode");
  if (!mode)
    return mode.error();
  auto parsed_mode = enum_from_string<SummaryMode>(*mode);
  if (!parsed_mode)
    return bad(f.at("mode"),
               "must be one of " + enum_names<SummaryMode>() + ", got \"" + *mode + "\"");
  d.mode = *parsed_mode;
  if (d.mode == SummaryMode::steps) {
    auto steps = integer(f, "maxSteps");
    if (!steps)
      return steps.error();
    d.max_steps = *steps;
  }
  for (auto [key, out] :
       {std::pair{"headline", &d.headline}, std::pair{"checkCounts", &d.check_counts}}) {
    auto value = f.optional_string(key);  // absent from summaries signed before them
    if (!value)
      return value.error();
    *out = value->value_or("");
  }
  const json* checks = f.find("checks");
  if (checks == nullptr || !checks->is_array())
    return bad(f.at("checks"), "required array is missing");
  d.checks = *checks;
  return d;
}

std::string upper(std::string_view text) {
  std::string out;
  for (char c : text)
    out += char(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<SummaryResult> summary_result_for(VerdictClass cls) {
  if (cls == VerdictClass::passed)
    return SummaryResult::passed;
  if (is_failure(cls))
    return SummaryResult::failed;
  return std::nullopt;
}

std::optional<SummaryResult> summary_result_for(const Verdict& verdict) {
  const auto result = summary_result_for(verdict.cls);
  const bool incomplete = !verdict.coverage.complete() || !verdict.coverage.not_computed.empty();
  if (result == SummaryResult::passed && incomplete)
    return std::nullopt;
  return result;
}

std::vector<std::string> verified_levels_for(SummaryResult result, ReproLevel level,
                                             SummaryMode mode) {
  if (result == SummaryResult::failed)
    return {"FAILED"};
  std::string name = "REVERIFY_" + upper(to_string(level));
  if (mode != SummaryMode::full)
    name += "_" + upper(to_string(mode));
  return {name + "_V1"};
}

// Each check's outcome, values, accepted range ({"lower", "upper"}, lower null for an upper
// bound; null for hash checks) and, when the verdict engine gave them, its power and whether it
// is underpowered or informational.
json summarize_checks(const Verdict& verdict) {
  json out = json::array();
  for (const auto& check : verdict.checks) {
    ordered_json entry = {{"check", check.name},
                          {"kind", to_string(check.kind)},
                          {"outcome", to_string(check.outcome)},
                          {"observed", number_or_null(check.observed)},
                          {"reference", number_or_null(check.reference)},
                          {"band", ordered_json(to_json(check.band))},
                          {"margin", number_or_null(check.margin)}};
    if (check.power)
      entry["power"] = to_json(check.power);
    if (check.power && check.power->underpowered)
      entry["underpowered"] = true;
    if (check.informational)
      entry["informational"] = true;
    out.push_back(json(entry));
  }
  return out;
}

ordered_json statement_json(const VerificationSummary& s) {
  ordered_json subjects = ordered_json::array();
  for (const auto& subject : s.subjects)
    subjects.push_back(descriptor_json(subject));
  ordered_json verifier = {{"id", s.verifier_id}};
  if (!s.verifier_version.empty())
    verifier["version"] = s.verifier_version;
  ordered_json predicate = {{"verifier", std::move(verifier)}};
  if (s.time_verified)
    predicate["timeVerified"] = rfc3339(*s.time_verified);
  predicate["resourceUri"] = s.resource_uri;
  predicate["policy"] = descriptor_json(s.policy);
  predicate["verificationResult"] = to_string(s.result);
  predicate["verifiedLevels"] = s.verified_levels;
  predicate["slsaVersion"] = kVsaSlsaVersion;
  if (s.details) {
    const auto& d = *s.details;
    ordered_json details = {{"model", d.model},
                            {"version", d.version},
                            {"verificationId", d.verification_id},
                            {"verdict", to_string(d.verdict)},
                            {"level", to_string(d.level)},
                            {"mode", to_string(d.mode)}};
    if (d.max_steps)
      details["maxSteps"] = *d.max_steps;
    details["explanation"] = d.explanation;
    details["headline"] = d.headline;
    details["checkCounts"] = d.check_counts;
    details["checks"] = d.checks;
    predicate[kReverifyExtension] = std::move(details);
  }
  return ordered_json{{"_type", kInTotoStatementType},
                      {"subject", std::move(subjects)},
                      {"predicateType", kVsaPredicateType},
                      {"predicate", std::move(predicate)}};
}

std::string statement_payload(const VerificationSummary& summary) {
  return statement_json(summary).dump();
}

std::optional<std::string> in_toto_uri_problem(std::string_view uri) {
  const auto colon = uri.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == uri.size())
    return "must be a URI (scheme:...), got \"" + std::string(uri) + "\"";
  for (std::size_t i = 0; i < colon; ++i) {
    const char c = uri[i];
    const bool ok = (c >= 'a' && c <= 'z') ||
                    (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok)
      return "the URI scheme must be lower case letters, digits, +, - or ., got \"" +
             std::string(uri) + "\"";
  }
  for (char c : uri) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return "a URI has no spaces or control characters, got \"" + std::string(uri) + "\"";
  }
  if (uri.compare(colon + 1, 2, "//") == 0) {
    const auto end = uri.find_first_of("/?#", colon + 3);
    const auto authority =
        uri.substr(colon + 3, end == std::string_view::npos ? end : end - colon - 3);
    for (char c : authority) {
      if (c >= 'A' && c <= 'Z')
        return "the URI's host must be lower case, got \"" + std::string(uri) + "\"";
    }
  }
  return std::nullopt;
}

namespace {

// The Statement's envelope: its _type and predicateType, then its subjects.
Status read_statement_subjects(const Fields& top, VerificationSummary& s) {
  auto type = top.string("_type");
  if (!type)
    return type.error();
  if (*type != kInTotoStatementType) {
    return bad("_type", "is \"" + *type + "\"; expected \"" + kInTotoStatementType +
                            "\" (an in-toto Statement v1)");
  }
  auto predicate_type = top.string("predicateType");
  if (!predicate_type)
    return predicate_type.error();
  if (*predicate_type != kVsaPredicateType) {
    return bad("predicateType", "is \"" + *predicate_type + "\"; expected \"" + kVsaPredicateType +
                                    "\" (a SLSA verification summary)");
  }
  const json* subjects = top.find("subject");
  if (subjects == nullptr)
    return bad("subject", "required field is missing");
  if (!subjects->is_array() || subjects->empty())
    return bad("subject", "must be a non-empty array");
  for (std::size_t i = 0; i < subjects->size(); ++i) {
    const std::string path = "subject[" + std::to_string(i) + "]";
    auto subject = descriptor((*subjects)[i], path);
    if (!subject)
      return subject.error();
    if (subject->digest.empty())
      return bad(path + ".digest", "required field is missing (every subject has a digest)");
    s.subjects.push_back(std::move(*subject));
  }
  return {};
}

// predicate.verifier: its id and optional version map.
Status read_verifier(const Fields& predicate, VerificationSummary& s) {
  auto verifier_object = predicate.object("verifier", true);
  if (!verifier_object)
    return verifier_object.error();
  Fields verifier(**verifier_object, "predicate.verifier");
  auto verifier_id = verifier.string("id");
  if (!verifier_id)
    return verifier_id.error();
  s.verifier_id = std::move(*verifier_id);
  auto version_object = verifier.object("version", false);
  if (!version_object)
    return version_object.error();
  if (*version_object) {
    auto versions = string_map(**version_object, "predicate.verifier.version");
    if (!versions)
      return versions.error();
    s.verifier_version = std::move(*versions);
  }
  return {};
}

// predicate.timeVerified (optional, UTC), resourceUri and policy.
Status read_time_resource_policy(const Fields& predicate, VerificationSummary& s) {
  auto time = predicate.optional_string("timeVerified");
  if (!time)
    return time.error();
  if (*time) {
    auto parsed = parse_rfc3339(**time);
    if (!parsed || (*time)->back() != 'Z') {
      return bad("predicate.timeVerified",
                 "must be an RFC 3339 timestamp in UTC (\"Z\"), got \"" + **time + "\"");
    }
    s.time_verified = *parsed;
  }
  auto resource_uri = predicate.string("resourceUri");
  if (!resource_uri)
    return resource_uri.error();
  s.resource_uri = std::move(*resource_uri);

  const json* policy = predicate.find("policy");
  if (policy == nullptr)
    return bad("predicate.policy", "required field is missing");
  auto policy_descriptor = descriptor(*policy, "predicate.policy");
  if (!policy_descriptor)
    return policy_descriptor.error();
  if (policy_descriptor->uri.empty())
    return bad("predicate.policy.uri", "required field is missing");
  s.policy = std::move(*policy_descriptor);
  return {};
}

// predicate.verificationResult, verifiedLevels and reverify's own details.
Status read_result(const Fields& predicate, VerificationSummary& s) {
  auto result = predicate.string("verificationResult");
  if (!result)
    return result.error();
  if (*result != "PASSED" && *result != "FAILED") {
    return bad("predicate.verificationResult",
               "must be \"PASSED\" or \"FAILED\", got \"" + *result + "\"");
  }
  s.result = *result == "PASSED" ? SummaryResult::passed : SummaryResult::failed;

  const json* levels = predicate.find("verifiedLevels");
  if (levels == nullptr)
    return bad("predicate.verifiedLevels", "required field is missing");
  if (!levels->is_array())
    return bad("predicate.verifiedLevels", "must be an array of strings");
  for (const auto& level : *levels) {
    if (!level.is_string())
      return bad("predicate.verifiedLevels", "must be an array of strings");
    s.verified_levels.push_back(level.get<std::string>());
  }

  if (const json* details = predicate.find(kReverifyExtension)) {
    auto read = read_details(*details, "predicate[\"" + std::string(kReverifyExtension) + "\"]");
    if (!read)
      return read.error();
    s.details = std::move(*read);
  }
  return {};
}

}  // namespace

Result<VerificationSummary> parse_statement(std::string_view payload) {
  ManifestLimits limits;
  limits.max_bytes = 16 * 1024 * 1024;
  auto strict = parse_strict_json(payload, limits);
  if (strict.error)
    return bad(strict.error->path.empty() ? "(document)" : strict.error->path,
               strict.error->message);
  const json& j = strict.value;
  if (!j.is_object())
    return bad("(document)", "must be a JSON object");
  Fields top(j, "");
  VerificationSummary s;
  if (auto read = read_statement_subjects(top, s); !read)
    return read.error();
  auto predicate_object = top.object("predicate", true);
  if (!predicate_object)
    return predicate_object.error();
  Fields predicate(**predicate_object, "predicate");
  for (auto* read : {&read_verifier, &read_time_resource_policy, &read_result}) {
    if (auto status = read(predicate, s); !status)
      return status.error();
  }
  return s;
}

}  // namespace reverify
