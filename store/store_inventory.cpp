// The model-version inventory: what the registry sources list, upserted per sync.
#include <sqlite3.h>

#include "store/store_rows.hpp"

namespace reverify {

using sql::Statement;
using sql::Transaction;
using store_rows::collect_rows;

namespace {

constexpr const char* kModelVersionColumns =
    "model, version, owner, level, source, location, manifest_sha256, manifest_error, "
    "released_at, gpus, duration_s, first_seen_at, last_seen_at, removed, subsample_fraction, "
    "subsample_duration_s";

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
  row.subsample_fraction = s.optional_real(14);
  row.subsample_duration_s = s.optional_real(15);
  return row;
}

constexpr const char* kUpsertModelVersion = R"sql(
INSERT INTO model_versions (model, version, owner, level, source, location, manifest_sha256,
                            manifest_error, released_at, gpus, duration_s, first_seen_at,
                            last_seen_at, removed, subsample_fraction, subsample_duration_s,
                            subsample_described)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?12, ?11, ?11, 0, ?13, ?14, 1)
ON CONFLICT (model, version) DO UPDATE SET
  owner = excluded.owner, level = excluded.level, source = excluded.source,
  location = excluded.location, manifest_sha256 = excluded.manifest_sha256,
  manifest_error = excluded.manifest_error, released_at = excluded.released_at,
  gpus = excluded.gpus, duration_s = excluded.duration_s, last_seen_at = excluded.last_seen_at, removed = 0,
  subsample_fraction = excluded.subsample_fraction,
  subsample_duration_s = excluded.subsample_duration_s, subsample_described = 1
WHERE model_versions.manifest_sha256 != excluded.manifest_sha256
   OR model_versions.subsample_described = 0
   OR model_versions.location != excluded.location OR model_versions.removed != 0
   OR model_versions.source != excluded.source
   OR model_versions.manifest_error IS NOT excluded.manifest_error
)sql";

void bind_model_version(Statement& s, const ModelVersionRow& row, UnixSeconds now) {
  s.bind(1, row.model).bind(2, row.version).bind(3, row.owner).bind(4, row.level);
  s.bind(5, row.source).bind(6, row.location).bind(7, row.manifest_sha256);
  s.bind(8, row.manifest_error).bind(9, row.released_at).bind(10, row.gpus).bind(11, now);
  s.bind(12, row.duration_s).bind(13, row.subsample_fraction).bind(14, row.subsample_duration_s);
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

}  // namespace reverify
