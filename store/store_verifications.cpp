// Verifications (queued -> running -> done with one verdict and its pages) and the cycles that
// queue them.
#include <sqlite3.h>

#include "store/store_rows.hpp"
#include "store/stored_verdict.hpp"

namespace reverify {

using sql::Statement;
using sql::Transaction;
using store_rows::collect_rows;
using store_rows::expect_one_change;
using store_rows::insert_verification;
using store_rows::parse_column;
using store_rows::parse_json_column;

namespace {

// The verdict's summary columns (kSummaryColumns) come last, from kRowSummaryColumn on.
const std::string kVerificationColumns =
    std::string(
        "id, model, version, state, class, mode, trigger, attempt, runner_kind, runner_ref, "
        "work_dir, verdict_json, evidence_json, log_tail, explanation, queued_at, "
        "started_at, finished_at, cycle_id, not_before, runner_standing, ") +
    kSummaryColumns;
constexpr int kRowSummaryColumn = 21;

Result<VerdictClass> read_class(std::int64_t id, const std::string& text) {
  return parse_column<VerdictClass>("verifications", id, "class", text);
}

Result<RebuildMode> read_mode(std::int64_t id, const std::string& text) {
  return parse_column<RebuildMode>("verifications", id, "mode", text);
}

Result<VerificationRow> read_verification(const Statement& s) {
  VerificationRow row;
  row.id = s.int64(0);
  row.model = s.text(1);
  row.version = s.text(2);
  auto state = parse_column<VerificationState>("verifications", row.id, "state", s.text(3));
  if (!state.ok())
    return state.error();
  row.state = *state;
  if (auto cls = s.optional_text(4)) {
    auto parsed = read_class(row.id, *cls);
    if (!parsed.ok())
      return parsed.error();
    row.cls = *parsed;
  }
  auto mode = read_mode(row.id, s.text(5));
  if (!mode.ok())
    return mode.error();
  row.mode = *mode;
  auto trigger = parse_column<VerificationTrigger>("verifications", row.id, "trigger", s.text(6));
  if (!trigger.ok())
    return trigger.error();
  row.trigger = *trigger;
  row.attempt = int(s.int64(7));
  if (auto kind = s.optional_text(8)) {
    auto parsed = parse_column<RunnerKind>("verifications", row.id, "runner_kind", *kind);
    if (!parsed.ok())
      return parsed.error();
    row.runner_kind = *parsed;
  }
  row.runner_ref = s.optional_text(9);
  row.work_dir = s.optional_text(10);
  if (const auto text = s.optional_text(11)) {
    row.verdict = verdict_from_json(parse_json_column(text));
    if (!row.verdict) {
      return make_error(ErrorCode::parse, "verifications row " + std::to_string(row.id) +
                                              ": verdict_json is not a verdict");
    }
  }
  row.evidence = parse_json_column(s.optional_text(12));
  row.log_tail = s.text(13);
  row.explanation = s.text(14);
  row.queued_at = s.int64(15);
  row.started_at = s.optional_int64(16);
  row.finished_at = s.optional_int64(17);
  row.cycle_id = s.optional_int64(18);
  row.not_before = s.int64(19);
  if (const auto text = s.optional_text(20))
    row.runner_standing = JobStanding::from_json(parse_json_column(text));
  if (row.cls)
    row.summary = summary_at(s, kRowSummaryColumn, *row.cls);
  return row;
}

// Columns: id, model, version, class, mode, finished_at, explanation, manifest_sha256, trigger,
// then the summary's (kSummaryColumns, NULL for history()'s briefs).
constexpr const char* kBriefColumns =
    "id, model, version, class, mode, finished_at, explanation, manifest_sha256, trigger";
constexpr int kBriefSummaryColumn = 9;

Result<VerdictBrief> read_brief(const Statement& r) {
  VerdictBrief brief;
  brief.id = r.int64(0);
  brief.model = r.text(1);
  brief.version = r.text(2);
  auto cls = read_class(brief.id, r.text(3));
  if (!cls.ok())
    return cls.error();
  brief.cls = *cls;
  auto mode = read_mode(brief.id, r.text(4));
  if (!mode.ok())
    return mode.error();
  brief.mode = *mode;
  brief.finished_at = r.int64(5);
  brief.explanation = r.text(6);
  brief.manifest_sha256 = r.text(7);
  auto trigger = parse_column<VerificationTrigger>("verifications", brief.id, "trigger", r.text(8));
  if (!trigger.ok())
    return trigger.error();
  brief.trigger = *trigger;
  if (const auto summary = summary_at(r, kBriefSummaryColumn, brief.cls)) {
    brief.headline = summary->headline;
    brief.counts = summary->counts;
    brief.failing = summary->failing;
    brief.underpowered = summary->underpowered;
    if (summary->runs_needed)
      brief.runs_needed = static_cast<std::int64_t>(*summary->runs_needed);
    brief.underpowered_checks = summary->underpowered_checks;
    if (summary->seed_runs)
      brief.seed_runs = static_cast<std::int64_t>(*summary->seed_runs);
  }
  return brief;
}

}  // namespace

VerdictSummary summary_of(const VerificationRow& row) {
  if (row.summary)
    return *row.summary;
  if (row.verdict)
    return verdict_summary(*row.verdict);
  VerdictSummary summary;
  summary.cls = row.cls.value_or(VerdictClass::uncalibrated);
  summary.headline = row.explanation;
  return summary;
}

VerdictSummary VerdictBrief::summary() const {
  VerdictSummary summary;
  summary.cls = cls;
  summary.headline = headline;
  summary.counts = counts;
  summary.failing = failing;
  summary.underpowered = underpowered;
  if (runs_needed)
    summary.runs_needed = static_cast<std::size_t>(*runs_needed);
  summary.underpowered_checks = underpowered_checks;
  if (seed_runs)
    summary.seed_runs = static_cast<std::size_t>(*seed_runs);
  return summary;
}

Result<std::int64_t> Store::enqueue(const QueuedVerification& item) {
  std::lock_guard lock(mutex_);
  auto id = insert_verification(db_, item, clock_(), false);
  if (!id.ok())
    return id;
  if (auto st = ids_handed_out(); !st.ok())
    return st.error();
  return id;
}

Result<std::int64_t> Store::enqueue_unless_active(const QueuedVerification& item) {
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun().error();
  Statement active(db_,
                   "SELECT id, state, trigger FROM verifications WHERE model = ?1 AND version = ?2 "
                   "AND state != 'done' ORDER BY id LIMIT 1");
  active.bind(1, item.model).bind(2, item.version);
  auto found = active.step();
  if (!found.ok())
    return found.error();
  if (*found) {
    const std::int64_t id = active.int64(0);
    const std::string state = active.text(1), trigger = active.text(2);
    // Work that only waits for its time (a retry backing off, a jittered scheduled start) is
    // folded into the trigger: the same row runs now, as a manual one, instead of a 409 while
    // nothing runs (a retry's backoff is up to an hour).
    if (state == "queued" && (trigger == to_string(VerificationTrigger::retry) ||
                              trigger == to_string(VerificationTrigger::schedule) ||
                              trigger == to_string(VerificationTrigger::release))) {
      Statement fold(db_,
                     "UPDATE verifications SET trigger = ?2, mode = ?3, not_before = ?4 "
                     "WHERE id = ?1 AND state = 'queued'");
      fold.bind(1, id)
          .bind(2, to_string(item.trigger))
          .bind(3, to_string(item.mode))
          .bind(4, item.not_before);
      if (auto st = fold.run(); !st.ok())
        return st.error();
      if (auto st = tx.commit(); !st.ok())
        return st.error();
      return id;
    }
    return make_error(ErrorCode::conflict, item.model + "@" + item.version +
                                               " already has a verification queued or running (" +
                                               std::to_string(id) + ", " + state + ")");
  }
  auto id = insert_verification(db_, item, clock_(), false);
  if (!id.ok())
    return id.error();
  if (auto st = tx.commit(); !st.ok())
    return st.error();
  if (auto st = ids_handed_out(); !st.ok())
    return st.error();
  return id;
}

Result<std::int64_t> Store::insert_running(const QueuedVerification& item) {
  std::lock_guard lock(mutex_);
  auto id = insert_verification(db_, item, clock_(), true);
  if (!id.ok())
    return id;
  if (auto st = ids_handed_out(); !st.ok())
    return st.error();
  return id;
}

Status Store::mark_running(std::int64_t id, const std::string& work_dir) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "UPDATE verifications SET state = 'running', started_at = ?2, work_dir = ?3 "
              "WHERE id = ?1 AND state = 'queued'");
  s.bind(1, id).bind(2, clock_()).bind(3, work_dir);
  if (auto st = s.run(); !st.ok())
    return st;
  return expect_one_change(db_, id, "is not queued");
}

