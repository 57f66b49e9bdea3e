#pragma once
// store/: the durable state, one SQLite database (inventory, verifications and cycles,
// calibrations, the page outbox, signed verification summaries, the store's identity), its
// migrations, its online backup and SQLite helpers. Includes core/, policies/, pager/ (the Outbox
// it implements) and one header of runners/ (runner_kind.hpp: the runner kind of a row; nothing
// of runners/ is linked); never settings/ or above: callers pass what the config says as values.
//
// The daemon's durable state: one SQLite database under state_dir (docs/design.md "State, crash
// safety"). WAL mode, numbered migrations applied at open, every state change one transaction.
// The verdict of a verification, the outbox rows of its pages and its signed summary are written
// in the SAME transaction, so a page is recorded before it is sent, a crash never loses or
// doubles one, and no verdict is ever without its summary (nor a summary without its verdict).
//
// Thread-safety: one connection per Store, guarded by a mutex; call from worker threads (every
// method blocks on SQLite), never from the event loop. Other processes may open the same file:
// `reverify run/calibrate --config` write into it beside a running reverifyd (busy_timeout lets
// writers take turns), the CLI's other commands read it read-only (WAL lets readers run beside
// the writer).
//
// States, classes, modes and triggers are enums in the rows and words in SQLite; a word this
// version does not know (a newer reverify or a hand edit wrote it) is an error naming the row and
// the column, never read as some default.
//
// Each store has an id (StoreIdentity). Every page is recorded with the id of the store that
// recorded it and handed to the dispatcher with it (PageEvent::store_id), so the key a receiver
// deduplicates one page by never repeats across stores: not for a store made anew after the old
// one was lost, nor for one restored from a backup (a backup copy gets an id of its own the first
// time a writer opens it, while the pages in it keep the keys they were sent with).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/manifest.hpp"
#include "core/rebuild_mode.hpp"
#include "core/result.hpp"
#include "core/unix_time.hpp"
#include "core/verdict_class.hpp"
#include "core/verification_state.hpp"
#include "pager/notifier.hpp"
#include "pager/pager_config.hpp"
#include "policies/calibration.hpp"
#include "policies/headline.hpp"
#include "policies/source_condition.hpp"
#include "policies/verdict_model.hpp"
#include "runners/runner.hpp"

struct sqlite3;

namespace reverify::sql {
class Statement;  // store/sqlite.hpp
}  // namespace reverify::sql

