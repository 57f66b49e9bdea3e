#include "store/migrations.hpp"

#include "store/stored_verdict.hpp"

namespace reverify {
namespace {

// Times are Unix seconds (UTC). JSON columns hold documents the daemon wrote itself.
constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE model_versions (
  model TEXT NOT NULL,
  version TEXT NOT NULL,
  owner TEXT NOT NULL DEFAULT '',
  level TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL,
  location TEXT NOT NULL,
  manifest_sha256 TEXT NOT NULL DEFAULT '',
  manifest_error TEXT,
  released_at INTEGER,
  gpus INTEGER NOT NULL DEFAULT 0,
  duration_s REAL,
  first_seen_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  removed INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (model, version)
) WITHOUT ROWID;

CREATE TABLE cycles (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  period_start INTEGER NOT NULL UNIQUE,
  started_at INTEGER NOT NULL,
  plan_json TEXT NOT NULL
);

CREATE TABLE verifications (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  model TEXT NOT NULL,
  version TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done')),
  class TEXT,
  mode TEXT NOT NULL CHECK (mode IN ('full', 'steps')),
  trigger TEXT NOT NULL,
  manifest_sha256 TEXT NOT NULL DEFAULT '',
  attempt INTEGER NOT NULL DEFAULT 1,
  runner_kind TEXT,
  runner_ref TEXT,
  work_dir TEXT,
  verdict_json TEXT,
  evidence_json TEXT,
  log_tail TEXT NOT NULL DEFAULT '',
  explanation TEXT NOT NULL DEFAULT '',
  queued_at INTEGER NOT NULL,
  not_before INTEGER NOT NULL DEFAULT 0,
  started_at INTEGER,
  finished_at INTEGER,
  cycle_id INTEGER REFERENCES cycles(id),
  FOREIGN KEY (model, version) REFERENCES model_versions(model, version),
  CHECK ((state = 'done') = (class IS NOT NULL))
);
CREATE INDEX verifications_by_version ON verifications(model, version, id);
CREATE INDEX verifications_unfinished ON verifications(state) WHERE state != 'done';

CREATE TABLE calibrations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  model TEXT NOT NULL,
  version TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  seeds INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX calibrations_by_version ON calibrations(model, version, id);

CREATE TABLE pages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  verification_id INTEGER REFERENCES verifications(id),
  dedup_key TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('trigger', 'resolve', 'notice')),
  event_json TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX pages_by_key ON pages(dedup_key, id);

CREATE TABLE page_deliveries (
  page_id INTEGER NOT NULL REFERENCES pages(id),
  sender TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  sent_at INTEGER,
  PRIMARY KEY (page_id, sender)
);
CREATE INDEX page_deliveries_due ON page_deliveries(next_attempt_at) WHERE state = 'pending';
)sql"},
    {2, R"sql(
-- Signed verification summaries (attest/): one per passed or failed:* verdict, written in the
-- verdict's own transaction. envelope_json is the DSSE envelope byte for byte as signed and
-- served; policy_json the tolerance policy document whose sha256 the summary names.
CREATE TABLE attestations (
  verification_id INTEGER PRIMARY KEY REFERENCES verifications(id),
  result TEXT NOT NULL CHECK (result IN ('PASSED', 'FAILED')),
  key_id TEXT NOT NULL,
  envelope_json TEXT NOT NULL,
  policy_json TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
)sql"},
    {3, R"sql(
-- How each calibration ended and why it stopped: the daemon's calibrations may stop early (a
-- verification became due, or the daemon was stopping) and keep the runs they had; an
-- interrupted one is resumed, a complete one waits for the version's next verdict.
ALTER TABLE calibrations ADD COLUMN ended TEXT NOT NULL DEFAULT 'complete'
  CHECK (ended IN ('complete', 'interrupted'));
ALTER TABLE calibrations ADD COLUMN note TEXT NOT NULL DEFAULT '';
)sql"},
    {4, R"sql(
-- The store's identity: a random id made with the store. Each page records the id of the store
-- that recorded it, and every key sent to a receiver that names one page includes it
-- (pager/notifier.hpp), so a new store, whose page ids start from 1 again, never repeats an old
-- store's key. `reverify backup` marks its copy (copied_from = the id of the store it copies);
-- the first writer that opens such a copy (a restore) gives it an id of its own and keeps the old
-- one in restored_from: the pages it records from then on never repeat the keys of pages the lost
-- store recorded after the backup, and the pages in the backup keep the keys they were sent with.
CREATE TABLE store_identity (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  id TEXT NOT NULL,
  copied_from TEXT,
  restored_from TEXT
);
INSERT INTO store_identity (singleton, id) VALUES (1, lower(hex(randomblob(8))));
ALTER TABLE pages ADD COLUMN store_id TEXT NOT NULL DEFAULT '';
UPDATE pages SET store_id = (SELECT id FROM store_identity);
)sql"},
    {5, R"sql(
-- What leave-one-out found when the calibration was made (policies/calibration.hpp,
-- LeaveOneOutFinding as JSON): held-out runs, how many paged, and the checks to blame when that is
-- more than the false-page rate allows, which `reverify plan` warns about. NULL: not measured
-- (steps mode, a calibration still in progress, or one stored before this column).
ALTER TABLE calibrations ADD COLUMN leave_one_out_json TEXT;
)sql"},
    {6, R"sql(
-- Subsample mode (docs/job-guide.md "Subsample mode"): a verification's mode may be
-- 'subsample'. SQLite cannot change a CHECK constraint in place; this is its documented
-- procedure (a new table, the rows copied, the old one dropped, the new one renamed, its indexes
-- made again), run while Store::migrate holds foreign keys off and checks them before the commit.
CREATE TABLE verifications_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  model TEXT NOT NULL,
  version TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done')),
  class TEXT,
  mode TEXT NOT NULL CHECK (mode IN ('full', 'steps', 'subsample')),
  trigger TEXT NOT NULL,
  manifest_sha256 TEXT NOT NULL DEFAULT '',
  attempt INTEGER NOT NULL DEFAULT 1,
  runner_kind TEXT,
  runner_ref TEXT,
  work_dir TEXT,
  verdict_json TEXT,
  evidence_json TEXT,
  log_tail TEXT NOT NULL DEFAULT '',
  explanation TEXT NOT NULL DEFAULT '',
  queued_at INTEGER NOT NULL,
  not_before INTEGER NOT NULL DEFAULT 0,
  started_at INTEGER,
  finished_at INTEGER,
  cycle_id INTEGER REFERENCES cycles(id),
  FOREIGN KEY (model, version) REFERENCES model_versions(model, version),
  CHECK ((state = 'done') = (class IS NOT NULL))
);
INSERT INTO verifications_new SELECT * FROM verifications;
DROP TABLE verifications;
ALTER TABLE verifications_new RENAME TO verifications;
CREATE INDEX verifications_by_version ON verifications(model, version, id);
CREATE INDEX verifications_unfinished ON verifications(state) WHERE state != 'done';
)sql"},
    {7, R"sql(
-- The manifests verifications verified (core/manifest_json of the parsed manifest), by the
-- sha256 of the document bytes read: when a version's manifest changes after its verdict, the
-- registry sync compares the two and keeps what moved (manifest_moves), which the pages show
-- beside "the manifest changed since verification N".
CREATE TABLE verified_manifests (
  sha256 TEXT PRIMARY KEY,
  manifest_json TEXT NOT NULL
);
-- What moved from the manifest verification `verification_id` verified (from_sha256) to the
-- version's manifest `to_sha256` (policies/manifest_diff's summary, as JSON). One row per
-- manifest a version had: a later verdict of the new manifest makes it history.
CREATE TABLE manifest_moves (
  model TEXT NOT NULL,
  version TEXT NOT NULL,
  to_sha256 TEXT NOT NULL,
  from_sha256 TEXT NOT NULL,
  verification_id INTEGER NOT NULL REFERENCES verifications(id),
  summary_json TEXT NOT NULL,
  PRIMARY KEY (model, version, to_sha256),
  FOREIGN KEY (model, version) REFERENCES model_versions(model, version)
);
)sql"},
    {8, R"sql(
-- The manifest's subsample reference, for the plan (docs/scheduling.md "Subsample mode in the
-- rotation"): its fraction (NULL: the manifest records none) and the subsample job's recorded
-- seconds (NULL: not recorded).
-- subsample_described is 0 on a row described before this column: the next sync describes it
-- again (the upsert's WHERE), since its manifest is unchanged and would otherwise be skipped.
ALTER TABLE model_versions ADD COLUMN subsample_fraction REAL;
ALTER TABLE model_versions ADD COLUMN subsample_duration_s REAL;
ALTER TABLE model_versions ADD COLUMN subsample_described INTEGER NOT NULL DEFAULT 0;
)sql"},
    {9, R"sql(
-- Where a running verification's job stands on a runner that queues jobs (slurm): pending in a
-- partition with the scheduler's reason, or running on a node (runners/runner.hpp JobStanding, as
-- JSON); the latest report is kept after the verdict. NULL: the runner reported none.
ALTER TABLE verifications ADD COLUMN runner_standing TEXT;
)sql"},
    {10, R"sql(
-- Whose spread a calibration measured (core/rebuild_mode.hpp, CalibratedReference): the release's
-- ('release': full-mode seed runs and steps-mode same-seed reruns, every calibration before this
-- column) or the subsample reference's ('subsample'), which subsample verdicts read.
ALTER TABLE calibrations ADD COLUMN reference TEXT NOT NULL DEFAULT 'release'
  CHECK (reference IN ('release', 'subsample'));
)sql"},
    {11, R"sql(
-- What every surface shows of a verdict (policies/headline.hpp VerdictSummary), written with the
-- verdict so that lists, the gate and the attention rank read typed columns instead of the
-- verdict's JSON: the headline, the checks counted (notes apart), the failing checks in reading
-- order (a JSON array of names), the power facts. NULL headline: no verdict yet. Rows recorded
-- before this migration are filled by fill_verdict_summaries (store/stored_verdict.hpp), which
-- also drops the check counts their explanations carried (counted before the input checks
-- were added, they disagreed with every other count).
ALTER TABLE verifications ADD COLUMN headline TEXT;
ALTER TABLE verifications ADD COLUMN checks_failed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verifications ADD COLUMN checks_uncalibrated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verifications ADD COLUMN checks_passed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verifications ADD COLUMN checks_not_judged INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verifications ADD COLUMN checks_notes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verifications ADD COLUMN checks_notes_outside INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verifications ADD COLUMN failing_checks TEXT NOT NULL DEFAULT '[]';
ALTER TABLE verifications ADD COLUMN underpowered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE verifications ADD COLUMN runs_needed INTEGER;
ALTER TABLE verifications ADD COLUMN underpowered_checks TEXT NOT NULL DEFAULT '[]';
ALTER TABLE verifications ADD COLUMN seed_runs INTEGER;
)sql",
     fill_verdict_summaries},
    {12, R"sql(
-- A registry source under a platform condition (policies/source_condition.hpp): every version of
-- it missed its inputs at once (the registry moved, a mount is missing). One row per source while
-- it holds: opened with the one operator alert, closed (with that alert's resolve) by the first
-- verification of the source that finds its inputs again.
CREATE TABLE source_conditions (
  source TEXT PRIMARY KEY,
  condition TEXT NOT NULL CHECK (condition IN ('inputs-moved')),
  since INTEGER NOT NULL,
  versions INTEGER NOT NULL,
  verification_id INTEGER NOT NULL REFERENCES verifications(id),
  reason TEXT NOT NULL
);
)sql"},
    {13, R"sql(
-- The process attempting a pending delivery (its pid) while next_attempt_at is the end of its
-- claim (Outbox::claim): two processes draining one outbox never send one attempt twice.
ALTER TABLE page_deliveries ADD COLUMN claimed_by INTEGER;
)sql"},
};

}  // namespace

std::span<const Migration> migrations() {
  return kMigrations;
}

}  // namespace reverify