Status Store::set_work_dir(std::int64_t id, const std::string& work_dir) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "UPDATE verifications SET work_dir = ?2 "
              "WHERE id = ?1 AND state = 'running' AND work_dir IS NULL");
  s.bind(1, id).bind(2, work_dir);
  if (auto st = s.run(); !st.ok())
    return st;
  return expect_one_change(db_, id, "is not running without a work folder");
}

Status Store::record_runner(std::int64_t id, RunnerKind runner_kind, const std::string& ref) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "UPDATE verifications SET runner_kind = ?2, runner_ref = ?3 "
              "WHERE id = ?1 AND state = 'running'");
  s.bind(1, id).bind(2, std::string(to_string(runner_kind))).bind(3, ref);
  if (auto st = s.run(); !st.ok())
    return st;
  return expect_one_change(db_, id, "is not running");
}

Status Store::record_runner_standing(std::int64_t id, const JobStanding& standing) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "UPDATE verifications SET runner_standing = ?2 WHERE id = ?1 AND state = 'running'");
  s.bind(1, id).bind(2, standing.to_json().dump());
  if (auto st = s.run(); !st.ok())
    return st;
  return expect_one_change(db_, id, "is not running");
}

Result<std::vector<std::int64_t>> Store::record_verdict(
    std::int64_t id, const Verdict& verdict, const nlohmann::json& evidence,
    const std::string& log_tail, const std::vector<PageToRecord>& pages,
    const std::optional<QueuedVerification>& retry,
    const std::optional<AttestationToRecord>& attestation) {
  std::lock_guard lock(mutex_);
  const UnixSeconds now = clock_();
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun().error();
  Statement s(db_, std::string(R"sql(
UPDATE verifications SET state = 'done', class = ?2, verdict_json = ?3, evidence_json = ?4,
  log_tail = ?5, explanation = ?6, finished_at = ?7, started_at = COALESCE(started_at, ?7),
  ()sql") + kSummaryColumns +
                       ") = (?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
                       " WHERE id = ?1 AND state != 'done'");
  s.bind(1, id).bind(2, to_string(verdict.cls)).bind(3, to_json(verdict).dump());
  s.bind(4, evidence.dump()).bind(5, log_tail).bind(6, verdict.explanation).bind(7, now);
  bind_summary(s, 8, verdict_summary(verdict));
  if (auto st = s.run(); !st.ok())
    return st.error();
  if (auto st = expect_one_change(db_, id, "already has a verdict"); !st.ok())
    return st.error();

  auto page_ids = store_rows::insert_pages(db_, id, pages, now, identity_.id);
  if (!page_ids.ok())
    return page_ids.error();
  if (retry) {
    if (auto queued = insert_verification(db_, *retry, now, false); !queued.ok())
      return queued.error();
  }
  if (attestation) {
    Statement a(db_,
                "INSERT INTO attestations (verification_id, result, key_id, envelope_json, "
                "policy_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    a.bind(1, id).bind(2, attestation->result).bind(3, attestation->key_id);
    a.bind(4, attestation->envelope_json).bind(5, attestation->policy_json).bind(6, now);
    if (auto st = a.run(); !st.ok())
      return st.error();
  }
  if (auto st = tx.commit(); !st.ok())
    return st.error();
  if (!page_ids->empty() || retry) {
    if (auto st = ids_handed_out(); !st.ok())
      return st.error();
  }
  return page_ids;
}

Result<std::optional<VerificationRow>> Store::verification(std::int64_t id) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              std::string("SELECT ") + kVerificationColumns + " FROM verifications WHERE id = ?1");
  s.bind(1, id);
  auto row = s.step();
  if (!row.ok())
    return row.error();
  if (!*row)
    return std::optional<VerificationRow>();
  auto read = read_verification(s);
  if (!read.ok())
    return read.error();
  return std::optional<VerificationRow>(std::move(*read));
}

