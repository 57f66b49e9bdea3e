#include "store/store.hpp"

#include <sqlite3.h>

#include <algorithm>

#include "store/migrations.hpp"
#include "store/sqlite.hpp"
#include "store/tolerance_json.hpp"

namespace reverify {

using sql::Statement;
using sql::Transaction;

const char* to_string(VerificationState state) {
  switch (state) {
    case VerificationState::queued:
      return "queued";
    case VerificationState::running:
      return "running";
    case VerificationState::done:
      return "done";
  }
  return "unknown";
}

namespace {

VerificationState parse_state(const std::string& text) {
  if (text == "running")
    return VerificationState::running;
  if (text == "done")
    return VerificationState::done;
  return VerificationState::queued;
}

nlohmann::json parse_json_column(const std::optional<std::string>& text) {
  if (!text)
    return nullptr;
  return nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
}

constexpr const char* kVerificationColumns =
    "id, model, version, state, class, mode, trigger, attempt, runner_kind, runner_ref, work_dir, "
    "verdict_json, evidence_json, log_tail, explanation, queued_at, started_at, finished_at, "
    "cycle_id, not_before";

VerificationRow read_verification(const Statement& s) {
  VerificationRow row;
  row.id = s.int64(0);
  row.model = s.text(1);
  row.version = s.text(2);
  row.state = parse_state(s.text(3));
  row.cls = s.optional_text(4);
  row.mode = s.text(5);
  row.trigger = s.text(6);
  row.attempt = int(s.int64(7));
  row.runner_kind = s.optional_text(8);
  row.runner_ref = s.optional_text(9);
  row.work_dir = s.optional_text(10);
  row.verdict = parse_json_column(s.optional_text(11));
  row.evidence = parse_json_column(s.optional_text(12));
  row.log_tail = s.text(13);
  row.explanation = s.text(14);
  row.queued_at = s.int64(15);
  row.started_at = s.optional_int64(16);
  row.finished_at = s.optional_int64(17);
  row.cycle_id = s.optional_int64(18);
  row.not_before = s.int64(19);
  return row;
}

// Columns: id, model, version, class, mode, finished_at, explanation, manifest_sha256.
VerdictBrief read_brief(const Statement& r) {
  return VerdictBrief{r.int64(0), r.text(1),  r.text(2), r.text(3),
                      r.text(4),  r.int64(5), r.text(6), r.text(7)};
}

constexpr const char* kModelVersionColumns =
    "model, version, owner, level, source, location, manifest_sha256, manifest_error, "
    "released_at, gpus, duration_s, first_seen_at, last_seen_at, removed";

ModelVersionRow read_model_version(const Statement& s) {
  ModelVersionRow row;
  row.model = s.text(0);
  row.version = s.text(1);
  row.owner = s.text(2);
  row.level = s.text(3);
  row.source = s.text(4);
  row.location = s.text(5);
  row.manifest_sha256 = s.text(6);
  row.manifest_error = s.optional_text(7);
  row.released_at = s.optional_int64(8);
  row.gpus = s.int64(9);
  row.duration_s = s.optional_real(10);
  row.first_seen_at = s.int64(11);
  row.last_seen_at = s.int64(12);
  row.removed = s.int64(13) != 0;
  return row;
}

template <class T, class Read>
Result<std::vector<T>> collect_rows(Statement& s, Read read) {
  std::vector<T> rows;
  for (;;) {
    auto more = s.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return rows;
    rows.push_back(read(s));
  }
}

// Connection settings, each on every connection (they are per connection in SQLite).
Status configure_connection(sqlite3* db, bool read_only) {
  // Wait for another writer (the CLI, a second connection) instead of failing with SQLITE_BUSY.
  sqlite3_busy_timeout(db, 5000);
  // Referential integrity is off by default in SQLite; verifications must name real versions.
  if (auto s = sql::exec(db, "PRAGMA foreign_keys = ON"); !s.ok())
    return s;
  if (read_only)
    return Status::success();
  // WAL: readers (HTTP snapshot refresh, CLI) never block the writer and a crash keeps commits.
  if (auto s = sql::exec(db, "PRAGMA journal_mode = WAL"); !s.ok())
    return s;
  // NORMAL is durable in WAL mode against process crashes (kill -9); only power loss may drop
  // the last commits, never corrupt.
  return sql::exec(db, "PRAGMA synchronous = NORMAL");
}

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::filesystem::path& db_path, ClockFn clock,
                                           bool read_only) {
  if (!read_only && db_path.has_parent_path()) {
    // A fresh state_dir is normal on first start; SQLite creates the file but not its folder.
    std::error_code ec;
    std::filesystem::create_directories(db_path.parent_path(), ec);
  }
  sqlite3* db = nullptr;
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(db_path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error(read_only ? ErrorCode::not_found : ErrorCode::io,
                      "cannot open state database " + db_path.string() + ": " + message);
  }
  if (auto s = configure_connection(db, read_only); !s.ok()) {
    sqlite3_close(db);
    return s.error();
  }
  std::unique_ptr<Store> store(new Store(db, std::move(clock)));
  if (!read_only) {
    if (auto s = store->migrate(); !s.ok())
      return s.error();
  }
  return store;
}

Store::Store(sqlite3* db, ClockFn clock) : db_(db), clock_(std::move(clock)) {}

Store::~Store() {
  sqlite3_close(db_);
}

int Store::schema_version() {
  std::lock_guard lock(mutex_);
  Statement s(db_, "PRAGMA user_version");
  auto row = s.step();
  return row.ok() && *row ? int(s.int64(0)) : 0;
}

Status Store::migrate() {
  int current = schema_version();
  std::lock_guard lock(mutex_);
  for (const auto& m : migrations()) {
    if (m.number <= current)
      continue;
    Transaction tx(db_);
    if (!tx.begun().ok())
      return tx.begun();
    if (auto s = sql::exec(db_, m.sql); !s.ok()) {
      return make_error(ErrorCode::io,
                        "migration " + std::to_string(m.number) + ": " + s.error().message);
    }
    auto pragma = "PRAGMA user_version = " + std::to_string(m.number);
    if (auto s = sql::exec(db_, pragma.c_str()); !s.ok())
      return s;
    if (auto s = tx.commit(); !s.ok())
      return s;
  }
  return Status::success();
}

// --- model versions -------------------------------------------------------------------------

namespace {
constexpr const char* kUpsertModelVersion = R"sql(
INSERT INTO model_versions (model, version, owner, level, source, location, manifest_sha256,
                            manifest_error, released_at, gpus, duration_s, first_seen_at,
                            last_seen_at, removed)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?12, ?11, ?11, 0)
ON CONFLICT (model, version) DO UPDATE SET
  owner = excluded.owner, level = excluded.level, source = excluded.source,
  location = excluded.location, manifest_sha256 = excluded.manifest_sha256,
  manifest_error = excluded.manifest_error, released_at = excluded.released_at,
  gpus = excluded.gpus, duration_s = excluded.duration_s, last_seen_at = excluded.last_seen_at, removed = 0
WHERE model_versions.manifest_sha256 != excluded.manifest_sha256
   OR model_versions.location != excluded.location OR model_versions.removed != 0
   OR model_versions.source != excluded.source
   OR model_versions.manifest_error IS NOT excluded.manifest_error
)sql";

