#!/usr/bin/env bash
# The underpowered flag and the daemon's calibrations end to end through reverifyd (docs/design.md
# property 2): the released example (40 seed runs) verified by the daemon with
# `models.digits-mlp.detect: {accuracy: 0.017}` in its config, a shift its primary band cannot
# catch with 40 runs (it catches 0.0205; 7 examples of 391 is 0.0179). The verdict passes, and
# says so:
#  1. GET /v1/gate: 200 with "underpowered": true and "runs_needed" (null: no number of seed
#     runs would with the spread measured so far; a spread at the low end of what 40 runs allow
#     would, so a calibration measures more); the version's JSON and the page say so;
#  2. the daemon then calibrates the version in spare capacity (schedule.calibration_max_runs:
#     70, max_concurrent: 1): it logs the plan's reason, a manual trigger while it runs takes its
#     slot (the calibration stops after its current run, keeps its runs, stored interrupted),
#     the verification is judged against the runs kept, and the calibration resumes, storing
#     each run; reverifyd is killed (-9) in the middle of it and restarted, and the calibration
#     resumes from the stored runs to 70 seed runs, none run twice, stored complete; the status
#     page lists it, and `reverify plan` no longer plans it;
#  3. the same state with `gate.require_power: true` (daemon restarted): 412 with the reason.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
build="${REVERIFY_BUILD_DIR:?run through ctest}"
source "$src/tests/services/lib.sh"
t="$(mktemp -d)"
trap 'stop_pid "$t/reverifyd.pid" 30 || true; rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$t/reverifyd.log" >&2; exit 1; }

