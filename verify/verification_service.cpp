#include "verify/verification_service.hpp"

#include <algorithm>
#include <variant>

#include "core/manifest_json.hpp"
#include "core/manifest_parse.hpp"
#include "core/uri.hpp"
#include "pager/page_builder.hpp"
#include "pager/router.hpp"
#include "policies/backoff.hpp"
#include "store/inventory_row.hpp"
#include "verify/attestation.hpp"
#include "verify/pipeline_pages.hpp"
#include "verify/source_hold.hpp"
#include "verify/subsample_reference.hpp"

namespace reverify {

std::string rebuild_id_for(std::int64_t verification_id) {
  return kRebuildIdPrefix + std::to_string(verification_id);
}

VerificationSettings verification_settings(const Config& config, const std::string& model) {
  const auto& policy = config.model_policy(model);
  VerificationSettings settings;
  settings.policy = config.verdict;
  settings.pager = config.pager;
  settings.work_root = config.work_root();
  settings.max_steps = policy.max_steps;
  settings.detect = policy.detect;
  settings.timeout_s = policy.timeout_s;
  settings.network = policy.network == JobNetwork::allow;
  settings.code_mirrors = config.code_mirrors;
  settings.retry_initial_s = config.schedule.retry_initial_s;
  settings.retry_max_s = config.schedule.retry_max_s;
  settings.retry_max_attempts = config.schedule.retry_max_attempts;
  settings.attestation = config.attestation;
  return settings;
}

std::optional<QueuedVerification> retry_for(const VerificationRow& row, VerdictClass cls,
                                            const VerificationSettings& settings, UnixSeconds now) {
  if (!is_error(cls) || cls == VerdictClass::error_manifest_invalid ||
      row.attempt >= settings.retry_max_attempts) {
    return std::nullopt;
  }
  QueuedVerification retry{row.model, row.version, row.mode, VerificationTrigger::retry,
                           row.attempt + 1};
  retry.not_before = now + capped_backoff(std::chrono::seconds(settings.retry_initial_s),
                                          std::chrono::seconds(settings.retry_max_s), row.attempt)
                               .count();
  retry.cycle_id = row.cycle_id;
  return retry;
}

struct VerificationService::Prepared {
  VerificationRequest request;
  std::string manifest_sha256;  // of the manifest bytes read
  std::string owner;
  VerificationSettings settings;
  std::optional<Verdict> early;  // the manifest could not be used: this is the verdict
};

VerificationService::VerificationService(Store& store, Runner& runner,
                                         std::function<void()> pages_recorded,
                                         std::string rebuild_id_prefix)
    : store_(store),
      runner_(runner),
      pages_recorded_(std::move(pages_recorded)),
      rebuild_id_prefix_(std::move(rebuild_id_prefix)) {}

std::string VerificationService::rebuild_id(std::int64_t verification_id) const {
  return rebuild_id_prefix_ + std::to_string(verification_id);
}

StandingSink VerificationService::standing_recorder(std::int64_t verification_id) {
  // Best effort: a standing that cannot be written only leaves the page showing the older one.
  return [this, verification_id](const JobStanding& standing) {
    (void)store_.record_runner_standing(verification_id, standing);
  };
}

namespace {
std::string joined_errors(const ManifestParse& parse) {
  std::string message;
  for (const auto& e : parse.errors)
    message += (message.empty() ? "" : "; ") + e.to_string();
  return message;
}
}  // namespace

Result<VerificationService::Prepared> VerificationService::prepare(
    const std::string& model, const std::string& version_name, RebuildMode mode,
    const std::string& rebuild_id, const VerificationSettings& settings) {
  auto version = store_.model_version(model, version_name);
  if (!version.ok())
    return version.error();
  if (!*version)
    return make_error(ErrorCode::not_found, "unknown model version " + model + "@" + version_name);
  Prepared prepared;
  prepared.owner = (*version)->owner;
  prepared.settings = settings;
  auto& request = prepared.request;
  request.verification_id = rebuild_id;
  request.mode = mode;
  request.max_steps = prepared.settings.max_steps;
  request.detect = prepared.settings.detect;
  request.seed_override = prepared.settings.seed_override;
  request.timeout = std::chrono::seconds(prepared.settings.timeout_s);
  request.network = prepared.settings.network;
  request.work_root = prepared.settings.work_root;
  request.code_mirrors = prepared.settings.code_mirrors;
  auto loaded = load_manifest((*version)->location);
  if (!loaded.ok() || !loaded->parse.ok()) {
    prepared.early = verdict_for_error(
        VerdictClass::error_manifest_invalid,
        (*version)->location + ": " +
            (loaded.ok() ? joined_errors(loaded->parse) : loaded.error().message));
    return prepared;
  }
  request.manifest = std::move(*loaded->parse.manifest);
  request.manifest_location = loaded->location;
  prepared.manifest_sha256 = loaded->sha256;
  // Kept, so that a later manifest of this version can be compared with the one verified here.
  if (auto kept = store_.keep_verified_manifest(loaded->sha256, to_json(request.manifest).dump());
      !kept.ok())
    return kept.error();
  auto calibration = store_.calibration(model, version_name, calibrated_reference(mode));
  if (!calibration.ok())
    return calibration.error();
  request.calibration = *calibration;
  // No subsample reference: nothing to judge against, so no job; a notice, never a page.
  if (Status judged = judge_against_mode_reference(request); !judged.ok())
    prepared.early = verdict_for_error(VerdictClass::uncalibrated, judged.error().message);
  return prepared;
}

Result<VerificationRow> VerificationService::execute(std::int64_t verification_id,
                                                     const VerificationSettings& settings,
                                                     const Progress& progress) {
  return run(verification_id, false, settings, progress);
}

Result<VerificationRow> VerificationService::run(std::int64_t verification_id,
                                                 bool inserted_running,
                                                 const VerificationSettings& settings,
                                                 const Progress& progress, const JobWatch& watch) {
  const auto expected = inserted_running ? VerificationState::running : VerificationState::queued;
  auto row = store_.verification(verification_id);
  if (!row.ok())
    return row.error();
  if (!*row || (*row)->state != expected) {
    return make_error(ErrorCode::conflict, "verification " + std::to_string(verification_id) +
                                               " is not " + to_string(expected));
  }
  auto prepared =
      prepare((*row)->model, (*row)->version, (*row)->mode, rebuild_id((*row)->id), settings);
  if (!prepared.ok())
    return finish_unstarted(**row, settings, prepared.error());
  const auto& request = prepared->request;
  const auto work_dir = (request.work_root / request.verification_id).string();
  if (auto s = inserted_running ? store_.set_work_dir(verification_id, work_dir)
                                : store_.mark_running(verification_id, work_dir);
      !s.ok())
    return finish_unstarted(**row, settings, s.error());
  VerificationOutcome outcome;
  if (prepared->early) {
    outcome.verdict = *prepared->early;
  } else {
    PipelineDeps deps{runner_, prepared->settings.policy, progress, {}, watch.logs};
    deps.standing = standing_recorder(verification_id);
    deps.on_started = [&](const JobHandle& job) {
      // Persisted before waiting, so a restarted daemon knows which job to reattach to. The
      // rebuild id label finds it even if this write is lost to a crash.
      (void)store_.record_runner(verification_id, job.runner_kind, job.ref);
      if (watch.started)
        watch.started(job);
    };
    outcome = run_verification(request, deps);
  }
  return finish(**row, *prepared, outcome);
}

Result<VerificationRow> VerificationService::recover(const VerificationRow& row,
                                                     const VerificationSettings& settings,
                                                     const Progress& progress) {
  auto prepared = prepare(row.model, row.version, row.mode, rebuild_id(row.id), settings);
  if (!prepared.ok())
    return finish_unstarted(row, settings, prepared.error());
  VerificationOutcome outcome;
  if (prepared->early) {
    outcome.verdict = *prepared->early;
    return finish(row, *prepared, outcome);
  }
  const auto& request = prepared->request;
  auto found = runner_.find_running(request.verification_id);
  if (found.ok() && *found) {
    PipelineDeps deps{runner_, prepared->settings.policy, progress, {}, {}};
    deps.standing = standing_recorder(row.id);
    outcome = resume_verification(request, **found, deps);
  } else {
    outcome.verdict = verdict_for_error(
        VerdictClass::error_runner_lost,
        "the daemon restarted and the " + std::string(to_string(runner_.kind())) +
            " runner has no job labelled " + kRebuildIdLabel + "=" + request.verification_id +
            (found.ok() ? std::string() : " (" + found.error().message + ")"));
  }
  return finish(row, *prepared, outcome);
}

Result<CalibrationOutcome> VerificationService::calibrate(const CalibrationJob& job,
                                                          const VerificationSettings& settings,
                                                          const Progress& progress) {
  const std::string rebuild_id =
      "calibration-" + job.model + "-" + job.version + "-" + std::to_string(store_.now());
  auto prepared = prepare(job.model, job.version, RebuildMode::full, rebuild_id, settings);
  if (!prepared.ok())
    return prepared.error();
  if (prepared->early)
    return make_error(ErrorCode::manifest_invalid, prepared->early->explanation);
  CalibrationRequest request;
  request.base = prepared->request;
  request.runs = 0;  // until_power looks at the power first: a version that has it adds none
  request.until_power = true;
  request.max_runs = job.max_runs;
  request.detect = settings.detect;
  request.interrupt = job.interrupt;
  // Stored run by run, as interrupted until it ends: a daemon killed during a calibration loses
  // the run in flight, not the runs before it, and the next plan resumes from them.
  const std::string& primary = request.base.manifest.evaluation.primary.name;
  std::optional<std::int64_t> row;
  std::optional<Error> store_error;
  const auto store = [&](const ToleranceSpec& spec, CalibrationEnd end, const std::string& note,
                         const std::optional<LeaveOneOutFinding>& leave_one_out) {
    const int seeds = static_cast<int>(seed_run_count(spec, primary));
    if (row) {
      if (auto s = store_.update_calibration(*row, spec, seeds, end, note, leave_one_out); !s.ok())
        store_error = s.error();
    } else if (auto id = store_.put_calibration(job.model, job.version, spec, seeds, end, note,
                                                leave_one_out);
               id.ok()) {
      row = *id;
    } else {
      store_error = id.error();
    }
  };
  request.on_run = [&](const ToleranceSpec& so_far) {
    store(so_far, CalibrationEnd::interrupted,
          "in progress: " + std::to_string(seed_run_count(so_far, primary)) +
              " seed runs stored; it resumes from them if it stops",
          std::nullopt);
  };
  PipelineDeps deps{runner_, settings.policy, progress, {}, {}};
  CalibrationOutcome outcome = run_calibration(request, deps);
  if (outcome.spec && outcome.added > 0) {
    store(*outcome.spec,
          outcome.interrupted ? CalibrationEnd::interrupted : CalibrationEnd::complete,
          outcome.failure ? "stopped: " + outcome.failure->explanation : outcome.stopped,
          outcome.leave_one_out ? std::optional(leave_one_out_finding(
                                      *outcome.leave_one_out, settings.policy.false_page_rate))
                                : std::nullopt);
  }
  if (store_error)
    return *store_error;
  return outcome;
}

Result<VerificationRow> VerificationService::finish_unstarted(const VerificationRow& row,
                                                              const VerificationSettings& settings,
                                                              const Error& error) {
  VerificationOutcome outcome;
  outcome.verdict = verdict_for_error(VerdictClass::error_provision,
                                      "the verification could not start: " + error.message);
  // No rebuild ran: nothing for a signed summary (the early verdict skips it), pages as usual.
  Prepared unstarted;
  auto version = store_.model_version(row.model, row.version);
  unstarted.owner = version.ok() && *version ? (*version)->owner : std::string();
  unstarted.settings = settings;
  unstarted.early = outcome.verdict;
  auto finished = finish(row, unstarted, outcome);
  if (!finished.ok()) {
    return make_error(error.code, error.message + "; recording that as its verdict failed too: " +
                                      finished.error().message);
  }
  return finished;
}

namespace {

// The owner's page for a verdict, or why it has none (no route, no sender for its action).
std::variant<PageToRecord, std::string> owner_page(const VerificationRow& row,
                                                   const std::string& owner,
                                                   const VerificationOutcome& outcome,
                                                   const VerificationSettings& settings,
                                                   UnixSeconds now) {
  if (settings.pager.routes.empty())
    return std::string("no pager route is configured (pager.routes is empty)");
  PageInput input;
  input.model = row.model;
  input.version = row.version;
  input.owner = owner;
  input.verdict = outcome.verdict;
  input.moved_inputs = moved_inputs(outcome);
  input.evidence = outcome.evidence;
  input.log_tail = outcome.log_tail;
  input.public_url = settings.pager.public_url;
  input.command_scope = settings.policy.command_scope;
  input.verification_id = row.id;
  input.created_at = rfc3339(now);
  auto event = build_page(input);
  auto senders = route_page(settings.pager, event);
  if (!senders.ok())
    return senders.error().message;
  if (senders->empty()) {
    return std::string("the route for owner \"") + owner + "\" has no sender that takes a " +
           to_string(event.action);
  }
  return PageToRecord{std::move(event), std::move(*senders)};
}

}  // namespace

Result<VerificationRow> VerificationService::finish(const VerificationRow& row,
                                                    const Prepared& prepared,
                                                    const VerificationOutcome& outcome) {
  const auto& settings = prepared.settings;
  // A registry that moved as a whole: error:infra, no owner page, one operator alert.
  const std::optional<SourceHold> hold = outcome.verdict.cls == VerdictClass::failed_input_drift
                                             ? source_hold(store_, row, outcome, settings.pager)
                                             : std::nullopt;
  const Verdict& verdict = hold ? hold->verdict : outcome.verdict;
  std::vector<PageToRecord> pages;
  nlohmann::json evidence = outcome.evidence;
  // A manifest that could not be read has no verdict a summary is made for (error:*).
  auto attestation =
      prepared.early
          ? std::nullopt
          : attest_verdict(verdict,
                           AttestationRequest{prepared.request, row.id, prepared.manifest_sha256,
                                              settings.policy, store_.now()},
                           settings.attestation, evidence);
  std::string no_page;  // why this verdict records no page, when it records none
  if (hold) {
    no_page = hold->no_page;
  } else {
    auto page = owner_page(row, prepared.owner, outcome, settings, store_.now());
    if (auto* recorded = std::get_if<PageToRecord>(&page))
      pages.push_back(std::move(*recorded));
    else
      no_page = std::get<std::string>(page);
  }
  if (!no_page.empty()) {
    if (!evidence.is_object())
      evidence = nlohmann::json::object();
    evidence["no_page"] = no_page;  // shown on the verification: a page decision, never silence
  }
  auto retry = retry_for(row, verdict.cls, settings, store_.now());
  auto recorded =
      store_.record_verdict(row.id, verdict, evidence, outcome.log_tail, pages, retry, attestation);
  if (!recorded.ok())
    return recorded.error();
  // After the verdict: a crash before the condition is opened leaves it to the next held verdict.
  auto condition = hold ? store_.open_source_condition(hold->condition, hold->alert)
                   : is_error(verdict.cls) ? Result<bool>(false)
                                           : clear_source_hold(store_, row, settings.pager);
  if (!condition.ok())
    return condition.error();
  if ((!recorded->empty() || *condition) && pages_recorded_)
    pages_recorded_();
  auto done = store_.verification(row.id);
  if (!done.ok())
    return done.error();
  return **done;
}

Result<VerificationRow> VerificationService::run_now(
    const std::string& location, std::optional<RebuildMode> mode, VerificationTrigger trigger,
    const VerificationSettings& settings, const Progress& progress, const JobWatch& watch) {
  auto document = read_uri(location);
  if (!document.ok())
    return document.error();
  auto parsed = parse_manifest(*document);
  if (!parsed.ok()) {
    return make_error(ErrorCode::manifest_invalid, location + ": " + joined_errors(parsed));
  }
  const auto& manifest = *parsed.manifest;
  auto row = describe_manifest(manifest.model, manifest.version, location, *document);
  auto known = store_.model_version(manifest.model, manifest.version);
  if (!known.ok())
    return known.error();
  // A version a registry source lists stays that source's; others are recorded as "cli".
  row.source = *known && (*known)->location == location ? (*known)->source : "cli";
  if (auto s = store_.upsert_model_version(row); !s.ok())
    return s.error();
  QueuedVerification item{manifest.model, manifest.version, mode.value_or(RebuildMode::full),
                          trigger};
  item.not_before = store_.now();
  auto id = store_.insert_running(item);
  if (!id.ok())
    return id.error();
  return run(*id, true, settings, progress, watch);
}

}  // namespace reverify