void bind_model_version(Statement& s, const ModelVersionRow& row, UnixSeconds now) {
  s.bind(1, row.model).bind(2, row.version).bind(3, row.owner).bind(4, row.level);
  s.bind(5, row.source).bind(6, row.location).bind(7, row.manifest_sha256);
  s.bind(8, row.manifest_error).bind(9, row.released_at).bind(10, row.gpus).bind(11, now);
  s.bind(12, row.duration_s);
}
}  // namespace

Result<std::int64_t> Store::sync_model_versions(const std::string& source,
                                                const std::vector<ModelVersionRow>& rows) {
  std::lock_guard lock(mutex_);
  const UnixSeconds now = clock_();
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun().error();
  // Rows this sync does not mention are removed; a temp table of seen keys avoids one UPDATE per
  // row for unchanged versions (the common case of a periodic sync).
  if (auto s = sql::exec(db_,
                         "CREATE TEMP TABLE IF NOT EXISTS seen (model TEXT, version TEXT, "
                         "PRIMARY KEY (model, version)) WITHOUT ROWID; DELETE FROM temp.seen");
      !s.ok()) {
    return s.error();
  }
  Statement upsert(db_, kUpsertModelVersion);
  Statement seen(db_, "INSERT OR IGNORE INTO temp.seen (model, version) VALUES (?1, ?2)");
  if (!upsert.prepared())
    return upsert.error();
  if (!seen.prepared())
    return seen.error();
  std::int64_t changed = 0;
  for (const auto& row : rows) {
    bind_model_version(upsert, row, now);
    upsert.bind(5, source);
    if (auto s = upsert.run(); !s.ok())
      return s.error();
    changed += sqlite3_changes(db_);
    upsert.reset();
    seen.bind(1, row.model).bind(2, row.version);
    if (auto s = seen.run(); !s.ok())
      return s.error();
    seen.reset();
  }
  Statement remove(db_, R"sql(
UPDATE model_versions SET removed = 1
WHERE source = ?1 AND removed = 0
  AND NOT EXISTS (SELECT 1 FROM temp.seen s WHERE s.model = model_versions.model
                                             AND s.version = model_versions.version))sql");
  remove.bind(1, source);
  if (auto s = remove.run(); !s.ok())
    return s.error();
  Statement touch(db_,
                  "UPDATE model_versions SET last_seen_at = ?1 WHERE source = ?2 AND removed = 0");
  touch.bind(1, now).bind(2, source);
  if (auto s = touch.run(); !s.ok())
    return s.error();
  if (auto s = tx.commit(); !s.ok())
    return s.error();
  return changed;
}