mkdir -p "$t/examples"  # the manifest's data and eval URIs are relative to the registry
cp -r "$src/examples/registry" "$src/examples/digits" "$t/examples/"
"$src/examples/digits/build_trainer_repo.sh" "$t/trainer" >/dev/null
port=$(free_port)
url="http://127.0.0.1:$port"
openssl rand -hex 32 >"$t/token" && chmod 600 "$t/token"
write_config() {  # REQUIRE_POWER
  cat >"$t/reverify.yaml" <<EOF
state_dir: state
sources: [{name: local, kind: directory, root: examples/registry}]
code_mirrors: {https://git.example/vision/digits-trainer.git: trainer}
runner: {kind: process, process: {path_env: /usr/bin:/bin}}
schedule: {jitter: 0s, max_concurrent: 1, calibration_max_runs: 70}
api: {port: $port, token_file: $t/token}
gate: {require_power: $1}
models:
  digits-mlp: {detect: {accuracy: 0.017}}
pager:
  senders: {sink: {kind: file, path: pages.jsonl}}
  routes: [{owner: "*", senders: [sink]}]
EOF
}
start() {
  "$build/daemon/reverifyd" --config "$t/reverify.yaml" 2>>"$t/reverifyd.log" &
  echo $! >"$t/reverifyd.pid"
  wait_until 30 curl -sf "$url/healthz" >/dev/null || fail "reverifyd did not answer /healthz"
}

echo "== 1. the daemon verifies the example against a detect its bands cannot meet"
write_config false
start
judged() { curl -s "$url/v1/gate/digits-mlp/2026.11.1" >"$t/gate.json" && grep -q '"class"' "$t/gate.json"; }
wait_until 240 judged || fail "no verdict within 240 s: $(cat "$t/gate.json")"
cat "$t/gate.json"; echo
/usr/bin/python3 - "$t/gate.json" <<'PY'
import json, sys
gate = json.load(open(sys.argv[1]))
assert gate["class"] == "passed", gate["reason"]
assert gate["underpowered"] is True, gate
# 0.017 is out of reach of the spread as measured at any number of runs: runs_needed null.
assert "runs_needed" in gate and (gate["runs_needed"] is None or gate["runs_needed"] > 40), gate
PY
# Once in three CI-like runs under full load (2026-12-05) this read, made once with `curl -f`,
# found no `"underpowered": true` right after the gate's answer (from the same stored summary)
# had it; the response was not kept, and 300 reads in a row at that moment never missed since.
# A request that fails (curl's exit status, or an HTTP status other than 200) is printed and
# tried again for up to 10 s; a 200 answer must say underpowered the first time.
version_status=
for _ in $(seq 50); do
  version_status=$(curl -s -o "$t/version.json" -w '%{http_code}' \
    "$url/v1/models/digits-mlp/versions/2026.11.1") || version_status="curl exit $?"
  [[ $version_status == 200 ]] && break
  echo "reading the version's JSON failed ($version_status), trying again: $(cat "$t/version.json" 2>/dev/null)"
  sleep 0.2
done
[[ $version_status == 200 ]] || fail "the version's JSON could not be read: $version_status"
grep -Eq '"underpowered": *true' "$t/version.json" ||
  fail "the version's JSON does not say underpowered: $(cat "$t/version.json")"
wait_until 30 test -s "$t/pages.jsonl" || fail "no page event recorded"
grep -q "UNDERPOWERED" "$t/pages.jsonl" || fail "the page does not say UNDERPOWERED: $(cat "$t/pages.jsonl")"

echo "== 2. the daemon calibrates it in spare capacity, giving its slot to a manual trigger"
logged() { grep -q -- "$1" "$t/reverifyd.log"; }
wait_until 60 logged "calibrating digits-mlp@2026.11.1: underpowered: " ||
  fail "the daemon did not start the planned calibration"
grep -E "calibrating digits-mlp@2026.11.1: underpowered: .+ cannot catch tolerance.detect; .*\(40 so far, at most 70 in all\)" \
  "$t/reverifyd.log" || fail "the calibration's reason is not logged"
"$REVERIFY_CLI" trigger --config "$t/reverify.yaml" digits-mlp@2026.11.1 ||
  fail "the manual trigger was refused"
wait_until 120 logged "calibration of digits-mlp@2026.11.1: .* interrupted: a verification needs the slot" ||
  fail "the calibration did not give its slot to the manual verification"
# The resumed calibration stores each run as it goes: kill -9 the daemon in the middle of it; the
# restarted daemon resumes from the runs stored, running no seed twice.
db="$t/state/reverify.db"
in_progress() {
  /usr/bin/python3 - "$db" <<'PY'
import sqlite3, sys
row = sqlite3.connect(sys.argv[1]).execute(
    "SELECT seeds, ended, note FROM calibrations ORDER BY id DESC LIMIT 1").fetchone()
sys.exit(0 if row and row[1] == "interrupted" and row[2].startswith("in progress: ") and 44 <= row[0] < 70 else 1)
PY
}
wait_until 120 in_progress || fail "the resumed calibration did not store its runs as it went"
kill -9 "$(cat "$t/reverifyd.pid")"
wait_until 10 bash -c "! kill -0 $(cat "$t/reverifyd.pid")"
echo "killed reverifyd (-9) during the calibration; restarting it"
start
# At 70 runs it either still falls short or, the added runs' spread being narrower than the first
# 40's, meets the detect after all: both end the calibration there, complete.
ended_at_max='(stopped at --max-runs 70|is met with 70 seed runs)'
wait_until 240 bash -c "grep -Eq -- 'calibration of digits-mlp@2026.11.1: .* $ended_at_max' '$t/reverifyd.log'" ||
  fail "the calibration did not resume to calibration_max_runs"
grep "calibration of digits-mlp" "$t/reverifyd.log"
/usr/bin/python3 - "$db" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT seeds, ended, note, spec_json FROM calibrations WHERE model = 'digits-mlp' ORDER BY id").fetchall()
print("calibrations:", [r[:3] for r in rows])
assert len(rows) == 3, rows
(kept, first_end, first_note, _), (killed, killed_end, killed_note, _), (seeds, end, note, spec) = rows
assert first_end == "interrupted" and 40 < kept < 70, rows[0][:3]
assert first_note == "interrupted: a verification needs the slot; it resumes when one is free", first_note
# What the kill -9 left: the runs stored one by one, still marked in progress.
assert killed_end == "interrupted" and killed_note.startswith("in progress: ") and kept < killed < 70, rows[1][:3]
assert seeds == 70 and end == "complete", rows[2][:3]
assert "stopped at --max-runs 70" in note or "is met with 70 seed runs" in note, note
# Every seed run's seed, the release's 40 and the 30 added: none twice (a rerun of a seed already
# used would be a duplicate sample and understate the spread).
overrides = json.loads(spec)["seed_overrides"]
assert len(overrides) == 70 and len(set(overrides)) == 70, overrides
# The manual verification ran between the two, judged against the runs the first one kept.
verdicts = db.execute("SELECT trigger, verdict_json FROM verifications WHERE state = 'done' ORDER BY id").fetchall()
assert [v[0] for v in verdicts] == ["schedule", "manual"], verdicts
primary = [c for c in json.loads(verdicts[1][1])["checks"] if c["name"].startswith("primary:")]
assert len(primary) == 1 and primary[0]["evidence"]["seed_runs"] == kept, primary
print("the manual verdict was judged against", kept, "seed runs")
PY
curl -sf "$url/" >"$t/status.html"
grep -q '<table id="calibrated" class="cards">' "$t/status.html" || fail "the status page does not list the calibration"
grep -Eq "$ended_at_max" "$t/status.html" || fail "the status page does not say what it did"
# Calibrated since its latest verdict: the plan waits for the next verdict before planning more.
"${REVERIFY_CLI:?run through ctest}" plan --config "$t/reverify.yaml" --json >"$t/plan.json"
/usr/bin/python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert p["calibrations"] == [], p' \
  "$t/plan.json" || fail "the plan still lists a calibration: $(cat "$t/plan.json")"
stop_pid "$t/reverifyd.pid" 30

echo "== 3. gate.require_power: the same pass no longer counts"
write_config true
start
status=$(curl -s -o "$t/gate412.json" -w '%{http_code}' "$url/v1/gate/digits-mlp/2026.11.1")
cat "$t/gate412.json"; echo
[[ $status == 412 ]] || fail "expected 412, got $status"
grep -q "gate.require_power is set" "$t/gate412.json" || fail "the reason does not name gate.require_power"
echo "ok: an underpowered pass is flagged through the daemon, and refused when power is required"
