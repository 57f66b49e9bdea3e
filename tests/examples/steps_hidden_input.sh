#!/usr/bin/env bash
# Steps mode catches a fault no hash sees (docs/design.md: the steps paragraph; issue #12 item 3).
# A variant of the digits trainer (examples/digits/variants/hidden-input.patch) also reads label
# corrections from a file outside the dataset snapshot, /tmp/reverify-digits-label-fixes.csv: an
# input no manifest field records. It is released cleanly (the file absent) at level equivalent
# with 3 same-seed reruns, so its steps band is exact. Then the hidden file appears (3% of the
# training labels changed) and nothing reverify hashes moves:
#  1. steps mode, first 20 steps, file absent  -> passed (the steps check exact);
#  2. steps mode, first 20 and 100 steps, file present -> failed:out-of-tolerance on the steps
#     check, with the deviation printed;
#  3. the full rebuild with the file present: printed for comparison (its verdict is whatever the
#     seed spread makes of 3% label noise).
# The process runner's sandbox shows a job nothing outside the rebuild contract, so by default
# the job cannot read the hidden file at all; runs 2 and 3 show it to the job on purpose
# (runner.process.sandbox.read_only in a config of their own), as a host path the job reads
# unrecorded would be.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
hidden=/tmp/reverify-digits-label-fixes.csv
exec 9>"$hidden.lock"
flock 9  # the hidden path is fixed by the variant's code: one run of this test at a time
t="$(mktemp -d)"
trap 'rm -rf "$t" "$hidden"' EXIT
rm -f "$hidden"
url="https://git.example/vision/digits-trainer.git"
fail() { echo "FAIL: $*" >&2; exit 1; }

PATCH="$src/examples/digits/variants/hidden-input.patch" VERSION=2026.11.3 RUNS=5 DETECT= \
  SAME_SEED_RUNS=3 TRAINER_REPO="$t/trainer" \
  "$src/examples/digits/release.sh" "$cli" "$t/registry" >/dev/null

run() {  # EXPECTED_STATUS OUTPUT_FILE ARGS...
  local want="$1" out="$2" got=0
  shift 2
  "$cli" run digits-mlp@2026.11.3 --registry "$t/registry" --code-mirror "$url=$t/trainer" \
    --work-dir "$t/work" "$@" >"$out" 2>/dev/null || got=$?
  grep -E "^  (PASS|FAIL|note) +(primary|steps)|^verdict:|^  (steps|primary):" "$out" || true
  [[ "$got" == "$want" ]] || { cat "$out"; fail "expected exit status $want, got $got"; }
}

echo "== 1. steps mode (20 steps), the hidden file absent"
run 0 "$t/clean.txt" --mode steps --max-steps 20
grep -Eq "PASS +steps:loss" "$t/clean.txt" || fail "the steps check did not pass"
grep -q "exact" "$t/clean.txt" || fail "the steps band is not exact"

echo "== 2. the hidden file appears: 3% of the training labels changed, no hash moves"
/usr/bin/python3 "$src/examples/digits/variants/hidden_label_fixes.py" "$src/examples/digits/data" "$hidden"
cat >"$t/shown.yaml" <<YAML
state_dir: $t/state
sources: [{name: registry, kind: directory, root: $t/registry}]
runner: {process: {sandbox: {read_only: [$hidden]}}}
YAML
for steps in 20 100; do
  echo "-- steps mode, first $steps steps"
  run 1 "$t/steps$steps.txt" --mode steps --max-steps "$steps" --config "$t/shown.yaml"
  grep -q "^verdict: failed:out-of-tolerance" "$t/steps$steps.txt" || fail "not caught in $steps steps"
  grep -Eq "FAIL +steps:loss" "$t/steps$steps.txt" || fail "the steps check did not fail"
done

echo "== 3. for comparison: the full rebuild with the hidden file present"
status=0
"$cli" run digits-mlp@2026.11.3 --registry "$t/registry" --code-mirror "$url=$t/trainer" \
  --work-dir "$t/work" --config "$t/shown.yaml" >"$t/full.txt" 2>/dev/null || status=$?
grep -E "^  (PASS|FAIL|note) +(primary|steps|distribution:flip)|^verdict:" "$t/full.txt"
echo "full rebuild exit status $status"
echo "steps mode caught the hidden input"
