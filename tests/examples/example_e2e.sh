#!/usr/bin/env bash
# The example digits-mlp@2026.11.1 verified end to end with `reverify run` and the process runner:
#  1. full rebuild -> passed, every check printed;
#  2. steps mode (first 50 steps) -> the steps check passes against the manifest's recorded losses;
#  3. a copy with one data shard changed -> failed:input-drift naming it, no job started;
#  4. release.sh re-run into a temp registry reproduces the committed release's hashes (the
#     released manifest is what the script emits, not something edited by hand).
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
url="https://git.example/vision/digits-trainer.git"
"$src/examples/digits/build_trainer_repo.sh" "$t/trainer" >/dev/null

fail() { echo "FAIL: $*" >&2; exit 1; }
run() {  # EXPECTED_STATUS OUTPUT_FILE ARGS...
  local want="$1" out="$2" got=0
  shift 2
  "$cli" run digits-mlp@2026.11.1 --code-mirror "$url=$t/trainer" --work-dir "$t/work" "$@" \
    >"$out" 2>&1 || got=$?
  cat "$out"
  [[ "$got" == "$want" ]] || fail "expected exit status $want, got $got"
}

echo "== 1. full rebuild"
run 0 "$t/full.txt" --registry "$src/examples/registry"
grep -q "^verdict: passed" "$t/full.txt" || fail "no passed verdict"
grep -Eq "PASS +input:dataset" "$t/full.txt" || fail "dataset input check missing"
grep -Eq "PASS +primary:accuracy" "$t/full.txt" || fail "primary check missing"
grep -Eq "PASS +segment:digit=8:accuracy" "$t/full.txt" || fail "segment check missing"
grep -Eq "PASS +distribution:" "$t/full.txt" || fail "distribution checks missing"
# Progress on stderr (not a terminal here): plain stage lines with the elapsed time and the log.
grep -Eq '^\[0:0[0-9]\] preflight: digits-mlp@2026.11.1$' "$t/full.txt" || fail "no preflight line"
grep -Eq "^\[0:0[0-9]\] job .* started; its log: $t/work/run-[0-9]+-[0-9]+-[0-9]+/job/job.log$" \
  "$t/full.txt" || fail "no job log path"
if grep -q $'\033\\[K' "$t/full.txt"; then fail "a status line was drawn on a pipe"; fi

echo "== 1b. on a terminal: a status line redrawn in place, erased before the report"
script -qec "'$cli' run digits-mlp@2026.11.1 --code-mirror '$url=$t/trainer' --work-dir '$t/work' \
  --registry '$src/examples/registry' >'$t/tty-report.txt'" /dev/null >"$t/tty.txt" </dev/null
grep -q "^verdict: passed" "$t/tty-report.txt" || fail "no passed verdict on a terminal"
grep -Eq $'\r\033\\[K\\[compare 0:0[0-9], 0:[0-9]{2} in all\\]' "$t/tty.txt" ||
  fail "no status line on the terminal: $(cat -v "$t/tty.txt")"
grep -Eq $'\r\033\\[K\\[run 0:0[0-9], 0:[0-9]{2} in all\\] trained [0-9]+ steps' "$t/tty.txt" ||
  fail "the job's latest log line is not in the status line: $(cat -v "$t/tty.txt")"
[[ "$(tail -c 4 "$t/tty.txt")" == $'\r\033[K' ]] || fail "the status line was not erased"

echo "== 2. steps mode"
run 0 "$t/steps.txt" --registry "$src/examples/registry" --mode steps --max-steps 50
grep -Eq "PASS +steps" "$t/steps.txt" || fail "steps check missing"
grep -q "first 50 steps" "$t/steps.txt" || fail "steps mode not reported"

echo "== 3. one data shard changed"
mkdir -p "$t/copy/examples"
cp -r "$src/examples/registry" "$src/examples/digits" "$t/copy/examples/"
sed -i '2s/^\(optdigits-[0-9]*\),[0-9]*,/\1,7,/' "$t/copy/examples/digits/data/shard-05.csv"
run 1 "$t/drift.txt" --registry "$t/copy/examples/registry"
grep -q "^verdict: failed:input-drift" "$t/drift.txt" || fail "no input-drift verdict"
grep -q "shard-05.csv (changed)" "$t/drift.txt" || fail "the changed shard is not named"
grep -q "timings: preflight" "$t/drift.txt" || fail "no timings"
if grep -q "timings:.* run " "$t/drift.txt"; then fail "a job ran despite the drift"; fi