Status Store::upsert_model_version(const ModelVersionRow& row) {
  std::lock_guard lock(mutex_);
  Statement s(db_, kUpsertModelVersion);
  bind_model_version(s, row, clock_());
  return s.run();
}

Result<std::vector<ModelVersionRow>> Store::model_versions() {
  std::lock_guard lock(mutex_);
  Statement s(db_, std::string("SELECT ") + kModelVersionColumns +
                       " FROM model_versions ORDER BY model, version");
  return collect_rows<ModelVersionRow>(s, read_model_version);
}

Result<std::optional<ModelVersionRow>> Store::model_version(const std::string& model,
                                                            const std::string& version) {
  std::lock_guard lock(mutex_);
  Statement s(db_, std::string("SELECT ") + kModelVersionColumns +
                       " FROM model_versions WHERE model = ?1 AND version = ?2");
  s.bind(1, model).bind(2, version);
  auto row = s.step();
  if (!row.ok())
    return row.error();
  if (!*row)
    return std::optional<ModelVersionRow>();
  return std::optional<ModelVersionRow>(read_model_version(s));
}

// --- verifications --------------------------------------------------------------------------

namespace {
// Inserts one verification, queued or already running (started now); the manifest hash it will
// verify is taken from the model version row (the gate compares it with the current one).
// REQUIRES: the store mutex held.
Result<std::int64_t> insert_verification(sqlite3* db, const QueuedVerification& item,
                                         UnixSeconds now, bool running) {
  Statement s(
      db,
      "INSERT INTO verifications (model, version, state, mode, trigger, attempt, "
      "queued_at, not_before, cycle_id, manifest_sha256, started_at) SELECT ?1, ?2, "
      "CASE WHEN ?9 THEN 'running' ELSE 'queued' END, ?3, ?4, ?5, ?6, ?7, ?8, manifest_sha256, "
      "CASE WHEN ?9 THEN ?6 END FROM model_versions WHERE model = ?1 AND version = ?2");
  s.bind(1, item.model).bind(2, item.version).bind(3, item.mode).bind(4, item.trigger);
  s.bind(5, std::int64_t(item.attempt)).bind(6, now).bind(7, item.not_before);
  s.bind(8, item.cycle_id).bind(9, std::int64_t(running ? 1 : 0));
  const std::string what = "queue " + item.model + "@" + item.version;
  if (auto st = s.run(); !st.ok()) {
    return make_error(st.error().code, what + ": " + st.error().message);
  }
  if (sqlite3_changes(db) != 1) {
    return make_error(ErrorCode::not_found, what + ": unknown model version");
  }
  return std::int64_t(sqlite3_last_insert_rowid(db));
}
}  // namespace