namespace reverify {

struct Migration;  // store/migrations.hpp

// One released model version as the registry sources last saw it.
struct ModelVersionRow {
  std::string model, version;
  std::string owner;
  std::string level;            // reproducibility level, "" if the manifest is invalid
  std::string source;           // registry source name
  std::string location;         // manifest path or URL
  std::string manifest_sha256;  // of the document bytes, to notice changes
  std::optional<std::string> manifest_error;  // set when the manifest no longer validates
  std::optional<UnixSeconds> released_at;     // run.started_at
  std::int64_t gpus = 0;                      // environment.accelerator.count
  std::optional<double> duration_s;           // run.duration_s of the original training
  // The manifest's subsample reference: its fraction (absent: none recorded) and its job's
  // recorded seconds (subsample.duration_s). A row described before store migration 8 has
  // neither until the next sync describes it again.
  std::optional<double> subsample_fraction;
  std::optional<double> subsample_duration_s;
  UnixSeconds first_seen_at = 0, last_seen_at = 0;
  bool removed = false;  // gone from its source since the last sync
};

// What moved in a version's manifest since the manifest a verification verified: policies/
// manifest_diff's summary of the two, kept by the registry sync (verify/manifest_moves.hpp).
struct ManifestMoved {
  std::string model, version;
  std::string to_sha256;    // the version's manifest it describes
  std::string from_sha256;  // the manifest verification_id verified
  std::int64_t verification_id = 0;
  std::vector<std::string> inputs_moved;  // "data", "code", ... (none: only other fields)
  std::vector<std::string> lines;         // "path: old -> new", one screen at most
};

// A version whose manifest is not the one its latest conclusive verdict verified, with that
// verified manifest (kept at verification) and no ManifestMoved for its current manifest yet.
struct ManifestToCompare {
  std::string model, version, location;
  std::string to_sha256, from_sha256;
  std::int64_t verification_id = 0;
  std::string verified_manifest_json;
};

// A registry source under a platform condition (policies/source_condition.hpp), while it holds.
struct SourceConditionRow {
  std::string source;
  SourceCondition condition = SourceCondition::inputs_moved;
  UnixSeconds since = 0;
  std::int64_t versions = 0;         // the source's versions when it was found
  std::int64_t verification_id = 0;  // the verification that found it
  std::string reason;
};

// Why a verification was queued: the cycle's plan, a manual trigger (API, `reverify trigger`), the
// retry of an error:* verdict, `reverify run` in the foreground, or a new release (the at-release
// policy, policies/release_plan.hpp).
enum class VerificationTrigger { schedule, manual, retry, cli, release };
template <>
struct EnumNames<VerificationTrigger> {
  static constexpr EnumName<VerificationTrigger> table[] = {
      {VerificationTrigger::schedule, "schedule"}, {VerificationTrigger::manual, "manual"},
      {VerificationTrigger::retry, "retry"},       {VerificationTrigger::cli, "cli"},
      {VerificationTrigger::release, "release"},
  };
};

struct VerificationRow {
  std::int64_t id = 0;
  std::string model, version;
  VerificationState state = VerificationState::queued;
  std::optional<VerdictClass> cls;  // verdict class once done
  RebuildMode mode = RebuildMode::full;
  VerificationTrigger trigger = VerificationTrigger::schedule;
  int attempt = 1;  // 1 + number of earlier error:* attempts it retries
  std::optional<RunnerKind> runner_kind;
  std::optional<std::string> runner_ref, work_dir;
  std::optional<Verdict> verdict;  // once done
  // What every surface shows of the verdict (its typed columns), once done.
  std::optional<VerdictSummary> summary;
  nlohmann::json evidence;  // pipeline evidence (moved inputs, durations), else null
  std::string log_tail;
  std::string explanation;
  UnixSeconds queued_at = 0;
  UnixSeconds not_before = 0;  // jittered start / retry backoff: not started earlier
  std::optional<UnixSeconds> started_at, finished_at;
  std::optional<std::int64_t> cycle_id;
  // Where its job stands on a runner that queues jobs (slurm: pending in partition P with
  // Slurm's reason, running on node N); the latest report, kept after the verdict.
  std::optional<JobStanding> runner_standing;
};

// The verdict's summary as the store keeps it, or, for a row made in memory (not read back),
// made from its verdict by the same function. REQUIRES: row.cls.
VerdictSummary summary_of(const VerificationRow& row);

// A verification to queue: by the scheduler for a cycle, as a retry, or on a manual trigger.
struct QueuedVerification {
  QueuedVerification() = default;
  QueuedVerification(std::string model_name, std::string version_name,
                     RebuildMode rebuild_mode = RebuildMode::full,
                     VerificationTrigger why = VerificationTrigger::schedule,
                     int attempt_number = 1)
      : model(std::move(model_name)),
        version(std::move(version_name)),
        mode(rebuild_mode),
        trigger(why),
        attempt(attempt_number) {}

  std::string model, version;
  RebuildMode mode = RebuildMode::full;
  VerificationTrigger trigger = VerificationTrigger::schedule;
  int attempt = 1;
  UnixSeconds not_before = 0;
  std::optional<std::int64_t> cycle_id;
};

// A page to record with a verdict: the event and the senders the router picked for it.
struct PageToRecord {
  PageEvent event;
  std::vector<std::string> senders;
};

// A verdict's signed summary, recorded with it (attest/ built and signed it; the store keeps the
// bytes).
struct AttestationToRecord {
  std::string envelope_json;  // the DSSE envelope, stored and served byte for byte
  std::string key_id;         // of the key that signed it
  std::string result;         // "PASSED" | "FAILED"
  std::string policy_json;    // the tolerance policy document the summary's policy digest names
};

struct AttestationRow {
  std::int64_t verification_id = 0;
  std::string model, version, cls;  // of its verification
  std::string result, key_id, envelope_json, policy_json;
  UnixSeconds created_at = 0;
};

// The gist of one finished verification, for the in-memory read model (no log, no evidence).
struct VerdictBrief {
  std::int64_t id = 0;
  std::string model, version;
  VerdictClass cls = VerdictClass::passed;
  RebuildMode mode = RebuildMode::full;
  VerificationTrigger trigger = VerificationTrigger::schedule;  // why it was queued
  UnixSeconds finished_at = 0;
  std::string explanation;
  std::string manifest_sha256;  // the manifest it verified
  // Judged against bands that cannot catch a declared tolerance.detect, and the seed runs in all
  // that would (absent: unknown, or no number would).
  bool underpowered = false;
  std::optional<std::int64_t> runs_needed;
  std::vector<std::string> underpowered_checks;  // their names (latest_verdicts only)
  // The most seed runs any of its bands was measured from (latest_verdicts only; absent when no
  // check says).
  std::optional<std::int64_t> seed_runs;
  // What every surface shows of it (policies/headline.hpp VerdictSummary, stored with the verdict
  // as typed columns; latest_verdicts only): the headline, the checks counted, the failures.
  std::string headline;
  CheckCounts counts;
  std::vector<std::string> failing;

