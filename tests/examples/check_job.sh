#!/usr/bin/env bash
# `reverify check-job` on a planted defect: tests/examples/check_job/trainer (a small trainer that
# follows the contract through the job kit) with defects/DEFECT.patch applied, or as it is when
# DEFECT is "none". Expects check-job to name the defect: the check that fails, the field-notes
# failure it points to, and the words that say which one (or, for "none", every check passing).
# Usage: check_job.sh DEFECT
set -euo pipefail
defect="$1"
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
here="$src/tests/examples/check_job"
patch=""
[[ "$defect" != none ]] && patch="$here/defects/$defect.patch"
"$src/examples/build_trainer_repo.sh" "$here/trainer" check-job-trainer "$t/trainer" $patch >/dev/null
hidden=/tmp/reverify-check-job-label-fixes.csv
if [[ "$defect" == read-outside-data ]]; then
  printf 'optdigits-0001,3\n' >"$hidden"
  trap 'rm -rf "$t" "$hidden"' EXIT
fi

status=0
(cd "$t/trainer" && "$cli" check-job --json --work-dir "$t/work" \
  --data "$src/examples/digits/data" --eval "$src/examples/digits/eval/digits-eval.csv" \
  --config config.json --seeds seeds.json --env PYTHONHASHSEED=0 --env OMP_NUM_THREADS=1 \
  --task multiclass --labels label --classes 10 \
  -- python3 train.py) >"$t/report.json" 2>"$t/progress.txt" || status=$?
cat "$t/progress.txt"
cat "$t/report.json"

# expect ID FAILURE WORDS: the check ID failed, naming FAILURE, its summary holding WORDS.
expect() {
  /usr/bin/python3 - "$t/report.json" "$@" <<'PY' || fail "check-job did not name the defect"
import json, sys
report, check, failure, words = json.load(open(sys.argv[1])), *sys.argv[2:]
found = [c for c in report["checks"] if c["id"] == check]
assert found, f"no check {check}: {[c['id'] for c in report['checks']]}"
c = found[0]
assert c["status"] == "fail", c
assert c["failure"] == failure, c
assert words in c["summary"], (words, c["summary"])
assert c["fix"], c
print(f"named: {check}: {failure}")
PY
}

case "$defect" in
  none)
    [[ "$status" == 0 ]] || fail "check-job failed the trainer as it is (exit $status)"
    /usr/bin/python3 - "$t/report.json" <<'PY' || fail "a check did not pass"
import json, sys
checks = json.load(open(sys.argv[1]))["checks"]
bad = [c for c in checks if c["status"] != "pass"]
assert not bad, bad
assert {"outputs", "same-seed", "seed-override", "steps-mode", "seed:numpy", "seed:dataloader",
        "seed:augmentation", "subsample", "inputs", "metrics"} <= {c["id"] for c in checks}, checks
print(f"all {len(checks)} checks pass")
PY
    exit 0 ;;
  unseeded-data-order) expect same-seed "an unseeded generator" "the data order" ;;
  worker-seed)
    expect seed:augmentation "a seed that does not reach the data order or the workers" \
      "augmentation in the workers" ;;
  steps-ignored) expect steps-mode "steps mode not honoured" "recorded 60 steps" ;;
  subsample-by-shuffle)
    expect subsample "a subsample by shuffle, not by the rule" "not in the subsample by the rule" ;;
  metric-on-another-split)
    expect metrics "metrics computed on something else" "disagree" ;;
  read-outside-data) expect inputs "a hidden live input" "$hidden" ;;
  *) fail "unknown defect $defect" ;;
esac
[[ "$status" == 1 ]] || fail "check-job exited $status on a defect, expected 1"