Result<std::vector<VerificationRow>> Store::verifications(const std::string& model,
                                                          const std::string& version,
                                                          std::size_t limit) {
  std::lock_guard lock(mutex_);
  Statement s(db_, std::string("SELECT ") + kVerificationColumns +
                       " FROM verifications WHERE (?1 = '' OR model = ?1) AND "
                       "(?2 = '' OR version = ?2) ORDER BY id DESC LIMIT ?3");
  s.bind(1, model).bind(2, version).bind(3, std::int64_t(limit));
  return collect_rows<VerificationRow>(s, read_verification);
}

Result<std::vector<VerificationRow>> Store::unfinished() {
  std::lock_guard lock(mutex_);
  Statement s(db_, std::string("SELECT ") + kVerificationColumns +
                       " FROM verifications WHERE state != 'done' ORDER BY id");
  return collect_rows<VerificationRow>(s, read_verification);
}

Result<std::vector<VerdictBrief>> Store::latest_verdicts(VerdictFilter filter, bool per_mode) {
  std::lock_guard lock(mutex_);
  const char* where = filter == VerdictFilter::passed       ? "class = 'passed'"
                      : filter == VerdictFilter::conclusive ? "class NOT LIKE 'error:%'"
                      : filter == VerdictFilter::decided
                          ? "(class = 'passed' OR class LIKE 'failed:%')"
                          : "1";
  Statement s(db_,
              std::string("SELECT ") + kBriefColumns + ", " + kSummaryColumns +
                  " FROM verifications WHERE id IN (SELECT MAX(id) FROM verifications WHERE "
                  "state = 'done' AND " +
                  where +
                  (per_mode ? " GROUP BY model, version, mode)" : " GROUP BY model, version)"));
  return collect_rows<VerdictBrief>(s, read_brief);
}

