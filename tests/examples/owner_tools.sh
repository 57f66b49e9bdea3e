#!/usr/bin/env bash
# The owner tools agree with the daemon on the released example (issue #23, item 5):
#  1. `reverify diff` of the committed digits-mlp@2026.11.1 and a variant released by release.sh
#     with a patch (examples/digits/variants/unpinned-init.patch) fits on one screen and names
#     only what moved: the code. The data and eval set are the same bytes at another relative
#     path (the variant's registry is elsewhere): no move. --full still lists every element.
#  2. `reverify compare --tolerances MANIFEST` judges a rebuild's predictions with the verdict's
#     own bounds and alpha: a verification (`reverify run --seed-override 41 --config`, so its
#     predictions differ from the release's) and compare on the same predictions (the trainer
#     rerun with that seed, its sha256 the one the verification recorded) agree on every
#     distribution check: bound, alpha, value and outcome; at the config's false-page rate
#     (0.02, not the default) and at one given with --false-page-rate.
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
url="https://git.example/vision/digits-trainer.git"
released="$src/examples/registry/digits-mlp/2026.11.1"

echo "== 1. diff of the committed release and a patched variant"
PATCH="$src/examples/digits/variants/unpinned-init.patch" LEVEL=bitwise VERSION=2026.11.2 \
  RUNS=5 SAME_SEED_RUNS=0 TRAINER_REPO="$t/variant-trainer" \
  "$src/examples/digits/release.sh" "$cli" "$t/registry" >/dev/null
variant="$t/registry/digits-mlp/2026.11.2/manifest.json"
got=0
"$cli" diff "$released/manifest.json" "$variant" >"$t/diff.txt" || got=$?
cat "$t/diff.txt"
[[ "$got" == 1 ]] || fail "diff exit status $got, expected 1 (different)"
lines="$(wc -l <"$t/diff.txt")"
(( lines <= 40 )) || fail "the summary is $lines lines, more than a screen (40)"
[[ "$(head -1 "$t/diff.txt")" == "inputs moved: code" ]] || fail "the headline names more than the code"
grep -q "^same content at another location (not a move): data.snapshot.uri, evaluation.set.uri$" \
  "$t/diff.txt" || fail "the relocated data and eval set are not named as such"
grep -q "^  tolerance.seed_runs.accuracy: 40 -> 5 runs, " "$t/diff.txt" ||
  fail "the seed runs are not collapsed to a count"
"$cli" diff --full "$released/manifest.json" "$variant" >"$t/full.txt" || true
full="$(wc -l <"$t/full.txt")"
(( full > 1000 )) || fail "--full printed only $full lines"
echo "summary: $lines lines; --full: $full lines"

echo "== 2. compare --tolerances MANIFEST agrees with the verification"
"$src/examples/digits/build_trainer_repo.sh" "$t/trainer" >/dev/null
cat >"$t/reverify.yaml" <<YAML
state_dir: $t/state
sources:
  - {name: examples, kind: directory, root: $src/examples/registry}
code_mirrors:
  $url: $t/trainer
runner:
  kind: process
  process: {path_env: /usr/bin:/bin}
verdict:
  false_page_rate: 0.02
YAML
"$cli" run digits-mlp@2026.11.1 --config "$t/reverify.yaml" --seed-override 41 --json \
  >"$t/run.json" 2>"$t/run.err" || { cat "$t/run.err"; fail "reverify run failed"; }
# The same predictions: the trainer with the seed override, as the verification ran it.
mkdir -p "$t/out"
(cd "$t/trainer" && env -i PATH=/usr/bin:/bin HOME="$t" OMP_NUM_THREADS=1 \
  OPENBLAS_NUM_THREADS=1 PYTHONHASHSEED=0 SOURCE_DATE_EPOCH=1793491200 REVERIFY_MODE=full \
  REVERIFY_DATA="$src/examples/digits/data" REVERIFY_EVAL="$src/examples/digits/eval/digits-eval.csv" \
  REVERIFY_CONFIG="$t/trainer/config.json" REVERIFY_SEEDS="$t/trainer/seeds.json" \
  REVERIFY_OUT="$t/out" REVERIFY_SEED_OVERRIDE=41 /usr/bin/python3 train.py >/dev/null)
"$cli" compare "$released/predictions.npy" "$t/out/predictions.npy" --config "$t/reverify.yaml" \
  --tolerances "$released/manifest.json" --json >"$t/compare.json"
"$cli" compare "$released/predictions.npy" "$t/out/predictions.npy" --false-page-rate 0.02 \
  --tolerances "$released/manifest.json" --json >"$t/compare-rate.json"
"$cli" compare "$released/predictions.npy" "$t/out/predictions.npy" \
  --tolerances "$released/manifest.json" >"$t/compare.txt"
cat "$t/compare.txt"
/usr/bin/python3 - "$t/run.json" "$t/compare.json" "$t/compare-rate.json" "$t/out/predictions.npy" <<'PY'
import hashlib, json, sys
run, compare, rate = (json.load(open(p)) for p in sys.argv[1:4])
digest = hashlib.sha256(open(sys.argv[4], "rb").read()).hexdigest()
if run["evidence"]["outputs"]["predictions_sha256"] != digest:
    sys.exit("the predictions compared are not the verification's")
def judged(checks):
    return {c["name"]: (c["band"], c["evidence"].get("alpha"), c["observed"], c["outcome"])
            for c in checks if c["kind"] in ("distribution", "parity")}
verdict = judged(run["verdict"]["checks"])
if len(verdict) < 6:
    sys.exit(f"the verification judged only {sorted(verdict)}")
for name, got in (("--config", judged(compare["checks"])), ("--false-page-rate", judged(rate["checks"]))):
    if got != verdict:
        sys.exit(f"compare {name} disagrees with the verdict:\n  verdict {verdict}\n  compare {got}")
alphas = {a for _, a, _, _ in verdict.values()}
print(f"compare agrees with the verification on {len(verdict)} checks at alpha {alphas}")
if len(alphas) != 1:
    sys.exit(f"the verification's distribution checks have several alphas: {alphas}")
open(sys.argv[4] + ".half-alpha", "w").write(repr(alphas.pop() / 2))
PY
# Without --config: the default rate (0.01), half the alpha of the run at 0.02 (the split over
# the verification's banded checks is the verdict's, whatever their number).
/usr/bin/python3 - "$t/compare.txt" "$(cat "$t/out/predictions.npy.half-alpha")" <<'PY' ||
import re, sys
want = float(sys.argv[2])
row = re.search(r"^distribution:ks +\S+ +<= \S+ +(\S+) +passed$", open(sys.argv[1]).read(), re.M)
if not row or abs(float(row.group(1)) - want) > 0.005 * want:
    sys.exit(f"ks row {row.group(0) if row else None!r}, expected alpha {want:.3g}")
PY
  fail "the default policy's alpha (0.01 split as the verdict splits it) is not the one printed"
echo "owner tools checks passed"
