#!/usr/bin/env bash
# Every command reverify suggests runs as printed: a daemon and the CLI on a config and state_dir
# under a folder whose name holds a space, a single and a double quote, a '$' and parentheses.
# Each situation below is provoked for real; its command is taken from the real output (a log
# line, the status page's HTML, a page the file sender recorded, CLI stdout/stderr) and run
# exactly as printed through `sh -c`, with the built reverify and reverifyd first on PATH; then the
# test checks it did what the text said it would.
#   1. `reverify plan` with nothing listed: `reverifyd --config ... --check-config` (exit 0, OK);
#      the status page's `reverify plan --config ...` (exit 0, prints the cycle);
#   2. reverifyd refusing a state_dir whose store is gone: `reverify restore BACKUP --config ...`
#      (BACKUP, the only placeholder, replaced by a backup's path) and, the next time, `reverify
#      restore --empty --config ...`: each exits 0 and reverifyd starts again;
#   3. reverifyd refusing a store older than the state_dir's marker: the `mv` lines and `reverify
#      restore <aside> --config ...` it prints, run in order; reverifyd starts again;
#   4. `reverify run --mode steps` of a release without same-seed steps reruns: its `reverify
#      calibrate ... --mode steps ... --config ...` stores them; the same run then passes;
#   5. the daemon verifying a release with no seed runs: the page's (and the log's) `reverify
#      calibrate ... --seeds 10 --config ...` (run with the test's SEEDS in place of 10, the one
#      change, to keep it short) stores the calibration (it says where); the version page's
#      `reverify gate ... --config ...` answers for that version (exit 1: uncalibrated is not a
#      pass, as the gate documents);
#   6. `reverify run --config` with attestation on: its `reverify attest export ... --config ...`
#      prints the signed summary.
# Not provoked here, each for its reason; their text comes from the same builder
# (core/suggested_command.hpp, tests/core/suggested_command_test.cpp):
#   - `systemctl status reverifyd` when the CLI cannot reach the daemon: no systemd here (the
#     command names no path and runs as printed wherever the unit is installed);
#   - a damaged store file's way out (`reverify restore BACKUP --config ...`): its text with the
#     real --config is checked in tests/verify/state_dir_test.cpp, the daemon's log of it in
#     tests/daemon/faults_itest.cpp;
#   - gate.require_power on an underpowered pass, the leave-one-out warning and its `calibrate
#     ... --seeds N`: each needs 40 or more full training runs;
#   - the templates a job author fills in at release or in a config (`reverify capture
#     --subsample-out DIR ...`, `reverify hash DIR`, `--config FILE` in help and lint text): they
#     name the author's own files, which reverify cannot know, in capitals.
set -euo pipefail
src="${REVERIFY_SOURCE_DIR:?run through ctest}"
build="${REVERIFY_BUILD_DIR:?run through ctest}"
cli="${REVERIFY_CLI:?run through ctest}"
source "$src/tests/services/lib.sh"
seeds="${SEEDS:-3}"
t="$(mktemp -d)"
home="$t/rev erify's \$state (\"x\")"
log="$t/reverifyd.log"
trap 'stop_pid "$t/reverifyd.pid" 30 || true; rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; tail -n 30 "$log" >&2 2>/dev/null || true; exit 1; }
export PATH="$(dirname "$cli"):$build/daemon:$PATH"