Result<std::vector<VerdictBrief>> Store::history() {
  std::lock_guard lock(mutex_);
  Statement s(
      db_,
      "SELECT id, model, version, class, mode, finished_at, '', manifest_sha256, trigger, NULL "
      "FROM verifications WHERE state = 'done' AND class NOT LIKE 'error:%' ORDER BY id");
  return collect_rows<VerdictBrief>(s, read_brief);
}

Result<std::set<std::pair<std::string, std::string>>> Store::versions_with_verifications() {
  std::lock_guard lock(mutex_);
  Statement s(db_, "SELECT DISTINCT model, version FROM verifications");
  std::set<std::pair<std::string, std::string>> out;
  for (;;) {
    auto more = s.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return out;
    out.emplace(s.text(0), s.text(1));
  }
}

Result<std::vector<VerificationRow>> Store::verifications_by_trigger(VerificationTrigger trigger,
                                                                     UnixSeconds since) {
  std::lock_guard lock(mutex_);
  Statement s(db_, std::string("SELECT ") + kVerificationColumns +
                       " FROM verifications WHERE trigger = ?1 AND not_before >= ?2 ORDER BY id");
  s.bind(1, to_string(trigger)).bind(2, since);
  return collect_rows<VerificationRow>(s, read_verification);
}