echo "== 3b. one NaN in the released predictions, their hash updated: refused before any job"
/usr/bin/python3 - "$t/copy/examples/registry/digits-mlp/2026.11.1" <<'PY'
import hashlib, json, sys
import numpy as np
d = sys.argv[1]
p = np.load(d + "/predictions.npy")
p[17, 3] = np.nan
np.save(d + "/predictions.npy", p)
m = json.load(open(d + "/manifest.json"))
m["evaluation"]["predictions"]["sha256"] = hashlib.sha256(open(d + "/predictions.npy", "rb").read()).hexdigest()
json.dump(m, open(d + "/manifest.json", "w"), indent=2)
PY
cp "$src/examples/digits/data/shard-05.csv" "$t/copy/examples/digits/data/shard-05.csv"  # undo 3.
run 2 "$t/nan.txt" --registry "$t/copy/examples/registry"
grep -q "^verdict: error:manifest-invalid" "$t/nan.txt" || fail "the NaN release was not refused"
grep -q "evaluation.predictions" "$t/nan.txt" || fail "the field is not named"
if grep -q "timings:.* run " "$t/nan.txt"; then fail "a job ran on a release it cannot judge"; fi

echo "== 4. release.sh reproduces the committed release"
TRAINER_REPO="$t/release-trainer" "$src/examples/digits/release.sh" "$cli" "$t/registry" >/dev/null
/usr/bin/python3 - "$src/examples/registry/digits-mlp/2026.11.1/manifest.json" \
  "$t/registry/digits-mlp/2026.11.1/manifest.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
same = {
    "code.commit": (a["code"]["commit"], b["code"]["commit"]),
    "data.snapshot.sha256": (a["data"]["snapshot"]["sha256"], b["data"]["snapshot"]["sha256"]),
    "evaluation.set.sha256": (a["evaluation"]["set"]["sha256"], b["evaluation"]["set"]["sha256"]),
    "evaluation.predictions.sha256": (a["evaluation"]["predictions"]["sha256"], b["evaluation"]["predictions"]["sha256"]),
    "weights.tensor_sha256": (a["weights"]["tensor_sha256"], b["weights"]["tensor_sha256"]),
    "evaluation.primary.value": (a["evaluation"]["primary"]["value"], b["evaluation"]["primary"]["value"]),
    "evaluation.scoring": (a["evaluation"]["scoring"], b["evaluation"]["scoring"]),
    "subsample.evaluation.predictions.sha256": (a["subsample"]["evaluation"]["predictions"]["sha256"],
                                                b["subsample"]["evaluation"]["predictions"]["sha256"]),
    "subsample.weights.tensor_sha256": (a["subsample"]["weights"]["tensor_sha256"],
                                        b["subsample"]["weights"]["tensor_sha256"]),
}
# The tolerance holds statistics of the trainer's float64 loss curves, summed by numpy with the
# CPU's SIMD width: their last bits move between machines while weights and predictions stay
# bit-identical (hashed above). Compare them to 1e-12 relative, everything else exactly.
def close(x, y):
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(close(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(map(close, x, y))
    if isinstance(x, float) and isinstance(y, float):
        return abs(x - y) <= 1e-12 * max(abs(x), abs(y))
    return x == y
bad = [k for k, (x, y) in same.items() if x != y]
if not close(a["tolerance"], b["tolerance"]):
    bad.append("tolerance")
if not close(a["subsample"]["tolerance"], b["subsample"]["tolerance"]):
    bad.append("subsample.tolerance")
if bad:
    sys.exit("release.sh output differs from the committed release in: " + ", ".join(bad))
print("release.sh reproduces the committed release (" + ", ".join(same) + ", tolerance, subsample.tolerance)")
PY
echo "all example checks passed"