mkdir -p "$home/registry"
cp -r "$src/examples/digits" "$home/"  # the manifests' data URIs: ../../../digits
"$src/examples/digits/build_trainer_repo.sh" "$home/trainer" >/dev/null
port=$(free_port)
url="http://127.0.0.1:$port"
openssl rand -hex 32 >"$t/token" && chmod 600 "$t/token"
config="$home/re verify.yaml"
cat >"$config" <<EOF
state_dir: state
sources: [{name: local, kind: directory, root: registry}]
code_mirrors: {https://git.example/vision/digits-trainer.git: trainer}
runner: {kind: process, process: {path_env: /usr/bin:/bin}}
schedule: {jitter: 0s, max_concurrent: 1, calibrations_per_cycle: 0}
api: {port: $port, token_file: $t/token}
pager:
  senders: {sink: {kind: file, path: pages.jsonl}}
  routes: [{owner: "*", senders: [sink]}]
attestation: {key_file: key.pem, verifier_id: https://reverify.example/test}
EOF
openssl genpkey -algorithm ed25519 -out "$home/key.pem" 2>/dev/null && chmod 600 "$home/key.pem"

# A release of the example under VERSION, its manifest edited by the python statement EDIT
# (on `m`).
release() {
  local dir="$home/registry/digits-mlp/$1"
  mkdir -p "$(dirname "$dir")"
  cp -r "$src/examples/registry/digits-mlp/2026.11.1" "$dir"
  /usr/bin/python3 - "$dir/manifest.json" "$1" "$2" <<'PY'
import json, sys
path, version, edit = sys.argv[1:]
m = json.load(open(path))
m["version"] = version
exec(edit)
json.dump(m, open(path, "w"), indent=2)
PY
}

start() {
  (cd / && exec reverifyd --config "$config" 2>>"$log") &
  echo $! >"$t/reverifyd.pid"
  wait_until 30 curl -sf "$url/healthz" >/dev/null || fail "reverifyd did not answer /healthz"
}
# refused_start: reverifyd must refuse the state_dir (exit 2); its log lines go to $t/refusal.log.
refused_start() {
  local status=0
  reverifyd --config "$config" 2>"$t/refusal.log" || status=$?
  cat "$t/refusal.log" >>"$log"
  [[ $status == 2 ]] || fail "reverifyd exit $status, expected a refusal (2): $(cat "$t/refusal.log")"
}
# as_printed EXPECTED_STATUS COMMAND: runs COMMAND through sh -c from another folder, output in
# $t/printed.out; fails unless it exits EXPECTED_STATUS.
as_printed() {
  local status=0
  echo "running as printed: $2"
  (cd "$t" && sh -c "$2") >"$t/printed.out" 2>&1 || status=$?
  [[ $status == "$1" ]] || fail "exit $status (expected $1) from: $2
$(cat "$t/printed.out")"
}
# backticked FILE TEXT: the first `command` in FILE that starts with TEXT.
backticked() {
  { grep -o "\`$2[^\`]*\`" "$1" || true; } | head -n 1 | tr -d '`'
}
# page_command PATH TEXT: the first <code> on the daemon's page PATH that starts with TEXT, as a
# browser shows it (HTML entities decoded).
page_command() {
  curl -sf "$url$1" >"$t/page.html" || fail "no page at $1"
  /usr/bin/python3 - "$t/page.html" "$2" <<'PY'
import html, re, sys
codes = [html.unescape(c) for c in re.findall(r"<code>([^<]*)</code>", open(sys.argv[1]).read())]
print(next((c for c in codes if c.startswith(sys.argv[2])), ""))
PY
}
# indented FILE TEXT: the command on FILE's first log line whose (indented) text starts with TEXT.
indented() {
  { grep -o ": error:  *$2.*" "$1" || true; } | head -n 1 | sed 's/^: error:  *//'
}

echo "== 1. nothing listed yet: the plan's and the status page's commands"
start
reverify plan --config "$config" >"$t/plan.out" || fail "reverify plan: $(cat "$t/plan.out")"
command=$(backticked "$t/plan.out" "reverifyd ")
[[ -n $command ]] || fail "the plan suggests no reverifyd command: $(cat "$t/plan.out")"
as_printed 0 "$command"
grep -q "^config OK" "$t/printed.out" || fail "the check did not check this config: $(cat "$t/printed.out")"
command=$(page_command / "reverify plan")
[[ -n $command ]] || fail "the status page suggests no reverify plan"
as_printed 0 "$command"
grep -q "^cycle " "$t/printed.out" || fail "the page's plan printed no plan: $(cat "$t/printed.out")"

echo "== 2. the store is gone: restore a backup, then start over, as the refusal says"
reverify backup --config "$config" "$t/backup.db" >/dev/null || fail "reverify backup"
stop_pid "$t/reverifyd.pid" 30
rm -f "$home/state/reverify.db" "$home/state/reverify.db-wal" "$home/state/reverify.db-shm"
refused_start
command=$(indented "$t/refusal.log" "reverify restore BACKUP ")
[[ -n $command ]] || fail "the refusal suggests no restore of a backup"
as_printed 0 "${command/BACKUP/$(printf %q "$t/backup.db")}"
start
stop_pid "$t/reverifyd.pid" 30
rm -f "$home/state/reverify.db" "$home/state/reverify.db-wal" "$home/state/reverify.db-shm"
refused_start
command=$(indented "$t/refusal.log" "reverify restore --empty ")
[[ -n $command ]] || fail "the refusal suggests no restore --empty"
as_printed 0 "$command"
start

echo "== 3. the store is older than the marker: keep it as a restore, as the refusal says"
stop_pid "$t/reverifyd.pid" 30
marker="$home/state/reverify.store-id"
/usr/bin/python3 - "$marker" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
lines = [f"verifications {int(l.split()[1]) + 5}" if l.startswith("verifications ") else l for l in lines]
open(sys.argv[1], "w").write("\n".join(lines))
PY
refused_start
grep -q "is older than this state_dir's history" "$t/refusal.log" || fail "not refused as rolled back"
{ grep -o ": error:  *\(mv\|\[ ! -e\|reverify restore\) .*" "$t/refusal.log" || true; } |
  sed 's/^: error:  *//' >"$t/steps.txt"
[[ $(grep -c 'mv ' "$t/steps.txt") == 3 && $(grep -c '^reverify restore ' "$t/steps.txt") == 1 ]] ||
  fail "the refusal does not print its mv and restore commands: $(cat "$t/refusal.log")"
while IFS= read -r command; do as_printed 0 "$command"; done <"$t/steps.txt"
start
stop_pid "$t/reverifyd.pid" 30

echo "== 4. steps mode without same-seed reruns: calibrate as the verdict says"
release 2026.11.2 'del m["tolerance"]["steps_same_seed_runs"]'
status=0
reverify run digits-mlp@2026.11.2 --mode steps --config "$config" >"$t/steps.out" 2>&1 || status=$?
[[ $status == 3 ]] || fail "a steps run without reruns exited $status, expected 3 (uncalibrated): $(cat "$t/steps.out")"
command=$(backticked "$t/steps.out" "reverify calibrate digits-mlp@2026.11.2 --mode steps")
[[ -n $command ]] || fail "the uncalibrated steps verdict suggests no calibrate: $(cat "$t/steps.out")"
as_printed 0 "$command"
reverify run digits-mlp@2026.11.2 --mode steps --config "$config" >"$t/steps.out" 2>&1 ||
  fail "the steps run after the suggested calibration did not pass: $(cat "$t/steps.out")"

echo "== 5. no seed runs: the page's calibrate, then the version page's gate"
rm -rf "$home/registry/digits-mlp/2026.11.2"
release 2026.11.3 'm["tolerance"] = {k: v for k, v in m["tolerance"].items() if k == "detect"}'
start
reverify trigger --config "$config" digits-mlp@2026.11.3 >/dev/null || fail "the trigger was refused"
pages="$home/pages.jsonl"
wait_until 300 grep -q "reverify calibrate digits-mlp@2026.11.3" "$pages" ||
  fail "no page suggests calibrating digits-mlp@2026.11.3: $(cat "$pages" 2>&1)"
# The first `reverify calibrate ...` in any text of any recorded page.
command=$(/usr/bin/python3 -c '
import json, re, sys
def texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from texts(v)
found = [m.group(1) for line in open(sys.argv[1]) for text in texts(json.loads(line))
         for m in re.finditer(r"`(reverify calibrate digits-mlp@2026.11.3 [^`]*)`", text)]
print(found[0] if found else "")' "$pages")
[[ -n $command ]] || fail "no page text holds the calibrate command: $(cat "$pages")"
# The verdict's log line repeats it in its message, unescaped (its reason= field escapes quotes).
grep -qF -- "; run \`$command\` model=digits-mlp" "$log" ||
  fail "the log line does not suggest the page's command: $command
$(grep -F 2026.11.3 "$log")"
command="${command/--seeds 10/--seeds $seeds}"
stop_pid "$t/reverifyd.pid" 30
as_printed 0 "$command"
grep -q "stored in " "$t/printed.out" || fail "the calibration was not stored: $(cat "$t/printed.out")"
start
command=$(page_command /models/digits-mlp/2026.11.3 "reverify gate ")
[[ -n $command ]] || fail "the version page suggests no gate command"
as_printed 1 "$command"
grep -q "uncalibrated" "$t/printed.out" || fail "the gate did not answer for the version: $(cat "$t/printed.out")"
stop_pid "$t/reverifyd.pid" 30

echo "== 6. a signed summary: export it as the run says"
release 2026.11.1 'pass'
reverify run digits-mlp@2026.11.1 --config "$config" >"$t/run.out" 2>&1 ||
  fail "the released example did not pass: $(cat "$t/run.out")"
command=$(backticked "$t/run.out" "reverify attest export ")
[[ -n $command ]] || fail "the run suggests no export of its signed summary: $(cat "$t/run.out")"
as_printed 0 "$command"
grep -q '"signatures"' "$t/printed.out" || fail "the export wrote no signed envelope: $(cat "$t/printed.out")"
echo "ok: every suggested command ran as printed"
