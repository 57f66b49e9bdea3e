// reverify gate MODEL@VERSION --max-age D [--mode M]: the release gate for CI jobs (with --mode,
// only a pass in that rebuild mode counts, and with --attestation the summary must attest it). Exit
// 0 verified and fresh, 1 not (the reason is printed; a new release queued to be verified at
// release is not verified either: exit 1, the reason starts "queued" and names when it is expected,
// and --json carries "status": "queued" and "expected_at"), 2 unknown model version, unreachable
// daemon or usage. With --attestation --key PUBKEY.pem [--weights FILE] it also fetches the
// version's signed summary and checks it offline against the trusted key
// (attest/summary_check.hpp): the gate passes only when the daemon says so AND a valid PASSED
// summary of this model version (and of these weights) no older than --max-age (40d without it) is
// signed by that key, so an answer forged on the way cannot pass it. An invalid summary (bad
// signature, wrong key) is exit 2.

#include <algorithm>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/attest_verify.hpp"
#include "cli/daemon_client.hpp"
#include "core/command_line.hpp"
#include "core/names.hpp"
#include "core/rebuild_mode.hpp"
#include "core/unix_time.hpp"

namespace {

struct GateArguments {
  std::string target;
  std::optional<std::string> max_age;
  std::optional<reverify::RebuildMode> mode;
  reverify::cli::DaemonAddress daemon;
  bool json = false;
  bool attestation = false;
  std::vector<std::string> keys;
  std::optional<std::string> weights;
};

// A summary's age limit when the gate is given no --max-age: the daemon's documented default.
constexpr std::int64_t kDefaultSummaryMaxAgeS = 40 * 86'400;

// The signed summary the daemon serves, checked offline against the trusted keys: 0, 1 or 2 as
// `reverify attest verify`. Its report goes to stdout (stderr with --json, which is the gate's).
int check_signed_summary(const GateArguments& options, const std::string& base,
                         const reverify::ModelVersion& target) {
  using namespace reverify;
  cli::AttestVerifyOptions verify;
  verify.key_files.assign(options.keys.begin(), options.keys.end());
  if (options.weights)
    verify.weights = *options.weights;
  verify.expected.now = system_now();
  verify.expected.model = target;
  if (options.mode)  // --mode: the summary must attest that mode too
    verify.expected.mode = to_string(*options.mode);
  verify.expected.max_age_s =
      options.max_age ? *parse_duration_s(*options.max_age) : kDefaultSummaryMaxAgeS;
  const std::string path = "/v1/attestations/" + target.model + "/" + target.version;
  auto response = cli::daemon_request(base, "GET", path);
  if (!response.ok()) {
    std::cerr << "reverify gate: cannot fetch the signed summary: " << response.error().message
              << "\n";
    return 2;
  }
  std::ostream& out = options.json ? std::cerr : std::cout;
  if (response->status != 200) {
    auto body = nlohmann::json::parse(response->body, nullptr, false);
    out << target.id() << ": NO signed summary: "
        << (body.is_object() ? body.value("error", response->body) : response->body) << "\n";
    return 1;
  }
  return cli::verify_and_report(response->body, base + path, verify, false, out, std::cerr);
}

int run_gate(const GateArguments& options) {
  using namespace reverify;
  auto target = parse_model_version(options.target);
  if (!target.ok())
    return cli::usage_error("gate", target.error().message);
  std::string query;
  if (options.max_age)
    query = "?max_age=" + url_encode(*options.max_age);
  if (options.mode)
    query += std::string(query.empty() ? "?mode=" : "&mode=") + to_string(*options.mode);
  auto base = cli::daemon_url(options.daemon);
  if (!base.ok())
    return cli::usage_error("gate", base.error().message);
  auto response = cli::daemon_request(*base, "GET",
                                      "/v1/gate/" + target->model + "/" + target->version + query);
  if (!response.ok()) {
    std::cerr << "reverify gate: cannot reach " << *base << ": " << response.error().message
              << "\n";
    return 2;
  }
  auto body = nlohmann::json::parse(response->body, nullptr, false);
  const std::string reason = body.is_object() && body.contains("reason")
                                 ? body["reason"].get<std::string>()
                             : body.is_object() ? body.value("error", response->body)
                                                : response->body;
  if (options.json)
    std::cout << response->body;
  switch (response->status) {
    case 200:
      if (!options.json)
        std::cout << target->id() << ": verified and fresh: " << reason << "\n";
      return options.attestation ? check_signed_summary(options, *base, *target) : 0;
    case 412:
      if (!options.json)
        std::cout << target->id() << ": NOT verified: " << reason << "\n";
      // A summary never turns the daemon's "no" into a "yes"; an invalid one still says 2.
      return options.attestation ? std::max(1, check_signed_summary(options, *base, *target)) : 1;
    case 404:
      std::cerr << "reverify gate: " << target->id() << ": unknown: " << reason << "\n";
      return 2;
    default:
      std::cerr << "reverify gate: HTTP " << response->status << ": " << reason << "\n";
      return 2;
  }
}

reverify::cli::Action define_gate(CLI::App& app) {
  auto o = std::make_shared<GateArguments>();
  app.add_option("MODEL@VERSION", o->target, "the model version a release wants to ship")
      ->required();
  app.add_option("--max-age", o->max_age,
                 std::string("the last pass must be at most this old: a duration with unit ") +
                     reverify::kDurationUnits +
                     " (e.g. 40d); without it the daemon's api.default_max_age applies (40d unless "
                     "configured)")
      ->type_name("DURATION")
      ->check(reverify::duration());
  reverify::add_enum_option(app, "--mode", o->mode,
                            "count only a pass in this rebuild mode (e.g. --mode full for a "
                            "release that needs a complete rebuild)");
  reverify::cli::add_daemon_options(app, o->daemon);
  reverify::cli::add_json_flag(app, o->json);
  auto* attestation = app.add_flag(
      "--attestation", o->attestation,
      "also require a valid signed summary (fetched from the daemon, checked here against "
      "--key): PASSED, of this model version, no older than --max-age (40d without it)");
  auto* key = app.add_option("--key", o->keys,
                             "with --attestation: a trusted Ed25519 public key (PEM); repeat it, "
                             "or give a file holding several, to trust the keys a rotation "
                             "replaced")
                  ->type_name("PUBKEY.pem")
                  ->allow_extra_args(false);
  auto* weights = app.add_option("--weights", o->weights,
                                 "with --attestation: the weights to ship, which must be a "
                                 "subject of the summary (sha256 or tensor hash)")
                      ->type_name("FILE");
  attestation->needs(key);
  key->needs(attestation);
  weights->needs(attestation);
  return [o] { return run_gate(*o); };
}

const reverify::cli::Registrar kGate{
    {"gate",
     "release gate: exit 0 if verified and fresh (with --attestation: and a valid signed summary "
     "says so), 1 if not, 2 if unknown or the summary is invalid",
     define_gate}};

}  // namespace
