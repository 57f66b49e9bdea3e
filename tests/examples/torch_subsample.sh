#!/usr/bin/env bash
# The PyTorch example (examples/torch-orientation) rebuilt in subsample mode (docs/job-guide.md
# "Subsample mode") on the process runner with this machine's python3-torch:
#  1. release.sh records the subsample reference: the trainer once in REVERIFY_MODE=subsample
#     (fraction 0.25 of the training records, hash-selected) and TORCH_SUBSAMPLE_RUNS (default 3)
#     times seed-only; the manifest's `subsample` holds its own metrics, weights hash, seed runs
#     and the subsample job's seconds, below the full job's;
#  2. `reverify run --mode subsample` of that release passes at the release's level, bitwise: the
#     subsample model's tensor hash is the reference's, and the primary metric is judged against
#     the subsample reference's value and its own band (not the full model's), and the report
#     says it was a subsample rebuild.
# The full model's seed-only runs are 3, the fewest capture takes: nothing here judges a full
# rebuild.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
t0=$SECONDS
stamp() { echo "[$((SECONDS - t0)) s] $*"; }
model=digit-orientation-cnn
url=https://git.example/vision/digit-orientation.git

stamp "1. release (1 + 3 full seed-only runs, 1 + ${TORCH_SUBSAMPLE_RUNS:-3} subsample runs)"
RUNS=3 SUBSAMPLE_RUNS="${TORCH_SUBSAMPLE_RUNS:-3}" TRAINER_REPO="$t/trainer" \
  "$src/examples/torch-orientation/release.sh" "$cli" "$t/registry" >/dev/null
manifest="$t/registry/$model/2026.11.1/manifest.json"
reference="$(/usr/bin/python3 - "$manifest" "${TORCH_SUBSAMPLE_RUNS:-3}" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
s = m["subsample"]
assert s["fraction"] == 0.25 and s["salt"] == "orientation-subsample-1", s
assert len(s["tolerance"]["seed_runs"]["accuracy"]) == int(sys.argv[2]), s["tolerance"]
assert s["weights"]["tensor_sha256"] != m["weights"]["tensor_sha256"], "the full model's weights"
assert 0 < s["duration_s"] < m["run"]["duration_s"], (s["duration_s"], m["run"]["duration_s"])
print(s["evaluation"]["primary"]["value"], m["evaluation"]["primary"]["value"],
      s["duration_s"], m["run"]["duration_s"])
PY
)" || fail "the release records no usable subsample reference"
read -r subsample_value full_value subsample_s full_s <<<"$reference"
echo "subsample reference: accuracy $subsample_value ($full_value full), job ${subsample_s} s (${full_s} s full)"

stamp "2. reverify run --mode subsample"
status=0
"$cli" run "$model@2026.11.1" --registry "$t/registry" --work-dir "$t/work" \
  --code-mirror "$url=$t/trainer" --mode subsample >"$t/run.txt" 2>&1 || status=$?
cat "$t/run.txt"
[[ "$status" == 0 ]] || fail "expected exit status 0, got $status"
grep -q "^verdict: passed" "$t/run.txt" || fail "no passed verdict"
grep -q "subsample rebuild" "$t/run.txt" || fail "the report does not say it was a subsample rebuild"
grep -q "judged against the subsample reference" "$t/run.txt" ||
  fail "the report does not say what it was judged against"
grep -Eq "PASS +weights" "$t/run.txt" || fail "the subsample weights were not compared"
line="$(grep -E "PASS +primary:accuracy" "$t/run.txt")" || fail "no primary check"
/usr/bin/python3 - "$line" "$subsample_value" <<'PY' || fail "not judged against the subsample reference"
import re, sys
line, subsample = sys.argv[1], float(sys.argv[2])
observed = float(line.split()[2])
assert abs(observed - subsample) < 5e-5, (observed, subsample)
PY
stamp "the torch example's subsample rebuild passed against its own reference"