  // The summary these fields hold.
  VerdictSummary summary() const;
};

// How a stored calibration ended: it added every run it set out to, or it stopped early (the
// daemon gave its slot to a due verification, or was stopping) and kept the runs it had.
enum class CalibrationEnd { complete, interrupted };
template <>
struct EnumNames<CalibrationEnd> {
  static constexpr EnumName<CalibrationEnd> table[] = {
      {CalibrationEnd::complete, "complete"},
      {CalibrationEnd::interrupted, "interrupted"},
  };
};

// The newest calibration of one model version, without its spec.
struct CalibrationBrief {
  std::string model, version;
  std::int64_t seeds = 0;      // seed-only runs it holds in all
  UnixSeconds created_at = 0;  // when it was last written
  CalibrationEnd end = CalibrationEnd::complete;
  std::string note;  // why it stopped ("every declared tolerance.detect is met with 45 ..."), or ""
  std::optional<LeaveOneOutFinding> leave_one_out;  // absent: not measured
};

enum class VerdictFilter {
  any,         // the latest verdict
  conclusive,  // the latest verdict that is not error:* (the system's failures say nothing)
  passed,      // the latest pass
  decided,     // the latest passed or failed:* (the verdicts a signed summary is made for)
};

// Verification duration histogram buckets (seconds, upper bounds; +Inf implied).
inline constexpr double kDurationBucketsS[] = {60, 300, 900, 1800, 3600, 7200, 21600, 86400};

struct VerificationStats {
  std::map<VerdictClass, std::int64_t> by_class;  // done verifications per verdict class
  std::vector<std::int64_t> duration_buckets;     // cumulative, one per kDurationBucketsS
  std::int64_t duration_count = 0;
  double duration_sum_s = 0;
  std::int64_t queued = 0, running = 0;

  std::int64_t total() const {  // every verification: done, queued or running
    std::int64_t count = queued + running;
    for (const auto& [cls, done] : by_class)
      count += done;
    return count;
  }
};

struct DeliveryCounts {
  struct Counts {
    std::int64_t sent = 0, failed = 0, pending = 0;  // pages by delivery state
    // Attempts recorded: every failed one (a page retried five times counts five) and the one
    // each sent page was accepted on.
    std::int64_t attempts = 0, failed_attempts = 0;
  };
  std::int64_t sent = 0, failed = 0, pending = 0;  // over every sender
  std::map<std::string, Counts> by_sender;         // per sender name (config pager.senders)
};

// Who a store is (migration 4).
struct StoreIdentity {
  std::string id;  // 16 random hex digits, made with the store; "" in a store not yet migrated
  // The id of the store this one was restored from (a `reverify backup` copy opened to write).
  std::optional<std::string> restored_from;
  bool adopted = false;  // this open made a backup copy a store of its own (a restore)
};

// The highest verification id and page id a store has handed out: SQLite's AUTOINCREMENT
// sequences, so one store file never hands out an id twice, even after its row is gone.
// Verification ids are in links (/verifications/12) and page ids in page keys: the state folder
// keeps the mark outside the file as well (verify/state_dir.hpp), so that a file put back from an
// older copy is noticed, and a restored store continues after every id handed out before it.
struct StoreHighWater {
  std::int64_t verification = 0, page = 0;

