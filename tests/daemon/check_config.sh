#!/usr/bin/env bash
# `reverifyd --check-config` reports every problem of a config and of the machine around it in one
# pass (loader errors, a source root that is missing, a secret other users can read, a pager key
# that cannot be read, a job sandbox that cannot work here or would show a secret), exits 2 on
# any error and 0 with warnings only; and reverifyd's own log
# lines carry syslog priorities when stderr is the journal stream, on every line of a multi-line
# message.
set -euo pipefail
build="${REVERIFY_BUILD_DIR:?run through ctest}"
src="${REVERIFY_SOURCE_DIR:?run through ctest}"
source "$src/tests/services/lib.sh"
reverifyd="$build/daemon/reverifyd"
t="$(mktemp -d)"
trap 'stop_pid "$t/reverifyd.pid"; rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$t"

openssl rand -hex 32 >api.token
chmod 0644 api.token
mkdir registry
cat >bad.yaml <<YAML
state_dir: state
api: {token_file: api.token}
sources:
  - {name: gone, kind: directory, root: /nonexistent/registry}
schedule: {per_cycle: 0}
pager:
  senders: {pd: {kind: pagerduty, routing_key_file: missing.key}}
  routes: [{owner: "*", senders: [pd]}]
YAML
status=0
"$reverifyd" --config bad.yaml --check-config >out.txt 2>err.txt || status=$?
cat err.txt
[[ $status == 2 ]] || fail "exit status $status, expected 2"
for expected in "error: schedule.per_cycle: must be >= 1, got 0" \
                "error: sources[0].root: /nonexistent/registry does not exist" \
                "error: api.token_file: $t/api.token is readable by every user (mode 0644)" \
                "error: pager.senders.pd.routing_key_file:" \
                "bad.yaml: 4 error(s), 0 warning(s)"; do
  grep -qF -- "$expected" err.txt || fail "missing: $expected"
done

# Fixed: the token readable by the daemon's group only, the registry there, no pager. What is
# left (no pager sender, a code mirror not there yet) is at most a warning.
chmod 0640 api.token
cat >good.yaml <<YAML
state_dir: state
api: {token_file: api.token}
sources: [{name: local, kind: directory, root: registry}]
code_mirrors: {"https://git.example/": /nonexistent/mirrors/}
YAML
"$reverifyd" --config good.yaml --check-config >out.txt 2>err.txt || fail "good.yaml: $(cat err.txt)"
grep -q "^config OK (1 warning(s)): listen 127.0.0.1:8420" out.txt || fail "no OK line: $(cat out.txt)"
grep -q "^warning: code_mirrors.https://git.example/: /nonexistent/mirrors/ does not exist" err.txt ||
  fail "no mirror warning: $(cat err.txt)"

# The process runner's sandbox: a host where it cannot work is an error naming
# runner.trust_job_code; a sandbox path showing a secret is an error; trusting job code is a
# warning.
cat >sandbox.yaml <<YAML
state_dir: state
api: {token_file: api.token}
sources: [{name: local, kind: directory, root: registry}]
runner: {process: {sandbox: {bwrap: $t/no-bwrap, read_only: [$t]}}}
YAML
status=0
"$reverifyd" --config sandbox.yaml --check-config >out.txt 2>err.txt || status=$?
[[ $status == 2 ]] || fail "sandbox.yaml: exit status $status, expected 2: $(cat err.txt)"
for expected in "error: runner.process.sandbox.bwrap: $t/no-bwrap is missing" \
                "runner.trust_job_code: true runs them unisolated" \
                "error: runner.process.sandbox.read_only: $t would show the job"; do
  grep -qF -- "$expected" err.txt || fail "missing: $expected in $(cat err.txt)"
done
cat >trusted.yaml <<YAML
state_dir: state
api: {token_file: api.token}
sources: [{name: local, kind: directory, root: registry}]
runner: {trust_job_code: true, process: {sandbox: {bwrap: $t/no-bwrap}}}
YAML
"$reverifyd" --config trusted.yaml --check-config >out.txt 2>err.txt || fail "trusted.yaml: $(cat err.txt)"
grep -qF "warning: runner.trust_job_code: true: the process runner runs jobs unisolated" err.txt ||
  fail "no trust warning: $(cat err.txt)"

# The daemon's log under systemd: stderr is the journal stream named by JOURNAL_STREAM.
journal() {  # LOGFILE COMMAND...: runs COMMAND with stderr on LOGFILE, announced as the journal
  local log=$1; shift
  : >"$log"
  JOURNAL_STREAM="$(stat -c '%d:%i' "$log")" "$@" 2>>"$log"
}
journal start.log "$reverifyd" --config bad.yaml && fail "reverifyd started on bad.yaml"
cat start.log
grep -q "^<3>reverifyd: error: config invalid: " start.log || fail "no <3> line"
# Every line of the multi-line message carries the priority: none is left bare.
[[ $(grep -c . start.log) -ge 2 ]] || fail "expected a multi-line error"
! grep -qv "^<3>reverifyd: error: " start.log || fail "a line of the error lost its prefix"
# Not under systemd: the same lines with an RFC 3339 UTC time instead of a priority.
"$reverifyd" --config bad.yaml 2>plain.log && fail "reverifyd started on bad.yaml"
grep -Eq "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z reverifyd: error: config invalid: " plain.log ||
  fail "plain log: $(cat plain.log)"
! grep -q "^<" plain.log || fail "priorities outside the journal"

# A deployment problem the daemon only warns about: a world-readable token. It starts, says so
# with priority 4, and serves.
chmod 0644 api.token
port=$(free_port)
printf 'api: {token_file: api.token, port: %s}\nstate_dir: state\nsources: [{name: local, kind: directory, root: registry}]\n' \
  "$port" >warn.yaml
: >daemon.log
JOURNAL_STREAM="$(stat -c '%d:%i' daemon.log)" "$reverifyd" --config warn.yaml 2>>daemon.log &
echo $! >reverifyd.pid
wait_until 30 curl -sf "http://127.0.0.1:$port/healthz" || fail "the daemon did not start: $(cat daemon.log)"
grep -q "^<4>reverifyd: warning: api.token_file: $t/api.token is readable by every user" daemon.log ||
  fail "no <4> warning: $(cat daemon.log)"
! grep -qv "^<[0-7]>" daemon.log || fail "a log line without a priority: $(grep -v '^<[0-7]>' daemon.log)"
echo "check-config and journal priorities OK"