Result<std::int64_t> Store::enqueue(const QueuedVerification& item) {
  std::lock_guard lock(mutex_);
  return insert_verification(db_, item, clock_(), false);
}

Result<std::int64_t> Store::insert_running(const QueuedVerification& item) {
  std::lock_guard lock(mutex_);
  return insert_verification(db_, item, clock_(), true);
}

namespace {
Status expect_one_change(sqlite3* db, std::int64_t id, const char* what) {
  if (sqlite3_changes(db) == 1)
    return Status::success();
  return make_error(ErrorCode::conflict, "verification " + std::to_string(id) + ": " + what);
}
}  // namespace

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

Status Store::record_runner(std::int64_t id, const std::string& runner_kind,
                            const std::string& ref) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "UPDATE verifications SET runner_kind = ?2, runner_ref = ?3 "
              "WHERE id = ?1 AND state = 'running'");
  s.bind(1, id).bind(2, runner_kind).bind(3, ref);
  if (auto st = s.run(); !st.ok())
    return st;
  return expect_one_change(db_, id, "is not running");
}

Result<std::vector<std::int64_t>> Store::record_verdict(
    std::int64_t id, const Verdict& verdict, const nlohmann::json& evidence,
    const std::string& log_tail, const std::vector<PageToRecord>& pages,
    const std::optional<QueuedVerification>& retry) {
  std::lock_guard lock(mutex_);
  const UnixSeconds now = clock_();
  Transaction tx(db_);
  if (!tx.begun().ok())
    return tx.begun().error();
  Statement s(db_, R"sql(
UPDATE verifications SET state = 'done', class = ?2, verdict_json = ?3, evidence_json = ?4,
  log_tail = ?5, explanation = ?6, finished_at = ?7, started_at = COALESCE(started_at, ?7)
WHERE id = ?1 AND state != 'done')sql");
  s.bind(1, id).bind(2, to_string(verdict.cls)).bind(3, to_json(verdict).dump());
  s.bind(4, evidence.dump()).bind(5, log_tail).bind(6, verdict.explanation).bind(7, now);
  if (auto st = s.run(); !st.ok())
    return st.error();
  if (auto st = expect_one_change(db_, id, "already has a verdict"); !st.ok())
    return st.error();

  std::vector<std::int64_t> page_ids;
  Statement page(db_,
                 "INSERT INTO pages (verification_id, dedup_key, action, event_json, created_at) "
                 "VALUES (?1, ?2, ?3, ?4, ?5)");
  Statement delivery(db_,
                     "INSERT INTO page_deliveries (page_id, sender, state, next_attempt_at) "
                     "VALUES (?1, ?2, 'pending', ?3)");
  for (const auto& p : pages) {
    page.bind(1, id).bind(2, p.event.dedup_key).bind(3, to_string(p.event.action));
    page.bind(4, to_json(p.event).dump()).bind(5, now);
    if (auto st = page.run(); !st.ok())
      return st.error();
    page.reset();
    const std::int64_t page_id = sqlite3_last_insert_rowid(db_);
    page_ids.push_back(page_id);
    for (const auto& sender : p.senders) {
      delivery.bind(1, page_id).bind(2, sender).bind(3, now);
      if (auto st = delivery.run(); !st.ok())
        return st.error();
      delivery.reset();
    }
  }
  if (retry) {
    if (auto queued = insert_verification(db_, *retry, now, false); !queued.ok())
      return queued.error();
  }
  if (auto st = tx.commit(); !st.ok())
    return st.error();
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
  return std::optional<VerificationRow>(read_verification(s));
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

Result<std::vector<VerdictBrief>> Store::latest_verdicts(VerdictFilter filter) {
  std::lock_guard lock(mutex_);
  const char* where = filter == VerdictFilter::passed       ? "class = 'passed'"
                      : filter == VerdictFilter::conclusive ? "class NOT LIKE 'error:%'"
                                                            : "1";
  Statement s(db_, std::string(R"sql(
SELECT id, model, version, class, mode, finished_at, explanation, manifest_sha256
FROM verifications
WHERE id IN (SELECT MAX(id) FROM verifications WHERE state = 'done' AND )sql") +
                       where + " GROUP BY model, version)");
  return collect_rows<VerdictBrief>(s, read_brief);
}

Result<std::vector<VerdictBrief>> Store::history() {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "SELECT id, model, version, class, mode, finished_at, '', manifest_sha256 "
              "FROM verifications WHERE state = 'done' AND class NOT LIKE 'error:%' ORDER BY id");
  return collect_rows<VerdictBrief>(s, read_brief);
}

Result<VerificationStats> Store::verification_stats() {
  std::lock_guard lock(mutex_);
  VerificationStats stats;
  Statement classes(db_, "SELECT COALESCE(class, state), COUNT(*) FROM verifications GROUP BY 1");
  for (;;) {
    auto more = classes.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      break;
    auto key = classes.text(0);
    if (key == "queued") {
      stats.queued = classes.int64(1);
    } else if (key == "running") {
      stats.running = classes.int64(1);
    } else {
      stats.by_class[key] = classes.int64(1);
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

// --- calibrations ---------------------------------------------------------------------------

Status Store::put_calibration(const std::string& model, const std::string& version,
                              const ToleranceSpec& spec, int seeds) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "INSERT INTO calibrations (model, version, spec_json, seeds, created_at) "
              "VALUES (?1, ?2, ?3, ?4, ?5)");
  s.bind(1, model).bind(2, version).bind(3, tolerance_to_json(spec).dump());
  s.bind(4, std::int64_t(seeds));
  s.bind(5, clock_());
  return s.run();
}

Result<std::optional<ToleranceSpec>> Store::calibration(const std::string& model,
                                                        const std::string& version) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "SELECT spec_json FROM calibrations WHERE model = ?1 AND version = ?2 "
              "ORDER BY id DESC LIMIT 1");
  s.bind(1, model).bind(2, version);
  auto row = s.step();
  if (!row.ok())
    return row.error();
  if (!*row)
    return std::optional<ToleranceSpec>();
  auto spec = tolerance_from_json(parse_json_column(s.text(0)));
  if (!spec) {
    return make_error(ErrorCode::parse, "calibration of " + model + "@" + version +
                                            ": stored spec_json is not a tolerance spec");
  }
  return spec;
}