  bool below(const StoreHighWater& other) const {  // either id behind `other`'s
    return verification < other.verification || page < other.page;
  }
  bool operator==(const StoreHighWater&) const = default;
};

class Store final : public Outbox {
 public:
  // Opens (creating if needed) and migrates; a backup copy (backup_to) gets an id of its own
  // here. read_only opens an existing database for queries only (the CLI), without migrating.
  // Whether a missing or empty database may be created is the caller's decision
  // (verify/state_dir.hpp refuses it where the state folder shows history).
  static Result<std::unique_ptr<Store>> open(const std::filesystem::path& db_path, ClockFn clock,
                                             bool read_only = false);
  // Whether db_path holds a store at all: false when the file has no schema (0 bytes, and no
  // WAL beside it holding one). Opened without creating it and read as SQLite would (a WAL a
  // crash left is read too); an error when it is missing or not a database.
  static Result<bool> holds_schema(const std::filesystem::path& db_path);
  ~Store() override;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  int schema_version();
  const StoreIdentity& identity() const { return identity_; }  // as read at open
  // Writes a consistent copy of the whole database to `dest` with SQLite's online backup API: one
  // read transaction, so commits by other processes during the copy (a running reverifyd) are
  // either wholly in it or not at all. The copy is checked (PRAGMA quick_check) and marked as a
  // backup copy; it is written as <dest>.partial and renamed, so a failed backup leaves nothing
  // that looks whole. Refuses a `dest` that exists.
  Status backup_to(const std::filesystem::path& dest);
  // PRAGMA quick_check: an error naming what SQLite found when the file is damaged.
  Status check_integrity();

  // --- the file: its ids' high-water mark and its health (store_file.cpp) ---
  Result<StoreHighWater> high_water();
  // Raises the sequences so that the next ids handed out are above `mark`'s.
  Status continue_after(const StoreHighWater& mark);
  // `keeper` is called after every commit that handed out a verification or page id, before the
  // call that made it returns, with the mark as it stands then (other processes' ids included).
  // It runs inside a write transaction of its own, so the keepers of two processes writing one
  // store take turns and a later call never sees a lower mark. Its error is the call's (the rows
  // are committed; the mark is not kept).
  using HighWaterKeeper = std::function<Status(const StoreHighWater&)>;
  void keep_high_water(HighWaterKeeper keeper);
  // Whether the store still takes writes (reverifyd asks every few seconds): the file at its path
  // is the one opened and no shorter than it has been (SQLite never shrinks it: something else
  // cut it), and a write commits (PRAGMA user_version written again: one page). The error names
  // the file, what happened and the way out. A file found cut, replaced or gone stays failed:
  // its damage does not heal while this connection writes on.
  Status check_health();
  // SQLite's PRAGMA data_version: changes whenever ANOTHER connection (e.g. `reverify run` in its
  // own process) commits to the database; this connection's own commits leave it alone. Cheap
  // (no I/O): the daemon polls it to see other writers' verdicts at once.
  Result<std::int64_t> data_version();
  UnixSeconds now() const { return clock_(); }  // the store's clock, for times it will compare

  // --- model versions (registry sync) ---
  // Upserts every row of one source in one transaction and marks that source's other rows
  // removed. Returns the number of rows whose manifest changed or appeared.
  Result<std::int64_t> sync_model_versions(const std::string& source,
                                           const std::vector<ModelVersionRow>& rows);
  Status upsert_model_version(const ModelVersionRow& row);
  Result<std::vector<ModelVersionRow>> model_versions();
  Result<std::optional<ModelVersionRow>> model_version(const std::string& model,
                                                       const std::string& version);

