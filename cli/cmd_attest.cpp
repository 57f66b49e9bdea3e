// reverify attest verify|export: signed verification summaries (a SLSA VSA in a DSSE envelope,
// Ed25519; docs/attestations.md "Signed verification summaries").
//   attest verify FILE --key PUBKEY.pem... [--model M@V] [--max-age D] [--weights FILE] ...
//       offline: exit 0 verified, 1 valid but FAILED / stale / another subject or model version,
//       2 invalid (malformed, bad signature, wrong key) or usage
//   attest export MODEL@VERSION --config FILE [--verification ID] [--out FILE] [--policy FILE]
//       the summary of the latest passed or failed:* verdict (or of that verification) from the
//       state_dir's store: exit 0 written, 1 there is none, 2 usage or store error

#include <iostream>

#include "cli/attest_verify.hpp"
#include "cli/command.hpp"
#include "core/file_write.hpp"
#include "core/names.hpp"
#include "core/unix_time.hpp"
#include "core/uri.hpp"
#include "settings/config.hpp"
#include "store/restore_advice.hpp"
#include "store/store.hpp"

namespace reverify::cli {
namespace {

constexpr const char* kAttestName = "attest";
constexpr std::size_t kMaxEnvelopeBytes = 16 * 1024 * 1024;

struct VerifyArguments {
  std::string file;
  std::vector<std::string> keys;
  std::optional<std::string> model, max_age, weights, verifier_id, resource_uri, level;
  bool json = false;
};

struct ExportArguments {
  std::string target;
  std::string config;
  std::optional<std::int64_t> verification;
  std::optional<std::string> out, policy;
};

int run_verify(const VerifyArguments& a) {
  AttestVerifyOptions options;
  options.key_files.assign(a.keys.begin(), a.keys.end());
  options.expected.now = system_now();
  if (a.model) {
    auto parsed = parse_model_version(*a.model);
    if (!parsed.ok())
      return usage_error("attest verify", "--model: " + parsed.error().message);
    options.expected.model = *parsed;
  }
  if (a.max_age)
    options.expected.max_age_s = *parse_duration_s(*a.max_age);  // checked by duration()
  if (a.weights)
    options.weights = *a.weights;
  options.expected.verifier_id = a.verifier_id;
  options.expected.resource_uri = a.resource_uri;
  options.expected.level = a.level;
  auto envelope = read_uri(a.file, FetchLimits{kMaxEnvelopeBytes, FetchLimits{}.timeout_s});
  if (!envelope.ok()) {
    std::cerr << "reverify attest verify: " << envelope.error().message << "\n";
    return 2;
  }
  return verify_and_report(*envelope, a.file, options, a.json, std::cout, std::cerr);
}

int export_error(const std::string& message, int status = 2) {
  std::cerr << "reverify attest export: " << message << "\n";
  return status;
}

int run_export(const ExportArguments& a) {
  auto target = parse_model_version(a.target);
  if (!target.ok())
    return usage_error("attest export", target.error().message);
  auto config = load_config(a.config);
  if (!config.ok())
    return usage_error("attest export", a.config + ": " + config.error().message);
  set_restore_scope(config->api.command_scope);
  auto store = Store::open(config->db_path(), system_now, /*read_only=*/true);
  if (!store.ok())
    return export_error(store.error().message);
  std::int64_t id = a.verification.value_or(0);
  if (!a.verification) {
    auto decided = (*store)->latest_verdicts(VerdictFilter::decided);
    if (!decided.ok())
      return export_error(decided.error().message);
    for (const auto& brief : *decided) {
      if (brief.model == target->model && brief.version == target->version)
        id = brief.id;
    }
    if (id == 0)
      return export_error(target->id() + " has no passed or failed verdict, so no signed summary",
                          1);
  }
  auto rows = (*store)->attestations({id});
  if (!rows.ok())
    return export_error(rows.error().message);
  if (rows->empty() || rows->front().model != target->model ||
      rows->front().version != target->version) {
    return export_error("verification " + std::to_string(id) + " of " + target->id() +
                            " has no signed summary (only passed and failed verdicts recorded "
                            "while attestation was configured have one)",
                        1);
  }
  const auto& row = rows->front();
  if (a.policy) {
    if (auto s = write_file(*a.policy, row.policy_json); !s.ok())
      return export_error(s.error().message);
  }
  if (!a.out) {
    std::cout << row.envelope_json << "\n";
    return 0;
  }
  if (auto s = write_file(*a.out, row.envelope_json + "\n"); !s.ok())
    return export_error(s.error().message);
  std::cerr << "wrote the " << row.result << " summary of verification " << row.verification_id
            << " (" << row.cls << ", key " << row.key_id.substr(0, 16) << "…) to " << *a.out
            << "\n";
  return 0;
}

Action define_attest(CLI::App& app) {
  app.require_subcommand(1);
  auto v = std::make_shared<VerifyArguments>();
  CLI::App* verify = app.add_subcommand(
      "verify",
      "check a signed summary offline: the signature over DSSE's PAE under a trusted key, the "
      "statement and predicate types, and what you ask of it; exit 0 verified, 1 valid but "
      "FAILED, stale or about another subject or model version, 2 invalid");
  verify->allow_extras();
  verify
      ->add_option("FILE", v->file,
                   "a DSSE envelope: a file (reverify attest export) or an http(s) URL (GET "
                   "/v1/attestations/MODEL/VERSION); only the key is trusted, not the transport")
      ->required();
  verify
      ->add_option("--key", v->keys,
                   "a trusted Ed25519 public key (PEM); repeat it, or give a file holding "
                   "several, to trust the keys a rotation replaced")
      ->type_name("PUBKEY.pem")
      ->allow_extra_args(false)
      ->required();
  verify->add_option("--model", v->model, "the summary must be about this model version")
      ->type_name("MODEL@VERSION");
  verify
      ->add_option("--max-age", v->max_age,
                   std::string("timeVerified must be at most this old: a duration with unit ") +
                       kDurationUnits + " (e.g. 40d)")
      ->type_name("DURATION")
      ->check(duration());
  verify
      ->add_option("--weights", v->weights,
                   "the weights to ship: hashed here (sha256, and the tensor hash of a "
                   "safetensors file) and matched against the summary's subjects")
      ->type_name("FILE");
  verify->add_option("--verifier-id", v->verifier_id, "predicate.verifier.id must be this URI")
      ->type_name("URI");
  verify->add_option("--resource-uri", v->resource_uri, "predicate.resourceUri must be this URI")
      ->type_name("URI");
  verify
      ->add_option("--level", v->level,
                   "verifiedLevels must contain this level (e.g. REVERIFY_EQUIVALENT_V1)")
      ->type_name("LEVEL");
  add_json_flag(*verify, v->json);

  auto e = std::make_shared<ExportArguments>();
  CLI::App* exported = app.add_subcommand(
      "export",
      "write the signed summary of the latest passed or failed verdict (or of one verification) "
      "from the store; exit 0 written, 1 there is none");
  exported->allow_extras();
  exported->add_option("MODEL@VERSION", e->target, "the model version")->required();
  exported->add_option("--config", e->config, "the reverify.yaml whose state_dir holds the store")
      ->type_name("FILE")
      ->required();
  exported
      ->add_option("--verification", e->verification,
                   "that verification's summary instead of the latest")
      ->type_name("ID")
      ->check(integer_in(1, INT64_MAX));
  exported->add_option("--out", e->out, "write the envelope to FILE instead of stdout")
      ->type_name("FILE");
  exported
      ->add_option("--policy", e->policy,
                   "also write the tolerance policy document (whose sha256 is the summary's "
                   "policy digest) to FILE")
      ->type_name("FILE");
  return [verify, v, e] { return verify->parsed() ? run_verify(*v) : run_export(*e); };
}

const Registrar kAttest{{kAttestName,
                         "signed verification summaries (SLSA VSA, DSSE, Ed25519): verify one "
                         "offline, export one from the store",
                         define_attest}};

}  // namespace
}  // namespace reverify::cli