// --- cycles ---------------------------------------------------------------------------------

Result<std::int64_t> Store::start_cycle(UnixSeconds period_start, const nlohmann::json& plan,
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
  for (auto& entry : entries) {
    entry.cycle_id = cycle_id;
    if (auto id = insert_verification(db_, entry, now, false); !id.ok())
      return id.error();
  }
  if (auto st = tx.commit(); !st.ok())
    return st.error();
  return cycle_id;
}

Result<std::optional<UnixSeconds>> Store::last_cycle_period() {
  std::lock_guard lock(mutex_);
  Statement s(db_, "SELECT MAX(period_start) FROM cycles");
  auto row = s.step();
  if (!row.ok())
    return row.error();
  return s.optional_int64(0);
}

// --- outbox ---------------------------------------------------------------------------------

void Store::set_outbox_retry(const RetryPolicy& retry) {
  std::lock_guard lock(mutex_);
  retry_ = retry;
}

namespace {
Result<std::vector<OutboxEntry>> read_outbox_entries(Statement& s) {
  std::vector<OutboxEntry> entries;
  for (;;) {
    auto more = s.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return entries;
    auto event = page_event_from_json(parse_json_column(s.text(1)));
    if (!event)
      continue;  // cannot happen for rows this store wrote; never blocks the queue
    event->id = s.int64(0);
    entries.push_back(OutboxEntry{std::move(*event), s.text(2), int(s.int64(3))});
  }
}
}  // namespace