  // --- verifications ---
  Result<std::int64_t> enqueue(const QueuedVerification& item);
  // A manual trigger: queues the verification unless its model version already has one queued
  // or running, decided and written in ONE transaction (conflict naming that verification), so
  // two triggers at once queue one row and the caller's acknowledgement follows the commit. A
  // queued retry or scheduled verification (waiting for its not_before) is folded into the
  // trigger instead: that row becomes the manual one, due now, and its id is returned.
  Result<std::int64_t> enqueue_unless_active(const QueuedVerification& item);
  // A verification that starts running as it is written, for `reverify run`, which runs it in
  // its own process: a daemon sharing the store never sees it queued, so never starts it too.
  Result<std::int64_t> insert_running(const QueuedVerification& item);
  // queued -> running, recording where the work happens (work_dir known before the runner starts).
  Status mark_running(std::int64_t id, const std::string& work_dir);
  // The work folder of a row inserted running, once known.
  Status set_work_dir(std::int64_t id, const std::string& work_dir);
  // Persists the runner's reference as soon as the job started, so a restart can reattach.
  Status record_runner(std::int64_t id, RunnerKind runner_kind, const std::string& ref);
  // The job's latest standing on its runner (runners/runner.hpp), while the row is running.
  Status record_runner_standing(std::int64_t id, const JobStanding& standing);
  // running|queued -> done with its verdict, the pages to send, the retry to queue (error:*) and
  // the signed summary (passed, failed:*), in ONE transaction: a verdict is never without its
  // summary, nor a summary without its verdict. Refuses (conflict) a verification that already
  // has a verdict: exactly one verdict per verification. Returns the page ids.
  Result<std::vector<std::int64_t>> record_verdict(
      std::int64_t id, const Verdict& verdict, const nlohmann::json& evidence,
      const std::string& log_tail, const std::vector<PageToRecord>& pages,
      const std::optional<QueuedVerification>& retry = {},
      const std::optional<AttestationToRecord>& attestation = {});
  Result<std::optional<VerificationRow>> verification(std::int64_t id);
  // Newest first; model/version empty = all.
  Result<std::vector<VerificationRow>> verifications(const std::string& model,
                                                     const std::string& version, std::size_t limit);
  Result<std::vector<VerificationRow>> unfinished();  // queued or running, oldest first
  // Per model version, the latest done verification matching the filter.
  // With per_mode, the latest per model version AND mode (the gate's `mode`, the pages' last pass
  // per mode).
  Result<std::vector<VerdictBrief>> latest_verdicts(VerdictFilter filter, bool per_mode = false);
  Result<VerificationStats> verification_stats();
  // The signed summaries of these verifications (those that have one), in id order.
  Result<std::vector<AttestationRow>> attestations(const std::vector<std::int64_t>& ids);
  // Every conclusive (not error:*) verdict, oldest first: the rotation policy's history.
  Result<std::vector<VerdictBrief>> history();
  // The model versions that have a verification of any kind, in any state: a release with none
  // is still to be verified at release.
  Result<std::set<std::pair<std::string, std::string>>> versions_with_verifications();
  // The verifications queued with `trigger` whose start time (not_before) is at or after `since`,
  // in any state, oldest first: what the at-release budget already spent.
  Result<std::vector<VerificationRow>> verifications_by_trigger(VerificationTrigger trigger,
                                                                UnixSeconds since);

  // --- verified manifests and what moved since (store_manifests.cpp) ---
  // Keeps the manifest a verification verifies (`manifest_json`: core/manifest_json of it), by the
  // sha256 of its document; kept once.
  Status keep_verified_manifest(const std::string& sha256, const std::string& manifest_json);
  // The listed, valid versions whose manifest changed since their latest conclusive verdict and
  // whose change is not described yet (ManifestToCompare), by model and version.
  Result<std::vector<ManifestToCompare>> manifests_to_compare();
  Status put_manifest_moved(const ManifestMoved& moved);
  // Each version's description of its current manifest (to_sha256 = the row's manifest_sha256).
  Result<std::vector<ManifestMoved>> manifests_moved();

  // --- registry sources under a platform condition (store_sources.cpp) ---
  // Opens the source's condition unless it is open already, and records `alert` (the one operator
  // alert) in the outbox in the SAME transaction: two verifications that find it at once alert
  // once, and a crash leaves both or neither. Returns whether this call opened it.
  Result<bool> open_source_condition(const SourceConditionRow& row, const PageToRecord& alert);
  // Closes the source's condition, if open, recording `resolve` with it (about verification
  // `verification_id`, the one that found the inputs again). Returns whether one was open.
  Result<bool> close_source_condition(const std::string& source, std::int64_t verification_id,
                                      const PageToRecord& resolve);
  Result<std::optional<SourceConditionRow>> source_condition(const std::string& source);
  Result<std::vector<SourceConditionRow>> source_conditions();