Result<VerificationStats> Store::verification_stats() {
  std::lock_guard lock(mutex_);
  VerificationStats stats;
  Statement counts(db_,
                   "SELECT state, COALESCE(class, ''), COUNT(*) FROM verifications GROUP BY 1, 2");
  for (;;) {
    auto more = counts.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      break;
    const auto state = enum_from_string<VerificationState>(counts.text(0));
    const auto cls = enum_from_string<VerdictClass>(counts.text(1));
    if (state == VerificationState::queued) {
      stats.queued = counts.int64(2);
    } else if (state == VerificationState::running) {
      stats.running = counts.int64(2);
    } else if (state == VerificationState::done && cls) {
      stats.by_class[*cls] = counts.int64(2);
    } else {
      return make_error(ErrorCode::parse, "verifications: unknown state \"" + counts.text(0) +
                                              "\" or class \"" + counts.text(1) + "\"");
    }
  }
  // Cumulative bucket counts computed by SQLite: no row is copied out.
  std::string sql = "SELECT COUNT(*), COALESCE(SUM(d), 0)";
  for (double bound : kDurationBucketsS)
    sql += ", COALESCE(SUM(d <= " + std::to_string(bound) + "), 0)";
  sql +=
      " FROM (SELECT finished_at - started_at AS d FROM verifications WHERE state = 'done' "
      "AND started_at IS NOT NULL)";
  Statement durations(db_, sql);
  auto row = durations.step();
  if (!row.ok())
    return row.error();
  stats.duration_count = durations.int64(0);
  stats.duration_sum_s = double(durations.int64(1));
  for (std::size_t i = 0; i < std::size(kDurationBucketsS); ++i) {
    stats.duration_buckets.push_back(durations.int64(int(i) + 2));
  }
  return stats;
}

// --- cycles ---------------------------------------------------------------------------------

Result<std::vector<std::int64_t>> Store::start_cycle(UnixSeconds period_start,
                                                     const nlohmann::json& plan,
                                                     std::vector<QueuedVerification> entries) {
  std::lock_guard lock(mutex_);
  const UnixSeconds now = clock_();
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun().error();
  Statement s(db_,
              "INSERT INTO cycles (period_start, started_at, plan_json) VALUES (?1, ?2, ?3) "
              "ON CONFLICT (period_start) DO NOTHING");
  s.bind(1, period_start).bind(2, now).bind(3, plan.dump());
  if (auto st = s.run(); !st.ok())
    return st.error();
  if (sqlite3_changes(db_) != 1) {
    return make_error(ErrorCode::conflict,
                      "the cycle starting " + rfc3339(period_start) + " was already started");
  }
  const std::int64_t cycle_id = sqlite3_last_insert_rowid(db_);
  std::vector<std::int64_t> ids;
  for (auto& entry : entries) {
    entry.cycle_id = cycle_id;
    auto id = insert_verification(db_, entry, now, false);
    if (!id.ok())
      return id.error();
    ids.push_back(*id);
  }
  if (auto st = tx.commit(); !st.ok())
    return st.error();
  if (auto st = ids_handed_out(); !st.ok())
    return st.error();
  return ids;
}

Result<std::optional<UnixSeconds>> Store::last_cycle_period() {
  std::lock_guard lock(mutex_);
  Statement s(db_, "SELECT MAX(period_start) FROM cycles");
  auto row = s.step();
  if (!row.ok())
    return row.error();
  return s.optional_int64(0);
}

}  // namespace reverify
