#!/usr/bin/env bash
# Verification at release through the real reverifyd (issue #23's "done when"): the daemon starts
# on the example registry (its one version is the inventory, verified by the cycle), then a new
# release is published into the registry while it runs. The next registry sync queues it at
# release (schedule.at_release.delay 20s): meanwhile `GET /v1/gate` and `reverify gate` say
# "queued" with the expected time (exit 1: not verified yet) and `reverify plan` lists it; after
# the delay the daemon verifies it (real training, process runner) and the gate passes, all in the
# same cycle, without waiting for the next period. Then its manifest is edited (the owner): the
# next sync compares it with the manifest verified, and the version page says what moved.
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
cat >"$t/reverify.yaml" <<EOF
state_dir: state
sources: [{name: local, kind: directory, root: examples/registry}]
sync_interval: 2s
code_mirrors: {https://git.example/vision/digits-trainer.git: trainer}
runner: {kind: process, process: {path_env: /usr/bin:/bin}}
schedule: {jitter: 0s, at_release: {delay: 20s}}
api: {port: $port}
EOF
"$build/daemon/reverifyd" --config "$t/reverify.yaml" 2>>"$t/reverifyd.log" &
echo $! >"$t/reverifyd.pid"
wait_until 30 curl -sf "$url/healthz" >/dev/null || fail "reverifyd did not answer /healthz"

echo "== 1. the inventory's version is verified by the cycle"
judged() { curl -s "$url/v1/gate/digits-mlp/$1" >"$t/gate.json" && grep -q "\"$2\"" "$t/gate.json"; }
wait_until 240 judged 2026.11.1 class || fail "no verdict for 2026.11.1: $(cat "$t/gate.json")"
grep -Eq '"ok": ?true' "$t/gate.json" || fail "2026.11.1 did not pass: $(cat "$t/gate.json")"

echo "== 2. a new release published while the daemon runs is queued at release"
new="$t/examples/registry/digits-mlp/2026.12.7"
cp -r "$t/examples/registry/digits-mlp/2026.11.1" "$new.tmp"
sed -i 's/"version": "2026.11.1"/"version": "2026.12.7"/' "$new.tmp/manifest.json"
mv "$new.tmp" "$new"  # appears whole to the next sync
queued() { curl -s "$url/v1/gate/digits-mlp/2026.12.7" >"$t/gate.json" && grep -Eq '"status": ?"queued"' "$t/gate.json"; }
wait_until 30 queued || fail "the gate never said queued: $(cat "$t/gate.json")"
cat "$t/gate.json"; echo
grep -Eq '"expected_at": ?"' "$t/gate.json" || fail "no expected_at"
set +e
"$build/cli/reverify" gate digits-mlp@2026.12.7 --url "$url" >"$t/gate.out"
status=$?
set -e
cat "$t/gate.out"
[ "$status" = 1 ] || fail "reverify gate exited $status while queued, expected 1"
grep -q "NOT verified: queued: a new release" "$t/gate.out" || fail "reverify gate did not say queued"
"$build/cli/reverify" plan --config "$t/reverify.yaml" >"$t/plan.out"
grep -q "at release digits-mlp@2026.12.7  full  queued, expected" "$t/plan.out" ||
  fail "reverify plan does not list it: $(cat "$t/plan.out")"
curl -s "$url/" | grep -q 'id="at-release"' || fail "the status page does not list it"

echo "== 3. after its delay it is verified, in the same cycle"
wait_until 240 judged 2026.12.7 class || fail "no verdict for 2026.12.7: $(cat "$t/gate.json")"
cat "$t/gate.json"; echo
grep -Eq '"ok": ?true' "$t/gate.json" || fail "2026.12.7 did not pass: $(cat "$t/gate.json")"
curl -s "$url/v1/verifications" >"$t/verifications.json"
/usr/bin/python3 - "$t/verifications.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["verifications"]
release = [r for r in rows if r["version"] == "2026.12.7"]
assert len(release) == 1, rows
assert release[0]["trigger"] == "release", release[0]
print("verification", release[0]["id"], "of 2026.12.7: trigger", release[0]["trigger"],
      release[0]["class"])
PY
"$build/cli/reverify" gate digits-mlp@2026.12.7 --url "$url" || fail "the gate does not pass it"
grep -q "at release: queued verification" "$t/reverifyd.log" || fail "no log line for the release"

echo "== 4. a manifest edited after its verdict: the pages say what moved"
sed -i 's/"owner": "[^"]*"/"owner": "vision-platform"/' "$new/manifest.json"
moved() { curl -s "$url/models/digits-mlp/2026.12.7" >"$t/version.html" && grep -q 'id="manifest-moved"' "$t/version.html"; }
wait_until 30 moved || fail "the version page never said what moved: $(grep -o '<p id="gate"[^<]*' "$t/version.html")"
grep -q "No training input moved" "$t/version.html" || fail "the page names a moved input"
grep -q "owner: &quot;" "$t/version.html" || fail "the page does not show the owner's change"
grep -q "the manifest changed since verification" "$t/reverifyd.log" || fail "no log line for the change"
curl -s "$url/v1/gate/digits-mlp/2026.12.7" | grep -q "the manifest changed since verification" ||
  fail "the gate does not say the manifest changed"
echo "PASS"