  // --- calibrations (reverify calibrate and the daemon's; the newest one of each reference
  // counts: the release's for full and steps verdicts, the subsample reference's for subsample
  // verdicts) ---
  // `seeds`: the seed-only runs the spec holds in all; `note`: why it stopped, "" if unsaid;
  // `leave_one_out`: what leave-one-out found over its runs, absent if not measured.
  // Returns the new calibration's id.
  Result<std::int64_t> put_calibration(
      const std::string& model, const std::string& version, const ToleranceSpec& spec, int seeds,
      CalibrationEnd end = CalibrationEnd::complete, const std::string& note = {},
      const std::optional<LeaveOneOutFinding>& leave_one_out = std::nullopt,
      CalibratedReference reference = CalibratedReference::release);
  // Rewrites calibration `id` as it stands now (a calibration stored run by run), its time too.
  Status update_calibration(std::int64_t id, const ToleranceSpec& spec, int seeds,
                            CalibrationEnd end, const std::string& note,
                            const std::optional<LeaveOneOutFinding>& leave_one_out = std::nullopt);
  Result<std::optional<ToleranceSpec>> calibration(
      const std::string& model, const std::string& version,
      CalibratedReference reference = CalibratedReference::release);
  // Per model version, its newest calibration of the release (without the spec).
  Result<std::vector<CalibrationBrief>> latest_calibrations();

  // --- cycles ---
  // Records the cycle starting at period_start with its plan and queues its verifications, in
  // one transaction; conflict when that cycle was already started (a restart mid-cycle). Returns
  // the queued verifications' ids, in the order of `entries`.
  Result<std::vector<std::int64_t>> start_cycle(UnixSeconds period_start,
                                                const nlohmann::json& plan,
                                                std::vector<QueuedVerification> entries);
  Result<std::optional<UnixSeconds>> last_cycle_period();

  // --- outbox (pager/notifier.hpp) ---
  void set_outbox_retry(const RetryPolicy& retry);  // backoff of mark_attempt_failed
  Result<std::vector<OutboxEntry>> pending(std::size_t limit) override;
  // The claimer is this process (its pid, page_deliveries.claimed_by), found gone with kill(pid,
  // 0): processes on one state folder share a pid namespace.
  Result<bool> claim(std::int64_t page_id, const std::string& sender) override;
  Status mark_sent(std::int64_t page_id, const std::string& sender) override;
  Result<AfterFailure> mark_attempt_failed(std::int64_t page_id, const std::string& sender,
                                           const std::string& detail, bool permanent) override;
  Result<std::vector<OutboxEntry>> open_triggers(const std::string& sender) override;
  Result<DeliveryCounts> delivery_counts();

 private:
  Store(sqlite3* db, ClockFn clock);
  Status migrate();
  Status apply_migration(const Migration& migration);  // one, in its own transaction
  // Reads the identity; for_writing: a backup copy first gets an id of its own.
  Status load_identity(bool for_writing);
  // After a commit that handed out ids: calls the keeper, if any (keep_high_water). mutex_ held.
  Status ids_handed_out();
  Result<StoreHighWater> read_high_water();  // mutex_ held
  // Runs `change` (SQL with `bind` applied) in one transaction and, when it changed a row,
  // records `page` about `verification_id` with it. Returns whether it changed one. mutex_ held.
  Result<bool> change_with_page(const std::string& change,
                                const std::function<void(sql::Statement&)>& bind,
                                std::int64_t verification_id, const PageToRecord& page);
  void remember_file();                     // at open: the file check_health compares with
  std::optional<std::string> file_fault();  // mutex_ held

  sqlite3* db_;
  ClockFn clock_;
  StoreIdentity identity_;
  RetryPolicy retry_;
  HighWaterKeeper keeper_;
  // The file as opened (device, inode) and the largest size seen since; what check_health found.
  struct FileSeen {
    std::uint64_t device = 0, inode = 0;
    std::int64_t largest = 0;
  };
  std::optional<FileSeen> file_;
  std::optional<std::string> file_fault_;
  std::mutex mutex_;
};

}  // namespace reverify
