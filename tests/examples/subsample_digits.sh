#!/usr/bin/env bash
# Subsample mode on the digits example (docs/job-guide.md "Subsample mode"), through
# `reverify run --mode subsample` and the process runner:
#  1. the committed release digits-mlp@2026.11.1, rebuilt on its subsample -> passed, judged
#     against the subsample reference (its own value and seed runs), not the full model's;
#  2. a copy with one data shard backfilled -> failed:input-drift in preflight, naming the shard,
#     no job started (as in full mode);
#  3. the hidden-input variant (examples/digits/variants/hidden-input.patch: label corrections read
#     from /tmp/reverify-digits-label-fixes.csv, outside the snapshot, no hash covers it) released
#     cleanly at level bitwise (the trainer is deterministic): its subsample rebuild passes with
#     the file absent and fails with it present, on the subsample model's weights (at level
#     equivalent 3% label noise stays inside the subsample's seed spread: docs/job-guide.md
#     "Subsample mode");
#  4. a version released without a subsample reference: the subsample rebuild is refused with the
#     reason (exit 2), no job started.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
hidden=/tmp/reverify-digits-label-fixes.csv
exec 9>"$hidden.lock"
flock 9  # the hidden path is fixed by the variant's code: one test at a time uses it
t="$(mktemp -d)"
trap 'rm -rf "$t" "$hidden"' EXIT
rm -f "$hidden"
url="https://git.example/vision/digits-trainer.git"
"$src/examples/digits/build_trainer_repo.sh" "$t/trainer" >/dev/null
fail() { echo "FAIL: $*" >&2; exit 1; }
run() {  # EXPECTED_STATUS OUTPUT_FILE MODEL@VERSION TRAINER ARGS...
  local want="$1" out="$2" target="$3" trainer="$4" got=0
  shift 4
  "$cli" run "$target" --code-mirror "$url=$trainer" --work-dir "$t/work" --mode subsample "$@" \
    >"$out" 2>&1 || got=$?
  grep -E "^verdict:|^  (PASS|FAIL|note) +(input:dataset|primary|distribution|weights)|subsample" \
    "$out" || true
  [[ "$got" == "$want" ]] || { cat "$out"; fail "expected exit status $want, got $got"; }
}

echo "== 1. the released example, rebuilt on its subsample"
run 0 "$t/clean.txt" digits-mlp@2026.11.1 "$t/trainer" --registry "$src/examples/registry"
grep -q "^verdict: passed" "$t/clean.txt" || fail "no passed verdict"
grep -q "subsample rebuild" "$t/clean.txt" || fail "the report does not say it was a subsample rebuild"
reference="$(/usr/bin/python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
print(m["subsample"]["evaluation"]["primary"]["value"], m["evaluation"]["primary"]["value"])' \
  "$src/examples/registry/digits-mlp/2026.11.1/manifest.json")"
read -r subsample_value full_value <<<"$reference"
# Rebuilt with the recorded seeds, the subsample model is the reference's; its band comes from the
# subsample seed runs, which the full model's accuracy lies above.
line="$(grep -E "PASS +primary:accuracy" "$t/clean.txt")"
/usr/bin/python3 - "$line" "$subsample_value" "$full_value" <<'PY' || fail "not judged against the subsample reference"
import re, sys
line, subsample, full = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
observed = float(line.split()[2])
lower, upper = map(float, re.search(r"\[([0-9.]+), ([0-9.]+)\]", line).groups())
assert abs(observed - subsample) < 5e-5, (observed, subsample)
assert lower <= subsample <= upper < full, (lower, upper, full)
PY

echo "== 2. one data shard backfilled"
mkdir -p "$t/copy/examples"
cp -r "$src/examples/registry" "$src/examples/digits" "$t/copy/examples/"
sed -i '2s/^\(optdigits-[0-9]*\),[0-9]*,/\1,7,/' "$t/copy/examples/digits/data/shard-05.csv"
run 1 "$t/drift.txt" digits-mlp@2026.11.1 "$t/trainer" --registry "$t/copy/examples/registry"
grep -q "^verdict: failed:input-drift" "$t/drift.txt" || fail "no input-drift verdict"
grep -q "shard-05.csv (changed)" "$t/drift.txt" || fail "the changed shard is not named"
if grep -q "timings:.* run " "$t/drift.txt"; then fail "a job ran despite the drift"; fi

echo "== 3. a hidden input: the variant released cleanly, then the file appears"
PATCH="$src/examples/digits/variants/hidden-input.patch" VERSION=2026.11.3 RUNS=5 DETECT= \
  LEVEL=bitwise SAME_SEED_RUNS=0 TRAINER_REPO="$t/variant" \
  "$src/examples/digits/release.sh" "$cli" "$t/registry" >/dev/null
run 0 "$t/hidden-absent.txt" digits-mlp@2026.11.3 "$t/variant" --registry "$t/registry"
/usr/bin/python3 "$src/examples/digits/variants/hidden_label_fixes.py" "$src/examples/digits/data" "$hidden"
# The process runner's sandbox shows a job nothing outside the rebuild contract: the file is
# shown to the job on purpose (runner.process.sandbox.read_only), as a host path it reads
# unrecorded would be.
cat >"$t/shown.yaml" <<YAML
state_dir: $t/state
sources: [{name: registry, kind: directory, root: $t/registry}]
runner: {process: {sandbox: {read_only: [$hidden]}}}
YAML
run 1 "$t/hidden.txt" digits-mlp@2026.11.3 "$t/variant" --config "$t/shown.yaml"
grep -Eq "^verdict: failed:out-of-tolerance" "$t/hidden.txt" || fail "the hidden input was not caught"
grep -Eq "FAIL +weights" "$t/hidden.txt" || fail "the subsample model's weights check did not fail"
grep -Eq "PASS +input:dataset" "$t/hidden.txt" || fail "an input hash moved: not a hidden input"
rm -f "$hidden"

echo "== 4. a version without a subsample reference"
SUBSAMPLE_RUNS=0 VERSION=2026.11.4 RUNS=3 DETECT= SAME_SEED_RUNS=0 \
  TRAINER_REPO="$t/plain" "$src/examples/digits/release.sh" "$cli" "$t/registry" >/dev/null
run 2 "$t/none.txt" digits-mlp@2026.11.4 "$t/plain" --registry "$t/registry"
grep -q "records no subsample reference" "$t/none.txt" || fail "the refusal does not say why"
if grep -q "started; its log" "$t/none.txt"; then fail "a job started without a reference"; fi
echo "subsample mode: passed clean, input drift and the hidden input caught, refusal explained"
