// One verdict of each class, recorded in a real store and rendered through every surface that
// shows it: `reverify run`'s report and its --json, the page's summary and details (what every
// pager sender and alert carries), /v1/verifications and /v1/models, `reverify status`'s line,
// `reverify trigger --wait`'s line, the gate's reason, the verification, version and status
// pages, and `reverify attest verify`'s text. Each shows the same counts of the checks
// (policies/headline.hpp count_checks: no other count appears anywhere) and the same failing
// checks, in the same order where it lists them.

#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "api/http_api.hpp"
#include "api/pages.hpp"
#include "attest/ed25519.hpp"
#include "attest/summary.hpp"
#include "cli/attest_verify.hpp"
#include "cli/run_report.hpp"
#include "cli/verdict_lines.hpp"
#include "pager/page_builder.hpp"
#include "policies/headline.hpp"
#include "store/store.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/verdict_fixtures.hpp"

using namespace reverify;
namespace http = boost::beast::http;

namespace {

constexpr UnixSeconds kNow = 1'800'000'000;

// Every "N failed", "N passed", "N uncalibrated", "N not judged", "N note(s)" in `text` must be
// the verdict's own count: a second count, made elsewhere, shows up here.
void same_counts(const std::string& surface, const std::string& text, const CheckCounts& counts) {
  // A count stands alone: not the end of a version ("digits-mlp@1.0 passed") or of a name
  // ("weights:tensor_sha256 failed").
  static const std::regex count(
      R"((^|[\s(\[,;])(\d+) (failed|passed|uncalibrated|not judged|notes?)\b)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), count);
       it != std::sregex_iterator(); ++it) {
    const auto n = static_cast<std::size_t>(std::stoul((*it)[2]));
    const std::string word = (*it)[3];
    const std::size_t expected = word == "failed"         ? counts.failed
                                 : word == "passed"       ? counts.passed
                                 : word == "uncalibrated" ? counts.uncalibrated
                                 : word == "not judged"   ? counts.not_judged
                                                          : counts.notes;
    CHECK_MESSAGE(n == expected, surface << " says \"" << it->str() << "\": " << text);
  }
}

void shows(const std::string& surface, const std::string& text, const std::string& part) {
  CHECK_MESSAGE(text.find(part) != std::string::npos,
                surface << " lacks \"" << part << "\": " << text);
}

// The checks a page lists as failures, in its order.
std::vector<std::string> failing_rows(const std::string& html) {
  static const std::regex row(R"re(<tr data-check="([^"]+)" data-reading="failure")re");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), row); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

// The checks `reverify run`'s report marks FAIL, in its order.
std::vector<std::string> failing_lines(const std::string& report) {
  static const std::regex line(R"(\n  FAIL  (\S+))");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(report.begin(), report.end(), line);
       it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// The checks `reverify attest verify` prints as failed.
std::vector<std::string> failed_in_summary(const std::string& text) {
  static const std::regex line(R"(\n    - (\S+) failed)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1]);
  return out;
}

nlohmann::json api_get(const std::shared_ptr<const ReadModel>& model, const ApiConfig& config,
                       const std::string& target) {
  ApiRequest request(http::verb::get, target, 11);
  ApiContext context;
  context.model = model;
  context.api = &config;
  context.now = kNow;
  std::optional<ApiResponse> answer;
  handle_api_request(request, context, [&](ApiResponse r) { answer = std::move(r); });
  REQUIRE(answer.has_value());
  return nlohmann::json::parse(answer->body());
}

}  // namespace

TEST_CASE("one verdict of each class shows one set of counts and failing checks everywhere") {
  test::TempDir dir;
  UnixSeconds now = kNow;
  auto opened = Store::open(dir.path / "reverify.db", [&] { return now; });
  REQUIRE(opened.ok());
  auto& store = **opened;
  const auto cases = test::one_verdict_of_each_class();
  std::map<std::string, std::int64_t> ids;
  for (const auto& c : cases) {
    ModelVersionRow row;
    row.model = c.manifest.model;
    row.version = c.version;
    row.owner = c.manifest.owner;
    row.source = "examples";
    row.location = "/registry/digits-mlp/" + c.version + "/manifest.json";
    row.manifest_sha256 = "sha";
    REQUIRE(store.upsert_model_version(row).ok());
    auto id = store.enqueue(QueuedVerification{c.manifest.model, c.version});
    REQUIRE(id.ok());
    nlohmann::json evidence = nlohmann::json::object();
    if (c.name == "failed weights") {
      evidence["outputs"]["tensors_differing"] = {"0.bias", "0.weight", "2.bias", "2.weight",
                                                  "4.bias", "4.weight", "6.bias", "6.weight"};
    }
    REQUIRE(store.record_verdict(*id, c.verdict, evidence, "Traceback ...", {}).ok());
    ids[c.version] = *id;
  }
  ApiConfig config;
  auto built = build_read_model(store, nullptr, now, std::make_shared<const ApiConfig>(config));
  REQUIRE(built.ok());
  const std::shared_ptr<const ReadModel> model = *built;
  const auto models = api_get(model, config, "/v1/models");

  const auto key = Ed25519SigningKey::generate();
  const auto key_file = dir.path / "key.pub";
  std::ofstream(key_file) << key.public_key().pem();

  for (const auto& c : cases) {
    INFO("case: " << c.name);
    const Verdict& v = c.verdict;
    const VerdictSummary expected = verdict_summary(v);
    const std::string counts = counts_text(expected.counts);
    const bool has_checks = !v.checks.empty();
    const VerificationRow* row = model->find_verification(ids[c.version]);
    REQUIRE(row);
    REQUIRE(row->summary.has_value());
    CHECK(*row->summary == expected);  // the typed columns hold what the verdict says

    // `reverify run`: the report and its JSON.
    VerificationRequest request;
    request.manifest = c.manifest;
    VerificationOutcome outcome;
    outcome.verdict = v;
    std::ostringstream report;
    cli::print_report(report, request, RunnerKind::process, outcome);
    same_counts("run's report", report.str(), expected.counts);
    if (has_checks)
      shows("run's report", report.str(), "  checks: " + counts + "\n");
    if (!is_error(v.cls))
      CHECK(failing_lines(report.str()) == expected.failing);
    const auto run_json = cli::report_json(request, row->id, outcome);
    CHECK(run_json["summary"] == to_json(expected));

    // The page every sender (PagerDuty, Alertmanager, Slack, webhook, file) delivers.
    PageInput page_input;
    page_input.model = c.manifest.model;
    page_input.version = c.version;
    page_input.verdict = v;
    const PageEvent page = build_page(page_input);
    same_counts("page summary", page.summary, expected.counts);
    if (has_checks)
      shows("page summary", page.summary, "Checks: " + counts + ".");
    std::vector<std::string> paged;
    for (const auto& failed : page.details["failed_checks"])
      paged.push_back(failed["name"]);
    CHECK(paged == expected.failing);

    // /v1/verifications/{id} and what `reverify trigger --wait` prints of it.
    const auto verification =
        api_get(model, config, "/v1/verifications/" + std::to_string(row->id));
    CHECK(verification["summary"] == to_json(expected));
    const std::string waited = cli::verdict_line(verification);
    same_counts("trigger --wait", waited, expected.counts);
    if (has_checks)
      shows("trigger --wait", waited, "Checks: " + counts + ".");

    // /v1/models and `reverify status`'s line.
    nlohmann::json version;
    for (const auto& m : models["models"])
      for (const auto& entry : m["versions"])
        if (entry["version"] == c.version)
          version = entry;
    REQUIRE(version.is_object());
    CHECK(version["last_verdict"]["summary"] == to_json(expected));
    const auto attention = *enum_from_string<Attention>(version["attention"].get<std::string>());
    const std::string status = cli::status_reason(version, attention, now);
    same_counts("status", status, expected.counts);
    if (has_checks && v.cls != VerdictClass::passed)
      shows("status", status, "Checks: " + counts + ".");

    // The gate's reason.
    const auto gate = nlohmann::json::parse(
        answer_gate(*model, c.manifest.model, c.version, 40 * 86'400, now).body);
    const std::string reason = gate["reason"];
    same_counts("gate reason", reason, expected.counts);
    if (has_checks && !is_error(v.cls) && v.cls != VerdictClass::passed)
      shows("gate reason", reason, "Checks: " + counts + ".");
    // verified_at only on a verified answer; the verdict's own time in its own field.
    CHECK(gate.contains("verified_at") == gate["verified"].get<bool>());
    if (!is_error(v.cls))
      CHECK(gate["verdict_finished_at"] == rfc3339(row->finished_at.value_or(0)));

    // The verification, version and status pages.
    const std::string verification_page = render_verification_page(PageFrame{}, *model, *row, now);
    const std::string version_page =
        render_version_page(PageFrame{}, *model, *model->find(c.manifest.model, c.version), now);
    for (const auto& [surface, html] : {std::pair{"verification page", verification_page},
                                        std::pair{"version page", version_page}}) {
      same_counts(surface, html, expected.counts);
      if (has_checks)
        shows(surface, html, "<p id=\"check-counts\">Checks: " + counts + ".</p>");
      shows(surface, html, escape_html(expected.headline));
      if (row->verdict)
        CHECK(failing_rows(html) == expected.failing);
    }
    // The version page leads with the verification page's headline, before the gate's reason.
    if (!is_error(v.cls)) {
      CHECK(version_page.find("id=\"headline\"") < version_page.find("id=\"gate\""));
    }

    // `reverify attest verify` of its signed summary (passed and failed:* are signed).
    SummaryInputs inputs{c.manifest.model,    c.version,    row->id, c.manifest.level,
                         SummaryMode::full,   std::nullopt, now,     {},
                         std::string(64, 'd')};
    inputs.subjects = {{"manifest.json", "", {{"sha256", std::string(64, 'c')}}}};
    if (auto summary = summary_for(
            v, inputs, SummaryIdentity{"https://verifier.example", "reverify:{model}"})) {
      const auto signed_summary = sign_summary(*summary, key);
      cli::AttestVerifyOptions options;
      options.key_files = {key_file};
      options.expected.now = now;
      std::ostringstream out, err;
      cli::verify_and_report(signed_summary.envelope_json, "summary", options, false, out, err);
      same_counts("attest verify", out.str(), expected.counts);
      shows("attest verify", out.str(), "Checks: " + counts + ".");
      CHECK(failed_in_summary(out.str()) == expected.failing);
    }
  }
  // The status page lists each version once, its reason in the same words.
  const std::string status_page = render_status_page(PageFrame{}, *model, now);
  for (const auto& c : cases) {
    if (is_error(c.verdict.cls) || c.verdict.cls == VerdictClass::passed)
      continue;
    shows("status page", status_page, escape_html(summary_text(verdict_summary(c.verdict))));
  }
}

TEST_CASE("a failing weights check shows its numbers and links the full list of tensors") {
  const auto cases = test::one_verdict_of_each_class();
  const auto& weights = cases[2];
  REQUIRE(weights.name == "failed weights");
  const auto* check = [&]() -> const CheckResult* {
    for (const auto& c : weights.verdict.checks)
      if (c.kind == CheckKind::weights)
        return &c;
    return nullptr;
  }();
  REQUIRE(check);
  CHECK(check->observed == 8);
  CHECK(check->reference == 0);
  CHECK(check->explanation.find("8 of 8 tensors differ from the released weights: 0.bias, "
                                "0.weight, 2.bias and 5 more") != std::string::npos);
  CHECK(verdict_headline(weights.verdict).find("in 8 tensors") != std::string::npos);
}
