#!/usr/bin/env bash
# `reverify bisect` names the input that moved the metric (issue #27 item 3). Two digits releases
# built for it differ in code AND data:
#   A  digits-mlp@2026.11.1: the trainer as released, the example's data;
#   B  digits-mlp@2026.12.1: a code change that does not touch training
#      (variants/report-validation.patch: it also prints the validation accuracy) and a backfilled
#      snapshot in which 3 of the 8 shards were relabelled (label + 1 mod 10).
# The bisect rebuilds A with B's code (in A's band) and A with B's data (out of it) and must name
# the data. Then: --budget 1 runs only the first swap and says what was not run (exit 1); --json
# says the same as data; with --config, A's calibration stored in its state_dir (5 more seed runs)
# makes A's bands; a B with another frozen eval set is refused (exit 2).
set -euo pipefail
src="$REVERIFY_SOURCE_DIR"
cli="$REVERIFY_CLI"
t="$(mktemp -d)"
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
url="https://git.example/vision/digits-trainer.git"

cp -r "$src/examples/digits/data" "$t/data-b"
/usr/bin/python3 - "$t/data-b" <<'PY'
import pathlib, sys
for n in (0, 1, 2):
    shard = pathlib.Path(sys.argv[1]) / f"shard-0{n}.csv"
    header, *rows = shard.read_text().splitlines()
    relabelled = []
    for row in rows:
        fields = row.split(",")
        fields[1] = str((int(fields[1]) + 1) % 10)
        relabelled.append(",".join(fields))
    shard.write_text("\n".join([header] + relabelled) + "\n")
PY
release() { RUNS=5 SAME_SEED_RUNS=0 DETECT= "$src/examples/digits/release.sh" "$cli" "$t/registry" >/dev/null; }
VERSION=2026.11.1 TRAINER_REPO="$t/trainer-a" release
VERSION=2026.12.1 TRAINER_REPO="$t/trainer-b" DATA_DIR="$t/data-b" \
  PATCH="$src/examples/digits/variants/report-validation.patch" release
# B's trainer repository holds both commits (A's is its parent).
bisect=("$cli" bisect digits-mlp@2026.11.1 --registry "$t/registry" --code-mirror "$url=$t/trainer-b"
        --work-dir "$t/work")

echo "== bisect A -> B"
status=0
"${bisect[@]}" digits-mlp@2026.12.1 >"$t/bisect.txt" 2>"$t/bisect.err" || status=$?
cat "$t/bisect.txt"
[[ "$status" == 0 ]] || { cat "$t/bisect.err"; fail "exit status $status, expected 0"; }
grep -q "^equal in A and B, not rebuilt: environment, config, seeds$" "$t/bisect.txt" ||
  fail "the unchanged inputs are not named"
grep -Eq "^  code +passed +accuracy .*: in band$" "$t/bisect.txt" || fail "the code swap is not in band"
grep -Eq "^  data +failed:out-of-tolerance +accuracy .*: OUT of band$" "$t/bisect.txt" ||
  fail "the data swap is not out of band"
grep -q "^conclusion: the data swap moved accuracy outside A's band" "$t/bisect.txt" ||
  fail "the conclusion does not name the data"

echo "== --budget 1: only the first swap"
status=0
"${bisect[@]}" digits-mlp@2026.12.1 --budget 1 --json >"$t/budget.json" 2>"$t/budget.err" || status=$?
[[ "$status" == 1 ]] || { cat "$t/budget.err"; fail "--budget 1: exit status $status, expected 1"; }
grep -q "^--budget allows 1 of them$" "$t/budget.err" || fail "the plan does not say what the budget allows"
/usr/bin/python3 - "$t/budget.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert report["not_run"] == ["data"], report["not_run"]
assert [s["swap"] for s in report["swaps"]] == ["code", "data"], report["swaps"]
assert report["swaps"][0]["ran"] and not report["swaps"][0]["moved"], report["swaps"][0]
assert report["swaps"][1]["ran"] is False, report["swaps"][1]
assert report["moved"] == [], report["moved"]
assert "data (not run)" in report["conclusion"], report["conclusion"]
print("--budget 1 --json:", report["conclusion"])
PY

echo "== --config: A's stored calibration makes A's bands"
cat >"$t/reverify.yaml" <<YAML
state_dir: $t/state
sources:
  - {name: pair, kind: directory, root: $t/registry}
code_mirrors:
  $url: $t/trainer-b
runner:
  kind: process
  process: {path_env: /usr/bin:/bin}
YAML
"$cli" calibrate digits-mlp@2026.11.1 --config "$t/reverify.yaml" --seeds 5 >/dev/null 2>&1 ||
  fail "calibrate A"
status=0
"$cli" bisect digits-mlp@2026.11.1 digits-mlp@2026.12.1 --config "$t/reverify.yaml" --json \
  >"$t/config.json" 2>"$t/config.err" || status=$?
[[ "$status" == 0 ]] || { cat "$t/config.err"; fail "--config: exit status $status, expected 0"; }
/usr/bin/python3 - "$t/config.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
assert report["moved"] == ["data"], report["moved"]
runs = [s["primary"]["seed_runs"] for s in report["swaps"]]
assert runs == [10, 10], f"A's bands should come from the manifest's 5 and the stored 5: {runs}"
print("--config:", report["conclusion"], "(bands from", runs[0], "seed runs)")
PY

echo "== another frozen eval set: refused"
mkdir -p "$t/registry/digits-mlp/2026.12.2"
/usr/bin/python3 - "$t/registry/digits-mlp" <<'PY'
import json, pathlib, sys
root = pathlib.Path(sys.argv[1])
m = json.loads((root / "2026.12.1/manifest.json").read_text())
m["version"] = "2026.12.2"
m["evaluation"]["set"]["sha256"] = "0" * 64
(root / "2026.12.2/manifest.json").write_text(json.dumps(m, indent=2))
PY
status=0
"${bisect[@]}" digits-mlp@2026.12.2 >"$t/refused.txt" 2>&1 || status=$?
cat "$t/refused.txt"
[[ "$status" == 2 ]] || fail "another eval set: exit status $status, expected 2"
grep -q "different frozen eval sets" "$t/refused.txt" || fail "the refusal does not say why"
echo "bisect named the data"