Result<std::vector<OutboxEntry>> Store::pending(std::size_t limit) {
  std::lock_guard lock(mutex_);
  // A row waits while an older row of the same dedup key and sender is pending, so a resolve
  // never overtakes the trigger it resolves (notifier.hpp, Outbox::pending).
  Statement s(db_, R"sql(
SELECT p.id, p.event_json, d.sender, d.attempts FROM page_deliveries d
JOIN pages p ON p.id = d.page_id
WHERE d.state = 'pending' AND d.next_attempt_at <= ?1
  AND NOT EXISTS (SELECT 1 FROM pages p2 JOIN page_deliveries d2 ON d2.page_id = p2.id
                  WHERE p2.dedup_key = p.dedup_key AND p2.id < p.id
                    AND d2.sender = d.sender AND d2.state = 'pending')
ORDER BY p.id, d.sender LIMIT ?2)sql");
  s.bind(1, clock_()).bind(2, std::int64_t(limit));
  return read_outbox_entries(s);
}

Result<std::vector<OutboxEntry>> Store::open_triggers(const std::string& sender) {
  std::lock_guard lock(mutex_);
  Statement s(db_, R"sql(
SELECT p.id, p.event_json, d.sender, d.attempts FROM pages p
JOIN page_deliveries d ON d.page_id = p.id
WHERE d.sender = ?1 AND d.state = 'sent' AND p.action = 'trigger'
  AND p.id = (SELECT MAX(p2.id) FROM pages p2 JOIN page_deliveries d2 ON d2.page_id = p2.id
              WHERE p2.dedup_key = p.dedup_key AND d2.sender = ?1 AND d2.state = 'sent')
ORDER BY p.id)sql");
  s.bind(1, sender);
  return read_outbox_entries(s);
}

Status Store::mark_sent(std::int64_t page_id, const std::string& sender) {
  std::lock_guard lock(mutex_);
  Statement s(db_,
              "UPDATE page_deliveries SET state = 'sent', sent_at = ?3, last_error = NULL "
              " WHERE page_id = ?1 AND sender = ?2 AND state = 'pending'");
  s.bind(1, page_id).bind(2, sender).bind(3, clock_());
  return s.run();
}

Status Store::mark_attempt_failed(std::int64_t page_id, const std::string& sender,
                                  const std::string& detail, bool permanent) {
  std::lock_guard lock(mutex_);
  Statement read(db_, "SELECT attempts FROM page_deliveries WHERE page_id = ?1 AND sender = ?2");
  read.bind(1, page_id).bind(2, sender);
  auto row = read.step();
  if (!row.ok())
    return row.error();
  if (!*row) {
    return make_error(ErrorCode::not_found,
                      "page " + std::to_string(page_id) + " has no sender \"" + sender + "\"");
  }
  const int attempts = int(read.int64(0)) + 1;
  // Capped exponential backoff: initial, 2x, 4x, ... up to max_backoff_s.
  const std::int64_t max_backoff = retry_.max_backoff.count();
  std::int64_t backoff = retry_.initial.count();
  for (int i = 1; i < attempts && backoff < max_backoff; ++i)
    backoff *= 2;
  backoff = std::min(backoff, max_backoff);
  const bool give_up = permanent || attempts >= retry_.max_attempts;
  Statement s(db_,
              "UPDATE page_deliveries SET attempts = ?3, last_error = ?4, next_attempt_at = ?5, "
              "state = ?6 WHERE page_id = ?1 AND sender = ?2 AND state = 'pending'");
  s.bind(1, page_id).bind(2, sender).bind(3, std::int64_t(attempts)).bind(4, detail);
  s.bind(5, clock_() + backoff).bind(6, give_up ? "failed" : "pending");
  return s.run();
}

Result<DeliveryCounts> Store::delivery_counts() {
  std::lock_guard lock(mutex_);
  Statement s(db_, "SELECT state, COUNT(*) FROM page_deliveries GROUP BY state");
  DeliveryCounts counts;
  for (;;) {
    auto more = s.step();
    if (!more.ok())
      return more.error();
    if (!*more)
      return counts;
    auto state = s.text(0);
    (state == "sent"     ? counts.sent
     : state == "failed" ? counts.failed
                         : counts.pending) = s.int64(1);
  }
}

}  // namespace reverify
